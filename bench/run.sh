#!/bin/bash
# make bench: run the benchmarks in the guest under the NUMA model, on the
# non-debug kernels, and write the report.
#
# Usage: run.sh <cache-dir> <initramfs> <stage-dir> <out-dir> <numa-model.so>
#               <guest-programs-dir>
# BENCH_RUNS="name ..." boots only those runs again (the others' results
# stay) before the report; BENCH_TIMEOUT bounds each boot (seconds);
# BENCH_PAIRS (default 3) is how many none/policy pairs a paired boot
# measures of each workload, BENCH_BOOTS (default 3) how many boots
# (each with its own page allocator shuffle) measure each preset and
# policy; BENCH_WORKLOADS (default "sdet cc1 perl
# python3 sqlite3 sqlthreads"), BENCH_PRESETS (default "numaq p4 modern altra2s
# cxl") and
# BENCH_POLICIES (default "text private readonly") narrow the paired boots.
# ICOUNT_SHIFT (default 5) is the paired guests' -icount shift
# (boot/qemu.sh; the others count instructions at 0, where ticks are
# rarest): an instruction is 2^shift ns of guest time, and the single TCG
# thread's turns are as much shorter.  At 0, SDET-like's units on numaq ran 124000
# instructions a turn and as few as 2842 or as many as 7913 turns, and
# the pairs' gains followed the turns, not the policy; at 5, 6000 to
# 7000 instructions for every vCPU (bench/numa-model/README.md, Turns).
# BENCH_MODEL="key=value,..." adds to every boot's numa-model arguments
# (a figure of the preset, or llc_scope=local), for a sensitivity run.
# BENCH_PROFILE=1 also writes each boot's profile (numa-model's profile=)
# to runs/<name>/profile, for bench/numa-model/nmprofile.py.  BENCH_JOBS
# (default: the host's CPUs) boots that many guests at once, each in one
# host thread: a guest's clock counts its instructions, so a busy host
# moves only when its disk completions land, which varies the units from
# boot to boot as much with one boot at a time.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cache=$1 initrd=$2 stage=$3 out=$4 plugin=$5 progs=$6
pairs=${BENCH_PAIRS:-3}
boots=${BENCH_BOOTS:-3}
workloads=${BENCH_WORKLOADS:-sdet cc1 perl python3 sqlite3 sqlthreads}
presets=${BENCH_PRESETS:-numaq p4 modern altra2s cxl}
policies=${BENCH_POLICIES:-text private readonly}
jobs=${BENCH_JOBS:-$(nproc)}
paired_shift=${ICOUNT_SHIFT:-5}
icount_shift=0

