// SPDX-License-Identifier: GPL-2.0
/*
 * Addresses to function names (symbols.h). A process's symbols come from
 * elfutils' libdwfl, which reads /proc/PID/maps, opens each file mapped
 * and its separate debuginfo, and knows ELF's symbol tables; the kernel's
 * from /proc/kallsyms, a text file that libdwfl would only read through
 * a vmlinux image the machine may not have: parsed here, sorted once.
 */
#define _GNU_SOURCE
#include <elfutils/libdwfl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "symbols.h"

#define MEMO_SLOTS	4096		/* addresses remembered per process */

struct ksym {
	uint64_t addr;
	const char *name;		/* "name" or "name [module]" */
};

struct memo {
	uint64_t addr;
	const char *label;
};

struct proc {
	uint32_t tgid;
	Dwfl *dwfl;			/* NULL: gone, or no mapping read */
	time_t reported;		/* when its mappings were read */
	const char *comm;
	const char *gone;		/* "[pid N gone]" */
	struct memo memo[MEMO_SLOTS];
	struct proc *next;
};

struct symbols {
	struct ksym *ksyms;
	size_t nksyms;
	bool kernel_read, kernel_hidden;
	const char *kallsyms;
	struct proc *procs;
	char **strings;			/* every string handed out */
	size_t nstrings, strings_cap;
};

static const Dwfl_Callbacks proc_callbacks = {
	.find_elf = dwfl_linux_proc_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
};

/* Keep @str (malloc'd) until symbols_free(); NULL stays NULL. */
static const char *keep(struct symbols *s, char *str)
{
	char **grown;

	if (!str)
		return NULL;
	if (s->nstrings == s->strings_cap) {
		size_t cap = s->strings_cap ? 2 * s->strings_cap : 256;

		grown = realloc(s->strings, cap * sizeof(*grown));
		if (!grown) {
			free(str);
			return NULL;
		}
		s->strings = grown;
		s->strings_cap = cap;
	}
	s->strings[s->nstrings++] = str;
	return str;
}

static const char *keepf(struct symbols *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static const char *keepf(struct symbols *s, const char *fmt, ...)
{
	va_list ap;
	char *str;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&str, fmt, ap);
	va_end(ap);
	return n < 0 ? NULL : keep(s, str);
}

struct symbols *symbols_new(const char *kallsyms)
{
	struct symbols *s;
	FILE *f;

	/* a file given must be there (errno); /proc's may be hidden */
	if (kallsyms) {
		f = fopen(kallsyms, "r");
		if (!f)
			return NULL;
		fclose(f);
	}
	s = calloc(1, sizeof(struct symbols));
	if (s)
		s->kallsyms = kallsyms ? kallsyms : "/proc/kallsyms";
	return s;
}

void symbols_free(struct symbols *s)
{
	struct proc *p, *next;
	size_t i;

	if (!s)
		return;
	for (p = s->procs; p; p = next) {
		next = p->next;
		if (p->dwfl)
			dwfl_end(p->dwfl);
		free(p);
	}
	for (i = 0; i < s->nstrings; i++)
		free(s->strings[i]);
	free(s->strings);
	free(s->ksyms);
	free(s);
}

/* --- the kernel ----------------------------------------------------------- */

static int ksym_cmp(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static void kernel_read(struct symbols *s)
{
	FILE *f = fopen(s->kallsyms, "r");
	char line[512], name[256], mod[128];
	size_t cap = 0;
	uint64_t addr;
	char type;
	int n;

	s->kernel_read = true;
	s->kernel_hidden = true;
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		mod[0] = '\0';
		n = sscanf(line, "%" SCNx64 " %c %255s [%127[^]]]", &addr,
			   &type, name, mod);
		if (n < 3 || !strchr("tTwW", type))
			continue;
		if (addr)
			s->kernel_hidden = false;
		if (s->nksyms == cap) {
			struct ksym *grown;

			cap = cap ? 2 * cap : 65536;
			grown = realloc(s->ksyms, cap * sizeof(*grown));
			if (!grown)
				break;
			s->ksyms = grown;
		}
		s->ksyms[s->nksyms].addr = addr;
		s->ksyms[s->nksyms].name = mod[0] ?
			keepf(s, "%s [%s]", name, mod) : keepf(s, "%s", name);
		if (s->ksyms[s->nksyms].name)
			s->nksyms++;
	}
	fclose(f);
	qsort(s->ksyms, s->nksyms, sizeof(*s->ksyms), ksym_cmp);
}

