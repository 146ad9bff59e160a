#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""magnetd's Prometheus endpoint (magnetd/http.c, exposition.c) on the host.

Two "nodes" (build/test-bin/http-host: the endpoint, its formats, the server
and the metrics from magnetd's own sources, fed with made-up latencies of
two different distributions) are checked as a scraper and an attacker
would see them:
  - the formats: promtool check metrics (the text format 0.0.4) and the
    OpenMetrics parser of Debian's python3-prometheus-client, on real
    answers; content negotiation by Accept;
  - HTTP: 404, 405 (with Allow), 413, 431, HEAD, the index page; each bad
    request changes nothing and is counted; a stalled client does not hold
    up a scrape and is closed after the timeout; a connection beyond
    max-clients is served, the one that waited longest for a request
    closed to make room;
  - attacks: slowloris (max-clients connections trickling their headers
    under the idle timeout: a scrape is served meanwhile, each is closed
    by request-timeout), 2000 silent connections (a scrape right after
    them is served within request-timeout), long query strings (answered
    at once: ignored, or 414 past the header limit, never a silent close),
    and more connections than descriptors (a node under RLIMIT_NOFILE 64
    with max-clients 1024: no spin, a bounded log, its Unix socket's
    clients served, nothing left in CLOSE-WAIT);
  - a real Prometheus (Debian's) scrapes both: both targets up, the event
    counts are what was fed, and histogram_quantile(0.99, sum by (le) ...)
    over both nodes is within the stated 25 % (4 buckets per doubling, the
    default) of the exact p99 of all
    the latencies both were fed (and each node's on its own);
  - a scrape of a large configuration (200 probes, 50 latencies): its size
    and rendering time, printed.

usage: tests/host/prometheus-test.py TOP
Prints "ok - ..." / "not ok - ..." lines and a tally; exits 1 on a failure.
"""
import decimal
import json
import math
import os
import re
import resource
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

from prometheus_client.openmetrics.parser import \
    text_string_to_metric_families as om_parse
from prometheus_client.process_collector import ProcessCollector

from hostcheck import check, free_ports, is_open, summary

TOP = sys.argv[1] if len(sys.argv) > 1 else os.getcwd()
HOST = os.path.join(TOP, "build/test-bin/http-host")
PAIRS = 20000
VERSION = re.search(r'MAGNETD_VERSION\s+"([^"]*)"', open(os.path.join(
    TOP, "magnetd/magnetd.h")).read()).group(1)
BUCKETS = 4                 # per doubling: buckets-per-doubling's default
STATED_ERROR = 1 / BUCKETS  # magnetd.conf(5), metrics.h: one bucket's width
DEADLINE = 3                # s: request-timeout of the nodes
PROM = f"""	max-clients = 4
	timeout = 2
	request-timeout = {DEADLINE}
	per-cpu = true"""
PROM_ACCEPT = ("application/openmetrics-text;version=1.0.0,"
               "application/openmetrics-text;version=0.0.1;q=0.75,"
               "text/plain;version=0.0.4;q=0.5,*/*;q=0.1")

def get(url, headers=None, method="GET", data=None, timeout=10):
    """(status, headers, body) of a request; errors are answers too."""
    req = urllib.request.Request(url, headers=headers or {}, method=method,
                                 data=data)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, r.headers, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers, e.read()


def status(url, timeout):
    """The status of a GET, or the exception's name; and how long it took."""
    t0 = time.monotonic()
    try:
        st = get(url, timeout=timeout)[0]
    except (OSError, urllib.error.URLError) as e:
        st = type(getattr(e, "reason", e)).__name__
    return st, time.monotonic() - t0


def raw(port, data, wait=5.0):
    """Send @data as it is; what comes back until the server closes."""
    s = socket.create_connection(("127.0.0.1", port), timeout=wait)
    s.sendall(data)
    out = b""
    try:
        while True:
            b = s.recv(65536)
            if not b:
                break
            out += b
    except OSError:             # a timeout, or a reset: what came, came
        pass
    s.close()
    return out


def value(text, name, labels=""):
    """The value of sample NAME{LABELS} in a text-format page, or None."""
    want = name + ("{" + labels + "}" if labels else "")
    for line in text.splitlines():
        if line.startswith(want + " "):
            return float(line.split()[-1])
    return None


def exact_quantile(values, q):
    """The smallest value at least q of @values do not exceed."""
    v = sorted(values)
    return v[max(0, math.ceil(q * len(v)) - 1)]


def node_config(path, port, extra="", prom=PROM):
    with open(path, "w") as f:
        f.write(f"""socket {{ path = "{path}.sock" }}
prometheus {{
	enable = true
	port = {port}
{prom}
}}
probe-set udp-send {{ }}
probe exits {{ predef = "process_exit" }}
latency send {{
	start = "udp-send.socket"
	end = "udp-send.dev-xmit"
	key = id
}}
{extra}""")


def start_node(tmp, name, port, seed, low, high, extra="", prom=PROM,
               nofile=None):
    """An http-host; @nofile: its RLIMIT_NOFILE, soft and hard."""
    conf = os.path.join(tmp, name + ".conf")
    times = os.path.join(tmp, name + ".times")
    node_config(conf, port, extra, prom)

    def limit():
        if nofile:
            resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))
    p = subprocess.Popen([HOST, conf, str(seed), str(PAIRS), str(low),
                          str(high), times], stdout=subprocess.PIPE,
                         stderr=open(os.path.join(tmp, name + ".log"), "w"),
                         text=True, preexec_fn=limit)
    line = p.stdout.readline()
    if line.strip() != "ready":
        p.kill()
        raise SystemExit(f"http-host {name} did not start: "
                         + open(os.path.join(tmp, name + ".log")).read())
    lat = [int(l.split()[1]) for l in open(times)]
    return p, lat


