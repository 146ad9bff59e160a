#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""bench/report.py: bench/RESULTS.md and bench/plots/*.png from bench/results/*.json.

A renderer and nothing else: it reads the results files bench/collect.py
writes (their schema is in bench/README.md) and no other input, so the
same files always give the same RESULTS.md and plots, byte for byte.
Each section says when, on what tree, kernel and machine its figures were
measured, from its own file. A file whose runs were not kept
("summary_only") carries the figures as they were recorded ("summary"),
and its section shows them as such; for the others the summary is worked
out here from every run: medians, ranges, ratios of same-numbered runs,
the bootstrap intervals (a fixed seed).
"""
import argparse
import glob
import json
import math
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

# What each case is, in the order of the tables.
CASES = [
    ("none", "no probe", "-"),
    ("kprobe-empty", "kprobe, empty handler (the floor)", "kernel"),
    ("ftrace-ops-empty", "ftrace_ops, empty callback, no saved registers", "kernel"),
    ("ftrace-ops-guarded", "the same, taking only the recursion lock and RCU check", "kernel"),
    ("ftrace-ops-clocked", "the same, also reading the clock magnet's records take", "kernel"),
    ("ftrace-ops-local-clocked", "the same, reading ftrace's trace clock instead", "kernel"),
    ("tracepoint-empty", "sys_enter tracepoint, empty handler (its floor)", "kernel"),
    ("magnet-kprobe-filtered", "kprobe, event dropped by a filter rule", "magnet"),
    ("magnet-kprobe", "kprobe, 40 B record, reader draining", "magnet"),
    ("magnet-kprobe-kdispatch", "the same through the kernel's kprobe", "magnet"),
    ("magnet-log-32", "kprobe logging 32 B, reader draining", "magnet"),
    ("magnet-log-256", "kprobe logging 256 B, reader draining", "magnet"),
    ("magnet-log-4096", "kprobe logging 4 KiB, reader draining", "magnet"),
    ("magnet-tracepoint", "sys_enter tracepoint, reader draining", "magnet"),
    ("magnet-kretprobe", "kretprobe, reader draining", "magnet"),
    ("ftrace-kprobe", "kprobe event, trace-cmd recording", "ftrace"),
    ("ftrace-tracepoint", "raw_syscalls:sys_enter, trace-cmd recording", "ftrace"),
    ("ftrace-kretprobe", "kretprobe event, trace-cmd recording", "ftrace"),
    ("lttng-kprobe", "kprobe event, lttng recording", "lttng"),
    ("bpftrace-kprobe-count", "kprobe, count() in the kernel", "bpftrace"),
    ("bpftrace-kprobe-printf", "kprobe, printf() per event", "bpftrace"),
    ("bpftrace-kretprobe-count", "kretprobe, count() in the kernel", "bpftrace"),
]

# magnet against the reference tools: (magnet case, reference case).
PAIRS = [
    ("magnet-kprobe-filtered", "kprobe-empty"),
    ("magnet-kprobe-filtered", "ftrace-ops-empty"),
    ("magnet-kprobe-filtered", "ftrace-ops-guarded"),
    ("ftrace-ops-guarded", "ftrace-ops-empty"),
    ("magnet-kprobe", "kprobe-empty"),
    ("magnet-kprobe", "ftrace-ops-clocked"),
    ("magnet-kprobe", "ftrace-kprobe"),
    ("magnet-kprobe-kdispatch", "ftrace-kprobe"),
    ("magnet-kprobe", "magnet-kprobe-kdispatch"),
    ("magnet-kprobe", "lttng-kprobe"),
    ("magnet-kprobe", "bpftrace-kprobe-printf"),
    ("magnet-kprobe", "bpftrace-kprobe-count"),
    ("magnet-log-32", "ftrace-kprobe"),
    ("magnet-log-256", "ftrace-kprobe"),
    ("magnet-log-4096", "ftrace-kprobe"),
    ("magnet-tracepoint", "ftrace-tracepoint"),
    ("magnet-tracepoint", "tracepoint-empty"),
    ("magnet-kretprobe", "ftrace-kretprobe"),
    ("magnet-kretprobe", "bpftrace-kretprobe-count"),
]

# The per-event targets magnet is held to: (magnet case, reference case,
# the largest ratio of added costs that meets it).
TARGETS = [
    ("magnet-kprobe-filtered", "kprobe-empty", 1.0),
    ("magnet-kprobe-filtered", "ftrace-ops-empty", 1.5),
    ("magnet-kprobe", "ftrace-kprobe", 0.45),
    ("magnet-kprobe", "lttng-kprobe", 0.6),
    ("magnet-tracepoint", "ftrace-tracepoint", 0.9),
    ("magnet-kretprobe", "ftrace-kretprobe", 0.9),
]

# Scaling: (case, what, its no-probe case, events per call).
SCALING = [
    ("magnet-1cpu", "magnet kprobe, one CPU calling", "none-1cpu", 1),
    ("magnet-2cpu", "magnet kprobe, both CPUs calling", "none-2cpu", 1),
    ("ftrace-1cpu", "ftrace kprobe event, one CPU calling", "none-1cpu", 1),
    ("ftrace-2cpu", "ftrace kprobe event, both CPUs calling", "none-2cpu", 1),
    ("magnet-filtered-1cpu", "magnet kprobe, event dropped by a filter rule, one CPU calling", "none-1cpu", 1),
    ("magnet-filtered-2cpu", "the same, both CPUs calling", "none-2cpu", 1),
    ("kprobe-empty-1cpu", "kprobe, empty handler, one CPU calling", "none-1cpu", 1),
    ("kprobe-empty-2cpu", "the same, both CPUs calling", "none-2cpu", 1),
    ("ftrace-ops-clocked-1cpu", "ftrace_ops reading magnet's clock, one CPU calling", "none-1cpu", 1),
    ("ftrace-ops-clocked-2cpu", "the same, both CPUs calling", "none-2cpu", 1),
    ("magnet-4-probes-1-buffer", "magnet, 4 kprobes into 1 buffer", "none-1cpu", 4),
    ("magnet-4-probes-4-buffers", "magnet, 4 kprobes into 4 buffers", "none-1cpu", 4),
    ("magnet-16-probes-1-buffer", "magnet, 16 kprobes into 1 buffer", "none-1cpu", 16),
    ("magnet-16-probes-16-buffers", "magnet, 16 kprobes into 16 buffers", "none-1cpu", 16),
]

# Sessions: (case, what, sessions or probes on the function).
SESSIONS = [
    ("default-1", "1 probe in the default session", 1),
    ("sessions-1", "1 session, its probe", 1),
    ("sessions-2", "2 sessions, a probe each", 2),
    ("sessions-4", "4 sessions, a probe each", 4),
    ("default-2", "2 probes in the default session", 2),
    ("default-4", "4 probes in the default session", 4),
]


# The stream benchmark's cases: (experiment, case, what).
STREAM = [
    ("paper", "none", "nothing capturing"),
    ("paper", "magnet-1-events-snap-96", "magnet, 1 event per packet, 96 B each"),
    ("paper", "magnet-2-events-snap-96", "magnet, 2 events per packet, 96 B each"),
    ("paper", "magnet-4-events-snap-96", "magnet, 4 events per packet, 96 B each"),
    ("paper", "magnet-1-events-snap-4000", "magnet, 1 event per packet, 4000 B"),
    ("paper", "magnet-1-events-snap-4000-wm64k", "the same, magnet-read woken per 64 KiB (default: a quarter of the ring, 1 MiB)"),
    ("paper", "tcpdump-snap-96", "tcpdump -s 96"),
    ("paper", "tcpdump-snap-500", "tcpdump -s 500"),
    ("paper", "tcpdump-snap-1000", "tcpdump -s 1000"),
    ("paper", "tcpdump-snap-2000", "tcpdump -s 2000"),
    ("paper", "tcpdump-snap-4000", "tcpdump -s 4000"),
    ("filter", "none", "nothing capturing"),
    ("filter", "magnet-thread", "magnet -s 96 at dev-xmit, tgid rule: the monitored sender"),
    ("filter", "magnet-expression", "magnet -s 96 at dev-xmit, packet rule: udp dst port 5001, in the kernel"),
    ("filter", "magnet-unfiltered", "magnet -s 96 at dev-xmit, no rule"),
    ("filter", "tcpdump-port", "tcpdump -s 96 udp port 5001"),
    ("filter", "tcpdump-unfiltered", "tcpdump -s 96, no filter"),
    ("sampling", "every-1", "every hit"),
    ("sampling", "every-2", "one hit in 2"),
    ("sampling", "every-4", "one hit in 4"),
    ("sampling", "every-16", "one hit in 16"),
    ("sampling", "every-64", "one hit in 64"),
]


PFILTER = [
    ("header-drop", "header rule (proto udp dport 5001)"),
    ("packet-drop", "packet rule, tcpdump's language: udp dst port 5001"),
    ("packet-drop-long", "packet rule, a longer expression (4 clauses)"),
    ("packet-drop-interp", "packet rule, udp dst port 5001 and greater 0 (interpreted)"),
    ("tcpdump-drop", "tcpdump's own filter on the device: udp dst port 5001"),
]


PFILTER_INSNS_INTRO = (
    "The same benchmark (section 5's cases, setup and runs) in a boot under "
    "QEMU's instruction counter (bench/run pfilter with BENCH_CLOCK=icount; "
    "-icount shift=0, one vCPU): the guest's clock advances one nanosecond "
    "per instruction it runs, so each figure is the instructions a sendto() "
    "call ran, kernel and user, and is the same from run to run to an "
    "instruction or so, where section 5's timed figures "
    "move by up to half between setups. It counts what each tool's code does "
    "and nothing of what its memory accesses would cost on hardware (cache "
    "and TLB misses). Read it beside section 5, not instead of it.\n")


STREAM_INSNS_INTRO = (
    "Figure 8 in a boot under QEMU's instruction counter (bench/run stream with "
    "BENCH_CLOCK=icount and BENCH_STREAM_EXPERIMENTS=filter; -icount shift=0, one "
    "vCPU): the guest's clock advances one nanosecond per instruction, so a "
    "stream's Mbit/s are its bits per thousand million instructions the guest "
    "ran, and everything shares the one CPU: both senders, both receivers and "
    "the capturing tool, so whatever a tool spends on a packet of either stream "
    "comes out of the monitored one. The host's noise does not reach these "
    "figures; what they do not count is what memory accesses cost (see "
    "section 6). %d runs.\n")



# --- figures ---------------------------------------------------------------

def spread(values):
    """[median, lowest, highest]: how every summary holds a spread."""
    values = list(values)
    return [statistics.median(values), min(values), max(values)]


def fmt_spread(s, fmt):
    """median (lowest–highest), each printed with fmt; the median alone
    where the three print alike."""
    med, lo, hi = s
    if fmt % lo == fmt % hi:
        return fmt % med
    return (fmt + " (" + fmt + "–" + fmt + ")") % (med, lo, hi)


def by_run(values):
    """A case's runs ([RUN_1, RUN_2, ...], null where missing): {run: value}."""
    return {i + 1: v for i, v in enumerate(values or []) if v is not None}


