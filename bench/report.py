#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""bench/report.py: the report of `make bench` (bench/run).

Reads the VM's console log, takes the benchmarks' lines

    BENCH-RECORD cost|scaling CASE RUN NS_PER_CALL
    BENCH-TP TOOL CASE RECORD_BYTES RATE WM CALLS SECONDS READ LOST TICKS RUN
    BENCH-STREAM EXPERIMENT CASE RUN SECS RX_BYTES RX_DGRAMS RX_LOST
                 CAP_TICKS CAPTURED DROPPED RX2_BYTES
    BENCH-UNAVAILABLE TOOL REASON...
    BENCH-INFO KEY VALUE (the clocksource in use)
    BENCH: free text (older benchmarks, copied as they are)

and prints tables, writes RESULTS.md (date, kernel, machine, every figure
with its spread over the runs, every ratio to its reference with the
spread of the per-run ratios) and a PNG plot per benchmark (gnuplot).
"""
import argparse
import datetime
import math
import os
import platform
import random
import re
import shutil
import statistics
import subprocess
import sys

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

TCG_NOTE = """\
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
ratios between tools measured side by side in this boot are what the
tables are for. String instructions (rep movs, rep stos) cost far more
than on hardware, which weighs on large payloads and on every reader that
copies (magnet-read, tcpdump's pcap writer; trace-cmd's splice copies
nothing). The clock: under TCG the guest finds its TSCs unsynchronised
and falls back to the HPET, an emulated device read that every timestamp
pays for; bench/run boots with tsc=reliable, as hardware runs on the TSC,
and the table above says what the HPET would add. Both vCPUs share the
host's two cores with the emulator's own threads, so the reader on CPU 1
competes with the producer more than it would on hardware, and the host's
own load shows as spread: the UDP stream alone varied by about ±10 %
between runs, so smaller differences between capturing tools are not
differences."""


def parse(log):
    runs, unavailable, other, kernel, tp, st = {}, [], [], None, [], []
    info = {}
    for line in open(log, errors="replace"):
        line = line.rstrip("\n")
        m = re.match(r"MAGNET-RIG: booted (\S+), (\d+) CPUs", line)
        if m:
            kernel = (m.group(1), int(m.group(2)))
        w = line.split()
        if len(w) == 5 and w[0] == "BENCH-RECORD":
            try:
                runs.setdefault((w[1], w[2]), {})[int(w[3])] = float(w[4])
            except ValueError:
                pass
        elif len(w) in (11, 12) and w[0] == "BENCH-TP":
            try:
                tp.append({"tool": w[1], "case": w[2], "bytes": int(w[3]),
                           "rate": int(w[4]), "wm": w[5], "calls": int(w[6]),
                           "secs": float(w[7]), "read": int(w[8]),
                           "lost": int(w[9]), "ticks": int(w[10]),
                           "run": int(w[11]) if len(w) == 12 else 1})
            except ValueError:
                pass
        elif len(w) == 12 and w[0] == "BENCH-STREAM":
            try:
                st.append({"exp": w[1], "case": w[2], "run": int(w[3]),
                           "secs": float(w[4]), "rx": int(w[5]),
                           "dgrams": int(w[6]), "rx_lost": int(w[7]),
                           "ticks": int(w[8]), "captured": int(w[9]),
                           "dropped": int(w[10]), "rx2": int(w[11])})
            except ValueError:
                pass
        elif len(w) >= 3 and w[0] == "BENCH-INFO":
            info.setdefault(w[1], " ".join(w[2:]))
        elif w and w[0] == "BENCH-UNAVAILABLE":
            unavailable.append((w[1] if len(w) > 1 else "?", " ".join(w[2:])))
        elif line.startswith("BENCH: "):
            other.append(line[7:])
    return runs, unavailable, collapse_runs(other), kernel, tp, st, info


def collapse_runs(other):
    """Lines that differ only in their run number ("CASE run N: TEXT")
    become one, with the runs that said it."""
    out, said = [], {}
    for line in other:
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


def reader_losses(other):
    """Per cost case, what its reader said: (records read, records lost)
    for magnet-read, (None, events lost) for the other tools."""
    out = {}
    for line in other:
        m = re.match(r"(\S+), reader: (.*)", line)
        if not m:
            continue
        case, said = m.groups()
        r = re.search(r"(\d+) records, (\d+) lost", said)
        if r:
            out[case] = (int(r.group(1)), int(r.group(2)))
            continue
        lost = [int(x) for x in re.findall(r"(\d+) events (?:overrun|lost)", said)]
        if lost:
            out[case] = (None, sum(lost))
    return out


def spread(values):
    return min(values), statistics.median(values), max(values)


def cost_rows(runs):
    """Per case: runs, median ns/call, added ns (median of per-run
    differences to the no-probe median) with min and max."""
    base_runs = list(runs.get(("cost", "none"), {}).values()) + \
        list(runs.get(("cost", "none-after"), {}).values())
    if not base_runs:
        return None, {}
    base = statistics.median(base_runs)
    rows = {}
    for case, _, _ in CASES:
        r = runs.get(("cost", case))
        if not r:
            continue
        added = {i: v - base for i, v in r.items()}
        rows[case] = {
            "runs": r,
            "added_runs": added,
            "ns": spread(list(r.values())),
            "added": spread(list(added.values())),
        }
    return base, rows


def ratio(rows, a, b):
    """Added cost of a over that of b: the ratio of medians, and the range
    of the ratios of same-numbered runs."""
    ra, rb = rows.get(a), rows.get(b)
    if not ra or not rb or rb["added"][1] <= 0:
        return None
    a_runs, b_runs = ra["added_runs"], rb["added_runs"]
    per_run = [a_runs[i] / b_runs[i] for i in a_runs if i in b_runs and b_runs[i] > 0]
    med = ra["added"][1] / rb["added"][1]
    return med, (min(per_run), max(per_run)) if per_run else (med, med)


def plot(rows, path):
    if not shutil.which("gnuplot"):
        return False
    data = path + ".dat"
    with open(data, "w") as f:
        for i, (case, _, tool) in enumerate(CASES):
            if case in rows and case != "none":
                lo, med, hi = rows[case]["added"]
                f.write('%d "%s" %.1f %.1f %.1f\n' % (i, case, med, lo, hi))
    script = """
