// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Fuzz target: libmagnet's side of the line protocol (libmagnet.c): the
 * greeting, snapshots, replies and pushes, whatever bytes the daemon
 * sends. The library is built into this file, so that a client can be
 * made on one end of a socket pair; the input goes in at the other end,
 * which then hangs up, so no call waits.
 *
 * Input: one byte of options, the calls made after the greeting (two
 * bits each, from the low ones: a snapshot, a raw request, a
 * subscription, receiving what was pushed), then the daemon's bytes.
 */
#include "../../libmagnet/libmagnet.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void call(struct magnet_client *c, unsigned int what, unsigned int i)
{
	struct magnet_message m;
	struct magnet_snapshot s;
	char reply[64];

	switch (what) {
	case 0:
		if (!magnet_snapshot(c, &s, 0)) {
			magnet_snapshot_find(&s, "records");
			magnet_snapshot_free(&s);
		}
		break;
	case 1:
		magnet_request(c, i % 2 ? "snapshot" : "release", reply,
			       sizeof(reply));
		break;
	case 2:
		if (i % 2)
			magnet_subscribe_event(c, "udp-send.socket", 1, -1, 7);
		else
			magnet_subscribe_threshold(c, "records.rate", ">=", 1.5);
		magnet_unsubscribe(c, 1);
		break;
	default:
		while (magnet_receive(c, &m, 0) > 0)
			;
		break;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct magnet_client *c;
	struct magnet_message m;
	uint8_t calls = 0;
	int sv[2];
	int bufsize = 1 << 20;

	if (size) {
		calls = *data++;
		size--;
	}
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		abort();
	setsockopt(sv[1], SOL_SOCKET, SO_SNDBUF, &bufsize, sizeof(bufsize));
	while (size) {
		ssize_t n = send(sv[1], data, size, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n <= 0)
			break;	/* more than the socket holds: the rest is cut */
		data += n;
		size -= n;
	}
	/* the daemon has said everything: reads end, requests still go */
	shutdown(sv[1], SHUT_WR);

	c = calloc(1, sizeof(*c));
	if (!c)
		abort();
	c->fd = sv[0];
	c->c_locale = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
	if (c->c_locale == (locale_t)0)
		abort();
	if (!read_greeting(c)) {
		for (unsigned int i = 0; i < 4; i++)
			call(c, (calls >> (2 * i)) & 3, i);
		while (magnet_receive(c, &m, 0) > 0)
			;
	}
	magnet_close(c);
	close(sv[1]);
	return 0;
}
