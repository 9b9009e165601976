#!/bin/sh
# make bench, paired comparisons: in the guest, under numa-model.
#
#   paired.sh <policy> <pairs> <workload>...
#
# For each workload: every file of every workload (./wl) is read on node
# 0 first, under policy none, then a unit of the workload runs on node
# 0's CPUs (which reads the system's files it uses), as a machine's
# shared files are wherever they were first read; filenodes then checks,
# from numa_maps, that every page of those files is on node 0.  With
# PAGE_CACHE_NODE=N, both read into node N's memory instead (a CXL
# memory node without CPUs, where memory tiering puts the page cache it
# demotes), and every page of the workloads' files must be there (the
# system's, the C library's among them, stay where the system read
# them).  Then
# <pairs> pairs of measurements, one under none and one under <policy>,
# switched in sysfs, in alternating order (none first in odd pairs,
# <policy> first in even ones).  A measurement is one unit of the
# workload: the same jobs, one per CPU of every node, all at once (for
# sqlthreads, one job with a thread on each of those CPUs).  Each
# arm runs the same unit unmeasured first, so that both measure warm
# caches whatever the order; the policy's runs until one makes no replica
# (up to 4 times: the read path replicates a page only once it has been
# read often enough), so that the measurement sees the policy's steady
# state (switching to none frees the replicas).  On a kernel without
# replication, <policy> is "vanilla": one unmeasured unit, then the
# measured one.
#
# The jobs start first and wait on a FIFO; the measurement begins once
# they are all waiting and ends when the last one ends, so that starting
# them, and the launcher, stay outside it.  Each measurement is named in
# the output: "paired: workload=W arm=POLICY pair=N".
#
# Workloads (programs and inputs from stage-workloads.sh, in ./wl):
#   sdet     SDET_SCRIPTS (1) short shell scripts of coreutils, gawk, sed,
#            grep a CPU
#   cc1      gcc's compiler proper at -O1 on one preprocessed C source a
#            CPU: CPU k of pair p compiles source (k + p) mod the number
#            of sources, so that over the pairs every CPU compiles each,
#            and both arms of a pair the same
#   perl     PERL_RUNS (2) short perl runs a CPU (wl/bench.pl)
#   python3  PYTHON_RUNS (2) short python3 runs a CPU (-I -S, wl/bench.py)
#   sqlite3  SQLITE_RUNS (1) runs of aggregate, index and sort queries
#            (wl/queries.sql) on a 50000-row database a CPU: read(2) of
#            its file
#   sqlthreads  the same in one process (wl/bin/sqlthreads), a thread on
#            each CPU of every node: one page table for threads that
#            span the nodes
set -e
policy=$1
pairs=$2
shift 2
sysfs=/sys/kernel/mm/replica/policy
wl=$(pwd)/wl
export LD_LIBRARY_PATH=$wl/lib
nodes=$(ls -d /sys/devices/system/node/node[0-9]* | wc -l)
cache_node=${PAGE_CACHE_NODE:-0}
# Where the jobs' memory goes: while the files are first read, the node
# that is to cache them.
mem_bind=

if [ "$policy" = vanilla ]; then
	[ ! -e $sysfs ] || { echo "paired: vanilla, but $sysfs exists" >&2; exit 1; }
else
	[ -e $sysfs ] || { echo "paired: no $sysfs on this kernel" >&2; exit 1; }
fi

# The launcher runs on node 0, where every file is cached first unless
# PAGE_CACHE_NODE says otherwise.
/bin/taskset -p -c "$(cat /sys/devices/system/node/node0/cpulist)" $$ \
	>/dev/null

set_policy() {
	[ "$1" = vanilla ] || echo "$1" > $sysfs
}

