// SPDX-License-Identifier: GPL-2.0
/*
 * Per-call accounting of a whole process, as every program reads it (see
 * acctwatch.h). System call names come from libseccomp's table, which
 * follows the kernel's for every architecture.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libmnl/libmnl.h>
#include <seccomp.h>

#include "acctwatch.h"

int acct_watch_set(struct nl_ctx *nl, uint32_t pid, bool on, bool owned)
{
	struct request req;
	struct nlmsghdr *nlh = request_start(nl, &req, MAGNET_CMD_ACCT_SET, 0);

	mnl_attr_put_u32(nlh, MAGNET_A_ACCT_PID, pid);
	mnl_attr_put_u8(nlh, MAGNET_A_ACCT_ENABLED, on);
	if (owned)
		mnl_attr_put(nlh, MAGNET_A_OWNED, 0, NULL);
	return nl_request(nl, &req, NULL, NULL);
}

/* (a binary attribute: what it has of @size bytes, the rest 0) */
static void copy_attr(void *dst, size_t size, const struct nlattr *a)
{
	size_t len = mnl_attr_get_payload_len(a);

	memset(dst, 0, size);
	memcpy(dst, mnl_attr_get_payload(a), len < size ? len : size);
}

bool acct_comm(uint32_t pid, char *buf, size_t size)
{
	char path[64];
	FILE *f;

	buf[0] = '\0';
	snprintf(path, sizeof(path), "/proc/%u/comm", pid);
	f = fopen(path, "r");
	if (!f)
		return false;
	if (fgets(buf, size, f))
		buf[strcspn(buf, "\n")] = '\0';
	fclose(f);
	return buf[0] != '\0';
}

static int watch_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[MAGNET_A_MAX + 1];
	struct acct_watches *ws = data;
	struct acct_watch *w;
	struct acct_watch_row *row;
	uint32_t pid;

	if (parse_magnet_attrs(nlh, tb) || !tb[MAGNET_A_ACCT_PID])
		return MNL_CB_ERROR;
	pid = attr_uint(tb[MAGNET_A_ACCT_PID]);
	if (!tb[MAGNET_A_ACCT_NR]) {
		if (nl_grow((void **)&ws->w, &ws->alloc, ws->count + 1,
			 sizeof(*w)))
			return MNL_CB_ERROR;
		w = &ws->w[ws->count++];
		memset(w, 0, sizeof(*w));
		w->pid = pid;
		if (tb[MAGNET_A_ACCT_SINCE])
			w->since_ns = attr_uint(tb[MAGNET_A_ACCT_SINCE]);
		if (tb[MAGNET_A_ACCT_THREADS])
			w->threads = attr_uint(tb[MAGNET_A_ACCT_THREADS]);
		if (tb[MAGNET_A_ACCT_MISSED])
			w->missed = attr_uint(tb[MAGNET_A_ACCT_MISSED]);
		w->exited = tb[MAGNET_A_ACCT_EXITED] != NULL;
		acct_comm(pid, w->comm, sizeof(w->comm));
		return MNL_CB_OK;
	}
	/* (a row follows its watch's message) */
	if (!ws->count || ws->w[ws->count - 1].pid != pid ||
	    !tb[MAGNET_A_ACCT_RESULT])
		return MNL_CB_ERROR;
	w = &ws->w[ws->count - 1];
	if (nl_grow((void **)&w->rows, &w->alloc, w->count + 1, sizeof(*row)))
		return MNL_CB_ERROR;
	row = &w->rows[w->count++];
	memset(row, 0, sizeof(*row));
	row->nr = attr_uint(tb[MAGNET_A_ACCT_NR]);
	copy_attr(&row->r, sizeof(row->r), tb[MAGNET_A_ACCT_RESULT]);
	if (tb[MAGNET_A_ACCT_ERRORS])
		row->errors = attr_uint(tb[MAGNET_A_ACCT_ERRORS]);
	if (tb[MAGNET_A_ACCT_MAX])
		row->max_ns = attr_uint(tb[MAGNET_A_ACCT_MAX]);
	if (tb[MAGNET_A_ACCT_HIST])
		copy_attr(row->hist, sizeof(row->hist), tb[MAGNET_A_ACCT_HIST]);
	return MNL_CB_OK;
}

int acct_watch_read(struct nl_ctx *nl, uint32_t pid, struct acct_watches *out)
{
	struct request req;
	struct nlmsghdr *nlh;

	acct_watches_free(out);
	nlh = request_start(nl, &req, MAGNET_CMD_ACCT_GET, NLM_F_DUMP);
	if (pid)
		mnl_attr_put_u32(nlh, MAGNET_A_ACCT_PID, pid);
	return nl_request(nl, &req, watch_cb, out);
}

