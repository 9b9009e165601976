#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""make bench's report: out/bench/report.md and out/bench/summary.tsv from
the runs in out/bench/runs/ (each: the model's counts and the guest's
output, which names each measurement in order)."""
import os
import re
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "numa-model"))
import nmreport  # noqa: E402


def labelled(run_dir, pattern, node=None, every=None):
    """The model, and (label, fields, counts) of each measurement of a run
    that @pattern names, in order: counts of the vCPU that took it, or of
    @node's vCPUs.  When the run measured other things too, @every matches
    the guest's line for each of its measurements."""
    model, marks = nmreport.load(os.path.join(run_dir, "counts"))
    got = nmreport.measurements(marks, node=node, vcpu=node is None)
    lines = []
    with open(os.path.join(run_dir, "output.log")) as f:
        for line in f:
            if re.match(every or pattern, line):
                m = re.match(pattern, line)
                lines.append(m.groupdict() if m else None)
    if len(lines) != len(got):
        raise SystemExit(f"report: {run_dir}: {len(got)} measurements, "
                         f"{len(lines)} named in its output")
    return model, [(d.pop("label"), d, c) for d, c in zip(lines, got) if d]


def fault_costs(out):
    """Median instructions per page and per fault of each case."""
    cases = {}
    for run in ("faults-vanilla", "faults-patched"):
        _, ms = labelled(os.path.join(out, "runs", run),
                         r"faults: (?P<label>\S+) pages=(?P<pages>\d+) "
                         r"minflt=(?P<minflt>\d+)")
        for label, d, c in ms:
            cases.setdefault(label, []).append(
                (c["insns"] / int(d["pages"]),
                 c["insns"] / max(int(d["minflt"]), 1),
                 int(d["minflt"]) / int(d["pages"])))
    return {label: tuple(statistics.median(v[i] for v in runs)
                         for i in range(3))
            for label, runs in cases.items()}


def median_by_label(measured, fields):
    """{label: {field: median}} over the runs of each label; the fields
    are the numbers @fields of the guest's line, and the counts' "insns"
    and modelled "seconds"."""
    model, ms = measured
    runs = {}
    for label, d, c in ms:
        figs = nmreport.figures(model, c)
        row = {k: float(d[k]) for k in fields}
        row.update(insns=figs["insns"], seconds=figs["seconds"])
        runs.setdefault(label, []).append(row)
    return {label: {k: statistics.median(r[k] for r in rows)
                    for k in rows[0]}
            for label, rows in runs.items()}


# The lines of the memory run's measurements, in order.
MEMORY_LINES = r"(collapse|reclaim): "


def collapse(out, summary, f):
    """The collapse section: the first open for write of a file whose
    replicas are mapped, by how many replicas it has."""
    got = median_by_label(labelled(
        os.path.join(out, "runs", "memory"),
        r"collapse: pages=(?P<label>\d+) replicas=(?P<replicas>\d+) "
        r"collapsed=(?P<collapsed>\d+) ns=(?P<ns>\d+)",
        every=MEMORY_LINES), ("replicas", "collapsed", "ns"))
    base = got["0"]["insns"]
    f.write("\n## Collapse cost\n\n"
            "The first open for write of a 16 MiB file cached on node 0 "
            "while a process on node 1 maps R replicas of it (policy "
            "private): the open takes every replica out of the page tables "
            "and frees it before it returns. Median of 3 runs; "
            "instructions and modelled time (modern preset) of the opening "
            "vCPU; guest time is TCG's, for reference only.\n\n"
            "| R | replicas collapsed | instructions | per replica, over R=0 "
            "| modelled µs | guest µs (TCG) |\n"
            "|---:|---:|---:|---:|---:|---:|\n")
    for label in sorted(got, key=int):
        r = got[label]
        per = (r["insns"] - base) / int(label) if int(label) else 0
        f.write(f"| {label} | {r['collapsed']:.0f} | {r['insns']:.0f} | "
                f"{per:.0f} | {r['seconds'] * 1e6:.1f} | "
                f"{r['ns'] / 1e3:.0f} |\n")
        summary[f"collapse_insns_{label}"] = r["insns"]
        summary[f"collapse_us_{label}"] = r["seconds"] * 1e6
        if int(label):
            summary["collapse_insns_per_replica"] = per


def reclaim(out, summary, f):
    """The reclaim section: how fast replicas give way to anonymous
    memory on a full node."""
    got = median_by_label(labelled(
        os.path.join(out, "runs", "memory"),
        r"(?P<label>reclaim): replicas=(?P<replicas>\d+) "
        r"returned=(?P<returned>\d+) anon_pages=(?P<anon>\d+) "
        r"first_at=(?P<first>-?\d+) ns=(?P<ns>\d+) oom=(?P<oom>\d+)",
        node=1, every=MEMORY_LINES), ("replicas", "returned", "anon", "first", "ns", "oom"))
    r = got["reclaim"]
    rate = r["returned"] / r["seconds"] if r["seconds"] else 0
    summary["reclaim_replicas"] = r["replicas"]
    summary["reclaim_returned"] = r["returned"]
    summary["reclaim_replicas_per_modelled_ms"] = rate / 1e3
    summary["reclaim_oom_kills"] = r["oom"]
    # Of the memory taken once reclaim began, how much replicas gave.
    share = 100.0 * r["returned"] / max(r["anon"] - r["first"], 1)
    summary["reclaim_replica_share_pct"] = share
    f.write("\n## Replicas under memory pressure\n\n"
            "Node 1 maps 64 MiB of replicas (policy private), then a task "
            "bound to node 1 takes its memory page by page with anonymous "
            "memory until every replica went, or up to its free memory above "
            "the min watermark plus the replicas' worth. Median of 3 runs; "
            "instructions and modelled time (modern preset) summed over "
            "node 1's vCPUs (the task's direct reclaim and kswapd).\n\n"
            "| replicas | given back | anonymous pages taken | taken before "
            "the first went | replicas given back per page taken after | "
            "modelled ms | replicas per modelled ms | "
            "OOM kills |\n|---:|---:|---:|---:|---:|---:|---:|---:|\n"
            f"| {r['replicas']:.0f} | {r['returned']:.0f} | "
            f"{r['anon']:.0f} | {r['first']:.0f} | {share / 100:.2f} | "
            f"{r['seconds'] * 1e3:.2f} | {rate / 1e3:.0f} | "
            f"{r['oom']:.0f} |\n")


