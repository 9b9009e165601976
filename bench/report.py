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


SDET_POLICIES = ("none", "text", "private")
SDET_PRESETS = ("modern", "numaq")


def text_pages(run_dir):
    """Text pages mapped on their process's node, and in all, from the
    guest's pagenodes lines after "sdet-text: node N"."""
    local = total = 0
    node = None
    with open(os.path.join(run_dir, "output.log")) as f:
        for line in f:
            m = re.match(r"sdet-text: node (\d+)", line)
            if m:
                node = int(m.group(1))
                continue
            m = re.search(r"(\d+) text pages mapped:(.*)", line)
            if m and node is not None:
                total += int(m.group(1))
                for n, on in re.findall(r"(\d+) on node (\d+)", m.group(2)):
                    if int(on) == node:
                        local += int(n)
    return local, total


def sdet_boot(run_dir):
    """The model, per-vCPU counts, scripts and memory figures of one boot
    of an SDET-like cell."""
    model, marks = nmreport.load(os.path.join(run_dir, "counts"))
    per_vcpu = nmreport.measurements(marks, split=True)
    if len(per_vcpu) != 1:
        raise SystemExit(f"report: {run_dir}: {len(per_vcpu)} measurements")
    with open(os.path.join(run_dir, "output.log")) as f:
        output = f.read()
    scripts = int(re.search(r"sdet: scripts=(\d+)", output).group(1))
    memory = re.search(r"sdet-memory: replica_pages=(\d+) "
                       r"file_pages=(\d+)", output)
    return model, per_vcpu[0], scripts, tuple(map(int, memory.groups()))


def sdet_run_dirs(out, preset, policy):
    """The boots of a cell: runs/sdet-PRESET-POLICY, then .2, .3, ..."""
    name = f"sdet-{preset}-{policy}"
    dirs = [os.path.join(out, "runs", name)]
    k = 2
    while os.path.isdir(os.path.join(out, "runs", f"{name}.{k}")):
        dirs.append(os.path.join(out, "runs", f"{name}.{k}"))
        k += 1
    return dirs


def sdet_run(out, preset, policy):
    """An SDET-like cell, its boots pooled: the model, each vCPU's counts
    summed over the boots, the boots (per-vCPU counts, scripts), the first
    boot's memory figures, and the local and all text pages of the boots."""
    boots, pooled, memory, model = [], {}, None, None
    local = total = 0
    for run_dir in sdet_run_dirs(out, preset, policy):
        model, per_vcpu, scripts, mem = sdet_boot(run_dir)
        memory = memory or mem
        boots.append((per_vcpu, scripts))
        for v, c in per_vcpu.items():
            acc = pooled.setdefault(v, dict.fromkeys(nmreport.FIELDS, 0))
            for k in nmreport.FIELDS:
                acc[k] += c[k]
        pages = text_pages(run_dir)
        local, total = local + pages[0], total + pages[1]
    return model, pooled, boots, memory, (local, total)


def sdet_throughput(model, boots):
    """Scripts per modelled second of boots run one after the other: all
    their scripts over the sum of each boot's busiest vCPU's time."""
    seconds = sum(max(nmreport.figures(model, c)["seconds"]
                      for c in per_vcpu.values())
                  for per_vcpu, _ in boots)
    return sum(scripts for _, scripts in boots) / seconds


def sdet_figures(model, per_vcpu, boots):
    """Throughput of the boots and the remote share of instruction fetches
    from memory (pooled counts)."""
    i_local = sum(c["i_local"] for c in per_vcpu.values())
    i_remote = sum(c["i_remote"] for c in per_vcpu.values())
    return (sdet_throughput(model, boots),
            100.0 * i_remote / max(i_local + i_remote, 1))