def plot(plots, name, script, data):
    """plots/NAME.png from a gnuplot script (its data file: {data})."""
    with tempfile.TemporaryDirectory() as tmp:
        dat = os.path.join(tmp, name + ".dat")
        with open(dat, "w") as f:
            f.write(data)
        png = os.path.join(plots, name + ".png")
        text = script.replace("{png}", png).replace("{data}", dat)
        ok = subprocess.run(["gnuplot"], input=text, text=True).returncode == 0
    return ok


# --- where each file's figures come from ---------------------------------------

def provenance(doc, path):
    """The lines that say where a section's figures come from."""
    c = doc.get("commit")
    if c:
        tree = "commit %s%s" % (c["hash"][:12], (" (%s)" % c["describe"]) if c.get("describe")
                                and not c["hash"].startswith(c["describe"].split("-dirty")[0])
                                else "")
        tree += ", with changes to tracked files not committed" if c.get("dirty") else ""
    else:
        tree = "a commit not recorded"
    m = doc.get("machine") or {}
    date = doc["date"].replace("T", " ").replace("Z", " UTC")
    out = ["- `%s`: measured %s on %s" % (path, date, tree)]
    out.append("- kernel %s, %s vCPU%s under %s; host: %s, %s CPUs" % (
        doc.get("kernel") or "?", m.get("vcpus") or "?", "" if m.get("vcpus") == 1 else "s",
        m.get("qemu") or "QEMU", m.get("host_cpu") or "?", m.get("host_cpus") or "?"))
    clock = {"tsc": "the TSC (booted with tsc=reliable, as hardware runs)",
             "hpet": "the HPET (booted with clocksource=hpet)",
             "icount": "QEMU's instruction counter (BENCH_CLOCK=icount): the guest's "
                       "clock counts the instructions it runs"}.get(doc["clock"], doc["clock"])
    info = doc.get("info") or {}
    cs = info.get("clocksource")
    if cs and doc["clock"] != "icount":
        clock += "; clocksource in use: %s%s" % (
            cs, "" if cs == doc["clock"] else
            " — NOT the TSC: every timestamp pays an emulated device read, which "
            "hardware does not" if doc["clock"] == "tsc" else "")
    out.append("- clock: " + clock)
    params = doc.get("parameters") or {}
    if params:
        out.append("- parameters: " + ", ".join("%s %s" % kv for kv in params.items()))
    mit = ["%s: %s" % (k[len("mitigation-"):], v) for k, v in sorted(info.items())
           if k.startswith("mitigation-")]
    if mit:
        out.append("- the guest kernel's mitigations on the emulated CPU, which every "
                   "tool's calls and returns pay: %s" % "; ".join(mit))
    if doc.get("summary_only"):
        out.append("- **a recorded summary**: the runs behind these figures were not kept; "
                   "the medians, ranges and ratios are shown as they were recorded. %s"
                   % doc.get("source", ""))
    out.append("")
    return out


def collapse_runs(lines):
    """Lines that differ only in their run number ("CASE run N: TEXT")
    become one, with the runs that said it."""
    out, said = [], {}
    for line in lines:
        m = re.match(r"(.*) run (\d+): (.*)$", line)
        if not m:
            out.append(line)
            continue
        key = (m.group(1), m.group(3))
        if key not in said:
            said[key] = []
            out.append(key)
        said[key].append(int(m.group(2)))

    def runs_of(n):
        n = sorted(n)
        return "run %d" % n[0] if len(n) == 1 else \
            "runs %d-%d" % (n[0], n[-1]) if n == list(range(n[0], n[-1] + 1)) else \
            "runs " + ",".join(map(str, n))
    return [x if isinstance(x, str) else "%s, %s: %s" % (x[0], runs_of(said[x]), x[1])
            for x in out]


def remarks(doc):
    """What the benchmark printed besides its figures, and what it could
    not measure."""
    out = []
    if doc.get("unavailable"):
        out.append("Not measured in this boot:\n")
        out.extend("- %s: %s" % (u["tool"], u["reason"]) for u in doc["unavailable"])
        out.append("")
    if doc.get("remarks"):
        out.append("What the benchmark said in this boot (runs that said the same joined):\n")
        out.append("```")
        out.extend(collapse_runs(doc["remarks"]))
        out.append("```\n")
    return out


# --- 1. cost per event ---------------------------------------------------------

def cost_summary(doc):
    runs = {c: by_run(v) for c, v in doc["runs"].items()}
    base_runs = list(runs.get("none", {}).values()) + list(runs.get("none-after", {}).values())
    if not base_runs:
        return None
    base = statistics.median(base_runs)
    rows = {}
    for case, _, _ in CASES:
        r = runs.get(case)
        if r:
            added = {i: v - base for i, v in r.items()}
            rows[case] = {"runs": added, "ns": spread(r.values()), "added": spread(added.values())}
    floor = rows.get("kprobe-empty", {}).get("added", (0, 0, 0))[0]
    readers = doc.get("readers") or {}
    cases = []
    for case, _, _ in CASES:
        if case not in rows:
            continue
        rd = readers.get(case)
        cases.append({
            "case": case, "ns": rows[case]["ns"],
            "added": None if case == "none" else rows[case]["added"],
            "x_empty": rows[case]["added"][0] / floor if floor > 0 and case != "none" else None,
            "lost": None if not rd else [rd["lost"]] if rd["read"] is None else
            [rd["lost"], rd["read"] + rd["lost"]]})

    def ratio(a, b):
        """Added cost of a over that of b: the ratio of medians, and the
        range of the ratios of same-numbered runs."""
        ra, rb = rows.get(a), rows.get(b)
        if not ra or not rb or rb["added"][0] <= 0:
            return None
        per_run = [ra["runs"][i] / rb["runs"][i] for i in ra["runs"]
                   if i in rb["runs"] and rb["runs"][i] > 0]
        med = ra["added"][0] / rb["added"][0]
        return [med, min(per_run), max(per_run)] if per_run else [med, med, med]
    ratios = [[a, b] + ratio(a, b) for a, b in PAIRS if ratio(a, b)]
    targets = []
    for a, b, limit in TARGETS:
        r = ratio(a, b)
        targets.append([a, b, limit, r[0] if r else None,
                        100 * (r[0] / limit - 1) if r and r[0] > limit else None])
    med = {c: rows[c]["added"][0] for c in rows}

    def have(*c):
        return all(x in med for x in c)
    s = {"nruns": max(len(v) for v in runs.values()), "base": base, "cases": cases,
         "ratios": ratios, "targets": targets,
         "filtered_breakdown": None, "logged_breakdown": None, "clocks": None,
         "tracepoint": None, "hpet": None,
         "missing": [c for c, _, _ in CASES if c not in rows]}
    if have("ftrace-ops-empty", "ftrace-ops-guarded", "magnet-kprobe-filtered"):
        e, g, f = med["ftrace-ops-empty"], med["ftrace-ops-guarded"], med["magnet-kprobe-filtered"]
        s["filtered_breakdown"] = {"filtered": f, "empty": e, "guards": g - e, "magnet": f - g}
    if have("ftrace-ops-guarded", "ftrace-ops-clocked", "magnet-kprobe-filtered", "magnet-kprobe"):
        g, c = med["ftrace-ops-guarded"], med["ftrace-ops-clocked"]
        f, lg = med["magnet-kprobe-filtered"], med["magnet-kprobe"]
        s["logged_breakdown"] = {"logged": lg, "guarded": g, "gate": f - g, "clock": c - g,
                                 "record": lg - f - (c - g)}
        if have("ftrace-ops-local-clocked"):
            s["clocks"] = {"magnet": c - g, "ftrace": med["ftrace-ops-local-clocked"] - g}
        if have("tracepoint-empty", "magnet-tracepoint", "ftrace-tracepoint"):
            e, mine, theirs = (med[x] for x in ("tracepoint-empty", "magnet-tracepoint",
                                                "ftrace-tracepoint"))
            s["tracepoint"] = {"floor": e, "magnet": mine - e, "ftrace": theirs - e,
                               "ratio": (mine - e) / (theirs - e) if theirs > e else None}
    none, kp = runs.get("none-hpet"), runs.get("magnet-kprobe-hpet")
    if none and kp and "magnet-kprobe" in rows:
        hbase = statistics.median(none.values())
        added = spread(v - hbase for v in kp.values())
        s["hpet"] = {"tsc_base": statistics.median(runs["none"].values()),
                     "tsc_added": rows["magnet-kprobe"]["added"],
                     "base": spread(none.values()), "added": added,
                     "extra": added[0] - rows["magnet-kprobe"]["added"][0]}
    return s