WORKLOADS = ("sdet", "cc1", "perl", "python3", "sqlite3", "sqlthreads")
WORKLOAD_NAMES = {
    "sdet": "SDET-like shell scripts",
    "cc1": "cc1 -O1 on C sources",
    "perl": "perl short runs",
    "python3": "python3 short runs",
    "sqlite3": "sqlite3 queries",
    "sqlthreads": "sqlite3 queries, a thread a CPU",
}
POLICIES = ("text", "private", "readonly")
PRESETS = ("numaq", "p4", "modern", "altra2s", "cxl")
# What the seed measured (SDET throughput, 2.6.0-test3 with its patch,
# which replicated MAP_PRIVATE file pages; its kernels replicated kernel
# text too): (workload, preset) -> %.
SEED = {("sdet", "numaq"): 43.1, ("sdet", "p4"): 8.8}

# Student's t, two-sided 95%, by degrees of freedom.
T975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262,
        2.228, 2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101,
        2.093, 2.086)


def cost_when_off(cells, summary, f):
    """What none costs against vanilla 6.12, split into the work done
    (instructions, L1 misses: the same code paths) and where the caches
    missed (memory accesses: physical placement, which differs from boot
    to boot), next to how far none itself moves between our own boots."""
    rows = [(key, cell) for key, cell in sorted(
        cells.items(), key=lambda kv: (WORKLOADS.index(kv[0][0]),
                                       kv[0][1], kv[0][2]))
        if cell.vanilla]
    if not rows:
        return
    f.write("\n## What the framework costs when off\n\n"
            "`none` against vanilla 6.12, per unit of work, from the "
            "units of two boots (the policy's boot and vanilla's): "
            "modelled cycles, then what they come from. Instructions and "
            "L1 misses follow the code the two kernels run; memory "
            "accesses (misses of the last cache) also follow where each "
            "boot placed its pages and kernel in physical memory, which "
            "decides the conflicts in a physically indexed cache. *none "
            "between our boots*: the largest difference of none's mean "
            "cycles between the boots of our kernel that ran the "
            "workload (each boots with another policy, so places its "
            "pages otherwise).\n\n"
            "| workload | preset | boot | none vs vanilla | instructions "
            "| L1 misses | memory accesses | none between our boots |\n"
            "|---|---|---|---:|---:|---:|---:|---:|\n")
    # none's mean cycles in each of our boots, by workload and preset.
    none_means = {}
    for (wl, preset, _), cell in cells.items():
        none_means.setdefault((wl, preset), []).append(statistics.mean(
            cycles(cell.model, p[0]) for p in cell.pairs))
    for (wl, preset, pol), cell in rows:
        nones = [p[0] for p in cell.pairs]

        mine = [nmreport.figures(cell.model, c) for c in nones]
        theirs = [nmreport.figures(cell.model, c) for c in cell.vanilla]

        def ratio(figure):
            return 100.0 * (statistics.mean(f[figure] for f in mine) /
                            statistics.mean(f[figure] for f in theirs) - 1)

        gain, ci = cell.against_vanilla("none")
        insns = ratio("insns")
        means = none_means[wl, preset]
        spread = 100.0 * (max(means) / min(means) - 1)
        key = f"{wl}_{preset}_{pol}"
        summary[f"none_vs_vanilla_insns_pct_{key}"] = insns
        between = "one boot"
        if len(means) > 1:
            summary[f"none_between_boots_pct_{wl}_{preset}"] = spread
            between = f"{spread:.1f}% ({len(means)} boots)"
        f.write(f"| {WORKLOAD_NAMES[wl]} | {preset} | {pol} | "
                f"{fmt_ci(gain, ci)} | {insns:+.2f}% | "
                f"{ratio('l1_misses'):+.1f}% | "
                f"{ratio('memory_accesses'):+.1f}% | "
                f"{between} |\n")


def mean_ci(xs):
    """The mean of @xs and the half-width of its 95% confidence interval
    (None with fewer than two)."""
    m = statistics.mean(xs)
    if len(xs) < 2:
        return m, None
    t = T975[len(xs) - 2] if len(xs) - 1 <= len(T975) else 1.96
    return m, t * statistics.stdev(xs) / len(xs) ** 0.5


def fmt_ci(m, ci, unit="%"):
    if ci is None:
        return f"{m:+.1f}{unit} (one pair)"
    return f"{m:+.1f}{unit} ± {ci:.1f}"


def total(per_vcpu):
    """Counts summed over the vCPUs."""
    return {k: sum(c[k] for c in per_vcpu.values()) for k in nmreport.FIELDS}


def add_counts(a, b):
    return {k: a.get(k, 0) + b[k] for k in nmreport.FIELDS}


def cycles(model, c, kernel_text_local=False):
    """Modelled cycles of counts @c; with @kernel_text_local, as if the
    kernel's text were on every node."""
    if kernel_text_local:
        c = nmreport.as_local(model, c, "k")
    return nmreport.cycles(model, c)


def paired_gain(model, none, policy, kernel_text_local=False):
    """The gain of one pair, %: fixed work, so throughput goes as the
    inverse of the cycles."""
    return 100.0 * (cycles(model, none, kernel_text_local) /
                    cycles(model, policy, kernel_text_local) - 1)


