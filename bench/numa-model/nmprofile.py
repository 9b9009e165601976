#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Where a measurement's instructions went, per function.

  nmprofile.py FILE[:M,...] System.map [--per N] [--top K]
                                       [--diff FILE2[:M,...]]

FILE is what numa-model writes with profile=FILE: for each measurement
(NUMA_MODEL_BEGIN to NUMA_MODEL_END, numbered from 1), the instructions
each translation block ran, by its guest virtual address.  :M,... picks
measurements (all by default), which are summed.  A block is charged to
the kernel function it starts in (System.map); user blocks are summed as
"(user)".  --per divides every figure by N (pages, faults); --diff prints
FILE2 minus FILE per function, each divided by its own --per figure,
given as --per N,N2.
"""
import argparse
import bisect


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


def per_function(spec, addrs, names):
    """Instructions per function name in the measurements of FILE[:M,...]."""
    path, _, picks = spec.partition(":")
    picks = {int(m) for m in picks.split(",")} if picks else None
    total, measurement = {}, 0
    with open(path) as f:
        for line in f:
            if line.startswith("measurement "):
                measurement = int(line.split()[1])
                continue
            if picks is not None and measurement not in picks:
                continue
            vaddr, insns = line.split()
            vaddr, insns = int(vaddr, 16), int(insns)
            if vaddr >> 63 == 0:
                name = "(user)"
            else:
                i = bisect.bisect_right(addrs, vaddr) - 1
                name = names[i] if i >= 0 else "(unknown)"
            total[name] = total.get(name, 0) + insns
    return total


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("profile")
    ap.add_argument("system_map")
    ap.add_argument("--per", default="1")
    ap.add_argument("--top", type=int, default=30)
    ap.add_argument("--diff")
    args = ap.parse_args()
    addrs, names = symbols(args.system_map)
    per = [float(x) for x in args.per.split(",")]
    base = per_function(args.profile, addrs, names)
    if not args.diff:
        rows = sorted(base.items(), key=lambda kv: -kv[1])
        print(f"{'function':40} {'insns':>10}")
        for name, n in rows[:args.top]:
            print(f"{name:40} {n / per[0]:10.1f}")
        print(f"{'total':40} {sum(base.values()) / per[0]:10.1f}")
        return
    other = per_function(args.diff, addrs, names)
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


if __name__ == "__main__":
    main()