const char *symbols_kernel(struct symbols *s, uint64_t addr)
{
	size_t lo = 0, hi;

	if (!s->kernel_read)
		kernel_read(s);
	if (s->kernel_hidden || !s->nksyms || addr < s->ksyms[0].addr)
		return "[kernel]";
	/* the last symbol at or below @addr */
	hi = s->nksyms;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->ksyms[mid].addr <= addr)
			lo = mid;
		else
			hi = mid;
	}
	return s->ksyms[lo].name;
}

/* --- processes ------------------------------------------------------------ */

static void proc_report(struct proc *p)
{
	p->reported = time(NULL);
	if (!p->dwfl)
		p->dwfl = dwfl_begin(&proc_callbacks);
	if (!p->dwfl)
		return;
	dwfl_report_begin(p->dwfl);
	if (dwfl_linux_proc_report(p->dwfl, p->tgid)) {
		dwfl_report_end(p->dwfl, NULL, NULL);
		dwfl_end(p->dwfl);
		p->dwfl = NULL;
		return;
	}
	dwfl_report_end(p->dwfl, NULL, NULL);
}

static struct proc *proc_get(struct symbols *s, uint32_t tgid)
{
	struct proc *p;
	char path[64], comm[64] = "";
	FILE *f;

	for (p = s->procs; p; p = p->next)
		if (p->tgid == tgid)
			return p;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->tgid = tgid;
	snprintf(path, sizeof(path), "/proc/%u/comm", tgid);
	f = fopen(path, "r");
	if (f) {
		if (fgets(comm, sizeof(comm), f))
			comm[strcspn(comm, "\n")] = '\0';
		fclose(f);
	}
	p->comm = comm[0] ? keepf(s, "%s", comm) : keepf(s, "pid %u", tgid);
	p->gone = keepf(s, "[pid %u gone]", tgid);
	proc_report(p);
	p->next = s->procs;
	s->procs = p;
	return p;
}

const char *symbols_comm(struct symbols *s, uint32_t tgid)
{
	struct proc *p;

	if (!tgid)
		return "[idle]";
	p = proc_get(s, tgid);
	return p && p->comm ? p->comm : "?";
}

static const char *base_name(const char *path)
{
	const char *slash = path ? strrchr(path, '/') : NULL;

	return slash ? slash + 1 : path ? path : "?";
}

/* The mapping of @addr in /proc/TGID/maps, as a label; NULL if none. */
static const char *map_label(struct symbols *s, uint32_t tgid, uint64_t addr)
{
	char path[64], line[512], file[384];
	uint64_t lo, hi;
	const char *label = NULL;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/maps", tgid);
	f = fopen(path, "r");
	if (!f)
		return NULL;
	while (!label && fgets(line, sizeof(line), f)) {
		file[0] = '\0';
		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %*s %*s %*s %*s %383[^\n]",
			   &lo, &hi, file) < 2 || addr < lo || addr >= hi)
			continue;
		label = keepf(s, "[%s %#" PRIx64 "-%#" PRIx64 "]",
			      file[0] ? base_name(file) : "anon", lo, hi);
	}
	fclose(f);
	return label;
}

static const char *lookup(struct symbols *s, struct proc *p, uint64_t addr)
{
	Dwfl_Module *m = p->dwfl ? dwfl_addrmodule(p->dwfl, addr) : NULL;
	const char *name, *mod;
	Dwarf_Addr lo, hi;

	/* a mapping made since they were read (dlopen): once a second */
	if (!m && p->dwfl && time(NULL) != p->reported) {
		proc_report(p);
		m = p->dwfl ? dwfl_addrmodule(p->dwfl, addr) : NULL;
	}
	if (!m)
		return map_label(s, p->tgid, addr) ?: p->gone;
	mod = dwfl_module_info(m, NULL, &lo, &hi, NULL, NULL, NULL, NULL);
	name = dwfl_module_addrname(m, addr);
	if (name)
		return keepf(s, "%s (%s)", name, base_name(mod));
	return keepf(s, "[%s %#" PRIx64 "-%#" PRIx64 "]", base_name(mod),
		     (uint64_t)lo, (uint64_t)hi);
}

const char *symbols_user(struct symbols *s, uint32_t tgid, uint64_t addr)
{
	struct proc *p = proc_get(s, tgid);
	struct memo *slot;
	const char *label;

	if (!p)
		return "?";
	slot = &p->memo[(addr * 0x9e3779b97f4a7c15ULL) >> 52];
	if (slot->label && slot->addr == addr)
		return slot->label;
	label = lookup(s, p, addr);
	if (!label)
		return "?";
	slot->addr = addr;
	slot->label = label;
	return label;
}
