// SPDX-License-Identifier: GPL-2.0
/*
 * Replicas give way under memory pressure: filling node 1 with anonymous
 * memory reclaims its replicas, mapped ones included, and kills nobody;
 * and no replica is made on a node below its high watermark.
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

#define NPAGES	8192
#define LEN	(NPAGES * PAGE_SIZE_4K)
/* What the fill takes beyond the free pages above the min watermark. */
#define FILL_BEYOND	(NPAGES / 4)

/* Wait (up to 5 s) until node @node's free memory stops moving. */
static void wait_reclaim_idle(int node)
{
	long before = node_free_pages(node), now;
	int i;

	for (i = 0; i < 25; i++) {
		usleep(200000);
		now = node_free_pages(node);
		if (labs(now - before) < 16)
			return;
		before = now;
	}
}

/* Pages that reclaim took from the LRUs, by kswapd or directly. */
static long long lru_pages_reclaimed(void)
{
	return vmstat_read("pgsteal_kswapd") + vmstat_read("pgsteal_direct");
}

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE	23
#endif

/*
 * Allocate and touch *arg pages of anonymous memory, then exit.  In small
 * pages: the test is about replicas giving way to order-0 faults, and a
 * fill in huge pages, sized to the last few thousand pages, met the OOM
 * killer with every replica already reclaimed (make check, 2026-12-07:
 * 212 huge pages taken, 900 pages short).
 */
static int fill_job(void *arg)
{
	size_t len = *(long *)arg * PAGE_SIZE_4K;
	char *p;

	p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return 2;
	if (madvise(p, len, MADV_NOHUGEPAGE) ||
	    madvise(p, len, MADV_POPULATE_WRITE))
		return 3;
	return 0;
}

/* Only for its timeout: 32 MiB of replicas to make in an emulated guest. */
FIXTURE(fill) {
};

FIXTURE_SETUP(fill)
{
}

FIXTURE_TEARDOWN(fill)
{
}

TEST_F_TIMEOUT(fill, filling_node1_reclaims_its_replicas, 120)
{
	long long replicas, oom0, reclaim0, steal0;
	char prev[32], path[64];
	struct holder h;
	long fill, pcp;
	int fd;

	if (nr_online_nodes() < 2)
		SKIP(return, "needs 2 NUMA nodes, the guest has %d",
		     nr_online_nodes());
	if (policy_require("private", prev, sizeof(prev)))
		SKIP(return, "no replication policy \"private\" in this kernel");
	snprintf(path, sizeof(path), "pressure.%d", getpid());
	fd = make_test_file(path, NPAGES, 5);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, cache_file_on_node(fd, 0));
	/*
	 * Replicas on node 1, kept mapped.  The 32 MiB are out of khugepaged's
	 * reach: its collapse of the file's originals would rightly drop the
	 * replicas of the small folios it replaces while the test counts.
	 */
	ASSERT_EQ(0, holder_start(&h, fd, NPAGES, 5, 1, HOLD_NOHUGEPAGE));

	replicas = node_vmstat_read(1, "nr_replica_pages");
	TH_LOG("node 1: %lld replica pages, %ld pages free", replicas,
	       node_free_pages(1));
	TH_LOG("the holder's pages: %zu of %d on node 1",
	       count_on_node(h.status, NPAGES, 1), NPAGES);
	ASSERT_LE(NPAGES, replicas);
	oom0 = vmstat_read("oom_kill");
	reclaim0 = vmstat_read("replica_reclaim");
	steal0 = lru_pages_reclaimed();
	wait_reclaim_idle(1);

	/*
	 * A quarter of the replicas more than the node has above its min
	 * watermark, its per-CPU free lists included: the allocations must
	 * reclaim, and the replicas go first.  The other three quarters are
	 * the margin for what those lists keep from an order-0 fault all the
	 * same (up to 5580 pages after the large selftest freed its folios):
	 * with half the 4096 replicas of old, the fill met the OOM killer.
	 */
	pcp = node_pcp_free_pages(1);
	fill = node_free_pages(1) + pcp - node_zoneinfo(1, "min") + FILL_BEYOND;
	TH_LOG("filling node 1 with %ld pages (%ld of them on per-CPU lists)",
	       fill, pcp);
	ASSERT_EQ(0, run_on_node(1, fill_job, &fill));

	TH_LOG("after filling: %lld replica pages, %lld reclaimed; %lld LRU pages reclaimed",
	       node_vmstat_read(1, "nr_replica_pages"),
	       vmstat_read("replica_reclaim") - reclaim0,
	       lru_pages_reclaimed() - steal0);
	EXPECT_EQ(oom0, vmstat_read("oom_kill"));
	/* At least what it took beyond the min watermark came from replicas. */
	EXPECT_LE(reclaim0 + FILL_BEYOND, vmstat_read("replica_reclaim"));
	EXPECT_GT(replicas, node_vmstat_read(1, "nr_replica_pages"));
	/* Whatever reclaim took, the holder reads the right bytes. */
	EXPECT_EQ(0, holder_finish(&h));
	close(fd);
	unlink(path);
	policy_set(prev);
}

