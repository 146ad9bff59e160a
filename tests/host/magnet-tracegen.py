#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Write a magnet trace file (magnet-read --trace format) of made-up records.

Usage: magnet-tracegen.py [--v1 | --truncate | --garbage | --block | --spans |
                           --samples]
                          [--t0 NS] [--offset NS] [--host NAME] FILE
       magnet-tracegen.py --node a|b [--skew NS] [--requests N]
                          [--offset-error NS] FILE

--t0 sets the CLOCK_MONOTONIC time of the first record (default 1000 s),
--offset the header's wall clock offset (default: the first record at
2024-01-02 14:02:03 UTC).

The records are those the packet probes would log for eight packets
(see SCENARIO below), with other records, a loss and a correlating
filter's JOURNEY record among them, in the order a reader gets them:
each CPU's records in order, the CPUs' not. The layouts follow
include/uapi/linux/magnet.h.

--block writes the blk-io set's records of six block I/Os instead (see
block_scenario below); --spans, an HTTP request's application spans,
packets and block I/O (span_scenario); --samples, a sampler's ticks with
blanks of every kind (sample_scenario). --host NAME writes the capturing
host's name in the header (a 136-byte header); --offset-error NS, how far
its wall clock offset may be off too (a 144-byte header).

--node a and --node b write one node's file each of two nodes' exchange
(node_scenario): node b's wall clock --skew NS ahead of node a's (default
3 s), its first N requests (--requests, default 3) on node b's side.
"""
import socket
import struct
import sys

# struct magnet_record: size, event, flags, cpu, tgid, tid, reserved, id, ts
REC = struct.Struct("<IHHIIIIQQ")
# struct magnet_packet up to its data (offsetof(data) = 96)
PKT = struct.Struct("<QQIIIHHBBBBHHHH16s16s16sI")
assert REC.size == 40 and PKT.size == 96

EVENT_LOSS = 0xFFFE
EVENT_JOURNEY = 0xFFFD
RF_SOFTIRQ, RF_HARDIRQ, RF_PACKET = 0x1, 0x2, 0x20
DATA_NET, DATA_TRANSPORT, DATA_USER, ADDRS = 0x1, 0x2, 0x4, 0x10
(SOCKET, PROTO_SEND, IP_SEND, DEV_QUEUE, DEV_XMIT, DEV_RECV, IP_RECV,
 PROTO_RECV, SOCK_QUEUE, APP) = range(1, 11)
UDP, TCP = 17, 6
AF_INET, AF_INET6 = 2, 10

T0 = 1000 * 10**9                 # CLOCK_MONOTONIC of the first record
WALL0 = 1704204123 * 10**9        # 2024-01-02 14:02:03 UTC
OFFSET = WALL0 - T0


def align8(b):
    return b + bytes(-len(b) % 8)


def record(ts_us, cpu, event, payload, tgid=0, tid=None, flags=0, rid=0):
    size = REC.size + len(payload)
    hdr = REC.pack(size, event, flags, cpu, tgid, tgid if tid is None else tid,
                   0, rid, T0 + int(ts_us * 1000))
    return align8(hdr + payload)


def csum(b):
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def ip_packet(fam, proto, src, dst, l4, ident=0x1234):
    if fam == AF_INET:
        h = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(l4), ident, 0x4000,
                        64, proto, 0, socket.inet_pton(socket.AF_INET, src),
                        socket.inet_pton(socket.AF_INET, dst))
        h = h[:10] + struct.pack("!H", csum(h)) + h[12:]
        return h + l4
    return struct.pack("!IHBB16s16s", 0x60000000, len(l4), proto, 64,
                       socket.inet_pton(socket.AF_INET6, src),
                       socket.inet_pton(socket.AF_INET6, dst)) + l4


def udp(sport, dport, payload):
    return struct.pack("!HHHH", sport, dport, 8 + len(payload), 0) + payload


def tcp(sport, dport, seq, ack, flags, win, payload, options=b""):
    doff = (20 + len(options)) // 4
    return struct.pack("!HHIIBBHHH", sport, dport, seq, ack, doff << 4, flags,
                       win, 0, 0) + options + payload


class Packet:
    """One packet: what its records share."""

    def __init__(self, fam, proto, src, sport, dst, dport, wire, seq=0,
                 tcp_flags=0, user_len=0):
        self.fam, self.proto = fam, proto
        self.src, self.dst = src, dst
        self.sport, self.dport = sport, dport
        self.wire, self.seq, self.tcp_flags = wire, seq, tcp_flags
        self.user_len = user_len

    def addr(self, a):
        if self.fam == AF_INET:
            return socket.inet_pton(socket.AF_INET, a) + bytes(12)
        return socket.inet_pton(socket.AF_INET6, a)

    def rec(self, ts_us, cpu, layer, tgid, skb=0, sock=0, dev=b"", data="net",
            snap=None, rflags=0, length=None, tid=None):
        flags = ADDRS
        if data == "net":
            d, flags = self.wire, flags | DATA_NET
        elif data == "transport":
            ihl = (self.wire[0] & 15) * 4 if self.fam == AF_INET else 40
            d, flags = self.wire[ihl:], flags | DATA_TRANSPORT
        elif data == "user":
            d, flags = b"u" * self.user_len, flags | DATA_USER
        else:
            d = b""
        if snap is not None and len(d) > snap:
            d = d[:snap]
        if length is None:
            length = len(self.wire) if data in ("net", "none") else \
                self.user_len if data == "user" else len(d)
        pkt = PKT.pack(skb, sock, length,
                       self.seq if self.proto == TCP else 0,
                       {b"lo": 1, b"eth0": 2}.get(dev, 0), layer, len(d),
                       self.fam, self.proto, self.tcp_flags, 0, flags,
                       socket.htons(self.sport), socket.htons(self.dport), 0,
                       self.addr(self.src), self.addr(self.dst), dev, 0)
        return record(ts_us, cpu, 200 + layer, pkt + d, tgid, tid,
                      rflags | RF_PACKET, skb or sock)


def scenario():
    """(cpu, record) pairs, each CPU's in time order."""
    recs = []

    def add(cpu, r):
        recs.append((cpu, r))

    # A: UDP over loopback, sent by 1000 on CPU 0, received by 2000 on CPU 1
    a = Packet(AF_INET, UDP, "127.0.0.1", 40000, "127.0.0.1", 5001,
               ip_packet(AF_INET, UDP, "127.0.0.1", "127.0.0.1",
                         udp(40000, 5001, b"a" * 100)), user_len=100)
    S1, S2, K1 = 0xffff888001000000, 0xffff888002000000, 0xffff888100000100
    add(0, a.rec(0, 0, SOCKET, 1000, sock=S1, data="user", snap=16))
    add(0, record(1, 0, 101, b"\1" * 8, 1000, rid=0x11))
    add(0, a.rec(2, 0, PROTO_SEND, 1000, sock=S1, data="user", snap=16))
    add(0, a.rec(5, 0, IP_SEND, 1000, skb=K1, sock=S1))
    add(0, a.rec(7, 0, DEV_QUEUE, 1000, skb=K1, sock=S1, dev=b"lo"))
    add(0, a.rec(8, 0, DEV_XMIT, 1000, skb=K1, sock=S1, dev=b"lo"))
    add(0, a.rec(12, 0, DEV_RECV, 1000, skb=K1, dev=b"lo", rflags=RF_SOFTIRQ))
    add(0, a.rec(14, 0, IP_RECV, 1000, skb=K1, dev=b"lo", rflags=RF_SOFTIRQ))
    add(0, a.rec(16, 0, PROTO_RECV, 1000, skb=K1, dev=b"lo", rflags=RF_SOFTIRQ))
    add(0, a.rec(18, 0, SOCK_QUEUE, 1000, skb=K1, sock=S2, dev=b"lo",
                 rflags=RF_SOFTIRQ))
    add(1, a.rec(40, 1, APP, 2000, skb=K1, sock=S2, dev=b"lo", length=100,
                 tid=2001))

    # B and C: UDP over IPv6 out of eth0 by 3000 on CPU 1; C reuses B's skb
    S3, K2 = 0xffff888003000000, 0xffff888100000200
    for start, payload in ((3, 50), (30, 20)):
        p = Packet(AF_INET6, UDP, "2001:db8::1", 40001, "2001:db8::2", 5002,
                   ip_packet(AF_INET6, UDP, "2001:db8::1", "2001:db8::2",
                             udp(40001, 5002, b"b" * payload)), user_len=payload)
        add(1, p.rec(start, 1, SOCKET, 3000, sock=S3, data="none",
                     length=payload))
        add(1, p.rec(start + 1, 1, PROTO_SEND, 3000, sock=S3, data="none",
                     length=payload))
        add(1, p.rec(start + 3, 1, IP_SEND, 3000, skb=K2, sock=S3))
        add(1, p.rec(start + 6, 1, DEV_QUEUE, 3000, skb=K2, sock=S3, dev=b"eth0"))
        add(1, p.rec(start + 8, 1, DEV_XMIT, 3000, skb=K2, sock=S3, dev=b"eth0"))
        if start == 3:
            add(1, record(10, 1, 102, b"\2" * 16, 3000, flags=RF_HARDIRQ,
                          rid=0x22))
    add(1, record(45, 1, EVENT_LOSS, struct.pack("<QQ", 3, 3), 0, flags=0x10))

    # D and F: TCP segments of one send call by 4000 on CPU 0, out of eth0;
    # tcp's layer has the segment (data from the TCP header), IP the same skb
    T1, C1, C2 = 0xffff888004000000, 0xffff888100000300, 0xffff888100000400
    d = Packet(AF_INET, TCP, "10.0.0.1", 45000, "10.0.0.2", 5201,
               ip_packet(AF_INET, TCP, "10.0.0.1", "10.0.0.2",
                         tcp(45000, 5201, 1, 7001, 0x18, 502, b"d" * 300)),
               seq=1, tcp_flags=0x18, user_len=400)
    add(0, d.rec(50, 0, SOCKET, 4000, sock=T1, data="user", snap=8))
    add(0, d.rec(52, 0, PROTO_SEND, 4000, skb=C1, sock=T1, data="transport",
                 snap=20))
    add(0, d.rec(54, 0, IP_SEND, 4000, skb=C2, sock=T1, snap=60))
    add(0, d.rec(56, 0, DEV_QUEUE, 4000, skb=C2, sock=T1, dev=b"eth0", snap=60))
    add(0, d.rec(57, 0, DEV_XMIT, 4000, skb=C2, sock=T1, dev=b"eth0", snap=60))
    f = Packet(AF_INET, TCP, "10.0.0.1", 45000, "10.0.0.2", 5201,
               ip_packet(AF_INET, TCP, "10.0.0.1", "10.0.0.2",
                         tcp(45000, 5201, 301, 7001, 0x18, 502, b"f" * 100)),
               seq=301, tcp_flags=0x18)
    C3 = 0xffff888100000500
    add(0, f.rec(58, 0, PROTO_SEND, 4000, skb=C3, sock=T1, data="transport",
                 snap=20))
    add(0, f.rec(59, 0, IP_SEND, 4000, skb=C3, sock=T1, snap=60))
    add(0, f.rec(61, 0, DEV_QUEUE, 4000, skb=C3, sock=T1, dev=b"eth0", snap=60))
    add(0, f.rec(62, 0, DEV_XMIT, 4000, skb=C3, sock=T1, dev=b"eth0", snap=60))

    # E: the peer's ACK, received on eth0 in softirq on CPU 1 (tcp options)
    e = Packet(AF_INET, TCP, "10.0.0.2", 5201, "10.0.0.1", 45000,
               ip_packet(AF_INET, TCP, "10.0.0.2", "10.0.0.1",
                         tcp(5201, 45000, 7001, 301, 0x10, 512, b"",
                             b"\1\1\x08\x0a" + bytes(8))),
               seq=7001, tcp_flags=0x10)
    R1 = 0xffff888100000600
    for ts, layer in ((60, DEV_RECV), (63, IP_RECV), (65, PROTO_RECV)):
        add(1, e.rec(ts, 1, layer, 0, skb=R1, dev=b"eth0", rflags=RF_SOFTIRQ))

    # A correlating filter's JOURNEY record holding two records
    inner = record(66, 0, 103, b"\3" * 8, 1000, rid=0x33) + \
        record(68, 0, 104, b"", 1000, rid=0x33)
    add(0, record(70, 0, EVENT_JOURNEY,
                  struct.pack("<IHHQ", 7, 2, 0, 2000) + inner, 0, rid=0x33))

    # G: a second later, a DNS query leaving eth0 without packet bytes
    g = Packet(AF_INET, UDP, "10.0.0.1", 40002, "10.0.0.53", 53,
               ip_packet(AF_INET, UDP, "10.0.0.1", "10.0.0.53",
                         udp(40002, 53, b"q" * 30)), user_len=30)
    K3 = 0xffff888100000700
    add(0, g.rec(1000000, 0, IP_SEND, 1000, skb=K3, data="none"))
    add(0, g.rec(1000004, 0, DEV_XMIT, 1000, skb=K3, dev=b"eth0", data="none"))
    add(1, record(1000010, 1, 101, b"", 5000, rid=0x44))

    # H: received on eth0 on CPU 1, 5 ms between ip and its device (so a
    # --journey-timeout below that splits it)
    h = Packet(AF_INET, UDP, "10.0.0.2", 41000, "10.0.0.1", 9999,
               ip_packet(AF_INET, UDP, "10.0.0.2", "10.0.0.1",
                         udp(41000, 9999, b"h" * 12)))
    R2 = 0xffff888100000800
    for ts, layer in ((2000000, DEV_RECV), (2005000, IP_RECV),
                      (2005002, PROTO_RECV)):
        add(1, h.rec(ts, 1, layer, 0, skb=R2, dev=b"eth0", rflags=RF_SOFTIRQ))
    return recs


