#!/bin/sh
# make bench, collapse cost and replica memory: in the guest, under
# numa-model, policy private, on a kernel with replication.
#  - collapse: the first open for write of a 16 MiB file cached on node 0
#    while node 1 maps R replicas of it, for several R, three times each.
#  - reclaim: node 1 maps 64 MiB of replicas, then fills up with
#    anonymous memory until they are gone or it is full; three times.
set -e
policy=/sys/kernel/mm/replica/policy
# The files are written here, a moment before they are replicated: the
# thrash guard, which would wait for them to settle, is not measured.
settle=$(cat /sys/kernel/mm/replica/settle_ms)
echo 0 > /sys/kernel/mm/replica/settle_ms
small=/mnt/add/collapse.data
big=/mnt/add/reclaim.data

dd if=/dev/urandom of=$small bs=1M count=16 2>/dev/null
dd if=/dev/urandom of=$big bs=1M count=64 2>/dev/null
sync
echo 3 > /proc/sys/vm/drop_caches
./faults --cache $small 0
./faults --cache $big 0
for pages in 0 1 16 256 4096; do
	for i in 1 2 3; do
		# Switching to none drops every replica.
		echo none > $policy
		echo private > $policy
		./collapse $small $pages
	done
done
for i in 1 2 3; do
	echo none > $policy
	# The originals may have gone with the last run's pressure.
	./faults --cache $big 0
	echo private > $policy
	./reclaim $big
done
echo none > $policy
echo "$settle" > /sys/kernel/mm/replica/settle_ms