def paired_boot(run_dir):
    """The model, and each measurement of a paired boot in order:
    (workload, arm, pair, counts per vCPU, replica pages, replica pages
    made while it was measured)."""
    model, marks = nmreport.load(os.path.join(run_dir, "counts"))
    got = nmreport.measurements(marks, split=True)
    names, memory = [], []
    with open(os.path.join(run_dir, "output.log")) as f:
        for line in f:
            m = re.match(r"paired: workload=(\S+) arm=(\S+) pair=(\d+)",
                         line)
            if m:
                names.append((m.group(1), m.group(2), int(m.group(3))))
            m = re.match(r"paired-memory: replica_pages=(\d+) "
                         r"file_pages=(\d+)(?: replicas_made=(\d+))?"
                         r"(?:.* settle_held=(\d+))?", line)
            if m:
                memory.append((int(m.group(1)), int(m.group(3) or 0),
                               int(m.group(4) or 0)))
    if not (len(names) == len(got) == len(memory)):
        raise SystemExit(f"report: {run_dir}: {len(got)} measurements, "
                         f"{len(names)} named, {len(memory)} memory lines")
    return model, [n + (c,) + r for n, c, r in zip(names, got, memory)]


def text_pages(run_dir):
    """Text pages mapped on their process's node, and in all, from the
    guest's pagenodes lines after "paired-text: node N"."""
    local = all_pages = 0
    node = None
    with open(os.path.join(run_dir, "output.log")) as f:
        for line in f:
            m = re.match(r"paired-text: node (\d+)", line)
            if m:
                node = int(m.group(1))
                continue
            m = re.search(r"(\d+) text pages mapped:(.*)", line)
            if m and node is not None:
                all_pages += int(m.group(1))
                for n, on in re.findall(r"(\d+) on node (\d+)", m.group(2)):
                    if int(on) == node:
                        local += int(n)
    return local, all_pages


class Cell:
    """One workload under one preset and policy: its pairs, from one boot
    or more."""

    def __init__(self, model, vcpu_pairs, boots, vanilla, replica_pages,
                 made, held):
        self.model = model
        # [(none counts, policy counts)] per pair, per vCPU and summed
        self.vcpu_pairs = vcpu_pairs
        self.pairs = [(total(n), total(p)) for n, p in vcpu_pairs]
        self.boots = boots            # the boot of each pair
        self.vanilla = vanilla        # [counts] of the vanilla boots
        self.replica_pages = replica_pages
        # Replica pages made inside the policy's measured units: none
        # when the warm-up units before each reached a steady state.
        self.made = made
        # Pages the thrash guard left on remote originals there: none
        # when the workload's files were installed long before, as the
        # guard leaves a real system's programs alone.
        self.held = held

    def gains(self, kernel_text_local=False, model=None):
        """The paired gains, % (of the cycles summed over the vCPUs);
        costed with @model (a costing of the cell's, see
        nmreport.costed()) if given."""
        model = model or self.model
        return [paired_gain(model, n, p, kernel_text_local)
                for n, p in self.pairs]

    def interval(self, kernel_text_local=False, model=None):
        """The mean gain, its 95% interval and the within-boot spread:
        with pairs from two boots or more, the interval is the one of the
        boots' means, and the spread the mean of each boot's own
        interval; with one boot, the interval of its pairs (no spread).
        Costed with @model as gains() is."""
        gains = self.gains(kernel_text_local, model)
        by_boot = {}
        for b, g in zip(self.boots, gains):
            by_boot.setdefault(b, []).append(g)
        if len(by_boot) < 2:
            m, ci = mean_ci(gains)
            return m, ci, None
        m, ci = mean_ci([statistics.mean(g) for g in by_boot.values()])
        within = [mean_ci(g)[1] for g in by_boot.values()]
        within = None if None in within else statistics.mean(within)
        return m, ci, within

    def vcpu_gains(self):
        """The mean paired gain of each vCPU's own jobs, %."""
        vcpus = sorted(self.vcpu_pairs[0][0])
        return {v: statistics.mean(paired_gain(self.model, n[v], p[v])
                                   for n, p in self.vcpu_pairs)
                for v in vcpus}

    def band(self, kernel_text_local=False):
        """The lowest and highest mean gain over the costings of the
        sensitivity band (nmreport.band_models())."""
        means = [statistics.mean(self.gains(kernel_text_local, m))
                 for m in nmreport.band_models(self.model)]
        return min(means), max(means)

    def pooled(self, arm):
        acc = {}
        for pair in self.pairs:
            acc = add_counts(acc, pair[0 if arm == "none" else 1])
        return acc

    def against_vanilla(self, arm):
        """Gain of @arm over vanilla 6.12, %, and its interval: the
        ratio of the means, its interval from the two arms' spreads."""
        if not self.vanilla:
            return None, None
        mine = [cycles(self.model, p[0 if arm == "none" else 1])
                for p in self.pairs]
        theirs = [cycles(self.model, c) for c in self.vanilla]
        mm, mc = mean_ci(mine)
        vm, vc = mean_ci(theirs)
        gain = 100.0 * (vm / mm - 1)
        if mc is None or vc is None:
            return gain, None
        rel = ((mc / mm) ** 2 + (vc / vm) ** 2) ** 0.5
        return gain, 100.0 * (vm / mm) * rel


def cell_boots(out, preset, policy):
    """The run directories of the boots of one preset and policy:
    paired-<preset>-<policy>.<b>, or the one paired-<preset>-<policy> of
    a make bench from before boots were numbered."""
    runs = os.path.join(out, "runs")
    name = f"paired-{preset}-{policy}"
    dirs = sorted((d for d in os.listdir(runs)
                   if re.fullmatch(re.escape(name) + r"(\.\d+)?", d)),
                  key=lambda d: int(d.rsplit(".", 1)[1]) if "." in d else 0)
    return [os.path.join(runs, d) for d in dirs]


