#!/usr/bin/env python3
"""Check the packet records of a magnet trace file, independently of
magnet-read: its own reader of the trace format and of struct
magnet_packet (include/uapi/linux/magnet.h).

usage: packet_records.py CHECK TRACE
  udp-veth   50 datagrams 10.9.0.1:4242 -> 10.9.0.2:5001, 1000 bytes each
  tcp-veth   30 writes of 200 bytes 10.9.0.1 -> 10.9.0.2:5002
  loopback   20 datagrams 127.0.0.1:4343 -> :5003, 20 ::1:4444 -> :5004

The traffic generators (magnet-test udp-send, tcp-send) start each
datagram or write with its number ("00000007-"), so every record that
holds the data says which one it belongs to. For each, every layer of its
sets must be there, the ids must be consistent (one socket above IP, one
skb from IP down and across to the receiver) and the timestamps must not
decrease from layer to layer. Prints ok/not ok lines and a tally.
"""
import socket
import struct
import sys

RF_PACKET = 1 << 5
PKT_DATA_NET, PKT_DATA_TRANSPORT, PKT_DATA_USER = 1, 2, 4
LAYERS = ["none", "socket", "proto-send", "ip-send", "dev-queue", "dev-xmit",
          "dev-recv", "ip-recv", "proto-recv", "sock-queue", "app"]
SEND = ["socket", "proto-send", "ip-send", "dev-queue", "dev-xmit"]
RECV = ["dev-recv", "ip-recv", "proto-recv", "sock-queue", "app"]

REC = struct.Struct("<IHHIIIIQQ")          # struct magnet_record, 40 bytes
PKT = struct.Struct("<QQIIIHHBBBBHHHH16s16s16sI")  # struct magnet_packet

passed = failed = 0


def check(name, ok, why=""):
    global passed, failed
    if ok:
        passed += 1
        print("ok - " + name)
    else:
        failed += 1
        print("not ok - %s: %s" % (name, why))


def records(path):
    data = open(path, "rb").read()
    if data[:8] != b"MAGNETTR":
        raise SystemExit("%s: not a trace file" % path)
    pos = struct.unpack_from("<I", data, 12)[0]
    while pos + REC.size <= len(data):
        size, event, flags, cpu, tgid, tid, _, rid, ts = REC.unpack_from(data, pos)
        if size < REC.size:
            raise SystemExit("%s: bad record at %d" % (path, pos))
        payload = data[pos + REC.size:pos + size]
        pos += (size + 7) & ~7
        if not flags & RF_PACKET:
            continue
        f = PKT.unpack_from(payload)
        pk = dict(zip(["skb", "sock", "len", "seq", "ifindex", "layer",
                       "caplen", "family", "proto", "tcp_flags", "res",
                       "flags", "sport", "dport", "res2", "saddr", "daddr",
                       "dev", "res3"], f))
        pk["layer"] = LAYERS[pk["layer"]]
        pk["sport"] = socket.ntohs(pk["sport"])
        pk["dport"] = socket.ntohs(pk["dport"])
        pk["dev"] = pk["dev"].rstrip(b"\0").decode()
        fam = socket.AF_INET if pk["family"] == socket.AF_INET else socket.AF_INET6
        n = 4 if fam == socket.AF_INET else 16
        pk["src"] = socket.inet_ntop(fam, pk["saddr"][:n])
        pk["dst"] = socket.inet_ntop(fam, pk["daddr"][:n])
        pk["data"] = payload[PKT.size:PKT.size + pk["caplen"]]
        pk.update(id=rid, ts=ts, cpu=cpu, tgid=tgid, tid=tid)
        yield pk


def number(pk):
    """The datagram's or write's number, from whatever data the record has."""
    d = pk["data"]
    if pk["flags"] & PKT_DATA_USER:
        off = 0
    elif pk["flags"] & PKT_DATA_TRANSPORT:
        off = (d[12] >> 4) * 4 if len(d) > 12 else 999
    elif pk["flags"] & PKT_DATA_NET and d:
        ihl = (d[0] & 15) * 4 if d[0] >> 4 == 4 else 40
        l4 = 8 if pk["proto"] == socket.IPPROTO_UDP else \
            ((d[ihl + 12] >> 4) * 4 if len(d) > ihl + 12 else 999)
        off = ihl + l4
    else:
        return None
    chunk = d[off:off + 9]
    if len(chunk) == 9 and chunk[8:9] == b"-" and chunk[:8].isdigit():
        return int(chunk[:8])
    return None


