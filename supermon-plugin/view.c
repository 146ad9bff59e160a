// SPDX-License-Identifier: GPL-2.0
/*
 * magnetd's metrics as Supermon categories, and their texts (view.h).
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "view.h"

#define CAT_TIME	0
#define CAT_MAGNETD	1

static struct category *add_category(struct view *v, const char *name,
				     size_t len)
{
	struct category *c;

	c = realloc(v->cat, (v->ncats + 1) * sizeof(*v->cat));
	if (!c)
		return NULL;
	v->cat = c;
	c = &v->cat[v->ncats++];
	memset(c, 0, sizeof(*c));
	snprintf(c->name, sizeof(c->name), "%.*s", (int)len, name);
	return c;
}

static struct category *find_category(struct view *v, const char *name,
				      size_t len)
{
	unsigned int i;

	/* From the end: a category's metrics come one after another. */
	for (i = v->ncats; i-- > 0;)
		if (strlen(v->cat[i].name) == len &&
		    !strncmp(v->cat[i].name, name, len))
			return &v->cat[i];
	return NULL;
}

static int add_field(struct category *c, const char *name, double value)
{
	char (*f)[64];
	uint64_t *val;
	char *p;

	f = realloc(c->field, (c->nfields + 1) * sizeof(*c->field));
	if (!f)
		return -1;
	c->field = f;
	val = realloc(c->value, (c->nfields + 1) * sizeof(*c->value));
	if (!val)
		return -1;
	c->value = val;
	snprintf(c->field[c->nfields], sizeof(c->field[0]), "%s", name);
	for (p = c->field[c->nfields]; *p; p++)
		if (*p == '.')
			*p = '_';
	c->value[c->nfields] = isfinite(value) && value > 0 ?
			       (uint64_t)llround(value) : 0;
	c->nfields++;
	return 0;
}

static bool own(const char *name)
{
	return !strncmp(name, "magnetd.", 8) || !strcmp(name, "records") ||
	       !strncmp(name, "records.", 8);
}

int view_empty(struct view *v)
{
	struct category *c;

	memset(v, 0, sizeof(*v));
	v->health_field = 0;
	c = add_category(v, "time", 4);
	if (!c || add_field(c, "timestamp", 0))
		goto nomem;
	c = add_category(v, "magnetd", 7);
	if (!c || add_field(c, "health", 0))
		goto nomem;
	return 0;
nomem:
	view_free(v);
	return -1;
}

int view_build(struct view *v, const struct magnet_snapshot *snap)
{
	struct category *c;
	unsigned int i;
	int pass;

	memset(v, 0, sizeof(*v));
	v->health_field = -1;
	c = add_category(v, "time", 4);
	if (!c || add_field(c, "timestamp", snap->time_ns / 1000000000ULL))
		goto nomem;
	if (!add_category(v, "magnetd", 7))
		goto nomem;
	/* magnetd's own first, then the totals. */
	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < snap->nmetrics; i++) {
			const struct magnet_metric *m = &snap->metrics[i];
			bool mine = !strncmp(m->name, "magnetd.", 8);

			if (!own(m->name) || mine != !pass)
				continue;
			if (!strcmp(m->name, "magnetd.health"))
				v->health_field = v->cat[CAT_MAGNETD].nfields;
			if (add_field(&v->cat[CAT_MAGNETD],
				      mine ? m->name + 8 : m->name, m->value))
				goto nomem;
		}
	}
	for (i = 0; i < snap->nmetrics; i++) {
		const struct magnet_metric *m = &snap->metrics[i];
		const char *dot = strrchr(m->name, '.');
		size_t len;

		if (own(m->name) || magnet_metric_per_cpu(m->name) || !dot ||
		    dot == m->name || !dot[1])
			continue;
		len = dot - m->name;
		/* An event named like one of ours would be ambiguous. */
		if ((len == 4 && !strncmp(m->name, "time", 4)) ||
		    (len == 7 && !strncmp(m->name, "magnetd", 7)))
			continue;
		c = find_category(v, m->name, len);
		if (!c)
			c = add_category(v, m->name, len);
		if (!c || add_field(c, dot + 1, m->value))
			goto nomem;
	}
	return 0;
nomem:
	view_free(v);
	errno = ENOMEM;
	return -1;
}

void view_free(struct view *v)
{
	unsigned int i;

	for (i = 0; i < v->ncats; i++) {
		free(v->cat[i].field);
		free(v->cat[i].value);
	}
	free(v->cat);
	memset(v, 0, sizeof(*v));
}

