#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Check a file against Chrome's Trace Event Format (the JSON Object
Format: https://docs.google.com/document/d/1CvAClvFfyA5R-PhYUmn5OOQtYMH4h6I0nSsKchNAySU),
as far as magnet-read --perfetto uses it, and as viewers need it:

- an object with a "traceEvents" array (displayTimeUnit "ms" or "ns");
- every event: a known phase "ph", an integer "pid"; but for metadata,
  a number "ts" >= 0 and a string "name";
- complete events ("X"): an integer "tid", a number "dur" >= 0; on each
  track (pid, tid) the slices nest, never overlap in part (viewers drop
  or misdraw those);
- flow events ("s", "t", "f"): an "id", "cat" and "name"; each id one
  "s" and one "f", in that order of time, with the same cat and name;
  each bound to a slice of its track: "s" and a "bp":"e" "f" to the one
  that encloses its time, any other "f" to the next one that starts at
  or after it;
- metadata ("M"): process_name and thread_name with args.name a string,
  *_sort_index with an integer args.sort_index.

Usage: trace_event_check.py FILE    prints "ok - ..." / "not ok - ..."
lines and a summary line "slices N flows F tracks T"; exits 1 on an error.
"""
import json
import sys

PHASES = set("BEXIsStTfFpPOMNDbenNcRC(),") | {"(", ")"}


def main(path):
    errors = []

    def err(msg):
        if len(errors) < 20:
            errors.append(msg)

    with open(path) as f:
        doc = json.load(f)
    if not isinstance(doc, dict) or not isinstance(doc.get("traceEvents"), list):
        print("not ok - not an object with a traceEvents array")
        return 1
    if doc.get("displayTimeUnit", "ms") not in ("ms", "ns"):
        err("displayTimeUnit %r" % doc.get("displayTimeUnit"))
    tracks, flows = {}, {}
    names = {}
    num = (int, float)
    for i, e in enumerate(doc["traceEvents"]):
        where = "event %d" % i
        if not isinstance(e, dict):
            err("%s: not an object" % where)
            continue
        ph = e.get("ph")
        if ph not in PHASES:
            err("%s: phase %r" % (where, ph))
            continue
        if not isinstance(e.get("pid"), int):
            err("%s: pid %r" % (where, e.get("pid")))
        if ph == "M":
            a = e.get("args")
            if e.get("name") in ("process_name", "thread_name"):
                if not isinstance(a, dict) or not isinstance(a.get("name"), str):
                    err("%s: %s without args.name" % (where, e.get("name")))
                elif e["name"] == "thread_name":
                    names[(e["pid"], e.get("tid"))] = a["name"]
            elif str(e.get("name")).endswith("_sort_index"):
                if not isinstance(a, dict) or not isinstance(a.get("sort_index"), int):
                    err("%s: %s without an integer args.sort_index" % (where, e.get("name")))
            continue
        if not isinstance(e.get("ts"), num) or e["ts"] < 0:
            err("%s: ts %r" % (where, e.get("ts")))
            continue
        if not isinstance(e.get("name"), str):
            err("%s: name %r" % (where, e.get("name")))
        if ph == "X":
            if not isinstance(e.get("tid"), int):
                err("%s: tid %r" % (where, e.get("tid")))
            if not isinstance(e.get("dur"), num) or e["dur"] < 0:
                err("%s: dur %r" % (where, e.get("dur")))
                continue
            tracks.setdefault((e["pid"], e.get("tid")), []).append(
                (e["ts"], e["ts"] + e["dur"], i))
        elif ph in "stf":
            if "id" not in e or not isinstance(e.get("cat"), str):
                err("%s: a flow event without id or cat" % where)
                continue
            flows.setdefault((e["cat"], e["name"], e["id"]), []).append(e)
    # slices of a track nest (times are decimal microseconds: to a
    # thousandth of a nanosecond)
    eps = 1e-6
    for t, sl in tracks.items():
        sl.sort(key=lambda s: (s[0], -s[1]))
        stack = []
        for s in sl:
            while stack and stack[-1][1] <= s[0] + eps and not (
                    abs(stack[-1][1] - s[0]) <= eps and
                    abs(stack[-1][0] - s[0]) <= eps):
                stack.pop()
            if stack and s[1] > stack[-1][1] + eps:
                err("track %r: slices of events %d and %d overlap in part"
                    % (t, stack[-1][2], s[2]))
            stack.append(s)
    # flows: one s, one f, bound to slices of their tracks

    def encloses(track, ts):
        return any(a - eps <= ts <= b + eps for a, b, _ in tracks.get(track, []))

    def starts_at_or_after(track, ts):
        return any(a >= ts - eps for a, _, _ in tracks.get(track, []))

    for key, evs in flows.items():
        s = [e for e in evs if e["ph"] == "s"]
        f = [e for e in evs if e["ph"] == "f"]
        if len(s) != 1 or len(f) != 1:
            err("flow %r: %d starts, %d ends" % (key, len(s), len(f)))
            continue
        s, f = s[0], f[0]
        if f["ts"] < s["ts"]:
            err("flow %r ends before it starts" % (key,))
        if not encloses((s["pid"], s.get("tid")), s["ts"]):
            err("flow %r: no slice encloses its start" % (key,))
        bind = encloses if f.get("bp") == "e" else starts_at_or_after
        if not bind((f["pid"], f.get("tid")), f["ts"]):
            err("flow %r: no slice to bind its end to" % (key,))
    for t in tracks:
        if t not in names:
            err("track %r has no thread_name" % (t,))
    for e in errors:
        print("not ok - %s" % e)
    if not errors:
        print("ok - %s: the trace-event format" % path)
    print("slices %d flows %d tracks %d" % (sum(len(v) for v in tracks.values()),
                                           len(flows), len(tracks)))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