def test_formats(base, pid):
    st, hd, body = get(base + "/metrics")
    text = body.decode()
    check(st == 200 and hd["Content-Type"] ==
          "text/plain; version=0.0.4; charset=utf-8",
          "no Accept: the text format 0.0.4 (%s)" % hd["Content-Type"])
    r = subprocess.run(["promtool", "check", "metrics"], input=text,
                       capture_output=True, text=True)
    check(r.returncode == 0 and not r.stdout.strip() and
          not r.stderr.strip(),
          "promtool check metrics: clean " + (r.stdout + r.stderr).strip())
    check(value(text, "magnet_events_total",
                'event="udp-send.socket",set="udp-send",layer="socket"')
          == PAIRS + 4,
          "magnet_events_total of udp-send.socket, with set and layer "
          "labels: the records fed")
    check(value(text, "magnet_events_total", 'event="exits"') == 4,
          "a probe's event: no set or layer label")
    check(value(text, "magnet_cpu_events_total",
                'event="exits",cpu="3"') == 1,
          "per-cpu = true: per-CPU counters with a cpu label")
    check(value(text, "magnet_latency_seconds_count", 'latency="send"')
          == PAIRS and
          value(text, "magnet_latency_seconds_bucket",
                'latency="send",le="+Inf"') == PAIRS,
          "the histogram: _count and the +Inf bucket are every pair")
    les, counts = buckets(text)
    check(len(les) == 26 * BUCKETS + 2 and les[0] == "2.56e-07" and
          les[1] == str(256 * (1 + 1 / BUCKETS) / 1e9) and
          les[-2] == "17.179869184" and les[-1] == "+Inf" and
          all(a <= b for a, b in zip(counts, counts[1:])),
          f"{26 * BUCKETS + 2} buckets ({BUCKETS} per doubling, the "
          "default) from 256 ns to 2^34 ns and +Inf, cumulative "
          f"({len(les)}, {les[0]}, {les[1]} .. {les[-2]})")
    test_numbers(text)
    test_process(text, pid)
    window = [l.split("{")[0] for l in text.splitlines()
              if l.startswith(("magnet_event_rate", "magnet_event_byte_rate",
                               "magnet_latency_window"))]
    check(not window, "nothing over magnetd's window: rates are rate()'s, "
          "quantiles histogram_quantile()'s (%s)" % sorted(set(window)))
    check(value(text, "magnetd_health") == 1 and
          value(text, "magnetd_build_info", f'version="{VERSION}"') == 1,
          "magnetd's own health and version")
    test_ledger(text)
    test_acct(text)
    test_sampler(text, pid)
    test_otlp(text)

    st, hd, body = get(base + "/metrics", {"Accept": PROM_ACCEPT})
    check(st == 200 and hd["Content-Type"].startswith(
        "application/openmetrics-text; version=1.0.0"),
        "Prometheus's Accept: OpenMetrics 1.0.0")
    try:
        fams = {f.name: f for f in om_parse(body.decode())}
        check(body.endswith(b"# EOF\n") and
              fams["magnet_events"].type == "counter" and
              fams["magnet_cpu_seconds"].type == "counter" and
              fams["magnet_cpu_seconds"].unit == "seconds" and
              fams["magnet_latency_seconds"].type == "histogram" and
              fams["magnet_latency_seconds"].unit == "seconds" and
              fams["magnetd_build"].type == "info" and
              fams["magnet_acct_call_seconds"].type == "histogram" and
              fams["magnet_acct_call_seconds"].unit == "seconds" and
              fams["magnet_otlp_spans"].type == "counter" and
              fams["magnet_steal_seconds"].type == "counter" and
              fams["magnet_steal_seconds"].unit == "seconds" and
              fams["magnet_sampler_margin_seconds"].type == "gauge" and
              fams["magnet_otlp_queue_bytes"].unit == "bytes",
              "OpenMetrics: the reference parser reads it (%d families)"
              % len(fams))
    except Exception as e:      # the parser's verdict is the test
        check(False, "OpenMetrics: the reference parser refused it: %s" % e)
    for accept, want in [("text/plain", "text/plain"),
                         ("application/openmetrics-text;q=0.2, "
                          "text/plain;q=0.9", "text/plain"),
                         ("application/openmetrics-text",
                          "application/openmetrics-text"),
                         ("application/json", "text/plain"),
                         ("*/*", "text/plain")]:
        st, hd, _ = get(base + "/metrics", {"Accept": accept})
        check(st == 200 and hd["Content-Type"].startswith(want),
              f"Accept: {accept} -> {want}")