def cost_section(doc, path, plots):
    out = ["## 1. Cost per event\n"] + provenance(doc, path)
    s = doc["summary"] if doc.get("summary_only") else cost_summary(doc)
    if s is None:
        return out + ["No figures: the no-probe loop has no runs.\n"]
    out.append("getppid() in a tight loop on CPU 0, %s timed runs per case after one "
               "warm-up run; readers on CPU 1. Every figure is the median of the runs, "
               "with the lowest and highest in brackets.\n" % s["nruns"])
    out.append("The bare call took %.0f ns (median of the runs before and after "
               "everything else). Readers: magnet-read `--trace` on 4 MiB overwrite-mode "
               "buffers per CPU (read with read(): overwrite mode is not mapped); "
               "trace-cmd record on ftrace's, also overwriting; lttng's consumer "
               "daemon. Lost: records overwritten before the reader got them, over "
               "the case's runs (magnet-read and trace-cmd), or events bpftrace "
               "lost. An overwritten record was written and paid for, and its "
               "eviction costs the writer more, so losses do not flatter "
               "magnet's figures.\n" % s["base"])
    out.append("| case | tool | ns per call | added ns | × empty kprobe | lost |")
    out.append("|---|---|---|---|---|---|")
    what = {c: (w, t) for c, w, t in CASES}
    for r in s["cases"]:
        w, tool = what[r["case"]]
        lost = r["lost"]
        out.append("| %s | %s | %.0f (%.0f–%.0f) | %s | %s | %s |" % (
            w, tool, r["ns"][0], r["ns"][1], r["ns"][2],
            "" if r["added"] is None else "%+.0f (%+.0f–%+.0f)" % tuple(r["added"]),
            "" if r["x_empty"] is None else "%.2f" % r["x_empty"],
            "" if not lost else "%d" % lost[0] if len(lost) == 1 else "%d of %d" % tuple(lost)))
    out.append("")
    out.append("magnet against the reference (added cost ÷ added cost; the range "
               "is that of the ratios of same-numbered runs):\n")
    out.append("| magnet | reference | ratio |")
    out.append("|---|---|---|")
    out.extend("| %s | %s | %.2f (%.2f–%.2f) |" % tuple(r) for r in s["ratios"])
    out.append("")
    out.append("The targets (added cost ÷ added cost, medians):\n")
    out.append("| magnet | reference | target | measured | met |")
    out.append("|---|---|---|---|---|")
    for a, b, limit, measured, over in s["targets"]:
        out.append("| %s | %s | ≤ %.2f | %s | %s |" % (
            a, b, limit, "not measured" if measured is None else "%.2f" % measured,
            "" if measured is None else "yes" if over is None else "no, by %.0f %%" % over))
    out.append("")
    f = s["filtered_breakdown"]
    if f:
        out.append("Where a filtered-out event's %+.0f ns go, in this boot: ftrace's "
                   "trampoline and an empty callback %+.0f ns; the guards every callback "
                   "needs (ftrace's recursion lock, the check that RCU is watching) "
                   "%+.0f ns more; magnet's part (its probe list, the handler, the gate "
                   "and the counter) the remaining %+.0f ns.\n" % (
                       f["filtered"], f["empty"], f["guards"], f["magnet"]))
    g = s["logged_breakdown"]
    if g:
        out.append("Where a logged event's %+.0f ns go, in this boot: reaching a callback "
                   "with its guards %+.0f ns; magnet's probe list, handler and gate "
                   "%+.0f ns (a filtered-out event's part); the timestamp (reading the "
                   "clock) %+.0f ns; reserving, filling and publishing the 40-byte record "
                   "the remaining %+.0f ns.\n" % (
                       g["logged"], g["guarded"], g["gate"], g["clock"], g["record"]))
    c = s["clocks"]
    if c:
        out.append("The clocks, each read from the guarded callback: magnet's "
                   "(CLOCK_MONOTONIC, which records of all CPUs and user space share) "
                   "%+.0f ns; ftrace's default trace clock (trace_clock_local(), per "
                   "CPU) %+.0f ns.\n" % (c["magnet"], c["ftrace"]))
    t = s["tracepoint"]
    if t:
        out.append("The sys_enter tracepoint's floor, a handler that does nothing, adds "
                   "%+.0f ns (the system calls' tracing path it turns on included); over it, "
                   "magnet's event adds %+.0f ns and ftrace's %+.0f ns: %s×.\n" % (
                       t["floor"], t["magnet"], t["ftrace"],
                       "nan" if t["ratio"] is None else "%.2f" % t["ratio"]))
    h = s["hpet"]
    if h:
        out += ["With the HPET as clocksource (switched in this boot, then back), "
                "magnet's logged kprobe event:\n",
                "| clocksource | bare call, ns | added ns per event |",
                "|---|---|---|",
                "| tsc | %.0f | %+.0f (%+.0f–%+.0f) |" % ((h["tsc_base"],) + tuple(h["tsc_added"])),
                "| hpet | %.0f (%.0f–%.0f) | %+.0f (%+.0f–%+.0f) |" % (
                    tuple(h["base"]) + tuple(h["added"])),
                "",
                "So the HPET adds about %.0f ns to every record under TCG (a "
                "record takes one timestamp), a cost hardware with a TSC does not "
                "pay.\n" % h["extra"]]
    bars = "".join('%d "%s" %.1f %.1f %.1f\n' % (i, r["case"], r["added"][0], r["added"][1],
                                                 r["added"][2])
                   for i, r in enumerate(s["cases"]) if r["added"] is not None)
    if plots.enabled and bars and plot(plots.dir, "cost", """
set terminal png size 1100,600
set output '{png}'
set title 'Time added to a getppid() call, ns (median, min-max over runs; TCG)'
set style data histograms
set style fill solid 0.6
set boxwidth 0.7
set xtics rotate by -40 noenhance
set ylabel 'ns added per call'
set grid ytics
unset key
plot '{data}' using 0:3:xtic(2) with boxes, '' using 0:3:4:5 with yerrorbars lc rgb 'black'
""", bars):
        plots.made.add("cost.png")
        out.append("![added cost per call](plots/cost.png)\n")
    if s["missing"]:
        out.append("Cases without figures in this boot: %s.\n" % ", ".join(s["missing"]))
    return out + remarks(doc)

# --- 2. throughput ---------------------------------------------------------------

def tp_valid(r):
    """Every call's event must be read or counted lost, and the reader
    must have run: otherwise the run is not a figure."""
    return abs(r["read"] + r["lost"] - r["calls"]) <= 0.01 * r["calls"] and r["ticks"] >= 0


def throughput_summary(doc):
    tp = doc["runs"]
    settings = []
    for r in tp:
        key = (r["tool"], r["case"], r["bytes"], r["rate"], r["wm"])
        if key not in settings:
            settings.append(key)
    rows, mbs_med = [], {}
    for key in settings:
        rs = [r for r in tp if (r["tool"], r["case"], r["bytes"], r["rate"], r["wm"]) == key
              and tp_valid(r)]
        if not rs:
            continue
        tool, case, nbytes, rate, wm = key
        secs = [r["secs"] or 1e-9 for r in rs]
        mbs = [r["read"] * nbytes / t / 1e6 for r, t in zip(rs, secs)]
        mbs_med[key] = statistics.median(mbs)
        rows.append({"tool": tool, "case": case, "bytes": nbytes, "rate": rate, "wm": wm,
                     "produced": spread(r["calls"] / t for r, t in zip(rs, secs)),
                     "read": spread(r["read"] / t for r, t in zip(rs, secs)),
                     "mbs": spread(mbs),
                     "lost": spread(100.0 * r["lost"] / max(r["calls"], 1) for r in rs),
                     "cpu": spread(r["ticks"] / (t + 1.0) for r, t in zip(rs, secs))})
    ratios = []
    for rate in sorted({k[3] for k in settings}, key=lambda v: (v == 0, v)):
        if ("magnet", "kprobe", 40, rate, "bulk") in mbs_med and \
                ("ftrace", "kprobe", 24, rate, "bulk") in mbs_med:
            def per_sec(tool):
                return statistics.median(r["read"] / (r["secs"] or 1e-9) for r in tp
                                         if tp_valid(r) and
                                         (r["tool"], r["case"], r["rate"]) == (tool, "kprobe", rate))
            ratios.append([rate, per_sec("magnet") / per_sec("ftrace")])
    return {"nruns": max(r["run"] for r in tp), "rows": rows, "ratios": ratios,
            "left_out": [{k: r[k] for k in ("tool", "case", "rate", "run", "calls", "read",
                                             "lost", "ticks")}
                         for r in tp if not tp_valid(r)]}


def rate_name(rate):
    return "max" if rate == 0 else "%d/s" % rate


def throughput_section(doc, path, plots):
    s = doc["summary"] if doc.get("summary_only") else throughput_summary(doc)
    out = ["## 2. Kernel-to-user throughput\n"] + provenance(doc, path)
    out += ["A kprobe on getppid() logs records of the given size while the "
            "call runs on CPU 0 at the offered rate (max: as fast as it can); "
            "the reader drains on CPU 1: magnet-read `--trace /dev/null` (which only "
            "saves), and trace-cmd record for ftrace's kprobe event (splice "
            "from trace_pipe_raw into a tmpfs file, its events counted in the "
            "file afterwards). Buffers: 4 MiB per CPU, drop mode (magnet) and "
            "overwrite off (ftrace), so loss is counted. Reader CPU is CPU 1's "
            "busy time over the run and a 1 s drain, as a share of the "
            "producer's time. magnet-read's watermarks: bulk wakes at 256 KiB "
            "or every 100 ms, event on every record, both reading the records "
            "in place (the data file's mapping); bulk-read is bulk copying "
            "them out with read() (`--no-map`). %d runs per setting, "
            "round-robin: median (lowest–highest).\n" % s["nruns"],
            "| tool | record | offered | watermarks | produced/s | read/s | MB/s read | lost | reader CPU |",
            "|---|---|---|---|---|---|---|---|---|"]
    for r in s["rows"]:
        out.append("| %s | %s B | %s | %s | %s | %s | %s | %s %% | %s %% |" % (
            r["tool"] + ("" if r["case"] == "kprobe" else " " + r["case"]), r["bytes"],
            rate_name(r["rate"]), r["wm"],
            fmt_spread(r["produced"], "%.0f"), fmt_spread(r["read"], "%.0f"),
            fmt_spread(r["mbs"], "%.1f"), fmt_spread(r["lost"], "%.1f"),
            fmt_spread(r["cpu"], "%.0f")))
    out.append("")
    if s["ratios"]:
        out += ["Events read per second, magnet ÷ ftrace, same kprobe, same offered rate:\n",
                "| offered | ratio |", "|---|---|"]
        out.extend("| %s | %.2f |" % (rate_name(rate), v) for rate, v in s["ratios"])
        out.append("")
    if s["left_out"]:
        out.append("Runs left out because read + lost does not account for every "
                   "event, or the reader ended early:\n")
        out.extend("- %s %s at %s, run %d: %d calls, %d read, %d lost, reader ticks %d" % (
            r["tool"], r["case"], rate_name(r["rate"]), r["run"], r["calls"], r["read"],
            r["lost"], r["ticks"]) for r in s["left_out"])
        out.append("")
    unpaced = [r for r in s["rows"] if r["tool"] == "magnet" and r["rate"] == 0
               and r["case"].startswith("log-")]
    data = "".join('"%s"\n' % wm + "".join("%d %.2f\n" % (r["bytes"], r["mbs"][0])
                                           for r in unpaced if r["wm"] == wm) + "\n\n"
                   for wm in ("bulk", "event", "bulk-read"))
    if plots.enabled and unpaced and plot(plots.dir, "throughput", """
set terminal png size 900,500
set output '{png}'
set title 'magnet-read, unpaced producer: MB/s read by record size (median of runs, TCG)'
set logscale x 2
set xlabel 'record bytes'
set ylabel 'MB/s read'
set grid
set key top left
plot '{data}' index 0 using 1:2 with linespoints title 'bulk watermarks', '' index 1 using 1:2 with linespoints title 'per-event wake-ups', '' index 2 using 1:2 with linespoints title 'bulk, read() copies'
""", data):
        plots.made.add("throughput.png")
        out.append("![throughput](plots/throughput.png)\n")
    return out + remarks(doc)


