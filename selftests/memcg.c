// SPDX-License-Identifier: GPL-2.0
/*
 * Replicas are charged to the memory cgroup of the task that makes them,
 * like page cache: mapping a file cached on node 0 from a cgroup on node 1
 * raises the cgroup's memory.current by the replicas it made.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../kselftest_harness.h"
#include "replica_util.h"

#define NPAGES		1024
#define LEN		(NPAGES * PAGE_SIZE_4K)

struct map_args {
	int fd;
	const char *cgroup;
	long long *before, *after;	/* memory.current, shared */
	int *on_node1;			/* shared */
};

/* Join the cgroup, then map and touch the file. */
static int map_in_cgroup(void *arg)
{
	struct map_args *a = arg;
	int status[NPAGES];
	unsigned char *p;

	if (cgroup_enter(a->cgroup))
		return 2;
	*a->before = cgroup_read(a->cgroup, "memory.current");
	p = mmap(NULL, LEN, PROT_READ, MAP_PRIVATE, a->fd, 0);
	if (p == MAP_FAILED)
		return 3;
	touch_pages(p, LEN);
	*a->after = cgroup_read(a->cgroup, "memory.current");
	if (page_nodes(p, NPAGES, status))
		return 4;
	*a->on_node1 = count_on_node(status, NPAGES, 1);
	return 0;
}

TEST(replicas_are_charged_to_the_cgroup_that_makes_them)
{
	char prev[32], cgroup[128], path[64];
	struct map_args a;
	long long *shared;
	int fd, on_node1;

	if (nr_online_nodes() < 2)
		SKIP(return, "needs 2 NUMA nodes, the guest has %d",
		     nr_online_nodes());
	if (policy_require("private", prev, sizeof(prev)))
		SKIP(return, "no replication policy \"private\" in this kernel");
	if (cgroup_create(cgroup, sizeof(cgroup)))
		SKIP(return, "no memory cgroup: %s", strerror(errno));

	snprintf(path, sizeof(path), "memcg.%d", getpid());
	fd = make_test_file(path, NPAGES, 3);
	ASSERT_LE(0, fd);
	/* The originals are charged to the root cgroup's reader, on node 0. */
	ASSERT_EQ(0, cache_file_on_node(fd, 0));

	shared = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, shared);
	a.fd = fd;
	a.cgroup = cgroup;
	a.before = shared;
	a.after = shared + 1;
	a.on_node1 = (int *)(shared + 2);
	ASSERT_EQ(0, run_on_node(1, map_in_cgroup, &a));
	on_node1 = *a.on_node1;
	TH_LOG("memory.current %lld -> %lld, %d of %d pages on node 1",
	       *a.before, *a.after, on_node1, NPAGES);
	ASSERT_EQ(NPAGES, on_node1);
	/* At least the replicas; page tables and the stack come on top. */
	ASSERT_LE(*a.before + LEN, *a.after);

	close(fd);
	unlink(path);
	drop_all_caches();
	cgroup_remove(cgroup);
	policy_set(prev);
}

TEST_HARNESS_MAIN
