/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tcpdump's filter language, pcap-filter(7), compiled by libpcap as
 * tcpdump -i any compiles it: for LINKTYPE_LINUX_SLL2, whose cooked header
 * (protocol, device index and type, direction) stands in front of the
 * packet from its network header. The one place magnet compiles an
 * expression: magnet-read runs the program in user space, and the filter
 * type "packet" (f_packet.c) gives it to the kernel (filters/pcap.c
 * runs it there on the same view of a packet).
 */
#ifndef MAGNET_PCAPFILTER_H
#define MAGNET_PCAPFILTER_H

#include <stdbool.h>
#include <stddef.h>

#include <pcap/pcap.h>

#define PCAPFILTER_SNAPLEN	262144	/* libpcap's largest snap length */
#define PCAPFILTER_SLL2_LEN	20	/* the cooked header */
/* protochain's loop runs at most this many times (pcapfilter.c) */
#define PCAPFILTER_TRIPS	8

/*
 * Compile @text ("" or blanks: every packet) into @prog (pcap_freecode()
 * it). 0, or -1 with libpcap's message in @err. The program never jumps
 * backwards: protochain's loop is unrolled (PCAPFILTER_TRIPS), so that it
 * ends on every packet and the kernel runs it too.
 */
int pcapfilter_compile(const char *text, struct bpf_program *prog, char *err,
		       size_t errlen);

/*
 * Does @prog read the cooked header's device index or type, direction or
 * link address? (Then its answer differs from layer to layer of one
 * packet's journey.) Its protocol field does not count.
 */
bool pcapfilter_reads_device(const struct bpf_program *prog);

/* Whitespace only, or NULL? */
bool pcapfilter_blank(const char *text);

#endif /* MAGNET_PCAPFILTER_H */