struct filler {
	int cmd;	/* read end: pages to take (or give back), EOF to finish */
	int ack;	/* write end */
};

#define FILL_CHUNK	64	/* pages */

/*
 * Take as many more pages of the node as asked, or give back as many, in
 * chunks; hold them until EOF.
 */
static int filler_job(void *arg)
{
	struct filler *f = arg;
	size_t nr = 0, max = 0, len = FILL_CHUNK * PAGE_SIZE_4K;
	void **chunks = NULL;
	long pages;

	while (read(f->cmd, &pages, sizeof(pages)) == sizeof(pages)) {
		for (; pages > 0; pages -= FILL_CHUNK) {
			if (nr == max) {
				max = max ? 2 * max : 1024;
				chunks = realloc(chunks, max * sizeof(*chunks));
				if (!chunks)
					return 2;
			}
			chunks[nr] = mmap(NULL, len, PROT_READ | PROT_WRITE,
					  MAP_PRIVATE | MAP_ANONYMOUS |
					  MAP_POPULATE, -1, 0);
			if (chunks[nr] == MAP_FAILED)
				return 2;
			nr++;
		}
		for (; pages < 0 && nr; pages += FILL_CHUNK)
			munmap(chunks[--nr], len);
		if (write(f->ack, "a", 1) != 1)
			return 3;
	}
	return 0;
}

#define WM_PAGES	256	/* mapped per attempt */
#define WM_ATTEMPTS	4

struct map_status {
	int fd;
	off_t offset;
	int status[WM_PAGES];
};

static int map_status_job(void *arg)
{
	struct map_status *m = arg;
	unsigned char *p;

	p = mmap(NULL, WM_PAGES * PAGE_SIZE_4K, PROT_READ, MAP_PRIVATE, m->fd,
		 m->offset);
	if (p == MAP_FAILED)
		return 2;
	touch_pages(p, WM_PAGES * PAGE_SIZE_4K);
	return page_nodes(p, WM_PAGES, m->status) ? 3 : 0;
}

/*
 * Have the filler (commands on @cmd, acknowledged on @ack) take or give
 * back pages until node 1's free memory rests well inside low..high;
 * returns it.
 */
static long hold_inside_window(int cmd, int ack, long low, long high)
{
	long free = 0, more;
	int i;
	char c;

	for (i = 0; i < 20; i++) {
		wait_reclaim_idle(1);
		free = node_free_pages(1);
		/* Well inside, not at an edge that a few pages can cross. */
		if (free > low + (high - low) / 8 &&
		    free <= high - (high - low) / 4)
			break;
		/* Below low, the filler gives back the difference. */
		more = free - (low + high) / 2;
		if (write(cmd, &more, sizeof(more)) != sizeof(more) ||
		    read(ack, &c, 1) != 1)
			return -1;
	}
	return free;
}

#define PCP_FRACTION	"/proc/sys/vm/percpu_pagelist_high_fraction"

