// SPDX-License-Identifier: GPL-2.0
/*
 * memory.replication turns replication off for a cgroup's tasks under the
 * current policy: with 0 there, they and the tasks of every cgroup below
 * it map the page cache itself, make no replica and map none made by
 * others, whatever node they run on.  The file takes 0 and 1 only.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../kselftest_harness.h"
#include "replica_util.h"

#define NPAGES		256
#define LEN		(NPAGES * PAGE_SIZE_4K)
#define FILE_SEED	0xc9

FIXTURE(control) {
	struct cgroup_file cf;
	char child[192];
};

FIXTURE_SETUP(control)
{
	char why[128];
	int rc = cgroup_file_setup(&self->cf, "control", NPAGES, FILE_SEED,
				   why, sizeof(why));

	if (rc > 0)
		SKIP(return, "%s", why);
	ASSERT_EQ(0, rc);
	snprintf(self->child, sizeof(self->child), "%s/child", self->cf.cgroup);
}

/* In the parent, for the reason given in memcg.c. */
FIXTURE_TEARDOWN_PARENT(control)
{
	rmdir(self->child);
	cgroup_file_teardown(&self->cf);
}

struct map_args {
	int fd;
	const char *cgroup;
	long long *on_node1, *made;	/* shared */
};

/* In @cgroup, map the file on node 1: where are its pages, what was made? */
static int map_in_cgroup(void *arg)
{
	struct map_args *a = arg;
	long long alloc0 = vmstat_read("replica_alloc");
	int status[NPAGES];
	unsigned char *p = cgroup_map_touched(a->cgroup, a->fd, LEN);

	if (!p)
		return 2;
	if (pattern_mismatch(p, LEN, 0, FILE_SEED) >= 0)
		return 3;
	if (page_nodes(p, NPAGES, status))
		return 4;
	*a->on_node1 = count_on_node(status, NPAGES, 1);
	*a->made = vmstat_read("replica_alloc") - alloc0;
	return 0;
}

/* Room on node 1, the file cached on node 0, the binary replicated. */
static void prepare(struct __test_metadata *_metadata, int fd)
{
	long room = room_then_cache(1, 2 * NPAGES, fd, 0);

	ASSERT_LE(2 * NPAGES, room);
	ASSERT_EQ(0, warm_self_on_node(1));
}

static void map_from(struct __test_metadata *_metadata, struct cgroup_file *cf,
		     const char *cgroup, long long want_on_node1)
{
	struct map_args a = {
		.fd = cf->fd,
		.cgroup = cgroup,
		.on_node1 = cf->shared,
		.made = cf->shared + 1,
	};

	ASSERT_EQ(0, run_on_node(1, map_in_cgroup, &a));
	TH_LOG("%s: %lld of %d pages on node 1, %lld replicas made", cgroup,
	       *a.on_node1, NPAGES, *a.made);
	ASSERT_EQ(want_on_node1, *a.on_node1);
	ASSERT_EQ(want_on_node1, *a.made);
}

TEST_F(control, replication_is_on_by_default)
{
	ASSERT_EQ(1, cgroup_read(self->cf.cgroup, "memory.replication"));
	ASSERT_NE(0, access("/sys/fs/cgroup/memory.replication", F_OK));
	prepare(_metadata, self->cf.fd);
	map_from(_metadata, &self->cf, self->cf.cgroup, NPAGES);
}

TEST_F(control, a_cgroup_with_replication_off_makes_no_replica)
{
	long long node1_0;

	ASSERT_EQ(0, cgroup_write(self->cf.cgroup, "memory.replication", "0"));
	ASSERT_EQ(0, cgroup_read(self->cf.cgroup, "memory.replication"));
	prepare(_metadata, self->cf.fd);
	vmstat_fold();
	node1_0 = node_vmstat_read(1, "nr_replica_pages");
	map_from(_metadata, &self->cf, self->cf.cgroup, 0);
	vmstat_fold();
	ASSERT_GE(node1_0, node_vmstat_read(1, "nr_replica_pages"));
	ASSERT_EQ(0, cgroup_read_key(self->cf.cgroup, "memory.stat",
				     "replica"));

	/* On again, the next faults replicate. */
	ASSERT_EQ(0, cgroup_write(self->cf.cgroup, "memory.replication", "1"));
	map_from(_metadata, &self->cf, self->cf.cgroup, NPAGES);
}

TEST_F(control, replication_off_is_inherited_by_child_cgroups)
{
	ASSERT_EQ(0, cgroup_write(self->cf.cgroup, "cgroup.subtree_control",
				  "+memory"));
	ASSERT_EQ(0, mkdir(self->child, 0755));
	ASSERT_EQ(0, cgroup_write(self->cf.cgroup, "memory.replication", "0"));
	/* The child's own file still says 1: the parent's 0 applies below. */
	ASSERT_EQ(1, cgroup_read(self->child, "memory.replication"));
	prepare(_metadata, self->cf.fd);
	map_from(_metadata, &self->cf, self->child, 0);

	ASSERT_EQ(0, cgroup_write(self->cf.cgroup, "memory.replication", "1"));
	map_from(_metadata, &self->cf, self->child, NPAGES);
}

TEST_F(control, replicas_made_by_others_are_not_mapped_with_replication_off)
{
	prepare(_metadata, self->cf.fd);
	/* Replicas of the whole file made by a task of the root cgroup. */
	map_from(_metadata, &self->cf, "/sys/fs/cgroup", NPAGES);
	ASSERT_EQ(0, cgroup_write(self->cf.cgroup, "memory.replication", "0"));
	map_from(_metadata, &self->cf, self->cf.cgroup, 0);
}

TEST_F(control, memory_replication_takes_0_and_1_only)
{
	ASSERT_NE(0, cgroup_write(self->cf.cgroup, "memory.replication", "2"));
	ASSERT_EQ(EINVAL, errno);
	ASSERT_NE(0, cgroup_write(self->cf.cgroup, "memory.replication",
				  "off please"));
	ASSERT_EQ(EINVAL, errno);
	ASSERT_EQ(1, cgroup_read(self->cf.cgroup, "memory.replication"));
}

TEST_HARNESS_MAIN