set terminal png size 1100,600
set output '%s'
set title 'Time added to a getppid() call, ns (median, min-max over runs; TCG)'
set style data histograms
set style fill solid 0.6
set boxwidth 0.7
set xtics rotate by -40 noenhance
set ylabel 'ns added per call'
set grid ytics
unset key
plot '%s' using 0:3:xtic(2) with boxes, '' using 0:3:4:5 with yerrorbars lc rgb 'black'
""" % (path, data)
    ok = subprocess.run(["gnuplot"], input=script, text=True).returncode == 0
    os.unlink(data)
    return ok


def fmt_spread(values, fmt):
    """median (min–max) of values, each printed with fmt."""
    lo, med, hi = spread(values)
    if lo == hi:
        return fmt % med
    return (fmt + " (" + fmt + "–" + fmt + ")") % (med, lo, hi)


def tp_valid(r):
    """Every call's event must be read or counted lost, and the reader
    must have run: otherwise the run is not a figure."""
    return abs(r["read"] + r["lost"] - r["calls"]) <= 0.01 * r["calls"] and r["ticks"] >= 0


def throughput(tp, plots):
    """The throughput table (markdown lines) and its plot."""
    nruns = max(r["run"] for r in tp)
    out = ["## 2. Kernel-to-user throughput\n",
           "A kprobe on getppid() logs records of the given size while the "
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
           "round-robin: median (lowest–highest).\n" % nruns,
           "| tool | record | offered | watermarks | produced/s | read/s | MB/s read | lost | reader CPU |",
           "|---|---|---|---|---|---|---|---|---|"]
    settings = []
    for r in tp:
        key = (r["tool"], r["case"], r["bytes"], r["rate"], r["wm"])
        if key not in settings:
            settings.append(key)
    bad = [r for r in tp if not tp_valid(r)]
    medians = {}
    for key in settings:
        rs = [r for r in tp if (r["tool"], r["case"], r["bytes"], r["rate"], r["wm"]) == key
              and tp_valid(r)]
        if not rs:
            continue
        tool, case, nbytes, rate, wm = key
        secs = [r["secs"] or 1e-9 for r in rs]
        produced = [r["calls"] / t for r, t in zip(rs, secs)]
        read = [r["read"] / t for r, t in zip(rs, secs)]
        mbs = [r["read"] * nbytes / t / 1e6 for r, t in zip(rs, secs)]
        lost = [100.0 * r["lost"] / max(r["calls"], 1) for r in rs]
        cpu = [r["ticks"] / (t + 1.0) for r, t in zip(rs, secs)]
        medians[key] = statistics.median(mbs)
        out.append("| %s | %s B | %s | %s | %s | %s | %s | %s %% | %s %% |" % (
            tool + ("" if case == "kprobe" else " " + case), nbytes,
            "max" if rate == 0 else "%d/s" % rate, wm,
            fmt_spread(produced, "%.0f"), fmt_spread(read, "%.0f"),
            fmt_spread(mbs, "%.1f"), fmt_spread(lost, "%.1f"), fmt_spread(cpu, "%.0f")))
    out.append("")
    pairs = []
    for rate in sorted({k[3] for k in settings}, key=lambda v: (v == 0, v)):
        m = medians.get(("magnet", "kprobe", 40, rate, "bulk"))
        f = medians.get(("ftrace", "kprobe", 24, rate, "bulk"))
        if m and f:
            mrec = statistics.median(r["read"] / (r["secs"] or 1e-9) for r in tp if tp_valid(r) and
                                     (r["tool"], r["case"], r["rate"]) == ("magnet", "kprobe", rate))
            frec = statistics.median(r["read"] / (r["secs"] or 1e-9) for r in tp if tp_valid(r) and
                                     (r["tool"], r["case"], r["rate"]) == ("ftrace", "kprobe", rate))
            pairs.append("| %s | %.2f |" % ("max" if rate == 0 else "%d/s" % rate, mrec / frec))
    if pairs:
        out.append("Events read per second, magnet ÷ ftrace, same kprobe, same offered rate:\n")
        out.append("| offered | ratio |")
        out.append("|---|---|")
        out.extend(pairs)
        out.append("")
    if bad:
        out.append("Runs left out because read + lost does not account for every "
                   "event, or the reader ended early:\n")
        for r in bad:
            out.append("- %s %s at %s, run %d: %d calls, %d read, %d lost, reader ticks %d" % (
                r["tool"], r["case"], "max" if r["rate"] == 0 else "%d/s" % r["rate"],
                r["run"], r["calls"], r["read"], r["lost"], r["ticks"]))
        out.append("")
    unpaced = [k for k in settings if k[0] == "magnet" and k[3] == 0
               and k[1].startswith("log-") and k in medians]
    if unpaced and shutil.which("gnuplot"):
        data = os.path.join(plots, "throughput.dat")
        with open(data, "w") as f:
            for wm in ("bulk", "event", "bulk-read"):
                f.write('"%s"\n' % wm)
                for k in unpaced:
                    if k[4] == wm:
                        f.write("%d %.2f\n" % (k[2], medians[k]))
                f.write("\n\n")
        png = os.path.join(plots, "throughput.png")
        script = """