TEST(no_replica_below_the_high_watermark)
{
	long long alloc0 = 0, fail0 = 0;
	int cmd[2], ack[2], status, fd, attempt, mapped = -1;
	long before = 0, after = 0, low, high;
	struct map_status *m;
	struct filler f;
	char prev[32], path[64], pcp_fraction[32];
	pid_t pid;

	if (nr_online_nodes() < 2)
		SKIP(return, "needs 2 NUMA nodes, the guest has %d",
		     nr_online_nodes());
	if (policy_require("private", prev, sizeof(prev)))
		SKIP(return, "no replication policy \"private\" in this kernel");
	snprintf(path, sizeof(path), "watermark.%d", getpid());
	fd = make_test_file(path, WM_PAGES * WM_ATTEMPTS, 6);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, cache_file_on_node(fd, 0));
	m = mmap(NULL, sizeof(*m), PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, m);
	m->fd = fd;

	/*
	 * Pages on the per-CPU free lists are free but counted neither in
	 * MemFree nor against the watermarks, and by default a node's CPUs
	 * may hold as many as its low watermark: drained, they would carry
	 * the node across its whole low..high window.  Keep them to a few
	 * hundred (a millionth of the zone, rounded up to 4 batches).
	 */
	ASSERT_EQ(0, read_text_file(PCP_FRACTION, pcp_fraction,
				    sizeof(pcp_fraction)));
	ASSERT_EQ(0, write_text_file(PCP_FRACTION, "1000000"));

	/*
	 * Hold node 1 between its low and its high watermark: below high, so
	 * that no replica may be made, and above low, so that kswapd is not
	 * woken to reclaim it back over high.  What others free or take
	 * meanwhile (kswapd finishing earlier work, exiting tasks) the filler
	 * takes or gives back.
	 */
	ASSERT_EQ(0, pipe(cmd));
	ASSERT_EQ(0, pipe(ack));
	f.cmd = cmd[0];
	f.ack = ack[1];
	pid = fork_child();
	ASSERT_LE(0, pid);
	if (!pid) {
		close(cmd[1]);
		_exit(run_on_node(1, filler_job, &f));
	}
	close(cmd[0]);
	low = node_zoneinfo(1, "low");
	high = node_zoneinfo(1, "high");
	for (attempt = 0; attempt < WM_ATTEMPTS; attempt++) {
		long long made;

		before = hold_inside_window(cmd[1], ack[0], low, high);
		alloc0 = vmstat_read("replica_alloc");
		fail0 = vmstat_read("replica_alloc_fail");
		m->offset = (off_t)attempt * WM_PAGES * PAGE_SIZE_4K;
		mapped = run_on_node(1, map_status_job, m);
		after = node_free_pages(1);
		made = vmstat_read("replica_alloc") - alloc0;
		TH_LOG("node 1: %ld then %ld free, low %ld high %ld; %lld replicas made",
		       before, after, low, high, made);
		/*
		 * Pages freed by others while the file was mapped (kswapd,
		 * per-CPU lists drained late, the mapping task's own exit)
		 * may have lifted the node over high, and the replicas made
		 * then took it back under: free memory without them over
		 * high means this attempt shows nothing, try again.
		 */
		if (before > low && before <= high && after + made <= high)
			break;
	}
	EXPECT_EQ(0, write_text_file(PCP_FRACTION, pcp_fraction));
	close(cmd[1]);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, WEXITSTATUS(status));
	ASSERT_GT(WM_ATTEMPTS, attempt) {
		TH_LOG("node 1 could not be held below its high watermark");
	}
	ASSERT_EQ(0, mapped);
	EXPECT_EQ(WM_PAGES, count_on_node(m->status, WM_PAGES, 0));
	EXPECT_EQ(alloc0, vmstat_read("replica_alloc"));
	EXPECT_LE(fail0 + 1, vmstat_read("replica_alloc_fail"));

	close(fd);
	unlink(path);
	policy_set(prev);
}

TEST_HARNESS_MAIN
