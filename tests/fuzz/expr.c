// SPDX-License-Identifier: GPL-2.0
/*
 * Fuzz target: magnet-read's filter expression (expr.c), as the words
 * after its options, then matched against made-up packets and records.
 *
 * Input: one byte of options (bit 0: -i lo, bit 1: -i with the first
 * word instead), then the words, separated by NUL bytes as a shell would
 * hand them over.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "magnet-read.h"

#define WORDS_MAX	2048	/* beyond the parser's own bound */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct journey packets[3];
static struct magnet_record records[2];

static void made_up(void)
{
	struct journey *j = &packets[0];

	/* UDP over IPv4 on lo, two hops */
	j->family = AF_INET;
	j->proto = IPPROTO_UDP;
	j->have_addrs = true;
	inet_pton(AF_INET, "127.0.0.1", j->saddr);
	inet_pton(AF_INET, "10.0.0.53", j->daddr);
	j->sport = 40000;
	j->dport = 53;
	j->nhops = 2;
	j->hop[0] = (struct hop){ .cpu = 0, .tgid = 1000, .layer = MAGNET_LAYER_SOCKET };
	j->hop[1] = (struct hop){ .cpu = 1, .tgid = 1000, .layer = MAGNET_LAYER_IP_SEND };
	strcpy(j->hop[1].dev, "lo");
	/* TCP over IPv6 on eth0 */
	j = &packets[1];
	j->family = AF_INET6;
	j->proto = IPPROTO_TCP;
	j->have_addrs = true;
	inet_pton(AF_INET6, "2001:db8::1", j->saddr);
	inet_pton(AF_INET6, "2001:db8::2", j->daddr);
	j->sport = 45000;
	j->dport = 5201;
	j->nhops = 1;
	j->hop[0] = (struct hop){ .cpu = 3, .tgid = 4000, .layer = MAGNET_LAYER_DEV_XMIT };
	strcpy(j->hop[0].dev, "eth0");
	/* packets[2]: no addresses, no hops */
	records[0] = (struct magnet_record){ .cpu = 1, .tgid = 1000 };
	records[1] = (struct magnet_record){ .cpu = 7, .tgid = 4000 };
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static bool ready;
	const char *interface = NULL;
	char *text, *argv[WORDS_MAX], err[512];
	struct expr *e;
	int argc = 0;
	uint8_t opt;

	if (!ready) {
		made_up();
		ready = true;
	}
	if (!size)
		return 0;
	opt = *data++;
	size--;
	/* the words: NUL-separated, the last one ended here */
	text = malloc(size + 1);
	if (!text)
		abort();
	memcpy(text, data, size);
	text[size] = '\0';
	for (size_t i = 0; i <= size && argc < WORDS_MAX; i++) {
		argv[argc++] = text + i;
		i += strlen(text + i);
	}
	if (opt & 1)
		interface = "lo";
	if ((opt & 2) && argc) {
		interface = argv[0];
		memmove(argv, argv + 1, --argc * sizeof(*argv));
	}
	if (!expr_compile(argc, argv, interface, &e, err, sizeof(err))) {
		for (unsigned int i = 0; i < 3; i++)
			expr_match_journey(e, &packets[i]);
		for (unsigned int i = 0; i < 2; i++)
			expr_match_record(e, &records[i]);
		expr_free(e);
	} else if (!err[0] || !memchr(err, '\0', sizeof(err))) {
		abort();	/* a refusal says why */
	}
	free(text);
	return 0;
}