set terminal png size 900,500
set output '%s'
set title 'magnet-read, unpaced producer: MB/s read by record size (median of runs, TCG)'
set logscale x 2
set xlabel 'record bytes'
set ylabel 'MB/s read'
set grid
set key top left
plot '%s' index 0 using 1:2 with linespoints title 'bulk watermarks', '' index 1 using 1:2 with linespoints title 'per-event wake-ups', '' index 2 using 1:2 with linespoints title 'bulk, read() copies'
""" % (png, data)
        if subprocess.run(["gnuplot"], input=script, text=True).returncode == 0:
            out.append("![throughput](plots/throughput.png)\n")
        os.unlink(data)
    return out


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


def stream_runs(st, exp, case):
    return {r["run"]: r for r in st if r["exp"] == exp and r["case"] == case}


def mbits(r, key="rx"):
    return r[key] * 8 / r["secs"] / 1e6


def stream_targets(st):
    """The stream targets, from the paper experiment's medians: the
    stream's throughput (× nothing capturing, same-numbered runs), the
    capture CPU and the drops of magnet against tcpdump's at the same
    bytes per packet."""
    none = stream_runs(st, "paper", "none")

    def med(case, f):
        rs = stream_runs(st, "paper", case)
        v = [f(i, r) for i, r in rs.items() if f(i, r) is not None]
        return statistics.median(v) if v else None

    def kept(i, r):
        return r["rx"] / none[i]["rx"] if i in none and none[i]["rx"] else None

    def cpu(i, r):
        return r["ticks"] / r["secs"]

    def dropped(i, r):
        return 100.0 * r["dropped"] / max(r["captured"] + r["dropped"], 1)

    # (magnet case, tcpdump case, what, measure, its format, magnet must
    # be at least (+1) or at most (-1) tcpdump's)
    compare = (
        ("magnet-4-events-snap-96", "tcpdump-snap-96",
         "4 events per packet at 96 B: the stream kept, ≥ tcpdump -s 96's", kept, "%.2f", 1),
        ("magnet-1-events-snap-4000", "tcpdump-snap-4000",
         "1 event per packet at 4000 B: the stream kept, ≥ tcpdump -s 4000's", kept, "%.2f", 1),
        ("magnet-1-events-snap-96", "tcpdump-snap-96",
         "capture CPU at 96 B per packet, ≤ tcpdump -s 96's", cpu, "%.1f %%", -1),
        ("magnet-1-events-snap-4000", "tcpdump-snap-4000",
         "capture CPU at 4000 B per packet, ≤ tcpdump -s 4000's", cpu, "%.1f %%", -1))
    rows = []
    for m, t, what, f, fmt, sign in compare:
        a, b = med(m, f), med(t, f)
        if a is not None and b is not None:
            rows.append((what, (fmt + " against " + fmt) % (a, b), sign * (a - b) >= 0))
    # The expression in the kernel against tcpdump's filter, with the
    # competing stream: what each costs the monitored stream.
    fnone = stream_runs(st, "filter", "none")
    fk = {}
    for case in ("magnet-expression", "tcpdump-port"):
        v = [r["rx"] / fnone[i]["rx"] for i, r in stream_runs(st, "filter", case).items()
             if i in fnone and fnone[i]["rx"]]
        fk[case] = statistics.median(v) if v else None
    if fk["magnet-expression"] is not None and fk["tcpdump-port"] is not None:
        a, b = fk["magnet-expression"], fk["tcpdump-port"]
        rows.append(("the expression in the kernel (udp dst port 5001) costs the monitored "
                     "stream, with a competing one, no more than tcpdump's filter: kept ≥",
                     "%.2f against %.2f" % (a, b), a >= b))
    lossless = [c for _, c, _ in STREAM if c.startswith("tcpdump-") and
                stream_runs(st, "paper", c) and
                max(dropped(i, r) for i, r in stream_runs(st, "paper", c).items()) == 0]
    if lossless:
        worst = max((dropped(i, r) for _, c, _ in STREAM if c.startswith("magnet-")
                     for i, r in stream_runs(st, "paper", c).items()), default=None)
        if worst is not None:
            rows.append(("no drops where tcpdump dropped none (%s)" %
                         ", ".join(c.replace("tcpdump-snap-", "-s ") for c in lossless),
                         "magnet's worst run: %.1f %% dropped" % worst, worst == 0))
    if not rows:
        return []
    out = ["The stream targets (medians):\n",
           "| target | measured | met |", "|---|---|---|"]
    out.extend("| %s | %s | %s |" % (w, m, "yes" if ok else "no") for w, m, ok in rows)
    out.append("")
    return out


def stream_section(st, plots):
    secs = st[0]["secs"]
    nruns = max(r["run"] for r in st)
    out = ["## 3. The paper's tcpdump experiments\n",
           "An unpaced UDP stream (iperf, 8000-byte datagrams, %g s) from one "
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
           "or packets (tcpdump) the kernel could not hand over. %d runs, "
           "round-robin over the cases: median (lowest–highest); the ratio to "
           "nothing capturing is that of same-numbered runs.\n" % (secs, nruns)]

    def table(exp, title, cols, row):
        base = stream_runs(st, exp, "none")
        lines = []
        for e, case, what in STREAM:
            if e != exp:
                continue
            rs = stream_runs(st, exp, case)
            if rs:
                lines.append("| %s | %s |" % (what, " | ".join(row(rs, base))))
        if lines:
            out.append(title + "\n")
            out.append("| case | " + " | ".join(cols) + " |")
            out.append("|---" * (len(cols) + 1) + "|")
            out.extend(lines)
            out.append("")

    def vs_none(rs, base, key="rx"):
        ratios = [rs[i][key] / base[i][key] for i in rs if i in base and base[i][key]]
        return fmt_spread(ratios, "%.2f") if ratios else ""

    def cpu(rs):
        return fmt_spread([r["ticks"] / r["secs"] for r in rs.values()], "%.0f") + " %"

    def drops(rs):
        return fmt_spread([100.0 * r["dropped"] / max(r["captured"] + r["dropped"], 1)
                           for r in rs.values()], "%.1f") + " %"

    def per_packet(rs):
        return fmt_spread([r["captured"] / max(r["dgrams"], 1) for r in rs.values()], "%.2f")

    table("paper", "### Figures 5 and 6, Table 3: stream throughput, capture CPU and drops",
          ["Mbit/s", "× nothing", "capture CPU", "captured per datagram", "dropped"],
          lambda rs, base: [fmt_spread([mbits(r) for r in rs.values()], "%.0f"),
                            vs_none(rs, base), cpu(rs), per_packet(rs), drops(rs)])
    table("filter", "### Figure 8: per-thread filtering against an interface filter, with a "
          "competing stream\n\nA second unpaced stream (port 5002) leaves CPU 0 at the same "
          "time; only the first (port 5001) is of interest. Both tools capture at one "
          "point (magnet: the dev-xmit probe, 96 B of each packet). magnet keeps the "
          "monitored sender's records with a tgid rule, or with the expression tcpdump "
          "is given (a packet rule), in the kernel, before anything is written; "
          "tcpdump's filter runs on the interface, where both streams pass.",
          ["monitored Mbit/s", "× nothing", "competing Mbit/s", "capture CPU",
           "captured per monitored datagram", "dropped"],
          lambda rs, base: [fmt_spread([mbits(r) for r in rs.values()], "%.0f"),
                            vs_none(rs, base),
                            fmt_spread([mbits(r, "rx2") for r in rs.values()], "%.0f"),
                            cpu(rs), per_packet(rs), drops(rs)])
    out.extend(stream_targets(st))
    paper_none = stream_runs(st, "paper", "none")
    table("sampling", "### Figure 7: sampling (magnet, 4 events per packet, one hit in N "
          "of each probe)",
          ["Mbit/s", "× nothing", "capture CPU", "captured per datagram", "dropped"],
          lambda rs, base: [fmt_spread([mbits(r) for r in rs.values()], "%.0f"),
                            vs_none(rs, paper_none), cpu(rs), per_packet(rs), drops(rs)])

    # (a run of some experiments only leaves the others' plots alone)
    exps = {r["exp"] for r in st}
    if shutil.which("gnuplot") and {"paper", "sampling"} <= exps:
        data = os.path.join(plots, "stream.dat")
        with open(data, "w") as f:
            for e, case, what in STREAM:
                rs = stream_runs(st, e, case)
                if e == "paper" and rs:
                    v = [mbits(r) for r in rs.values()]
                    c = [r["ticks"] / r["secs"] for r in rs.values()]
                    f.write('"%s" %.1f %.1f %.1f %.1f\n' % (
                        case.replace("-events-snap-", " ev, snap ").replace("tcpdump-snap-", "tcpdump -s "),
                        statistics.median(v), min(v), max(v), statistics.median(c)))
        png = os.path.join(plots, "stream.png")
        script = """