def stream():
    """As a reader gets them: each CPU's in order, CPU 0's chunk first."""
    recs = scenario()
    cpu0, cpu1 = ([r for c, r in recs if c == n] for n in (0, 1))
    cpu0.sort(key=lambda r: REC.unpack_from(r)[8])
    cpu1.sort(key=lambda r: REC.unpack_from(r)[8])
    return b"".join(cpu0[:10] + cpu1[:6] + cpu0[10:] + cpu1[6:])


# struct magnet_block
BLK = struct.Struct("<QQQIIIBBHiI")
assert BLK.size == 48
RF_BLOCK = 0x40
BIO, QUEUE, ISSUE, COMPLETE = range(1, 5)
READ, WRITE, FLUSH = 0, 1, 2
SYNC, FUA, PREFLUSH = 0x1, 0x2, 0x4


def block_scenario():
    """Six I/Os on disk 254:0, on two CPUs:
    A  write 64 KiB at 0 by 300: bio, queue, issue, complete (an interrupt)
    B  write 4 KiB at 128 by 300, merged into C's request: bio only
    C  write 8 KiB at 120 by 300: bio, queue, issue, complete of 8 KiB
    D  read 8 KiB at 512 by 301, completed in two parts of 4 KiB
    E  write 4 KiB at 900 by 301 on A's request, reused: bio, issue, complete
    F  a flush without a bio: issue, complete, error -5
    """
    recs = []

    def blk(ts_us, cpu, layer, bio, rq, sector, nbytes, op, flags=0, error=0,
            tgid=0, rflags=0):
        rid = bio if layer == BIO else rq
        pl = BLK.pack(bio, rq, sector, nbytes, 254, 0, layer, op, flags,
                      error, 0)
        recs.append((cpu, record(ts_us, cpu, 7 + layer, pl, tgid=tgid,
                                 flags=RF_BLOCK | rflags, rid=rid)))

    BA, BB, BC, BD, BE = (0xffff888000100000 + i * 0x100 for i in range(5))
    RA, RC, RD, RF = (0xffff888000200000 + i * 0x200 for i in range(4))
    blk(0, 0, BIO, BA, 0, 0, 65536, WRITE, SYNC, tgid=300)
    blk(10, 0, QUEUE, BA, RA, 0, 65536, WRITE, SYNC, tgid=300)
    blk(25, 1, ISSUE, BA, RA, 0, 65536, WRITE, SYNC, tgid=50)
    blk(30, 0, BIO, BC, 0, 120, 8192, WRITE, tgid=300)
    blk(31, 0, QUEUE, BC, RC, 120, 8192, WRITE, tgid=300)
    blk(32, 0, BIO, BB, 0, 128, 4096, WRITE, tgid=300)
    blk(40, 0, ISSUE, BC, RC, 120, 8192, WRITE, tgid=300)
    blk(50, 1, BIO, BD, 0, 512, 8192, READ, tgid=301)
    blk(52, 1, ISSUE, BD, RD, 512, 8192, READ, tgid=301)
    blk(300, 0, COMPLETE, BA, RA, 0, 65536, WRITE, SYNC, rflags=RF_HARDIRQ)
    blk(310, 0, COMPLETE, BC, RC, 120, 8192, WRITE, rflags=RF_HARDIRQ)
    blk(320, 1, COMPLETE, BD, RD, 512, 4096, READ, rflags=RF_HARDIRQ)
    blk(330, 1, COMPLETE, BD, RD, 520, 4096, READ, rflags=RF_HARDIRQ)
    blk(400, 1, BIO, BE, 0, 900, 4096, WRITE, FUA, tgid=301)
    blk(405, 1, ISSUE, BE, RA, 900, 4096, WRITE, FUA, tgid=301)
    blk(450, 0, ISSUE, 0, RF, 0, 0, FLUSH, PREFLUSH, tgid=302)
    blk(500, 1, COMPLETE, BE, RA, 900, 4096, WRITE, FUA, rflags=RF_HARDIRQ)
    blk(600, 0, COMPLETE, 0, RF, 0, 0, FLUSH, PREFLUSH, error=-5,
        rflags=RF_HARDIRQ)
    return recs


