// SPDX-License-Identifier: GPL-2.0
/*
 * Memory failure in a replica is recovered as for a clean page-cache page:
 * madvise(MADV_HWPOISON) of a mapped replica succeeds, the replica is
 * dropped, and the task that mapped it goes on reading the file's bytes
 * from another page; read(2) never copies from the poisoned replica.  Soft
 * offlining a replica drops it, and soft offlining a page-cache page that
 * has replicas migrates it, as without replication.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../kselftest_harness.h"
#include "replica_util.h"

#ifndef MADV_HWPOISON
#define MADV_HWPOISON		100
#endif
#ifndef MADV_SOFT_OFFLINE
#define MADV_SOFT_OFFLINE	101
#endif

#define NPAGES	16
#define LEN	(NPAGES * PAGE_SIZE_4K)
#define SEED	0x9015

/* A job's exit status when the kernel has no CONFIG_MEMORY_FAILURE. */
#define NO_MEMORY_FAILURE	99

FIXTURE(hwpoison) {
	char path[64];
	char prev_policy[32];
	char prev_threshold[16];
	int fd;
};

FIXTURE_SETUP(hwpoison)
{
	self->fd = -1;
	if (nr_online_nodes() < 2)
		SKIP(return, "needs 2 NUMA nodes, the guest has %d",
		     nr_online_nodes());
	/* "readonly" replicates both mapped and read(2) page cache. */
	if (policy_require("readonly", self->prev_policy,
			   sizeof(self->prev_policy)))
		SKIP(return, "no replication policy \"readonly\" in this kernel");
	ASSERT_EQ(0, replica_knob_get("read_threshold", self->prev_threshold,
				      sizeof(self->prev_threshold)));
	ASSERT_EQ(0, replica_knob_set("read_threshold", "2"));
	snprintf(self->path, sizeof(self->path), "hwpoison.%d", getpid());
	self->fd = make_test_file(self->path, NPAGES, SEED);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, cache_file_on_node(self->fd, 0));
	ASSERT_EQ(0, warm_self_on_node(1));
}

FIXTURE_TEARDOWN(hwpoison)
{
	if (self->fd >= 0) {
		close(self->fd);
		unlink(self->path);
	}
	if (self->prev_threshold[0])
		replica_knob_set("read_threshold", self->prev_threshold);
	if (self->prev_policy[0])
		policy_set(self->prev_policy);
}

#define NO_MEMORY_FAILURE_WHY \
	"no CONFIG_MEMORY_FAILURE: MADV_HWPOISON and MADV_SOFT_OFFLINE are EINVAL"

/* Map the file and touch it: page 0 must be a replica on node 1. */
static unsigned char *map_replicas(int fd, unsigned long long *pfn)
{
	unsigned char *p = mmap(NULL, LEN, PROT_READ, MAP_PRIVATE, fd, 0);
	int status;

	if (p == MAP_FAILED)
		return NULL;
	touch_pages(p, LEN);
	if (page_nodes(p, 1, &status) || status != 1 || page_pfns(p, 1, pfn))
		return NULL;
	return p;
}

/*
 * madvise(@advice) on page 0 of @p: the call succeeds, and the page reads
 * the file's bytes afterwards, from another page frame than @pfn.
 */
static int poison_and_read_on(unsigned char *p, int advice,
			      unsigned long long pfn)
{
	unsigned long long now;

	if (madvise(p, PAGE_SIZE_4K, advice)) {
		if (errno == EINVAL)
			return NO_MEMORY_FAILURE;
		fprintf(stderr, "madvise(%d): %s\n", advice, strerror(errno));
		return 10;
	}
	/* A SIGBUS here kills the job: the replica was left mapped. */
	if (pattern_mismatch(p, PAGE_SIZE_4K, 0, SEED) >= 0)
		return 11;
	if (page_pfns(p, 1, &now))
		return 12;
	if (now == pfn) {
		fprintf(stderr, "still on page frame %#llx\n", pfn);
		return 13;
	}
	return 0;
}

static int hwpoison_replica_job(void *arg)
{
	long long evict0 = vmstat_read("replica_evict");
	unsigned long long pfn;
	unsigned char *p;
	int ret;

	p = map_replicas(*(int *)arg, &pfn);
	if (!p)
		return 2;
	ret = poison_and_read_on(p, MADV_HWPOISON, pfn);
	if (ret)
		return ret;
	return vmstat_read("replica_evict") > evict0 ? 0 : 3;
}

TEST_F(hwpoison, hwpoison_of_a_mapped_replica_is_recovered)
{
	int ret = run_on_node(1, hwpoison_replica_job, &self->fd);

	if (ret == NO_MEMORY_FAILURE)
		SKIP(return, NO_MEMORY_FAILURE_WHY);
	EXPECT_EQ(0, ret);
}

