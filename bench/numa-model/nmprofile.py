#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Where a measurement's instructions, or its misses, went, per function.

  nmprofile.py FILE[:M,...] System.map [--count insns|l1_misses|memory]
               [--per N] [--top K] [--diff FILE2[:M,...]]
  nmprofile.py FILE --check COUNTS

FILE is what numa-model writes with profile=FILE: for each measurement
(NUMA_MODEL_BEGIN to NUMA_MODEL_END, numbered from 1), the instructions
each translation block ran, its L1 misses and its accesses that missed
every cache of the model, by the block's guest virtual address.  :M,...
picks measurements (all by default), which are summed.  --count picks
the figure (instructions by default).  A block is charged to the kernel
function it starts in (System.map); user blocks are summed as "(user)".
--per divides every figure by N (pages, faults); --diff prints FILE2
minus FILE per function, each divided by its own --per figure, given as
--per N,N2.  --check tells whether each measurement's blocks add up to
the counts of the vCPU that marked it (the model's validation).
"""
import argparse
import bisect
import sys

import nmreport

# The figures of a block's line, after its address, in their order.
COUNTS = ("insns", "l1_misses", "memory")


def symbols(path):
    """Sorted start addresses and names of the text symbols of a System.map."""
    syms = []
    with open(path) as f:
        for line in f:
            addr, kind, name = line.split()[:3]
            if kind in "tTwW":
                syms.append((int(addr, 16), name))
    syms.sort()
    return [a for a, _ in syms], [n for _, n in syms]


def blocks(path):
    """(measurement, block address, {figure: n}) of each line of FILE."""
    measurement = 0
    with open(path) as f:
        for line in f:
            if line.startswith("measurement "):
                measurement = int(line.split()[1])
                continue
            fields = line.split()
            if len(fields) != 1 + len(COUNTS):
                raise SystemExit(f"{path}: not {len(COUNTS)} figures a "
                                 "block: written by an older numa-model")
            yield (measurement, int(fields[0], 16),
                   dict(zip(COUNTS, map(int, fields[1:]))))


def per_function(spec, addrs, names, count):
    """The figure @count per function name in the measurements of
    FILE[:M,...]."""
    path, _, picks = spec.partition(":")
    picks = {int(m) for m in picks.split(",")} if picks else None
    total = {}
    for measurement, vaddr, n in blocks(path):
        if picks is not None and measurement not in picks:
            continue
        if vaddr >> 63 == 0:
            name = "(user)"
        else:
            i = bisect.bisect_right(addrs, vaddr) - 1
            name = names[i] if i >= 0 else "(unknown)"
        total[name] = total.get(name, 0) + n[count]
    return total


def check(path, counts_path):
    """Whether each measurement's blocks add up to the counts of the vCPU
    that marked it in the plugin's counts file: the profile charges
    every instruction, L1 miss and memory access to some block."""
    per_measurement = {}
    for measurement, _, n in blocks(path):
        sums = per_measurement.setdefault(measurement, dict.fromkeys(COUNTS, 0))
        for k in COUNTS:
            sums[k] += n[k]
    model, marks = nmreport.load(counts_path)
    want = [nmreport.figures(model, c)
            for c in nmreport.measurements(marks, vcpu=True)]
    ok = len(want) == len(per_measurement) > 0
    for i, f in enumerate(want):
        got = per_measurement.get(i + 1, {})
        expect = {"insns": f["insns"], "l1_misses": f["l1_misses"],
                  "memory": f["memory_accesses"]}
        good = got == expect
        print(f"numa-model: profile of measurement {i + 1}: {got} against "
              f"the marking vCPU's {expect} ({'ok' if good else 'WRONG'})")
        ok &= good
    if len(want) != len(per_measurement):
        print(f"numa-model: {len(per_measurement)} measurements profiled, "
              f"{len(want)} counted (WRONG)")
    return ok


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("profile")
    ap.add_argument("system_map", nargs="?")
    ap.add_argument("--check", metavar="COUNTS")
    ap.add_argument("--count", choices=COUNTS, default="insns")
    ap.add_argument("--per", default="1")
    ap.add_argument("--top", type=int, default=30)
    ap.add_argument("--diff")
    args = ap.parse_args()
    if args.check:
        return 0 if check(args.profile, args.check) else 1
    if not args.system_map:
        ap.error("a System.map is needed")
    addrs, names = symbols(args.system_map)
    per = [float(x) for x in args.per.split(",")]
    base = per_function(args.profile, addrs, names, args.count)
    if not args.diff:
        rows = sorted(base.items(), key=lambda kv: -kv[1])
        print(f"{'function':40} {args.count:>10}")
        for name, n in rows[:args.top]:
            print(f"{name:40} {n / per[0]:10.1f}")
        print(f"{'total':40} {sum(base.values()) / per[0]:10.1f}")
        return 0
    other = per_function(args.diff, addrs, names, args.count)
    per2 = per[1] if len(per) > 1 else per[0]
    rows = []
    for name in set(base) | set(other):
        a, b = base.get(name, 0) / per[0], other.get(name, 0) / per2
        rows.append((b - a, name, a, b))
    rows.sort(key=lambda r: -abs(r[0]))
    print(f"{'function':40} {'first':>9} {'second':>9} {'diff':>9}")
    for d, name, a, b in rows[:args.top]:
        print(f"{name:40} {a:9.1f} {b:9.1f} {d:+9.1f}")
    ta, tb = sum(base.values()) / per[0], sum(other.values()) / per2
    print(f"{'total':40} {ta:9.1f} {tb:9.1f} {tb - ta:+9.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