def block_stream():
    """As a reader gets them: CPU 1's records first, then CPU 0's."""
    recs = block_scenario()
    return b"".join([r for c, r in recs if c == 1] +
                    [r for c, r in recs if c == 0])


# struct magnet_span up to its data
SPAN = struct.Struct("<BBHHH16s8s8s")
assert SPAN.size == 40
RF_SPAN = 0x80
BEGIN, END, EVENT = 1, 2, 3
# the ids of span_scenario, as hex
TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
ROOT, CHILD = "00f067aa0ba902b7", "00f067aa0ba902c8"
OTHER_TRACE, OTHER = "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331"


def span_rec(ts_us, cpu, typ, trace, sid, parent="0" * 16, name="",
             attrs=(), tgid=400, tid=401, flags=0):
    a = b"".join(x.encode() + b"\0" for x in attrs)
    pl = SPAN.pack(typ, flags, len(name), len(a), 0, bytes.fromhex(trace),
                   bytes.fromhex(sid), bytes.fromhex(parent)) + \
        name.encode() + a
    return record(ts_us, cpu, 90, pl, tgid, tid, RF_SPAN,
                  int.from_bytes(bytes.fromhex(sid), "big"))


def span_scenario():
    """An HTTP request over loopback, in time order:
    - the client, 400/401 ("client" by its root span's service.name):
      root span "request" (ROOT in TRACE), in it span "fetch" (CHILD),
      an event "connected", then a TCP send of a GET carrying
      "traceparent: 00-TRACE-CHILD-01" (journey Q); "fetch" and
      "request" end;
    - the server, 500/501 (no spans of its own): Q received (its app
      layer read by 501), then the reply (R, on the same connection, no
      header) and a 4 KiB block read submitted by 501;
    - a UDP datagram by 600 with no span: a trace of its own;
    - a GET with a header in upper-case hex (not W3C's) by 700;
    - span "lost" begun by 401 and never ended; an end of an unknown
      span, a begin of "fetch" again (by 402).
    """
    recs = []

    def add(cpu, r):
        recs.append((cpu, r))

    add(0, span_rec(0, 0, BEGIN, TRACE, ROOT, name="request",
                    attrs=("service.name=client", "http.method=GET")))
    add(0, span_rec(2, 0, BEGIN, TRACE, CHILD, ROOT, "fetch",
                    ("url.path=/index.html",)))
    add(0, span_rec(3, 0, EVENT, TRACE, CHILD, name="connected",
                    attrs=("net.peer=127.0.0.1",)))
    get = b"GET /index.html HTTP/1.1\r\nHost: b\r\ntraceparent: 00-" + \
        TRACE.encode() + b"-" + CHILD.encode() + b"-01\r\n\r\n"
    q = Packet(AF_INET, TCP, "127.0.0.1", 46000, "127.0.0.1", 80,
               ip_packet(AF_INET, TCP, "127.0.0.1", "127.0.0.1",
                         tcp(46000, 80, 1, 1, 0x18, 512, get)),
               seq=1, tcp_flags=0x18, user_len=len(get))
    CS, SS, KQ = 0xffff888005000000, 0xffff888006000000, 0xffff888100000900
    add(0, q.rec(10, 0, SOCKET, 400, sock=CS, data="user", tid=401))
    add(0, q.rec(12, 0, PROTO_SEND, 400, skb=KQ, sock=CS, tid=401))
    add(0, q.rec(14, 0, IP_SEND, 400, skb=KQ, sock=CS, tid=401))
    add(0, q.rec(16, 0, DEV_QUEUE, 400, skb=KQ, sock=CS, dev=b"lo", tid=401))
    add(0, q.rec(17, 0, DEV_XMIT, 400, skb=KQ, sock=CS, dev=b"lo", tid=401))
    add(0, q.rec(20, 0, DEV_RECV, 400, skb=KQ, dev=b"lo", rflags=RF_SOFTIRQ,
                 tid=401))
    add(0, q.rec(22, 0, IP_RECV, 400, skb=KQ, dev=b"lo", rflags=RF_SOFTIRQ,
                 tid=401))
    add(0, q.rec(24, 0, PROTO_RECV, 400, skb=KQ, dev=b"lo", rflags=RF_SOFTIRQ,
                 tid=401))
    add(0, q.rec(26, 0, SOCK_QUEUE, 400, skb=KQ, sock=SS, dev=b"lo",
                 rflags=RF_SOFTIRQ, tid=401))
    add(1, q.rec(40, 1, APP, 500, skb=KQ, sock=SS, dev=b"lo",
                 length=len(get), tid=501))
    # the reply, and the file read for it
    body = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello"
    r = Packet(AF_INET, TCP, "127.0.0.1", 80, "127.0.0.1", 46000,
               ip_packet(AF_INET, TCP, "127.0.0.1", "127.0.0.1",
                         tcp(80, 46000, 1, 1 + len(get), 0x18, 512, body)),
               seq=1, tcp_flags=0x18, user_len=len(body))
    KR = 0xffff888100000a00
    bio, rq = 0xffff888000300000, 0xffff888000400000
    for ts, layer in ((50, BIO), (52, QUEUE), (54, ISSUE)):
        add(1, record(ts, 1, 7 + layer,
                      BLK.pack(bio, rq if layer > BIO else 0, 2048, 4096, 254,
                               0, layer, READ, 0, 0, 0),
                      500, 501, RF_BLOCK, bio if layer == BIO else rq))
    add(1, record(90, 1, 7 + COMPLETE,
                  BLK.pack(bio, rq, 2048, 4096, 254, 0, COMPLETE, READ, 0, 0,
                           0), 0, 0, RF_BLOCK | RF_HARDIRQ, rq))
    add(1, r.rec(100, 1, SOCKET, 500, sock=SS, data="user", tid=501))
    add(1, r.rec(102, 1, PROTO_SEND, 500, skb=KR, sock=SS, tid=501))
    add(1, r.rec(104, 1, IP_SEND, 500, skb=KR, sock=SS, tid=501))
    add(1, r.rec(106, 1, DEV_QUEUE, 500, skb=KR, sock=SS, dev=b"lo", tid=501))
    add(1, r.rec(107, 1, DEV_XMIT, 500, skb=KR, sock=SS, dev=b"lo", tid=501))
    add(0, span_rec(150, 0, END, TRACE, CHILD, attrs=("http.status=200",)))
    add(0, span_rec(160, 0, END, TRACE, ROOT))
    # a datagram of no span; a header not W3C's
    u = Packet(AF_INET, UDP, "10.0.0.1", 40010, "10.0.0.2", 5300,
               ip_packet(AF_INET, UDP, "10.0.0.1", "10.0.0.2",
                         udp(40010, 5300, b"x" * 20)), user_len=20)
    KU = 0xffff888100000b00
    add(1, u.rec(200, 1, IP_SEND, 600, skb=KU, tid=600))
    add(1, u.rec(204, 1, DEV_XMIT, 600, skb=KU, dev=b"eth0", tid=600))
    bad = b"GET / HTTP/1.1\r\ntraceparent: 00-" + TRACE.upper().encode() + \
        b"-" + CHILD.encode() + b"-01\r\n\r\n"
    w = Packet(AF_INET, TCP, "10.0.0.1", 46001, "10.0.0.2", 80,
               ip_packet(AF_INET, TCP, "10.0.0.1", "10.0.0.2",
                         tcp(46001, 80, 1, 1, 0x18, 512, bad)),
               seq=1, tcp_flags=0x18)
    KW = 0xffff888100000c00
    add(0, w.rec(300, 0, IP_SEND, 700, skb=KW, tid=700))
    add(0, w.rec(302, 0, DEV_XMIT, 700, skb=KW, dev=b"eth0", tid=700))
    # never ended; an end of no span; begun twice
    add(0, span_rec(400, 0, BEGIN, OTHER_TRACE, OTHER, name="lost"))
    add(0, span_rec(410, 0, END, OTHER_TRACE, "1111111111111111"))
    add(1, span_rec(420, 1, BEGIN, OTHER_TRACE, OTHER, name="again", tid=402))
    add(0, record(500, 0, 101, b"", 400, 401, rid=1))
    return recs


