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

struct hold {
	int fd;
	int release;	/* read end: the holder unmaps and exits on EOF */
	int ready;	/* write end: one byte once the replicas are mapped */
};

/* Map and touch the file; with @arg->release, keep it mapped until told. */
static int hold_job(void *arg)
{
	struct hold *h = arg;
	int status[NPAGES];
	unsigned char *p;
	char c;

	p = mmap(NULL, LEN, PROT_READ, MAP_PRIVATE, h->fd, 0);
	if (p == MAP_FAILED)
		return 2;
	touch_pages(p, LEN);
	if (page_nodes(p, NPAGES, status) ||
	    count_on_node(status, NPAGES, 1) != NPAGES)
		return 3;
	if (h->release >= 0) {
		if (write(h->ready, "r", 1) != 1)
			return 4;
		if (read(h->release, &c, 1) != 0)
			return 5;
		/* Still the right bytes, whatever happened to the name. */
		if (pattern_mismatch(p, LEN, 0, SEED) >= 0)
			return 6;
	}
	munmap(p, LEN);
	return 0;
}

FIXTURE(lifetime) {
	char path[64];
	char prev_policy[32];
	int fd;
};

FIXTURE_SETUP(lifetime)
{
	struct hold h = { .release = -1 };

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
	/* Replicas on node 1, mapped by nobody once the job is done. */
	h.fd = self->fd;
	ASSERT_EQ(0, run_on_node(1, hold_job, &h));
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
	int ready[2], release[2], status;
	struct hold h;
	pid_t pid;
	char c;

	ASSERT_EQ(0, pipe(ready));
	ASSERT_EQ(0, pipe(release));
	h.fd = self->fd;
	h.ready = ready[1];
	h.release = release[0];
	pid = fork_child();
	ASSERT_LE(0, pid);
	if (!pid) {
		close(release[1]);
		_exit(run_on_node(1, hold_job, &h));
	}
	close(release[0]);
	ASSERT_EQ(1, read(ready[0], &c, 1));

	close(self->fd);
	self->fd = -1;
	ASSERT_EQ(0, unlink(self->path));
	/* Mapped: the inode and its replicas live on. */
	ASSERT_EQ(before, node_vmstat_read(1, "nr_replica_pages"));

	close(release[1]);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_EQ(0, WEXITSTATUS(status));
	ASSERT_EQ(before - NPAGES, node_vmstat_read(1, "nr_replica_pages"));
}

TEST_HARNESS_MAIN
