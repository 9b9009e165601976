#!/bin/bash
# Boot the NUMA guest once and judge the run.
#
# Usage: qemu.sh <mode> <build-dir> <initramfs> <stage-dir> <out-dir> [run-file]
#   mode check: run the selftests on the stage and print the TAP stream;
#               exit non-zero if a test failed or the run went wrong.
#   mode run:   run <run-file> (sh) in /mnt/add, exit with its status.
# Environment: NODES CPUS_PER_NODE MEM_PER_NODE POLICY APPEND TIMEOUT ADD
#              MEM_ONLY_NODES (default 0: the last that many of the NODES
#              have memory and no CPU, as a CXL memory expander)
#              TEST_TIMEOUT QEMU_OPTS TESTS (check mode: which selftests,
#              "name [args]; ...", default all) SCRATCH_FS (check mode:
#              ext4, the default, or xfs: the filesystem the selftests
#              make their files on)
#              MODEL=<numa-model.so>,out=<file>[,key=value...]: run under
#              the NUMA model plugin (bench/numa-model), told the layout,
#              with the guest's RAM in files it can find; ICOUNT_SHIFT
#              (default 0) is then QEMU's -icount shift (see below)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)

mode=$1 build=$2 initrd=$3 stage=$4 out=$5 runfile=${6:-}
nodes=${NODES:-2}
cpn=${CPUS_PER_NODE:-2}
mem_only=${MEM_ONLY_NODES:-0}
mem=${MEM_PER_NODE:-512M}
timeout=${TIMEOUT:-900}
kernel=$build/arch/x86/boot/bzImage

case $mem in
*[Gg]) mem_mb=$((${mem%[Gg]} * 1024)) ;;
*[Mm]) mem_mb=${mem%[Mm]} ;;
*[0-9]) mem_mb=$mem ;;
*) echo "qemu: MEM_PER_NODE=$mem: use a size like 512M or 1G" >&2; exit 2 ;;
esac
case "$nodes$cpn$mem_mb$mem_only" in
*[!0-9]*) echo "qemu: NODES, CPUS_PER_NODE, MEM_ONLY_NODES must be numbers" >&2; exit 2 ;;
esac
[ "$nodes" -ge 1 ] && [ "$cpn" -ge 1 ] && [ "$mem_mb" -ge 128 ] &&
	[ "$mem_only" -lt "$nodes" ] ||
	{ echo "qemu: need NODES>=1, CPUS_PER_NODE>=1, MEM_PER_NODE>=128M, MEM_ONLY_NODES<NODES" >&2; exit 2; }
cpu_nodes=$((nodes - mem_only))
[ -f "$kernel" ] || { echo "qemu: no kernel at $kernel" >&2; exit 2; }

mkdir -p "$out"
console=$out/console.log
output=$out/output.log
rm -f "$console" "$output"

# The run's environment and command, read by the guest's /init.
{
	echo "GUEST_MODE=$mode"
	echo "export REPLICA_EXPECT_NODES=$nodes"
	echo "export REPLICA_EXPECT_MEM_ONLY_NODES=$mem_only"
	echo "export REPLICA_EXPECT_CPUS_PER_NODE=$cpn"
	echo "export REPLICA_EXPECT_MEM_PER_NODE_MB=$mem_mb"
	echo "export TEST_TIMEOUT=${TEST_TIMEOUT:-300}"
	[ -n "${POLICY:-}" ] && echo "export REPLICA_BOOT_POLICY=$POLICY"
	echo "export REPLICA_SCRATCH_FS=${SCRATCH_FS:-ext4}"
} > "$out/env"
if [ -n "$runfile" ]; then
	cp "$runfile" "$out/run.sh"
else
	: > "$out/run.sh"
fi
if [ -n "${TESTS:-}" ] && [ "$TESTS" != all ]; then
	# "name [args]; name [args]; ..."
	echo "$TESTS" | tr ';' '\n' | sed 's/^[[:space:]]*//; s/[[:space:]]*$//' |
	while read -r t; do
		[ -n "$t" ] || continue
		grep -qx "${t%% *}" "$stage/guest/tests.list" ||
			{ echo "qemu: no selftest '${t%% *}'" >&2; exit 2; }
		echo "$t"
	done > "$out/tests.list" || exit 2
else
	cp "$stage/guest/tests.list" "$out/tests.list"
fi
"$here/mkdisk.sh" xfs "$out/xfs.img" || exit 2
"$here/mkdisk.sh" image "$stage" "$out/disk.img" "$out/env" "$out/run.sh" \
	"$out/tests.list" "${ADD:-}" || exit 2

