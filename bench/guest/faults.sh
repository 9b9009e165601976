#!/bin/sh
# make bench, fault cost: in the guest, under numa-model.  Faults the 4096
# pages of a file cached on node 0, mapped MAP_PRIVATE, three times per
# case; each run is one numa-model measurement, named in the output.
#   <kernel>-local    on node 0, the originals local (policy none)
#   <kernel>-remote   on node 1, the originals remote (policy none)
# and, on a kernel with replication, under policy private:
#   private-local     on node 0: local originals, nothing to replicate
#   private-create    on node 1, no replica yet: each fault makes one
#   private-replica   on node 1 again: each fault maps an existing replica
set -e
policy=/sys/kernel/mm/replica/policy
file=/mnt/add/faults.data

dd if=/dev/urandom of=$file bs=1M count=16 2>/dev/null
sync
echo 3 > /proc/sys/vm/drop_caches
./faults --cache $file 0
if [ -e $policy ]; then kernel=patched; else kernel=vanilla; fi
for i in 1 2 3; do
	./faults $file 0 $kernel-local
	./faults $file 1 $kernel-remote
done
[ $kernel = patched ] || exit 0
# The file was written a moment ago: replicate it all the same, since
# this measures what a fault costs, not the thrash guard.
settle=$(cat /sys/kernel/mm/replica/settle_ms)
echo 0 > /sys/kernel/mm/replica/settle_ms
echo private > $policy
for i in 1 2 3; do
	./faults $file 0 private-local
done
for i in 1 2 3; do
	# Switching to none drops every replica.
	echo none > $policy
	echo private > $policy
	./faults $file 1 private-create
	./faults $file 1 private-replica
done
echo none > $policy
echo "$settle" > /sys/kernel/mm/replica/settle_ms