# --- 3. the paper's stream experiments ---------------------------------------------

def mbits(r, key="rx"):
    return r[key] * 8 / r["secs"] / 1e6


def stream_summary(doc):
    exp = doc["experiment"]
    st = doc["runs"]

    def runs_of(e, case):
        return {r["run"]: r for r in st if r["exp"] == e and r["case"] == case}
    base = runs_of("paper" if exp == "sampling" else exp, "none")

    def vs_none(rs, key="rx"):
        v = [rs[i][key] / base[i][key] for i in rs if i in base and base[i][key]]
        return spread(v) if v else None
    rows = []
    for e, case, _ in STREAM:
        rs = runs_of(exp, case) if e == exp else None
        if not rs:
            continue
        row = {"case": case, "mbits": spread(mbits(r) for r in rs.values()),
               "vs_none": vs_none(rs),
               "cpu": spread(r["ticks"] / r["secs"] for r in rs.values()),
               "per_packet": spread(r["captured"] / max(r["dgrams"], 1) for r in rs.values()),
               "dropped": spread(100.0 * r["dropped"] / max(r["captured"] + r["dropped"], 1)
                                 for r in rs.values())}
        if exp == "filter":
            row["mbits2"] = spread(mbits(r, "rx2") for r in rs.values())
        rows.append(row)
    own = [r for r in st if r["exp"] == exp]
    s = {"nruns": max(r["run"] for r in own), "secs": own[0]["secs"], "rows": rows,
         "targets": []}
    if exp == "sampling":
        s["base_mbits"] = statistics.median(mbits(r) for r in base.values()) if base else None

    def med(case, f):
        v = [f(i, r) for i, r in runs_of(exp, case).items() if f(i, r) is not None]
        return statistics.median(v) if v else None

    def kept(i, r):
        return r["rx"] / base[i]["rx"] if i in base and base[i]["rx"] else None

    def cpu(i, r):
        return r["ticks"] / r["secs"]

    def dropped(i, r):
        return 100.0 * r["dropped"] / max(r["captured"] + r["dropped"], 1)
    if exp == "paper":
        for tid, m, t, f, sign in (
                ("kept-96", "magnet-4-events-snap-96", "tcpdump-snap-96", kept, 1),
                ("kept-4000", "magnet-1-events-snap-4000", "tcpdump-snap-4000", kept, 1),
                ("cpu-96", "magnet-1-events-snap-96", "tcpdump-snap-96", cpu, -1),
                ("cpu-4000", "magnet-1-events-snap-4000", "tcpdump-snap-4000", cpu, -1)):
            a, b = med(m, f), med(t, f)
            if a is not None and b is not None:
                s["targets"].append({"id": tid, "a": a, "b": b, "met": sign * (a - b) >= 0})
        lossless = [c for _, c, _ in STREAM if c.startswith("tcpdump-") and runs_of(exp, c)
                    and max(dropped(i, r) for i, r in runs_of(exp, c).items()) == 0]
        worst = max((dropped(i, r) for _, c, _ in STREAM if c.startswith("magnet-")
                     for i, r in runs_of(exp, c).items()), default=None)
        if lossless and worst is not None:
            s["targets"].append({"id": "no-drops",
                                 "lossless": [c.replace("tcpdump-snap-", "-s ") for c in lossless],
                                 "worst": worst, "met": worst == 0})
    if exp == "filter":
        a, b = med("magnet-expression", kept), med("tcpdump-port", kept)
        if a is not None and b is not None:
            s["targets"].append({"id": "expression", "a": a, "b": b, "met": a >= b})
    return s


STREAM_TARGETS = {
    "kept-96": ("4 events per packet at 96 B: the stream kept, ≥ tcpdump -s 96's", "%.2f"),
    "kept-4000": ("1 event per packet at 4000 B: the stream kept, ≥ tcpdump -s 4000's", "%.2f"),
    "cpu-96": ("capture CPU at 96 B per packet, ≤ tcpdump -s 96's", "%.1f %%"),
    "cpu-4000": ("capture CPU at 4000 B per packet, ≤ tcpdump -s 4000's", "%.1f %%"),
    "expression": ("the expression in the kernel (udp dst port 5001) costs the monitored "
                   "stream, with a competing one, no more than tcpdump's filter: kept ≥",
                   "%.2f"),
}


def stream_targets(targets):
    rows = []
    for t in targets:
        if t["id"] == "no-drops":
            rows.append("| no drops where tcpdump dropped none (%s) | magnet's worst run: "
                        "%.1f %% dropped | %s |" % (", ".join(t["lossless"]), t["worst"],
                                                     "yes" if t["met"] else "no"))
        else:
            what, fmt = STREAM_TARGETS[t["id"]]
            rows.append("| %s | %s | %s |" % (what, (fmt + " against " + fmt) % (t["a"], t["b"]),
                                              "yes" if t["met"] else "no"))
    if not rows:
        return []
    return ["The stream targets (medians):\n", "| target | measured | met |",
            "|---|---|---|"] + rows + [""]


STREAM_TITLES = {
    "paper": ("### Figures 5 and 6, Table 3: stream throughput, capture CPU and drops\n",
              ["Mbit/s", "× nothing", "capture CPU", "captured per datagram", "dropped"]),
    "filter": ("### Figure 8: per-thread filtering against an interface filter, with a "
               "competing stream\n\nA second unpaced stream (port 5002) leaves CPU 0 at the "
               "same time; only the first (port 5001) is of interest. Both tools capture at "
               "one point (magnet: the dev-xmit probe, 96 B of each packet). magnet keeps the "
               "monitored sender's records with a tgid rule, or with the expression tcpdump "
               "is given (a packet rule), in the kernel, before anything is written; "
               "tcpdump's filter runs on the interface, where both streams pass.\n",
               ["monitored Mbit/s", "× nothing", "competing Mbit/s", "capture CPU",
                "captured per monitored datagram", "dropped"]),
    "sampling": ("### Figure 7: sampling (magnet, 4 events per packet, one hit in N of "
                 "each probe)\n",
                 ["Mbit/s", "× nothing", "capture CPU", "captured per datagram", "dropped"]),
}


def stream_table(doc, s):
    """An experiment's subsection: where from, its table."""
    exp = doc["experiment"]
    title, cols = STREAM_TITLES[exp]
    what = {c: w for e, c, w in STREAM if e == exp}
    out = [title]
    out.append("%s runs%s, round-robin over the cases: median (lowest–highest); the "
               "ratio to nothing capturing is that of same-numbered runs%s.\n" % (
                   s["nruns"], " of %g s" % s["secs"] if s.get("secs") else "",
                   " (nothing capturing: the paper experiment's runs of the same boot)"
                   if exp == "sampling" else ""))
    out.append("| case | " + " | ".join(cols) + " |")
    out.append("|---" * (len(cols) + 1) + "|")
    for r in s["rows"]:
        cells = [fmt_spread(r["mbits"], "%.0f"),
                 "" if r["vs_none"] is None else fmt_spread(r["vs_none"], "%.2f")]
        if exp == "filter":
            cells.append(fmt_spread(r["mbits2"], "%.0f"))
        cells += [fmt_spread(r["cpu"], "%.0f") + " %", fmt_spread(r["per_packet"], "%.2f"),
                  fmt_spread(r["dropped"], "%.1f") + " %"]
        out.append("| %s | %s |" % (what[r["case"]], " | ".join(cells)))
    out.append("")
    return out


def stream_section(docs, plots):
    out = ["## 3. The paper's tcpdump experiments\n",
           "An unpaced UDP stream (iperf, 8000-byte datagrams) from one "
           "network namespace to another across a veth pair at MTU 9000, so "
           "that every snap length of the sweep cuts the packet. The sender "
           "and the capturing process share CPU 0, as on the paper's "
           "single-CPU hosts, so whatever capturing costs, in the kernel or in "
           "its process, comes out of the stream; the receiver runs on CPU 1. "
           "magnet: packet probes along the send path (1: dev-xmit; 2: + udp; "
           "4: + ip and dev-queue), magnet-read `--trace /dev/null` with its "
           "default watermarks, 4 MiB per CPU, drop mode. tcpdump: on the "
           "sender's veth, `-B 4096 -w /dev/null`. Throughput is what the "
           "receiving iperf got; capture CPU is the capturing process's CPU "
           "time as a share of the stream's time; drops are records (magnet) "
           "or packets (tcpdump) the kernel could not hand over. Each experiment "
           "is a file of its own, and may come from a boot of its own: each "
           "subsection says which.\n"]
    sums = {}
    targets = []
    for exp in ("paper", "filter", "sampling"):
        name = "stream-" + exp
        if name not in docs:
            out.append("%s\n\n_No results: bench/results/%s.json is missing._\n" % (
                STREAM_TITLES[exp][0].split("\n")[0], name))
            continue
        doc = docs[name]
        s = sums[exp] = doc["summary"] if doc.get("summary_only") else stream_summary(doc)
        table = stream_table(doc, s)
        out += table[:1] + provenance(doc, "results/%s.json" % name) + table[1:]
        targets += s["targets"]
        if exp == "filter":
            # the targets of both experiments, after the second one's table
            order = ["kept-96", "kept-4000", "cpu-96", "cpu-4000", "expression", "no-drops"]
            out += stream_targets(sorted(targets, key=lambda t: order.index(t["id"])))
        out += remarks(doc)
    if "filter" not in sums:
        out += stream_targets(targets)
    paper, sampling = sums.get("paper"), sums.get("sampling")
    what = {c: w for e, c, w in STREAM if e == "paper"}
    if plots.enabled and paper and paper["rows"]:
        data = "".join('"%s" %.1f %.1f %.1f %.1f\n' % (
            r["case"].replace("-events-snap-", " ev, snap ").replace("tcpdump-snap-", "tcpdump -s "),
            r["mbits"][0], r["mbits"][1], r["mbits"][2], r["cpu"][0])
            for r in paper["rows"] if r["case"] in what)
        if plot(plots.dir, "stream", """
set terminal png size 1100,600
set output '{png}'
set title 'UDP stream across veth while capturing: receiver Mbit/s (median, min-max) and capture CPU (TCG)'
set style fill solid 0.6
set boxwidth 0.6
set xtics rotate by -35 noenhance
set ylabel 'Mbit/s received'
set y2label 'capture CPU, %'
set y2tics
set yrange [0:*]
set y2range [0:*]
set grid ytics
set key top right
plot '{data}' using 0:2:xtic(1) with boxes title 'stream', '' using 0:2:3:4 with yerrorbars lc rgb 'black' notitle, '' using 0:5 axes x1y2 with linespoints lw 2 title 'capture CPU'
""", data):
            plots.made.add("stream.png")
            out.append("![stream](plots/stream.png)\n")
    if plots.enabled and sampling and sampling["rows"]:
        data = "".join("%s %.1f %.1f\n" % (r["case"].split("-")[1], r["mbits"][0], r["cpu"][0])
                       for r in sampling["rows"])
        base = sampling.get("base_mbits")
        if plot(plots.dir, "sampling", """
set terminal png size 900,500
set output '{png}'
set title 'magnet, 4 events per packet, sampling one hit in N: stream Mbit/s and capture CPU (TCG)'
set logscale x 2
set xlabel 'N'
set ylabel 'Mbit/s received'
set y2label 'capture CPU, %'
set y2tics
set yrange [0:*]
set y2range [0:*]
set grid
set key right center
plot '{data}' using 1:2 with linespoints title 'stream', {base} title 'nothing capturing', '' using 1:3 axes x1y2 with linespoints title 'capture CPU'
""".replace("{base}", "NaN" if base is None else "%.1f" % base), data):
            plots.made.add("sampling.png")
            out.append("![sampling](plots/sampling.png)\n")
    return out


