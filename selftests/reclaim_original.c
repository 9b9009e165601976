// SPDX-License-Identifier: GPL-2.0
/*
 * Replicas never keep the page cache they copy from being reclaimed: when
 * the node or the memory cgroup of the page cache needs memory, the
 * replicas on another node, or charged to another cgroup, are dropped
 * with the page cache, and nobody is OOM-killed where a kernel without
 * replication would reclaim the page cache instead.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../kselftest_harness.h"
#include "replica_util.h"

#define MB		(1024 * 1024L)
#define SEED		0x7ec1

/* Allocate and fill @arg bytes of anonymous memory; 0 once all is there. */
static int anon_job(void *arg)
{
	long bytes = *(long *)arg;
	unsigned char *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return 2;
	memset(p, 0x5a, bytes);
	return 0;
}

/*
 * Replicas of every page of @fd, held on node 1 by @h on behalf of the
 * memory cgroup @cgroup (or the test's own when NULL).
 */
static int hold_replicas(struct holder *h, int fd, size_t npages,
			 const char *cgroup)
{
	int ret;

	if (cgroup && cgroup_enter(cgroup))
		return -1;
	/*
	 * With THP "always" and CONFIG_READ_ONLY_THP_FOR_FS, khugepaged
	 * collapses the page cache of a read-only file mapping into THPs,
	 * dropping the replicas of the small folios it replaces: keep it
	 * away from the 40 MiB that the holder maps while the test counts.
	 */
	ret = holder_start(h, fd, npages, SEED, 1, HOLD_NOHUGEPAGE);
	if (cgroup && cgroup_leave())
		return -1;
	if (ret)
		return ret;
	ret = count_on_node(h->status, npages, 1);
	if (ret == (int)npages)
		return 0;
	ksft_print_msg("the holder has %d of %zu pages on node 1\n", ret,
		       npages);
	return -1;
}

FIXTURE(reclaim_original) {
	char prev_policy[32];
	char path[64];
	int fd;
	char cgroup_a[128];	/* the page cache's */
	char cgroup_b[128];	/* the replicas' */
};

FIXTURE_SETUP(reclaim_original)
{
	self->fd = -1;
	if (nr_online_nodes() < 2)
		SKIP(return, "needs 2 NUMA nodes, the guest has %d",
		     nr_online_nodes());
	if (policy_require("private", self->prev_policy,
			   sizeof(self->prev_policy)))
		SKIP(return, "no replication policy \"private\" in this kernel");
	snprintf(self->path, sizeof(self->path), "reclaim_original.%d",
		 getpid());
	ASSERT_EQ(0, warm_self_on_node(1));
}

FIXTURE_TEARDOWN(reclaim_original)
{
	if (self->fd >= 0) {
		close(self->fd);
		unlink(self->path);
	}
	if (self->cgroup_a[0])
		cgroup_remove(self->cgroup_a);
	if (self->cgroup_b[0])
		cgroup_remove(self->cgroup_b);
	if (self->prev_policy[0])
		policy_set(self->prev_policy);
}

struct cgroup_job {
	const char *cgroup;
	int (*fn)(void *arg);
	void *arg;
};

/* Run a job inside a memory cgroup. */
static int in_cgroup(void *arg)
{
	const struct cgroup_job *j = arg;

	if (cgroup_enter(j->cgroup))
		return 90;
	return j->fn(j->arg);
}

static int read_job(void *arg)
{
	return read_whole_file(*(int *)arg) ? 2 : 0;
}

/*
 * Cgroup A, limited to 64 MiB, caches a 32 MiB file on node 0; cgroup B
 * replicates all of it on node 1.  A then needs 48 MiB of anonymous
 * memory: its page cache must give way, replicas of B or not.
 */
TEST_F(reclaim_original, cgroup_reclaims_page_cache_replicated_by_another)
{
	size_t npages = 32 * MB / PAGE_SIZE_4K;
	long anon = 48 * MB;
	struct cgroup_job job;
	struct holder holder;
	long long kills0;

	if (cgroup_create_tagged(self->cgroup_a, sizeof(self->cgroup_a), "a"))
		SKIP(return, "no memory cgroup: %s", strerror(errno));
	ASSERT_EQ(0, cgroup_create_tagged(self->cgroup_b,
					  sizeof(self->cgroup_b), "b"));
	ASSERT_EQ(0, cgroup_write(self->cgroup_a, "memory.max", "64M"));
	self->fd = make_test_file(self->path, npages, SEED);
	ASSERT_LE(0, self->fd);

	job.cgroup = self->cgroup_a;
	job.fn = read_job;
	job.arg = &self->fd;
	ASSERT_EQ(0, run_on_node(0, in_cgroup, &job));
	TH_LOG("cgroup a: %lld bytes after caching the file",
	       cgroup_read(self->cgroup_a, "memory.current"));
	ASSERT_EQ(0, hold_replicas(&holder, self->fd, npages,
				   self->cgroup_b));

	kills0 = cgroup_read_key(self->cgroup_a, "memory.events", "oom_kill");
	ASSERT_LE(0, kills0);
	job.fn = anon_job;
	job.arg = &anon;
	EXPECT_EQ(0, run_on_node(0, in_cgroup, &job));
	EXPECT_EQ(kills0, cgroup_read_key(self->cgroup_a, "memory.events",
					  "oom_kill"));
	TH_LOG("cgroup a: %lld bytes, cgroup b: %lld bytes",
	       cgroup_read(self->cgroup_a, "memory.current"),
	       cgroup_read(self->cgroup_b, "memory.current"));
	/* The holder reads the file's bytes, from wherever they are now. */
	EXPECT_EQ(0, holder_finish(&holder));
}

/*
 * A 40 MiB file cached on node 0 and replicated on node 1; a task bound
 * to node 0 then takes all of node 0's free memory above its min
 * watermark and 24 MiB more: the page cache must give way, replicas or
 * not.  Below the min watermark only the OOM killer allocates; what is
 * free there was never the task's to take, and counting it leaves the
 * file itself as the only slack (an OOM kill with the file all
 * reclaimed, once, on XFS).  Taking a quarter GiB page by page under
 * KASAN and TCG overran the harness's 30 s once, on a loaded host: what
 * this test asserts is no OOM kill, not a time, so it gets 120 s.
 */
TEST_F_TIMEOUT(reclaim_original, node_reclaims_page_cache_replicated_elsewhere,
	       120)
{
	size_t npages = 40 * MB / PAGE_SIZE_4K;
	struct holder holder;
	long long kills0;
	long anon;

	ASSERT_EQ(0, drop_all_caches());
	self->fd = make_test_file(self->path, npages, SEED);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, cache_file_on_node(self->fd, 0));
	ASSERT_EQ(0, hold_replicas(&holder, self->fd, npages, NULL));

	kills0 = vmstat_read("oom_kill");
	anon = (node_free_pages(0) - node_zoneinfo(0, "min")) * PAGE_SIZE_4K +
	       24 * MB;
	TH_LOG("taking %ld MiB on node 0", anon / MB);
	EXPECT_EQ(0, run_on_node(0, anon_job, &anon));
	EXPECT_EQ(kills0, vmstat_read("oom_kill"));
	EXPECT_EQ(0, holder_finish(&holder));
}

TEST_HARNESS_MAIN