def test_acct(text):
    """The watched process of http-host.c, as magnet_acct_*."""
    w = 'pid="4242",comm="web \\"1\\"",syscall="write"'
    r = 'pid="4242",comm="web \\"1\\"",syscall="read"'
    buckets = [(l.split('le="')[1].split('"')[0], float(l.rsplit(" ", 1)[1]))
               for l in text.splitlines()
               if l.startswith("magnet_acct_call_seconds_bucket{" + w)]
    check(len(buckets) == 24 and buckets[0] == ("1.024e-06", 1) and
          buckets[1][1] == 1 and buckets[2][1] == 3 and
          buckets[-1] == ("+Inf", 3) and
          all(a[1] <= b[1] for a, b in zip(buckets, buckets[1:])),
          "magnet_acct_call_seconds: 24 cumulative buckets of powers of two "
          "from 1.024 us to +Inf (%s)" % buckets[:3])
    check(value(text, "magnet_acct_call_seconds_count", w) == 3 and
          abs(value(text, "magnet_acct_call_seconds_sum", w) - 6.5e-06)
          < 1e-15 and
          value(text, "magnet_acct_call_seconds_count", r) == 1 and
          value(text, "magnet_acct_call_seconds_bucket",
                r + ',le="1.073741824"') == 0 and
          value(text, "magnet_acct_call_seconds_bucket",
                r + ',le="2.147483648"') == 1,
          "... _sum and _count per system call, the name from its number")
    check(value(text, "magnet_acct_errors_total", w) == 1 and
          value(text, "magnet_acct_blocked_seconds_total",
                r + ',how="wait"') == 1.999999 and
          value(text, "magnet_acct_bytes_total",
                w + ',layer="socket",direction="out"') == 300 and
          value(text, "magnet_acct_async_seconds_total",
                w + ',part="tx"') == 2e-06 and
          value(text, "magnet_acct_async_seconds_total",
                w + ',part="rx"') == 3e-06 and
          value(text, "magnet_acct_watched_threads",
                'pid="4242",comm="web \\"1\\""') == 2 and
          value(text, "magnet_acct_missed_calls_total",
                'pid="4242",comm="web \\"1\\""') == 5,
          "magnet_acct_*: errors, blocked by how, bytes by layer and "
          "direction, async by part, threads, missed calls")


def test_sampler(text, pid):
    """The ticks of http-host.c's sampler, through magnetd's sampler.c."""
    ev = 'event="steal-sample"'
    a = f'{ev},pid="{pid}",comm="http-host"'
    b = f'{ev},pid="4194303",comm=""'
    check(value(text, "magnet_sampled_seconds_total", a) == 0.016 and
          value(text, "magnet_sampled_seconds_total", b) == 0.003 and
          value(text, "magnet_sampled_idle_seconds_total", ev) == 0.005 and
          value(text, "magnet_sampler_ticks_total", ev) == 17,
          "the sampler: apparent time per process (its name read once, "
          "\"\" for one gone), idle apart, every tick counted")
    check(value(text, "magnet_steal_seconds_total",
                a + ',type="reported"') == 0.001 and
          value(text, "magnet_steal_seconds_total",
                a + ',type="unreported"') == 0.003 and
          value(text, "magnet_steal_seconds_total",
                b + ',type="unreported"') == 0 and
          value(text, "magnet_steal_unattributed_seconds_total",
                ev + ',type="unreported"') == 0.002 and
          value(text, "magnet_steal_unattributed_seconds_total",
                ev + ',type="reported"') == 0,
          "the sampler: a blank within a process charged to it, reported "
          "and not; one between two processes unattributed; one next to "
          "idle not steal")
    check(value(text, "magnet_sampler_margin_seconds", ev) == 0.0001,
          "the sampler: the jitter margin, a tenth of the period for "
          "punctual ticks")


def test_otlp(text):
    """The spans posted of http-host.c, as magnet_otlp_*."""
    check([value(text, "magnet_otlp_spans_total", 'outcome="%s"' % o)
           for o in ("sent", "dropped", "rejected")] == [40, 7, 5] and
          [value(text, "magnet_otlp_requests_total", 'outcome="%s"' % o)
           for o in ("sent", "failed", "rejected")] == [3, 2, 1] and
          value(text, "magnet_otlp_queue_bytes") == 1234 and
          value(text, "magnet_otlp_up") == 1 and
          value(text, "magnet_otlp_exporter_restarts_total") == 1,
          "magnet_otlp_*: spans and requests by outcome, the queue, up, "
          "restarts")


