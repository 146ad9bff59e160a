// SPDX-License-Identifier: GPL-2.0
/*
 * pcap-filter(7) expressions through libpcap (see pcapfilter.h).
 */
#include <stdio.h>

#include "pcapfilter.h"

bool pcapfilter_blank(const char *s)
{
	for (; s && *s; s++)
		if (*s != ' ' && *s != '\t' && *s != '\n' && *s != '\r')
			return false;
	return true;
}

int pcapfilter_compile(const char *text, struct bpf_program *prog, char *err,
		       size_t errlen)
{
	pcap_t *p = pcap_open_dead(DLT_LINUX_SLL2, PCAPFILTER_SNAPLEN);

	if (!p) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (pcap_compile(p, prog, pcapfilter_blank(text) ? "" : text, 1,
			 PCAP_NETMASK_UNKNOWN) < 0) {
		snprintf(err, errlen, "%s", pcap_geterr(p));
		pcap_close(p);
		return -1;
	}
	pcap_close(p);
	return 0;
}

bool pcapfilter_reads_device(const struct bpf_program *prog)
{
	for (unsigned int i = 0; i < prog->bf_len; i++) {
		const struct bpf_insn *in = &prog->bf_insns[i];
		unsigned int size;

		switch (BPF_CLASS(in->code)) {
		case BPF_LD:
		case BPF_LDX:
			break;
		default:
			continue;
		}
		/*
		 * An indirect load adds X, an offset into the packet (its IP
		 * header's length): libpcap's own k is past the cooked
		 * header then.
		 */
		if (BPF_MODE(in->code) != BPF_ABS &&
		    BPF_MODE(in->code) != BPF_MSH &&
		    BPF_MODE(in->code) != BPF_IND)
			continue;
		size = BPF_SIZE(in->code) == BPF_W ? 4 :
		       BPF_SIZE(in->code) == BPF_H ? 2 : 1;
		/* bytes 0 and 1 are the protocol */
		if (in->k < PCAPFILTER_SLL2_LEN && in->k + size > 2)
			return true;
	}
	return false;
}
