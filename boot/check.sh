#!/bin/bash
# make check: boot the guest once per line of boot/check-boots, run that
# boot's selftests, then judge all boots together.  The last line is the
# total: "N passed, N failed[, N skipped]".
#
# Usage: check.sh <build-dir> <initramfs> <stage-dir> <out-dir> [boots-file]
# (make soak gives boot/soak-boots)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$1 initrd=$2 stage=$3 out=$4 boots=${5:-$here/check-boots}

rm -rf "$out"
mkdir -p "$out"
runs=()
rc=0
while IFS=$'\t' read -r policy tests params; do
	case $policy in ''|'#'*) continue ;; esac
	echo "# boot: replica_policy=$policy${params:+ $params}, selftests: $tests"
	case $policy in
	*[!a-z]*) echo "check: bad line in $boots: $policy $tests" >&2
		  exit 2 ;;
	esac
	# One directory per boot: out/<policy>, out/<policy>.2, ...
	dir=$out/$policy
	n=1
	while [ -e "$dir" ]; do
		n=$((n + 1))
		dir=$out/$policy.$n
	done
	# scratch=<fs> is for the guest's runner, nodes= and cpus= (per
	# node) shape the guest, the rest is for the kernel.
	scratch=ext4 kparams= nodes=${NODES:-2} cpus=${CPUS_PER_NODE:-2}
	for p in $params; do
		case $p in
		scratch=*) scratch=${p#scratch=} ;;
		nodes=*) nodes=${p#nodes=} ;;
		cpus=*) cpus=${p#cpus=} ;;
		*) kparams="${kparams:+$kparams }$p" ;;
		esac
	done
	NODES=$nodes CPUS_PER_NODE=$cpus \
	POLICY=$policy TESTS=$tests SCRATCH_FS=$scratch \
		APPEND="${APPEND:+$APPEND }$kparams" \
		"$here/qemu.sh" check "$build" "$initrd" "$stage" "$dir" || rc=1
	runs+=("$dir/output.log" "$(grep -c . "$dir/tests.list")")
done < "$boots"
# A kernel with our KUnit tests runs each suite at every boot.
kunit=()
if grep -qx CONFIG_MM_REPLICA_KUNIT_TEST=y "$build/.config" 2>/dev/null; then
	kunit=(--kunit-suites "$(grep -rl --include='*-kunit.h' \
		'^kunit_test_suites(' "$here/../mm-replica" | wc -l)")
fi
"$here/verdict.py" tap "${kunit[@]}" "${runs[@]}" || rc=1
exit $rc