numa=()
model=()
accel=(-accel tcg,thread=multi)
if [ -n "${MODEL:-}" ]; then
	# Deterministic runs under the model: one thread runs every vCPU in
	# turn, and the guest's clock counts instructions (shift=0: 1 ns
	# each), not host time, so that timer ticks and time slices fall on
	# the same instructions whatever the host does; sleep=off skips idle
	# time at once.  The plugin's caches want one thread too.  That
	# thread gives each vCPU in turn the instructions up to the next
	# timer deadline, divided by the vCPUs: a larger ICOUNT_SHIFT
	# (2^shift ns an instruction) brings deadlines closer in
	# instructions and makes the turns shorter (bench/numa-model).
	icount_shift=${ICOUNT_SHIFT:-0}
	case $icount_shift in
	[0-9]) ;;
	*) echo "qemu: ICOUNT_SHIFT=$icount_shift: use 0 to 9" >&2; exit 2 ;;
	esac
	accel=(-accel tcg,thread=single
	       -icount "shift=$icount_shift,sleep=off,align=off")
	# The plugin finds which node a host address of RAM belongs to by
	# the name of the file QEMU mapped there.
	ramdir=$(mktemp -d /dev/shm/numa-model.XXXXXX) || exit 2
	trap 'rm -rf "$ramdir"' EXIT
	model=(-plugin "$MODEL,ram=$ramdir/node,nodes=$nodes,cpu_nodes=$cpu_nodes,cpus_per_node=$cpn,node_mb=$mem_mb,icount_shift=$icount_shift")
fi
for ((n = 0; n < nodes; n++)); do
	if [ -n "${MODEL:-}" ]; then
		numa+=(-object "memory-backend-file,id=m$n,size=${mem_mb}M,mem-path=$ramdir/node$n,share=on")
	else
		numa+=(-object "memory-backend-ram,id=m$n,size=${mem_mb}M")
	fi
	if [ "$n" -lt "$cpu_nodes" ]; then
		numa+=(-numa "node,nodeid=$n,cpus=$((n * cpn))-$((n * cpn + cpn - 1)),memdev=m$n")
	else
		numa+=(-numa "node,nodeid=$n,memdev=m$n")
	fi
done
cmdline="console=ttyS0,115200 ignore_loglevel panic=-1 rdinit=/init"
[ -n "${POLICY:-}" ] && cmdline+=" replica_policy=$POLICY"
[ -n "${APPEND:-}" ] && cmdline+=" $APPEND"

start=$(date +%s)
# la57=off: with 5-level paging, 6.12's identify_cpu() clears the boot
# CPU's feature words (LA57 among them) with interrupts on; KASAN in an
# interrupt taken in that window sizes the address space from the
# cleared LA57 bit and reports a wild access on the direct map.  The
# slow plugin-instrumented boot hit that once (timer IRQ at 0.007 s).
# Four-level paging has no such window, and is what servers run.
# ttyS0 carries the kernel console to a file; ttyS1 carries the guest's
# output to us.  The guest ends its output with an exit marker.
timeout --foreground -k 10 "$timeout" \
	qemu-system-x86_64 -machine q35 "${accel[@]}" -cpu max,la57=off \
	-m $((nodes * mem_mb)) "${numa[@]}" \
	-smp "$((cpu_nodes * cpn)),sockets=$cpu_nodes,cores=$cpn,threads=1" \
	-kernel "$kernel" -initrd "$initrd" -append "$cmdline" \
	-drive "file=$out/disk.img,format=raw,if=virtio,cache=unsafe" \
	-drive "file=$out/xfs.img,format=raw,if=virtio,cache=unsafe" \
	-display none -vga none -nic none -monitor none -no-reboot \
	"${model[@]}" ${QEMU_OPTS:-} \
	-serial "file:$console" -serial stdio </dev/null |
	tr -d '\r' | tee "$output" | grep --line-buffered -v '^@@NUMA-REPLICA-'
qrc=${PIPESTATUS[0]}
elapsed=$(($(date +%s) - start))

# The first failure found decides the exit status.
verdict=0
fail_with() { [ "$verdict" -ne 0 ] || verdict=$1; }
if [ "$qrc" -eq 124 ] || [ "$qrc" -eq 137 ]; then
	echo "qemu: the guest did not finish within ${timeout}s; console tail:"
	tail -n 30 "$console" | sed 's/^/  console: /'
	fail_with 124
elif [ "$qrc" -ne 0 ]; then
	echo "qemu: qemu-system-x86_64 exited with $qrc"
	fail_with 125
fi

"$here/verdict.py" splats "$console" || fail_with 125
"$here/verdict.py" version "$console" "$build" || fail_with 125

rc=$(sed -n 's/^@@NUMA-REPLICA-EXIT \([0-9]*\)@@$/\1/p' "$output" | tail -n 1)
if [ -z "$rc" ]; then
	[ "$verdict" -ne 0 ] || echo "qemu: the guest ended without reporting an exit status"
	rc=125
fi
echo "qemu: guest ran ${elapsed}s; console log $console" >&2

# check mode: the caller counts the TAP results (verdict.py tap).
if [ "$mode" = check ]; then
	left=$(sed -n 's/^@@NUMA-REPLICA-REPLICAS-AFTER-UMOUNT \([0-9-]*\)@@$/\1/p' \
		"$output")
	if [ -n "$left" ] && [ "$left" != 0 ]; then
		echo "qemu: $left replica pages left after unmounting the disk"
		fail_with 1
	fi
	fail_with "$rc"
	exit "$verdict"
fi
# RUN's own status, unless it succeeded on a kernel that splatted.
[ "$rc" -eq 0 ] && exit "$verdict"
exit "$rc"