def test_ledger(text):
    """The ledger of http-host.c, as magnet_cpu_seconds_total."""
    cpu = {l.rsplit(" ", 1)[0]: float(l.rsplit(" ", 1)[1])
           for l in text.splitlines()
           if l.startswith("magnet_cpu_seconds_total{")}
    check(value(text, "magnet_ledger_enabled") == 1,
          "the ledger: magnet_ledger_enabled 1")
    check(cpu == {
        'magnet_cpu_seconds_total{cgroup="/a",kind="user"}': 2,
        'magnet_cpu_seconds_total{cgroup="/b \\"q\\"",kind="system"}': 0.25,
        'magnet_cpu_seconds_total{cgroup="",kind="softirq",vector="net_rx"}':
            0.125,
        'magnet_cpu_seconds_total{cgroup="",kind="work",name="vmstat_update"}':
            1e-06,
        'magnet_cpu_seconds_total{cgroup="(gone)",kind="user"}': 3,
        'magnet_cpu_seconds_total{cgroup="",kind="idle"}': 10},
          "magnet_cpu_seconds_total: a series per cgroup, kind, vector and "
          "name, thread groups summed, the path escaped, a removed cgroup "
          "(gone), no activity \"\" (%s)" % cpu)
    check(value(text, "magnet_cpu_elapsed_seconds_total") == 15.375001 and
          abs(sum(cpu.values()) - 15.375001) < 1e-9,
          "magnet_cpu_elapsed_seconds_total: what the rows add up to")


def buckets(text, latency="send"):
    """The le labels and cumulative counts of a latency's histogram."""
    lines = [l for l in text.splitlines() if l.startswith(
        f'magnet_latency_seconds_bucket{{latency="{latency}"')]
    return ([l.split('le="')[1].split('"')[0] for l in lines],
            [float(l.split()[-1]) for l in lines])


def test_resolutions(tmp, base):
    """buckets-per-doubling 8, 2 and 1 on nodes fed what the first node
    was fed: their bounds, and at every bound they share with the
    default's, the same count (a coarse histogram is the fine one's sum)."""
    les, counts = buckets(get(base + "/metrics")[2].decode())
    at = dict(zip(les, counts))
    for k in (8, 2, 1):
        port = free_ports(1)[0]
        p, _ = start_node(tmp, f"k{k}", port, 1, 2000, 5000000,
                          prom=PROM + f"\n\tbuckets-per-doubling = {k}")
        try:
            body = get(f"http://127.0.0.1:{port}/metrics")[2]
        finally:
            p.terminate()
            p.wait()
        kl, kc = buckets(body.decode())
        same = all(at[le] == c for le, c in zip(kl, kc) if le in at)
        check(len(kl) == 26 * k + 2 and kl[-2:] == ["17.179869184", "+Inf"]
              and same and (k > BUCKETS) == (len(kl) > len(les)),
              f"buckets-per-doubling = {k}: {len(kl)} buckets, "
              f"{len(body)} bytes, the same counts at the bounds shared "
              "with the default's")
        r = subprocess.run(["promtool", "check", "metrics"], input=body,
                           capture_output=True)
        check(r.returncode == 0 and not r.stdout.strip() and
              not r.stderr.strip(), "... promtool check metrics: clean")


def test_numbers(text):
    """Every value and le label in the shortest form that reads back (as
    Go's strconv 'g' -1, Python's repr), whole numbers in plain digits;
    what is whole nanoseconds (le, _sum) printed as exactly that."""
    def shortest(v):
        f = float(v)
        if f == int(f) and abs(f) < 2 ** 53:
            return re.fullmatch(r"-?[0-9]+", v) is not None
        digits = v.lstrip("-").split("e")[0].replace(".", "").lstrip("0")
        return len(digits) <= 1 or \
            float("%.*g" % (len(digits) - 1, f)) != f
    bad, noisy = [], []
    for line in text.splitlines():
        if line.startswith("#"):
            continue
        v = line.rsplit(" ", 1)[1]
        le = line.split('le="')[1].split('"')[0] if 'le="' in line else None
        for x in (v, le):
            if x is not None and x not in ("+Inf", "NaN") and \
                    not shortest(x):
                bad.append(line)
        for x in ([le] if le and le != "+Inf" else []) + \
                 ([v] if "_seconds_sum" in line else []):
            if (decimal.Decimal(x) * 10 ** 9) % 1:
                noisy.append(line)
    check(not bad, "every value in its shortest form (%d lines): %s"
          % (len(text.splitlines()), bad[:3]))
    check(not noisy, "le labels and _sum in whole nanoseconds, no float "
          "noise: %s" % noisy[:3])


