// SPDX-License-Identifier: GPL-2.0
/*
 * Replicas live no longer than they are useful: dropping caches, dropping
 * a file's cache with POSIX_FADV_DONTNEED and deleting the file free them.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../kselftest_harness.h"
#include "replica_util.h"

#define NPAGES	64
#define LEN	(NPAGES * PAGE_SIZE_4K)
#define SEED	0x11fe

FIXTURE(lifetime) {
	char path[64];
	char prev_policy[32];
	int fd;
};

FIXTURE_SETUP(lifetime)
{
	struct holder h;

	if (nr_online_nodes() < 2)
		SKIP(return, "needs 2 NUMA nodes, the guest has %d",
		     nr_online_nodes());
	if (policy_require("private", self->prev_policy,
			   sizeof(self->prev_policy)))
		SKIP(return, "no replication policy \"private\" in this kernel");
	snprintf(self->path, sizeof(self->path), "lifetime.%d", getpid());
	self->fd = make_test_file(self->path, NPAGES, SEED);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, cache_file_on_node(self->fd, 0));
	ASSERT_EQ(0, warm_self_on_node(1));
	/* Replicas on node 1, mapped by nobody once the holder is gone. */
	ASSERT_EQ(0, holder_start(&h, self->fd, NPAGES, SEED, 1, 0));
	ASSERT_EQ(NPAGES, count_on_node(h.status, NPAGES, 1));
	ASSERT_EQ(0, holder_finish(&h));
}

FIXTURE_TEARDOWN(lifetime)
{
	if (self->path[0]) {
		if (self->fd >= 0)
			close(self->fd);
		unlink(self->path);
	}
	if (self->prev_policy[0])
		policy_set(self->prev_policy);
}

TEST_F(lifetime, drop_caches_frees_every_unmapped_replica)
{
	ASSERT_LE(NPAGES, replica_pages_total());
	ASSERT_EQ(0, drop_all_caches());
	ASSERT_EQ(0, replica_pages_total());
}

TEST_F(lifetime, fadvise_dontneed_frees_the_file_replicas)
{
	long long before = node_vmstat_read(1, "nr_replica_pages");

	ASSERT_EQ(0, posix_fadvise(self->fd, 0, 0, POSIX_FADV_DONTNEED));
	ASSERT_EQ(before - NPAGES, node_vmstat_read(1, "nr_replica_pages"));
}

TEST_F(lifetime, unlink_frees_the_file_replicas)
{
	long long before = node_vmstat_read(1, "nr_replica_pages");

	close(self->fd);
	self->fd = -1;
	ASSERT_EQ(0, unlink(self->path));
	ASSERT_EQ(before - NPAGES, node_vmstat_read(1, "nr_replica_pages"));
}

TEST_F(lifetime, unlink_while_mapped_frees_them_at_unmap)
{
	long long before = node_vmstat_read(1, "nr_replica_pages");
	struct holder h;

	ASSERT_EQ(0, holder_start(&h, self->fd, NPAGES, SEED, 1, 0));
	close(self->fd);
	self->fd = -1;
	ASSERT_EQ(0, unlink(self->path));
	/* Mapped: the inode and its replicas live on. */
	ASSERT_EQ(before, node_vmstat_read(1, "nr_replica_pages"));
	/* The holder still reads the right bytes, from node 1. */
	ASSERT_EQ(0, holder_finish(&h));
	ASSERT_EQ(NPAGES, count_on_node(h.status + 2 * NPAGES, NPAGES, 1));
	ASSERT_EQ(before - NPAGES, node_vmstat_read(1, "nr_replica_pages"));
}

TEST_HARNESS_MAIN
