#!/bin/bash
# Validate the NUMA model before anything is measured with it: a stream
# through memory of the reader's own node must be counted local (at most
# 1% remote), through the other node's memory remote (at least 99%); and
# lines that a writer on node 1 wrote last must reach a reader on node 0
# as remote transfers of dirty lines (16 rounds of 64 KiB: at least 99%
# of the lines read), and the writer's stores invalidate the reader's
# copies.  Two node caches of remote lines, of 8 and 128 MiB, must serve
# none and all of the remote stream (its reader filled them when it
# wrote the buffer).  Node 2 has memory and no CPU, near node 0 (near=0-2)
# and two hops from node 1 (far=1-2): a stream through it from node 0
# must be counted remote and near, from node 1 remote and far (at least
# 99%, and none of the other kind).  The profile of
# each measurement must add up to the counts of the vCPU that marked it.
#
# Usage: validate.sh <build-dir> <initramfs> <stage-dir> <out-dir>
#                    <numa-model.so> <dir with the guest's stream>
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$1 initrd=$2 stage=$3 out=$4 plugin=$5 guest=$6

rm -rf "$out"
mkdir -p "$out"
printf '%s\n' './stream 0 0 64' './stream 0 1 64' './stream -w 0 1 64 16' \
	'./stream 0 2 64' './stream 1 2 64' > "$out/stream.sh"
MODEL="$plugin,out=$out/counts,profile=$out/profile,nc_kb=8192:131072,nc_ways=8,nc_scope=remote,near=0-2,far=1-2" \
	ADD="$guest" NODES=3 MEM_ONLY_NODES=1 \
	"$here/../../boot/qemu.sh" run "$build" "$initrd" "$stage" \
	"$out/guest" "$out/stream.sh" >"$out/run.log" 2>&1 ||
	{ echo "numa-model: the validation guest failed, see $out/run.log"; exit 1; }
rc=0
"$here/nmreport.py" "$out/counts" --validate || rc=1
"$here/nmprofile.py" "$out/profile" --check "$out/counts" || rc=1
exit $rc