/*
 * A replica that read(2) uses is poisoned: the next read is not served
 * from it (replica_read stays), and reads the file's bytes.
 */
static int read_poisoned_job(void *arg)
{
	int fd = *(int *)arg;
	unsigned char buf[PAGE_SIZE_4K];
	unsigned long long pfn;
	long long read0;
	unsigned char *p;

	p = map_replicas(fd, &pfn);
	if (!p)
		return 2;
	read0 = vmstat_read("replica_read");
	if (pread(fd, buf, sizeof(buf), 0) != sizeof(buf) ||
	    vmstat_read("replica_read") != read0 + 1) {
		fprintf(stderr, "read(2) did not use the mapped replica\n");
		return 3;
	}
	if (madvise(p, PAGE_SIZE_4K, MADV_HWPOISON))
		return errno == EINVAL ? NO_MEMORY_FAILURE : 4;
	read0 = vmstat_read("replica_read");
	if (pread(fd, buf, sizeof(buf), 0) != sizeof(buf))
		return 5;
	if (vmstat_read("replica_read") != read0) {
		fprintf(stderr, "read(2) copied from the poisoned replica\n");
		return 6;
	}
	return pattern_mismatch(buf, sizeof(buf), 0, SEED) >= 0 ? 7 : 0;
}

TEST_F(hwpoison, read_never_copies_from_a_poisoned_replica)
{
	int ret = run_on_node(1, read_poisoned_job, &self->fd);

	if (ret == NO_MEMORY_FAILURE)
		SKIP(return, NO_MEMORY_FAILURE_WHY);
	EXPECT_EQ(0, ret);
}

/* /proc/kpageflags bits (include/uapi/linux/kernel-page-flags.h) */
#define KPF_COMPOUND_HEAD	15
#define KPF_COMPOUND_TAIL	16
#define KPF_HWPOISON		19

static unsigned long long page_frame_flags(unsigned long long pfn)
{
	unsigned long long flags = 0;
	int fd = open("/proc/kpageflags", O_RDONLY);

	if (fd >= 0) {
		if (pread(fd, &flags, sizeof(flags), pfn * sizeof(flags)) !=
		    sizeof(flags))
			flags = 0;
		close(fd);
	}
	return flags;
}

/*
 * A small replica is migrated, as a movable page, within its node; a large
 * one, which cannot be split, is dropped.  The page read afterwards is a
 * replica on node 1 either way.
 */
static int soft_offline_replica_job(void *arg)
{
	const unsigned long long compound = 1ULL << KPF_COMPOUND_HEAD |
					    1ULL << KPF_COMPOUND_TAIL;
	const char *counter;
	unsigned long long pfn;
	long long before;
	unsigned char *p;
	int ret, node;

	p = map_replicas(*(int *)arg, &pfn);
	if (!p)
		return 2;
	counter = page_frame_flags(pfn) & compound ? "replica_evict" :
						     "replica_migrate";
	before = vmstat_read(counter);
	ret = poison_and_read_on(p, MADV_SOFT_OFFLINE, pfn);
	if (ret)
		return ret;
	if (page_nodes(p, 1, &node) || node != 1) {
		fprintf(stderr, "the page read is on node %d\n", node);
		return 3;
	}
	if (vmstat_read(counter) <= before) {
		fprintf(stderr, "%s did not grow\n", counter);
		return 4;
	}
	return 0;
}

TEST_F(hwpoison, soft_offline_of_a_mapped_replica)
{
	int ret = run_on_node(1, soft_offline_replica_job, &self->fd);

	if (ret == NO_MEMORY_FAILURE)
		SKIP(return, NO_MEMORY_FAILURE_WHY);
	EXPECT_EQ(0, ret);
}

/* On node 0, with replicas on node 1: the page cache migrates. */
TEST_F(hwpoison, soft_offline_of_a_replicated_original)
{
	unsigned long long pfn;
	struct holder holder;
	unsigned char *p;
	int status, ret;

	ASSERT_EQ(0, holder_start(&holder, self->fd, NPAGES, SEED, 1, 0));
	EXPECT_EQ(NPAGES, count_on_node(holder.status, NPAGES, 1));
	p = mmap(NULL, LEN, PROT_READ, MAP_PRIVATE, self->fd, 0);
	ASSERT_NE(MAP_FAILED, p);
	touch_pages(p, LEN);
	ASSERT_EQ(0, page_nodes(p, 1, &status));
	ASSERT_EQ(0, status);
	ASSERT_EQ(0, page_pfns(p, 1, &pfn));
	ret = poison_and_read_on(p, MADV_SOFT_OFFLINE, pfn);
	EXPECT_EQ(0, holder_finish(&holder));
	if (ret == NO_MEMORY_FAILURE)
		SKIP(return, NO_MEMORY_FAILURE_WHY);
	EXPECT_EQ(0, ret);
	ASSERT_EQ(0, page_nodes(p, 1, &status));
	EXPECT_EQ(0, status);
}