def stream_icount_section(doc, path):
    """7. Figure 8 under QEMU's instruction counter."""
    s = doc["summary"] if doc.get("summary_only") else stream_summary(doc)
    table = stream_table(doc, s)
    return (["## 7. The competing stream in instructions\n"] + provenance(doc, path) +
            [STREAM_INSNS_INTRO % s["nruns"]] + table + stream_targets(s["targets"]) +
            remarks(doc))

# --- 4. scaling ----------------------------------------------------------------------

def scaling_summary(doc):
    runs = {c: by_run(v) for c, v in doc["runs"].items()}
    med = {c: statistics.median(r.values()) for c, r in runs.items() if r}
    s = {"none": [{"case": c, "ns": spread(runs[c].values())}
                  for c in ("none-1cpu", "none-2cpu") if c in med],
         "rows": [], "growth": {}, "over": None}
    for case, _, base, per_call in SCALING:
        if case in med and base in med:
            s["rows"].append({"case": case, "ns": med[case],
                              "added": spread((v - med[base]) / per_call
                                              for v in runs[case].values())})
    for tool in ("magnet", "ftrace", "magnet-filtered", "kprobe-empty", "ftrace-ops-clocked"):
        one, two = med.get(tool + "-1cpu"), med.get(tool + "-2cpu")
        if one is not None and two is not None and one > med["none-1cpu"]:
            s["growth"][tool] = (two - med["none-2cpu"]) / (one - med["none-1cpu"])
    g = s["growth"]
    if "magnet" in g and "ftrace" in g and g["magnet"] > g["ftrace"]:
        s["over"] = 100 * (g["magnet"] / g["ftrace"] - 1)
    return s


def scaling_section(doc, path):
    s = doc["summary"] if doc.get("summary_only") else scaling_summary(doc)
    out = ["## 4. Scaling\n"] + provenance(doc, path)
    out += ["getppid() on CPU 0, or on both CPUs at once (their mean); buffers in "
            "overwrite mode, no reader. Added cost is against the no-probe loop "
            "with as many CPUs; per event divides it by the events a call "
            "logs.\n",
            "| case | ns per call | added per event |",
            "|---|---|---|"]
    for r in s["none"]:
        out.append("| no probe, %s | %.0f (%.0f–%.0f) | |" % (
            "one CPU calling" if r["case"].endswith("1cpu") else "both CPUs calling",
            r["ns"][0], r["ns"][1], r["ns"][2]))
    what = {c: w for c, w, _, _ in SCALING}
    for r in s["rows"]:
        out.append("| %s | %.0f | %+.0f (%+.0f–%+.0f) |" % (
            (what[r["case"]], r["ns"]) + tuple(r["added"])))
    out.append("")
    g = s["growth"]
    parts = [(t, w) for t, w in (
        ("magnet-filtered", "magnet's event dropped by its filter"),
        ("kprobe-empty", "an empty kprobe"),
        ("ftrace-ops-clocked", "an ftrace_ops callback reading magnet's clock"))
        if t in g]
    if parts:
        out.append("Both CPUs ÷ one, added cost per event (medians): " + "; ".join(
            "%s %.2f" % (w, g[t]) for t, w in parts) + ".\n")
    if "magnet" in g and "ftrace" in g:
        out.append("The target: an event's added cost with both CPUs producing ÷ with "
                   "one, magnet's no more than ftrace's: magnet %.2f, ftrace %.2f: %s.\n" % (
                       g["magnet"], g["ftrace"],
                       "met" if s["over"] is None else "not met, by %.1f %%" % s["over"]))
    return out + remarks(doc)


# --- 8. sessions ---------------------------------------------------------------------

def sessions_summary(doc):
    runs = {c: by_run(v) for c, v in doc["runs"].items()}
    if not runs.get("none"):
        return None
    base = statistics.median(runs["none"].values())
    s = {"none": spread(runs["none"].values()), "rows": [], "more": []}
    for case, _, n in SESSIONS:
        r = runs.get(case)
        if r:
            s["rows"].append({"case": case, "ns": spread(r.values()),
                              "added": spread(v - base for v in r.values()),
                              "per": spread((v - base) / n for v in r.values())})
    # One more session, or probe: same-numbered runs' differences, per one added.
    for kind in ("sessions", "default"):
        for a, b in ((1, 2), (2, 4)):
            ra, rb = runs.get("%s-%d" % (kind, a), {}), runs.get("%s-%d" % (kind, b), {})
            d = [(rb[i] - ra[i]) / (b - a) for i in sorted(set(ra) & set(rb))]
            if d:
                s["more"].append({"kind": kind, "from": a, "to": b, "ns": spread(d)})
    return s


SESSIONS_INTRO = (
    "getppid() on CPU 0 under kprobes on __x64_sys_getppid: 1, 2 and 4 "
    "sessions, each with its own kprobe logging into its own buffer (each "
    "session made and held by a magnet-nltest session-hold, whose netlink "
    "socket it lives by), against 1, 2 and 4 probes on the function in the "
    "default session, a buffer each. Buffers of 256 KiB in overwrite mode, "
    "no reader: the producer side only. Each run's figure is the fastest of "
    "its five chunks of calls (the host's disturbances only add time). Added "
    "is against the no-probe loop's median; per session or probe divides it "
    "by their number.\n")


LEDGER = [
    ("calls", "getppid() loop", 1.10),
    # (a worst case, every boundary per datagram: the bound is the stream's)
    ("udp", "UDP datagrams of 64 bytes over loopback", None),
]


def ledger_summary(doc):
    runs = {c: by_run(v) for c, v in doc["runs"].items()}
    rows = []
    for case, _, bound in LEDGER:
        off, on = runs.get(case + "-off"), runs.get(case + "-on")
        if not off or not on:
            continue
        same = sorted(set(off) & set(on))
        rows.append({"case": case, "off": spread(off.values()), "on": spread(on.values()),
                     "added": spread(on[i] - off[i] for i in same),
                     "ratio": spread(on[i] / off[i] for i in same), "bound": bound})
    stream = None
    off, on = runs.get("stream-off"), runs.get("stream-on")
    if off and on:
        ratios = [on[i] / off[i] for i in sorted(set(off) & set(on)) if off[i]]
        if ratios:
            stream = {"off": spread(off.values()), "on": spread(on.values()),
                      "ratio": spread(ratios)}
    mixed = {k: runs[k][1] for k in ("mixed-unattributed-ppm", "mixed-residue-ppm",
                                     "mixed-elapsed-ns") if runs.get(k, {}).get(1) is not None}
    return {"rows": rows, "stream": stream, "mixed": mixed if len(mixed) == 3 else None}


# The bound on the paper's stream: the ledger takes at most 2 % of it.
LEDGER_STREAM_BOUND = 0.98


# Vortex's bound on what no counter holds: 0.004 %; the issue's, 0.01 %.
LEDGER_RESIDUE_BOUND_PPM = 100


LEDGER_INTRO = (
    "The ledger off and on, in one boot: a getppid() loop on CPU 0, and "
    "64-byte UDP datagrams sent unpaced over loopback to a socket in a "
    "cgroup of its own that holds them (each sendto() runs its datagram's "
    "NET_RX softirq, in which the ledger times the packet and charges it "
    "to the socket's cgroup). Each run's figure is the fastest of its five "
    "chunks of calls; added and on/off pair the same-numbered runs.\n")


LEDGER_INSNS_INTRO = (
    "The same cases under QEMU's instruction counter (bench/run ledger-cost with "
    "BENCH_CLOCK=icount): one vCPU whose clock counts the instructions it runs, "
    "one nanosecond each, so a call's time is its instructions and the stream's "
    "bytes are those received in that many thousand million instructions, the "
    "receiver sharing CPU 0 with the sender. The figures repeat from run to run "
    "and boot to boot where timed ones under TCG move by tens of per cent; what "
    "they leave out is what an instruction costs on hardware (a clock read, a "
    "cache miss).\n")