set terminal png size 1100,600
set output '%s'
set title 'UDP stream across veth while capturing: receiver Mbit/s (median, min-max) and capture CPU (TCG)'
set style fill solid 0.6
set boxwidth 0.6
set xtics rotate by -35 noenhance
set ylabel 'Mbit/s received'
set y2label 'capture CPU, %%'
set y2tics
set yrange [0:*]
set y2range [0:*]
set grid ytics
set key top right
plot '%s' using 0:2:xtic(1) with boxes title 'stream', '' using 0:2:3:4 with yerrorbars lc rgb 'black' notitle, '' using 0:5 axes x1y2 with linespoints lw 2 title 'capture CPU'
""" % (png, data)
        if subprocess.run(["gnuplot"], input=script, text=True).returncode == 0:
            out.append("![stream](plots/stream.png)\n")
        os.unlink(data)
        data = os.path.join(plots, "sampling.dat")
        with open(data, "w") as f:
            for e, case, what in STREAM:
                rs = stream_runs(st, e, case)
                if e == "sampling" and rs:
                    f.write("%s %.1f %.1f\n" % (case.split("-")[1],
                                                statistics.median(mbits(r) for r in rs.values()),
                                                statistics.median(r["ticks"] / r["secs"] for r in rs.values())))
        base = [mbits(r) for r in paper_none.values()]
        png = os.path.join(plots, "sampling.png")
        script = """
