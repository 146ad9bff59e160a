// SPDX-License-Identifier: GPL-2.0
/*
 * Spans as OTLP/JSON and Zipkin v2 JSON (see otel.h).
 *
 * Written by hand, not with a library: Debian 12 packages no OpenTelemetry
 * or Zipkin library for C (opentelemetry-cpp is not in it), and both
 * formats are small JSON documents that json.c's strings and integers
 * write exactly. What each field must be follows the formats' own
 * definitions: OTLP's trace.proto and its JSON mapping (ids as hex, not
 * base64; enums as integers; 64-bit integers as strings), Zipkin's
 * zipkin2-api.yaml (microseconds, a duration of at least 1, string tags).
 * The host tests check the output against both (tests/host/otel-check.js).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "otel.h"

/* OTLP: the spans of one resource (a process of the host), serialised */
struct otel_group {
	char *service;			/* NULL: unknown_service */
	char *host;			/* NULL: the writer's */
	uint32_t pid;
	struct jbuf spans;		/* its spans' JSON, comma-separated */
	unsigned int n;
};

struct otel_out {
	FILE *f;
	enum otel_format format;
	char *host, *scope, *version;
	size_t batch, held;
	struct otel_group **groups;
	unsigned int ngroups;
	unsigned long long spans;
	struct jbuf out;		/* what is written to @f next */
	bool opened;			/* Zipkin: '[' written */
};

static void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n, size);

	if (!p) {
		fputs("out of memory\n", stderr);
		exit(1);
	}
	return p;
}

static char *xstrdup(const char *s)
{
	char *p;

	if (!s)
		return NULL;
	p = strdup(s);
	if (!p) {
		fputs("out of memory\n", stderr);
		exit(1);
	}
	return p;
}

struct otel_out *otel_new(FILE *f, enum otel_format format, const char *host,
			  const char *scope, const char *version, size_t batch)
{
	struct otel_out *o = xcalloc(1, sizeof(*o));

	o->f = f;
	o->format = format;
	o->host = xstrdup(host);
	o->scope = xstrdup(scope);
	o->version = xstrdup(version);
	o->batch = batch ? batch : OTEL_BATCH_DEFAULT;
	return o;
}

bool otel_id_zero(const uint8_t *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (b[i])
			return false;
	return true;
}

static void hex_string(struct jbuf *b, const uint8_t *id, size_t n)
{
	jbuf_putc(b, '"');
	jbuf_hex(b, id, n);
	jbuf_putc(b, '"');
}

/* @v as a JSON string of its digits: "123" */
static void quoted_int(struct jbuf *b, int64_t v)
{
	jbuf_putc(b, '"');
	jbuf_int(b, v);
	jbuf_putc(b, '"');
}

static void quoted_uint(struct jbuf *b, uint64_t v)
{
	jbuf_putc(b, '"');
	jbuf_uint(b, v);
	jbuf_putc(b, '"');
}

/* --- OTLP/JSON ------------------------------------------------------------------ */

/* An AnyValue's JSON: 64-bit integers as strings (proto3's JSON mapping) */
static void otlp_value(struct jbuf *b, const struct otel_attr *a)
{
	switch (a->type) {
	case OTEL_STRING:
		jbuf_puts(b, "{\"stringValue\":");
		jbuf_string(b, a->s ? a->s : "");
		break;
	case OTEL_INT:
		jbuf_puts(b, "{\"intValue\":");
		quoted_int(b, a->i);
		break;
	case OTEL_BOOL:
		jbuf_puts(b, a->i ? "{\"boolValue\":true" : "{\"boolValue\":false");
		break;
	}
	jbuf_putc(b, '}');
}

static void otlp_attrs(struct jbuf *b, const struct otel_attr *a, unsigned int n)
{
	jbuf_puts(b, "\"attributes\":[");
	for (unsigned int i = 0; i < n; i++) {
		jbuf_puts(b, i ? ",{\"key\":" : "{\"key\":");
		jbuf_string(b, a[i].key);
		jbuf_puts(b, ",\"value\":");
		otlp_value(b, &a[i]);
		jbuf_putc(b, '}');
	}
	jbuf_putc(b, ']');
}

