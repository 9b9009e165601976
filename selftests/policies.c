// SPDX-License-Identifier: GPL-2.0
/*
 * What each replication policy replicates, and what it does not: one
 * variant per policy, one test per way of reading a file cached on node 0
 * from a task on node 1.  Run a single policy with "-v <policy>".
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

#define NPAGES	32
#define LEN	(NPAGES * PAGE_SIZE_4K)
#define SEED	0x9a11

/* The ways of reading a file. */
#define EXEC_PRIVATE	0x01	/* PROT_EXEC, MAP_PRIVATE */
#define DATA_PRIVATE	0x02	/* PROT_READ, MAP_PRIVATE */
#define SHARED_RO	0x04	/* PROT_READ, MAP_SHARED, O_RDONLY */
#define READ_SYSCALL	0x08	/* read(2) */
#define ADVISED		0x10	/* MADV_REPLICATE on DATA_PRIVATE */
#define REFUSED		0x20	/* MADV_NOREPLICATE on DATA_PRIVATE */

FIXTURE(policies) {
	char path[64];
	char prev_policy[32];
	int fd;
	int *status;		/* shared, NPAGES */
};

FIXTURE_VARIANT(policies) {
	const char *policy;
	unsigned int replicates;
};

FIXTURE_VARIANT_ADD(policies, none) {
	.policy = "none",
	.replicates = 0,
};

FIXTURE_VARIANT_ADD(policies, private) {
	.policy = "private",
	.replicates = EXEC_PRIVATE | DATA_PRIVATE | ADVISED,
};

FIXTURE_VARIANT_ADD(policies, text) {
	.policy = "text",
	.replicates = EXEC_PRIVATE | ADVISED,
};

FIXTURE_VARIANT_ADD(policies, readonly) {
	.policy = "readonly",
	.replicates = EXEC_PRIVATE | DATA_PRIVATE | SHARED_RO | READ_SYSCALL |
		      ADVISED,
};

FIXTURE_VARIANT_ADD(policies, madvise) {
	.policy = "madvise",
	.replicates = ADVISED,
};

struct map_way {
	int fd;
	int prot;
	int flags;
	int advice;		/* 0: none */
	int *status;
};

/* On node 1: map the file one way, touch it, report where it lives. */
static int map_way_job(void *arg)
{
	struct map_way *w = arg;
	unsigned char *p;

	p = mmap(NULL, LEN, w->prot, w->flags, w->fd, 0);
	if (p == MAP_FAILED)
		return 2;
	if (w->advice && madvise(p, LEN, w->advice))
		return 3;
	touch_pages(p, LEN);
	if (page_nodes(p, NPAGES, w->status))
		return 4;
	return pattern_mismatch(p, LEN, 0, SEED) >= 0 ? 5 : 0;
}

FIXTURE_SETUP(policies)
{
	if (nr_online_nodes() < 2)
		SKIP(return, "needs 2 NUMA nodes, the guest has %d",
		     nr_online_nodes());
	if (policy_require(variant->policy, self->prev_policy,
			   sizeof(self->prev_policy)))
		SKIP(return, "no replication policy \"%s\" in this kernel",
		     variant->policy);
	snprintf(self->path, sizeof(self->path), "policies.%d", getpid());
	self->fd = make_test_file(self->path, NPAGES, SEED);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, cache_file_on_node(self->fd, 0));
	ASSERT_EQ(0, warm_self_on_node(1));
	self->status = mmap(NULL, NPAGES * sizeof(int), PROT_READ | PROT_WRITE,
			    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->status);
}

FIXTURE_TEARDOWN(policies)
{
	if (self->path[0]) {
		close(self->fd);
		unlink(self->path);
	}
	if (self->prev_policy[0])
		policy_set(self->prev_policy);
}

/* Map one way from node 1: all pages on node 1 iff the policy replicates. */
static void check_way(struct __test_metadata *_metadata, int fd, int *status,
		      unsigned int replicates, unsigned int way, int prot,
		      int flags, int advice)
{
	struct map_way w = {
		.fd = fd, .prot = prot, .flags = flags, .advice = advice,
		.status = status,
	};
	int want = replicates & way ? 1 : 0;

	ASSERT_EQ(0, run_on_node(1, map_way_job, &w));
	TH_LOG("%zu of %d pages on node 1, %s", count_on_node(status, NPAGES, 1),
	       NPAGES, want ? "replicated" : "not replicated");
	ASSERT_EQ(NPAGES, count_on_node(status, NPAGES, want));
}

TEST_F(policies, exec_private_mapping)
{
	check_way(_metadata, self->fd, self->status, variant->replicates,
		  EXEC_PRIVATE, PROT_READ | PROT_EXEC, MAP_PRIVATE, 0);
}

TEST_F(policies, data_private_mapping)
{
	check_way(_metadata, self->fd, self->status, variant->replicates,
		  DATA_PRIVATE, PROT_READ, MAP_PRIVATE, 0);
}

TEST_F(policies, readonly_shared_mapping)
{
	check_way(_metadata, self->fd, self->status, variant->replicates,
		  SHARED_RO, PROT_READ, MAP_SHARED, 0);
}

TEST_F(policies, range_opted_in)
{
	check_way(_metadata, self->fd, self->status, variant->replicates,
		  ADVISED, PROT_READ, MAP_PRIVATE, MADV_REPLICATE);
}

TEST_F(policies, range_opted_out)
{
	check_way(_metadata, self->fd, self->status, variant->replicates,
		  REFUSED, PROT_READ, MAP_PRIVATE, MADV_NOREPLICATE);
}

/* On node 1: read(2) the whole file three times, checking the bytes. */
static int read_thrice_job(void *arg)
{
	int fd = *(int *)arg, round;
	unsigned char *buf = malloc(LEN);

	if (!buf)
		return 2;
	for (round = 0; round < 3; round++) {
		if (pread(fd, buf, LEN, 0) != LEN)
			return 3;
		if (pattern_mismatch(buf, LEN, 0, SEED) >= 0)
			return 4;
	}
	free(buf);
	return 0;
}

TEST_F(policies, read_syscall)
{
	long long read0 = vmstat_read("replica_read");
	long long alloc0 = vmstat_read("replica_alloc");
	long long served;

	ASSERT_EQ(0, run_on_node(1, read_thrice_job, &self->fd));
	served = vmstat_read("replica_read") - read0;
	TH_LOG("%lld replicas made, %lld reads served from replicas",
	       vmstat_read("replica_alloc") - alloc0, served);
	if (variant->replicates & READ_SYSCALL) {
		ASSERT_LE(NPAGES, served);
		ASSERT_LE(alloc0 + NPAGES, vmstat_read("replica_alloc"));
	} else {
		ASSERT_EQ(0, served);
		ASSERT_EQ(alloc0, vmstat_read("replica_alloc"));
	}
}

TEST_HARNESS_MAIN