def ledger_section(doc, path, icount=False):
    s = doc["summary"] if doc.get("summary_only") else ledger_summary(doc)
    out = ["## 10. The ledger's cost in instructions\n" if icount else
           "## 9. The ledger's cost\n"] + provenance(doc, path)
    if not s["rows"]:
        return out + ["_No figures: no case ran both off and on._\n"] + remarks(doc)
    out += [LEDGER_INTRO] + ([LEDGER_INSNS_INTRO] if icount else []) + [
            "| case | %s per call, off | on | added | on / off | bound |"
            % ("instructions" if icount else "ns"),
            "|---|---|---|---|---|---|"]
    what = {c: w for c, w, _ in LEDGER}
    for r in s["rows"]:
        out.append("| %s | %s | %s | %s | %s | %s (%s) |" % (
            what[r["case"]], fmt_spread(r["off"], "%.0f"), fmt_spread(r["on"], "%.0f"),
            fmt_spread(r["added"], "%+.0f"), fmt_spread(r["ratio"], "%.3f"),
            *(("%.2f" % r["bound"], "met" if r["ratio"][0] <= r["bound"] else "missed")
              if r["bound"] is not None else ("none", "the stream's below"))))
    out.append("")
    st = s.get("stream")
    if st:
        out += ["The paper's UDP stream (section 3's: iperf, unpaced, 8000-byte datagrams "
                "over a veth pair, the sender on CPU 0), the ledger off and on in turn; "
                "bytes received in %s %s:\n" % (
                    doc.get("parameters", {}).get("BENCH_STREAM_SECS", 3),
                    "thousand million instructions" if icount else "s"),
                "| ledger off | on | on / off | bound |",
                "|---|---|---|---|",
                "| %s | %s | %s | at least %.2f (%s) |" % (
                    fmt_spread(st["off"], "%.0f"), fmt_spread(st["on"], "%.0f"),
                    fmt_spread(st["ratio"], "%.3f"), LEDGER_STREAM_BOUND,
                    "met" if st["ratio"][0] >= LEDGER_STREAM_BOUND else "missed"),
                ""]
    m = s.get("mixed")
    if m:
        out += ["60 s of mixed load from a fresh ledger (a CPU-bound loop, the 64-byte "
                "datagrams over loopback above, and a writer that dirties and fsyncs 16 MiB at a time "
                "on ext4 on a null_blk disk, each in a cgroup of its own), over "
                "%.1f s of CPU time:\n" % (m["mixed-elapsed-ns"] / 1e9),
                "| figure | part of the CPUs' time | bound |",
                "|---|---|---|",
                "| unattributed (no activity, idle apart) | %.3f %% | |"
                % (m["mixed-unattributed-ppm"] / 1e4),
                "| residue (elapsed less charged, at the read) | %.4f %% | %.2f %% (%s) |"
                % (m["mixed-residue-ppm"] / 1e4, LEDGER_RESIDUE_BOUND_PPM / 1e4,
                   "met" if m["mixed-residue-ppm"] <= LEDGER_RESIDUE_BOUND_PPM
                   else "missed"),
                ""]
    return out + remarks(doc)


SAMPLE_TOOLS = [("perf", "perf record -F 1000 -g -a"),
                ("magnet", "magnet-read -P cpu --trace")]
# The issue's bound, the paper's (ICPE'16, Fig. 6): under 1 % at 1 ms.
SAMPLE_BOUND = 0.01


def sample_summary(doc):
    runs = {c: by_run(v) for c, v in doc["runs"].items()}
    loads = []
    for load, higher_better in (("burn", False), ("stream", True)):
        base = runs.get(load + "-none")
        if not base:
            continue
        rows = []
        for tool, _ in SAMPLE_TOOLS:
            r = runs.get("%s-%s" % (load, tool))
            if not r:
                continue
            same = [i for i in sorted(set(base) & set(r)) if base[i] and r[i]]
            # the part of the work's time (or of the stream) sampling took
            cost = [(r[i] / base[i] - 1) if not higher_better else
                    (1 - r[i] / base[i]) for i in same]
            row = {"tool": tool, "value": spread(r.values()), "cost": spread(cost)}
            t = runs.get(tool + "-ticks")
            if load == "burn" and t:
                rate = [t[i] / (r[i] / 1e9) for i in same if i in t]
                if rate:
                    row["rate"] = spread(rate)
            rows.append(row)
        loads.append({"load": load, "none": spread(base.values()), "rows": rows})
    return {"loads": loads}


SAMPLE_INTRO = (
    "Every CPU sampled at 1 kHz, magnet's sampler beside perf's, in one boot: "
    "the burner (`magnet-test burn`, CPU-bound, no system calls) pinned to "
    "CPU 0, and section 3's UDP stream, each with nothing sampling, with "
    "`perf record -e cpu-clock -F 1000 -g -a` (the hrtimer event: TCG has no "
    "PMU; call chains by frame pointers; perf.data written) and with "
    "`magnet-read -P cpu --trace` (cpu.sample at 1 ms, stacks of 32 frames, "
    "its records written). Each writes its samples raw and resolves symbols "
    "later. The cases take turns within a run; the cost pairs each run with "
    "the same-numbered run of nothing sampling: the burner's added time, or "
    "the stream's lost bytes.\n")


SAMPLE_INSNS_INTRO = (
    "Under QEMU's instruction counter (bench/run sample-cost with "
    "BENCH_CLOCK=icount): one vCPU whose clock counts its instructions, so "
    "the burner's time is its instructions and the samplers' work theirs; "
    "the stream's receiver shares CPU 0 with its sender.\n")


def sample_section(doc, path, icount=False):
    s = doc["summary"] if doc.get("summary_only") else sample_summary(doc)
    out = ["## 18. Sampling's cost in instructions\n" if icount else
           "## 17. What sampling at 1 kHz costs\n"] + provenance(doc, path)
    if not s["loads"]:
        return out + ["_No figures: nothing ran with no sampler._\n"] + remarks(doc)
    out += [SAMPLE_INTRO] + ([SAMPLE_INSNS_INTRO] if icount else [])
    what = dict(SAMPLE_TOOLS)
    secs = doc.get("parameters", {}).get("BENCH_STREAM_SECS", 3)
    for ld in s["loads"]:
        burn = ld["load"] == "burn"
        unit = ("thousand million instructions" if icount else "s")
        out += ["%s, nothing sampling: %s %s.\n" % (
                    "The burner" if burn else "The stream",
                    fmt_spread([v / 1e9 for v in ld["none"]], "%.3f") if burn else
                    fmt_spread(ld["none"], "%.0f") + " bytes received in %s" % secs,
                    unit if burn else unit),
                "| sampler | %s | its cost | bound |%s" % (
                    "the burner's time" if burn else "bytes received",
                    " samples a second, all CPUs' (over the burner's time) |" if burn else ""),
                "|---|---|---|---|%s" % ("---|" if burn else "")]
        for r in ld["rows"]:
            out.append("| %s | %s | %s | %.0f %% (%s) |%s" % (
                what[r["tool"]],
                fmt_spread([v / 1e9 for v in r["value"]], "%.3f") if burn else
                fmt_spread(r["value"], "%.0f"),
                fmt_spread([100 * c for c in r["cost"]], "%+.2f %%"),
                100 * SAMPLE_BOUND,
                "met" if r["cost"][0] <= SAMPLE_BOUND else "missed",
                (" %s |" % fmt_spread(r["rate"], "%.0f") if r.get("rate") else " |")
                if burn else ""))
        out.append("")
    return out + remarks(doc)


def sessions_section(doc, path):
    s = doc["summary"] if doc.get("summary_only") else sessions_summary(doc)
    out = ["## 8. Sessions on one probe point\n"] + provenance(doc, path)
    if s is None:
        return out + ["_No figures: the no-probe case did not run._\n"] + remarks(doc)
    out += [SESSIONS_INTRO,
            "| case | ns per call | added over no probe | added per session or probe |",
            "|---|---|---|---|",
            "| no probe | %s | | |" % fmt_spread(s["none"], "%.0f")]
    what = {c: w for c, w, _ in SESSIONS}
    for r in s["rows"]:
        out.append("| %s | %s | %s | %s |" % (
            what[r["case"]], fmt_spread(r["ns"], "%.0f"), fmt_spread(r["added"], "%+.0f"),
            fmt_spread(r["per"], "%+.0f")))
    out.append("")
    more = {(m["kind"], m["from"], m["to"]): m["ns"] for m in s["more"]}
    steps = sorted({(a, b) for _, a, b in more})
    if steps:
        out += ["What one more on the function adds per call: the median of the "
                "same-numbered runs' differences, per one added, and their range.\n",
                "| from → to | a session | a probe in the default session |",
                "|---|---|---|"]
        for a, b in steps:
            out.append("| %d → %d | %s | %s |" % (a, b, *(
                fmt_spread(more[(k, a, b)], "%+.0f") if (k, a, b) in more else "-"
                for k in ("sessions", "default"))))
        out.append("")
    ses, dflt = more.get(("sessions", 1, 2)), more.get(("default", 1, 2))
    if ses and dflt:
        out.append("A second session on the point costs %+.0f ns per call (runs: %+.0f "
                   "to %+.0f); a second probe in the default session %+.0f (%+.0f to "
                   "%+.0f): %s.\n" % (tuple(ses) + tuple(dflt) + (
                       "the ranges overlap" if ses[1] <= dflt[2] and dflt[1] <= ses[2]
                       else "the ranges do not overlap",)))
    return out + remarks(doc)


# --- 13, 14. application spans -------------------------------------------------------

SPAN_CASES = (("getppid", "getppid(), for reference"),
              ("devnull", "a write() of a span's 48 bytes to /dev/null"),
              ("span-off", "a span's begin or end, no app.span probe"),
              ("span-on", "a span's begin or end, app.span logging it"))


def span_section(doc, path, icount=False):
    title = ("## 14. What a span costs, in instructions\n" if icount else
             "## 13. What an application's span costs\n")
    out = [title] + provenance(doc, path)
    runs = {c: by_run(doc["runs"].get(c)) for c, _ in SPAN_CASES}
    if not runs["getppid"]:
        return out + ["_No figures: the getppid() case did not run._\n"] + remarks(doc)
    unit = "instructions" if icount else "ns"
    out += ["Each call of libmagnet's magnet_span_begin() or magnet_span_end() is one "
            "write() to /dev/magnet-span (bench/scripts/span-cost.sh): against getppid(), "
            "a system call that does nothing, and a write() of as many bytes to /dev/null; "
            "with no app.span probe, and with one "
            "logging into a buffer with no reader. A run is the fastest of five chunks of "
            "calls on CPU 0; a ratio is the median of the same-numbered runs' ratios, "
            "with their range. The issue's bound: close to a system call or less.\n",
            "| case | %s per call | × getppid() | × the write() to /dev/null |" % unit,
            "|---|---|---|---|"]

    def ratio(r, base):
        ratios = [r[i] / runs[base][i] for i in r if i in runs[base]]
        return fmt_spread(spread(ratios), "%.2f×") if ratios else ""

    for c, what in SPAN_CASES:
        r = runs[c]
        if not r:
            continue
        out.append("| %s | %s | %s | %s |" % (
            what, fmt_spread(spread(r.values()), "%.0f"),
            "" if c == "getppid" else ratio(r, "getppid"),
            "" if c in ("getppid", "devnull") else ratio(r, "devnull")))
    out.append("")
    return out + remarks(doc)


