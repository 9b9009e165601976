#!/bin/bash
# make bench: run the benchmarks in the guest under the NUMA model, on the
# non-debug kernels, and write the report.
#
# Usage: run.sh <cache-dir> <initramfs> <stage-dir> <out-dir> <numa-model.so>
#               <guest-programs-dir>
# BENCH_RUNS="name ..." boots only those runs again (the others' results
# stay) before the report; BENCH_TIMEOUT bounds each boot (seconds);
# BENCH_SDET_BOOTS (default 3) is how many times each SDET-like cell boots.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cache=$1 initrd=$2 stage=$3 out=$4 plugin=$5 progs=$6

mkdir -p "$out"
guest=$out/guest-files
rm -rf "$guest"
mkdir -p "$guest"
cp "$progs"/* "$here"/guest/*.sh "$guest/"

# One boot: <name> <kernel flavour> <preset> <guest script> [POLICY]
boot() {
	local name=$1 flavour=$2 preset=$3 script=$4 policy=${5:-}
	local dir=$out/runs/$name
	case " ${BENCH_RUNS:-$name} " in
	*" $name "*) ;;
	*) return 0 ;;
	esac
	rm -rf "$dir"
	mkdir -p "$dir"
	echo "bench: $name ($flavour kernel, $preset preset${policy:+, policy $policy})"
	if ! MODEL="$plugin,out=$dir/counts,preset=$preset" ADD="$guest" \
	     POLICY=$policy TIMEOUT=${BENCH_TIMEOUT:-3600} \
	     "$here/../boot/qemu.sh" run "$cache/build/$flavour" "$initrd" \
	     "$stage" "$dir" "$guest/$script" >"$dir/run.log" 2>&1; then
		echo "bench: $name failed, see $dir/run.log" >&2
		tail -n 5 "$dir/run.log" >&2
		return 1
	fi
}

rc=0
boot faults-vanilla vanilla modern faults.sh || rc=1
boot faults-patched bench modern faults.sh none || rc=1
boot memory bench modern memory.sh none || rc=1
# The SDET-like runs boot with the policy, as a machine would run it.
# What a boot does varies from boot to boot by several percent (which vCPU
# runs what, and when): each cell boots BENCH_SDET_BOOTS times, one boot of
# every cell after another, and the report pools them.
boots=${BENCH_SDET_BOOTS:-3}
[ -n "${BENCH_RUNS:-}" ] || rm -rf "$out"/runs/sdet-*.[0-9]*
for k in $(seq 1 "$boots"); do
	for preset in modern numaq; do
		for policy in none text private; do
			name=sdet-$preset-$policy
			[ "$k" -eq 1 ] || name=$name.$k
			boot "$name" bench "$preset" sdet.sh "$policy" || rc=1
		done
	done
done
[ $rc -eq 0 ] || exit 1
"$here/report.py" "$out"
