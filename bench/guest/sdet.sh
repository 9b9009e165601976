#!/bin/sh
# make bench, SDET-like throughput: in the guest, under numa-model.
# SDET_WORKERS users per CPU on every node (default 2), each running
# SDET_SCRIPTS short shell scripts (default 8) of real dynamically linked
# programs from the ext4 disk, all at once; one numa-model measurement
# spans them.  The programs are cached on node 0 first, as a machine's
# shared binaries are wherever they were first read.  Then, for each node,
# where the text pages of a shell and a program running there live.
set -e
workers=${SDET_WORKERS:-2}
scripts=${SDET_SCRIPTS:-8}
nodes=$(ls -d /sys/devices/system/node/node[0-9]* | wc -l)

# Whatever this script starts reads its files on node 0, numactl's own
# libc and loader included, before any run: a machine's shared binaries
# are cached wherever they were first read.
/bin/taskset -p -c "$(cat /sys/devices/system/node/node0/cpulist)" $$ \
	>/dev/null

cat > /tmp/sdet-script <<'SCRIPT'
f=/tmp/sdet.$$
ls -l /usr/bin /usr/lib/x86_64-linux-gnu > $f
sort -k5 -n $f | tail -n 20 | cut -c1-40 > /dev/null
grep -c x $f > /dev/null
seq 1 500 | gawk '{ s += $1 } END { print s }' > /dev/null
sed 's/a/b/g' $f | tr a-z A-Z | uniq | wc -l > /dev/null
md5sum $f | cut -c1-8 > /dev/null
date > /dev/null
uname -a > /dev/null
rm -f $f
SCRIPT

sync
echo 3 > /proc/sys/vm/drop_caches
numactl --cpunodebind=0 --membind=0 bash /tmp/sdet-script

cat > /tmp/sdet-user <<USER
i=0
while [ \$i -lt $scripts ]; do
	bash /tmp/sdet-script
	i=\$((i + 1))
done
USER

# The CPUs of node $1, one per word.
node_cpus() {
	for range in $(tr ',' ' ' < /sys/devices/system/node/node$1/cpulist); do
		seq ${range%-*} ${range#*-}
	done
}

./mark begin 0
n=0
while [ $n -lt "$nodes" ]; do
	for cpu in $(node_cpus $n); do
		w=0
		while [ $w -lt "$workers" ]; do
			# bash from the disk, not the initramfs's busybox
			# sh: the initramfs is no disk file system, so its
			# text stays on node 0 under every policy.
			taskset -c "$cpu" bash /tmp/sdet-user &
			w=$((w + 1))
		done
	done
	n=$((n + 1))
done
wait
./mark end 0
cpus=$(grep -c ^processor /proc/cpuinfo)
echo "sdet: scripts=$((cpus * workers * scripts)) nodes=$nodes"
# What replication cost in memory: replica pages against the page cache.
awk '/^nr_replica_pages / { r = $2 } /^nr_file_pages / { f = $2 }
	END { print "sdet-memory: replica_pages=" r + 0 " file_pages=" f }' \
	/proc/vmstat

# Where the text of a shell and of a program running on each node lives.
n=0
while [ $n -lt "$nodes" ]; do
	numactl --cpunodebind=$n bash -c 'sleep 2; true' &
	sleep 1
	echo "sdet-text: node $n"
	pagenodes $! $(pidof sleep)
	wait
	n=$((n + 1))
done
