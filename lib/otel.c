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
	FILE *mem;
	char *buf;
	size_t len;
	unsigned int n;
};

struct otel_out {
	FILE *f;
	enum otel_format format;
	char *host, *scope, *version;
	size_t batch, held;
	struct otel_group **groups;	/* (each apart: its stream has its address) */
	unsigned int ngroups;
	unsigned long long spans;
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

void otel_hex(FILE *f, const uint8_t *b, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	char buf[2 * OTEL_TRACE_ID_LEN];
	size_t i, k = 0;

	for (i = 0; i < n; i++) {
		buf[k++] = hex[b[i] >> 4];
		buf[k++] = hex[b[i] & 15];
		if (k == sizeof(buf) || i + 1 == n) {
			fwrite(buf, 1, k, f);
			k = 0;
		}
	}
}

bool otel_id_zero(const uint8_t *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (b[i])
			return false;
	return true;
}

static void hex_string(FILE *f, const uint8_t *b, size_t n)
{
	fputc('"', f);
	otel_hex(f, b, n);
	fputc('"', f);
}

/* --- OTLP/JSON ------------------------------------------------------------------ */

/* An AnyValue's JSON: 64-bit integers as strings (proto3's JSON mapping) */
static void otlp_value(FILE *f, const struct otel_attr *a)
{
	switch (a->type) {
	case OTEL_STRING:
		fputs("{\"stringValue\":", f);
		json_string(f, a->s ? a->s : "");
		break;
	case OTEL_INT:
		fprintf(f, "{\"intValue\":\"%" PRId64 "\"", a->i);
		break;
	case OTEL_BOOL:
		fprintf(f, "{\"boolValue\":%s", a->i ? "true" : "false");
		break;
	}
	fputc('}', f);
}

static void otlp_attrs(FILE *f, const struct otel_attr *a, unsigned int n)
{
	fputs("\"attributes\":[", f);
	for (unsigned int i = 0; i < n; i++) {
		fputs(i ? ",{\"key\":" : "{\"key\":", f);
		json_string(f, a[i].key);
		fputs(",\"value\":", f);
		otlp_value(f, &a[i]);
		fputc('}', f);
	}
	fputc(']', f);
}

static void otlp_span(FILE *f, const struct otel_span *s)
{
	fputs("{\"traceId\":", f);
	hex_string(f, s->trace_id, OTEL_TRACE_ID_LEN);
	fputs(",\"spanId\":", f);
	hex_string(f, s->span_id, OTEL_SPAN_ID_LEN);
	if (!otel_id_zero(s->parent_id, OTEL_SPAN_ID_LEN)) {
		fputs(",\"parentSpanId\":", f);
		hex_string(f, s->parent_id, OTEL_SPAN_ID_LEN);
	}
	fputs(",\"name\":", f);
	json_string(f, s->name ? s->name : "");
	fprintf(f, ",\"kind\":%d,\"startTimeUnixNano\":\"%" PRIu64 "\",\"endTimeUnixNano\":\"%" PRIu64 "\",",
		s->kind ? (int)s->kind : OTEL_KIND_INTERNAL, s->start_ns,
		s->end_ns < s->start_ns ? s->start_ns : s->end_ns);
	otlp_attrs(f, s->attrs, s->nattrs);
	if (s->nevents) {
		fputs(",\"events\":[", f);
		for (unsigned int i = 0; i < s->nevents; i++) {
			const struct otel_event *e = &s->events[i];

			fprintf(f, "%s{\"timeUnixNano\":\"%" PRIu64 "\",\"name\":",
				i ? "," : "", e->time_ns);
			json_string(f, e->name ? e->name : "");
			fputc(',', f);
			otlp_attrs(f, e->attrs, e->nattrs);
			fputc('}', f);
		}
		fputc(']', f);
	}
	if (s->error) {
		/* STATUS_CODE_ERROR */
		fputs(",\"status\":{\"code\":2", f);
		if (s->status_message) {
			fputs(",\"message\":", f);
			json_string(f, s->status_message);
		}
		fputc('}', f);
	}
	fputc('}', f);
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
	g->mem = open_memstream(&g->buf, &g->len);
	if (!g->mem) {
		fputs("out of memory\n", stderr);
		exit(1);
	}
	return g;
}

static void groups_free(struct otel_out *o)
{
	for (unsigned int i = 0; i < o->ngroups; i++) {
		struct otel_group *g = o->groups[i];

		if (g->mem)
			fclose(g->mem);
		free(g->buf);
		free(g->service);
		free(g->host);
		free(g);
	}
	free(o->groups);
	o->groups = NULL;
	o->ngroups = 0;
	o->held = 0;
}

static void otlp_resource(struct otel_out *o, const struct otel_group *g)
{
	FILE *f = o->f;
	struct otel_attr a[3] = {
		{ "service.name", OTEL_STRING, g->service ? g->service : "unknown_service", 0 },
	};
	const char *host = g->host ? g->host : o->host;
	unsigned int n = 1;

	if (host)
		a[n++] = (struct otel_attr){ "host.name", OTEL_STRING, host, 0 };
	if (g->pid)
		a[n++] = (struct otel_attr){ "process.pid", OTEL_INT, NULL, g->pid };
	fputs("{\"resource\":{", f);
	otlp_attrs(f, a, n);
	fputs("},\"scopeSpans\":[{\"scope\":{\"name\":", f);
	json_string(f, o->scope ? o->scope : "magnet");
	if (o->version) {
		fputs(",\"version\":", f);
		json_string(f, o->version);
	}
	fputs("},\"spans\":[", f);
	fwrite(g->buf, 1, g->len, f);
	fputs("]}]}", f);
}

int otel_flush(struct otel_out *o)
{
	int ret = 0;

	if (o->format != OTEL_OTLP_JSON || !o->held)
		return fflush(o->f) ? -1 : 0;
	fputs("{\"resourceSpans\":[", o->f);
	for (unsigned int i = 0; i < o->ngroups; i++) {
		struct otel_group *g = o->groups[i];

		if (fflush(g->mem))
			ret = -1;
		if (i)
			fputc(',', o->f);
		otlp_resource(o, g);
	}
	fputs("]}\n", o->f);
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
static void zipkin_tag(FILE *f, const struct otel_attr *a, bool first)
{
	if (!first)
		fputc(',', f);
	json_string(f, a->key);
	fputc(':', f);
	switch (a->type) {
	case OTEL_STRING:
		json_string(f, a->s ? a->s : "");
		break;
	case OTEL_INT:
		fprintf(f, "\"%" PRId64 "\"", a->i);
		break;
	case OTEL_BOOL:
		fputs(a->i ? "\"true\"" : "\"false\"", f);
		break;
	}
}

/* An event as an annotation: its name, then its attributes as key=value */
static void zipkin_annotation(FILE *f, const struct otel_event *e)
{
	char *v = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&v, &len);

	if (!m) {
		fputs("out of memory\n", stderr);
		exit(1);
	}
	fputs(e->name ? e->name : "", m);
	for (unsigned int i = 0; i < e->nattrs; i++) {
		const struct otel_attr *a = &e->attrs[i];

		fprintf(m, " %s=", a->key);
		if (a->type == OTEL_STRING)
			fputs(a->s ? a->s : "", m);
		else if (a->type == OTEL_INT)
			fprintf(m, "%" PRId64, a->i);
		else
			fputs(a->i ? "true" : "false", m);
	}
	fclose(m);
	fprintf(f, "{\"timestamp\":%" PRIu64 ",\"value\":", e->time_ns / 1000);
	json_string(f, v);
	fputc('}', f);
	free(v);
}

static void zipkin_span(struct otel_out *o, const struct otel_span *s)
{
	FILE *f = o->f;
	uint64_t dur = s->end_ns > s->start_ns ? s->end_ns - s->start_ns : 0;
	bool first = true;

	fputs("{\"traceId\":", f);
	hex_string(f, s->trace_id, OTEL_TRACE_ID_LEN);
	fputs(",\"id\":", f);
	hex_string(f, s->span_id, OTEL_SPAN_ID_LEN);
	if (!otel_id_zero(s->parent_id, OTEL_SPAN_ID_LEN)) {
		fputs(",\"parentId\":", f);
		hex_string(f, s->parent_id, OTEL_SPAN_ID_LEN);
	}
	if (s->kind > OTEL_KIND_INTERNAL && s->kind <= OTEL_KIND_CONSUMER)
		fprintf(f, ",\"kind\":\"%s\"", zipkin_kinds[s->kind]);
	fputs(",\"name\":", f);
	json_string(f, s->name ? s->name : "");
	/* microseconds; a duration below 1 us is 1 (Zipkin's minimum) */
	fprintf(f, ",\"timestamp\":%" PRIu64 ",\"duration\":%" PRIu64,
		s->start_ns / 1000, dur >= 1000 ? dur / 1000 : 1);
	fputs(",\"localEndpoint\":{\"serviceName\":", f);
	json_string(f, s->service ? s->service : "unknown_service");
	fputc('}', f);
	if (s->nevents) {
		fputs(",\"annotations\":[", f);
		for (unsigned int i = 0; i < s->nevents; i++) {
			if (i)
				fputc(',', f);
			zipkin_annotation(f, &s->events[i]);
		}
		fputc(']', f);
	}
	fputs(",\"tags\":{", f);
	for (unsigned int i = 0; i < s->nattrs; i++, first = false)
		zipkin_tag(f, &s->attrs[i], first);
	if (s->host || o->host) {
		struct otel_attr h = { "host.name", OTEL_STRING,
				       s->host ? s->host : o->host, 0 };

		zipkin_tag(f, &h, first);
		first = false;
	}
	if (s->pid) {
		struct otel_attr p = { "process.pid", OTEL_INT, NULL, s->pid };

		zipkin_tag(f, &p, first);
		first = false;
	}
	if (s->error) {
		struct otel_attr e = { "error", OTEL_STRING,
				       s->status_message ? s->status_message : "true", 0 };

		zipkin_tag(f, &e, first);
	}
	fputs("}}", f);
}

/* --- both ---------------------------------------------------------------------------- */

int otel_add(struct otel_out *o, const struct otel_span *s)
{
	struct otel_group *g;

	o->spans++;
	if (o->format == OTEL_ZIPKIN_JSON) {
		fputs(o->opened ? ",\n" : "[\n", o->f);
		o->opened = true;
		zipkin_span(o, s);
		return ferror(o->f) ? -1 : 0;
	}
	g = group_of(o, s);
	if (g->n++)
		fputc(',', g->mem);
	otlp_span(g->mem, s);
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
