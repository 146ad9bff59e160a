/* SPDX-License-Identifier: GPL-2.0 */
/*
 * magnetctl's output, and its filter types' (filter.h): the same calls
 * print text or JSON, one call per field, in the spirit of iproute2's
 * json_print.h. Printing to standard output; out of memory, it exits.
 *
 * JSON: print_open_object/array() and print_close_*() build the document;
 * each field is "key": value inside the innermost object (key NULL inside
 * an array). A top-level value ends with a newline.
 *
 * Text: between table_begin() and table_end(), each field is a cell of the
 * current row (formatted with fmt, or a default format if fmt is NULL) and
 * table_row_end() ends the row; table_end() prints the rows as aligned
 * columns under a header line made of the first row's keys in upper case.
 * Outside a table, a field prints printf(fmt, value) if fmt is not NULL.
 * The JSON structure calls do nothing in text mode, the table calls
 * nothing in JSON mode.
 *
 * mode selects where a field goes: PRINT_ANY both, PRINT_JSON or
 * PRINT_TEXT only one of them.
 */
#ifndef MAGNET_PRINT_H
#define MAGNET_PRINT_H

#include <stdbool.h>
#include <stdint.h>

enum print_mode {
	PRINT_ANY,
	PRINT_JSON,
	PRINT_TEXT,
};

void print_init(bool json, bool pretty);
bool print_is_json(void);

void print_open_object(const char *key);
void print_close_object(void);
void print_open_array(const char *key);
void print_close_array(void);

void table_begin(void);
void table_row_end(void);
void table_end(void);

/* A NULL value is "-" in text and leaves the field out of JSON. */
void print_string(enum print_mode mode, const char *key, const char *fmt,
		  const char *value);
void print_u64(enum print_mode mode, const char *key, const char *fmt,
	       uint64_t value);
/* A number already formatted (JSON: unquoted; text: right-aligned). */
void print_number(enum print_mode mode, const char *key, const char *text);
/* Text "yes"/"no" (fmt gets that string), JSON true/false. */
void print_bool(enum print_mode mode, const char *key, const char *fmt,
		bool value);

/* A word of text only: " WORD". */
void print_word(const char *word);

/* JSON object for one row of a table, and the end of both. */
void print_row_begin(void);
void print_row_end(void);

#endif /* MAGNET_PRINT_H */
