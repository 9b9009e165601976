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
NC_SIZES = 3    # node cache sizes the plugin models side by side
FIELDS = ("insns", "inval_local", "inval_remote", "inval_nodes",
          "turns") + tuple(
    f"{k}_{f}" for k in KINDS
    for f in ("l1", "l1_miss", "l2", "local", "remote", "xfer", "unknown",
              "pf", "near", "nearxfer", "far", "farxfer") + tuple(f"nc{w}{s}" for s in range(NC_SIZES)
                            for w in "lr"))

# What the plugin counts and leaves to the report to cost, per preset
# (bench/numa-model/README.md gives the reasons): which node cache size
# is the headline one (an index into the model's nc_kb), the latency of
# a hit in it as a multiple of local memory's (the headline, then the
# ends of the range the band sweeps), and the share of an invalidation's
# round trip that a store waits for (a store buffer hides some or all).
# Where a machine's memory latencies are not published, or only as a
# range, lats gives the latencies (cycles) at the ends of the band swept
# around those its preset assumes (numa-model.c).
COSTING = {
    "numaq": {"nc": 1, "nc_lat": (1.5, 1.0, 2.0)},
    "p4": {"nc": 1, "nc_lat": (0.75, 0.5, 1.0)},
    "altra2s": {"lats": ({"remote_lat": 900}, {"remote_lat": 2100})},
    # CXL memory from its own socket over the range measured on ASIC
    # expanders (214 to 271 ns); from the other socket, that plus the hop
    # between the sockets (302 to 359 ns); the LLC, not published, from 24
    # to 43 ns.  The other socket's memory was measured (196 ns): fixed.
    "cxl": {"lats": tuple(dict(mem, llc_lat=llc)
                          for mem in ({"near_lat": 449, "far_lat": 634},
                                      {"near_lat": 569, "far_lat": 754})
                          for llc in (50, 90))},
}
INVAL_WAIT = (1.0, 0.0, 1.0)
CPI_BAND = (1.0, 1.5, 2.0)


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


def node_caches(model):
    """The sizes (KiB) of the node caches the counts of @model have."""
    sizes = [int(x) for x in model.get("nc_kb", "0").split(":")]
    return [s for s in sizes if s]


def costed(model, cpi=None, nc=None, nc_lat=None, inval=None, lats=None,
           serial=False):
    """@model with the report's costing of what the plugin only counts:
    @cpi, the node cache @nc (index; -1: none) hit at @nc_lat times local
    latency, @inval the share of an invalidation a store waits for,
    @lats memory latencies in cycles ({"remote_lat": ...}), @serial: a
    store invalidates the other nodes' copies one after the other, a
    round trip each (SCI), not all at once.  What is not given keeps the
    preset's headline (COSTING), or the plugin's figure."""
    m = dict(model)
    if serial:
        m["inval_serial"] = "1"
    cost = COSTING.get(model.get("preset"), {})
    if cpi is not None:
        m["cpi"] = str(cpi)
    for key, lat in (lats or {}).items():
        m[key] = str(lat)
    m.setdefault("nc", str(cost.get("nc", -1) if node_caches(model)
                           else -1))
    m.setdefault("nc_lat", str(cost.get("nc_lat", (1.0,))[0]))
    m.setdefault("inval", str(INVAL_WAIT[0]))
    if nc is not None:
        m["nc"] = str(nc)
    if nc_lat is not None:
        m["nc_lat"] = str(nc_lat)
    if inval is not None:
        m["inval"] = str(inval)
    return m


def band_models(model):
    """The costings a gain's band spans: every CPI of CPI_BAND, every
    node cache size at both ends of its latency range, stores that wait
    for no invalidation or for all of it, and both ends of the memory
    latencies a preset sweeps."""
    cost = COSTING.get(model.get("preset"), {})
    sizes = range(len(node_caches(model))) if "nc" in cost else [-1]
    nc_lats = cost.get("nc_lat", (1.0, 1.0, 1.0))[1:]
    return [costed(model, cpi, nc, nc_lat, inval, lats)
            for cpi in CPI_BAND for nc in sizes for nc_lat in nc_lats
            for inval in INVAL_WAIT[1:]
            for lats in cost.get("lats", (None,))]