/*
 * Memory failure of a page-cache page that node 1 replicated is recovered
 * as for a clean page-cache page without replicas: madvise(MADV_HWPOISON)
 * succeeds, the page's replicas leave with it (unmapped from the holder on
 * node 1), and every task reads the file's bytes again afterwards.
 */
static int poison_original_job(void *arg)
{
	unsigned char *p = mmap(NULL, LEN, PROT_READ, MAP_PRIVATE,
				*(int *)arg, 0);
	int status;

	if (p == MAP_FAILED)
		return 2;
	touch_pages(p, LEN);
	if (page_nodes(p, 1, &status) || status != 0) {
		fprintf(stderr, "page 0 is on node %d, not on node 0\n", status);
		return 3;
	}
	if (madvise(p, PAGE_SIZE_4K, MADV_HWPOISON)) {
		if (errno == EINVAL)
			return NO_MEMORY_FAILURE;
		fprintf(stderr, "MADV_HWPOISON of the original: %s\n",
			strerror(errno));
		return 4;
	}
	return pattern_mismatch(p, PAGE_SIZE_4K, 0, SEED) >= 0 ? 5 : 0;
}

TEST_F(hwpoison, hwpoison_of_a_replicated_original)
{
	struct holder holder;
	int ret;

	ASSERT_EQ(0, holder_start(&holder, self->fd, NPAGES, SEED, 1, 0));
	ASSERT_EQ(NPAGES, count_on_node(holder.status, NPAGES, 1));
	ret = run_on_node(0, poison_original_job, &self->fd);
	/* The holder touches its pages again and checks their bytes. */
	EXPECT_EQ(0, holder_finish(&holder));
	if (ret == NO_MEMORY_FAILURE)
		SKIP(return, NO_MEMORY_FAILURE_WHY);
	EXPECT_EQ(0, ret);
	/* Its replica of page 0 went with the page: no copy of it is left. */
	EXPECT_EQ(-ENOENT, holder.status[NPAGES]);
}

/*
 * With replicas of one page on nodes 1 and 2, memory failure takes the
 * page out of the page cache; node 0 reads it again, node 3 makes a
 * replica of the new page, and node 1 faults on the page once more: it
 * must get the file's bytes, in time, from a page of its own node.
 */
static int poison_and_reread_job(void *arg)
{
	unsigned char buf[PAGE_SIZE_4K];
	int fd = *(int *)arg;
	unsigned char *p;

	p = mmap(NULL, PAGE_SIZE_4K, PROT_READ, MAP_PRIVATE, fd, 0);
	if (p == MAP_FAILED)
		return 2;
	touch_pages(p, PAGE_SIZE_4K);
	if (madvise(p, PAGE_SIZE_4K, MADV_HWPOISON)) {
		if (errno == EINVAL)
			return NO_MEMORY_FAILURE;
		/* Reported; what follows must not hang either way. */
		fprintf(stderr, "MADV_HWPOISON: %s\n", strerror(errno));
	}
	munmap(p, PAGE_SIZE_4K);
	if (pread(fd, buf, sizeof(buf), 0) != sizeof(buf))
		return 3;
	return pattern_mismatch(buf, sizeof(buf), 0, SEED) >= 0 ? 4 : 0;
}

struct fault_on_node {
	int fd;
	int node;
};

/* Map page 0 afresh and touch it: the file's bytes, on the job's node. */
static int fault_page0_job(void *arg)
{
	const struct fault_on_node *f = arg;
	unsigned char *p = mmap(NULL, PAGE_SIZE_4K, PROT_READ, MAP_PRIVATE,
				f->fd, 0);
	int status;

	if (p == MAP_FAILED)
		return 2;
	if (pattern_mismatch(p, PAGE_SIZE_4K, 0, SEED) >= 0)
		return 3;
	if (page_nodes(p, 1, &status))
		return 4;
	if (status != f->node) {
		fprintf(stderr, "page 0 on node %d, the task on node %d\n",
			status, f->node);
		return 5;
	}
	return 0;
}

/* fault_page0_job() on @node, given a minute to answer. */
static int fault_page0_on(int fd, int node)
{
	struct fault_on_node f = { .fd = fd, .node = node };

	return run_on_node_timeout(node, fault_page0_job, &f, 60);
}

