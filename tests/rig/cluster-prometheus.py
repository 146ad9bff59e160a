#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""The cluster test's Prometheus part (tests/rig/cluster runs it).

Debian's Prometheus on the host has scraped both VM nodes' magnetd
(tests/cluster/node.sh) since before their traffic began; the nodes have
stopped sending and printed, on their consoles, how many datagrams they
sent and each received packet's dev-recv-to-app time as magnet-read
captured it. Checked here, against that real Prometheus:
  - both targets up; promtool check metrics on a real scrape of each node,
    the OpenMetrics parser on another;
  - each node's magnet_events_total{event="v6-sends"} is what it sent;
  - histogram_quantile(0.99, sum by (le) (rate(..._bucket[R]))) across
    both nodes (R covering all the traffic) is within the stated 25 %
    of the exact p99 of both nodes' captures, and so is the cumulative
    form; each node's count of pairs is its capture's;
  - the Grafana dashboard (conf/grafana/magnet.json): its structure, and
    every expression of its panels and variables returns data;
  - Prometheus's own graph page, in headless Chromium, for the cluster p99
    and the per-node send rates: the legend names both nodes, the query
    returned data; screenshots kept in ARTIFACTS.

usage: cluster-prometheus.py TOP PROM_PORT NODE1_PORT NODE2_PORT WORK ARTIFACTS
Prints "ok - ..." / "not ok - ..." lines; exits with the number failed.
"""
import json
import math
import os
import re
import shutil
import subprocess
import sys
import urllib.error
import urllib.parse
import urllib.request

import yaml
from prometheus_client.openmetrics.parser import \
    text_string_to_metric_families as om_parse

TOP, PPORT, N1, N2, WORK, ART = sys.argv[1:7]
NODES = {"node1": N1, "node2": N2}
STATED_ERROR = 0.25         # 4 buckets per doubling, magnetd.conf(5)
PROM = f"http://127.0.0.1:{PPORT}"
failed = 0


def check(cond, what):
    global failed
    print(("ok - " if cond else "not ok - ") + what)
    sys.stdout.flush()
    failed += 0 if cond else 1
    return cond


def get(url, headers=None):
    req = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=20) as r:
            return r.status, r.headers, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers, e.read()
    except OSError as e:
        return 0, {}, str(e).encode()


def query(q):
    st, _, body = get(PROM + "/api/v1/query?" +
                      urllib.parse.urlencode({"query": q}))
    if st != 200:
        return None
    return json.loads(body)["data"]["result"]


def node_console(name):
    """(sent, seconds sending, latencies) from the node's console log."""
    sent, secs, lat = None, None, []
    with open(os.path.join(WORK, name, "vm.log"), errors="replace") as f:
        for line in f:
            m = re.match(r"MAGNET-RIG: node \S+ sent for (\d+) s", line)
            if m:
                secs = int(m.group(1))
            m = re.match(r"MAGNET-RIG: node \S+ sent (\d+) datagrams", line)
            if m:
                sent = int(m.group(1))
            if line.startswith(f"MAGNET-RIG: latency {name} "):
                lat += [int(x) for x in line.split()[3:]]
    return sent, secs, lat


def exact_quantile(values, q):
    v = sorted(values)
    return v[max(0, math.ceil(q * len(v)) - 1)]


def scrapes():
    for name, port in NODES.items():
        st, _, body = get(f"http://127.0.0.1:{port}/metrics")
        r = subprocess.run(["promtool", "check", "metrics"], input=body,
                           capture_output=True)
        check(st == 200 and r.returncode == 0 and not r.stdout.strip() and
              not r.stderr.strip(),
              f"{name}: promtool check metrics on a real scrape: clean "
              + (r.stdout + r.stderr).decode().strip())
        st, _, body = get(f"http://127.0.0.1:{port}/metrics",
                          {"Accept": "application/openmetrics-text"})
        try:
            n = len(list(om_parse(body.decode())))
            check(st == 200 and n > 10,
                  f"{name}: OpenMetrics: the reference parser reads {n} families")
        except Exception as e:     # the parser's verdict is the test
            check(False, f"{name}: OpenMetrics refused: {e}")