def test_process(text, pid):
    """process_*: as Prometheus's Python client reads the same process."""
    ref = {}
    for fam in ProcessCollector(pid=lambda: pid, registry=None).collect():
        for smp in fam.samples:
            ref[smp.name] = smp.value
    got = {n: value(text, n) for n in ref}
    check(set(ref) == {"process_cpu_seconds_total", "process_open_fds",
                       "process_max_fds", "process_virtual_memory_bytes",
                       "process_resident_memory_bytes",
                       "process_start_time_seconds"} and
          all(v is not None for v in got.values()),
          "process_*: the families Prometheus's clients export (%s)"
          % sorted(n for n, v in got.items() if v is not None))
    if any(v is None for v in got.values()):
        return
    check(abs(got["process_start_time_seconds"] -
              ref["process_start_time_seconds"]) < 0.011 and
          got["process_max_fds"] == ref["process_max_fds"] and
          abs(got["process_open_fds"] - ref["process_open_fds"]) <= 2 and
          abs(got["process_cpu_seconds_total"] -
              ref["process_cpu_seconds_total"]) < 0.5 and
          0.5 < got["process_virtual_memory_bytes"] /
          ref["process_virtual_memory_bytes"] < 2 and
          0.5 < got["process_resident_memory_bytes"] /
          ref["process_resident_memory_bytes"] < 2,
          "process_*: what the Python client reads for the same process "
          "(%s)" % ", ".join("%s %g/%g" % (n[8:], got[n], ref[n])
                             for n in sorted(ref)))
    gone = [n for n in ("magnetd_uptime_seconds", "magnet_event_cpu_events_total",
                        "magnet_latency_pending", "magnet_latency_expired_total",
                        "magnet_latency_overflow_total",
                        "magnetd_http_refused_total")
            if re.search("^" + n + "[ {]", text, re.M)]
    check(not gone, "the old names are gone: %s" % gone)


def test_http(base, port):
    def counters():
        t = get(base + "/metrics")[2].decode()
        return (value(t, "magnetd_scrapes_total"),
                value(t, "magnetd_http_requests_refused_total"),
                value(t, "magnet_events_total", 'event="exits"'))

    s0, r0, e0 = counters()
    st, hd, body = get(base + "/nosuch")
    check(st == 404 and b"/metrics" in body, "another path: 404")
    for m in ["POST", "PUT", "DELETE", "OPTIONS"]:
        st, hd, _ = get(base + "/metrics", method=m, data=b"x" if m in
                        ("POST", "PUT") else None)
        check(st == 405 and hd["Allow"] == "GET, HEAD",
              f"{m}: 405, Allow: GET, HEAD")
    st, hd, _ = get(base + "/metrics", method="GET", data=b"a body")
    check(st == 413, "a GET with a body: 413")
    st, hd, _ = get(base + "/metrics", {"X-Big": "a" * 40000})
    check(st == 431, "40 KB of headers: 431 (got %d)" % st)
    for req, code in [
            (b"GET /metrics HTTP/1.1\r\nHost: x\r\nNoColon\r\n\r\n", 400),
            (b"GET  HTTP/1.1\r\nHost: x\r\n\r\n", 400),
            (b"GET /metrics HTTP/1.1\r\nHost: x\r\n"
             b"Content-Length: abc\r\n\r\n", 400),
            (b"GET /metrics HTTP/1.1\r\nHost: x\r\n"
             b"Transfer-Encoding: chunked\r\n\r\nzz\r\n", 400),
            (b"GET /metrics HTTP/7.0\r\n\r\n", 505)]:
        ans = raw(port, req)
        check(ans.startswith(b"HTTP/1.1 %d" % code),
              "%r: %d (%r)" % (req[:40], code, ans[:24]))
    ans = raw(port, b"GARBAGE\r\n\r\n")
    check(ans == b"", "no request line at all: closed unanswered (%r)"
          % ans[:20])
    st, hd, body = get(base + "/metrics", method="HEAD")
    check(st == 200 and body == b"" and int(hd["Content-Length"]) > 0,
          "HEAD: the headers, no body")
    st, hd, body = get(base + "/?query=1")
    check(st == 200 and b'href="/metrics"' in body,
          "/: a page that links to /metrics")
    s1, r1, e1 = counters()
    check(s1 == s0 + 2 and e1 == e0,
          "bad requests changed nothing (scrapes %g -> %g: the HEAD and "
          "this one)" % (s0, s1))
    # 431 and 400 are libmicrohttpd's own answers: not seen by magnetd
    check(r1 - r0 == 6, "... and those magnetd answered (404, 405 x 4, "
          "413) are counted as refused (%g)" % (r1 - r0))

    # a stalled client: half a request, then nothing
    stall = socket.create_connection(("127.0.0.1", port))
    stall.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
    t0 = time.monotonic()
    st, _, _ = get(base + "/metrics")
    check(st == 200, "a scrape while a client stalls mid-request: served "
          "in %.2f s" % (time.monotonic() - t0))
    stall.settimeout(10)
    t0 = time.monotonic()
    try:
        got = stall.recv(100)
    except OSError:
        got = b""
    waited = time.monotonic() - t0
    check(got == b"" and waited < 8,
          "the stalled client is closed after the timeout (2 s): %.1f s"
          % waited)
    stall.close()

    # max-clients = 4: a fifth connection is served, and the one of 4 idle
    # ones that waited longest for a request is closed to make room
    idle = []
    for _ in range(4):
        idle.append(socket.create_connection(("127.0.0.1", port)))
        time.sleep(0.05)
    time.sleep(0.3)
    try:
        ans = raw(port, b"GET /metrics HTTP/1.0\r\n\r\n", wait=1.0)
    except OSError:
        ans = b""
    time.sleep(0.1)
    ended = [not is_open(s) for s in idle]
    check(ans.startswith(b"HTTP/1.1 200") and ended == [True] + [False] * 3,
          "max-clients 4: a fifth connection is served (%r), the oldest "
          "idle one closed to make room (ended: %s)" % (ans[:16], ended))
    for s in idle:
        s.close()
    time.sleep(0.3)
    st, _, _ = get(base + "/metrics")
    check(st == 200, "... and once they close, scrapes are served again")
    idle = [socket.create_connection(("127.0.0.1", port)) for _ in range(4)]
    time.sleep(3)
    st, _, _ = get(base + "/metrics")
    check(st == 200, "4 silent clients: once the timeout closed them, "
          "scrapes are served again")
    for s in idle:
        s.close()


