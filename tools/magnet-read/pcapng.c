// SPDX-License-Identifier: GPL-2.0
/*
 * pcapng output: one Enhanced Packet Block per packet whose journey kept
 * bytes from the IP header on, as raw IP (LINKTYPE_RAW) with nanosecond
 * timestamps, its direction (epb_flags) and its journey as its comment.
 * See the pcapng specification (draft-ietf-opsawg-pcapng).
 *
 * One interface, "any", for all devices (each packet's comment names the
 * devices it passed): libpcap (tcpdump) refuses a file whose second
 * Interface Description Block has LINKTYPE_RAW, because it compares that
 * block's link type with the first one's after mapping it to DLT_RAW.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "magnet-read.h"

#define BT_SHB		0x0a0d0d0a
#define BT_IDB		0x00000001
#define BT_EPB		0x00000006
#define BYTE_ORDER_MAGIC 0x1a2b3c4d
#define LINKTYPE_RAW	101
#define OPT_END		0
#define OPT_COMMENT	1
#define SHB_USERAPPL	4
#define IF_NAME		2
#define IF_DESCRIPTION	3
#define IF_TSRESOL	9
#define EPB_FLAGS	2
#define EPB_INBOUND	0x1
#define EPB_OUTBOUND	0x2

struct pcapng {
	FILE *f;
	const char *path;
	uint32_t snaplen;
	bool flush;			/* -U: each packet written at once */
	/* the block being built */
	uint8_t *buf;
	size_t len, size;
};

static void put(struct pcapng *p, const void *data, size_t len)
{
	size_t pad = (4 - len % 4) % 4;

	if (p->len + len + pad > p->size) {
		p->size = (p->len + len + pad) * 2 + 256;
		p->buf = realloc(p->buf, p->size);
		if (!p->buf) {
			fprintf(stderr, PROG ": out of memory\n");
			exit(1);
		}
	}
	memcpy(p->buf + p->len, data, len);
	memset(p->buf + p->len + len, 0, pad);
	p->len += len + pad;
}

static void put32(struct pcapng *p, uint32_t v)
{
	put(p, &v, 4);
}

static void put_option(struct pcapng *p, uint16_t code, const void *data,
		       size_t len)
{
	uint16_t h[2] = { code, len };

	put(p, h, 4);
	if (len)
		put(p, data, len);
}

/* Start a block: type, and room for its length. */
static void block_start(struct pcapng *p, uint32_t type)
{
	p->len = 0;
	put32(p, type);
	put32(p, 0);
}

static int block_end(struct pcapng *p)
{
	uint32_t total = p->len + 4;

	put32(p, total);
	memcpy(p->buf + 4, &total, 4);
	if (fwrite(p->buf, 1, p->len, p->f) != p->len) {
		fprintf(stderr, PROG ": %s: %s\n", p->path, strerror(errno));
		return -1;
	}
	return 0;
}

/* The one interface all packets are on. */
static int interface(struct pcapng *p)
{
	static const char desc[] = "magnet-read: packets of every device; each packet's comment names the devices it passed";
	uint16_t linktype[2] = { LINKTYPE_RAW, 0 };
	uint8_t tsresol = 9;	/* nanoseconds */

	block_start(p, BT_IDB);
	put(p, linktype, sizeof(linktype));
	put32(p, p->snaplen);
	put_option(p, IF_NAME, "any", 3);
	put_option(p, IF_DESCRIPTION, desc, strlen(desc));
	put_option(p, IF_TSRESOL, &tsresol, 1);
	put_option(p, OPT_END, NULL, 0);
	return block_end(p);
}

struct pcapng *pcapng_create(const char *path, uint32_t snaplen)
{
	struct pcapng *p = calloc(1, sizeof(*p));
	static const char appl[] = "magnet-read";
	uint16_t version[2] = { 1, 0 };
	int64_t section_len = -1;

	if (!p)
		return NULL;
	p->path = path;
	p->snaplen = snaplen;
	p->f = strcmp(path, "-") ? fopen(path, "w") : stdout;
	if (!p->f) {
		fprintf(stderr, PROG ": %s: %s\n", path, strerror(errno));
		free(p);
		return NULL;
	}
	block_start(p, BT_SHB);
	put32(p, BYTE_ORDER_MAGIC);
	put(p, version, sizeof(version));
	put(p, &section_len, sizeof(section_len));
	put_option(p, SHB_USERAPPL, appl, strlen(appl));
	put_option(p, OPT_END, NULL, 0);
	if (block_end(p) || interface(p)) {
		pcapng_close(p);
		return NULL;
	}
	return p;
}

int pcapng_write(struct pcapng *p, const struct journey *j, int64_t offset,
		 const char *comment)
{
	uint64_t ts = j->item.ts + offset;
	uint32_t flags = j->data_layer >= MAGNET_LAYER_DEV_RECV ? EPB_INBOUND :
			 EPB_OUTBOUND;

	if (!(j->data_flags & MAGNET_PKT_DATA_NET) || !j->caplen)
		return 0;
	block_start(p, BT_EPB);
	put32(p, 0);
	put32(p, ts >> 32);
	put32(p, (uint32_t)ts);
	put32(p, j->caplen);
	put32(p, j->data_len > j->caplen ? j->data_len : j->caplen);
	put(p, j->data, j->caplen);
	put_option(p, EPB_FLAGS, &flags, sizeof(flags));
	if (comment && *comment)
		put_option(p, OPT_COMMENT, comment,
			   strnlen(comment, 65535 - 3));
	put_option(p, OPT_END, NULL, 0);
	if (block_end(p))
		return -1;
	if (p->flush && fflush(p->f)) {
		fprintf(stderr, PROG ": %s: %s\n", p->path, strerror(errno));
		return -1;
	}
	return 1;
}

void pcapng_flush_each(struct pcapng *p)
{
	p->flush = true;
}

int pcapng_close(struct pcapng *p)
{
	int ret = 0;

	if (!p)
		return 0;
	if (fflush(p->f) || (p->f != stdout && fclose(p->f))) {
		fprintf(stderr, PROG ": %s: %s\n", p->path, strerror(errno));
		ret = -1;
	}
	free(p->buf);
	free(p);
	return ret;
}