def sdet(out, summary, f):
    """The SDET-like section of the report, and its figures."""
    runs, thr, ifetch, text, memory = {}, {}, {}, {}, {}
    for preset in SDET_PRESETS:
        for policy in SDET_POLICIES:
            (model, per_vcpu, boots, memory[preset, policy],
             text[preset, policy]) = sdet_run(out, preset, policy)
            runs[preset, policy] = (model, per_vcpu, boots)
            thr[preset, policy], ifetch[preset, policy] = sdet_figures(
                model, per_vcpu, boots)
    nboots = min(len(r[2]) for r in runs.values())
    summary["sdet_boots_per_cell"] = nboots
    for preset in SDET_PRESETS:
        for policy in SDET_POLICIES[1:]:
            summary[f"sdet_gain_{preset}_pct_{policy}"] = 100.0 * (
                thr[preset, policy] / thr[preset, "none"] - 1)
        summary[f"sdet_gain_{preset}_pct"] = \
            summary[f"sdet_gain_{preset}_pct_text"]
        for policy in SDET_POLICIES:
            summary[f"sdet_scripts_per_s_{preset}_{policy}"] = \
                thr[preset, policy]
            summary[f"sdet_remote_ifetch_pct_{preset}_{policy}"] = \
                ifetch[preset, policy]
            summary[f"sdet_replica_pages_{preset}_{policy}"] = \
                memory[preset, policy][0]
    local, total = text["modern", "text"]
    summary["sdet_text_local_pct"] = 100.0 * local / max(total, 1)
    summary["sdet_remote_ifetch_pct_text"] = ifetch["modern", "text"]
    summary["sdet_remote_ifetch_pct_none"] = ifetch["modern", "none"]

    f.write("\n## SDET-like throughput\n\n"
            "Concurrent users on every node, each running short scripts of "
            "real dynamically linked programs (bash, coreutils, gawk, sed, "
            "grep) from the ext4 disk, all cached on node 0 first. "
            f"Each cell boots {nboots} time(s), one boot of every cell "
            "after another, and pools its boots: scripts per modelled "
            "second are all the boots' scripts over the sum of each "
            "boot's busiest vCPU's modelled time (each boot's own figure "
            "in brackets, to show the scatter); "
            "instruction fetches that reach memory, remote share; text "
            "pages of a shell and a program on each node afterwards, "
            "node-local share (pagenodes: move_pages(2)); replica pages at the "
            "end of the first boot, against all file pages (/proc/vmstat); "
            "the fewest and most instructions a vCPU ran in a boot: the "
            "scripts are the same in every run, so these show how much the "
            "work itself varies from boot to boot.\n\n"
            "| preset | policy | scripts/s (each boot) | gain | "
            "remote ifetch | local text pages | replica pages / file pages | "
            "vCPU instructions (M) |\n"
            "|---|---|---:|---:|---:|---:|---:|---:|\n")
    for preset in SDET_PRESETS:
        for policy in SDET_POLICIES:
            local, total = text[preset, policy]
            gain = 100.0 * (thr[preset, policy] / thr[preset, "none"] - 1)
            model, _, boots = runs[preset, policy]
            each = ", ".join(f"{sdet_throughput(model, [b]):.1f}"
                             for b in boots)
            insns = [c["insns"] / 1e6
                     for per_vcpu, _ in boots for c in per_vcpu.values()]
            f.write(f"| {preset} | {policy} | {thr[preset, policy]:.1f} "
                    f"({each}) | "
                    f"{gain:+.1f}% | {ifetch[preset, policy]:.1f}% | "
                    f"{100.0 * local / max(total, 1):.1f}% "
                    f"({local}/{total}) | {memory[preset, policy][0]} / "
                    f"{memory[preset, policy][1]} | "
                    f"{min(insns):.0f} to {max(insns):.0f} |\n")
    return runs