def test_slowloris(base, port):
    """max-clients (4) connections send their headers a byte a second, under
    the idle timeout (2 s): a scrape is served while they trickle, and each
    is closed by the deadline (request-timeout, 3 s) after it opened."""
    conns = []
    for _ in range(4):
        s = socket.create_connection(("127.0.0.1", port))
        s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: ")
        conns.append({"s": s, "opened": time.monotonic(), "sent": 0,
                      "ended": None})
        time.sleep(0.05)
    scrape = []
    scraper = threading.Timer(1.2, lambda: scrape.append(
        status(base + "/metrics", 2)))
    scraper.start()
    t0 = time.monotonic()
    while (time.monotonic() - t0 < DEADLINE + 3 and
           any(c["ended"] is None for c in conns)):
        now = time.monotonic()
        for c in conns:
            if c["ended"] is not None:
                continue
            if not is_open(c["s"]):
                c["ended"] = now
            elif now - c["opened"] >= c["sent"] + 1:
                try:
                    c["s"].send(b"a")
                    c["sent"] += 1
                except OSError:
                    c["ended"] = now
        time.sleep(0.05)
    scraper.join()
    st, took = scrape[0]
    check(st == 200, "slowloris: a scrape while max-clients connections "
          "trickle their headers is served (%s in %.2f s)" % (st, took))
    lived = [c["ended"] - c["opened"] if c["ended"] else None for c in conns]
    check(all(x is not None and x <= DEADLINE + 0.5 for x in lived),
          "slowloris: each trickling connection is closed by the deadline "
          "(%d s), sending a byte a second: after %s s" % (DEADLINE, ", ".join(
              "%.1f" % x if x is not None else "never" for x in lived)))
    for c in conns:
        c["s"].close()


def test_flood(base, port):
    """2000 connections that send nothing, held open: a scrape right after
    them is served within the deadline."""
    silent = []
    for _ in range(2000):
        s = socket.socket()
        s.setblocking(False)
        try:
            s.connect(("127.0.0.1", port))
        except BlockingIOError:
            pass
        silent.append(s)
    st, took = status(base + "/metrics", DEADLINE + 1)
    check(st == 200 and took < DEADLINE,
          "silent flood: a scrape after 2000 silent connections is served "
          "within the deadline (%s in %.2f s)" % (st, took))
    for s in silent:
        s.close()
    time.sleep(0.3)


def test_long_query(port):
    """Query strings are ignored: any request line within the header limit
    is answered at once, a longer one gets 414; none is closed silently."""
    for query, want in [(b"a=1&" * 236, 200), (b"a=1&" * 1000, 200),
                        (b"a=1&" * 3000, 200), (b"&" * 12000, 200),
                        (b"a=1&" * 5000, 414)]:
        t0 = time.monotonic()
        ans = raw(port, b"GET /metrics?" + query + b" HTTP/1.1\r\nHost: x"
                  b"\r\nConnection: close\r\n\r\n", wait=DEADLINE + 1)
        took = time.monotonic() - t0
        check(ans.startswith(b"HTTP/1.1 %d" % want) and took < 1,
              "a query of %d bytes (%d '&'): %d at once (%r in %.2f s)"
              % (len(query), query.count(b"&"), want, ans[:24], took))
    st, took = status(f"http://127.0.0.1:{port}/?" + "x=1&" * 2000, 2)
    check(st == 200, "... / with 2000 arguments: the index page (%s in "
          "%.2f s)" % (st, took))