static void otlp_span(struct jbuf *b, const struct otel_span *s)
{
	jbuf_puts(b, "{\"traceId\":");
	hex_string(b, s->trace_id, OTEL_TRACE_ID_LEN);
	jbuf_puts(b, ",\"spanId\":");
	hex_string(b, s->span_id, OTEL_SPAN_ID_LEN);
	if (!otel_id_zero(s->parent_id, OTEL_SPAN_ID_LEN)) {
		jbuf_puts(b, ",\"parentSpanId\":");
		hex_string(b, s->parent_id, OTEL_SPAN_ID_LEN);
	}
	jbuf_puts(b, ",\"name\":");
	jbuf_string(b, s->name ? s->name : "");
	jbuf_puts(b, ",\"kind\":");
	jbuf_uint(b, s->kind ? (unsigned int)s->kind : OTEL_KIND_INTERNAL);
	jbuf_puts(b, ",\"startTimeUnixNano\":");
	quoted_uint(b, s->start_ns);
	jbuf_puts(b, ",\"endTimeUnixNano\":");
	quoted_uint(b, s->end_ns < s->start_ns ? s->start_ns : s->end_ns);
	jbuf_putc(b, ',');
	otlp_attrs(b, s->attrs, s->nattrs);
	if (s->nevents) {
		jbuf_puts(b, ",\"events\":[");
		for (unsigned int i = 0; i < s->nevents; i++) {
			const struct otel_event *e = &s->events[i];

			jbuf_puts(b, i ? ",{\"timeUnixNano\":" : "{\"timeUnixNano\":");
			quoted_uint(b, e->time_ns);
			jbuf_puts(b, ",\"name\":");
			jbuf_string(b, e->name ? e->name : "");
			jbuf_putc(b, ',');
			otlp_attrs(b, e->attrs, e->nattrs);
			jbuf_putc(b, '}');
		}
		jbuf_putc(b, ']');
	}
	if (s->error) {
		/* STATUS_CODE_ERROR */
		jbuf_puts(b, ",\"status\":{\"code\":2");
		if (s->status_message) {
			jbuf_puts(b, ",\"message\":");
			jbuf_string(b, s->status_message);
		}
		jbuf_putc(b, '}');
	}
	jbuf_putc(b, '}');
}