TEST_F(hwpoison, refault_after_memory_failure_on_four_nodes)
{
	struct holder on1, on2;
	int ret;

	if (nr_online_nodes() < 4)
		SKIP(return, "needs 4 NUMA nodes, the guest has %d",
		     nr_online_nodes());
	ASSERT_EQ(0, warm_self_on_node(2));
	ASSERT_EQ(0, warm_self_on_node(3));
	ASSERT_EQ(0, holder_start(&on1, self->fd, 1, SEED, 1, 0));
	ASSERT_EQ(0, holder_start(&on2, self->fd, 1, SEED, 2, 0));
	ASSERT_EQ(1, on1.status[0]);
	ASSERT_EQ(2, on2.status[0]);
	ret = run_on_node(0, poison_and_reread_job, &self->fd);
	if (ret == NO_MEMORY_FAILURE) {
		holder_finish(&on1);
		holder_finish(&on2);
		SKIP(return, NO_MEMORY_FAILURE_WHY);
	}
	EXPECT_EQ(0, ret);
	EXPECT_EQ(0, fault_page0_on(self->fd, 3));
	EXPECT_EQ(0, fault_page0_on(self->fd, 1));
	EXPECT_EQ(0, fault_page0_on(self->fd, 2));
	EXPECT_EQ(0, holder_finish(&on1));
	EXPECT_EQ(0, holder_finish(&on2));
}

/* A job's exit status when the file is not cached in large folios. */
#define NO_LARGE_REPLICA	98

/*
 * Whether the replicas of another file, which the caller maps on its node
 * (the same orders, from the same CPU's free lists, most recently freed
 * first), take page frame @pfn: 1 if they do, 0 if not, -1 on error.  A
 * poisoned page that went back to the allocator is handed out here, or
 * caught by the kernel's check of every page it hands out.
 */
static int replicas_take(int fd, unsigned long long pfn)
{
	unsigned long long pfns[NPAGES];
	unsigned char *p;
	int i;

	p = mmap(NULL, LEN, PROT_READ, MAP_PRIVATE, fd, 0);
	if (p == MAP_FAILED)
		return -1;
	touch_pages(p, LEN);
	if (page_pfns(p, NPAGES, pfns))
		return -1;
	for (i = 0; i < NPAGES; i++)
		if (pfns[i] == pfn)
			return 1;
	return 0;
}

/* The file to soft offline a page of, and another one. */
struct two_files {
	int fd;
	int other_fd;
};

static int soft_offline_large_replica_job(void *arg)
{
	const struct two_files *files = arg;
	unsigned long long pfns[NPAGES];
	int status[NPAGES], i, tail = -1;
	unsigned char *p;

	p = mmap(NULL, LEN, PROT_READ, MAP_PRIVATE, files->fd, 0);
	if (p == MAP_FAILED)
		return 2;
	touch_pages(p, LEN);
	if (page_nodes(p, NPAGES, status) || page_pfns(p, NPAGES, pfns))
		return 3;
	for (i = 0; i < NPAGES && tail < 0; i++)
		if (status[i] == 1 &&
		    page_frame_flags(pfns[i]) & (1ULL << KPF_COMPOUND_TAIL))
			tail = i;
	if (tail < 0)
		return NO_LARGE_REPLICA;
	if (madvise(p + tail * PAGE_SIZE_4K, PAGE_SIZE_4K, MADV_SOFT_OFFLINE)) {
		if (errno == EINVAL)
			return NO_MEMORY_FAILURE;
		fprintf(stderr, "MADV_SOFT_OFFLINE: %s\n", strerror(errno));
		return 4;
	}
	if (pattern_mismatch(p, LEN, 0, SEED) >= 0)
		return 5;
	if (!(page_frame_flags(pfns[tail]) & (1ULL << KPF_HWPOISON))) {
		fprintf(stderr, "page frame %#llx is not poisoned\n",
			pfns[tail]);
		return 6;
	}
	switch (replicas_take(files->other_fd, pfns[tail])) {
	case 0:
		return 0;
	case 1:
		fprintf(stderr, "poisoned page frame %#llx handed out again\n",
			pfns[tail]);
		return 7;
	default:
		return 8;
	}
}

/*
 * Soft offlining a page of a large replica drops the replica and keeps
 * that page frame, poisoned, out of the allocator for good, as it does
 * for a page of a large page-cache folio.
 */
TEST_F(hwpoison, soft_offline_of_a_large_replica)
{
	struct two_files files = { .fd = self->fd };
	char other[80];
	int ret;

	snprintf(other, sizeof(other), "%s.other", self->path);
	files.other_fd = make_test_file(other, NPAGES, SEED);
	ASSERT_LE(0, files.other_fd);
	unlink(other);
	ASSERT_EQ(0, cache_file_on_node(files.other_fd, 0));
	ret = run_on_node(1, soft_offline_large_replica_job, &files);
	close(files.other_fd);

	if (ret == NO_MEMORY_FAILURE)
		SKIP(return, NO_MEMORY_FAILURE_WHY);
	if (ret == NO_LARGE_REPLICA)
		SKIP(return, "file cached in single pages (large folios: XFS boot)");
	EXPECT_EQ(0, ret);
}

TEST_HARNESS_MAIN