def counts_and_quantiles():
    lat = {}
    for name in NODES:
        sent, secs, lat[name] = node_console(name)
        res = query(f'magnet_events_total{{event="v6-sends",node="{name}"}}')
        got = float(res[0]["value"][1]) if res else None
        check(sent is not None and got == sent,
              f"{name}: Prometheus's magnet_events_total{{event=\"v6-sends\"}}"
              f" = the datagrams it sent ({got} of {sent})")
        # rate x time: increase() over the whole run is the traffic, but
        # for Prometheus's extrapolation at the range's two ends (up to a
        # scrape interval, 2 s, each): within 4 s of the node's send rate
        res = query('increase(magnet_events_total{event="v6-sends",'
                    f'node="{name}"}}[1h])')
        inc = float(res[0]["value"][1]) if res else float("nan")
        per_s = sent / secs if sent and secs else 0
        check(sent is not None and abs(inc - sent) <= 4 * per_s,
              f"{name}: increase() of its sends over the run {inc:.1f}, "
              f"sent {sent} in {secs} s: off by {abs(inc - sent):.1f}, "
              f"within two scrape intervals' traffic ({4 * per_s:.1f})")
        res = query('magnet_latency_seconds_count{latency="udp_recv",'
                    f'node="{name}"}}')
        pairs = float(res[0]["value"][1]) if res else 0
        n = len(lat[name])
        check(n > 0 and abs(pairs - n) <= max(1, 0.01 * n),
              f"{name}: udp_recv pairs in Prometheus {pairs:.0f}, "
              f"in magnet-read's capture {n}")
    every = lat["node1"] + lat["node2"]
    if not check(len(every) > 100, f"latencies captured: {len(every)}"):
        return
    for q in (0.99, 0.9, 0.5):
        exact = exact_quantile(every, q) / 1e9
        for form, expr in [
                ("rate over all the traffic",
                 f'histogram_quantile({q}, sum by (le) (rate('
                 'magnet_latency_seconds_bucket{latency="udp_recv"}[1h])))'),
                ("cumulative",
                 f'histogram_quantile({q}, sum by (le) ('
                 'magnet_latency_seconds_bucket{latency="udp_recv"}))')]:
            if q != 0.99 and form != "cumulative":
                continue
            res = query(expr)
            est = float(res[0]["value"][1]) if res else float("nan")
            err = abs(est - exact) / exact
            check(err <= STATED_ERROR,
                  f"cluster p{int(q * 100)} of udp_recv ({form}): "
                  f"{est * 1e6:.1f} us, exact from both captures "
                  f"{exact * 1e6:.1f} us: off by {100 * err:.1f} % "
                  f"(stated: at most {100 * STATED_ERROR:.1f} %)")