def paired_cells(out):
    """{(workload, preset, policy): Cell} of every paired boot there is."""
    cells = {}
    if not os.path.isdir(os.path.join(out, "runs")):
        return cells
    for preset in PRESETS:
        vanilla = {}
        for vdir in cell_boots(out, preset, "vanilla"):
            for wl, _, _, c, _, _, _ in paired_boot(vdir)[1]:
                vanilla.setdefault(wl, []).append(total(c))
        for policy in POLICIES:
            arms, pages, made, held, model = {}, {}, {}, {}, None
            for boot, pdir in enumerate(cell_boots(out, preset, policy)):
                model, ms = paired_boot(pdir)
                for wl, arm, pair, c, r, m, h in ms:
                    arms.setdefault(wl, {}).setdefault(
                        (boot, pair), {})[arm] = c
                    if arm == policy:
                        pages[wl] = r
                        made[wl] = made.get(wl, 0) + m
                        held[wl] = held.get(wl, 0) + h
            for wl, by_pair in arms.items():
                keys = [k for k in sorted(by_pair)
                        if "none" in by_pair[k] and policy in by_pair[k]]
                cells[wl, preset, policy] = Cell(
                    model, [(by_pair[k]["none"], by_pair[k][policy])
                            for k in keys], [k[0] for k in keys],
                    vanilla.get(wl, []), pages.get(wl, 0), made.get(wl, 0),
                    held.get(wl, 0))
    return cells


def previous_summary(out):
    """The summary of the make bench before this one, if it kept one."""
    prev = {}
    path = os.path.join(out, "summary.prev.tsv")
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                k, v = line.rstrip("\n").split("\t")
                if ":" not in v:
                    prev[k] = float(v)
    return prev


def paired(out, cells, summary, f):
    """The paired section: each workload's gain under each preset and
    policy, with its interval, against none and against vanilla."""
    prev = previous_summary(out)
    npairs = min(len(c.pairs) for c in cells.values())
    summary["paired_pairs"] = npairs
    f.write("\n## Paired gains\n\n"
            "Each boot runs one policy: every workload's files are cached "
            "on node 0 first (on `cxl`, in the memory of the CXL node), "
            "then it measures pairs, one unit of fixed "
            "work under `none` and one under the policy (switched in "
            "sysfs; order alternating), the policy's after unmeasured "
            "units under it, which make its replicas, until one makes "
            "none; none's after one unmeasured unit. A unit runs the "
            "workload's job on "
            "every CPU of every node at once. Gain: none's modelled "
            "cycles, summed over all vCPUs, over the policy's, less one, "
            "per pair; the mean and its 95% confidence interval "
            "(Student's t) across the boots' means (each boot shuffles "
            "the page allocator), or across the pairs of a single boot; "
            "*within boot*: the mean of each boot's own interval. *band*: "
            "the lowest and highest mean gain over the model's "
            "sensitivity costings (bench/numa-model/README.md); a gain is "
            "an upper bound wherever what favours replication is not "
            "modelled. *per vCPU*: each vCPU's own gain, as CPU order "
            "(node 0 first). Guests run with one TCG thread "
            "counting instructions (`-icount sleep=off`, its shift "
            "beside each cell's turn below), "
            "`norandmaps`, NUMA balancing off, THP only on madvise(2) "
            "(khugepaged would collapse text between some units and not "
            "others). *replica pages*: after the policy's last unit; in "
            "brackets, those made inside its measured units, 0 in a "
            "steady state. *kernel text local*: the "
            "same pairs costed as if the kernel's own text were on every "
            "node, the seed's baseline (its NUMA-Q kernels replicated "
            "kernel text). *vs vanilla*: the policy's units against "
            "vanilla 6.12 booted with the same workloads (between boots; "
            "interval from both spreads); *none vs vanilla*: what the "
            "framework costs when off. *previous*: the same gain in the "
            "make bench before this one, and whether the intervals "
            "overlap.\n")
    for preset in PRESETS:
        rows = [(wl, pol) for wl in WORKLOADS for pol in POLICIES
                if (wl, preset, pol) in cells]
        if not rows:
            continue
        model = cells[rows[0][0], preset, rows[0][1]].model
        cpu_nodes = int(model.get("cpu_nodes", model["nodes"]))
        mem_only = int(model["nodes"]) - cpu_nodes
        f.write(f"\n### `{preset}`: {cpu_nodes} nodes of "
                f"{model['cpus_per_node']} CPUs"
                + (f" and {mem_only} of memory alone, which caches the "
                   "workloads' files" if mem_only else "") + "\n\n"
                "| workload | policy | gain | within boot | band | "
                "per vCPU | kernel text local | "
                "vs vanilla | none vs vanilla | remote user ifetch, none → "
                "policy | replica pages | previous |\n"
                "|---|---|---:|---:|---:|---|---:|---:|---:|---:|---:|---|"
                "\n")
        for wl, pol in rows:
            cell = cells[wl, preset, pol]
            g, gci, within = cell.interval()
            k, kci, _ = cell.interval(kernel_text_local=True)
            low, high = cell.band()
            per_vcpu = ", ".join(f"{x:+.1f}"
                                 for x in cell.vcpu_gains().values())
            v, vci = cell.against_vanilla(pol)
            nv, nvci = cell.against_vanilla("none")
            key = f"gain_{wl}_{preset}_{pol}"
            summary[key + "_pct"] = g
            summary[key + "_ci"] = gci if gci is not None else -1
            summary[key + "_kernel_text_local_pct"] = k
            summary[key + "_band"] = f"{low:.2f}:{high:.2f}"
            summary[f"replicas_made_measured_{wl}_{preset}_{pol}"] = \
                cell.made
            summary[f"settle_held_measured_{wl}_{preset}_{pol}"] = \
                cell.held
            if v is not None:
                summary[f"vanilla_{key}_pct"] = v
                summary[f"none_vs_vanilla_{wl}_{preset}_{pol}_pct"] = nv
            fig = {arm: nmreport.figures(model, cell.pooled(arm))
                   for arm in ("none", pol)}
            summary[f"remote_ifetch_pct_{wl}_{preset}_{pol}"] = \
                fig[pol]["ifetch_remote_pct"]
            was = ""
            if key + "_pct" in prev:
                pg, pci = prev[key + "_pct"], prev.get(key + "_ci", -1)
                agree = (gci is not None and pci >= 0 and
                         abs(pg - g) <= gci + pci)
                was = (f"{pg:+.1f}% ± {pci:.1f}, "
                       f"{'overlap' if agree else 'DISAGREE'}")
            mark = ""
            if (wl, preset) in SEED:
                mark = f" (the seed: +{SEED[wl, preset]:.1f}%)"
            f.write(f"| {WORKLOAD_NAMES[wl]} | {pol} | "
                    f"{fmt_ci(g, gci)}{mark} | "
                    f"{'' if within is None else f'± {within:.1f}'} | "
                    f"{low:+.1f} to {high:+.1f}% | {per_vcpu} | "
                    f"{fmt_ci(k, kci)} | "
                    f"{'' if v is None else fmt_ci(v, vci)} | "
                    f"{'' if nv is None else fmt_ci(nv, nvci)} | "
                    f"{fig['none']['ifetch_remote_pct']:.1f}% → "
                    f"{fig[pol]['ifetch_remote_pct']:.1f}% | "
                    f"{cell.replica_pages} ({cell.made}) | {was} |\n")