mkdir -p "$out"
guest=$out/guest-files
rm -rf "$guest"
mkdir -p "$guest"
cp "$progs"/* "$here"/guest/*.sh "$guest/"
# The large-text workloads' programs and inputs; cc1 compiles the model
# and the bench's guest programs.
"$here/stage-workloads.sh" "$guest/wl" -I"$here/numa-model" \
	-I"$here/../selftests" "$here/numa-model/numa-model.c" \
	"$here/guest/reclaim.c" "$here/guest/faults.c" \
	"$here/../selftests/replica_util.c" || exit 1

# The geometry of each preset's guest: the seed's, 4 quads of 4 CPUs on
# the NUMA-Q and 4 nodes of 4 CPUs on the P4 machine, as CPUs that share
# a node's memory and its node cache also share what they fetch from
# remote memory; the single TCG thread takes 4 times as long a unit as
# with one CPU a node.
# On `cxl`, two sockets and the CXL memory expander behind socket 0, a
# node of memory alone, two hops from socket 1, that holds the workloads'
# page cache (paired.sh, PAGE_CACHE_NODE).  SDET-like runs the system's
# programs, which the disk's own files serve, not those of the
# workloads' directory: it does not run there.
preset_layout() {
	case $1 in
	numaq | p4) echo "NODES=4 CPUS_PER_NODE=4 MEM_PER_NODE=512M" ;;
	cxl) echo "NODES=3 MEM_ONLY_NODES=1 CPUS_PER_NODE=2 MEM_PER_NODE=512M" ;;
	*) echo "NODES=2 CPUS_PER_NODE=2 MEM_PER_NODE=512M" ;;
	esac
}

# What the plugin (,key=value) and the guest's command (VAR=value ) are
# told beyond the layout.
preset_model() {
	case $1 in
	cxl) echo ",near=0-2,far=1-2" ;;
	esac
}
preset_guest() {
	case $1 in
	cxl) echo "PAGE_CACHE_NODE=2 " ;;
	esac
}

# One boot: <name> <kernel flavour> <preset> <guest command> [POLICY]
# Every boot runs deterministically: one TCG thread counting instructions
# (boot/qemu.sh does that under MODEL), no address-space randomization,
# no NUMA balancing moving pages between the arms of a pair, the page
# allocator shuffled (page_alloc.shuffle=1: each boot places the pages
# differently, which moves the figures by a few points, so that the
# boots of a cell sample placements), and THP only
# where madvise(2) asks for it: with "always", khugepaged collapses text
# on its own clock, in some measured units and not in others, and the
# units after a collapse make the large replicas again (cc1, numaq: 4314
# replica pages made and 7 THPs collapsed inside one measured unit, pairs
# from +12.8% to +52.0%; with madvise none made, +49.1% to +50.4%).  The
# model has no TLB, so what a THP gives is not measured here anyway.
boot() {
	local name=$1 flavour=$2 preset=$3 cmd=$4 policy=${5:-}
	local dir=$out/runs/$name
	rm -rf "$dir"
	mkdir -p "$dir"
	echo "$(preset_guest "$preset")$cmd" > "$dir/cmd.sh"
	echo "bench: $name ($flavour kernel, $preset preset${policy:+, policy $policy})"
	if ! env $(preset_layout "$preset") ICOUNT_SHIFT=$icount_shift \
	     MODEL="$plugin,out=$dir/counts,preset=$preset$(preset_model "$preset")${BENCH_MODEL:+,$BENCH_MODEL}${BENCH_PROFILE:+,profile=$dir/profile}" \
	     ADD="$guest" \
	     APPEND="norandmaps numa_balancing=disable transparent_hugepage=madvise page_alloc.shuffle=1" \
	     POLICY=$policy TIMEOUT=${BENCH_TIMEOUT:-7200} \
	     "$here/../boot/qemu.sh" run "$cache/build/$flavour" "$initrd" \
	     "$stage" "$dir" "$dir/cmd.sh" >"$dir/run.log" 2>&1; then
		echo "bench: $name failed, see $dir/run.log" >&2
		tail -n 5 "$dir/run.log" >&2
		return 1
	fi
}

# Boot <name> ... (the arguments of boot) if BENCH_RUNS names it, with up
# to $jobs boots at once; rc is 1 once one of them failed.
rc=0
running=0
start() {
	case " ${BENCH_RUNS:-$1} " in
	*" $1 "*) ;;
	*) return 0 ;;
	esac
	if [ $running -ge "$jobs" ]; then
		wait -n || rc=1
		running=$((running - 1))
	fi
	boot "$@" &
	running=$((running + 1))
}

start faults-vanilla vanilla modern "sh faults.sh"
start faults-patched bench modern "sh faults.sh" none
start memory bench modern "sh memory.sh" none
start spanmm-vanilla vanilla modern "sh spanmm.sh"
start spanmm-patched bench modern "sh spanmm.sh" none
icount_shift=$paired_shift
# Paired boots: each boots with the policy under test, as a machine would
# run it, and compares it with none inside the boot; vanilla 6.12 runs
# the same workloads on its own.  Boot b of a cell is named
# paired-<preset>-<policy>.<b>.
for b in $(seq "$boots"); do
	for preset in $presets; do
		wls=$workloads
		[ "$preset" != cxl ] || wls=$(echo " $workloads " |
					      sed 's/ sdet / /; s/^ //; s/ $//')
		[ -n "$wls" ] || continue
		start "paired-$preset-vanilla.$b" vanilla "$preset" \
			"sh paired.sh vanilla $pairs $wls"
		for policy in $policies; do
			start "paired-$preset-$policy.$b" bench "$preset" \
				"sh paired.sh $policy $pairs $wls" \
				"$policy"
		done
	done
done
while [ $running -gt 0 ]; do
	wait -n || rc=1
	running=$((running - 1))
done
[ $rc -eq 0 ] || exit 1
# The report compares each gain with the one of the make bench before.
[ ! -f "$out/summary.tsv" ] || mv "$out/summary.tsv" "$out/summary.prev.tsv"
"$here/report.py" "$out"