def span_stream():
    """As a reader gets them: CPU 0's records first, then CPU 1's."""
    recs = span_scenario()
    return b"".join([r for c, r in recs if c == 0] +
                    [r for c, r in recs if c == 1])


NODE_T0 = {"a": 1000 * 10**9, "b": 7000 * 10**9}   # the nodes' boot times
OUT_US, BACK_US = 80, 120                         # the wire's delays


def node_scenario(node, requests):
    """Node a (10.9.1.1, "nodea") asks node b (10.9.1.2, "nodeb") three
    times over one TCP connection, inside span "request" (TRACE, ROOT) of
    thread 401 (service "client"), each request carrying a traceparent;
    node b's 501 reads each and answers. Each packet leaves one node at
    eth1 and arrives at the other's eth1, OUT_US later going and BACK_US
    coming back: journeys with the sender's layers on one node, the
    receiver's on the other. Times are microseconds of the real clock;
    each node's records are on its own (node_stream)."""
    recs = []

    def add(n, cpu, r):
        if n == node:
            recs.append((cpu, r))

    def send(n, p, t, skb, sock, tgid, tid):
        for dt, layer, dev in ((0, SOCKET, b""), (2, PROTO_SEND, b""),
                               (4, IP_SEND, b""), (6, DEV_QUEUE, b"eth1"),
                               (7, DEV_XMIT, b"eth1")):
            add(n, 0, p.rec(t + dt, 0, layer, tgid, skb=skb, sock=sock,
                            dev=dev, tid=tid,
                            data="user" if layer == SOCKET else "net"))
        return t + 7

    def receive(n, p, t, skb, sock, tgid, tid):
        for dt, layer in ((0, DEV_RECV), (2, IP_RECV), (4, PROTO_RECV),
                          (6, SOCK_QUEUE)):
            add(n, 1, p.rec(t + dt, 1, layer, 0, skb=skb, dev=b"eth1",
                            rflags=RF_SOFTIRQ, tid=0))
        add(n, 1, p.rec(t + 20, 1, APP, tgid, skb=skb, sock=sock,
                        dev=b"eth1", tid=tid, length=p.user_len))

    T = NODE_T0[node]
    global T0
    T0 = T
    add("a", 0, span_rec(0, 0, BEGIN, TRACE, ROOT, name="request",
                         attrs=("service.name=client",)))
    CA, CB = 0xffff888007000000, 0xffff888008000000
    seq_a, seq_b = 1, 1
    for i in range(3):
        s = 1000 * i
        get = b"GET /%d HTTP/1.1\r\ntraceparent: 00-" % i + TRACE.encode() + \
            b"-" + ROOT.encode() + b"-01\r\n\r\n"
        q = Packet(AF_INET, TCP, "10.9.1.1", 47000, "10.9.1.2", 80,
                   ip_packet(AF_INET, TCP, "10.9.1.1", "10.9.1.2",
                             tcp(47000, 80, seq_a, seq_b, 0x18, 512, get),
                             ident=0x100 + i),
                   seq=seq_a, tcp_flags=0x18, user_len=len(get))
        body = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
        r = Packet(AF_INET, TCP, "10.9.1.2", 80, "10.9.1.1", 47000,
                   ip_packet(AF_INET, TCP, "10.9.1.2", "10.9.1.1",
                             tcp(80, 47000, seq_b, seq_a + len(get), 0x18,
                                 512, body), ident=0x200 + i),
                   seq=seq_b, tcp_flags=0x18, user_len=len(body))
        seq_a += len(get)
        seq_b += len(body)
        x = send("a", q, s + 10, 0xffff888100001000 + i * 0x100, CA, 400, 401)
        if i < requests:
            receive("b", q, x + OUT_US, 0xffff888200001000 + i * 0x100, CB,
                    500, 501)
            x = send("b", r, s + 200, 0xffff888200002000 + i * 0x100, CB,
                     500, 501)
            # (the reply's skb is the request's, freed when sent and
            # reused by the driver: another packet, not the same one)
            receive("a", r, x + BACK_US, 0xffff888100001000 + i * 0x100, CA,
                    400, 401)
    add("a", 0, span_rec(3000, 0, END, TRACE, ROOT))
    return recs


