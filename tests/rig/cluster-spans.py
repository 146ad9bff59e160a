#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""The cluster test's requests across the nodes, as traces.

Usage: cluster-spans.py SPANS.otlp HTTP.tp NBD.tp

SPANS.otlp is magnet-read --otlp of the two nodes' files read as one
(-r node1's -r node2's); HTTP.tp the traceparent each of node1's curl
requests carried, NBD.tp the traceparent of each of its 64 KiB writes'
spans (magnet-test span-write). Checks, printing "ok - ..." or
"not ok - ...":

- each HTTP request's trace is whole: its GET a span whose parent is the
  span its traceparent names, with layers on both nodes (node1's send,
  node2's receive, lighttpd's read); the reply the GET's child, with
  layers on both nodes; at least 99 % of the requests;
- each write's trace is whole on node1's side: the span "write", its
  block I/O, and its request to node2 (a packet with both nodes' layers)
  beneath it (sent in the writer's call, or by the driver's worker that
  issued the I/O); at least 99 % of the writes (node2's block I/O in
  them is counted, not held to: see the check);
- no span of any trace starts before its parent.
"""
import json
import sys


def spans(path):
    """Each span, with its resource's host.name."""
    out = []
    with open(path) as f:
        for line in f:
            req = json.loads(line)
            for rs in req["resourceSpans"]:
                res = {a["key"]: list(a["value"].values())[0]
                       for a in rs["resource"]["attributes"]}
                for ss in rs["scopeSpans"]:
                    for s in ss["spans"]:
                        s["host"] = res.get("host.name")
                        s["service"] = res.get("service.name")
                        s["attrs"] = {a["key"]: list(a["value"].values())[0]
                                      for a in s.get("attributes", [])}
                        out.append(s)
    return out


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    all_spans = spans(sys.argv[1])
    by_id = {s["spanId"]: s for s in all_spans}
    children = {}
    for s in all_spans:
        children.setdefault(s.get("parentSpanId"), []).append(s)
    failed = 0

    def check(ok, what):
        nonlocal failed
        print("%s - %s" % ("ok" if ok else "not ok", what))
        failed += not ok

    def layer_hosts(s):
        return {c["host"] for c in children.get(s["spanId"], [])
                if "magnet.layer" in c["attrs"]}

    def under(s, top):
        """Is @s a descendant of span @top?"""
        seen = 0
        while s and seen < 64:
            p = s.get("parentSpanId")
            if p == top:
                return True
            s, seen = by_id.get(p), seen + 1
        return False

    def journey(s):
        return "magnet.layer" not in s["attrs"] and "magnet.packet" in s["attrs"]

    # HTTP: the GET's span is the child of the traceparent's span
    tps = [l.split("-") for l in open(sys.argv[2]).read().split()]
    whole = 0
    for _, trace, parent, _ in tps:
        gets = [s for s in children.get(parent, [])
                if s["traceId"] == trace and journey(s)]
        ok = False
        for g in gets:
            replies = [r for r in children.get(g["spanId"], []) if journey(r)]
            if len(layer_hosts(g)) == 2 and any(len(layer_hosts(r)) == 2
                                                for r in replies):
                ok = True
        whole += ok
    n = len(tps)
    check(n > 0 and whole >= 0.99 * n,
          "HTTP: %d of %d requests a whole trace: the GET the child of its "
          "traceparent's span, across both nodes, the reply its child, "
          "across both" % (whole, n))

    # NBD: each write's span holds node1's block I/O and its request to
    # node2 (joined: both nodes' layers). node2's block I/O joins it
    # through nbd-server's process (its worker thread writes what its
    # reading thread read, handed over in user space): counted, not held
    # to, since which request's trace the process is in when its worker
    # writes is the latest one it read (magnet-read(1), SPANS)
    tps = [l.split("-") for l in open(sys.argv[3]).read().split()]
    whole = server = 0
    for _, trace, span, _ in tps:
        in_trace = [s for s in all_spans if s["traceId"] == trace]
        w = by_id.get(span)
        blocks = {s["host"] for s in in_trace
                  if s["name"].startswith("block ")}
        crossing = any(journey(s) and len(layer_hosts(s)) == 2 and
                       under(s, span) for s in in_trace)
        whole += bool(w and w["name"] == "write" and "node1" in blocks and
                      crossing)
        server += "node2" in blocks
    n = len(tps)
    check(n > 0 and whole >= 0.99 * n,
          "NBD: %d of %d writes a whole trace on node1's side: the span, "
          "its block I/O, its request across to node2 beneath it "
          "(node2's block I/O in %d of them)" % (whole, n, server))

    # no child before its parent
    bad = [s for s in all_spans if s.get("parentSpanId") in by_id and
           int(s["startTimeUnixNano"]) <
           int(by_id[s["parentSpanId"]]["startTimeUnixNano"])]
    check(not bad, "no span starts before its parent (%d spans, %d do)" %
          (len(all_spans), len(bad)))
    for s in bad[:3]:
        p = by_id[s["parentSpanId"]]
        print("#   %s %s at %s, its parent %s %s at %s" % (
            s["host"], s["name"], s["startTimeUnixNano"], p["host"],
            p["name"], p["startTimeUnixNano"]))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
