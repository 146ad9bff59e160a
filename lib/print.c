// SPDX-License-Identifier: GPL-2.0
/*
 * Text tables and JSON from the same calls (see print.h).
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "print.h"

#define JSON_DEPTH_MAX	16
#define TABLE_COLS_MAX	32
#define COLUMN_GAP	2

static struct {
	bool json, pretty;
	int depth;
	bool empty[JSON_DEPTH_MAX];	/* no member at this depth yet */
	bool array[JSON_DEPTH_MAX];	/* members have no keys */
} out;

struct cell {
	char *text;
	const char *key;
	bool right;		/* numbers are right-aligned */
	bool row_end;
};

static struct {
	bool active;
	struct cell *cells;
	size_t count, alloc;
} table;

void print_init(bool json, bool pretty)
{
	out.json = json;
	out.pretty = json && pretty;
}

bool print_is_json(void)
{
	return out.json;
}

/* --- JSON ----------------------------------------------------------------- */

static void json_indent(void)
{
	putchar('\n');
	for (int i = 0; i < out.depth; i++)
		fputs("  ", stdout);
}

/* The comma, indentation and key before a value. */
static void json_member(const char *key)
{
	if (out.depth > 0) {
		if (!out.empty[out.depth])
			putchar(',');
		out.empty[out.depth] = false;
		if (out.pretty)
			json_indent();
	}
	if (key && out.depth > 0 && !out.array[out.depth]) {
		json_string(stdout, key);
		fputs(out.pretty ? ": " : ":", stdout);
	}
}

static void json_open(const char *key, char bracket)
{
	if (!out.json)
		return;
	json_member(key);
	putchar(bracket);
	if (out.depth < JSON_DEPTH_MAX - 1)
		out.depth++;
	out.empty[out.depth] = true;
	out.array[out.depth] = bracket == '[';
}

static void json_close(char bracket)
{
	bool empty;

	if (!out.json || out.depth == 0)
		return;
	empty = out.empty[out.depth];
	out.depth--;
	if (out.pretty && !empty)
		json_indent();
	putchar(bracket);
	if (out.depth == 0)
		putchar('\n');
}

void print_open_object(const char *key)
{
	json_open(key, '{');
}

void print_close_object(void)
{
	json_close('}');
}

void print_open_array(const char *key)
{
	json_open(key, '[');
}

void print_close_array(void)
{
	json_close(']');
}

/* --- text tables ---------------------------------------------------------- */

static void out_of_memory(void)
{
	fprintf(stderr, "%s: out of memory\n", program_invocation_short_name);
	exit(1);
}

void table_begin(void)
{
	if (!out.json)
		table.active = true;
}

static void table_add(const char *key, bool right, const char *fmt, ...)
{
	struct cell *c;
	va_list ap;
	char *p;
	int len;

	if (table.count == table.alloc) {
		table.alloc = table.alloc ? 2 * table.alloc : 64;
		table.cells = realloc(table.cells,
				      table.alloc * sizeof(*table.cells));
		if (!table.cells)
			out_of_memory();
	}
	c = &table.cells[table.count++];
	*c = (struct cell){ .key = key, .right = right };
	va_start(ap, fmt);
	len = vasprintf(&c->text, fmt, ap);
	va_end(ap);
	if (len < 0)
		out_of_memory();
	/* a control character would break the row, or worse, the terminal */
	for (p = c->text; *p; p++)
		if (iscntrl((unsigned char)*p))
			*p = '?';
}

void table_row_end(void)
{
	if (table.active && table.count)
		table.cells[table.count - 1].row_end = true;
}

struct column {
	size_t width;
	bool right;		/* some cell of it is a number */
};

static void table_print_cell(const char *text, const struct column *col,
			     bool last)
{
	int pad = col->width - strlen(text);

	if (col->right)
		printf("%*s%s", pad, "", text);
	else if (last)
		fputs(text, stdout);
	else
		printf("%s%*s", text, pad, "");
	if (!last)
		printf("%*s", COLUMN_GAP, "");
}