void view_unhealthy(struct view *v)
{
	if (v->ncats > CAT_MAGNETD && v->health_field >= 0 &&
	    (unsigned int)v->health_field < v->cat[CAT_MAGNETD].nfields)
		v->cat[CAT_MAGNETD].value[v->health_field] = 0;
}

static void print_value(FILE *f, unsigned int cat, unsigned int field,
			uint64_t value)
{
	if (cat == CAT_TIME && field == 0)
		fprintf(f, "0x%" PRIx64, value);
	else
		fprintf(f, "%" PRIu64, value);
}

static char *finish(FILE *f, char **buf)
{
	if (fclose(f)) {
		free(*buf);
		return NULL;
	}
	return *buf;
}

char *view_schema(const struct view *v, size_t *len)
{
	char *buf = NULL;
	unsigned int i, j;
	FILE *f = open_memstream(&buf, len);

	if (!f)
		return NULL;
	fputc('(', f);
	for (i = 0; i < v->ncats; i++) {
		fprintf(f, "%s(%s 'U", i ? " " : "", v->cat[i].name);
		for (j = 0; j < v->cat[i].nfields; j++)
			fprintf(f, " %s", v->cat[i].field[j]);
		fputc(')', f);
	}
	fputs(")\n\n", f);
	return finish(f, &buf);
}

static bool wanted(const struct mask *m, unsigned int i)
{
	return m->all || (i / 8 < MASK_BYTES && (m->bit[i / 8] >> (i % 8)) & 1);
}

/* A category's bit as hex: 1 << i. */
static void print_bit(FILE *f, unsigned int i)
{
	unsigned int z;

	fprintf(f, "0x%x", 1u << (i % 4));
	for (z = 0; z < i / 4; z++)
		fputc('0', f);
}

char *view_sample(const struct view *v, const char *node, uint32_t addr,
		  const struct mask *m, size_t *len)
{
	const uint8_t *a = (const uint8_t *)&addr;
	/* As mon prints it: the address bytes read as a little-endian word. */
	uint32_t word = a[0] | a[1] << 8 | a[2] << 16 | (uint32_t)a[3] << 24;
	char *buf = NULL;
	unsigned int i, j, n = 0;
	FILE *f = open_memstream(&buf, len);

	if (!f)
		return NULL;
	fprintf(f, "((%s (", node);
	for (i = 0; i < v->ncats; i++) {
		const struct category *c = &v->cat[i];

		if (!wanted(m, i))
			continue;
		fprintf(f, "%s(%s (mask ", n++ ? " " : "", c->name);
		print_bit(f, i);
		fprintf(f, ") (node 0x%" PRIx32 ")", word);
		for (j = 0; j < c->nfields; j++) {
			fprintf(f, " (%s ", c->field[j]);
			print_value(f, i, j, c->value[j]);
			fputc(')', f);
		}
		fputc(')', f);
	}
	fputs(")))\n\n", f);
	return finish(f, &buf);
}

char *view_file_sample(const struct view *v, size_t *len)
{
	char *buf = NULL;
	unsigned int i, j;
	FILE *f = open_memstream(&buf, len);

	if (!f)
		return NULL;
	fputc('(', f);
	for (i = 0; i < v->ncats; i++) {
		fprintf(f, "%s(%s", i ? " " : "", v->cat[i].name);
		for (j = 0; j < v->cat[i].nfields; j++) {
			fputc(' ', f);
			print_value(f, i, j, v->cat[i].value[j]);
		}
		fputc(')', f);
	}
	fputs(")\n", f);
	return finish(f, &buf);
}

bool mask_parse(struct mask *m, const char *s, size_t n)
{
	size_t i, bit;

	if (n >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		s += 2;
		n -= 2;
	}
	if (!n)
		return false;
	for (i = 0; i < n; i++)
		if (!isxdigit((unsigned char)s[i]))
			return false;
	memset(m, 0, sizeof(*m));
	/* The last digit holds bits 0-3. */
	for (i = 0; i < n; i++) {
		unsigned int d = isdigit((unsigned char)s[n - 1 - i]) ?
				 s[n - 1 - i] - '0' :
				 (tolower((unsigned char)s[n - 1 - i]) - 'a' + 10);

		for (bit = 0; bit < 4; bit++) {
			size_t b = i * 4 + bit;

			if ((d >> bit) & 1 && b / 8 < MASK_BYTES)
				m->bit[b / 8] |= 1u << (b % 8);
		}
	}
	return true;
}