set terminal png size 900,500
set output '%s'
set title 'magnet, 4 events per packet, sampling one hit in N: stream Mbit/s and capture CPU (TCG)'
set logscale x 2
set xlabel 'N'
set ylabel 'Mbit/s received'
set y2label 'capture CPU, %%'
set y2tics
set yrange [0:*]
set y2range [0:*]
set grid
set key right center
plot '%s' using 1:2 with linespoints title 'stream', %s title 'nothing capturing', '' using 1:3 axes x1y2 with linespoints title 'capture CPU'
""" % (png, data, "%.1f" % statistics.median(base) if base else "NaN")
        if subprocess.run(["gnuplot"], input=script, text=True).returncode == 0:
            out.append("![sampling](plots/sampling.png)\n")
        os.unlink(data)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--log", required=True)
    ap.add_argument("--results", required=True)
    ap.add_argument("--plots", required=True)
    args = ap.parse_args()
    runs, unavailable, other, kernel, tp, st, info = parse(args.log)
    # (Figure 8 under the instruction counter: section 7)
    st_insns = [dict(r, exp=r["exp"][:-len("-insns")]) for r in st
                if r["exp"].endswith("-insns")]
    st = [r for r in st if not r["exp"].endswith("-insns")]
    icount = st_insns or any(k[0] == "pfilter-insns" for k in runs)
    base, rows = cost_rows(runs)
    if base is None and not tp and not st and not st_insns and \
            not any(k[0] in ("scaling", "pfilter", "pfilter-insns") for k in runs):
        print("bench: no benchmark figures in %s" % args.log, file=sys.stderr)
        return 1
    os.makedirs(args.plots, exist_ok=True)
    plotted = base is not None and plot(rows, os.path.join(args.plots, "cost.png"))

    nruns = max((len(r["runs"]) for r in rows.values()), default=0)
    cpu = "?"
    for line in open("/proc/cpuinfo"):
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
    qemu = subprocess.run(["qemu-system-x86_64", "--version"], capture_output=True,
                          text=True).stdout.splitlines()
    out = []
    out.append("# magnet benchmark results\n")
    out.append("Generated by `make bench` (bench/run, bench/report.py) on %s UTC.\n"
               % datetime.datetime.utcnow().strftime("%Y-%m-%d %H:%M"))
    out.append("- this run's boot (sections not rerun say their own): kernel %s, %s vCPUs, "
               "under QEMU TCG (%s)" %
               (kernel[0] if kernel else "?", kernel[1] if kernel else "?",
                qemu[0] if qemu else "qemu"))
    out.append("- host: %s, %d CPUs, %s" % (cpu, os.cpu_count(), platform.platform()))
    if "clocksource" in info:
        cs = info["clocksource"]
        out.append("- clocksource: %s%s" % (cs, " (booted with tsc=reliable, as hardware runs)"
                                            if cs == "tsc" else
                                            " — NOT the TSC: every timestamp pays an emulated "
                                            "device read, which hardware does not"))
    if icount:
        out.append("- QEMU's instruction counter (BENCH_CLOCK=icount): the guest's clock "
                   "counts the instructions it runs")
    mit = ["%s: %s" % (k[len("mitigation-"):], v) for k, v in sorted(info.items())
           if k.startswith("mitigation-")]
    if mit:
        out.append("- the guest kernel's mitigations on the emulated CPU, which every "
                   "tool's calls and returns pay: %s" % "; ".join(mit))
    if nruns:
        out.append("- method: getppid() in a tight loop on CPU 0, %d timed runs per case "
                   "after one warm-up run; readers on CPU 1. Every figure is the median "
                   "of the runs, with the lowest and highest in brackets." % nruns)
    out.append("")
    if base is not None:
        out.extend(cost_section(base, rows, plotted, unavailable, runs,
                                reader_losses(other)))
    earlier = earlier_sections(args.results)
    if base is None:
        out.extend(earlier.get("1", []))
    if tp:
        out.extend(throughput(tp, args.plots))
    else:
        out.extend(earlier.get("2", []))
    if st and {r["exp"] for r in st} >= {"paper", "filter", "sampling"}:
        out.extend(stream_section(st, args.plots))
    elif st:
        out.extend(merge_stream(earlier.get("3", []), stream_section(st, args.plots), st))
    else:
        out.extend(earlier.get("3", []))
    if any(k[0] == "scaling" for k in runs):
        out.extend(scaling_section(runs))
    else:
        out.extend(earlier.get("4", []))
    if any(k[0] == "pfilter" for k in runs):
        out.extend(pfilter_section(runs))
    else:
        out.extend(earlier.get("5", []))
    out.append("### Where TCG distorts\n")
    out.append(TCG_NOTE + "\n")
    if any(k[0] == "pfilter-insns" for k in runs):
        out.extend(pfilter_section(runs, "pfilter-insns"))
    else:
        out.extend(earlier.get("6", []))
    if st_insns:
        out.extend(stream_insns_section(st_insns, args.plots))
    else:
        out.extend(earlier.get("7", []))
    if other:
        out.append("## Other figures of this boot\n")
        out.append("```")
        out.extend(other)
        out.append("```\n")
    # (sections carried over bring their blank lines along: one is enough)
    text = re.sub(r"\n{3,}", "\n\n", "\n".join(out))
    with open(args.results, "w") as f:
        f.write(text)
    print(text)
    return 0


def merge_stream(old, new, st):
    """Section 3 from a run of some of the stream benchmark's experiments
    (BENCH_STREAM_EXPERIMENTS): the earlier section's subsections, each
    replaced by this run's where it has one, and the targets table's rows
    by this run's where it measured them."""
    def split(lines):
        head, subs = [], []
        for line in lines:
            if line.startswith("### "):
                subs.append([line])
            elif subs:
                subs[-1].append(line)
            else:
                head.append(line)
        return head, subs

    def targets(lines):
        i = next((k for k, line in enumerate(lines)
                  if line.startswith("The stream targets")), None)
        if i is None:
            return None, None
        j = i + 1
        while j < len(lines) and not lines[j].startswith("| target"):
            j += 1
        k = j
        while k < len(lines) and lines[k].startswith("|"):
            k += 1
        return j + 2, k      # the rows: lines[j + 2:k]

    if not old:
        return new
    new = "\n".join(new).split("\n")      # (an entry may hold several lines)
    ohead, osubs = split(old)
    _, nsubs = split(new)
    newtab = {}
    for sub in nsubs:
        a, b = targets(sub)
        if a is not None:
            newtab.update((r.split(" | ")[0], r) for r in sub[a:b])
    oldrows = []
    for sub in osubs:
        a, b = targets(sub)
        if a is not None:
            oldrows = sub[a:b]
    rows = [newtab.pop(r.split(" | ")[0], r) for r in oldrows] + list(newtab.values())
    runs = max(r["run"] for r in st)
    exps = sorted({r["exp"] for r in st})
    out = []
    for line in ohead:
        if line.startswith("_Not rerun this time"):
            line = line.split(" Rerun in this run")[0]     # (an earlier merge's)
            line = ("%s Rerun in this run, with %d runs: the experiments %s (their "
                    "subsections, and their rows of the targets table)._"
                    % (line.rstrip("_"), runs, ", ".join(exps)))
        out.append(line)
    byhead = {sub[0]: sub for sub in nsubs}
    for sub in osubs:
        sub = byhead.get(sub[0], sub)
        a, b = targets(sub)
        out.extend(sub if a is None else sub[:a] + rows + sub[b:])
    return out