# The CPUs of node $1, one per word; none for a node of memory alone.
node_cpus() {
	for range in $(tr ',' ' ' < /sys/devices/system/node/node$1/cpulist); do
		seq ${range%-*} ${range#*-}
	done
}

all_cpus() {
	n=0
	while [ $n -lt "$nodes" ]; do
		node_cpus $n
		n=$((n + 1))
	done
}

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

# The job of workload $1 on the $2-th CPU: a bash command line.
job() {
	case $1 in
	sdet)
		echo "for i in \$(seq ${SDET_SCRIPTS:-1}); do" \
		     "bash /tmp/sdet-script; done" ;;
	cc1)
		set -- $(ls $wl/src/*.i | wc -l) "$2"
		src=$(ls $wl/src/*.i |
		      sed -n "$((($2 + ${pair:-0}) % $1 + 1))p")
		# The driver passes -fpreprocessed for a .i; without it cc1
		# looks for headers the guest lacks and stops with an error.
		echo "$wl/bin/cc1 -fpreprocessed -quiet -O1 $src -o /dev/null" ;;
	perl)
		echo "for i in \$(seq ${PERL_RUNS:-2}); do" \
		     "$wl/bin/perl $wl/bench.pl > /dev/null; done" ;;
	python3)
		echo "for i in \$(seq ${PYTHON_RUNS:-2}); do" \
		     "$wl/py/bin/python3.11 -I -S $wl/bench.py > /dev/null; done" ;;
	sqlite3)
		echo "for i in \$(seq ${SQLITE_RUNS:-1}); do" \
		     "$wl/bin/sqlite3 -readonly $wl/bench.db < $wl/queries.sql" \
		     "> /dev/null; done" ;;
	sqlthreads)
		echo "$wl/bin/sqlthreads $wl/bench.db $wl/queries.sql" \
		     "${SQLITE_RUNS:-1}" $unit_cpus ;;
	*)
		echo "paired: no workload $1" >&2
		return 1 ;;
	esac
}

# Replica pages made and THPs collapsed so far: a measurement of the
# policy's steady state makes none of either; and pages the thrash guard
# kept from being replicated, none for files installed before the boot.
made_counts() {
	awk '/^replica_alloc / { r = $2 } /^thp_collapse_alloc / { t = $2 }
	     /^replica_settle / { s = $2 }
	     END { print r + 0, t + 0, s + 0 }' /proc/vmstat
}

# One unit of workload $1 on the CPUs $2 (all when empty); measured when
# $3 names the measurement.
unit() {
	cpus=${2:-$(all_cpus)}
	# A threaded workload is one job, started on the first CPU, whose
	# threads take every CPU of the unit.
	unit_cpus=$(echo $cpus)
	case $1 in
	sqlthreads) cpus=${unit_cpus%% *} ;;
	esac
	rm -f /tmp/paired-go
	mkfifo /tmp/paired-go
	# Held open for reading and writing, so that no open of it blocks.
	exec 3<>/tmp/paired-go
	k=0
	pids=
	for cpu in $cpus; do
		$mem_bind taskset -c "$cpu" bash -c \
			"read -r go < /tmp/paired-go; $(job "$1" $k)" &
		pids="$pids $!"
		k=$((k + 1))
	done
	# Idle time costs nothing under -icount sleep=off: every job is
	# waiting on the FIFO by the end of it.
	sleep 1
	made_before=$(made_counts)
	[ -z "$3" ] || ./mark begin 0
	for cpu in $cpus; do
		echo go >&3
	done
	# A job that fails did not do the unit's work: its cycles mean
	# nothing, so the run fails.
	failed=0
	for pid in $pids; do
		wait "$pid" || failed=$((failed + 1))
	done
	[ -z "$3" ] || ./mark end 0
	made_during=$(echo "$made_before $(made_counts)" |
		awk '{ print "replicas_made=" $4 - $1 " thp_collapsed=" $5 - $2 \
			     " settle_held=" $6 - $3 }')
	exec 3>&-
	if [ $failed -ne 0 ]; then
		echo "paired: $failed of $k jobs of $1 failed" >&2
		exit 1
	fi
	[ -z "$3" ] || echo "$3"
}

# Unmeasured units of workload $1 until one makes no replica.
warm() {
	w=0
	while [ $w -lt 4 ]; do
		unit "$1"
		w=$((w + 1))
		case $made_during in
		"replicas_made=0 "*) return 0 ;;
		esac
	done
}

# The programs and libraries of the SDET-like script, for filenodes: the
# programs where bash (which runs the script) finds them.
sdet_files() {
	{
		bash -c 'type -P bash ls sort tail cut grep seq gawk sed tr \
			 uniq wc md5sum date uname rm'
		echo /lib/x86_64-linux-gnu/libc.so.6
		echo /lib64/ld-linux-x86-64.so.2
	} | xargs -n 1 readlink -f
}

for workload in "$@"; do
	job "$workload" 0 > /dev/null
	[ "$policy" = vanilla ] || set_policy none
	sync
	echo 3 > /proc/sys/vm/drop_caches
	pair=0
	# On node 0, as the launcher is, or in the memory of
	# PAGE_CACHE_NODE.
	[ -z "${PAGE_CACHE_NODE:-}" ] ||
		mem_bind="numactl --membind=$cache_node"
	find "$wl" -type f | $mem_bind xargs cat > /dev/null
	unit "$workload" "$(node_cpus 0)"
	mem_bind=
	# A page elsewhere would make the pairs unfair: the run stops.
	{ find "$wl" -type f; [ "$workload" != sdet ] || sdet_files; } \
		> /tmp/paired-files
	rc=0
	./filenodes "$cache_node" < /tmp/paired-files > /tmp/paired-cache ||
		rc=$?
	sed 's/^/paired-cache: /' /tmp/paired-cache
	[ $rc -eq 0 ] || { echo "paired: $workload's files are not all on node $cache_node" >&2; exit 1; }
	p=1
	while [ $p -le "$pairs" ]; do
		pair=$p
		if [ "$policy" = vanilla ]; then
			arms=vanilla
		elif [ $((p % 2)) -eq 1 ]; then
			arms="none $policy"
		else
			arms="$policy none"
		fi
		for arm in $arms; do
			set_policy "$arm"
			case $arm in
			none | vanilla) unit "$workload" ;;
			*) warm "$workload" ;;
			esac
			unit "$workload" "" \
				"paired: workload=$workload arm=$arm pair=$p"
			awk -v made="$made_during" \
			    '/^nr_replica_pages / { r = $2 }
			     /^nr_file_pages / { f = $2 }
			     END { print "paired-memory: replica_pages=" r + 0 \
				   " file_pages=" f " " made }' /proc/vmstat
		done
		p=$((p + 1))
	done
	[ "$workload" = sdet ] && [ "$policy" != vanilla ] || continue
	# Where the text of a shell and of a program running on each node
	# lives, under the policy.
	set_policy "$policy"
	n=0
	while [ $n -lt "$nodes" ]; do
		if [ -z "$(node_cpus $n)" ]; then
			n=$((n + 1))
			continue
		fi
		numactl --cpunodebind=$n bash -c 'sleep 2; true' &
		sleep 1
		echo "paired-text: node $n"
		pagenodes $! $(pidof sleep)
		wait
		n=$((n + 1))
	done
done
