#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Write the fuzz targets' seed corpora (tests/fuzz/corpus/TARGET/).

Usage: tests/fuzz/make-corpus.py [DIR]   (default: tests/fuzz/corpus)

The seeds are small valid inputs in the project's own formats: trace
files from tests/host/magnet-tracegen.py and the head of a real capture
(tests/host/data/udp-veth.mtr), the expressions magnet-read's tests use,
conf/magnetd.conf and smaller configurations, web configurations (no
key: those are made at test time), request lines as clients
send them, magnetd's replies and pushes as libmagnet reads them. Each
target's first bytes are its options (see tests/fuzz/TARGET.c). Inputs
that once made a target fail are kept beside them, by hand, under names
starting with "regress-"; this script leaves those alone.
"""
import os
import struct
import subprocess
import sys
import tempfile

TOP = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", ".."))
GEN = os.path.join(TOP, "tests", "host", "magnet-tracegen.py")


def trace(*args):
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "t.mtr")
        subprocess.run([sys.executable, GEN, *args, path], check=True)
        with open(path, "rb") as f:
            return f.read()


def capture_head(records):
    """The header and first @records records of the real capture."""
    with open(os.path.join(TOP, "tests", "host", "data", "udp-veth.mtr"),
              "rb") as f:
        data = f.read()
    size = struct.unpack_from("<I", data, 12)[0]
    off = size
    for _ in range(records):
        off += (struct.unpack_from("<I", data, off)[0] + 7) & ~7
    return data[:off]


def pcapng(t):
    """magnet-read -w's pcapng of trace @t (build/bin/magnet-read)."""
    with tempfile.TemporaryDirectory() as d:
        src, out = os.path.join(d, "t.mtr"), os.path.join(d, "t.pcapng")
        with open(src, "wb") as f:
            f.write(t)
        subprocess.run([os.path.join(TOP, "build", "bin", "magnet-read"),
                        "-r", src, "-w", out], check=True,
                       stderr=subprocess.DEVNULL)
        with open(out, "rb") as f:
            return f.read()


