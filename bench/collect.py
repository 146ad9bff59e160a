#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""bench/collect.py: the benchmarks' runs, from the VM's console log into
bench/results/NAME.json (the schema is in bench/README.md).

    bench/collect.py meta CLOCK > META      before the boot: when, on what
                                            tree, machine and parameters
    bench/collect.py log --meta META --log VM_LOG --results DIR
                                            after it: one file per benchmark
                                            that ran, replacing its earlier one

The log's lines it takes, each inside its benchmark's
"MAGNET-RIG: suite NAME" ... "MAGNET-RIG: suite-exit NAME" block:

    BENCH-RECORD cost|scaling|session-cost|ledger-cost|acct-cost|span-cost|blkkin|sample-cost|pfilter[-insns] CASE RUN VALUE
    BENCH-TP TOOL CASE RECORD_BYTES RATE WM CALLS SECONDS READ LOST TICKS RUN
    BENCH-STREAM EXPERIMENT[-insns] CASE RUN SECS RX_BYTES RX_DGRAMS RX_LOST
                 CAP_TICKS CAPTURED DROPPED RX2_BYTES
    BENCH-UNAVAILABLE TOOL REASON...
    BENCH-INFO KEY VALUE
    BENCH: free text (kept as the benchmark's remarks)
"""
import argparse
import datetime
import json
import os
import re
import subprocess
import sys

SCHEMA = 1
# What bench/run hands the benchmarks (its environment, defaults applied),
# and which of it each benchmark reads.
PARAMETERS = ("BENCH_N", "BENCH_RUNS", "BENCH_TP_RUNS", "BENCH_STREAM_SECS",
              "BENCH_STREAM_EXPERIMENTS", "BENCH_ACCT_SECS", "BENCH_BLKKIN_WRITES",
              "MEM")
READS = {"cost": ("BENCH_N", "BENCH_RUNS", "MEM"),
         "scaling": ("BENCH_N", "BENCH_RUNS", "MEM"),
         "session-cost": ("BENCH_N", "BENCH_RUNS", "MEM"),
         "ledger-cost": ("BENCH_N", "BENCH_RUNS", "BENCH_STREAM_SECS", "MEM"),
         "acct-cost": ("BENCH_RUNS", "BENCH_ACCT_SECS", "MEM"),
         "span-cost": ("BENCH_N", "BENCH_RUNS", "MEM"),
         "blkkin": ("BENCH_RUNS", "BENCH_ACCT_SECS", "BENCH_BLKKIN_WRITES", "MEM"),
         "pfilter": ("BENCH_N", "BENCH_RUNS", "MEM"),
         "sample-cost": ("BENCH_RUNS", "BENCH_STREAM_SECS", "MEM"),
         "throughput": ("BENCH_TP_RUNS", "MEM"),
         "stream": ("BENCH_RUNS", "BENCH_STREAM_SECS", "BENCH_STREAM_EXPERIMENTS", "MEM")}


def git(top, *args):
    r = subprocess.run(["git", "-C", top] + list(args), capture_output=True, text=True)
    return r.stdout.strip() if r.returncode == 0 else None


def meta(clock):
    """What a run is measured on, taken before the boot."""
    top = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    head = git(top, "rev-parse", "HEAD")
    commit = None
    if head:
        status = git(top, "status", "--porcelain", "--untracked-files=no")
        commit = {"describe": git(top, "describe", "--always", "--tags", "--dirty"),
                  "hash": head, "dirty": bool(status)}
    cpu = None
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    try:
        qemu = subprocess.run(["qemu-system-x86_64", "--version"], capture_output=True,
                              text=True).stdout.splitlines()[0].strip()
    except (OSError, IndexError):
        qemu = None
    params = {}
    for k in PARAMETERS:
        v = os.environ.get(k)
        if v is not None:
            params[k] = int(v) if re.fullmatch(r"\d+", v) else v
    return {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%MZ"),
            "commit": commit, "clock": clock,
            "machine": {"host_cpu": cpu, "host_cpus": os.cpu_count(), "qemu": qemu},
            "parameters": params}


def dumps(doc, indent=0):
    """JSON with one line for each list or object that holds no other (a
    run's figures on one line), and a line for each string of a list."""
    pad = " " * (indent + 1)
    if isinstance(doc, list) and doc and all(isinstance(v, str) for v in doc):
        return "[\n" + ",\n".join(pad + json.dumps(v, ensure_ascii=False) for v in doc) + \
            "\n" + " " * indent + "]"
    if isinstance(doc, dict) and doc and any(isinstance(v, (dict, list)) for v in doc.values()):
        return "{\n" + ",\n".join(pad + json.dumps(k) + ": " + dumps(v, indent + 1)
                                   for k, v in doc.items()) + "\n" + " " * indent + "}"
    if isinstance(doc, list) and doc and any(isinstance(v, (dict, list)) for v in doc):
        return "[\n" + ",\n".join(pad + dumps(v, indent + 1) for v in doc) + \
            "\n" + " " * indent + "]"
    return json.dumps(doc, ensure_ascii=False)


def number(s):
    v = float(s)
    return int(v) if v.is_integer() and "." not in s else v


def blocks(log):
    """(kernel, vCPUs) of the boot, each benchmark's lines, and how each
    ended (its exit status; absent where it did not end)."""
    booted, lines, cur, ended = None, {}, None, {}
    with open(log, errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            m = re.match(r"MAGNET-RIG: booted (\S+), (\d+) CPUs", line)
            if m:
                booted = (m.group(1), int(m.group(2)))
            m = re.match(r"MAGNET-RIG: suite (\S+)$", line)
            if m:
                cur = m.group(1)
                lines.setdefault(cur, [])
                continue
            m = re.match(r"MAGNET-RIG: suite-exit (\S+) (\d+)", line)
            if m:
                ended[m.group(1)] = int(m.group(2))
                cur = None
            elif cur:
                lines[cur].append(line)
    return booted, lines, ended


def parse(lines):
    """One benchmark's lines: {file name: its figures}, and what every
    file of this benchmark shares (info, unavailable, remarks)."""
    per_case, tp, st = {}, [], []
    shared = {"info": {}, "unavailable": [], "remarks": []}
    for line in lines:
        w = line.split()
        try:
            if len(w) == 5 and w[0] == "BENCH-RECORD":
                per_case.setdefault(w[1], {}).setdefault(w[2], {})[int(w[3])] = number(w[4])
            elif len(w) in (11, 12) and w[0] == "BENCH-TP":
                tp.append({"tool": w[1], "case": w[2], "bytes": int(w[3]), "rate": int(w[4]),
                           "wm": w[5], "calls": int(w[6]), "secs": float(w[7]),
                           "read": int(w[8]), "lost": int(w[9]), "ticks": int(w[10]),
                           "run": int(w[11]) if len(w) == 12 else 1})
            elif len(w) == 12 and w[0] == "BENCH-STREAM":
                st.append({"exp": w[1], "case": w[2], "run": int(w[3]), "secs": float(w[4]),
                           "rx": int(w[5]), "dgrams": int(w[6]), "rx_lost": int(w[7]),
                           "ticks": int(w[8]), "captured": int(w[9]), "dropped": int(w[10]),
                           "rx2": int(w[11])})
            elif len(w) >= 3 and w[0] == "BENCH-INFO":
                shared["info"].setdefault(w[1], " ".join(w[2:]))
            elif w and w[0] == "BENCH-UNAVAILABLE":
                shared["unavailable"].append({"tool": w[1] if len(w) > 1 else "?",
                                              "reason": " ".join(w[2:])})
            elif line.startswith("BENCH: "):
                shared["remarks"].append(line[len("BENCH: "):])
        except ValueError:
            pass    # (a line cut by another's output: not a figure)
    files = {}
    for exp, cases in per_case.items():
        name = exp[:-len("-insns")] + "-icount" if exp.endswith("-insns") else exp
        runs = {}
        for case, r in cases.items():
            runs[case] = [r.get(i) for i in range(1, max(r) + 1)]
        files[name] = {"benchmark": exp.replace("-insns", ""), "runs": runs}
    if tp:
        files["throughput"] = {"benchmark": "throughput", "runs": tp}
    for exp in sorted({r["exp"] for r in st}):
        base = exp.replace("-insns", "")
        name = "stream-" + base + ("-icount" if exp.endswith("-insns") else "")
        runs = [dict(r, exp=base) for r in st if r["exp"] == exp]
        if base == "sampling":
            # its baseline: the same boot's runs with nothing capturing
            runs += [dict(r, exp="paper") for r in st if r["case"] == "none" and
                     r["exp"] == exp.replace("sampling", "paper")]
        files[name] = {"benchmark": "stream", "experiment": base, "runs": runs}
    return files, shared


READER = re.compile(r"(\S+), reader: (.*)")


def readers(remarks):
    """Per cost case, what its reader said: records read and lost
    (magnet-read), or events lost (the other tools: read is null)."""
    out = {}
    for line in remarks:
        m = READER.match(line)
        if not m:
            continue
        case, said = m.groups()
        r = re.search(r"(\d+) records, (\d+) lost", said)
        if r:
            out[case] = {"read": int(r.group(1)), "lost": int(r.group(2))}
            continue
        lost = [int(x) for x in re.findall(r"(\d+) events (?:overrun|lost)", said)]
        if lost:
            out[case] = {"read": None, "lost": sum(lost)}
    return out


def collect(meta_file, log, results):
    with open(meta_file) as f:
        m = json.load(f)
    booted, lines, ended = blocks(log)
    written, bad = [], 0
    for script, block in lines.items():
        if ended.get(script) != 0:
            # (a benchmark that failed or did not end keeps its earlier file)
            print("bench: %s %s: its results are not written" % (
                script, "did not end" if script not in ended else
                "failed (exit %d)" % ended[script]), file=sys.stderr)
            bad = 1
            continue
        files, shared = parse(block)
        for name, figures in files.items():
            clock = "icount" if name.endswith("-icount") else m["clock"]
            doc = {"schema": SCHEMA, "benchmark": figures["benchmark"]}
            if "experiment" in figures:
                doc["experiment"] = figures["experiment"]
            doc.update({
                "clock": clock, "date": m["date"], "commit": m["commit"],
                "kernel": booted[0] if booted else None,
                "machine": dict(m["machine"], vcpus=booted[1] if booted else None),
                "parameters": {k: v for k, v in m["parameters"].items()
                               if k in READS[figures["benchmark"]]},
                "info": shared["info"], "unavailable": shared["unavailable"],
                "remarks": shared["remarks"], "summary_only": False,
                "runs": figures["runs"]})
            if name == "cost":
                doc["readers"] = readers(shared["remarks"])
            os.makedirs(results, exist_ok=True)
            path = os.path.join(results, name + ".json")
            with open(path + ".tmp", "w") as f:
                f.write(dumps(doc) + "\n")
            os.replace(path + ".tmp", path)
            written.append(path)
    for path in written:
        print("bench: wrote %s" % path)
    if not written:
        print("bench: no benchmark figures in %s" % log, file=sys.stderr)
        return 1
    return bad


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    a = sub.add_parser("meta")
    a.add_argument("clock", choices=("tsc", "hpet", "icount"))
    a = sub.add_parser("log")
    a.add_argument("--meta", required=True)
    a.add_argument("--log", required=True)
    a.add_argument("--results", required=True)
    args = ap.parse_args()
    if args.cmd == "meta":
        print(dumps(meta(args.clock)))
        return 0
    return collect(args.meta, args.log, args.results)


if __name__ == "__main__":
    sys.exit(main())
