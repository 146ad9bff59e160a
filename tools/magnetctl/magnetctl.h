/* SPDX-License-Identifier: GPL-2.0 */
/*
 * magnetctl's parts: magnetctl.c holds the command line, the requests, the
 * values of replies, lists and main(); each object's commands are a file
 * of their own (buffer.c, probe.c, filter.c, stats.c, monitor.c,
 * daemon.c), as iproute2's ip/ has one per object. Usage errors exit with
 * status 2; a failed request prints why and returns -1.
 */
#ifndef MAGNETCTL_H
#define MAGNETCTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <libmnl/libmnl.h>
#include <linux/magnet.h>

#include "nl.h"
#include "words.h"

#define MAGNETCTL_VERSION	"0.2.0"
#define EXIT_USAGE		2
#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))

struct args {
	int count;
	char **word;
};

struct lister {
	mnl_cb_t row_cb;
	bool table;		/* text: aligned columns under a header */
	bool started;
};

/* The command being run, e.g. "probe add", for messages. */
extern char command[32];
/* The netlink context of this run. */
extern struct nl_ctx *nl;

extern const char *const buffer_modes[MAGNET_BUFFER_OVERWRITE + 1];
extern const char *const probe_kinds[MAGNET_PROBE_SAMPLE + 1];
extern const char *const probe_dispatches[MAGNET_DISPATCH_FTRACE + 1];
extern const char *const filter_actions[MAGNET_FILTER_EXCLUDE + 1];
extern const char *const probe_stat_names[MAGNET_STAT_MAX + 1];
extern const char *const cpu_stat_names[MAGNET_CPU_MAX + 1];

void __attribute__((noreturn, format(printf, 1, 2)))
usage_error(const char *fmt, ...);
int print_nl_error(void);
int ctl_request(struct request *req, mnl_cb_t cb, void *data);
bool more(const struct args *a);
const char *next_word(struct args *a);
const char *take_arg(struct args *a, const char *what);
const char *take_value(struct args *a, const char *key);
void no_more_args(const struct args *a);
void __attribute__((noreturn)) unknown_keyword(const char *word);
bool request_has(const struct nlmsghdr *nlh, uint16_t type);
void refuse_repeat(const struct nlmsghdr *nlh, uint16_t type,
			  const char *key);
uint64_t parse_uint(const char *s, uint64_t min, uint64_t max,
			   const char *what);
bool parse_on_off(const char *s, const char *key);
uint64_t parse_size(const char *s);
uint64_t parse_duration(const char *s, const char *what);
/* An interval of -d: seconds, 0.01 to 86400 (account.c). */
double parse_seconds(const char *word);
void check_name(const char *name, const char *what);
uint16_t check_probe_ref(const char *ref);
void put_probe_ref(struct nlmsghdr *nlh, const char *ref);
int word_index(const char *const *words, size_t count, const char *s);
const char *attr_str(const struct nlattr *attr);
const char *value_name(const char *const *names, size_t count,
			      const struct nlattr *attr, char buf[24]);
void out_of_memory(void);
void *append(void *array, size_t *count, size_t size);
void format_size(uint64_t bytes, char buf[32]);
char *cpu_list_text(const uint8_t *map, size_t len);
void list_start(struct lister *l);
int list_row_cb(const struct nlmsghdr *nlh, void *data);
int list_run(struct request *req, struct lister *l);
int list(struct request *req, mnl_cb_t row_cb);
int list_lines(struct request *req, mnl_cb_t row_cb);

#define VALUE_NAME(names, attr, buf) \
	value_name(names, ARRAY_SIZE(names), attr, buf)

/* The objects: their help and commands. */
extern const char help_buffer[], help_probe[], help_filter[], help_stats[],
	help_monitor[], help_daemon[], help_session[],
	help_account[], help_acct[];

int buffer_add(struct args *a);
int buffer_del(struct args *a);
int buffer_list(struct args *a);
int probe_add(struct args *a);
int probe_del(struct args *a);
int probe_enable(struct args *a);
int probe_disable(struct args *a);
int probe_set(struct args *a);
int probe_list(struct args *a);
int probe_catalog(struct args *a);
int probe_add_set(struct args *a);
int probe_del_set(struct args *a);
int probe_list_sets(struct args *a);
int filter_add(struct args *a);
int filter_del(struct args *a);
int filter_list(struct args *a);
int stats_show(struct args *a);
int monitor(struct args *a);
int daemon_run(struct args *a);
int session_list(struct args *a);
int session_del(struct args *a);
int account(struct args *a);
int acct_show(struct args *a);

#endif /* MAGNETCTL_H */