/* The first row's keys, in upper case. */
static void table_print_header(const struct column *column, size_t columns)
{
	char name[64];
	size_t i, j;

	for (i = 0; i < columns; i++) {
		const char *key = table.cells[i].key;

		for (j = 0; key[j] && j < sizeof(name) - 1; j++)
			name[j] = toupper((unsigned char)key[j]);
		name[j] = '\0';
		table_print_cell(name, &column[i], i == columns - 1);
	}
	putchar('\n');
}

/* Columns as many as the first row has cells; returns their number. */
static size_t table_measure(struct column *column)
{
	size_t columns = 0, col = 0, i, len;

	while (columns < table.count && columns < TABLE_COLS_MAX &&
	       !table.cells[columns++].row_end)
		;
	for (i = 0; i < columns; i++)
		column[i] = (struct column){ .width = strlen(table.cells[i].key) };
	for (i = 0; i < table.count; i++) {
		len = strlen(table.cells[i].text);
		if (col < columns) {
			if (len > column[col].width)
				column[col].width = len;
			column[col].right |= table.cells[i].right;
		}
		col = table.cells[i].row_end ? 0 : col + 1;
	}
	return columns;
}

void table_end(void)
{
	struct column column[TABLE_COLS_MAX];
	size_t columns, col = 0, i;

	if (!table.active)
		return;
	table_row_end();
	table.active = false;
	columns = table_measure(column);
	if (columns)
		table_print_header(column, columns);
	for (i = 0; i < table.count; i++) {
		const struct cell *c = &table.cells[i];

		if (col < columns)
			table_print_cell(c->text, &column[col],
					 c->row_end || col == columns - 1);
		if (c->row_end)
			putchar('\n');
		col = c->row_end ? 0 : col + 1;
		free(c->text);
	}
	table.count = 0;
}

/* --- fields --------------------------------------------------------------- */

static bool wanted(enum print_mode mode)
{
	return mode == PRINT_ANY || (mode == PRINT_JSON) == out.json;
}

void print_string(enum print_mode mode, const char *key, const char *fmt,
		  const char *value)
{
	if (!wanted(mode))
		return;
	if (out.json) {
		if (value) {
			json_member(key);
			json_string(stdout, value);
		}
	} else if (table.active) {
		table_add(key, false, fmt ? fmt : "%s", value ? value : "-");
	} else if (fmt) {
		printf(fmt, value ? value : "-");
	}
}

void print_number(enum print_mode mode, const char *key, const char *text)
{
	if (!wanted(mode))
		return;
	if (out.json) {
		json_member(key);
		fputs(text, stdout);
	} else if (table.active) {
		table_add(key, true, "%s", text);
	} else {
		fputs(text, stdout);
	}
}

void print_u64(enum print_mode mode, const char *key, const char *fmt,
	       uint64_t value)
{
	if (!wanted(mode))
		return;
	if (out.json) {
		json_member(key);
		json_u64(stdout, value);
	} else if (table.active) {
		table_add(key, true, fmt ? fmt : "%" PRIu64, value);
	} else if (fmt) {
		printf(fmt, value);
	}
}

void print_bool(enum print_mode mode, const char *key, const char *fmt,
		bool value)
{
	if (!wanted(mode))
		return;
	if (out.json) {
		json_member(key);
		fputs(value ? "true" : "false", stdout);
	} else if (table.active) {
		table_add(key, false, fmt ? fmt : "%s", value ? "yes" : "no");
	} else if (fmt) {
		printf(fmt, value ? "yes" : "no");
	}
}

void print_row_begin(void)
{
	print_open_object(NULL);
}

void print_row_end(void)
{
	print_close_object();
	table_row_end();
}

void print_word(const char *word)
{
	print_string(PRINT_TEXT, NULL, " %s", word);
}
