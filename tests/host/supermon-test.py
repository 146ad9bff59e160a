#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Black-box test of magnet-supermon, the Supermon data source.

Usage: supermon-test.py TOP

TOP is the source tree with a build (TOP/build/bin/magnetd, magnetctl and
magnet-supermon). The test starts magnetd (with its own configuration,
without the magnet module: its metrics are then all 0) and magnet-supermon
on a free loopback port, talks to the server over TCP as Supermon's mon and
its clients do, misbehaves as bad clients do, and checks every answer
against the protocol (the contract, not the server's code): requests "S",
"#" and "MASKS", errors, the schema's shape and its agreement with
magnetd's own snapshot (read with magnetctl), the files of -o, magnetd
going away and coming back, the limits (-c, -t), SIGTERM and the options.

Replies are parsed with python3-sexpdata. It prints "ok - NAME" or
"not ok - NAME: WHY" for each check, then "N passed, M failed", and exits
0 only if no check failed.
"""
import json
import math
import os
import random
import re
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

import sexpdata
from sexpdata import Quoted, Symbol

HOST = "127.0.0.1"
NODE = "testnode"
NODE_ADDR = "10.0.4.1"
NODE_HEX = 0x0104000A      # 10.0.4.1 as a little-endian machine's u32
REFRESH = 1                # -r
MAX_CLIENTS = 8            # -c
TIMEOUT = 2                # -t
PROMPT = 2.0               # seconds another client may wait for its "S"
RSS_LIMIT_KB = 50 * 1024

MAGNETD_FIELDS = ["health", "uptime", "clients", "pushes_dropped",
                  "clients_dropped", "reloads", "attaches", "records",
                  "records_lost", "records_unknown"]
EVENT_FIELDS = ["count", "rate", "bytes", "byte_rate"]
LATENCY_FIELDS = ["count", "min", "mean", "p50", "p90", "p99", "max",
                  "pending", "expired", "overflow"]
TOTALS = {"records", "records.lost", "records.unknown"}
PER_CPU = re.compile(r"\.cpu\d+\.count$")

MAGNETD_CONF = """socket {
	path = "%s"
}
metrics {
	interval = 1
}
probe exits {
	predef = "process_exit"
}
probe forks {
	predef = "process_fork"
}
latency lifetime {
	start = "forks"
	end = "exits"
	key = id
}
"""


class Fail(Exception):
    """A check's failure, with why."""


class Closed(Exception):
    """The server closed the connection."""


def expect(cond, why):
    if not cond:
        raise Fail(why)


# ---------------------------------------------------------------- results

passed = 0
failed = 0


def report(name, ok, why=""):
    global passed, failed
    if ok:
        passed += 1
        print("ok - %s" % name, flush=True)
    else:
        failed += 1
        print("not ok - %s: %s" % (name, why), flush=True)


def check(name, fn, *args):
    """Run fn(*args): a check passes unless it raises. Returns fn's value,
    or None when it failed."""
    try:
        value = fn(*args)
    except Fail as e:
        report(name, False, str(e))
        return None
    except Exception as e:     # never crash on an unexpected reply
        report(name, False, "%s: %s" % (type(e).__name__, e))
        return None
    report(name, True)
    return value if value is not None else True


# ------------------------------------------------------------- the client

class Client:
    """One TCP connection to magnet-supermon: requests are lines, each reply
    is one s-expression followed by an empty line."""

    def __init__(self, port, timeout=5.0):
        self.sock = socket.create_connection((HOST, port), timeout=timeout)
        self.buf = b""

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def send(self, data):
        if isinstance(data, str):
            data = data.encode()
        self.sock.sendall(data)

    def _fill(self, deadline):
        """Read more into buf before deadline: False on timeout; raises
        Closed at end of file or on a reset."""
        left = max(0.0, deadline - time.monotonic())
        r, _, _ = select.select([self.sock], [], [], left)
        if not r:
            return False
        try:
            data = self.sock.recv(65536)
        except (ConnectionResetError, ConnectionAbortedError) as e:
            raise Closed("connection reset (%s)" % e)
        if not data:
            raise Closed("connection closed by the server")
        self.buf += data
        return True

    def reply(self, timeout=3.0):
        """The next reply's text, without its terminating empty line."""
        deadline = time.monotonic() + timeout
        while b"\n\n" not in self.buf:
            try:
                if not self._fill(deadline):
                    raise Fail("no complete reply within %.1f s (got %r)"
                               % (timeout, self.buf[:200]))
            except Closed as e:
                raise Closed("%s before a complete reply (got %r)"
                             % (e, self.buf[:200]))
        text, self.buf = self.buf.split(b"\n\n", 1)
        return text.decode("latin-1")

    def request(self, line, timeout=3.0):
        """Send line (a newline is added) and parse its reply."""
        self.send(line + "\n")
        return parse(self.reply(timeout))

    def closed_within(self, timeout):
        """Seconds until the server closes the connection (the data it
        sends before is skipped), or None if it stays open that long."""
        start = time.monotonic()
        deadline = start + timeout
        try:
            while self._fill(deadline) and time.monotonic() < deadline:
                pass
        except Closed:
            return time.monotonic() - start
        return None

    def pending(self, timeout=0.0):
        """Whatever the server has sent within timeout: (bytes, closed)."""
        deadline = time.monotonic() + timeout
        closed = False
        try:
            while self._fill(deadline):
                if timeout == 0:
                    break
        except Closed:
            closed = True
        return self.buf, closed


def parse(text):
    """One s-expression, or Fail."""
    try:
        return sexpdata.loads(text)
    except Exception as e:
        raise Fail("unparseable reply %r (%s: %s)"
                   % (text[:300], type(e).__name__, e))


def name(x):
    """A symbol's text, or Fail."""
    expect(isinstance(x, Symbol), "%r is not a symbol" % (x,))
    return x.value()


def hexval(x):
    """A hexadecimal token 0x...'s value, or Fail."""
    expect(isinstance(x, Symbol)
           and re.fullmatch(r"0x[0-9a-fA-F]+", x.value()),
           "%r is not a hexadecimal number 0x..." % (x,))
    return int(x.value(), 16)


def uint(x):
    expect(isinstance(x, int) and not isinstance(x, bool) and x >= 0,
           "%r is not an unsigned decimal integer" % (x,))
    return x


def is_error(reply):
    return (isinstance(reply, list) and len(reply) == 2
            and isinstance(reply[0], Symbol) and reply[0].value() == "error"
            and isinstance(reply[1], str))


def expect_error(reply, message=None):
    expect(is_error(reply), "expected (error \"...\"), got %r" % (reply,))
    expect(reply[1], "empty error message")
    if message is not None:
        expect(reply[1] == message,
               "expected (error %r), got %r" % (message, reply))


# ------------------------------------------------------ schema and sample

def schema_of(reply):
    """The parsed "#" reply as [(category, [fields])], or Fail."""
    expect(isinstance(reply, list) and reply,
           "the schema is not a non-empty list: %r" % (reply,))
    cats = []
    for c in reply:
        expect(isinstance(c, list) and len(c) >= 3,
               "category %r is not (NAME 'U FIELD...)" % (c,))
        expect(c[1] == Quoted(Symbol("U")),
               "category %r: second item is not 'U" % (c,))
        cats.append((name(c[0]), [name(f) for f in c[2:]]))
    names = [n for n, _ in cats]
    expect(len(set(names)) == len(names), "categories repeat: %s" % names)
    for n, fields in cats:
        expect(len(set(fields)) == len(fields),
               "category %s: fields repeat: %s" % (n, fields))
    return cats


def get_schema(port):
    with Client(port) as c:
        return schema_of(c.request("#"))


def sample_of(reply, schema, indices=None):
    """Check a parsed "S" reply against the schema, for the categories of
    indices (default all): {category: {field: value}}, the timestamp
    included (from hex). Fail on any departure from the protocol."""
    if indices is None:
        indices = range(len(schema))
    indices = list(indices)
    expect(isinstance(reply, list) and len(reply) == 1,
           "sample is not ((NAME (CATEGORY...))): %r" % (reply,))
    node = reply[0]
    expect(isinstance(node, list) and len(node) == 2,
           "node is not (NAME (CATEGORY...)): %r" % (node,))
    expect(name(node[0]) == NODE, "node name %r, not %s" % (node[0], NODE))
    cats = node[1]
    expect(isinstance(cats, list), "categories are not a list: %r" % (cats,))
    got = [name(c[0]) if isinstance(c, list) and c else repr(c) for c in cats]
    want = [schema[i][0] for i in indices]
    expect(got == want, "categories %s, expected %s" % (got, want))
    values = {}
    for i, c in zip(indices, cats):
        cname, fields = schema[i]
        expect(len(c) >= 3, "category %s too short: %r" % (cname, c))
        expect(isinstance(c[1], list) and len(c[1]) == 2
               and name(c[1][0]) == "mask",
               "%s: second item is not (mask 0xBIT): %r" % (cname, c[1]))
        expect(hexval(c[1][1]) == 1 << i, "%s: mask %s, expected %#x"
               % (cname, c[1][1], 1 << i))
        expect(isinstance(c[2], list) and len(c[2]) == 2
               and name(c[2][0]) == "node",
               "%s: third item is not (node 0xADDR): %r" % (cname, c[2]))
        expect(hexval(c[2][1]) == NODE_HEX, "%s: node %s, expected %#x"
               % (cname, c[2][1], NODE_HEX))
        pairs = c[3:]
        expect(all(isinstance(p, list) and len(p) == 2 for p in pairs),
               "%s: fields are not (FIELD VALUE) pairs: %r" % (cname, pairs))
        fnames = [name(p[0]) for p in pairs]
        expect(fnames == fields, "%s: fields %s, schema says %s"
               % (cname, fnames, fields))
        vals = {}
        for f, p in zip(fields, pairs):
            if cname == "time" and f == "timestamp":
                vals[f] = hexval(p[1])
            else:
                vals[f] = uint(p[1])
        values[cname] = vals
    return values


def get_sample(port, schema, line="S", indices=None):
    with Client(port) as c:
        return sample_of(c.request(line), schema, indices)


def served_within(port, limit=PROMPT):
    """A new client's "S" is answered with a sample within limit s:
    returns the seconds it took, or Fail."""
    start = time.monotonic()
    try:
        with Client(port, timeout=limit) as c:
            reply = c.request("S", timeout=limit)
    except (OSError, Closed) as e:
        raise Fail("a new client's \"S\" failed: %s" % e)
    took = time.monotonic() - start
    expect(isinstance(reply, list) and len(reply) == 1
           and isinstance(reply[0], list) and reply[0]
           and reply[0][0] == Symbol(NODE),
           "a new client's \"S\" got %r" % (reply,))
    expect(took < limit, "answered after %.2f s" % took)
    return took


# ------------------------------------------------------------ processes

def free_port():
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def port_open(port):
    try:
        socket.create_connection((HOST, port), timeout=1).close()
        return True
    except OSError:
        return False


def rss_kb(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise Fail("no VmRSS for pid %d" % pid)


def stop(proc, sig=signal.SIGTERM, timeout=5.0):
    """Signal proc and wait for it: its exit status, or None if it had to
    be killed."""
    if proc is None or proc.poll() is not None:
        return proc.poll() if proc else None
    proc.send_signal(sig)
    try:
        return proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        return None


class Env:
    def __init__(self, top):
        self.bin = os.path.join(top, "build", "bin")
        self.tmp = tempfile.mkdtemp(prefix="supermon-test.")
        self.sock = os.path.join(self.tmp, "md.sock")
        self.conf = os.path.join(self.tmp, "magnetd.conf")
        self.out = os.path.join(self.tmp, "out")
        os.mkdir(self.out)
        with open(self.conf, "w") as f:
            f.write(MAGNETD_CONF % self.sock)
        self.port = free_port()
        self.magnetd = None
        self.server = None
        self.server_err = os.path.join(self.tmp, "supermon.err")

    def start_magnetd(self):
        """Start magnetd and wait for its socket to answer."""
        log = open(os.path.join(self.tmp, "magnetd.err"), "a")
        self.magnetd = subprocess.Popen(
            [os.path.join(self.bin, "magnetd"), "-c", self.conf],
            stdin=subprocess.DEVNULL, stdout=log, stderr=log)
        log.close()
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if self.magnetd.poll() is not None:
                raise Fail("magnetd exited with %d: %s" % (
                    self.magnetd.returncode, self.log("magnetd.err")))
            try:
                return self.snapshot()
            except Fail:
                time.sleep(0.1)
        raise Fail("magnetd does not answer on %s" % self.sock)

    def log(self, f):
        try:
            with open(os.path.join(self.tmp, f), errors="replace") as fd:
                return fd.read()[-2000:]
        except OSError:
            return ""

    def snapshot(self):
        """magnetd's metrics, from magnetctl: [(name, type, value)] in
        magnetd's order."""
        r = subprocess.run([os.path.join(self.bin, "magnetctl"), "-j",
                            "daemon", "snapshot", "socket", self.sock],
                           stdin=subprocess.DEVNULL, capture_output=True,
                           timeout=10)
        if r.returncode != 0:
            raise Fail("magnetctl daemon snapshot: exit %d: %s"
                       % (r.returncode, r.stderr.decode(errors="replace")))
        try:
            data = json.loads(r.stdout)
            return [(m["name"], m["type"], m["value"])
                    for m in data["metrics"]]
        except (ValueError, KeyError, TypeError) as e:
            raise Fail("magnetctl's snapshot does not parse: %s" % e)

    def server_args(self):
        return [os.path.join(self.bin, "magnet-supermon"), "-l", HOST,
                "-p", str(self.port), "-s", self.sock, "-r", str(REFRESH),
                "-n", NODE, "-a", NODE_ADDR, "-o", self.out,
                "-c", str(MAX_CLIENTS), "-t", str(TIMEOUT)]

    def start_server(self):
        err = open(self.server_err, "w")
        self.server = subprocess.Popen(self.server_args(),
                                       stdin=subprocess.DEVNULL,
                                       stdout=subprocess.DEVNULL, stderr=err)
        err.close()
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if self.server.poll() is not None:
                raise Fail("magnet-supermon exited with %d: %s" % (
                    self.server.returncode, self.log("supermon.err")))
            if "serving" in self.log("supermon.err") and port_open(self.port):
                break
            time.sleep(0.05)
        else:
            raise Fail("magnet-supermon not serving within 10 s: %s"
                       % self.log("supermon.err"))
        want = "magnet-supermon: serving %s port %d" % (HOST, self.port)
        expect(want in self.log("supermon.err").splitlines(),
               "stderr lacks the line %r: %r"
               % (want, self.log("supermon.err")))

    def alive(self):
        expect(self.server.poll() is None,
               "magnet-supermon exited with %s: %s"
               % (self.server.returncode, self.log("supermon.err")))

    def cleanup(self):
        for p in (self.server, self.magnetd):
            if p is not None and p.poll() is None:
                p.kill()
                p.wait()
        shutil.rmtree(self.tmp, ignore_errors=True)


# ------------------------------------------------------------ the checks

def metric_place(metric):
    """(category, field) of a magnetd metric by the spec's naming rule."""
    if metric.startswith("magnetd."):
        return "magnetd", metric[len("magnetd."):].replace(".", "_")
    if metric in TOTALS:
        return "magnetd", metric.replace(".", "_")
    cat, _, field = metric.rpartition(".")
    return cat, field


def expected_schema(snap):
    """The schema magnetd's snapshot implies: time, magnetd, then its events
    and latencies in its order (magnetd's own fields as a set)."""
    cats = {"time": ["timestamp"], "magnetd": []}
    order = ["time", "magnetd"]
    for metric, _, _ in snap:
        if PER_CPU.search(metric):
            continue
        cat, field = metric_place(metric)
        if cat not in cats:
            cats[cat] = []
            order.append(cat)
        cats[cat].append(field)
    return [(c, cats[c]) for c in order]


def latencies(snap):
    return {metric_place(m)[0] for m, _, _ in snap if m.endswith(".p50")
            and not m.startswith("magnetd.")}


def check_no_snapshot(env):
    """Before magnetd ever answered: only time and magnetd, all 0."""
    schema = get_schema(env.port)
    expect([c for c, _ in schema] == ["time", "magnetd"],
           "categories %s, expected only time and magnetd"
           % [c for c, _ in schema])
    expect(schema[0][1] == ["timestamp"], "time's fields %s" % schema[0][1])
    expect("health" in schema[1][1], "magnetd has no health field")
    vals = get_sample(env.port, schema)
    expect(all(v == 0 for v in vals["magnetd"].values()),
           "magnetd's values are not all 0: %s" % vals["magnetd"])


def wait_schema(env, ncats, timeout):
    """The schema once it has ncats categories (magnetd was read)."""
    deadline = time.monotonic() + timeout
    schema = None
    while time.monotonic() < deadline:
        try:
            schema = get_schema(env.port)
            if len(schema) >= ncats:
                return schema
        except (Fail, Closed, OSError):
            pass
        time.sleep(0.2)
    raise Fail("no schema with %d categories within %.0f s (last: %s)"
               % (ncats, timeout, schema))


def check_schema_shape(schema, snap):
    names = [c for c, _ in schema]
    expect(names[:2] == ["time", "magnetd"],
           "first categories %s, expected time, magnetd" % names[:2])
    expect(schema[0][1] == ["timestamp"],
           "time's fields %s, expected [timestamp]" % schema[0][1])
    missing = [f for f in MAGNETD_FIELDS if f not in schema[1][1]]
    expect(not missing, "magnetd lacks fields %s" % missing)
    lats = latencies(snap)
    expect(any(c not in lats for c in names[2:]) and
           any(c in lats for c in names[2:]), "categories %s: expected "
           "events and a latency (magnetd has %s)"
           % (names, [c for c, _ in expected_schema(snap)]))
    seen_latency = False
    for c, fields in schema[2:]:
        if c in lats:
            seen_latency = True
            expect(fields == LATENCY_FIELDS, "latency %s: fields %s, "
                   "expected %s" % (c, fields, LATENCY_FIELDS))
        else:
            expect(not seen_latency, "event %s after a latency" % c)
            expect(fields == EVENT_FIELDS, "event %s: fields %s, expected %s"
                   % (c, fields, EVENT_FIELDS))
    for c, fields in schema:
        for f in [c] + fields:
            expect(not re.search(r"(^|[._])cpu\d+", f),
                   "per-CPU name %s in category %s" % (f, c))


def check_magnetd_order(schema):
    fields = [f for f in schema[1][1] if f in MAGNETD_FIELDS]
    expect(fields == MAGNETD_FIELDS, "magnetd's fields %s, the spec's "
           "schema lists %s" % (schema[1][1], MAGNETD_FIELDS))


def check_schema_agrees(schema, snap):
    want = expected_schema(snap)
    expect([c for c, _ in schema] == [c for c, _ in want],
           "categories %s, magnetd's metrics give %s"
           % ([c for c, _ in schema], [c for c, _ in want]))
    for (c, fields), (_, wfields) in zip(schema, want):
        if c == "magnetd":     # every metric once; order is the spec's
            expect(sorted(fields) == sorted(wfields),
                   "magnetd: fields %s, magnetd's metrics give %s"
                   % (fields, wfields))
        else:
            expect(fields == wfields, "%s: fields %s, magnetd's metrics "
                   "give %s" % (c, fields, wfields))


def check_values(schema, snap_before, values, snap_after):
    """values (a sample taken after the server refreshed past snap_before)
    lie between magnetd's before and after, rounded."""
    before = {metric_place(m): (t, v) for m, t, v in snap_before}
    after = {metric_place(m): (t, v) for m, t, v in snap_after}
    bad = []
    for (cat, field), (mtype, v0) in before.items():
        if cat not in values or field not in values[cat]:
            continue
        v = values[cat][field]
        v1 = after.get((cat, field), (mtype, v0))[1]
        lo, hi = min(v0, v1), max(v0, v1)
        if field == "health":
            ok = v == round(v0) == round(v1)
        elif mtype == "counter" or field == "uptime":
            ok = math.floor(lo) <= v <= math.ceil(hi)
        elif v0 == v1 and field != "clients":
            ok = abs(v - v0) <= 0.5 + 1e-9
        else:
            continue           # a gauge that moved
        if not ok:
            bad.append("%s.%s = %s, magnetd %s .. %s"
                       % (cat, field, v, v0, v1))
    expect(not bad, "; ".join(bad))


def check_timestamp(values):
    ts = values["time"]["timestamp"]
    expect(abs(ts - time.time()) < 60,
           "timestamp %#x is %.0f s from now" % (ts, ts - time.time()))


def check_health(values, snap):
    health = [v for m, _, v in snap if m == "magnetd.health"]
    expect(health, "magnetd reports no magnetd.health")
    expect(values["magnetd"]["health"] == round(health[0]),
           "health %s, magnetd.health %s"
           % (values["magnetd"]["health"], health[0]))


def masks(env, schema):
    n = len(schema)

    def one(line, indices, then_plain=None):
        with Client(env.port) as c:
            sample_of(c.request(line), schema, indices)
            if then_plain is not None:
                sample_of(c.request("S"), schema, then_plain)
                sample_of(c.request("S"), schema, then_plain)

    check("mask 0x5S selects categories 0 and 2", one, "0x5S", [0, 2])
    check("mask 5S (no 0x) selects categories 0 and 2", one, "5S", [0, 2])
    check("mask kept for later plain S", one, "0x5S", [0, 2], [0, 2])
    check("a new connection's S has every category", one, "S", range(n))
    check("mask 0x0S: node with no category", one, "0x0S", [], [])
    check("mask with bits beyond the categories", one,
          "0xffffffffffffffffS", range(n))

    def crlf():
        with Client(env.port) as c:
            sample_of(c.request("0x3S\r"), schema, [0, 1])
            sample_of(c.request("S\r"), schema, [0, 1])
            expect(schema_of(c.request("#\r")) == schema,
                   "\"#\\r\\n\" gives another schema")
    check("\\r\\n line endings", crlf)


def pipelined(env, schema):
    with Client(env.port) as c:
        c.send("#\nS\n0x1S\n")
        expect(schema_of(parse(c.reply())) == schema,
               "first reply is not the schema")
        sample_of(parse(c.reply()), schema)
        sample_of(parse(c.reply()), schema, [0])
        extra, closed = c.pending(0.3)
        expect(not extra and not closed, "after the three replies: %r%s"
               % (extra[:100], " and closed" if closed else ""))


def errors(env, schema):
    def bad(req, message=None):
        with Client(env.port) as c:
            c.send(req)
            expect_error(parse(c.reply()), message)
            sample_of(c.request("S"), schema)

    check("error: unknown request \"hello\"", bad, b"hello\n")
    check("error: empty line", bad, b"\n")
    check("error: binary bytes", bad, b"\x00\xff\x01\n")
    check("error: bad hexadecimal mask 0xZZS", bad, b"0xZZS\n")
    check("error: \"S S\"", bad, b"S S\n")

    def too_long():
        with Client(env.port) as c:
            c.send(b"A" * 4999 + b"\n")
            try:
                reply = parse(c.reply())
            except Closed as e:
                raise Fail("no (error ...) before the close: %s" % e)
            expect_error(reply, "request too long")
            expect(c.closed_within(3) is not None,
                   "the connection stays open after the error")
    check("line of 5000 bytes: (error \"request too long\"), closed",
          too_long)


class Misbehaver(threading.Thread):
    """A bad client running in the background while others are served."""

    def __init__(self, port, behaviour, seconds):
        super().__init__(daemon=True)
        self.sock = socket.create_connection((HOST, port), timeout=5)
        self.behaviour = behaviour
        self.seconds = seconds
        self.closed_by_server = False
        self.error = None

    def run(self):
        try:
            self.behaviour(self)
        except (ConnectionResetError, BrokenPipeError, ConnectionAbortedError):
            self.closed_by_server = True
        except Exception as e:
            self.error = e

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


def slow_reader(m):
    m.sock.sendall(b"S\n" * 200)
    deadline = time.monotonic() + m.seconds
    m.sock.settimeout(0.01)
    while time.monotonic() < deadline:
        try:
            if not m.sock.recv(1):
                m.closed_by_server = True
                return
        except socket.timeout:
            pass
        time.sleep(0.01)


def flooder(m):
    chunk = b"S\n" * 4096
    deadline = time.monotonic() + m.seconds
    m.sock.settimeout(0.1)
    while time.monotonic() < deadline:
        try:
            m.sock.send(chunk)
        except socket.timeout:
            pass


def garbage(m):
    data = random.randbytes(1 << 20).replace(b"\n", b"").replace(b"\r", b"")
    m.sock.settimeout(m.seconds)
    m.sock.sendall(data)
    while m.sock.recv(65536):      # all sent: the server must close still
        pass
    m.closed_by_server = True


def under_load(env, behaviour, seconds):
    """Run a misbehaving client for seconds, serving others meanwhile:
    (the misbehaver, slowest answer to the others, peak RSS in kB)."""
    m = Misbehaver(env.port, behaviour, seconds)
    m.start()
    slowest, peak = 0.0, 0
    deadline = time.monotonic() + seconds
    try:
        while time.monotonic() < deadline:
            slowest = max(slowest, served_within(env.port))
            env.alive()
            peak = max(peak, rss_kb(env.server.pid))
            time.sleep(0.2)
        m.join(seconds + 5)
        peak = max(peak, rss_kb(env.server.pid))
    except BaseException:
        m.close()
        raise
    return m, slowest, peak


def robustness(env, schema):
    # A silent client, an idle one and one with a partial request.
    def silent():
        with Client(env.port) as idle, Client(env.port) as partial:
            partial.send("S")
            served_within(env.port)
            took = partial.closed_within(TIMEOUT * 3)
            expect(took is not None, "a partial request \"S\" is not closed "
                   "within %d s" % (TIMEOUT * 3))
            expect(took >= TIMEOUT / 2, "a partial request closed after "
                   "%.1f s, before -t %d s" % (took, TIMEOUT))
            data, closed = idle.pending(0)
            expect(not closed, "a client with nothing pending was closed "
                   "after %.1f s (-t %d, idle limit 10 times that)"
                   % (took, TIMEOUT))
            sample_of(idle.request("S"), schema)
    check("silent client: others served; partial request closed after -t;"
          " idle client kept", silent)

    def load(behaviour, seconds, label):
        m, slowest, peak = under_load(env, behaviour, seconds)
        try:
            expect(m.error is None, "the %s failed: %s" % (label, m.error))
            env.alive()
            expect(peak < RSS_LIMIT_KB, "magnet-supermon's RSS reached "
                   "%d kB with a %s" % (peak, label))
            served_within(env.port)
        finally:
            m.close()
        return m

    check("slow reader: others served promptly, RSS < 50 MB",
          load, slow_reader, 2, "slow reader")
    check("flooder: others served promptly, RSS < 50 MB, server alive",
          load, flooder, 3, "flooder")

    def too_many():
        time.sleep(0.5)        # the server notices earlier clients leaving
        clients = []
        try:
            for _ in range(MAX_CLIENTS + 2):
                clients.append(Client(env.port))
            time.sleep(0.5)
            served, refused = 0, 0
            for c in clients:
                try:
                    data, closed = c.pending(0)
                    if not data and not closed:
                        c.send("S\n")
                    reply = parse(c.reply(3))
                    if is_error(reply):
                        expect_error(reply, "too many clients")
                        expect(c.closed_within(3) is not None,
                               "a refused client is not closed")
                        refused += 1
                    else:
                        sample_of(reply, schema)
                        served += 1
                except (Closed, BrokenPipeError, ConnectionResetError):
                    refused += 1
            expect(served == MAX_CLIENTS and refused == 2,
                   "of %d clients with -c %d, %d served and %d refused"
                   % (len(clients), MAX_CLIENTS, served, refused))
        finally:
            for c in clients:
                c.close()
        time.sleep(0.3)
        served_within(env.port)
    check("too many clients: 8 served, 2 refused, then served again",
          too_many)

    def garbage_flood():
        m = Misbehaver(env.port, garbage, 5)
        m.start()
        m.join(8)
        try:
            expect(not m.is_alive() and m.error is None and
                   m.closed_by_server, "the connection is not closed within "
                   "5 s of 1 MB without a newline (%s)" % (m.error,))
        finally:
            m.close()
        env.alive()
        served_within(env.port)
    check("garbage flood: closed, server alive and serving", garbage_flood)


def files(env, schema):
    def read(f):
        path = os.path.join(env.out, f)
        expect(os.path.isfile(path), "%s does not exist" % path)
        with open(path, encoding="latin-1") as fd:
            return parse(fd.read())

    def schema_file():
        expect(schema_of(read("#")) == schema,
               "the file # differs from the schema")
    check("file #: parses, equals the schema of \"#\"", schema_file)

    def sample_file():
        s = read("S")
        expect(isinstance(s, list) and len(s) == len(schema),
               "S has %s categories, the schema %d"
               % (len(s) if isinstance(s, list) else "no", len(schema)))
        for c, (cname, fields) in zip(s, schema):
            expect(isinstance(c, list) and c and name(c[0]) == cname,
                   "category %r, expected %s" % (c, cname))
            expect(len(c) - 1 == len(fields), "%s: %d values for fields %s"
                   % (cname, len(c) - 1, fields))
            if cname == "time":
                ts = hexval(c[1])
                expect(abs(ts - time.time()) < 60,
                       "time %#x is %.0f s from now" % (ts, ts - time.time()))
            else:
                for v in c[1:]:
                    uint(v)
        return hexval(s[0][1])
    ts = check("file S: positional values in the schema's order", sample_file)

    def updated():
        time.sleep(REFRESH * 2.2)
        expect(hexval(read("S")[0][1]) > ts,
               "the file S is not renewed after %.1f s" % (REFRESH * 2.2))
    if ts:
        check("file S renewed after every snapshot", updated)


def magnetd_away(env, schema):
    rc = stop(env.magnetd)
    report("magnetd stops", rc is not None, "magnetd had to be killed")
    time.sleep(REFRESH * 2 + 0.5)
    state = {}

    def still():
        vals = get_sample(env.port, schema)
        expect(vals["magnetd"]["health"] == 0,
               "health %d" % vals["magnetd"]["health"])
        expect(get_schema(env.port) == schema, "the schema changed")
        state["before"] = vals
    check("magnetd away: S answers with the same categories, health 0",
          still)

    def frozen():
        time.sleep(REFRESH * 1.5)
        vals = get_sample(env.port, schema)
        changed = ["%s.%s %s -> %s" % (c, f, state["before"][c][f], v)
                   for c in vals if c != "time"
                   for f, v in vals[c].items() if state["before"][c][f] != v]
        expect(not changed, "values change while magnetd is away: %s"
               % ", ".join(changed))
        state["uptime"] = vals["magnetd"]["uptime"]
    if state:
        check("magnetd away: the last values stay", frozen)

    def back():
        env.start_magnetd()
        old = state.get("uptime")
        deadline = time.monotonic() + 5
        uptime = None
        while time.monotonic() < deadline:
            uptime = get_sample(env.port, schema)["magnetd"]["uptime"]
            if uptime <= 5 and (old is None or uptime < old):
                expect(get_schema(env.port) == schema, "the schema changed")
                return
            time.sleep(0.25)
        raise Fail("uptime %s (before: %s) 5 s after magnetd's restart"
                   % (uptime, old))
    check("magnetd back: values from the new magnetd within 5 s", back)


def options(env):
    free = free_port()
    base = [os.path.join(env.bin, "magnet-supermon"), "-l", HOST, "-s",
            os.path.join(env.tmp, "none.sock")]
    cases = [(["-p", "0"], None), (["-p", "70000"], None),
             (["-p", str(free), "-r", "0"], free),
             (["-p", str(free), "-r", "3601"], free),
             (["-p", str(free), "-c", "0"], free),
             (["-p", str(free), "-a", "300.1.1.1"], free),
             (["-p", str(free), "-x"], free)]
    for args, port in cases:
        def run(args=args, port=port):
            try:
                r = subprocess.run(base + args, stdin=subprocess.DEVNULL,
                                   capture_output=True, timeout=5)
            except subprocess.TimeoutExpired:
                raise Fail("still running after 5 s")
            expect(r.returncode == 2, "exit status %d" % r.returncode)
            expect(r.stderr.strip(), "nothing on stderr")
            if port:
                expect(not port_open(port), "something listens on %d" % port)
        label = " ".join(args[2:] if len(args) > 2 else args)
        check("bad option %s: exit 2, message on stderr" % label, run)

    def usage():
        r = subprocess.run([os.path.join(env.bin, "magnet-supermon"), "-h"],
                           stdin=subprocess.DEVNULL, capture_output=True,
                           timeout=5)
        expect(r.returncode == 0, "exit status %d" % r.returncode)
        text = (r.stdout + r.stderr).decode(errors="replace")
        missing = [o for o in "lpsrnaocthV"
                   if not re.search(r"(^|[^\w-])-%s\b" % o, text)]
        expect(not missing, "the help does not mention %s"
               % ", ".join("-" + o for o in missing))
    check("-h: exit 0, every option mentioned", usage)


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: supermon-test.py TOP")
    env = Env(os.path.abspath(sys.argv[1]))
    try:
        run(env)
    finally:
        env.cleanup()
    print("%d passed, %d failed" % (passed, failed))
    sys.exit(0 if failed == 0 else 1)


def run(env):
    binary = os.path.join(env.bin, "magnet-supermon")
    if not check("magnet-supermon exists", expect, os.access(binary, os.X_OK),
                 "no executable %s" % binary):
        return
    if not check("magnet-supermon starts, prints its serving line",
                 env.start_server):
        return
    check("before magnetd: only time and magnetd, all 0", check_no_snapshot,
          env)
    if not check("magnetd starts", env.start_magnetd):
        return
    snap = env.snapshot()
    ncats = len(expected_schema(snap))
    schema = check("schema: parses, (NAME 'U FIELD...) lists, "
                   "magnetd's categories within 5 s", wait_schema, env,
                   ncats, REFRESH * 3 + 2)
    if not schema:
        return
    check("schema: time, magnetd with the spec's fields, events, latency, "
          "no per-CPU", check_schema_shape, schema, snap)
    check("schema: magnetd's fields in the spec's order",
          check_magnetd_order, schema)
    check("schema agrees with magnetd's snapshot", check_schema_agrees,
          schema, snap)

    before = env.snapshot()
    time.sleep(REFRESH * 2.2)   # the server refreshed since
    values = check("sample S: format, categories and fields of the schema",
                   get_sample, env.port, schema)
    after = env.snapshot()
    if values:
        check("sample values are magnetd's", check_values, schema,
              before, values, after)
        check("sample timestamp within 60 s of now", check_timestamp, values)
        check("sample health is magnetd.health", check_health, values, after)

    masks(env, schema)
    check("pipelined \"#\\nS\\n0x1S\\n\": answered in order", pipelined,
          env, schema)
    errors(env, schema)
    robustness(env, schema)
    check("server alive after the bad clients", env.alive)
    files(env, schema)
    magnetd_away(env, schema)

    def sigterm():
        start = time.monotonic()
        rc = stop(env.server, signal.SIGTERM, 5)
        expect(rc is not None, "still running 5 s after SIGTERM")
        expect(rc == 0, "exit status %d after SIGTERM" % rc)
        expect(time.monotonic() - start < 5, "slow to exit")
    check("SIGTERM: exit 0 within 5 s", sigterm)
    options(env)


if __name__ == "__main__":
    main()