# How close the model must come to the seed's own measurements, points.
CALIBRATION_TOLERANCE = {"numaq": 5.0, "p4": 3.0}


def calibration(cells, summary, f):
    """The model against the seed's measurements: SDET under the seed's
    policy (private) with kernel text local, as its kernels had it."""
    rows = []
    for preset, tolerance in CALIBRATION_TOLERANCE.items():
        cell = cells.get(("sdet", preset, "private"))
        if not cell:
            continue
        g, ci, _ = cell.interval(kernel_text_local=True)
        low, high = cell.band(kernel_text_local=True)
        seed = SEED["sdet", preset]
        summary[f"calib_sdet_{preset}_pct"] = g
        within = abs(g - seed) <= tolerance
        # The most that local user text and local data could give.
        c = nmreport.as_local(cell.model, cell.pooled("none"), "k")
        whole = cycles(cell.model, c)
        text = nmreport.remote_excess(cell.model, c, "i") / whole
        data = nmreport.remote_excess(cell.model, c, "d") / whole
        parts = nmreport.cycle_parts(cell.model, c)
        moving = (parts["d_xfer"] + parts["inval"]) / whole
        turn = nmreport.turn_insns(c)
        # SCI (the NUMA-Q's coherence) invalidates sharers one by one;
        # counts from before the plugin counted them have none.
        serial = "—"
        if c["inval_nodes"]:
            sm = nmreport.costed(cell.model, serial=True)
            sg, sci, _ = cell.interval(True, sm)
            serial = fmt_ci(sg, sci)
            summary[f"calib_sdet_{preset}_serial_inval_pct"] = sg
        rows.append(f"| `{preset}` | +{seed:.1f}% | {fmt_ci(g, ci)} | "
                    f"{low:+.1f} to {high:+.1f}% | ±{tolerance:.0f} | "
                    f"{'reproduced' if within else 'NOT reproduced'} | "
                    f"{100 * text:.1f}% | {100 * data:.1f}% | "
                    f"{100 * moving:.1f}% | {turn:.0f} | {serial} |\n")
    if rows:
        f.write("\n## The model against the seed's measurements\n\n"
                "SDET-like under `private`, the seed's policy, costed with "
                "kernel text local as the seed's kernels had it; the "
                "presets were fixed from public figures before this was "
                "run. *remote text*, *remote data*: under none, what remote "
                "user instruction fetches and remote data accesses cost "
                "beyond local ones, as a share of none's cycles: the most "
                "replication could take away. *lines moving*: dirty lines "
                "from another node's caches and the invalidations of "
                "stores, as a share of none's cycles; *turn*: "
                "instructions a vCPU ran at a stretch (the shorter, the "
                "more often such lines move: bench/numa-model/README.md, "
                "Turns); *serial invalidations*: the same pairs costed as "
                "if a store invalidated the other nodes' copies one after "
                "the other, a remote round trip each, as SCI's sharing "
                "lists do on the NUMA-Q, where the directory of the model "
                "(and of the P4 machine's chipset) sends them all at "
                "once; a lower bound of that cost, as stores that went to "
                "memory are charged none.\n\n"
                "| preset | seed | model | band | tolerance | | remote text "
                "| remote data | lines moving | turn | serial "
                "invalidations |\n"
                "|---|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|\n" +
                "".join(rows))


# The second real measurement the model must reproduce: ScyllaDB on a
# 2-socket Ampere Altra ran at an IPC of about 1.0 with its text on the
# local node and 0.65 with it (and nothing else) on the other one, "always
# 30-40%" whatever the number of cores (scylladb/scylladb#9294;
# ../shared/bench-figures.md): remote text adds 1/0.65 - 1 = 0.54 cycles
# an instruction, 0.43 to 0.67 over that range.  An absolute figure: the
# model's own CPI with local text is whatever its costing makes it.
SCYLLA_DCPI = (0.54, 0.43, 0.67)


def remote_text_dcpi(cell, model=None):
    """The cycles an instruction that remote user text adds under none,
    over the vCPUs of every node but node 0, where the files are cached:
    their text is all remote, as ScyllaDB's was."""
    model = model or cell.model
    per_node = int(cell.model["cpus_per_node"])
    acc = {}
    for none, _ in cell.vcpu_pairs:
        for vcpu, c in none.items():
            if vcpu >= per_node:
                acc = add_counts(acc, c)
    if not acc.get("insns"):
        return None
    return nmreport.remote_excess(model, acc, "i") / acc["insns"]


