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


def labelled(run_dir, pattern):
    """(label, fields, counts) of each measurement of a run, in order."""
    model, marks = nmreport.load(os.path.join(run_dir, "counts"))
    got = nmreport.measurements(marks, vcpu=True)
    lines = []
    with open(os.path.join(run_dir, "output.log")) as f:
        for line in f:
            m = re.match(pattern, line)
            if m:
                lines.append(m.groupdict())
    if len(lines) != len(got):
        raise SystemExit(f"report: {run_dir}: {len(got)} measurements, "
                         f"{len(lines)} named in its output")
    return model, [(d.pop("label"), d, c) for d, c in zip(lines, got)]


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


def sdet_run(out, preset, policy):
    """Scripts, modelled seconds, remote share of instruction fetches from
    memory, local text pages and text pages of one SDET-like run; and the
    model and per-vCPU counts, to model other latencies."""
    run_dir = os.path.join(out, "runs", f"sdet-{preset}-{policy}")
    model, marks = nmreport.load(os.path.join(run_dir, "counts"))
    per_vcpu = nmreport.measurements(marks, split=True)
    if len(per_vcpu) != 1:
        raise SystemExit(f"report: {run_dir}: {len(per_vcpu)} measurements")
    with open(os.path.join(run_dir, "output.log")) as f:
        scripts = int(re.search(r"sdet: scripts=(\d+)", f.read()).group(1))
    return model, per_vcpu[0], scripts


def sdet_figures(model, per_vcpu, scripts):
    """Throughput (scripts per modelled second: the busiest vCPU's time)
    and the remote share of instruction fetches from memory."""
    seconds = max(nmreport.figures(model, c)["seconds"]
                  for c in per_vcpu.values())
    i_local = sum(c["i_local"] for c in per_vcpu.values())
    i_remote = sum(c["i_remote"] for c in per_vcpu.values())
    return (scripts / seconds,
            100.0 * i_remote / max(i_local + i_remote, 1))


def sdet(out, summary, f):
    """The SDET-like section of the report, and its figures."""
    runs, thr, ifetch, text = {}, {}, {}, {}
    for preset in SDET_PRESETS:
        for policy in SDET_POLICIES:
            model, per_vcpu, scripts = sdet_run(out, preset, policy)
            runs[preset, policy] = (model, per_vcpu, scripts)
            thr[preset, policy], ifetch[preset, policy] = sdet_figures(
                model, per_vcpu, scripts)
            text[preset, policy] = text_pages(
                os.path.join(out, "runs", f"sdet-{preset}-{policy}"))
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
    local, total = text["modern", "text"]
    summary["sdet_text_local_pct"] = 100.0 * local / max(total, 1)
    summary["sdet_remote_ifetch_pct_text"] = ifetch["modern", "text"]
    summary["sdet_remote_ifetch_pct_none"] = ifetch["modern", "none"]

    f.write("\n## SDET-like throughput\n\n"
            "Concurrent users on every node, each running short scripts of "
            "real dynamically linked programs (bash, coreutils, gawk, sed, "
            "grep) from the ext4 disk, all cached on node 0 first. Scripts "
            "per modelled second (the busiest vCPU's modelled time); "
            "instruction fetches that reach memory, remote share; text "
            "pages of a shell and a program on each node afterwards, "
            "node-local share (pagenodes: move_pages(2)).\n\n"
            "| preset | policy | scripts/s | gain | remote ifetch | local text pages |\n"
            "|---|---|---:|---:|---:|---:|\n")
    for preset in SDET_PRESETS:
        for policy in SDET_POLICIES:
            local, total = text[preset, policy]
            gain = 100.0 * (thr[preset, policy] / thr[preset, "none"] - 1)
            f.write(f"| {preset} | {policy} | {thr[preset, policy]:.1f} | "
                    f"{gain:+.1f}% | {ifetch[preset, policy]:.1f}% | "
                    f"{100.0 * local / max(total, 1):.1f}% "
                    f"({local}/{total}) |\n")
    return runs


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
                model, per_vcpu, scripts = runs["modern", policy]
                m = dict(model)
                m["remote_lat"] = str(round(int(m["local_lat"]) * ratio))
                row.append(f"{sdet_figures(m, per_vcpu, scripts)[0]:.3f}")
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
        if os.path.isdir(os.path.join(out, "runs", "sdet-modern-none")):
            runs = sdet(out, summary, f)
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