# --- 15. BlkKin's experiment ---------------------------------------------------------

BLKKIN_CASES = (("bare", "bare: no spans, no probes"),
                ("present", "spans in the application (or a traceparent), no probes"),
                ("tracing", "tracing: the probe sets capturing, spans written as OTLP"))


BLKKIN_INSNS_INTRO = (
    "The same cases under QEMU's instruction counter (bench/run blkkin with "
    "BENCH_CLOCK=icount): one vCPU whose clock counts the instructions it runs, "
    "one nanosecond each, the writer, nbd-server, lighttpd, wrk and the reader all "
    "on it. Throughputs are per thousand million instructions of everything: what "
    "each case adds to the work of the machine, the same from boot to boot, where "
    "timed runs under TCG move by tens of per cent.\n")


def blkkin_section(doc, path, icount=False):
    out = (["## 16. BlkKin's experiment in instructions\n" if icount else
            "## 15. One request across layers: BlkKin's experiment\n"] +
           provenance(doc, path))
    runs = doc["runs"]
    if not runs.get("nbd-bare") and not runs.get("http-bare"):
        return out + ["_No figures: the bare cases did not run._\n"] + remarks(doc)
    per = "per 10⁹ instructions" if icount else "per s"
    out += ["BlkKin's experiment (its thesis: 64 KB sequential writes, 12.7 MB/s bare, "
            "11.8 MB/s with the instrumentation present but stopped, 11 MB/s tracing: "
            "0.93× and 0.87×; this issue's targets 0.99× and 0.95×): 64 KiB writes with "
            "O_DIRECT to an NBD disk whose nbd-server (a null_blk disk, each write synced) "
            "runs in a second network namespace, and wrk fetching a 16 KiB file from "
            "lighttpd there, one connection (bench/scripts/blkkin.sh). The cases run in "
            "one boot, each run in a rotated order; a ratio is the median of the "
            "same-numbered runs' ratios to bare, with their range.\n"] + \
        ([BLKKIN_INSNS_INTRO] if icount else []) + [
            "| case | NBD writes, MB %s | × bare | HTTP, requests %s | × bare |" % (per, per),
            "|---|---|---|---|---|"]

    def cell(kind, case, fmt):
        r, base = by_run(runs.get(kind + "-" + case)), by_run(runs.get(kind + "-bare"))
        if not r:
            return "", ""
        ratios = [r[i] / base[i] for i in r if i in base and base[i]]
        return (fmt_spread(spread(r.values()), fmt),
                "" if case == "bare" or not ratios else fmt_spread(spread(ratios), "%.3f×"))

    for c, what in BLKKIN_CASES:
        n, nr = cell("nbd", c, "%.2f")
        h, hr = cell("http", c, "%.0f")
        out.append("| %s | %s | %s | %s | %s |" % (what, n, nr, h, hr))
    out.append("")
    return out + remarks(doc)


# --- 11. per-call accounting --------------------------------------------------------

ACCT_CASES = (("plain", "lighttpd alone (the module loaded, no handle)"),
              ("perf-trace", "lighttpd alone, perf trace -s counting its calls per type"),
              ("syscount", "lighttpd alone, syscount -L's way in bpftrace counting them"),
              ("hooked", "lighttpd alone, while another process holds a handle"),
              ("watch", "lighttpd watched: magnetctl acct watch, every call "
                        "accounted and summed per type"),
              ("shim-none", "lighttpd accounting every accept, receive and send, "
                            "no subsystem split"),
              ("shim-all", "the same, CPU time split among every subsystem"))
ACCT_INTRO = (
    "Resourceful's experiment (its Table 1: 2486 → 1717 fetches/s, 0.69×; its "
    "Figure 2: median +3.9 %, p99 +7.66 %): Debian's lighttpd serving a 22-byte "
    "file on CPU 0, wrk on CPU 1 fetching it one request at a time, each on a new "
    "connection, for a fixed time per run; the accounting through libmagnet by "
    "an LD_PRELOAD shim (bench/acct-shim.c), which arms each socket call, makes "
    "it and reads its result; beside it, what users pick today to count a "
    "process's calls (perf trace -s; bcc's syscount, in bpftrace) and magnet's "
    "answer to the same question (a watch). The server's time is lighttpd's own "
    "run time (its schedstat) per request. Each run takes every case in turn. A "
    "ratio is the median of the same-numbered runs' ratios to lighttpd alone, "
    "with their range. Targets: median latency ≤ +1 %, p99 ≤ +2 %, throughput "
    "≥ 0.95×; and a watch costs less than perf trace -s or syscount.\n")
ACCT_INSNS_INTRO = (
    "The same cases under QEMU's instruction counter (bench/run acct-cost with "
    "BENCH_CLOCK=icount): one vCPU whose clock counts the instructions it runs, "
    "one nanosecond each, wrk on it beside lighttpd. Requests are per thousand "
    "million instructions (of both), latencies in thousands of instructions, and "
    "the server's figure is lighttpd's own instructions per request, wrk's "
    "apart: the closest to what accounting adds to a server. They repeat from "
    "run to run where timed ones under TCG move by tens of per cent; what they "
    "leave out is what an instruction costs on hardware (a trap, a clock read, "
    "a cache miss).\n")


def acct_section(doc, path, icount=False):
    runs = doc["runs"]
    out = ["## 12. Per-call accounting in instructions\n" if icount else
           "## 11. What per-call accounting costs a server\n"] + provenance(doc, path)
    keys = ("rps", "p50", "p99", "cpu")
    base = {k: by_run(runs.get("plain-" + k)) for k in keys}
    if not base["rps"]:
        return out + ["_No figures: lighttpd alone did not run._\n"] + remarks(doc)
    unit = "thousand instructions" if icount else "µs"
    out += [ACCT_INTRO] + ([ACCT_INSNS_INTRO] if icount else []) + [
            "| case | requests/%s | × alone | median latency, %s | vs alone | "
            "p99 latency, %s | vs alone | the server's, %s a request | vs alone |"
            % ("10⁹ instructions" if icount else "s", unit, unit, unit),
            "|---|---|---|---|---|---|---|---|---|"]
    for case, what in ACCT_CASES:
        if not any(runs.get("%s-%s" % (case, k)) for k in keys):
            continue
        cells = [what]
        for k in keys:
            v = by_run(runs.get("%s-%s" % (case, k)))
            if not v:
                cells += ["-", "-"]
                continue
            scale = 1 if k == "rps" else 1e-3
            cells.append(fmt_spread(spread(x * scale for x in v.values()),
                                    "%.0f" if k == "rps" else "%.1f"))
            common = [i for i in v if i in base[k] and base[k][i]]
            if case == "plain" or not common:
                cells.append("")
            elif k == "rps":
                cells.append(fmt_spread(spread(v[i] / base[k][i] for i in common), "%.3f×"))
            else:
                cells.append(fmt_spread(spread(100 * (v[i] / base[k][i] - 1)
                                               for i in common), "%+.1f %%"))
        out.append("| " + " | ".join(cells) + " |")
    out.append("")
    return out + remarks(doc)


# --- 5 and 6. the packet filter ----------------------------------------------------

