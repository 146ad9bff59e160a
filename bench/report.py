#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""bench/report.py: the report of `make bench` (bench/run).

Reads the VM's console log, takes the benchmarks' lines

    BENCH-RECORD cost|scaling CASE RUN NS_PER_CALL
    BENCH-TP TOOL CASE RECORD_BYTES RATE WM CALLS SECONDS READ LOST TICKS
    BENCH-UNAVAILABLE TOOL REASON...
    BENCH: free text (older benchmarks, copied as they are)

and prints tables, writes RESULTS.md (date, kernel, machine, every figure
with its spread over the runs, every ratio to its reference with the
spread of the per-run ratios) and a PNG plot per benchmark (gnuplot).
"""
import argparse
import datetime
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys

# What each case is, in the order of the tables.
CASES = [
    ("none", "no probe", "-"),
    ("kprobe-empty", "kprobe, empty handler (the floor)", "kernel"),
    ("magnet-kprobe-filtered", "kprobe, event dropped by a filter rule", "magnet"),
    ("magnet-kprobe", "kprobe, 40 B record, reader draining", "magnet"),
    ("magnet-log-32", "kprobe logging 32 B, reader draining", "magnet"),
    ("magnet-log-256", "kprobe logging 256 B, reader draining", "magnet"),
    ("magnet-log-4096", "kprobe logging 4 KiB, reader draining", "magnet"),
    ("magnet-tracepoint", "sys_enter tracepoint, reader draining", "magnet"),
    ("magnet-kretprobe", "kretprobe, reader draining", "magnet"),
    ("ftrace-kprobe", "kprobe event, trace-cmd recording", "ftrace"),
    ("ftrace-tracepoint", "raw_syscalls:sys_enter, trace-cmd recording", "ftrace"),
    ("ftrace-kretprobe", "kretprobe event, trace-cmd recording", "ftrace"),
    ("bpftrace-kprobe-count", "kprobe, count() in the kernel", "bpftrace"),
    ("bpftrace-kprobe-printf", "kprobe, printf() per event", "bpftrace"),
    ("bpftrace-kretprobe-count", "kretprobe, count() in the kernel", "bpftrace"),
]

# magnet against the reference tools: (magnet case, reference case).
PAIRS = [
    ("magnet-kprobe-filtered", "kprobe-empty"),
    ("magnet-kprobe", "kprobe-empty"),
    ("magnet-kprobe", "ftrace-kprobe"),
    ("magnet-kprobe", "bpftrace-kprobe-printf"),
    ("magnet-kprobe", "bpftrace-kprobe-count"),
    ("magnet-log-32", "ftrace-kprobe"),
    ("magnet-log-256", "ftrace-kprobe"),
    ("magnet-log-4096", "ftrace-kprobe"),
    ("magnet-tracepoint", "ftrace-tracepoint"),
    ("magnet-kretprobe", "ftrace-kretprobe"),
    ("magnet-kretprobe", "bpftrace-kretprobe-count"),
]

# Scaling: (case, what, its no-probe case, events per call).
SCALING = [
    ("magnet-1cpu", "magnet kprobe, one CPU calling", "none-1cpu", 1),
    ("magnet-2cpu", "magnet kprobe, both CPUs calling", "none-2cpu", 1),
    ("ftrace-1cpu", "ftrace kprobe event, one CPU calling", "none-1cpu", 1),
    ("ftrace-2cpu", "ftrace kprobe event, both CPUs calling", "none-2cpu", 1),
    ("magnet-4-probes-1-buffer", "magnet, 4 kprobes into 1 buffer", "none-1cpu", 4),
    ("magnet-4-probes-4-buffers", "magnet, 4 kprobes into 4 buffers", "none-1cpu", 4),
    ("magnet-16-probes-1-buffer", "magnet, 16 kprobes into 1 buffer", "none-1cpu", 16),
    ("magnet-16-probes-16-buffers", "magnet, 16 kprobes into 16 buffers", "none-1cpu", 16),
]

TCG_NOTE = """\
Under TCG (QEMU's emulator) a kprobe's trap (int3, then the handler and
the single-step or its emulation) costs several times what it costs on
hardware relative to plain instructions, so every kprobe-based figure here,
magnet's and the reference tools' alike, is inflated against the bare
system call. Ratios between tools that pay the same trap (magnet's kprobe
against ftrace's kprobe event, bpftrace's kprobe, the empty kprobe) hold;
ratios against the bare call do not. Tracepoints pay no trap. Both vCPUs
share the host's two cores with the emulator's own threads, so the reader
on CPU 1 competes with the producer more than it would on hardware."""


def parse(log):
    runs, unavailable, other, kernel, tp = {}, [], [], None, []
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
        elif len(w) == 11 and w[0] == "BENCH-TP":
            try:
                tp.append({"tool": w[1], "case": w[2], "bytes": int(w[3]),
                           "rate": int(w[4]), "wm": w[5], "calls": int(w[6]),
                           "secs": float(w[7]), "read": int(w[8]),
                           "lost": int(w[9]), "ticks": int(w[10])})
            except ValueError:
                pass
        elif w and w[0] == "BENCH-UNAVAILABLE":
            unavailable.append((w[1] if len(w) > 1 else "?", " ".join(w[2:])))
        elif line.startswith("BENCH: "):
            other.append(line[7:])
    return runs, unavailable, other, kernel, tp


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


def throughput(tp, plots):
    """The throughput table (markdown lines) and its plot."""
    out = ["## 2. Kernel-to-user throughput\n",
           "A kprobe on getppid() logs records of the given size while the "
           "call runs on CPU 0 at the offered rate (max: as fast as it can); "
           "the reader drains on CPU 1 into /dev/null. Buffers: 4 MiB per CPU, "
           "drop mode (magnet) and overwrite off (ftrace), so loss is counted. "
           "Reader CPU is its CPU time over the run and a 1 s drain, as a share "
           "of the producer's time. magnet-read's watermarks: bulk wakes at "
           "256 KiB or every 100 ms, event on every record.\n",
           "| tool | record | offered | watermarks | produced/s | read/s | MB/s read | lost | reader CPU |",
           "|---|---|---|---|---|---|---|---|---|"]
    bad = []
    for r in tp:
        secs = r["secs"] or 1e-9
        # Every call's event must be read or counted lost; a row whose
        # counts do not add up (or whose reader died) is not a figure.
        if abs(r["read"] + r["lost"] - r["calls"]) > 0.01 * r["calls"] or r["ticks"] < 0:
            bad.append(r)
            continue
        out.append("| %s | %s B | %s | %s | %.0f | %.0f | %.1f | %.1f %% | %.0f %% |" % (
            r["tool"] + ("" if r["case"] in ("kprobe",) else " " + r["case"]),
            r["bytes"], "max" if r["rate"] == 0 else "%d/s" % r["rate"], r["wm"],
            r["calls"] / secs, r["read"] / secs, r["read"] * r["bytes"] / secs / 1e6,
            100.0 * r["lost"] / max(r["calls"], 1), r["ticks"] / (secs + 1.0)))
    out.append("")
    if bad:
        out.append("Left out because read + lost does not account for every event, "
                   "or the reader ended early (not yet explained):\n")
        for r in bad:
            out.append("- %s %s at %s: %d calls, %d read, %d lost, reader ticks %d" % (
                r["tool"], r["case"], "max" if r["rate"] == 0 else "%d/s" % r["rate"],
                r["calls"], r["read"], r["lost"], r["ticks"]))
        out.append("")
    unpaced = [r for r in tp if r["tool"] == "magnet" and r["rate"] == 0
               and r["case"].startswith("log-") and r not in bad]
    if unpaced and shutil.which("gnuplot"):
        data = os.path.join(plots, "throughput.dat")
        with open(data, "w") as f:
            for wm in ("bulk", "event"):
                f.write('"%s"\n' % wm)
                for r in unpaced:
                    if r["wm"] == wm:
                        f.write("%d %.2f\n" % (r["bytes"], r["read"] * r["bytes"] / (r["secs"] or 1e-9) / 1e6))
                f.write("\n\n")
        png = os.path.join(plots, "throughput.png")
        script = """
set terminal png size 900,500
set output '%s'
set title 'magnet-read, unpaced producer: MB/s read by record size (TCG)'
set logscale x 2
set xlabel 'record bytes'
set ylabel 'MB/s read'
set grid
set key top left
plot '%s' index 0 using 1:2 with linespoints title 'bulk watermarks', '' index 1 using 1:2 with linespoints title 'per-event wake-ups'
""" % (png, data)
        if subprocess.run(["gnuplot"], input=script, text=True).returncode == 0:
            out.append("![throughput](plots/throughput.png)\n")
        os.unlink(data)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--log", required=True)
    ap.add_argument("--results", required=True)
    ap.add_argument("--plots", required=True)
    args = ap.parse_args()
    runs, unavailable, other, kernel, tp = parse(args.log)
    base, rows = cost_rows(runs)
    if base is None and not tp and not any(k[0] == "scaling" for k in runs):
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
    out.append("- kernel: %s, %s vCPUs, under QEMU TCG (%s)" %
               (kernel[0] if kernel else "?", kernel[1] if kernel else "?",
                qemu[0] if qemu else "qemu"))
    out.append("- host: %s, %d CPUs, %s" % (cpu, os.cpu_count(), platform.platform()))
    if nruns:
        out.append("- method: getppid() in a tight loop on CPU 0, %d timed runs per case "
                   "after one warm-up run; readers on CPU 1. Every figure is the median "
                   "of the runs, with the lowest and highest in brackets." % nruns)
    out.append("")
    if base is not None:
        out.extend(cost_section(base, rows, plotted, unavailable))
    if tp:
        out.extend(throughput(tp, args.plots))
    if any(k[0] == "scaling" for k in runs):
        out.extend(scaling_section(runs))
    out.append("### Where TCG distorts\n")
    out.append(TCG_NOTE + "\n")
    if other:
        out.append("## Other figures of this boot\n")
        out.append("```")
        out.extend(other)
        out.append("```\n")
    text = "\n".join(out)
    with open(args.results, "w") as f:
        f.write(text)
    print(text)
    return 0


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
    return out


def cost_section(base, rows, plotted, unavailable):
    out = []
    out.append("## 1. Cost per event\n")
    out.append("The bare call took %.0f ns (median of the runs before and after "
               "everything else).\n" % base)
    out.append("| case | tool | ns per call | added ns | × empty kprobe |")
    out.append("|---|---|---|---|---|")
    floor = rows.get("kprobe-empty", {}).get("added", (0, 0, 0))[1]
    for case, what, tool in CASES:
        if case not in rows:
            continue
        lo, med, hi = rows[case]["ns"]
        alo, amed, ahi = rows[case]["added"]
        x = "%.2f" % (amed / floor) if floor > 0 and case != "none" else ""
        out.append("| %s | %s | %.0f (%.0f–%.0f) | %s | %s |" % (
            what, tool, med, lo, hi,
            "" if case == "none" else "%+.0f (%+.0f–%+.0f)" % (amed, alo, ahi), x))
    out.append("")
    out.append("magnet against the reference (added cost ÷ added cost; the range "
               "is that of the ratios of same-numbered runs):\n")
    out.append("| magnet | reference | ratio |")
    out.append("|---|---|---|")
    for a, b in PAIRS:
        r = ratio(rows, a, b)
        if r:
            out.append("| %s | %s | %.2f (%.2f–%.2f) |" % (a, b, r[0], r[1][0], r[1][1]))
    missing = [c for c, _, _ in CASES if c not in rows]
    out.append("")
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