SAMPLE = struct.Struct("<QQQQIHHQ")     # struct magnet_sample, its stack after
assert SAMPLE.size == 48
RF_SAMPLE, RF_HARDIRQ_ = 0x100, 0x2
S_USER, S_IDLE, S_SOFTIRQ, S_KTHREAD, S_FIRST = 1, 2, 4, 8, 16
# the kernel's functions, in the kallsyms file the test writes beside
FUNC_A, FUNC_B, IDLE_FN = 0xffffffff81000010, 0xffffffff81001010, 0xffffffff81002010
PID = 4000000                  # a process no host has: "pid 4000000"


def sample_rec(t_ms, prev_ms, tgid, tid, ip, flags=0, steal_ms=0, cpu=0,
               stack=()):
    since = 0 if prev_ms is None else int((t_ms - prev_ms) * 10**6)
    if prev_ms is None:
        flags |= S_FIRST
    pl = SAMPLE.pack(since, steal_ms * 10**6, ip, 0, flags, len(stack), 0,
                     10**6) + b"".join(struct.pack("<Q", a) for a in stack)
    return record(t_ms * 1000, cpu, 70, pl, tgid, tid, RF_SAMPLE | RF_HARDIRQ_,
                  ip)


def sample_scenario():
    """Ticks of 1 ms on CPU 0 (kernel mode, so that the functions are named
    from the test's kallsyms): process PID, threads PID and PID+1, in
    func_a and func_b, and the idle task. Blanks (a tick more than a
    period and the margin, 100 us, late): 4 ms within func_a of thread
    PID (1 ms of it reported as steal), 2 ms from func_a to func_b of
    that thread, 2 ms from thread PID+1 to thread PID in func_b, 3 ms
    next to the idle task (a halted CPU, not steal). CPU 1's one tick is
    its first, after 10 s of nothing: no blank. A second probe's tick
    (event 71) is left out."""
    t = [(0, None, PID, PID, FUNC_A), (1, 0, PID, PID, FUNC_A),
         (2, 1, PID, PID, FUNC_A)]
    recs = [(0, sample_rec(*a, stack=(FUNC_B,))) for a in t]
    recs.append((0, sample_rec(7, 2, PID, PID, FUNC_A, steal_ms=1)))
    recs.append((0, sample_rec(8, 7, PID, PID, FUNC_A)))
    recs.append((0, sample_rec(11, 8, PID, PID, FUNC_B)))
    recs.append((0, sample_rec(12, 11, PID, PID + 1, FUNC_B)))
    recs.append((0, sample_rec(15, 12, PID, PID, FUNC_B)))
    recs.append((0, sample_rec(16, 15, 0, 0, IDLE_FN, S_IDLE | S_KTHREAD)))
    recs.append((0, sample_rec(20, 16, 0, 0, IDLE_FN, S_IDLE | S_KTHREAD)))
    recs.append((0, sample_rec(21, 20, PID, PID, FUNC_A)))
    recs.append((1, sample_rec(10000, None, PID, PID + 1, FUNC_B, cpu=1)))
    other = bytearray(sample_rec(5, 4, PID, PID, FUNC_B))
    struct.pack_into("<H", other, 4, 71)
    recs.append((0, bytes(other)))
    recs.sort(key=lambda r: struct.unpack_from("<Q", r[1], 32)[0])
    return recs


