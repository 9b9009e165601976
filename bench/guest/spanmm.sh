#!/bin/sh
# make bench, what a process whose threads span two nodes pays to change
# its mappings: in the guest, under numa-model.  spanmm's rounds of
# mprotect and munmap of a 4 MiB file mapped as text (cached on node 0)
# and of 4 MiB of anonymous memory, 16 rounds each, every round one
# numa-model measurement named in the output:
#   <kernel>-file, <kernel>-anon   policy none (or vanilla 6.12)
# and, on a kernel with replication, under policy text:
#   text-file, text-anon
# A process on two nodes maps the page cache itself today, so text
# changes nothing here yet: these are the figures per-node page tables
# must keep within 1.5 times (Documentation/mm/replication.rst).
set -e
policy=/sys/kernel/mm/replica/policy
file=/mnt/add/spanmm.data

dd if=/dev/urandom of=$file bs=1M count=4 2>/dev/null
sync
echo 3 > /proc/sys/vm/drop_caches
./faults --cache $file 0
if [ -e $policy ]; then kernel=patched; else kernel=vanilla; fi
./spanmm $file $kernel-file 16
./spanmm anon $kernel-anon 16
[ $kernel = patched ] || exit 0
# The file was written a moment ago: replicate it all the same.
settle=$(cat /sys/kernel/mm/replica/settle_ms)
echo 0 > /sys/kernel/mm/replica/settle_ms
echo text > $policy
./spanmm $file text-file 16
./spanmm anon text-anon 16
echo none > $policy
echo "$settle" > /sys/kernel/mm/replica/settle_ms
