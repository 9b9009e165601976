#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Figures from a numa-model counts file.

  nmreport.py COUNTS [--node N | --vcpu]   figures of each begin..end pair
  nmreport.py COUNTS --validate            check the stream validation run

The counts are cumulative per vCPU at each mark (see numa-model.c).  A
measurement runs from a begin mark (1) to the next end mark (2); its
figures are the differences, summed over the vCPUs of one node (--node),
over the vCPU that executed the end mark (--vcpu), or over all.
"""
import argparse
import sys

# i: user instruction fetches, k: kernel ones, d: data.
KINDS = ("i", "k", "d")
FIELDS = ("insns",) + tuple(f"{k}_{f}" for k in KINDS
                            for f in ("l1", "l1_miss", "l2", "local",
                                      "remote", "xfer", "unknown"))


def load(path):
    """The model's figures, and the marks in order: (id, by, {vcpu: counts})."""
    model, marks = {}, {}
    with open(path) as f:
        for line in f:
            if line.startswith("model "):
                model = dict(w.split("=", 1) for w in line.split()[1:])
            elif line.startswith("mark="):
                words = dict(w.split("=", 1) for w in line.split())
                # Counts from before the model had an L2 and coherence
                # lack their fields: none of those happened.
                counts = {k: int(words.get(k, 0)) for k in FIELDS}
                counts["node"] = int(words["node"])
                mark = marks.setdefault(words["seq"], (words["mark"],
                                                       int(words["by"]), {}))
                mark[2][int(words["vcpu"])] = counts
    return model, [marks[k] for k in sorted(marks, key=int)]


def measurements(marks, node=None, vcpu=False, split=False):
    """Counts of each begin..end pair, in order: summed over the vCPUs of
    @node (or all), or of the vCPU that ended it (@vcpu); with @split, a
    {vcpu: counts} per pair instead of a sum."""
    result, begin = [], None
    for mark in marks:
        if mark[0] == "1":
            begin = mark
        elif mark[0] == "2" and begin:
            per_vcpu = {}
            for v, end in mark[2].items():
                if node is not None and end["node"] != node:
                    continue
                if vcpu and v != mark[1]:
                    continue
                per_vcpu[v] = {k: end[k] - begin[2][v][k] for k in FIELDS}
            if split:
                result.append(per_vcpu)
            else:
                result.append({k: sum(c[k] for c in per_vcpu.values())
                               for k in FIELDS})
            begin = None
    return result


def figures(model, c):
    """Derived figures of counts @c under @model's latencies."""
    local = sum(c[f"{k}_local"] for k in KINDS)
    remote = sum(c[f"{k}_remote"] for k in KINDS)
    l1_misses = sum(c[f"{k}_l1_miss"] for k in KINDS)
    l2_hits = sum(c[f"{k}_l2"] for k in KINDS)
    llc_hits = l1_misses - l2_hits - local - remote
    cycles = (c["insns"] * float(model["cpi"]) +
              l2_hits * int(model.get("l2_lat", 0)) +
              llc_hits * int(model["llc_lat"]) +
              local * int(model["local_lat"]) +
              remote * int(model["remote_lat"]))

    def pct(part, whole):
        return 100.0 * part / whole if whole else 0.0

    return {
        "insns": c["insns"],
        "l1_misses": l1_misses,
        # Accesses that missed every cache of the model.
        "memory_accesses": local + remote,
        "ifetch_mem": c["i_local"] + c["i_remote"],
        "ifetch_remote_pct": pct(c["i_remote"], c["i_local"] + c["i_remote"]),
        "kernel_ifetch_mem": c["k_local"] + c["k_remote"],
        "kernel_ifetch_remote_pct": pct(c["k_remote"],
                                        c["k_local"] + c["k_remote"]),
        "data_mem": c["d_local"] + c["d_remote"],
        "data_remote_pct": pct(c["d_remote"], c["d_local"] + c["d_remote"]),
        "remote_xfer": sum(c[f"{k}_xfer"] for k in KINDS),
        "cycles": cycles,
        "seconds": cycles / (int(model["mhz"]) * 1e6),
    }


def validate(path):
    """Three measurements: a stream of local memory, then of remote
    memory, then 16 rounds of reading 64 KiB that a writer on another
    node wrote last."""
    model, marks = load(path)
    got = measurements(marks, node=0)
    if len(got) != 3:
        print(f"numa-model: {len(got)} measurements in {path}, not 3")
        return False
    ok = True
    for c, want in zip(got, ("local", "remote")):
        f = figures(model, c)
        pct = f["data_remote_pct"]
        good = pct <= 1.0 if want == "local" else pct >= 99.0
        print(f"numa-model: stream of {want} memory: {f['data_mem']} data "
              f"lines from memory, {pct:.2f}% remote "
              f"({'ok' if good else 'WRONG'})")
        ok &= good and f["data_mem"] > 0
    # The reader reads a byte every 64, one a line of any preset's line
    # size or more.  Above it: the pipe that makes the two take turns,
    # whose kernel lines move between the nodes too.
    lines = 16 * 64 * 1024 // 64
    xfer = got[2]["d_xfer"]
    good = lines * 0.99 <= xfer <= lines * 1.25
    print(f"numa-model: {lines} lines written on node 1, then read on node "
          f"0: {xfer} remote transfers of dirty lines "
          f"({'ok' if good else 'WRONG'})")
    return ok and good


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("counts")
    ap.add_argument("--node", type=int)
    ap.add_argument("--vcpu", action="store_true")
    ap.add_argument("--validate", action="store_true")
    a = ap.parse_args()
    if a.validate:
        return 0 if validate(a.counts) else 1
    model, marks = load(a.counts)
    for i, c in enumerate(measurements(marks, a.node, a.vcpu)):
        print(f"# measurement {i + 1}")
        for k, v in figures(model, c).items():
            print(f"{k}\t{v:.4g}" if isinstance(v, float) else f"{k}\t{v}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