def cycle_parts(model, c):
    """The modelled cycles of counts @c under @model's latencies and
    costing (see costed()), by part: instructions; per kind of access
    (user ifetch i, kernel ifetch k, data d) its L2 hits, LLC hits,
    memory accesses (those a node cache served at its latency) and
    remote transfers of dirty lines; the waits for invalidations."""
    m = costed(model)
    l2, llc = int(m.get("l2_lat", 0)), int(m["llc_lat"])
    local_lat, remote_lat = int(m["local_lat"]), int(m["remote_lat"])
    # Counts from before the model had near and far pairs have none.
    near_lat = int(m.get("near_lat", remote_lat))
    far_lat = int(m.get("far_lat", remote_lat))
    nc = int(m["nc"])
    if nc >= 0 and (m.get("near", "-") != "-" or m.get("far", "-") != "-"):
        raise ValueError("a node cache hit on a near or far pair has no "
                         "latency to save (numa-model.c, near=, far=)")
    hit = float(m["nc_lat"]) * local_lat
    parts = {"insns": c["insns"] * float(m["cpi"])}
    for k in KINDS:
        ncl = c[f"{k}_ncl{nc}"] if nc >= 0 else 0
        ncr = c[f"{k}_ncr{nc}"] if nc >= 0 else 0
        parts[f"{k}_l2"] = c[f"{k}_l2"] * l2
        parts[f"{k}_llc"] = (c[f"{k}_l1_miss"] - c[f"{k}_l2"] -
                             c[f"{k}_local"] - c[f"{k}_remote"]) * llc
        near_mem = c[f"{k}_near"] - c[f"{k}_nearxfer"]
        far_mem = c[f"{k}_far"] - c[f"{k}_farxfer"]
        parts[f"{k}_mem"] = ((c[f"{k}_remote"] - c[f"{k}_xfer"] - ncr -
                              near_mem - far_mem) * remote_lat +
                             near_mem * near_lat + far_mem * far_lat +
                             (c[f"{k}_local"] - ncl) * local_lat +
                             (ncl + ncr) * hit)
        parts[f"{k}_xfer"] = ((c[f"{k}_xfer"] - c[f"{k}_nearxfer"] -
                               c[f"{k}_farxfer"]) * remote_lat +
                              c[f"{k}_nearxfer"] * near_lat +
                              c[f"{k}_farxfer"] * far_lat)
    remote_invals = c["inval_nodes" if m.get("inval_serial") else
                      "inval_remote"]
    parts["inval"] = float(m["inval"]) * (remote_invals * remote_lat +
                                          c["inval_local"] * (llc or local_lat))
    return parts


def cycles(model, c):
    """Modelled cycles of counts @c (see cycle_parts())."""
    return sum(cycle_parts(model, c).values())


def as_local(model, c, kind):
    """Counts @c as if the lines of @kind (i, k or d) were on every node:
    its remote misses are local ones, which a node cache of remote lines
    misses."""
    c = dict(c)
    c[f"{kind}_local"] += c[f"{kind}_remote"]
    c[f"{kind}_remote"] = c[f"{kind}_xfer"] = 0
    for f in ("near", "nearxfer", "far", "farxfer"):
        c[f"{kind}_{f}"] = 0
    for s in range(NC_SIZES):
        if model.get("nc_scope") == "all":
            c[f"{kind}_ncl{s}"] += c[f"{kind}_ncr{s}"]
        c[f"{kind}_ncr{s}"] = 0
    return c


def remote_excess(model, c, kind):
    """What the remote accesses of @kind in @c cost beyond local ones:
    the most that putting those lines on every node gives back."""
    return cycles(model, c) - cycles(model, as_local(model, c, kind))


def turn_insns(c):
    """Instructions a vCPU ran at a stretch in counts @c (numa-model.c,
    struct counts), or 0 where no turn was counted."""
    return c["insns"] / c["turns"] if c["turns"] else 0


def figures(model, c):
    """Derived figures of counts @c under @model's latencies."""
    local = sum(c[f"{k}_local"] for k in KINDS)
    remote = sum(c[f"{k}_remote"] for k in KINDS)
    l1_misses = sum(c[f"{k}_l1_miss"] for k in KINDS)
    cyc = cycles(model, c)

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
        "invalidations_remote": c["inval_remote"],
        "ifetch_prefetched_from_memory": c["i_pf"] + c["k_pf"],
        "cycles": cyc,
        "seconds": cyc / (int(model["mhz"]) * 1e6),
    }