def cpu_seconds(pid):
    """User and system time of process @pid so far."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def close_wait(port):
    """Sockets on local port @port in CLOSE-WAIT (/proc/net/tcp)."""
    n = 0
    with open("/proc/net/tcp") as f:
        for line in f.readlines()[1:]:
            local, st = line.split()[1], line.split()[3]
            n += int(local.split(":")[1], 16) == port and st == "08"
    return n


def unix_snapshot(path):
    """Whether magnetd's socket greets a client and answers a snapshot."""
    u = socket.socket(socket.AF_UNIX)
    u.settimeout(2)
    out = b""
    try:
        u.connect(path)
        u.sendall(b"snapshot\n")
        while not out.endswith(b"\nend\n"):
            b = u.recv(65536)
            if not b:
                break
            out += b
    except OSError:
        pass
    u.close()
    return out.startswith(b"magnetd ") and out.endswith(b"\nend\n")


def test_descriptors(tmp):
    """A node with RLIMIT_NOFILE 64 (soft and hard) and max-clients 1024
    holds 200 idle connections from one client: it does not spin, logs a
    few lines, serves its Unix socket's clients and a scrape, and leaves
    nothing in CLOSE-WAIT once the clients close."""
    port = free_ports(1)[0]
    prom = "\tmax-clients = 1024\n\ttimeout = 30\n\trequest-timeout = 30"
    p, _ = start_node(tmp, "nofile", port, 3, 1000, 100000, prom=prom,
                      nofile=64)
    log = os.path.join(tmp, "nofile.log")
    conns = []
    try:
        for _ in range(200):
            s = socket.socket()
            s.setblocking(False)
            try:
                s.connect(("127.0.0.1", port))
            except BlockingIOError:
                pass
            conns.append(s)
        time.sleep(0.5)
        c0, t0 = cpu_seconds(p.pid), time.monotonic()
        served = sum(unix_snapshot(os.path.join(tmp, "nofile.conf.sock"))
                     for _ in range(3))
        st, took = status(f"http://127.0.0.1:{port}/metrics", 2)
        time.sleep(max(0, 3 - (time.monotonic() - t0)))
        used = cpu_seconds(p.pid) - c0
        wall = time.monotonic() - t0
        check(used < 0.3, "RLIMIT_NOFILE 64, 200 connections held: "
              "%.2f s of CPU in %.1f s (no spin)" % (used, wall))
        check(served == 3, "... the Unix socket's clients are served "
              "(%d of 3 snapshots)" % served)
        check(st == 200, "... and a scrape (%s in %.2f s)" % (st, took))
        with open(log, errors="replace") as f:
            lines = f.read().splitlines()
        check(len(lines) <= 10 and
              any("max-clients" in x and "descriptors" in x for x in lines),
              "... its log: %d lines, saying max-clients was lowered to fit "
              "the descriptors (%s)" % (len(lines), " | ".join(
                  x[:160] for x in lines[:4])))
        for s in conns[100:]:
            s.close()
        time.sleep(0.5)
        n = close_wait(port)
        check(n == 0, "... 100 of the connections closed by the client: "
              "none left in CLOSE-WAIT after 0.5 s (%d)" % n)
        for s in conns[:100]:
            s.close()
        conns = []
        time.sleep(0.5)
        n = close_wait(port)
        check(n == 0, "... all closed: none in CLOSE-WAIT after 0.5 s (%d)"
              % n)
    finally:
        for s in conns:
            s.close()
        p.terminate()
        p.wait()


def prom_query(port, q):
    """The query's result, or None while Prometheus is not answering yet."""
    url = f"http://127.0.0.1:{port}/api/v1/query?" + \
        urllib.parse.urlencode({"query": q})
    try:
        st, _, body = get(url)
    except (urllib.error.URLError, ConnectionError):
        return None     # (not listening yet: its start takes seconds on a busy host)
    if st != 200:
        return None
    return json.loads(body)["data"]["result"]


