#!/usr/bin/python3
"""The user-space attribute tables (lib/nl.c) against the contract.

For every attribute of every space, the name and the libmnl type that
lib/nl.c gives it must be those of the uapi header (the enum's member,
and the type its comment starts with: "u8", "u16", "u32", "u64",
"string", "flag", "nest", "binary"; counters without one are u64, as the
stat and cpu enums say), and the type of every attribute the kernel's
policies accept (kmod/magnet/netlink.c, filters/*.c) must agree too. PAD
attributes carry nothing and need no entry.

    nl-attrs.py TOP DUMPER
"""
import re
import subprocess
import sys

SPACES = {  # space: (uapi enum, policy files)
    "magnet": ("magnet_attr", ["kmod/magnet/netlink.c"]),
    "stat": ("magnet_stat_attr", []),
    "cpu": ("magnet_cpu_attr", []),
    "packet": ("magnet_packet_attr", ["filters/pcap.c"]),
    "header": ("magnet_header_attr", ["filters/magnet_header.c"]),
    "correlate": ("magnet_correlate_attr", ["filters/magnet_correlate.c"]),
}
TYPE_WORDS = {"u8", "u16", "u32", "u64", "string", "flag", "nest", "binary"}
NLA = {"NLA_U8": "u8", "NLA_U16": "u16", "NLA_U32": "u32", "NLA_U64": "u64",
       "NLA_NUL_STRING": "string", "NLA_STRING": "string", "NLA_FLAG": "flag",
       "NLA_NESTED": "nest", "NLA_BINARY": "binary"}


def uapi_enum(text, name):
    """[(member, type word or None)] of enum @name, in order from 0."""
    m = re.search(r"enum %s \{(.*?)\n\};" % name, text, re.S)
    if not m:
        sys.exit("nl-attrs: no enum %s in the uapi header" % name)
    out = []
    for line in m.group(1).splitlines():
        e = re.match(r"\s+(MAGNET_\w+)\s*(,|=)?\s*(?:/\*\s*(\w+))?", line)
        if e and e.group(2) != "=":
            out.append((e.group(1), e.group(3) if e.group(3) in TYPE_WORDS else None))
    return out


def policies(top, files):
    """{member: type word} of every attribute a policy names."""
    out = {}
    for f in files:
        text = open("%s/%s" % (top, f)).read()
        macros = {m.group(1): m.group(2) for m in
                  re.finditer(r"#define\s+(POL_\w+)\s+(.*)", text)}
        for m in re.finditer(r"\[(MAGNET_\w+)\]\s*=\s*([^\n]*)", text):
            expr = macros.get(m.group(2).strip().rstrip(","), m.group(2))
            t = re.search(r"\bNLA_[A-Z0-9_]+\b", expr)
            if t and t.group(0) in NLA:
                out.setdefault(m.group(1), set()).add(NLA[t.group(0)])
    return out


def check_names(top, header, lib_sets, lib_layers, lib_blayers):
    """lib/names.c against the kernel's catalog."""
    bad = []
    layers = {m: i for i, (m, _) in enumerate(uapi_enum(header, "magnet_layer"))}
    catalog = open(top + "/kmod/magnet/packet.c").read()
    kernel_sets = {}
    for m in re.finditer(r'LAYER\("([\w-]+)\.([\w-]+)",.*?POINT\((\w+),', catalog, re.S):
        s, layer, point = m.groups()
        kernel_sets.setdefault(s, set()).add(layer)
        if point in ("PROTO_SEND", "PROTO_RECV"):
            continue
        want = layer[:-1] if layer.endswith("6") else layer
        got = lib_layers.get(layers.get("MAGNET_LAYER_" + point, -1))
        if got != want:
            bad.append("layer MAGNET_LAYER_%s: lib/names.c names it %s, the catalog's %s.%s %s" %
                       (point, got, s, layer, want))
    if not kernel_sets:
        bad.append("no LAYER() entries found in kmod/magnet/packet.c")
    blayers = {m: i for i, (m, _) in enumerate(uapi_enum(header, "magnet_block_layer"))}
    block = open(top + "/kmod/magnet/block.c").read()
    found = False
    for m in re.finditer(r'LAYER\("([\w-]+)",\s*"\w+",\s*(\w+),', block):
        layer, point = m.groups()
        found = True
        kernel_sets.setdefault("blk-io", set()).add(layer)
        got = lib_blayers.get(blayers.get("MAGNET_BLOCK_" + point, -1))
        if got != layer:
            bad.append("layer MAGNET_BLOCK_%s: lib/names.c names it %s, the catalog's blk-io.%s %s" %
                       (point, got, layer, layer))
    if not found:
        bad.append("no LAYER() entries found in kmod/magnet/block.c")
    probes = open(top + "/kmod/magnet/probe.c").read()
    for m in re.finditer(r'\{ "([\w-]+)\.([\w-]+)", MAGNET_PROBE_(?:USER|SAMPLE),', probes):
        kernel_sets.setdefault(m.group(1), set()).add(m.group(2))
    for s in sorted(set(kernel_sets) | set(lib_sets)):
        if kernel_sets.get(s) != lib_sets.get(s):
            bad.append("probe set %s: lib/names.c has %s, the catalog %s" %
                       (s, sorted(lib_sets.get(s, ())), sorted(kernel_sets.get(s, ()))))
    return bad


def main():
    top, dumper = sys.argv[1], sys.argv[2]
    header = open(top + "/include/uapi/linux/magnet.h").read()
    tables = {}
    lib_sets, lib_layers, lib_blayers = {}, {}, {}
    for line in subprocess.run([dumper], check=True, capture_output=True,
                               text=True).stdout.splitlines():
        w = line.split()
        if w[0] == "set":
            lib_sets.setdefault(w[1], set()).add(w[2])
        elif w[0] == "layer":
            lib_layers[int(w[1])] = w[2]
        elif w[0] == "blayer":
            lib_blayers[int(w[1])] = w[2]
        else:
            tables[(w[0], int(w[1]))] = (w[2], w[3])
    bad = check_names(top, header, lib_sets, lib_layers, lib_blayers)
    for space, (enum, files) in SPACES.items():
        members = uapi_enum(header, enum)
        pol = policies(top, files)
        maxes = [t for s, t in tables if s == space]
        if max(maxes, default=0) != len(members) - 1:
            bad.append("%s: lib/nl.c knows %d attributes, the uapi header %d" %
                       (space, max(maxes, default=0), len(members) - 1))
        for t, (member, word) in enumerate(members):
            if t == 0:
                continue
            name, mnl = tables.get((space, t), ("-", "unspec"))
            if member.endswith("_PAD"):
                continue
            want = word or "u64"
            if name != member:
                bad.append("%s %d: lib/nl.c names it %s, the uapi header %s" %
                           (space, t, name, member))
            if mnl != want:
                bad.append("%s: lib/nl.c validates it as %s, the uapi header says %s" %
                           (member, mnl, want))
            for p in sorted(pol.get(member, ())):
                if p != want:
                    bad.append("%s: the kernel's policy says %s, the uapi header %s" %
                               (member, p, want))
    for b in bad:
        print("nl-attrs: " + b)
    if bad:
        return 1
    print("nl-attrs: %d attributes: lib/nl.c, the uapi header and the kernel's policies agree"
          % len(tables))
    print("nl-attrs: %d probe sets and their layers: lib/names.c and the kernel's catalog agree"
          % len(lib_sets))
    return 0


if __name__ == "__main__":
    sys.exit(main())
