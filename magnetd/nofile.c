// SPDX-License-Identifier: GPL-2.0
/*
 * magnetd's descriptors. Each client of the Unix socket holds one, and so
 * does each HTTP connection (max-clients of them, and the spare one that
 * a newcomer takes while another makes room, http.c); magnetd keeps
 * DESCRIPTORS_OWN more for itself (its loop, netlink and listening
 * sockets, a snapshot's /proc/PID/comm, a reload's file ...) and one per
 * buffer it reads. At start, nofile_fit() raises the soft RLIMIT_NOFILE
 * to what the configuration needs, up to the hard limit (systemd gives a
 * service 1024 unless its unit says more; magnetd.service says enough
 * for the largest max-clients). Under a hard limit too low for every
 * client, max-clients is lowered, and the log says so: the HTTP endpoint
 * gets at most half of what is left, the socket the rest. So clients
 * cannot run magnetd out of descriptors, and the socket's clients are
 * served however many HTTP connections come (if descriptors run out some
 * other way, the socket's accept() backs off, server.c).
 */
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#include "magnetd.h"

#define DESCRIPTORS_OWN	32	/* about 12 open, a few for a moment */

int nofile_fit(unsigned int nbuffers, struct config_socket *cs,
		    struct config_prometheus *cp)
{
	rlim_t own = DESCRIPTORS_OWN + nbuffers + 1;	/* "default" too */
	rlim_t http = cp->enable ? cp->max_clients + 1 : 0;
	rlim_t need = own + cs->max_clients + http, left, sock;
	struct rlimit rl;
	char sock_said[64] = "", http_said[64] = "";

	if (getrlimit(RLIMIT_NOFILE, &rl))
		return 0;
	if (rl.rlim_cur < need && rl.rlim_cur < rl.rlim_max) {
		struct rlimit raised = {
			.rlim_cur = need < rl.rlim_max ? need : rl.rlim_max,
			.rlim_max = rl.rlim_max,
		};

		if (setrlimit(RLIMIT_NOFILE, &raised) == 0) {
			log_info("descriptors: soft limit raised from %llu to %llu (%llu needed)",
				 (unsigned long long)rl.rlim_cur,
				 (unsigned long long)raised.rlim_cur,
				 (unsigned long long)need);
			rl = raised;
		}
	}
	if (rl.rlim_cur >= need)
		return 0;
	/* Under the hard limit: serve fewer, and say so. */
	left = rl.rlim_cur > own ? rl.rlim_cur - own : 0;
	if (left < (cp->enable ? 3 : 1)) {
		log_error("descriptors: the limit is %llu (RLIMIT_NOFILE), too few for one client (magnetd keeps %llu for itself); raise LimitNOFILE",
			  (unsigned long long)rl.rlim_cur,
			  (unsigned long long)own);
		return -1;
	}
	if (http > left / 2)
		http = left / 2 > 2 ? left / 2 : 2;
	sock = left - http < cs->max_clients ? left - http : cs->max_clients;
	if (sock < cs->max_clients)
		snprintf(sock_said, sizeof(sock_said),
			 "socket max-clients %u lowered to %llu",
			 cs->max_clients, (unsigned long long)sock);
	if (cp->enable && http - 1 < cp->max_clients)
		snprintf(http_said, sizeof(http_said),
			 "prometheus max-clients %u lowered to %llu",
			 cp->max_clients, (unsigned long long)(http - 1));
	log_warn("descriptors: the limit is %llu (RLIMIT_NOFILE, hard limit %llu), the configuration needs %llu: %s%s%s; raise LimitNOFILE or lower max-clients",
		 (unsigned long long)rl.rlim_cur,
		 (unsigned long long)rl.rlim_max, (unsigned long long)need,
		 sock_said, sock_said[0] && http_said[0] ? ", " : "",
		 http_said);
	cs->max_clients = sock;
	if (cp->enable)
		cp->max_clients = http - 1;
	return 0;
}
