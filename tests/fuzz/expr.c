// SPDX-License-Identifier: GPL-2.0
/*
 * Fuzz target: magnet-read's filter (expr.c): what a packet looks like to
 * libpcap's interpreter, built from a journey whose every field comes from
 * the input: the kept bytes (any length, any flags), the lengths the
 * records claim, the layers and devices. The expressions are a fixed set
 * that reads every part of what is built (lengths, byte and bit access
 * into IP, UDP and TCP, the cooked header's direction and device index):
 * the language's compiler is libpcap's, not this project's, and compiling
 * a host name would ask the resolver.
 *
 * Input: byte 0 picks the expression; bytes 1-8: family (bit 0: IPv6),
 * protocol (bit 0: TCP), TCP flags, the data's flags (MAGNET_PKT_DATA_*),
 * the data's layer, the number of hops (up to MAGNET_LAYER_COUNT), the
 * claimed IP length (2 bytes); then one byte per hop (its layer; odd:
 * on device "lo" with index 1); the rest is the kept bytes.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "magnet-read.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const exprs[] = {
	"udp port 5001",
	"tcp[tcpflags] & (tcp-syn|tcp-ack) != 0",
	"greater 1000 or less 60",
	"ip[8] = 64 and ip[6:2] & 0x1fff = 0",
	"ip6 and ip6[6] = 17",
	"udp[8:4] = 0x01020304",
	"tcp[((tcp[12:1] & 0xf0) >> 2):4] = 0x47455420",
	"inbound and ifindex 1",
	"outbound",
	"ip6 and tcp dst portrange 5000-5300",
	"net 10.0.0.0/8 and not src host 10.0.0.1",
	"ip[0] & 0xf != 5",
	"len >= 100 and len <= 1500",
	"icmp or icmp6 or proto 132",
	"arp or ether proto 0x86dd",
	"ip6 protochain 6",
};
#define NEXPRS	(sizeof(exprs) / sizeof(exprs[0]))

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct expr *compiled[NEXPRS];
	static const uint32_t tgid = 1000;
	static const uint8_t cpus = 0x2;
	struct expr_select sel = { .tgids = &tgid, .ntgids = 1,
				   .cpus = &cpus, .cpus_len = 1 };
	static struct expr *selecting;
	struct journey j = {};
	struct magnet_record r = {};
	char err[512];
	unsigned int k;

	if (!compiled[0]) {
		for (k = 0; k < NEXPRS; k++)
			if (expr_compile(exprs[k], NULL, &compiled[k], err,
					 sizeof(err)))
				abort();	/* each is valid pcap-filter */
		if (expr_compile("udp", &sel, &selecting, err, sizeof(err)))
			abort();
	}
	if (size < 9)
		return 0;
	k = data[0] % NEXPRS;
	j.family = data[1] & 1 ? AF_INET6 : AF_INET;
	j.proto = data[2] & 1 ? IPPROTO_TCP : IPPROTO_UDP;
	j.tcp_flags = data[3];
	j.data_flags = data[4];
	j.data_layer = data[5];
	j.nhops = data[6] % (MAGNET_LAYER_COUNT + 1);
	j.data_len = data[7] << 8 | data[8];
	j.have_addrs = data[1] & 2;
	data += 9;
	size -= 9;
	inet_pton(j.family, j.family == AF_INET6 ? "2001:db8::1" : "10.0.0.1",
		  j.saddr);
	inet_pton(j.family, j.family == AF_INET6 ? "2001:db8::2" : "10.0.0.2",
		  j.daddr);
	j.sport = 40000;
	j.dport = 5001;
	j.seq = 12345;
	for (unsigned int i = 0; i < j.nhops; i++) {
		uint8_t b = i < size ? data[i] : 0;

		j.hop[i].layer = b >> 1;
		j.hop[i].len = j.data_len;
		j.hop[i].tgid = 1000;
		j.hop[i].cpu = b & 3;
		if (b & 1) {
			j.hop[i].ifindex = 1;
			strcpy(j.hop[i].dev, "lo");
		}
	}
	if (j.nhops < size) {
		data += j.nhops;
		size -= j.nhops;
	} else {
		size = 0;
	}
	/* the kept bytes, in their own allocation, so that ASan sees over-reads */
	j.caplen = size;
	j.data = size ? malloc(size) : NULL;
	if (size && !j.data)
		abort();
	if (size)
		memcpy(j.data, data, size);
	expr_match_journey(compiled[k], &j);
	expr_match_journey(selecting, &j);
	r.tgid = 1000;
	r.cpu = j.nhops;
	expr_match_record(selecting, &r);
	free(j.data);
	return 0;
}