def grafana():
    path = os.path.join(TOP, "conf/grafana/magnet.json")
    dash = json.load(open(path))
    prov = yaml.safe_load(open(os.path.join(TOP, "conf/grafana/provisioning.yaml")))
    check(prov.get("apiVersion") == 1 and
          prov["providers"][0]["type"] == "file" and
          prov["providers"][0]["options"]["path"],
          "Grafana: the provisioning file is a file provider with a path")
    panels = dash.get("panels", [])
    ids = [p.get("id") for p in panels]
    ok = (dash.get("uid") and dash.get("title") and
          isinstance(dash.get("schemaVersion"), int) and panels and
          len(set(ids)) == len(ids) and
          all(p.get("type") and p.get("title") and p.get("targets") and
              set(p.get("gridPos", {})) >= {"x", "y", "w", "h"} and
              all(t.get("expr") and t.get("refId") for t in p["targets"])
              for p in panels))
    check(ok, f"Grafana: the dashboard's structure ({len(panels)} panels, "
          "each with a type, title, place and targets)")
    types = {p["type"] for p in panels}
    check({"timeseries", "heatmap", "stat"} <= types,
          "Grafana: rates, a heatmap from the buckets, a health stat")
    # each variable as Grafana sets it first: "All" (its allValue) where
    # it has one, else the first value of its query
    subst = {"$__rate_interval": "1m"}
    for v in dash["templating"]["list"]:
        if v["type"] != "query":
            continue
        m = re.match(r"label_values\((\w+), *(\w+)\)", v["query"]["query"])
        st, _, body = get(PROM + f"/api/v1/label/{m.group(2)}/values?" +
                          urllib.parse.urlencode({"match[]": m.group(1)}))
        vals = json.loads(body)["data"] if st == 200 else []
        check(len(vals) >= 1, f"Grafana: variable {v['name']}: "
              f"{v['query']['query']} -> {vals}")
        subst["$" + v["name"]] = (v["allValue"] if v.get("includeAll")
                                  else (sorted(vals) or [""])[0])
    heat = [p for p in panels if p["type"] == "heatmap"]
    check(heat and all('latency="$heatmap_latency"' in t["expr"]
                       for p in heat for t in p["targets"]) and
          any(v["name"] == "heatmap_latency" and not v.get("multi") and
              not v.get("includeAll") for v in dash["templating"]["list"]),
          "Grafana: the heatmap shows one latency, a variable of one value "
          f"(first: {subst.get('$heatmap_latency')})")
    for p in panels:
        for t in p["targets"]:
            expr = t["expr"]
            for k, val in subst.items():
                expr = expr.replace(k, val)
            res = query(expr)
            check(res is not None and len(res) > 0,
                  f"Grafana: panel \"{p['title']}\" {t['refId']}: "
                  f"{len(res or [])} series")


def browser():
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if not check(chromium, "a browser: Debian's chromium"):
        return
    os.makedirs(ART, exist_ok=True)
    pages = [
        ("prometheus-p99",
         'histogram_quantile(0.99, sum by (le) (rate('
         'magnet_latency_seconds_bucket{latency="udp_recv"}[1m])))',
         None),
        ("prometheus-send-rates",
         'rate(magnet_events_total{event="v6-sends"}[1m])',
         ("node1", "node2")),
    ]
    for name, expr, nodes in pages:
        url = PROM + "/graph?" + urllib.parse.urlencode(
            {"g0.expr": expr, "g0.tab": "0", "g0.range_input": "2m"})
        common = [chromium, "--headless=new", "--no-sandbox", "--disable-gpu",
                  "--virtual-time-budget=20000", "--window-size=1400,900"]
        dom = subprocess.run(common + ["--dump-dom", url],
                             capture_output=True, text=True, timeout=120).stdout
        png = os.path.join(ART, name + ".png")
        subprocess.run(common + [f"--screenshot={png}", url],
                       capture_output=True, timeout=120)
        with open(os.path.join(ART, name + ".html"), "w") as f:
            f.write(dom)
        legend = re.findall(r'<span class="label">([^<]*)</span>', dom)
        check(legend and
              (not nodes or all(any(f'node="{n}"' in l.replace("&quot;", '"')
                                    for l in legend) for n in nodes)),
              f"Chromium: Prometheus's graph of {expr}: the query returned "
              f"{len(legend)} series" +
              (", the legend names both nodes" if nodes else ""))
        check(os.path.getsize(png) > 10000 if os.path.exists(png) else False,
              f"... screenshot {png}")


def main():
    res = query("up")
    check(res and len(res) == 2 and all(r["value"][1] == "1" for r in res),
          "Prometheus on the host scrapes both nodes: up == 1 for both")
    scrapes()
    counts_and_quantiles()
    grafana()
    browser()
    return failed


sys.exit(main())
