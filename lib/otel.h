/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Spans in the formats tracing systems read: OTLP/JSON (OpenTelemetry's
 * protocol, its JSON encoding: Jaeger, Tempo and the OpenTelemetry
 * Collector read it) and Zipkin's v2 JSON (Zipkin, Jaeger). One
 * implementation for every tool that writes spans: magnet-read's --otlp
 * and --zipkin files.
 *
 * A span is given whole, once (a tool builds it from its records first);
 * the writer copies what it keeps. OTLP groups spans by resource (the
 * process: service.name, process.pid, and the host: host.name), so
 * otel_add() holds them, serialised, until otel_flush() writes them as one
 * ExportTraceServiceRequest on one line: OTLP's file format is JSON Lines,
 * each line a request as OTLP/HTTP would post it. Zipkin's spans are
 * written as they come, elements of one ListOfSpans array (the body
 * Zipkin's POST /api/v2/spans takes), closed by otel_close().
 *
 * The names of attributes are OpenTelemetry's semantic conventions where
 * they have one (thread.id, network.transport, ...), magnet.* otherwise;
 * each tool documents the ones it writes (magnet-read(8)).
 */
#ifndef MAGNET_OTEL_H
#define MAGNET_OTEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define OTEL_TRACE_ID_LEN	16	/* bytes: W3C Trace Context's */
#define OTEL_SPAN_ID_LEN	8
#define OTEL_BATCH_DEFAULT	512	/* spans in one OTLP request */

enum otel_format { OTEL_OTLP_JSON, OTEL_ZIPKIN_JSON };

/* OTLP's SpanKind; Zipkin names the last four and omits the first */
enum otel_kind {
	OTEL_KIND_INTERNAL = 1,
	OTEL_KIND_SERVER,
	OTEL_KIND_CLIENT,
	OTEL_KIND_PRODUCER,
	OTEL_KIND_CONSUMER,
};

enum otel_type { OTEL_STRING, OTEL_INT, OTEL_BOOL };

struct otel_attr {
	const char *key;
	enum otel_type type;
	const char *s;			/* OTEL_STRING */
	int64_t i;			/* OTEL_INT; OTEL_BOOL: 0 or 1 */
};

/* A timed annotation: OTLP's span event, Zipkin's annotation */
struct otel_event {
	uint64_t time_ns;		/* Unix time */
	const char *name;
	const struct otel_attr *attrs;
	unsigned int nattrs;
};

struct otel_span {
	uint8_t trace_id[OTEL_TRACE_ID_LEN];
	uint8_t span_id[OTEL_SPAN_ID_LEN];
	uint8_t parent_id[OTEL_SPAN_ID_LEN];	/* all zero: a root */
	const char *name;
	enum otel_kind kind;
	uint64_t start_ns, end_ns;	/* Unix time; end >= start */
	const char *service;		/* service.name; NULL: "unknown_service" */
	uint32_t pid;			/* process.pid; 0: none */
	const char *host;		/* host.name; NULL: otel_new()'s */
	bool error;			/* status ERROR, with @status_message */
	const char *status_message;
	const struct otel_attr *attrs;
	unsigned int nattrs;
	const struct otel_event *events;
	unsigned int nevents;
};

struct otel_out;
/*
 * Spans to @f in @format, from host @host (host.name; NULL: none), by a
 * writer named @scope version @version (OTLP's instrumentation scope). A
 * request holds @batch spans at most (0: OTEL_BATCH_DEFAULT). Exits when
 * out of memory.
 */
struct otel_out *otel_new(FILE *f, enum otel_format format, const char *host,
			  const char *scope, const char *version, size_t batch);
/* Add a span: 0, or -1 when writing @f failed (errno). */
int otel_add(struct otel_out *o, const struct otel_span *s);
/* OTLP: write the spans held as one request line; 0 or -1 (errno). */
int otel_flush(struct otel_out *o);
/* Flush, end the format (Zipkin's array), free; @f stays open. 0 or -1. */
int otel_close(struct otel_out *o);
/* Spans written so far. */
unsigned long long otel_spans(const struct otel_out *o);

/* Is @b (@n bytes) all zero (an invalid id)? */
bool otel_id_zero(const uint8_t *b, size_t n);

#endif /* MAGNET_OTEL_H */
