// SPDX-License-Identifier: GPL-2.0
/*
 * collapse FILE PAGES: the cost of the first open for write of a file
 * whose replicas are mapped.  From node 1, map the first PAGES pages of
 * FILE (cached on node 0) MAP_PRIVATE and read them, which under policy
 * private makes a replica of each; then, between numa-model's begin and
 * end marks, open FILE for write, which must take every replica out of
 * the page tables and free it before it returns.  Prints
 *   collapse: pages=PAGES replicas=R collapsed=C ns=T
 * R the replicas the reads made, C the replicas the open collapsed, T the
 * guest's time for the open (TCG time: the model's instructions are the
 * figure).  PAGES 0 measures an open for write with nothing to collapse.
 */
#include "node.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../numa-model/marker.h"

int main(int argc, char **argv)
{
	long page = sysconf(_SC_PAGESIZE);
	long long made, collapsed, start, took;
	unsigned char *p = NULL;
	size_t pages;
	int fd, wfd;

	if (argc != 3) {
		fprintf(stderr, "usage: %s FILE PAGES\n", argv[0]);
		return 2;
	}
	pages = strtoul(argv[2], NULL, 0);
	if (pin_to_node(1)) {
		perror("node 1");
		return 1;
	}
	fd = open(argv[1], O_RDONLY);
	if (fd < 0) {
		perror(argv[1]);
		return 1;
	}
	made = vmstat_read("replica_alloc");
	if (pages) {
		p = mmap(NULL, pages * page, PROT_READ, MAP_PRIVATE, fd, 0);
		if (p == MAP_FAILED) {
			perror("mmap");
			return 1;
		}
		touch_pages(p, pages * page);
	}
	made = vmstat_read("replica_alloc") - made;
	collapsed = vmstat_read("replica_collapse");
	NUMA_MODEL_BEGIN();
	start = now_ns();
	wfd = open(argv[1], O_WRONLY);
	took = now_ns() - start;
	NUMA_MODEL_END();
	if (wfd < 0) {
		perror(argv[1]);
		return 1;
	}
	collapsed = vmstat_read("replica_collapse") - collapsed;
	printf("collapse: pages=%zu replicas=%lld collapsed=%lld ns=%lld\n",
	       pages, made, collapsed, took);
	close(wfd);
	if (p)
		munmap(p, pages * page);
	close(fd);
	return 0;
}