ALTRA_LATS = nmreport.COSTING["altra2s"]["lats"]


def scylla_check(cells, summary, f):
    """The model on the Altra against ScyllaDB's measurement, for each
    workload measured there (the none arms of any policy's boots)."""
    rows = []
    for wl in WORKLOADS:
        cell = next((cells[wl, "altra2s", p] for p in POLICIES
                     if (wl, "altra2s", p) in cells), None)
        if not cell:
            continue
        dcpi = remote_text_dcpi(cell)
        if dcpi is None:
            continue
        band = [remote_text_dcpi(cell, m)
                for m in nmreport.band_models(cell.model)]
        low, high = min(band), max(band)
        summary[f"calib_scylla_{wl}_altra2s_dcpi"] = dcpi
        summary[f"calib_scylla_{wl}_altra2s_dcpi_band"] = \
            f"{low:.3f}:{high:.3f}"
        hit = high >= SCYLLA_DCPI[1] and low <= SCYLLA_DCPI[2]
        rows.append(f"| {WORKLOAD_NAMES[wl]} | {dcpi:.3f} | "
                    f"{low:.3f} to {high:.3f} | "
                    f"{'overlaps' if hit else 'misses'} |\n")
    if rows:
        f.write("\n## The model against ScyllaDB on the Altra\n\n"
                "ScyllaDB measured an IPC of about 1.0 with its text local "
                f"and 0.65 with it on the other node: +{SCYLLA_DCPI[0]:.2f} "
                f"cycles an instruction ({SCYLLA_DCPI[1]:.2f} to "
                f"{SCYLLA_DCPI[2]:.2f}). Below, what remote user text adds "
                "under none on the `altra2s` preset's node-1 vCPUs, whose "
                "text is all on node 0; *band*: the sensitivity costings, "
                "the unpublished remote latency swept from "
                f"{ALTRA_LATS[0]['remote_lat']} to "
                f"{ALTRA_LATS[1]['remote_lat']} cycles "
                "among them. A workload with less hot text than ScyllaDB "
                "adds less: only one whose text misses the caches as "
                "often can match it.\n\n"
                "| workload | cycles an instruction | band | target |\n"
                "|---|---:|---:|---|\n" + "".join(rows))


PARTS = (("insns", "instructions"), ("i_l2", "user ifetch L2"),
         ("i_llc", "user ifetch LLC"), ("i_mem", "user ifetch memory"),
         ("k_l2", "kernel ifetch L2"), ("k_llc", "kernel ifetch LLC"),
         ("k_mem", "kernel ifetch memory"), ("d_l2", "data L2"),
         ("d_llc", "data LLC"), ("d_mem", "data memory"),
         ("d_xfer", "dirty data from another node"),
         ("inval", "invalidations"))


def time_split_table(cells, summary, f):
    """Where each cell's modelled time goes under none, and how the
    policy's differs, part by part, as shares of none's cycles."""
    f.write("\n## Where the time goes\n\n"
            "Per workload, preset and policy: the share of each part in "
            "none's modelled cycles (all vCPUs, all pairs), then the "
            "policy's change of that part as a share of none's cycles. "
            "Replication can act on user ifetch memory (and, under "
            "`private` and `readonly`, on data read from files); *remote "
            "excess* is the most it can give back: none's remote user "
            "ifetch misses at their remote (near, far) less local latency. "
            "*turn*: "
            "instructions a vCPU ran at a stretch under none, as QEMU's "
            "one TCG thread takes the vCPUs in turn (`-icount shift`, "
            "beside it, sets how long: bench/numa-model/README.md); "
            "the coarser the turns, the fewer times lines that CPUs of "
            "several nodes write cross between them.\n\n"
            "| workload | preset | policy | " +
            " | ".join(name for _, name in PARTS) +
            " | remote excess | total change | turn |\n|---|---|---|" +
            "---:|" * (len(PARTS) + 3) + "\n")
    for (wl, preset, pol), cell in sorted(
            cells.items(), key=lambda kv: (WORKLOADS.index(kv[0][0]),
                                           kv[0][1], kv[0][2])):
        model = cell.model
        none_c, pol_c = cell.pooled("none"), cell.pooled(pol)
        base = nmreport.cycle_parts(model, none_c)
        mine = nmreport.cycle_parts(model, pol_c)
        whole = sum(base.values())
        excess = nmreport.remote_excess(model, none_c, "i") / whole
        key = f"{wl}_{preset}_{pol}"
        summary[f"user_ifetch_remote_excess_pct_{key}"] = 100 * excess
        change = 100.0 * (sum(mine.values()) - whole) / whole
        summary[f"cycles_change_pct_{key}"] = change
        turn = nmreport.turn_insns(none_c)
        summary[f"turn_insns_{key}"] = turn
        f.write(f"| {wl} | {preset} | {pol} | " + " | ".join(
            f"{100 * base[k] / whole:.1f}% "
            f"({100 * (mine[k] - base[k]) / whole:+.1f})"
            for k, _ in PARTS) +
            f" | {100 * excess:.1f}% | {change:+.1f}% | "
            f"{turn:.0f} (shift {model.get('icount_shift', '0')}) |\n")


def gnuplot(png, settings, plots):
    """Draw @plots (gnuplot plot clauses) with @settings into @png."""
    subprocess.run(["gnuplot", "-e",
                    f"set terminal pngcairo size 800,500; "
                    f"set output '{png}'; {settings}; "
                    f"plot {', '.join(plots)}"], check=True)
    return png


