# `make run`: NUMA page-cache replication at work.  Runs in the guest (sh).
echo "== The guest: $(ls -d /sys/devices/system/node/node* | wc -l) NUMA nodes"
numactl --hardware | grep -E '^node [0-9]+ (cpus|size)'
policy=$(cat /sys/kernel/mm/replica/policy 2>/dev/null ||
	echo "none (this kernel has no CONFIG_MM_REPLICA)")
echo "== Replication policy: $policy"
echo

# A shell workload from the ext4 disk: bash, coreutils, gawk, glibc.
workload='seq 1 20000 | sort -rn | gawk "{ s += \$1 } END { printf \"sum %d, \", s }"
	sha256sum /usr/bin/bash | cut -c1-16
	sleep 3 & wait'

run_on() {
	numactl --cpunodebind="$1" --membind="$1" bash -c "$workload" &
	pid=$!
	# Let it reach its sleep, then show where its text lives.
	sleep 2
	pagenodes "$pid" $(pidof sleep)
	wait "$pid"
}

counters() {
	echo 1 > /proc/sys/vm/stat_refresh
	for n in /sys/devices/system/node/node*; do
		printf '  %s: nr_replica_pages %s\n' "${n##*/}" \
			"$(grep nr_replica_pages "$n/vmstat" | cut -d' ' -f2)"
	done
	grep -E '^replica_' /proc/vmstat | sed 's/^/  /'
}

# This shell and numactl run on node 0 too, so that nothing is cached on
# node 1 before the first run.
taskset -p -c "$(cat /sys/devices/system/node/node0/cpulist)" $$ > /dev/null
echo 3 > /proc/sys/vm/drop_caches
echo "== The workload on node 0: the first run caches programs and libraries there"
run_on 0 > /tmp/run0 2>&1; cat /tmp/run0
echo
echo "== The same workload on node 1"
run_on 1 > /tmp/run1 2>&1; cat /tmp/run1
echo
echo "== Replication counters"
counters
echo

# The same workload from XFS, which caches files in large folios: they are
# replicated whole.  Its programs and libraries are copied there, then
# written back and dropped, so that the run on node 0 caches them.
if mountpoint -q /xfs 2>/dev/null || grep -q ' /xfs ' /proc/mounts; then
	mkdir -p /xfs/demo/bin /xfs/demo/lib
	cp /usr/bin/* /xfs/demo/bin/
	cp /usr/lib/x86_64-linux-gnu/* /xfs/demo/lib/
	sync
	echo 3 > /proc/sys/vm/drop_caches
	# New files: the thrash guard replicates them once settle_ms passed.
	settle=$(cat /sys/kernel/mm/replica/settle_ms 2>/dev/null || echo 0)
	sleep $((settle / 1000 + 1))
	before=$(grep -E '^replica_alloc(_large)? ' /proc/vmstat | tr '\n' ' ')
	export PATH=/xfs/demo/bin:$PATH LD_LIBRARY_PATH=/xfs/demo/lib
	echo "== The workload from XFS on node 0"
	run_on 0 > /tmp/run0 2>&1; cat /tmp/run0
	echo
	echo "== The workload from XFS on node 1: large folios, replicated whole"
	run_on 1 > /tmp/run1 2>&1; cat /tmp/run1
	unset LD_LIBRARY_PATH
	echo
	echo "== Replication counters (before the XFS runs: $before)"
	counters
fi