HOST = None
OFFSET_ERROR = None


def header_v2():
    if HOST is None:
        return struct.pack("<8sIIIIqII32s", b"MAGNETTR", 2, 72, 1, 40, OFFSET,
                           262144, 0, b"default")
    if OFFSET_ERROR is None:
        return struct.pack("<8sIIIIqII32s64s", b"MAGNETTR", 2, 136, 1, 40,
                           OFFSET, 262144, 0, b"default", HOST.encode())
    return struct.pack("<8sIIIIqII32s64sQ", b"MAGNETTR", 2, 144, 1, 40,
                       OFFSET, 262144, 0, b"default", HOST.encode(),
                       OFFSET_ERROR)


def main():
    global T0, OFFSET, HOST, OFFSET_ERROR
    args = sys.argv[1:]
    opts = {}
    mode = ""
    offset = None
    while len(args) > 1:
        if args[0] in ("--t0", "--offset", "--host", "--offset-error") \
                and len(args) > 2:
            if args[0] == "--t0":
                T0 = int(args[1])
            elif args[0] == "--offset-error":
                OFFSET_ERROR = int(args[1])
            elif args[0] == "--host":
                HOST = args[1]
            else:
                offset = int(args[1])
            args = args[2:]
        elif args[0] in ("--node", "--skew", "--requests") and len(args) > 2:
            opts[args[0]] = args[1]
            args = args[2:]
        elif args[0] in ("--v1", "--truncate", "--garbage", "--block",
                         "--spans", "--samples"):
            mode, args = args[0], args[1:]
        else:
            sys.exit(__doc__)
    if len(args) != 1:
        sys.exit(__doc__)
    path = args[0]
    if "--node" in opts:
        node = opts["--node"]
        if node not in ("a", "b"):
            sys.exit(__doc__)
        recs = node_scenario(node, int(opts.get("--requests", 3)))
        skew = int(opts.get("--skew", 3 * 10**9)) if node == "b" else 0
        OFFSET = WALL0 - NODE_T0[node] + skew
        HOST = "node" + node
        data = b"".join([r for c, r in recs if c == 0] +
                        [r for c, r in recs if c == 1])
        with open(path, "wb") as f:
            f.write(header_v2() + data)
        return
    OFFSET = WALL0 - T0 if offset is None else offset
    data = block_stream() if mode == "--block" else \
        span_stream() if mode == "--spans" else \
        b"".join(r for c, r in sample_scenario()) if mode == "--samples" \
        else stream()
    if mode == "--v1":
        out = struct.pack("<8sII", b"MAGNETTR", 1, 40) + data
    elif mode == "--truncate":
        out = header_v2() + data[:-20]
    elif mode == "--garbage":
        out = header_v2() + data[:200] + struct.pack("<I", 3) + data[204:]
    else:
        out = header_v2() + data
    with open(path, "wb") as f:
        f.write(out)


if __name__ == "__main__":
    main()
