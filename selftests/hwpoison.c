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

static int soft_offline_replica_job(void *arg)
{
	unsigned long long pfn;
	unsigned char *p;

	p = map_replicas(*(int *)arg, &pfn);
	if (!p)
		return 2;
	return poison_and_read_on(p, MADV_SOFT_OFFLINE, pfn);
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

TEST_HARNESS_MAIN