void acct_watches_free(struct acct_watches *ws)
{
	for (size_t i = 0; i < ws->count; i++)
		free(ws->w[i].rows);
	free(ws->w);
	memset(ws, 0, sizeof(*ws));
}

struct acct_watch *acct_watch_find(struct acct_watches *ws, uint32_t pid)
{
	for (size_t i = 0; i < ws->count; i++)
		if (ws->w[i].pid == pid)
			return &ws->w[i];
	return NULL;
}

static void result_sub(struct magnet_acct_result *a,
		       const struct magnet_acct_result *b)
{
	/* (every field from calls on is a count or a sum: u32 then u64s) */
	a->calls -= b->calls;
	a->wall_ns -= b->wall_ns;
	a->cpu_ns -= b->cpu_ns;
	a->runq_ns -= b->runq_ns;
	for (int i = 0; i < __MAGNET_ACCT_BLOCK_MAX; i++)
		a->blocked_ns[i] -= b->blocked_ns[i];
	a->hardirq_ns -= b->hardirq_ns;
	a->softirq_ns -= b->softirq_ns;
	for (int i = 0; i < MAGNET_ACCT_SUBSYS_SLOTS; i++)
		a->subsys_ns[i] -= b->subsys_ns[i];
	a->minflt -= b->minflt;
	a->majflt -= b->majflt;
	a->vcsw -= b->vcsw;
	a->ivcsw -= b->ivcsw;
	a->sock_tx_bytes -= b->sock_tx_bytes;
	a->sock_rx_bytes -= b->sock_rx_bytes;
	a->blk_read_bytes -= b->blk_read_bytes;
	a->blk_write_bytes -= b->blk_write_bytes;
	a->tcp_retrans -= b->tcp_retrans;
	a->async_lost -= b->async_lost;
	a->dev_tx_bytes -= b->dev_tx_bytes;
	a->async_tx_ns -= b->async_tx_ns;
	a->async_blk_bytes -= b->async_blk_bytes;
	a->async_blk_ns -= b->async_blk_ns;
	a->async_rx_bytes -= b->async_rx_bytes;
	a->async_rx_ns -= b->async_rx_ns;
}

void acct_watch_subtract(struct acct_watch *now,
			 const struct acct_watch *before)
{
	if (before->since_ns > now->since_ns)
		return;		/* (another watch since) */
	now->missed -= before->missed;
	for (size_t i = 0; i < now->count; i++) {
		struct acct_watch_row *r = &now->rows[i];

		for (size_t j = 0; j < before->count; j++) {
			const struct acct_watch_row *b = &before->rows[j];

			if (b->nr != r->nr)
				continue;
			result_sub(&r->r, &b->r);
			r->errors -= b->errors;
			for (int k = 0; k < MAGNET_ACCT_HIST; k++)
				r->hist[k] -= b->hist[k];
			break;
		}
	}
}

static int by_wall(const void *a, const void *b)
{
	const struct acct_watch_row *x = a, *y = b;

	if (x->r.wall_ns != y->r.wall_ns)
		return x->r.wall_ns > y->r.wall_ns ? -1 : 1;
	return x->nr < y->nr ? -1 : x->nr > y->nr;
}

void acct_watch_sort(struct acct_watch *w)
{
	if (w->count)
		qsort(w->rows, w->count, sizeof(*w->rows), by_wall);
}

const char *acct_syscall_name(uint32_t nr, char *buf, size_t size)
{
	char *name;

	if (nr == MAGNET_ACCT_NR_OTHER) {
		snprintf(buf, size, "other");
		return buf;
	}
	name = seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, (int)nr);
	if (name)
		snprintf(buf, size, "%s", name);
	else
		snprintf(buf, size, "syscall_%u", nr);
	free(name);
	return buf;
}

uint64_t acct_hist_edge(unsigned int i)
{
	if (i >= MAGNET_ACCT_HIST - 1)
		return UINT64_MAX;
	return (uint64_t)1 << (i + 10);
}

uint64_t acct_watch_quantile(const struct acct_watch_row *row, double q)
{
	uint64_t n = 0, want, seen = 0;

	for (int i = 0; i < MAGNET_ACCT_HIST; i++)
		n += row->hist[i];
	if (!n)
		return 0;
	want = (uint64_t)(q * n + 0.5);
	if (want < 1)
		want = 1;
	for (int i = 0; i < MAGNET_ACCT_HIST; i++) {
		seen += row->hist[i];
		if (seen >= want) {
			uint64_t edge = acct_hist_edge(i);

			return edge < row->max_ns ? edge : row->max_ns;
		}
	}
	return row->max_ns;
}
