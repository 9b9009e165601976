// SPDX-License-Identifier: GPL-2.0
/*
 * reclaim FILE: how fast replicas give way under memory pressure.  From
 * node 1, map FILE (cached on node 0) MAP_PRIVATE and read it all, which
 * under policy private makes a replica of each page on node 1, and keep
 * it mapped.  Then, between numa-model's begin and end marks, take node
 * 1's memory page by page with anonymous memory bound to it until reclaim
 * has given back as many replicas as were made.  Prints
 *   reclaim: replicas=R returned=N anon_pages=A first_at=F ns=T oom=K
 * R replicas made, N given back by reclaim, A anonymous pages taken, F of
 * them taken before the first replica went (the node's free memory above
 * its watermarks, roughly), T the guest's time, K OOM kills.  The fill
 * stops when every replica went, or at the node's free memory above its
 * min watermark plus the replicas' worth; reclaim may then have found the
 * rest elsewhere on the node (its page cache, slab).  Exits 1 on an OOM
 * kill.
 *
 * Replicas are counted by the replica_alloc and replica_reclaim events,
 * which /proc/vmstat sums exactly: a node's nr_replica_pages lags by what
 * each CPU has yet to fold in, and may never read 0.
 */
#include "node.h"

#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../numa-model/marker.h"

#define CHECK_EVERY	64	/* pages taken between looks at vmstat */

int main(int argc, char **argv)
{
	long long made, gone, returned, oom, start, took;
	long page = sysconf(_SC_PAGESIZE), most, taken, first_at = -1;
	unsigned char *file, *anon;
	struct stat st;
	int fd;

	if (argc != 2) {
		fprintf(stderr, "usage: %s FILE\n", argv[0]);
		return 2;
	}
	fd = open(argv[1], O_RDONLY);
	if (fd < 0 || fstat(fd, &st) || bind_to_node(1) || pin_to_node(1)) {
		perror(argv[1]);
		return 1;
	}
	file = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (file == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	made = vmstat_read("replica_alloc");
	touch_pages(file, st.st_size);
	made = vmstat_read("replica_alloc") - made;
	/*
	 * At most what the node has above its min watermark and the replicas'
	 * worth again: no more than the node can give once they are gone.
	 */
	most = node_free_pages(1) - node_zoneinfo(1, "min") + made;
	anon = mmap(NULL, most * page, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	/* Page by page: a huge page would take 512 at once. */
	if (anon == MAP_FAILED || madvise(anon, most * page, MADV_NOHUGEPAGE)) {
		perror("anonymous memory");
		return 1;
	}
	returned = vmstat_read("replica_reclaim");
	oom = vmstat_read("oom_kill");
	NUMA_MODEL_BEGIN();
	start = now_ns();
	for (taken = 0, gone = 0; taken < most && gone < made; taken++) {
		anon[taken * page] = 1;
		if (taken % CHECK_EVERY)
			continue;
		gone = vmstat_read("replica_reclaim") - returned;
		if (first_at < 0 && gone)
			first_at = taken;
	}
	took = now_ns() - start;
	NUMA_MODEL_END();
	gone = vmstat_read("replica_reclaim") - returned;
	printf("reclaim: replicas=%lld returned=%lld anon_pages=%ld ", made,
	       gone, taken);
	oom = vmstat_read("oom_kill") - oom;
	printf("first_at=%ld ns=%lld oom=%lld\n", first_at, took, oom);
	munmap(anon, most * page);
	munmap(file, st.st_size);
	close(fd);
	return oom != 0;
}