def seeds():
    t = trace()
    yield "trace", "text", b"\x00\x00" + t
    yield "trace", "json-pcapng", b"\x21\x00" + t
    yield "trace", "quiet-hex-filter-names", b"\x0e\x01" + t
    yield "trace", "filter3-snap64-timeout1", b"\xd8\x00" + t
    yield "trace", "v1", b"\x00\x00" + trace("--v1")
    yield "trace", "truncated", b"\x00\x00" + trace("--truncate")
    yield "trace", "garbage", b"\x01\x00" + trace("--garbage")
    yield "trace", "before-epoch", b"\x00\x00" + trace("--offset",
                                                      "-1000500000000")
    yield "trace", "year-2309", b"\x00\x00" + trace(
        "--t0", "9000000000000000000", "--offset", "1703204123000000000")
    yield "trace", "year-2608", b"\x01\x00" + trace(
        "--t0", "18446744000000000000", "--offset", "1703204123000000000")
    yield "trace", "udp-veth-head", b"\x00\x00" + capture_head(12)
    yield "trace", "block", b"\x00\x00" + trace("--block")
    yield "trace", "spans-host", b"\x01\x00" + trace("--spans", "--host",
                                                     "nodeb")
    yield "trace", "pcapng", b"\x00\x00" + pcapng(t)
    yield "trace", "pcapng-json-filter", b"\x19\x00" + pcapng(t)
    # two nodes' files (O_NODES): the first's length, the first, the second
    for name, opts, b in (("nodes", b"\x00\x02", trace("--node", "b")),
                          ("nodes-json-filter", b"\x09\x02",
                           trace("--node", "b", "--skew", "-2500000000")),
                          ("nodes-one-request", b"\x00\x02",
                           trace("--node", "b", "--requests", "1"))):
        a = trace("--node", "a", "--offset-error", "1500")
        yield "trace", name, opts + struct.pack("<I", len(a)) + a + b

    # expr: byte 0 the expression, then family, protocol, TCP flags, data
    # flags, data layer, hops, claimed IP length (2 bytes), hop layers,
    # the kept bytes (see tests/fuzz/expr.c)
    udp4 = bytes.fromhex("4500001c000000004011000" "00a0000010a000002"
                         "9c4013890008000001020304")
    tcp4 = bytes.fromhex("45000028000000004006000" "00a0000010a000002"
                         "9c4013890000303900000000" "5012000000000000")
    for k in range(16):
        yield "expr", "udp4-%02d" % k, bytes([k, 2, 0, 0, 1, 4, 2, 0, 28,
                                              8, 9]) + udp4
        yield "expr", "tcp4-%02d" % k, bytes([k, 2, 1, 0x12, 1, 4, 1, 0, 40,
                                              9]) + tcp4
    yield "expr", "built-v6", bytes([4, 3, 0, 0, 0, 0, 3, 4, 0, 2, 6, 12])
    yield "expr", "transport-tcp", bytes([1, 2, 1, 2, 2, 2, 1, 0, 60, 4]) + tcp4[20:]
    yield "expr", "short-data", bytes([6, 2, 1, 0, 1, 4, 1, 0xff, 0xff, 9, 0x45])

    with open(os.path.join(TOP, "conf", "magnetd.conf"), "rb") as f:
        yield "config", "magnetd.conf", f.read()
    yield "config", "empty", b""
    yield "config", "socket", b"""socket {
\tpath = "/run/m.sock"
\tmode = "0640"
\tmax-clients = 8
\tclient-queue = 0x10000
}
metrics { interval = 2  window = 20 }
"""
    yield "config", "probes", b"""# a set, a probe with filters, a latency
buffer net { size = 1048576  mode = overwrite  size-watermark = 4096 }
probe-set udp-send { buffer = net  snaplen = 64 }
probe ppid {
\tkind = kprobe
\ttarget = "__x64_sys_getppid"
\targs = 2
\tsample-every = 10
\tfilter { action = exclude  cpus = {0, 1}  tgids = {1, 2} }
\tfilter { id-min = 0x10  id-max = 0x1f }
}
latency send { start = udp-send.socket  end = udp-send.dev-xmit  key = sock }
"""
    yield "config", "errors", b"""probe 123 { predef = "nope" }
latency l { start = a  end = a }
/* an unclosed comment
"""

    vector = b"$2y$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW"
    yield "webconfig", "empty", b""
    yield "webconfig", "full", b"""tls_server_config:
  cert_file: /nonexistent/server.crt
  key_file: server.key
  client_auth_type: RequireAndVerifyClientCert
  client_ca_file: ca.crt
  min_version: TLS12
  max_version: TLS13
  prefer_server_cipher_suites: true
http_server_config:
  http2: false
  headers:
    X-Content-Type-Options: nosniff
    X-Frame-Options: sameorigin
    Strict-Transport-Security: max-age=31536000
basic_auth_users:
  prometheus: """ + vector + b"""
  alice: '""" + vector.replace(b"$2y$", b"$2b$") + b"""'
"""
    yield "webconfig", "users", b"basic_auth_users:\n  a: " + vector + \
        b"\n  b: " + vector.replace(b"$2y$", b"$2a$") + b"\n"
    yield "webconfig", "flow", b"{basic_auth_users: {u: '" + vector + \
        b"'}, http_server_config: {headers: {X-XSS-Protection: '1'}}}\n"
    yield "webconfig", "errors", b"""tls_server_config:
  cert: |
    -----BEGIN CERTIFICATE-----
    MIIB
    -----END CERTIFICATE-----
  cipher_suites: [TLS_AES_128_GCM_SHA256]
  min_version: TLS14
basic_auth_users:
  u: secret
  u: again
rate_limit: {interval: 1s, burst: 2}
--- second
"""
    yield "webconfig", "anchors", b"""a: &x {cert_file: c}
tls_server_config: *x
basic_auth_users: !!map {? k : v}
"""

    yield "request", "snapshot", b"\x00snapshot\n"
    yield "request", "subscribe", (
        b"\x00subscribe event udp-send.socket tgid 1000 cpu 1 id 3\n"
        b"subscribe threshold records > 10ms\nunsubscribe 2\n")
    yield "request", "release-attach", b"\x00release\r\nattach\n"
    yield "request", "errors", (
        b"\x00\nbogus\nsubscribe\nsubscribe event nope\n"
        b"subscribe threshold m ~ 1\nunsubscribe x\n\x01\x7f\n")
    yield "request", "not-reading", b"\x01" + b"snapshot\n" * 400

    greet = b"magnetd 1 0.1.0\n"
    snapshot = (b"snapshot 1700000000123456789 4\n"
                b"metric records counter records 1200 records read\n"
                b"metric udp-send.socket.rate gauge events/s 12.5 events per second\n"
                b"metric udp_send.p99 gauge ns 1.5e+06 99th percentile\n"
                b"top udp-send.socket 1 1234 99 iperf worker\n"
                b"end\n")
    pushes = (b"event 1 udp-send.socket 5000000 1 1000 1001 7 88\n"
              b"alert 2 records.rate 1.5 fired\nlost 3\n")
    yield "reply", "snapshots", b"\x00" + greet + pushes + snapshot * 4
    yield "reply", "mixed", b"\xe4" + greet + snapshot + b"ok 1\n" + pushes + \
        b"ok 2\nok\n" + pushes
    yield "reply", "errors", b"\x55" + greet + b"error no metrics yet\n" * 4 + \
        b"snapshot 1 0\nend\n"
    yield "reply", "bad", b"\x00" + greet + b"snapshot 1 1\nmetric a bogus s 1 x\nend\n"

    # pcapvm: bytes that tests/host/pcap-gen.h makes a program and a
    # packet of; any bytes are an input, so random ones (fixed seeds)
    import random
    for n in range(12):
        r = random.Random(n)
        yield "pcapvm", "random-%02d" % n, bytes(r.randrange(256)
                                                for _ in range(64 + 32 * n))


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(TOP, "tests", "fuzz",
                                                             "corpus")
    for target, name, data in seeds():
        d = os.path.join(out, target)
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
