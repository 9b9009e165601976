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

#define NPAGES	4096
#define LEN	(NPAGES * PAGE_SIZE_4K)

struct hold {
	int fd;
	int ready;
	int release;
};

/* Map and touch the file on node 1, keep it mapped until released. */
static int hold_job(void *arg)
{
	struct hold *h = arg;
	unsigned char *p;
	char c;

	p = mmap(NULL, LEN, PROT_READ, MAP_PRIVATE, h->fd, 0);
	if (p == MAP_FAILED)
		return 2;
	touch_pages(p, LEN);
	if (write(h->ready, "r", 1) != 1)
		return 3;
	if (read(h->release, &c, 1) != 0)
		return 4;
	/* Whatever reclaim took, the bytes are right. */
	if (pattern_mismatch(p, LEN, 0, 5) >= 0)
		return 5;
	return 0;
}

/* Node @node's free memory in pages, from its meminfo. */
static long node_free_pages(int node)
{
	char path[96], line[256];
	long kb = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/devices/system/node/node%d/meminfo",
		 node);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Node %*d MemFree: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb < 0 ? -1 : kb / 4;
}

/* A watermark ("min", "high") of node @node's zones, in pages. */
static long node_watermark(int node, const char *which)
{
	char line[256], key[32];
	long total = 0, val;
	int cur = -1, n;
	FILE *f = fopen("/proc/zoneinfo", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "Node %d, zone", &n) == 1)
			cur = n;
		else if (cur == node && sscanf(line, " %31s %ld", key, &val) == 2 &&
			 !strcmp(key, which))
			total += val;
	}
	fclose(f);
	return total;
}

/* Allocate and touch *arg pages of anonymous memory, then exit. */
static int fill_job(void *arg)
{
	long pages = *(long *)arg;
	char *p;

	p = mmap(NULL, pages * PAGE_SIZE_4K, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (p == MAP_FAILED)
		return 2;
	return 0;
}

TEST(filling_node1_reclaims_its_replicas)
{
	long long replicas, oom0, reclaim0;
	char prev[32], path[64];
	int ready[2], release[2], status, fd;
	struct hold h;
	long fill;
	pid_t pid;
	char c;
	int i;

	if (nr_online_nodes() < 2)
		SKIP(return, "needs 2 NUMA nodes, the guest has %d",
		     nr_online_nodes());
	if (policy_require("private", prev, sizeof(prev)))
		SKIP(return, "no replication policy \"private\" in this kernel");
	snprintf(path, sizeof(path), "pressure.%d", getpid());
	fd = make_test_file(path, NPAGES, 5);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, cache_file_on_node(fd, 0));

	ASSERT_EQ(0, pipe(ready));
	ASSERT_EQ(0, pipe(release));
	h.fd = fd;
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

	replicas = node_vmstat_read(1, "nr_replica_pages");
	TH_LOG("node 1: %lld replica pages, %ld pages free", replicas,
	       node_free_pages(1));
	ASSERT_LE(NPAGES, replicas);
	oom0 = vmstat_read("oom_kill");
	reclaim0 = vmstat_read("replica_reclaim");

	/*
	 * Down to just above the min watermark: kswapd must bring the node
	 * back over its high watermark, and the replicas go first.
	 */
	fill = node_free_pages(1) - node_watermark(1, "min") - 512;
	TH_LOG("filling node 1 with %ld pages", fill);
	ASSERT_EQ(0, run_on_node(1, fill_job, &fill));
	/* kswapd works asynchronously. */
	for (i = 0; i < 50 && vmstat_read("replica_reclaim") == reclaim0; i++)
		usleep(100000);

	TH_LOG("after filling: %lld replica pages, %lld reclaimed",
	       node_vmstat_read(1, "nr_replica_pages"),
	       vmstat_read("replica_reclaim") - reclaim0);
	EXPECT_EQ(oom0, vmstat_read("oom_kill"));
	EXPECT_LT(reclaim0, vmstat_read("replica_reclaim"));
	EXPECT_GT(replicas, node_vmstat_read(1, "nr_replica_pages"));

	close(release[1]);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	close(fd);
	unlink(path);
	policy_set(prev);
}

struct filler {
	long pages;
	int ready;
	int release;
};

/* Take @pages of node 1 and hold them until released. */
static int hold_fill_job(void *arg)
{
	struct filler *f = arg;
	char c;

	if (fill_job(&f->pages))
		return 2;
	if (write(f->ready, "r", 1) != 1)
		return 3;
	return read(f->release, &c, 1) == 0 ? 0 : 4;
}

struct map_status {
	int fd;
	int status[256];
};

static int map_status_job(void *arg)
{
	struct map_status *m = arg;
	unsigned char *p;

	p = mmap(NULL, 256 * PAGE_SIZE_4K, PROT_READ, MAP_PRIVATE, m->fd, 0);
	if (p == MAP_FAILED)
		return 2;
	touch_pages(p, 256 * PAGE_SIZE_4K);
	return page_nodes(p, 256, m->status) ? 3 : 0;
}

TEST(no_replica_below_the_high_watermark)
{
	long long alloc0, fail0;
	int ready[2], release[2], status, fd;
	struct map_status *m;
	struct filler f;
	char prev[32], path[64];
	long free, high;
	pid_t pid;
	char c;

	if (nr_online_nodes() < 2)
		SKIP(return, "needs 2 NUMA nodes, the guest has %d",
		     nr_online_nodes());
	if (policy_require("private", prev, sizeof(prev)))
		SKIP(return, "no replication policy \"private\" in this kernel");
	snprintf(path, sizeof(path), "watermark.%d", getpid());
	fd = make_test_file(path, 256, 6);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, cache_file_on_node(fd, 0));
	m = mmap(NULL, sizeof(*m), PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, m);
	m->fd = fd;

	/* Hold node 1 between its min and its high watermark. */
	ASSERT_EQ(0, pipe(ready));
	ASSERT_EQ(0, pipe(release));
	f.pages = node_free_pages(1) - node_watermark(1, "min") - 256;
	f.ready = ready[1];
	f.release = release[0];
	pid = fork_child();
	ASSERT_LE(0, pid);
	if (!pid) {
		close(release[1]);
		_exit(run_on_node(1, hold_fill_job, &f));
	}
	close(release[0]);
	ASSERT_EQ(1, read(ready[0], &c, 1));
	sleep(1);
	free = node_free_pages(1);
	high = node_watermark(1, "high");
	TH_LOG("node 1: %ld pages free, high watermark %ld", free, high);
	if (free > high) {
		close(release[1]);
		waitpid(pid, &status, 0);
		SKIP(return, "reclaim brought node 1 back over its high watermark");
	}

	alloc0 = vmstat_read("replica_alloc");
	fail0 = vmstat_read("replica_alloc_fail");
	ASSERT_EQ(0, run_on_node(1, map_status_job, m));
	EXPECT_EQ(256, count_on_node(m->status, 256, 0));
	EXPECT_EQ(alloc0, vmstat_read("replica_alloc"));
	EXPECT_LE(fail0 + 1, vmstat_read("replica_alloc_fail"));

	close(release[1]);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, WEXITSTATUS(status));
	close(fd);
	unlink(path);
	policy_set(prev);
}

TEST_HARNESS_MAIN