def test_prometheus(tmp, nodes, lat):
    pport = free_ports(1)[0]
    conf = os.path.join(tmp, "prometheus.yml")
    with open(conf, "w") as f:
        f.write("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
                "scrape_configs:\n  - job_name: magnet\n"
                "    static_configs:\n")
        for name, port in nodes:
            f.write(f"      - targets: ['127.0.0.1:{port}']\n"
                    f"        labels: {{node: {name}}}\n")
    r = subprocess.run(["promtool", "check", "config", conf],
                       capture_output=True, text=True)
    check(r.returncode == 0, "promtool check config: the test's own")
    log = open(os.path.join(tmp, "prometheus.log"), "w")
    prom = subprocess.Popen(["prometheus", "--config.file=" + conf,
                             "--storage.tsdb.path=" + os.path.join(tmp, "tsdb"),
                             f"--web.listen-address=127.0.0.1:{pport}"],
                            stdout=log, stderr=log)
    try:
        up = None
        for _ in range(60):
            time.sleep(1)
            up = prom_query(pport, "up")
            if up and len(up) == 2 and all(u["value"][1] == "1" for u in up):
                break
        check(up and len(up) == 2 and
              all(u["value"][1] == "1" for u in up),
              "Prometheus scrapes both nodes: up == 1 for both")
        time.sleep(2)
        res = prom_query(pport, 'scrape_samples_scraped')
        want = {name: sum(not l.startswith(b"#") for l in get(
            f"http://127.0.0.1:{port}/metrics")[2].splitlines())
            for name, port in nodes}
        check(res and len(res) == 2 and
              all(float(x["value"][1]) == want[x["metric"]["node"]]
                  for x in res),
              "... every sample of a scrape taken (%s, served %s)"
              % ([x["value"][1] for x in res or []], want))
        res = prom_query(pport, 'magnet_events_total{layer="socket"}')
        check(res and len(res) == 2 and
              all(float(x["value"][1]) == PAIRS + 4 for x in res) and
              all(x["metric"]["set"] == "udp-send" for x in res),
              "PromQL: magnet_events_total{layer=\"socket\"} per node = "
              "the records fed")
        every = lat["n1"] + lat["n2"]
        exact = exact_quantile(every, 0.99) / 1e9
        res = prom_query(pport, 'histogram_quantile(0.99, sum by (le) '
                         '(magnet_latency_seconds_bucket{latency="send"}))')
        est = float(res[0]["value"][1]) if res else float("nan")
        err = abs(est - exact) / exact
        check(err <= STATED_ERROR,
              "cluster p99 by histogram_quantile over both nodes: %.6f s, "
              "exact %.6f s: off by %.1f %% (stated: at most %.1f %%)"
              % (est, exact, 100 * err, 100 * STATED_ERROR))
        for name in ("n1", "n2"):
            exact = exact_quantile(lat[name], 0.99) / 1e9
            res = prom_query(pport, 'histogram_quantile(0.99, '
                             f'magnet_latency_seconds_bucket{{node="{name}"}})')
            est = float(res[0]["value"][1]) if res else float("nan")
            err = abs(est - exact) / exact
            check(err <= STATED_ERROR,
                  f"{name}'s p99: %.6f s, exact %.6f s (%.1f %%)"
                  % (est, exact, 100 * err))
        for q in (0.5, 0.9):
            exact = exact_quantile(every, q) / 1e9
            res = prom_query(pport, f'histogram_quantile({q}, sum by (le) '
                             '(magnet_latency_seconds_bucket))')
            est = float(res[0]["value"][1]) if res else float("nan")
            err = abs(est - exact) / exact
            check(err <= STATED_ERROR,
                  f"cluster p{int(q * 100)}: %.6f s, exact %.6f s (%.1f %%)"
                  % (est, exact, 100 * err))
    finally:
        prom.terminate()
        prom.wait()


def test_large(tmp):
    port = free_ports(1)[0]
    extra = "".join(f'probe p{i} {{ kind = kprobe\n target = "f{i}" }}\n'
                    for i in range(200))
    extra += "".join(f'latency l{i} {{ start = "p{2 * i}"\n'
                     f' end = "p{2 * i + 1}"\n key = id }}\n'
                     for i in range(50))
    p, _ = start_node(tmp, "large", port, 7, 1000, 1000000, extra)
    try:
        base = f"http://127.0.0.1:{port}"
        times = []
        for _ in range(5):
            t0 = time.monotonic()
            st, _, body = get(base + "/metrics")
            times.append(time.monotonic() - t0)
        check(st == 200, "a large configuration (200 probes, 51 latencies, "
              "4 CPUs): %d bytes, %d lines, best of 5 scrapes %.1f ms"
              % (len(body), body.count(b"\n"), 1000 * min(times)))
        r = subprocess.run(["promtool", "check", "metrics"], input=body,
                           capture_output=True)
        check(r.returncode == 0, "... promtool check metrics: clean")
    finally:
        p.terminate()
        p.wait()


def main():
    for prog in ("promtool", "prometheus"):
        if not shutil.which(prog):
            check(False, f"{prog} is installed (scripts/install-deps)")
            return summary()
    tmp = tempfile.mkdtemp(prefix="prometheus-test.")
    procs = []
    try:
        p1, p2 = free_ports(2)
        n1, lat1 = start_node(tmp, "n1", p1, 1, 2000, 5000000)
        procs.append(n1)
        n2, lat2 = start_node(tmp, "n2", p2, 2, 10000, 20000000)
        procs.append(n2)
        test_formats(f"http://127.0.0.1:{p1}", n1.pid)
        test_resolutions(tmp, f"http://127.0.0.1:{p1}")
        test_http(f"http://127.0.0.1:{p1}", p1)
        test_slowloris(f"http://127.0.0.1:{p1}", p1)
        test_flood(f"http://127.0.0.1:{p1}", p1)
        test_long_query(p1)
        test_prometheus(tmp, [("n1", p1), ("n2", p2)],
                        {"n1": lat1, "n2": lat2})
        test_large(tmp)
        test_descriptors(tmp)
    finally:
        for p in procs:
            p.terminate()
            p.wait()
        shutil.rmtree(tmp, ignore_errors=True)
    return summary()


sys.exit(main())