def plot_gains(out, cells):
    """gains-PRESET.png: each workload's paired gain per policy, with its
    interval."""
    pngs = []
    for preset in PRESETS:
        rows = [wl for wl in WORKLOADS
                if any((wl, preset, p) in cells for p in POLICIES)]
        if not rows:
            continue
        pols = [p for p in POLICIES
                if any((wl, preset, p) in cells for wl in rows)]
        data = os.path.join(out, f"gains-{preset}.dat")
        with open(data, "w") as f:
            f.write("# workload " + " ".join(
                f"{p} {p}_ci" for p in pols) + "\n")
            for wl in rows:
                row = [wl]
                for p in pols:
                    cell = cells.get((wl, preset, p))
                    g, ci, _ = cell.interval() if cell else (0, 0, 0)
                    row += [f"{g:.3f}", f"{ci or 0:.3f}"]
                f.write(" ".join(row) + "\n")
        pngs.append(gnuplot(
            os.path.join(out, f"gains-{preset}.png"),
            "set style data histogram; "
            "set style histogram errorbars gap 1 lw 1; "
            "set style fill solid 0.6 border -1; "
            "set ylabel 'paired gain over none, % (95% CI)'; "
            f"set title 'Paired gains, {preset} preset'; "
            "set key top right; set grid ytics",
            [f"'{data}' using {2 * i + 2}:{2 * i + 3}:xtic(1) title '{p}'"
             for i, p in enumerate(pols)]))
    return pngs


def plot_latency_ratio(out, cells):
    """The SDET-like paired gain of the `modern` runs against the
    remote/local latency ratio, every other figure as measured:
    sdet-ratio.png."""
    pols = [p for p in POLICIES if ("sdet", "modern", p) in cells]
    if not pols:
        return None
    data = os.path.join(out, "sdet-ratio.dat")
    with open(data, "w") as f:
        f.write("# ratio " + " ".join(pols) + "\n")
        for tenth in range(10, 121, 5):
            row = [f"{tenth / 10:.1f}"]
            for p in pols:
                cell = cells["sdet", "modern", p]
                m = dict(cell.model)
                m["remote_lat"] = str(round(int(m["local_lat"]) * tenth / 10))
                saved, cell.model = cell.model, m
                row.append(f"{statistics.mean(cell.gains()):.3f}")
                cell.model = saved
            f.write(" ".join(row) + "\n")
    return gnuplot(
        os.path.join(out, "sdet-ratio.png"),
        "set xlabel 'remote / local memory latency'; "
        "set ylabel 'paired gain over none, %'; "
        "set title 'SDET-like paired gain, modern preset caches'; "
        "set key top left; set grid",
        [f"'{data}' using 1:{i + 2} with linespoints title '{p}'"
         for i, p in enumerate(pols)])


def sdet_summary(out, cells, summary):
    """The SDET-like figures under the keys the summary has had since
    before the paired runs: gains, remote ifetch shares, replica pages,
    node-local text pages."""
    for preset in PRESETS:
        for pol in ("text", "private"):
            cell = cells.get(("sdet", preset, pol))
            if not cell:
                continue
            summary[f"sdet_gain_{preset}_pct_{pol}"] = \
                statistics.mean(cell.gains())
            fig = nmreport.figures(cell.model, cell.pooled(pol))
            summary[f"sdet_remote_ifetch_pct_{preset}_{pol}"] = \
                fig["ifetch_remote_pct"]
            summary[f"sdet_replica_pages_{preset}_{pol}"] = \
                cell.replica_pages
            none = nmreport.figures(cell.model, cell.pooled("none"))
            summary[f"sdet_remote_ifetch_pct_{preset}_none"] = \
                none["ifetch_remote_pct"]
            if pol == "text":
                c = cell.pooled("none")
                summary[f"sdet_user_ifetch_remote_excess_pct_{preset}"] = \
                    100.0 * nmreport.remote_excess(cell.model, c, "i") / \
                    cycles(cell.model, c)
        if f"sdet_gain_{preset}_pct_text" in summary:
            summary[f"sdet_gain_{preset}_pct"] = \
                summary[f"sdet_gain_{preset}_pct_text"]
    for run in cell_boots(out, "modern", "text")[:1]:
        local, pages = text_pages(run)
        summary["sdet_text_local_pct"] = 100.0 * local / max(pages, 1)
    for pol in ("text", "none"):
        key = f"sdet_remote_ifetch_pct_modern_{pol}"
        if key in summary:
            summary[f"sdet_remote_ifetch_pct_{pol}"] = summary[key]


def faults(out, summary, f):
    """The fault cost section: instructions per fault of each case."""
    costs = fault_costs(out)
    summary.update({
        "faults_insn_ratio_none_vs_vanilla":
            costs["patched-remote"][1] / costs["vanilla-remote"][1],
        "faults_insn_ratio_none_vs_vanilla_local":
            costs["patched-local"][1] / costs["vanilla-local"][1],
        "faults_insn_ratio_replica_vs_local":
            costs["private-replica"][1] / costs["private-local"][1],
        "faults_insn_ratio_create_vs_local":
            costs["private-create"][1] / costs["private-local"][1],
    })
    for label, (per_page, per_fault, _) in sorted(costs.items()):
        summary[f"faults_insn_per_fault_{label}"] = per_fault
        summary[f"faults_insn_per_page_{label}"] = per_page

    order = ("vanilla-local", "vanilla-remote", "patched-local",
             "patched-remote", "private-local", "private-create",
             "private-replica")
    f.write("\n## Fault cost\n\n"
            "Faulting the 4096 pages of a file cached on node 0, mapped "
            "MAP_PRIVATE (median of 3 runs; instructions of the faulting "
            "vCPU from the NUMA model; fault-around maps up to 16 pages "
            "a fault).\n\n"
            "| case | instructions per fault | per page | faults per page |\n"
            "|---|---:|---:|---:|\n")
    for label in order:
        if label in costs:
            pp, pf, fpp = costs[label]
            f.write(f"| {label} | {pf:.0f} | {pp:.0f} | {fpp:.3f} |\n")
    f.write("\n| ratio | value | target |\n|---|---:|---|\n")
    f.write(f"| policy none / vanilla, remote originals | "
            f"{summary['faults_insn_ratio_none_vs_vanilla']:.4f} | at most 1.005 |\n")
    f.write(f"| policy none / vanilla, local originals | "
            f"{summary['faults_insn_ratio_none_vs_vanilla_local']:.4f} | |\n")
    f.write(f"| mapping a replica / mapping a local original | "
            f"{summary['faults_insn_ratio_replica_vs_local']:.4f} | at most 1.05 |\n")
    f.write(f"| making a replica / mapping a local original | "
            f"{summary['faults_insn_ratio_create_vs_local']:.4f} | |\n")