def journeys(recs, match, count, layers, name, optional=()):
    """Group the records of each numbered packet and check them."""
    by = {}
    for pk in recs:
        if not match(pk):
            continue
        n = number(pk)
        if n is not None:
            by.setdefault(n, []).append(pk)
    check("%s: records for all %d packets (%d)" % (name, count, len(by)),
          sorted(by) == list(range(count)), sorted(by)[:5])
    bad_layers, bad_ids, bad_ts = [], [], []
    for n, rs in sorted(by.items()):
        rs.sort(key=lambda r: LAYERS.index(r["layer"]))
        got = [r["layer"] for r in rs]
        if [g for g in got if g not in optional] != layers:
            bad_layers.append((n, got))
            continue
        sock = {r["sock"] for r in rs if r["layer"] in ("socket",)}
        skbs = {r["skb"] for r in rs if r["skb"]}
        above = [r for r in rs if not r["skb"]]
        if len(skbs) != 1 or any(r["sock"] not in sock for r in above) or \
                any(r["id"] != (r["skb"] or r["sock"]) for r in rs):
            bad_ids.append((n, [(r["layer"], hex(r["skb"]), hex(r["sock"])) for r in rs]))
        ts = [r["ts"] for r in rs]
        if ts != sorted(ts):
            bad_ts.append((n, ts))
    check("%s: every packet at every layer %s%s" % (name, " ".join(layers),
          "".join(" [%s]" % o for o in optional)),
          not bad_layers, bad_layers[:3])
    check("%s: one socket above IP, one skb below, ids = the record ids" % name,
          not bad_ids, bad_ids[:2])
    check("%s: timestamps never decrease along the path" % name,
          not bad_ts, bad_ts[:2])
    return by


def main():
    what, path = sys.argv[1], sys.argv[2]
    recs = list(records(path))
    if what == "udp-veth":
        m = lambda pk: pk["proto"] == socket.IPPROTO_UDP and pk["dport"] == 5001
        by = journeys(recs, m, 50, SEND + RECV, "udp veth")
        one = by.get(7, [])
        devs = {r["layer"]: r["dev"] for r in one}
        check("udp veth: sent on va, received on vb",
              devs.get("dev-xmit") == "va" and devs.get("dev-recv") == "vb", devs)
        ip = [r for r in one if r["layer"] == "ip-send"]
        check("udp veth: IP length 1028 and addresses",
              ip and ip[0]["len"] == 1028 and ip[0]["src"] == "10.9.0.1"
              and ip[0]["dst"] == "10.9.0.2" and ip[0]["sport"] == 4242, ip[:1])
        tg = {r["layer"]: r["tgid"] for r in one}
        check("udp veth: sender and receiver threads",
              tg.get("socket") and tg.get("app") and tg["socket"] != tg["app"], tg)
        full = [r for r in one if r["layer"] == "dev-xmit"]
        check("udp veth: snap length 4000 keeps the whole 1028-byte packet",
              full and full[0]["caplen"] == 1028, full[:1] and full[0]["caplen"])
    elif what == "tcp-veth":
        m = lambda pk: pk["proto"] == socket.IPPROTO_TCP and \
            5002 in (pk["dport"], pk["sport"])
        # A segment the receiver merged into the one before it reaches
        # the application inside that one: app is there or not.
        journeys(recs, m, 30, SEND + RECV[:-1], "tcp veth", optional=("app",))
        app = sum(r["len"] for r in recs if m(r) and r["layer"] == "app")
        check("tcp veth: the application's copies add up to 6000 bytes (%d)" % app,
              app == 6000)
        syn = [r for r in recs if m(r) and r["tcp_flags"] & 2 and r["layer"] == "dev-xmit"]
        check("tcp veth: SYN and SYN-ACK on the wire (%d)" % len(syn), len(syn) == 2)
    elif what == "loopback":
        m4 = lambda pk: pk["proto"] == socket.IPPROTO_UDP and pk["dport"] == 5003 \
            and pk["family"] == socket.AF_INET
        m6 = lambda pk: pk["proto"] == socket.IPPROTO_UDP and pk["dport"] == 5004 \
            and pk["family"] == socket.AF_INET6
        journeys(recs, m4, 20, SEND + RECV, "loopback IPv4")
        journeys(recs, m6, 20, SEND + RECV, "loopback IPv6")
    else:
        raise SystemExit("unknown check " + what)
    print("%d passed, %d failed" % (passed, failed))
    sys.exit(1 if failed else 0)


main()