static bool same(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

static struct otel_group *group_of(struct otel_out *o, const struct otel_span *s)
{
	struct otel_group *g;

	struct otel_group **gs;

	for (unsigned int i = 0; i < o->ngroups; i++)
		if (o->groups[i]->pid == s->pid &&
		    same(o->groups[i]->service, s->service) &&
		    same(o->groups[i]->host, s->host))
			return o->groups[i];
	gs = realloc(o->groups, (o->ngroups + 1) * sizeof(*gs));
	if (!gs) {
		fputs("out of memory\n", stderr);
		exit(1);
	}
	o->groups = gs;
	g = xcalloc(1, sizeof(*g));
	o->groups[o->ngroups++] = g;
	g->service = xstrdup(s->service);
	g->host = xstrdup(s->host);
	g->pid = s->pid;
	return g;
}

static void groups_free(struct otel_out *o)
{
	for (unsigned int i = 0; i < o->ngroups; i++) {
		struct otel_group *g = o->groups[i];

		jbuf_free(&g->spans);
		free(g->service);
		free(g->host);
		free(g);
	}
	free(o->groups);
	o->groups = NULL;
	o->ngroups = 0;
	o->held = 0;
}

/* A resource and its spans: its head in @o->out, written, then its spans */
static void otlp_resource(struct otel_out *o, const struct otel_group *g, bool first)
{
	struct jbuf *b = &o->out;
	struct otel_attr a[3] = {
		{ "service.name", OTEL_STRING, g->service ? g->service : "unknown_service", 0 },
	};
	const char *host = g->host ? g->host : o->host;
	unsigned int n = 1;

	if (host)
		a[n++] = (struct otel_attr){ "host.name", OTEL_STRING, host, 0 };
	if (g->pid)
		a[n++] = (struct otel_attr){ "process.pid", OTEL_INT, NULL, g->pid };
	jbuf_puts(b, first ? "{\"resource\":{" : ",{\"resource\":{");
	otlp_attrs(b, a, n);
	jbuf_puts(b, "},\"scopeSpans\":[{\"scope\":{\"name\":");
	jbuf_string(b, o->scope ? o->scope : "magnet");
	if (o->version) {
		jbuf_puts(b, ",\"version\":");
		jbuf_string(b, o->version);
	}
	jbuf_puts(b, "},\"spans\":[");
	/* (the spans apart: no copy of them) */
	fwrite(b->p, 1, b->len, o->f);
	fwrite(g->spans.p, 1, g->spans.len, o->f);
	b->len = 0;
	jbuf_puts(b, "]}]}");
}

int otel_flush(struct otel_out *o)
{
	int ret = 0;

	if (o->format != OTEL_OTLP_JSON || !o->held)
		return fflush(o->f) ? -1 : 0;
	o->out.len = 0;
	jbuf_puts(&o->out, "{\"resourceSpans\":[");
	for (unsigned int i = 0; i < o->ngroups; i++)
		otlp_resource(o, o->groups[i], !i);
	jbuf_puts(&o->out, "]}\n");
	fwrite(o->out.p, 1, o->out.len, o->f);
	o->out.len = 0;
	groups_free(o);
	if (fflush(o->f) || ferror(o->f))
		ret = -1;
	return ret;
}

/* --- Zipkin v2 JSON ----------------------------------------------------------------- */

static const char *const zipkin_kinds[] = {
	[OTEL_KIND_SERVER] = "SERVER",
	[OTEL_KIND_CLIENT] = "CLIENT",
	[OTEL_KIND_PRODUCER] = "PRODUCER",
	[OTEL_KIND_CONSUMER] = "CONSUMER",
};

/* An attribute's value as a tag's: a string */
static void zipkin_tag(struct jbuf *b, const struct otel_attr *a, bool first)
{
	if (!first)
		jbuf_putc(b, ',');
	jbuf_string(b, a->key);
	jbuf_putc(b, ':');
	switch (a->type) {
	case OTEL_STRING:
		jbuf_string(b, a->s ? a->s : "");
		break;
	case OTEL_INT:
		quoted_int(b, a->i);
		break;
	case OTEL_BOOL:
		jbuf_puts(b, a->i ? "\"true\"" : "\"false\"");
		break;
	}
}

/* An event as an annotation: its name, then its attributes as key=value */
static void zipkin_annotation(struct jbuf *b, const struct otel_event *e)
{
	struct jbuf v = { 0 };

	jbuf_puts(&v, e->name ? e->name : "");
	for (unsigned int i = 0; i < e->nattrs; i++) {
		const struct otel_attr *a = &e->attrs[i];

		jbuf_putc(&v, ' ');
		jbuf_puts(&v, a->key);
		jbuf_putc(&v, '=');
		if (a->type == OTEL_STRING)
			jbuf_puts(&v, a->s ? a->s : "");
		else if (a->type == OTEL_INT)
			jbuf_int(&v, a->i);
		else
			jbuf_puts(&v, a->i ? "true" : "false");
	}
	jbuf_putc(&v, '\0');
	jbuf_puts(b, "{\"timestamp\":");
	jbuf_uint(b, e->time_ns / 1000);
	jbuf_puts(b, ",\"value\":");
	jbuf_string(b, v.p);
	jbuf_putc(b, '}');
	jbuf_free(&v);
}

static void zipkin_span(struct otel_out *o, const struct otel_span *s)
{
	struct jbuf *b = &o->out;
	uint64_t dur = s->end_ns > s->start_ns ? s->end_ns - s->start_ns : 0;
	bool first = true;

	jbuf_puts(b, "{\"traceId\":");
	hex_string(b, s->trace_id, OTEL_TRACE_ID_LEN);
	jbuf_puts(b, ",\"id\":");
	hex_string(b, s->span_id, OTEL_SPAN_ID_LEN);
	if (!otel_id_zero(s->parent_id, OTEL_SPAN_ID_LEN)) {
		jbuf_puts(b, ",\"parentId\":");
		hex_string(b, s->parent_id, OTEL_SPAN_ID_LEN);
	}
	if (s->kind > OTEL_KIND_INTERNAL && s->kind <= OTEL_KIND_CONSUMER) {
		jbuf_puts(b, ",\"kind\":\"");
		jbuf_puts(b, zipkin_kinds[s->kind]);
		jbuf_putc(b, '"');
	}
	jbuf_puts(b, ",\"name\":");
	jbuf_string(b, s->name ? s->name : "");
	/* microseconds; a duration below 1 us is 1 (Zipkin's minimum) */
	jbuf_puts(b, ",\"timestamp\":");
	jbuf_uint(b, s->start_ns / 1000);
	jbuf_puts(b, ",\"duration\":");
	jbuf_uint(b, dur >= 1000 ? dur / 1000 : 1);
	jbuf_puts(b, ",\"localEndpoint\":{\"serviceName\":");
	jbuf_string(b, s->service ? s->service : "unknown_service");
	jbuf_putc(b, '}');
	if (s->nevents) {
		jbuf_puts(b, ",\"annotations\":[");
		for (unsigned int i = 0; i < s->nevents; i++) {
			if (i)
				jbuf_putc(b, ',');
			zipkin_annotation(b, &s->events[i]);
		}
		jbuf_putc(b, ']');
	}
	jbuf_puts(b, ",\"tags\":{");
	for (unsigned int i = 0; i < s->nattrs; i++, first = false)
		zipkin_tag(b, &s->attrs[i], first);
	if (s->host || o->host) {
		struct otel_attr h = { "host.name", OTEL_STRING,
				       s->host ? s->host : o->host, 0 };

		zipkin_tag(b, &h, first);
		first = false;
	}
	if (s->pid) {
		struct otel_attr p = { "process.pid", OTEL_INT, NULL, s->pid };

		zipkin_tag(b, &p, first);
		first = false;
	}
	if (s->error) {
		struct otel_attr e = { "error", OTEL_STRING,
				       s->status_message ? s->status_message : "true", 0 };

		zipkin_tag(b, &e, first);
	}
	jbuf_puts(b, "}}");
}

/* --- both ---------------------------------------------------------------------------- */

int otel_add(struct otel_out *o, const struct otel_span *s)
{
	struct otel_group *g;

	o->spans++;
	if (o->format == OTEL_ZIPKIN_JSON) {
		o->out.len = 0;
		jbuf_puts(&o->out, o->opened ? ",\n" : "[\n");
		o->opened = true;
		zipkin_span(o, s);
		fwrite(o->out.p, 1, o->out.len, o->f);
		return ferror(o->f) ? -1 : 0;
	}
	g = group_of(o, s);
	if (g->n++)
		jbuf_putc(&g->spans, ',');
	otlp_span(&g->spans, s);
	if (++o->held >= o->batch)
		return otel_flush(o);
	return 0;
}

int otel_close(struct otel_out *o)
{
	int ret;

	if (!o)
		return 0;
	if (o->format == OTEL_ZIPKIN_JSON)
		fputs(o->opened ? "\n]\n" : "[]\n", o->f);
	ret = otel_flush(o);
	groups_free(o);
	jbuf_free(&o->out);
	free(o->host);
	free(o->scope);
	free(o->version);
	free(o);
	return ret;
}

unsigned long long otel_spans(const struct otel_out *o)
{
	return o ? o->spans : 0;
}