def validate(path):
    """Five measurements: a stream of local memory, then of remote
    memory, then 16 rounds of reading 64 KiB that a writer on another
    node wrote last; then streams of the memory-only node 2 from node 0
    (near) and from node 1 (far)."""
    model, marks = load(path)
    got = measurements(marks, node=0)
    if len(got) != 5:
        print(f"numa-model: {len(got)} measurements in {path}, not 5")
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
    ok &= good
    # The writer's stores to the lines the reader read last round: one
    # invalidation on the other node each, after the first round.
    writer = measurements(marks, node=1)[2]["inval_remote"]
    good = lines * 15 / 16 * 0.99 <= writer <= lines * 1.25
    print(f"numa-model: the writer's stores invalidated {writer} lines on "
          f"the other node ({'ok' if good else 'WRONG'})")
    ok &= good
    # Each round hands the pipe over: the reader waits for the writer,
    # so each of them runs at least one turn a round.
    turns = [measurements(marks, node=n)[2]["turns"] for n in (0, 1)]
    good = all(16 <= t <= got[2]["insns"] for t in turns)
    print(f"numa-model: 16 rounds through a pipe: {turns[0]} and {turns[1]} "
          f"turns of the reader's and writer's nodes "
          f"({'ok' if good else 'WRONG'})")
    return (ok and good and
            validate_pairs(model, got[3], measurements(marks, node=1)[4]) and
            validate_node_caches(model, got[0], got[1]) and
            node_caches_within_memory(model, marks))


def validate_pairs(model, from0, from1):
    """Streams of the memory-only node 2: from node 0 (near=0-2) counted
    remote and near, from node 1 (far=1-2) remote and far."""
    ok = True
    for c, node, want, other in ((from0, 0, "near", "far"),
                                 (from1, 1, "far", "near")):
        f = figures(model, c)
        mem = c["d_remote"]
        share = c[f"d_{want}"] / mem if mem else 0.0
        good = (f["data_remote_pct"] >= 99.0 and share >= 0.99 and
                c[f"d_{other}"] == 0)
        print(f"numa-model: stream of node 2's memory from node {node}: "
              f"{f['data_remote_pct']:.2f}% remote, {100 * share:.2f}% "
              f"of them {want}, {c[f'd_{other}']} {other} "
              f"({'ok' if good else 'WRONG'})")
        ok &= good and mem > 0
    return ok


def node_caches_within_memory(model, marks):
    """A node cache serves memory accesses only: of every measurement and
    kind, no more hits than accesses that went to memory (prefetches are
    neither)."""
    bad = []
    for i, c in enumerate(measurements(marks)):
        for k in KINDS:
            for s in range(len(node_caches(model))):
                if (c[f"{k}_ncl{s}"] > c[f"{k}_local"] or
                        c[f"{k}_ncr{s}"] > c[f"{k}_remote"] - c[f"{k}_xfer"]):
                    bad.append(f"measurement {i + 1}, {k}, cache {s}")
    print("numa-model: node cache hits within memory accesses "
          f"({'ok' if not bad else 'WRONG: ' + ', '.join(bad)})")
    return not bad


def validate_node_caches(model, local, remote):
    """With node caches of remote lines smaller and larger than the 64 MiB
    streamed twice (validate.sh asks for them): the larger serves both
    passes of the remote stream (the reader filled it when it wrote the
    buffer), the smaller almost none of them, and neither any local
    access."""
    sizes = node_caches(model)
    if len(sizes) < 2 or sizes[0] >= 64 << 10 or sizes[1] <= 64 << 10 or \
            model.get("nc_scope") != "remote":
        print("numa-model: no node caches of 8 and 128 MiB to validate")
        return False
    mem = remote["d_remote"]
    small, large = remote["d_ncr0"], remote["d_ncr1"]
    good = (small <= 0.05 * mem and large >= 0.95 * mem and
            local["d_ncl0"] == local["d_ncl1"] == 0)
    print(f"numa-model: remote stream twice through node caches of "
          f"{sizes[0] >> 10} and {sizes[1] >> 10} MiB: {small} and {large} "
          f"of {mem} remote accesses served, {local['d_ncl1']} local ones "
          f"({'ok' if good else 'WRONG'})")
    return good


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