def cycle_parts(model, per_vcpu):
    """The modelled cycles of a run, summed over the vCPUs, by part:
    instructions, then per kind of access (user ifetch i, kernel ifetch k,
    data d) its L1 misses that hit the LLC and those that reach memory;
    and the counts summed over the vCPUs."""
    cpi, llc = float(model["cpi"]), int(model["llc_lat"])
    local, remote = int(model["local_lat"]), int(model["remote_lat"])
    tot = {k: sum(c[k] for c in per_vcpu.values()) for k in nmreport.FIELDS}
    parts = {"insns": tot["insns"] * cpi}
    for k in nmreport.KINDS:
        parts[f"{k}_llc"] = (tot[f"{k}_l1_miss"] - tot[f"{k}_local"] -
                             tot[f"{k}_remote"]) * llc
        parts[f"{k}_mem"] = (tot[f"{k}_local"] * local +
                             tot[f"{k}_remote"] * remote)
    return parts, tot


def time_split(model, per_vcpu):
    """Shares of the modelled cycles, summed over the vCPUs: instructions,
    LLC hits, and memory misses by kind (user ifetch, kernel ifetch, data)
    and place; the share the user ifetch's remote misses could give back
    (their cycles over those of as many local misses)."""
    parts, tot = cycle_parts(model, per_vcpu)
    cycles = sum(parts.values())
    excess = int(model["remote_lat"]) - int(model["local_lat"])
    return {"insns": parts["insns"] / cycles,
            "llc": sum(parts[f"{k}_llc"] for k in nmreport.KINDS) / cycles,
            "user_ifetch_mem": parts["i_mem"] / cycles,
            "kernel_ifetch_mem": parts["k_mem"] / cycles,
            "data_mem": parts["d_mem"] / cycles,
            "user_ifetch_remote_excess": tot["i_remote"] * excess / cycles}


def time_split_table(runs, f):
    """Where the modelled time of each SDET-like run goes."""
    f.write("\nWhere the modelled time goes (all vCPUs): what replication "
            "of file pages can act on is the user instruction fetches that "
            "reach memory; the last column is the most removing their "
            "remote latency could give back.\n\n"
            "| preset | policy | instructions | LLC hits | user ifetch "
            "memory | kernel ifetch memory | data memory | user ifetch "
            "remote excess |\n|---|---|---:|---:|---:|---:|---:|---:|\n")
    for preset in SDET_PRESETS:
        for policy in SDET_POLICIES:
            model, per_vcpu = runs[preset, policy][:2]
            t = time_split(model, per_vcpu)
            f.write(f"| {preset} | {policy} | " + " | ".join(
                f"{100 * t[k]:.1f}%" for k in (
                    "insns", "llc", "user_ifetch_mem", "kernel_ifetch_mem",
                    "data_mem", "user_ifetch_remote_excess")) + " |\n")


DIFF_PARTS = (("insns", "instructions"),
              ("i_llc", "user ifetch LLC hits"),
              ("i_mem", "user ifetch memory"),
              ("k_llc", "kernel ifetch LLC hits"),
              ("k_mem", "kernel ifetch memory"),
              ("d_llc", "data LLC hits"),
              ("d_mem", "data memory"))


def cycle_diff_table(runs, summary, f):
    """How each policy's modelled cycles (all vCPUs) differ from those of
    none, part by part, as a share of none's cycles: where a gain or a
    loss comes from."""
    f.write("\nWhere each policy's modelled cycles (all vCPUs) differ from "
            "none's, as a share of none's: replication lowers the memory parts "
            "of what it replicates (user text under text; user text and file "
            "data mapped private under private); what moves elsewhere is the "
            "cost of the kernel side or the work varying from boot to "
            "boot.\n\n| preset | "
            "policy | " + " | ".join(name for _, name in DIFF_PARTS) +
            " | total |\n|---|---|" + "---:|" * (len(DIFF_PARTS) + 1) + "\n")
    for preset in SDET_PRESETS:
        base = cycle_parts(*runs[preset, "none"][:2])[0]
        base_total = sum(base.values())
        for policy in SDET_POLICIES[1:]:
            parts = cycle_parts(*runs[preset, policy][:2])[0]
            diff = {}
            for key, _ in DIFF_PARTS:
                diff[key] = 100.0 * (parts[key] - base[key]) / base_total
                summary[f"sdet_cycles_diff_pct_{preset}_{policy}_{key}"] = \
                    diff[key]
            total = 100.0 * (sum(parts.values()) - base_total) / base_total
            summary[f"sdet_cycles_diff_pct_{preset}_{policy}"] = total
            f.write(f"| {preset} | {policy} | " + " | ".join(
                f"{diff[key]:+.2f}%" for key, _ in DIFF_PARTS) +
                f" | {total:+.2f}% |\n")