def earlier_sections(path):
    """The numbered sections of an earlier RESULTS.md, for the benchmarks
    this run did not run (bench/run cost): {"2": [lines], ...}, each
    marked with the date of the run its figures come from."""
    try:
        text = open(path).read().split("\n")
    except OSError:
        return {}
    when = "an earlier run"
    for line in text:
        m = re.match(r"Generated by .* on (.*) UTC\.", line)
        if m:
            when = "the run of %s UTC" % m.group(1)
            break
    sections, cur = {}, None
    for line in text:
        m = re.match(r"## (\d)\. ", line)
        if m:
            cur = m.group(1)
            sections[cur] = [line, "", "_Not rerun this time: the figures of this "
                             "section are from %s._" % when]
            continue
        if line.startswith("## ") or line.startswith("### Where TCG distorts"):
            cur = None
        if cur and line.startswith("_Not rerun this time"):
            sections[cur][2] = line     # carried over before: keep its date
        elif cur:
            sections[cur].append(line)
    return sections


PFILTER = [
    ("header-drop", "header rule (proto udp dport 5001)"),
    ("packet-drop", "packet rule, tcpdump's language: udp dst port 5001"),
    ("packet-drop-long", "packet rule, a longer expression (4 clauses)"),
    ("packet-drop-interp", "packet rule, udp dst port 5001 and greater 0 (interpreted)"),
    ("tcpdump-drop", "tcpdump's own filter on the device: udp dst port 5001"),
]


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
    return v, again[len(again) * 5 // 100], again[len(again) * 95 // 100]


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


def stream_insns_section(st, plots):
    """7. Figure 8 under QEMU's instruction counter: section 3's Figure 8
    subsection and its target row, from records of experiment
    filter-insns (passed here renamed filter)."""
    text = "\n".join(stream_section(st, plots)).split("\n")
    at = next((k for k, line in enumerate(text) if line.startswith("### Figure 8")), None)
    if at is None:
        return []
    return (["## 7. The competing stream in instructions\n",
             STREAM_INSNS_INTRO % max(r["run"] for r in st)] + text[at:] + [""])


def pfilter_section(runs, exp="pfilter"):
    """5. A packet the filter drops: the expression in the kernel against
    the header rule, at the send call and at IP output. Or, for
    exp "pfilter-insns", section 6: the same, counted in instructions."""
    insns = exp == "pfilter-insns"
    out = ["## 5. The packet filter in the kernel\n",
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
           "case is compared too: the fastest setup of each.\n",
           "| layer | case | ns per call | added | × header rule (90 % interval) | best runs: added, × header rule |",
           "|---|---|---|---|---|---|"]
    if insns:
        out[:2] = ["## 6. The packet filter in instructions\n", PFILTER_INSNS_INTRO]
        out[2] = out[2].replace("ns per call", "instructions per call")
    rows = []
    versus = None
    for layer in ("socket", "ip", "dev"):
        none = runs.get((exp, layer + "-none"))
        if not none:
            continue
        base = statistics.median(none.values())
        out.append("| %s | no probe | %s | | | %.0f |" % (
            layer, fmt_spread(list(none.values()), "%.0f"), min(none.values())))
        hdr = runs.get((exp, layer + "-header-drop"), {})
        best_hdr = min(hdr.values()) - min(none.values()) if hdr else None
        for case, what in PFILTER:
            r = runs.get((exp, "%s-%s" % (layer, case)))
            if not r:
                continue
            added = statistics.median(r.values()) - base
            ratio = added_ratio(r, hdr, none) if case != "header-drop" else None
            best = min(r.values()) - min(none.values())
            best_ratio = best / best_hdr if best_hdr and best_hdr > 0 else None
            out.append("| %s | %s | %s | %+.0f | %s | %+.0f%s |" % (
                layer, what, fmt_spread(list(r.values()), "%.0f"), added,
                "%.2f (%.2f–%.2f)" % ratio if ratio else "",
                best, ", %.2f" % best_ratio if case != "header-drop" and best_ratio else ""))
            if case == "packet-drop" and ratio:
                rows.append((layer, ratio, best_ratio))
        # a competing packet: magnet's expression against tcpdump's filter
        pk = runs.get((exp, layer + "-packet-drop"), {})
        td = runs.get((exp, layer + "-tcpdump-drop"), {})
        if layer == "dev" and pk and td:
            v = added_ratio(pk, td, none)
            if v:
                versus = (v, statistics.median(pk.values()) - base,
                          statistics.median(td.values()) - base,
                          (min(pk.values()) - min(none.values())) /
                          (min(td.values()) - min(none.values())))
    if len(out) == 4:
        return []
    out.append("")
    if rows:
        out.append("| target | measured | met |")
        out.append("|---|---|---|")
        for layer, (v, lo, hi), b in rows:
            out.append("| a packet the expression drops costs ≤ 1.2× a header-rule drop (%s) "
                       "| %.2f (90 %%: %.2f–%.2f; best runs: %s) | %s |" % (
                           layer, v, lo, hi, "%.2f" % b if b else "-",
                           "yes" if v <= 1.2 and (b is None or b <= 1.2) else "no"))
        if versus:
            (v, lo, hi), a, b, best = versus
            out.append("| a packet of a competing stream, dropped at the device's transmit: "
                       "the expression in the kernel costs ≤ tcpdump's filter "
                       "| %+.0f against %+.0f %s: %.2f× (90 %%: %.2f–%.2f; best runs: %.2f×) | %s |" % (
                           a, b, "instructions" if insns else "ns", v, lo, hi, best,
                           "yes" if v <= 1 and best <= 1 else "no"))
        out.append("")
    return out


def scaling_section(runs):
    out = ["## 4. Scaling\n",
           "getppid() on CPU 0, or on both CPUs at once (their mean); buffers in "
           "overwrite mode, no reader. Added cost is against the no-probe loop "
           "with as many CPUs; per event divides it by the events a call "
           "logs.\n",
           "| case | ns per call | added per event |",
           "|---|---|---|"]
    med = {c: statistics.median(r.values()) for (e, c), r in runs.items() if e == "scaling"}
    for c in ("none-1cpu", "none-2cpu"):
        if c in med:
            r = list(runs[("scaling", c)].values())
            out.append("| no probe, %s | %.0f (%.0f–%.0f) | |" % (
                "one CPU calling" if c.endswith("1cpu") else "both CPUs calling",
                med[c], min(r), max(r)))
    for case, what, base, per_call in SCALING:
        if case not in med or base not in med:
            continue
        added = [(v - med[base]) / per_call for v in runs[("scaling", case)].values()]
        out.append("| %s | %.0f | %+.0f (%+.0f–%+.0f) |" % (
            what, med[case], statistics.median(added), min(added), max(added)))
    out.append("")
    # The target: two producing CPUs slow magnet's events no more than
    # ftrace's (added cost per event, both CPUs ÷ one, medians).
    growth = {}
    for tool in ("magnet", "ftrace", "magnet-filtered", "kprobe-empty",
                 "ftrace-ops-clocked"):
        one, two = med.get(tool + "-1cpu"), med.get(tool + "-2cpu")
        if one is not None and two is not None and one > med["none-1cpu"]:
            growth[tool] = (two - med["none-2cpu"]) / (one - med["none-1cpu"])
    parts = [(t, w) for t, w in (
        ("magnet-filtered", "magnet's event dropped by its filter"),
        ("kprobe-empty", "an empty kprobe"),
        ("ftrace-ops-clocked", "an ftrace_ops callback reading magnet's clock"))
        if t in growth]
    if parts:
        out.append("Both CPUs ÷ one, added cost per event (medians): " + "; ".join(
            "%s %.2f" % (w, growth[t]) for t, w in parts) + ".\n")
    if "magnet" in growth and "ftrace" in growth:
        out.append("The target: an event's added cost with both CPUs producing ÷ with "
                   "one, magnet's no more than ftrace's: magnet %.2f, ftrace %.2f: %s.\n" % (
                       growth["magnet"], growth["ftrace"],
                       "met" if growth["magnet"] <= growth["ftrace"] else
                       "not met, by %.1f %%" % (100 * (growth["magnet"] / growth["ftrace"] - 1))))
    return out


def filtered_breakdown(rows):
    """Where a filtered-out event's cost goes, from three cases of this
    boot: an empty ftrace_ops callback, one that only takes the guards
    every callback needs, and magnet's event dropped by its gate."""
    need = ("ftrace-ops-empty", "ftrace-ops-guarded", "magnet-kprobe-filtered")
    if any(c not in rows for c in need):
        return []
    empty, guarded, filtered = (rows[c]["added"][1] for c in need)
    return ["Where a filtered-out event's %+.0f ns go, in this boot: ftrace's "
            "trampoline and an empty callback %+.0f ns; the guards every callback "
            "needs (ftrace's recursion lock, the check that RCU is watching) "
            "%+.0f ns more; magnet's part (its probe list, the handler, the gate "
            "and the counter) the remaining %+.0f ns.\n" % (
                filtered, empty, guarded - empty, filtered - guarded)]


def hpet_section(rows, runs):
    """What the HPET clocksource adds to a logged event, measured in the
    same boot by switching the clocksource."""
    none = runs.get(("cost", "none-hpet"))
    kp = runs.get(("cost", "magnet-kprobe-hpet"))
    if not none or not kp or "magnet-kprobe" not in rows:
        return []
    base = statistics.median(none.values())
    added = [v - base for v in kp.values()]
    tsc = rows["magnet-kprobe"]["added"]
    out = ["With the HPET as clocksource (switched in this boot, then back), "
           "magnet's logged kprobe event:\n",
           "| clocksource | bare call, ns | added ns per event |",
           "|---|---|---|",
           "| tsc | %.0f | %+.0f (%+.0f–%+.0f) |" % (
               statistics.median(list(runs[("cost", "none")].values())),
               tsc[1], tsc[0], tsc[2]),
           "| hpet | %.0f (%.0f–%.0f) | %+.0f (%+.0f–%+.0f) |" % (
               base, min(none.values()), max(none.values()),
               statistics.median(added), min(added), max(added)),
           "",
           "So the HPET adds about %.0f ns to every record under TCG (a "
           "record takes one timestamp), a cost hardware with a TSC does not "
           "pay.\n" % (statistics.median(added) - tsc[1])]
    return out


def logged_breakdown(rows):
    """Where a logged event's cost goes, from four cases of this boot: the
    guarded empty ftrace_ops callback, the same reading magnet's clock,
    magnet's event dropped by its gate, and the same event logged."""
    need = ("ftrace-ops-guarded", "ftrace-ops-clocked", "magnet-kprobe-filtered",
            "magnet-kprobe")
    if any(c not in rows for c in need):
        return []
    guarded, clocked, filtered, logged = (rows[c]["added"][1] for c in need)
    return ["Where a logged event's %+.0f ns go, in this boot: reaching a callback "
            "with its guards %+.0f ns; magnet's probe list, handler and gate "
            "%+.0f ns (a filtered-out event's part); the timestamp (reading the "
            "clock) %+.0f ns; reserving, filling and publishing the 40-byte record "
            "the remaining %+.0f ns.\n" % (
                logged, guarded, filtered - guarded, clocked - guarded,
                logged - filtered - (clocked - guarded))] + local_clock_note(rows) + \
        tracepoint_note(rows)


def tracepoint_note(rows):
    """The tracepoint events over their floor: a handler on sys_enter that
    does nothing (it also turns on the system calls' tracing path, which
    every tool's handler pays)."""
    need = ("tracepoint-empty", "magnet-tracepoint", "ftrace-tracepoint")
    if any(c not in rows for c in need):
        return []
    empty, mine, theirs = (rows[c]["added"][1] for c in need)
    return ["The sys_enter tracepoint's floor, a handler that does nothing, adds "
            "%+.0f ns (the system calls' tracing path it turns on included); over it, "
            "magnet's event adds %+.0f ns and ftrace's %+.0f ns: %.2f×.\n" % (
                empty, mine - empty, theirs - empty,
                (mine - empty) / (theirs - empty) if theirs > empty else float("nan"))]


def local_clock_note(rows):
    """magnet's clock (CLOCK_MONOTONIC, ktime_get_mono_fast_ns()) against
    ftrace's default trace clock (trace_clock_local(), sched_clock()), each
    read from the same guarded ftrace_ops callback in this boot."""
    need = ("ftrace-ops-guarded", "ftrace-ops-clocked", "ftrace-ops-local-clocked")
    if any(c not in rows for c in need):
        return []
    guarded, mono, local = (rows[c]["added"][1] for c in need)
    return ["The clocks, each read from the guarded callback: magnet's "
            "(CLOCK_MONOTONIC, which records of all CPUs and user space share) "
            "%+.0f ns; ftrace's default trace clock (trace_clock_local(), per "
            "CPU) %+.0f ns.\n" % (mono - guarded, local - guarded)]


def cost_section(base, rows, plotted, unavailable, runs, readers):
    out = []
    out.append("## 1. Cost per event\n")
    out.append("The bare call took %.0f ns (median of the runs before and after "
               "everything else). Readers: magnet-read `--trace` on 4 MiB overwrite-mode "
               "buffers per CPU (read with read(): overwrite mode is not mapped); "
               "trace-cmd record on ftrace's, also overwriting; lttng's consumer "
               "daemon. Lost: records overwritten before the reader got them, over "
               "the case's runs (magnet-read and trace-cmd), or events bpftrace "
               "lost. An overwritten record was written and paid for, and its "
               "eviction costs the writer more, so losses do not flatter "
               "magnet's figures.\n" % base)
    out.append("| case | tool | ns per call | added ns | × empty kprobe | lost |")
    out.append("|---|---|---|---|---|---|")
    floor = rows.get("kprobe-empty", {}).get("added", (0, 0, 0))[1]
    for case, what, tool in CASES:
        if case not in rows:
            continue
        lo, med, hi = rows[case]["ns"]
        alo, amed, ahi = rows[case]["added"]
        x = "%.2f" % (amed / floor) if floor > 0 and case != "none" else ""
        lost = ""
        if case in readers:
            nread, nlost = readers[case]
            lost = "%d" % nlost if nread is None else \
                "%d of %d" % (nlost, nread + nlost)
        out.append("| %s | %s | %.0f (%.0f–%.0f) | %s | %s | %s |" % (
            what, tool, med, lo, hi,
            "" if case == "none" else "%+.0f (%+.0f–%+.0f)" % (amed, alo, ahi), x,
            lost))
    out.append("")
    out.append("magnet against the reference (added cost ÷ added cost; the range "
               "is that of the ratios of same-numbered runs):\n")
    out.append("| magnet | reference | ratio |")
    out.append("|---|---|---|")
    for a, b in PAIRS:
        r = ratio(rows, a, b)
        if r:
            out.append("| %s | %s | %.2f (%.2f–%.2f) |" % (a, b, r[0], r[1][0], r[1][1]))
    out.append("")
    out.append("The targets (added cost ÷ added cost, medians):\n")
    out.append("| magnet | reference | target | measured | met |")
    out.append("|---|---|---|---|---|")
    for a, b, limit in TARGETS:
        r = ratio(rows, a, b)
        out.append("| %s | %s | ≤ %.2f | %s | %s |" % (
            a, b, limit, "%.2f" % r[0] if r else "not measured",
            ("yes" if r[0] <= limit else "no, by %.0f %%" % (100 * (r[0] / limit - 1)))
            if r else ""))
    out.append("")
    out.extend(filtered_breakdown(rows))
    out.extend(logged_breakdown(rows))
    out.extend(hpet_section(rows, runs))
    missing = [c for c, _, _ in CASES if c not in rows]
    if plotted:
        out.append("![added cost per call](plots/cost.png)\n")
    if unavailable or missing:
        out.append("Not measured:\n")
        for tool, why in unavailable:
            out.append("- %s: %s" % (tool, why))
        if missing:
            out.append("- cases without figures in this run: %s" % ", ".join(missing))
        out.append("")
    return out


if __name__ == "__main__":
    sys.exit(main())