SPANMM_LINE = r"spanmm: (?P<label>\S+) round=(?P<round>\d+) pages=\d+"


def spanmm_costs(out):
    """{label: (mean instructions, mean modelled cycles, fewest
    instructions)} of a round of
    mprotect and munmap by a process spanning two nodes, summed over
    every vCPU (the other node's CPU handles the shootdowns).  The mean:
    anonymous rounds cost about 1.15 or 1.38 million instructions (the
    cause is not traced), which a median of 15 rounds would pick either
    of."""
    rounds = {}
    for run in ("spanmm-vanilla", "spanmm-patched"):
        run_dir = os.path.join(out, "runs", run)
        if not os.path.isdir(run_dir):
            continue
        model, marks = nmreport.load(os.path.join(run_dir, "counts"))
        got = nmreport.measurements(marks)
        with open(os.path.join(run_dir, "output.log")) as f:
            labels = [m.groupdict() for m in
                      (re.match(SPANMM_LINE, line) for line in f) if m]
        if len(labels) != len(got):
            raise SystemExit(f"report: {run_dir}: {len(got)} "
                             f"measurements, {len(labels)} named")
        for d, c in zip(labels, got):
            # The first round warms the caches.
            if d["round"] == "0":
                continue
            rounds.setdefault(d["label"], []).append(
                (c["insns"], nmreport.cycles(model, c)))
    return {label: (statistics.mean(r[0] for r in rs),
                    statistics.mean(r[1] for r in rs), min(r[0] for r in rs))
            for label, rs in rounds.items()}


def spanmm(out, summary, f):
    """What changing its mappings costs a process whose threads span two
    nodes, by kernel and policy: the baseline of per-node page tables."""
    costs = spanmm_costs(out)
    if not costs:
        return
    f.write("\n## A process on two nodes changes its mappings\n\n"
            "A thread on node 0 and one on node 1 of one process both read "
            "a 4 MiB mapping; the node-0 thread makes it read-only, "
            "accessible again and unmaps it (`bench/guest/spanmm.c`): the "
            "mean of 15 rounds (the first, which warms the caches, left "
            "out), instructions and modelled cycles summed "
            "over every vCPU, on the `modern` preset. *file*: a file "
            "cached on node 0, mapped as text; *anon*: anonymous memory. "
            "Today such a process maps the page cache itself under every "
            "policy; per-node page tables must keep the file's figures "
            "within 1.5 times vanilla's, and the anonymous ones where "
            "they are (`Documentation/mm/replication.rst`).\n\n"
            "*fewest*: the round with the fewest instructions: "
            "anonymous rounds fall in two modes, about 1.15 or 1.38 "
            "million (the cause is not traced), in proportions that vary "
            "from run to run, under either policy.\n\n"
            "| case | instructions a round | fewest | cycles a round | "
            "/ vanilla |\n"
            "|---|---:|---:|---:|---:|\n")
    for label in sorted(costs):
        insns, cyc, fewest = costs[label]
        kind = label.rsplit("-", 1)[1]
        base = costs.get(f"vanilla-{kind}")
        ratio = f"{cyc / base[1]:.3f}" if base else ""
        summary[f"spanmm_insn_{label}"] = insns
        if base:
            summary[f"spanmm_cycles_ratio_{label}_vs_vanilla"] = \
                cyc / base[1]
        f.write(f"| {label} | {insns:.0f} | {fewest:.0f} | {cyc:.0f} | "
                f"{ratio} |\n")


def main():
    out = sys.argv[1]
    summary = {}
    runs = os.path.join(out, "runs")
    with open(os.path.join(out, "report.md"), "w") as f:
        f.write("# make bench\n")
        # A section for each kind of run there is: BENCH_RUNS may have
        # booted only some.
        if all(os.path.isdir(os.path.join(runs, r))
               for r in ("faults-vanilla", "faults-patched")):
            faults(out, summary, f)
        spanmm(out, summary, f)
        if os.path.isdir(os.path.join(runs, "memory")):
            collapse(out, summary, f)
            reclaim(out, summary, f)
        cells = paired_cells(out)
        if cells:
            calibration(cells, summary, f)
            scylla_check(cells, summary, f)
            paired(out, cells, summary, f)
            cost_when_off(cells, summary, f)
            sdet_summary(out, cells, summary)
            time_split_table(cells, summary, f)
            for png in plot_gains(out, cells):
                f.write(f"\n![paired gains]({os.path.basename(png)})\n")
            png = plot_latency_ratio(out, cells)
            if png:
                f.write(f"\n![SDET-like gain against latency ratio]"
                        f"({os.path.basename(png)})\n")
    with open(os.path.join(out, "summary.tsv"), "w") as f:
        for k, v in summary.items():
            f.write(f"{k}\t{v}\n" if isinstance(v, str)
                    else f"{k}\t{v:.4f}\n")
    print(open(os.path.join(out, "report.md")).read())
    return 0


if __name__ == "__main__":
    sys.exit(main())