def plot_latency_ratio(out, runs):
    """Modelled throughput of the `modern` runs against remote/local
    latency, every other figure as measured: sdet-ratio.png."""
    data = os.path.join(out, "sdet-ratio.dat")
    with open(data, "w") as f:
        f.write("# ratio " + " ".join(SDET_POLICIES) + "\n")
        for tenth in range(10, 121, 5):
            ratio = tenth / 10
            row = [f"{ratio:.1f}"]
            for policy in SDET_POLICIES:
                model, _, boots = runs["modern", policy]
                m = dict(model)
                m["remote_lat"] = str(round(int(m["local_lat"]) * ratio))
                row.append(f"{sdet_throughput(m, boots):.3f}")
            f.write(" ".join(row) + "\n")
    png = os.path.join(out, "sdet-ratio.png")
    plot = "; ".join(
        f"'{data}' using 1:{i + 2} with linespoints title '{p}'"
        for i, p in enumerate(SDET_POLICIES))
    script = (f"set terminal pngcairo size 800,500; set output '{png}'; "
              "set xlabel 'remote / local memory latency'; "
              "set ylabel 'scripts per modelled second'; "
              "set title 'SDET-like throughput, modern preset caches'; "
              "set key top right; set grid; "
              f"plot {plot.replace('; ', ', ')}")
    subprocess.run(["gnuplot", "-e", script], check=True)
    return png


def main():
    out = sys.argv[1]
    costs = fault_costs(out)
    summary = {
        "faults_insn_ratio_none_vs_vanilla":
            costs["patched-remote"][1] / costs["vanilla-remote"][1],
        "faults_insn_ratio_none_vs_vanilla_local":
            costs["patched-local"][1] / costs["vanilla-local"][1],
        "faults_insn_ratio_replica_vs_local":
            costs["private-replica"][1] / costs["private-local"][1],
        "faults_insn_ratio_create_vs_local":
            costs["private-create"][1] / costs["private-local"][1],
    }
    for label, (per_page, per_fault, _) in sorted(costs.items()):
        summary[f"faults_insn_per_fault_{label}"] = per_fault
        summary[f"faults_insn_per_page_{label}"] = per_page

    order = ("vanilla-local", "vanilla-remote", "patched-local",
             "patched-remote", "private-local", "private-create",
             "private-replica")
    with open(os.path.join(out, "report.md"), "w") as f:
        f.write("# make bench\n\n## Fault cost\n\n"
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
        if os.path.isdir(os.path.join(out, "runs", "memory")):
            collapse(out, summary, f)
            reclaim(out, summary, f)
        if os.path.isdir(os.path.join(out, "runs", "sdet-modern-none")):
            runs = sdet(out, summary, f)
            time_split_table(runs, f)
            cycle_diff_table(runs, summary, f)
            for preset in SDET_PRESETS:
                model, per_vcpu = runs[preset, "none"][:2]
                summary[f"sdet_user_ifetch_remote_excess_pct_{preset}"] = \
                    100 * time_split(model, per_vcpu)[
                        "user_ifetch_remote_excess"]
            png = plot_latency_ratio(out, runs)
            f.write(f"\n![throughput against latency ratio]"
                    f"({os.path.basename(png)})\n")
    with open(os.path.join(out, "summary.tsv"), "w") as f:
        for k, v in summary.items():
            f.write(f"{k}\t{v:.4f}\n")
    print(open(os.path.join(out, "report.md")).read())
    return 0


if __name__ == "__main__":
    sys.exit(main())