def added_ratio(case, ref, none, draws=2000):
    """(median(case) - median(none)) / (median(ref) - median(none)), and
    its 5th and 95th percentiles over the runs of each drawn again with
    replacement (the bootstrap; a fixed seed, so a report is reproducible);
    None where ref adds nothing."""
    def ratio(c, r, n):
        d = statistics.median(r) - statistics.median(n)
        if d > 0:
            return (statistics.median(c) - statistics.median(n)) / d
        return math.inf if statistics.median(c) > statistics.median(n) else None
    c, r, n = list(case.values()), list(ref.values()), list(none.values())
    v = ratio(c, r, n)
    if v is None:
        return None
    rng = random.Random(1)
    again = sorted(x for x in (ratio(rng.choices(c, k=len(c)), rng.choices(r, k=len(r)),
                                     rng.choices(n, k=len(n))) for _ in range(draws))
                   if x is not None)
    return [v, again[len(again) * 5 // 100], again[len(again) * 95 // 100]]


def pfilter_summary(doc):
    runs = {c: by_run(v) for c, v in doc["runs"].items()}
    s = {"rows": [], "targets": [], "versus": None}
    for layer in ("socket", "ip", "dev"):
        none = runs.get(layer + "-none")
        if not none:
            continue
        base = statistics.median(none.values())
        s["rows"].append({"layer": layer, "case": "none", "ns": spread(none.values()),
                          "best": min(none.values())})
        hdr = runs.get(layer + "-header-drop", {})
        best_hdr = min(hdr.values()) - min(none.values()) if hdr else None
        for case, _ in PFILTER:
            r = runs.get("%s-%s" % (layer, case))
            if not r:
                continue
            ratio = added_ratio(r, hdr, none) if case != "header-drop" and hdr else None
            best = min(r.values()) - min(none.values())
            best_ratio = best / best_hdr if case != "header-drop" and best_hdr and \
                best_hdr > 0 else None
            s["rows"].append({"layer": layer, "case": case, "ns": spread(r.values()),
                              "added": statistics.median(r.values()) - base,
                              "ratio": ratio, "best": best, "best_ratio": best_ratio})
            if case == "packet-drop" and ratio:
                s["targets"].append({"layer": layer, "ratio": ratio, "best": best_ratio})
        pk, td = runs.get(layer + "-packet-drop"), runs.get(layer + "-tcpdump-drop")
        if layer == "dev" and pk and td:
            v = added_ratio(pk, td, none)
            if v:
                s["versus"] = {"ratio": v, "magnet": statistics.median(pk.values()) - base,
                               "tcpdump": statistics.median(td.values()) - base,
                               "best": (min(pk.values()) - min(none.values())) /
                               (min(td.values()) - min(none.values()))}
    return s


PFILTER_INTRO = (
    "sendto() of 32-byte UDP datagrams to port 5002 in a loop on CPU 0, one "
    "magnet packet probe with one include rule for port 5001, so that the rule "
    "drops every packet. socket: the send call (udp-send.socket; a blackhole "
    "route ends each call after it), where there is no packet yet: where the "
    "expression reads only what every such call knows, as the first does, it "
    "is written again when the rule is made for the call's shape and runs on "
    "the probe's record, no headers built (\"fields\" below); the longer one "
    "asks for the source address, which an unconnected socket does not know "
    "yet, so magnet's interpreter runs it on headers built from the socket "
    "and the call. ip: IP output "
    "(udp-send.ip; out of a dummy device, which drops them), where the kernel's "
    "BPF runs it on the skb. The last case reads tcpdump's length, which only "
    "magnet's interpreter can, at both layers. dev: the device's transmit "
    "(udp-send.dev-xmit, the stream benchmark's capture point; out of the dummy "
    "device), where the packets of a competing stream pass: magnet's rules there "
    "against tcpdump's own filter (libpcap's program on its socket on the device, "
    "run on every packet sent; tcpdump waits on CPU 1 and captures none). "
    "Each run sets its "
    "case up afresh; its figure is the fastest of its five chunks of calls "
    "(the host's disturbances only add time). Under TCG a setup's cost "
    "holds for all its chunks and moves from one setup to the next by as "
    "much as what is measured (in one boot the no-probe loop took 7957 to "
    "9771 ns per call, the chunks of most setups within a few percent of "
    "each other), and same-numbered runs of two cases share no disturbance: "
    "so added is a case's median over the no-probe loop's median, "
    "× header rule is the expression's added cost over the header rule's, "
    "and its 90 % interval is that of the same ratio over the runs drawn "
    "again at random (2000 draws, the bootstrap). The best run of each "
    "case is compared too: the fastest setup of each.\n")


def pfilter_section(doc, path, insns):
    """5. A packet the filter drops: the expression in the kernel against
    the header rule, at the send call, IP output and the device. Or, under
    the instruction counter, section 6: the same, counted in instructions."""
    s = doc["summary"] if doc.get("summary_only") else pfilter_summary(doc)
    if insns:
        out = ["## 6. The packet filter in instructions\n"] + provenance(doc, path) + \
            [PFILTER_INSNS_INTRO]
    else:
        out = ["## 5. The packet filter in the kernel\n"] + provenance(doc, path) + \
            [PFILTER_INTRO]
    out += ["| layer | case | %s per call | added | × header rule (90 %% interval) | "
            "best runs: added, × header rule |" % ("instructions" if insns else "ns"),
            "|---|---|---|---|---|---|"]
    what = dict(PFILTER)
    for r in s["rows"]:
        if r["case"] == "none":
            out.append("| %s | no probe | %s | | | %.0f |" % (
                r["layer"], fmt_spread(r["ns"], "%.0f"), r["best"]))
            continue
        out.append("| %s | %s | %s | %+.0f | %s | %+.0f%s |" % (
            r["layer"], what[r["case"]], fmt_spread(r["ns"], "%.0f"), r["added"],
            "%.2f (%.2f–%.2f)" % tuple(r["ratio"]) if r["ratio"] else "",
            r["best"], ", %.2f" % r["best_ratio"] if r["best_ratio"] else ""))
    out.append("")
    if s["targets"]:
        out += ["| target | measured | met |", "|---|---|---|"]
        for t in s["targets"]:
            (v, lo, hi), b = t["ratio"], t["best"]
            out.append("| a packet the expression drops costs ≤ 1.2× a header-rule drop (%s) "
                       "| %.2f (90 %%: %.2f–%.2f; best runs: %s) | %s |" % (
                           t["layer"], v, lo, hi, "%.2f" % b if b else "-",
                           "yes" if v <= 1.2 and (b is None or b <= 1.2) else "no"))
        vs = s["versus"]
        if vs:
            v, lo, hi = vs["ratio"]
            out.append("| a packet of a competing stream, dropped at the device's transmit: "
                       "the expression in the kernel costs ≤ tcpdump's filter "
                       "| %+.0f against %+.0f %s: %.2f× (90 %%: %.2f–%.2f; best runs: %.2f×) | %s |" % (
                           vs["magnet"], vs["tcpdump"], "instructions" if insns else "ns",
                           v, lo, hi, vs["best"],
                           "yes" if v <= 1 and vs["best"] <= 1 else "no"))
        out.append("")
    return out + remarks(doc)


TCG_NOTE = """\
### Where TCG distorts

How a kprobe at a function's entry runs: Debian's kernels have
KPROBES_ON_FTRACE, so such a kprobe takes no int3 trap and no
single-step. It is placed on the function's ftrace call site (the
5-byte nop at its start that ftrace patches into a call): a hit goes
through ftrace's register-saving trampoline (a full pt_regs, flags
included) and kprobe_ftrace_handler(), which looks the kprobe up in a
hash and calls its handler. magnet's kprobes, ftrace's and LTTng's kprobe
events and bpftrace's kprobes all pay that, so the empty kprobe is the
floor they share; an ftrace_ops callback of its own, without saved
registers, is the floor under it. A kretprobe also replaces the return
address and runs its handler from a return trampoline.

Under TCG (QEMU's emulator) every instruction is emulated, so absolute
times are not hardware times and the bare system call is a poor yardstick;
ratios between tools measured side by side in one boot are what the
tables are for. String instructions (rep movs, rep stos) cost far more
than on hardware, which weighs on large payloads and on every reader that
copies (magnet-read, tcpdump's pcap writer; trace-cmd's splice copies
nothing). The clock: under TCG the guest finds its TSCs unsynchronised
and falls back to the HPET, an emulated device read that every timestamp
pays for; bench/run boots with tsc=reliable, as hardware runs on the TSC,
and section 1 says what the HPET would add. Both vCPUs share the
host's two cores with the emulator's own threads, so the reader on CPU 1
competes with the producer more than it would on hardware, and the host's
own load shows as spread: the UDP stream alone varied by about ±10 %
between runs, so smaller differences between capturing tools are not
differences.
"""


# --- the report ----------------------------------------------------------------------

class Plots:
    def __init__(self, path, enabled):
        self.dir, self.enabled, self.made = path, enabled, set()


def render(results, plots):
    docs = {}
    for path in sorted(glob.glob(os.path.join(results, "*.json"))):
        with open(path) as f:
            docs[os.path.basename(path)[:-len(".json")]] = json.load(f)
    out = ["# magnet benchmark results\n",
           "Made by `bench/report.py` from the files in [results/](results/) and "
           "nothing else; [README.md](README.md) says how each benchmark runs and "
           "what its file holds, [NOTES.md](NOTES.md) what people made of the "
           "figures, dated. Each section says when, on what code, kernel and machine "
           "its figures were measured: sections measured in different boots, or on "
           "different machines, are not to be compared figure for figure. Absolute "
           "times under QEMU's TCG are not hardware times: read the ratios, measured "
           "in the same boot.\n"]

    def missing(title, name):
        return [title + "\n", "_No results: bench/results/%s.json is missing._\n" % name]
    sections = [
        ("cost", "## 1. Cost per event", lambda d, p: cost_section(d, p, plots)),
        ("throughput", "## 2. Kernel-to-user throughput",
         lambda d, p: throughput_section(d, p, plots)),
        (None, None, lambda d, p: stream_section(docs, plots)),
        ("scaling", "## 4. Scaling", scaling_section),
        ("pfilter", "## 5. The packet filter in the kernel",
         lambda d, p: pfilter_section(d, p, False)),
        (None, None, lambda d, p: [TCG_NOTE]),
        ("pfilter-icount", "## 6. The packet filter in instructions",
         lambda d, p: pfilter_section(d, p, True)),
        ("stream-filter-icount", "## 7. The competing stream in instructions",
         stream_icount_section),
        ("session-cost", "## 8. Sessions on one probe point", sessions_section),
        ("ledger-cost", "## 9. The ledger's cost", ledger_section),
        ("ledger-cost-icount", "## 10. The ledger's cost in instructions",
         lambda d, p: ledger_section(d, p, True)),
        ("acct-cost", "## 11. What per-call accounting costs a server", acct_section),
        ("acct-cost-icount", "## 12. Per-call accounting in instructions",
         lambda d, p: acct_section(d, p, True)),
        ("span-cost", "## 13. What an application's span costs", span_section),
        ("span-cost-icount", "## 14. What a span costs, in instructions",
         lambda d, p: span_section(d, p, True)),
        ("blkkin", "## 15. One request across layers: BlkKin's experiment",
         blkkin_section),
        ("blkkin-icount", "## 16. BlkKin's experiment in instructions",
         lambda d, p: blkkin_section(d, p, True)),
        ("sample-cost", "## 17. What sampling at 1 kHz costs", sample_section),
        ("sample-cost-icount", "## 18. Sampling's cost in instructions",
         lambda d, p: sample_section(d, p, True)),
    ]
    for name, title, make in sections:
        if name is None:
            out += make(None, None)
        elif name in docs:
            out += make(docs[name], "results/%s.json" % name)
        else:
            out += missing(title, name)
    known = {"cost", "throughput", "scaling", "session-cost", "ledger-cost", "acct-cost",
             "ledger-cost-icount", "acct-cost-icount", "pfilter", "span-cost",
             "span-cost-icount", "blkkin", "blkkin-icount", "sample-cost",
             "sample-cost-icount",
             "pfilter-icount",
             "stream-filter-icount", "stream-paper", "stream-filter", "stream-sampling"}
    for name in sorted(set(docs) - known):
        print("bench: results/%s.json is no section of the report" % name, file=sys.stderr)
    return re.sub(r"\n{3,}", "\n\n", "\n".join(out)).rstrip("\n") + "\n"


def main():
    top = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--results", default=os.path.join(top, "results"),
                    help="the results files' directory (default bench/results)")
    ap.add_argument("--out", default=os.path.join(top, "RESULTS.md"),
                    help="the report (default bench/RESULTS.md)")
    ap.add_argument("--plots", default=os.path.join(top, "plots"),
                    help="the plots' directory (default bench/plots)")
    args = ap.parse_args()
    gnuplot = shutil.which("gnuplot") is not None
    if not gnuplot:
        print("bench: gnuplot is not installed: no plots", file=sys.stderr)
    os.makedirs(args.plots, exist_ok=True)
    plots = Plots(args.plots, gnuplot)
    text = render(args.results, plots)
    with open(args.out, "w") as f:
        f.write(text)
    # (the plots of sections without figures any longer go)
    if gnuplot:
        for png in glob.glob(os.path.join(args.plots, "*.png")):
            if os.path.basename(png) not in plots.made:
                os.unlink(png)
    print("bench: wrote %s and %d plots" % (args.out, len(plots.made)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
