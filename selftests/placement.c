// SPDX-License-Identifier: GPL-2.0
/*
 * Baseline placement of page-cache pages: a page lives on the node of the
 * task that first read it, and without replication a task on another node
 * maps that same remote page.
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

#define NPAGES	64
#define SEED	0x5eed

struct file_job {
	int fd;
	int want_node;
};

/* Fill the page cache of the file from this task, with read(2). */
static int read_file_job(void *arg)
{
	struct file_job *job = arg;

	return read_whole_file(job->fd) ? 1 : 0;
}

/*
 * Map the file MAP_PRIVATE, touch every page with a read, and check that
 * each lives on job->want_node and holds the right bytes.
 */
static int map_and_check_job(void *arg)
{
	struct file_job *job = arg;
	size_t len = NPAGES * PAGE_SIZE_4K;
	int status[NPAGES];
	unsigned char *p;
	size_t i, on_node;
	off_t bad;

	p = mmap(NULL, len, PROT_READ, MAP_PRIVATE, job->fd, 0);
	if (p == MAP_FAILED) {
		fprintf(stderr, "mmap: %s\n", strerror(errno));
		return 2;
	}
	touch_pages(p, len);
	if (page_nodes(p, NPAGES, status)) {
		fprintf(stderr, "move_pages: %s\n", strerror(errno));
		return 3;
	}
	on_node = count_on_node(status, NPAGES, job->want_node);
	if (on_node != NPAGES) {
		for (i = 0; i < NPAGES && status[i] == job->want_node; i++)
			;
		fprintf(stderr,
			"%zu of %d pages on node %d; page %zu is on %d\n",
			on_node, NPAGES, job->want_node, i, status[i]);
		return 4;
	}
	bad = pattern_mismatch(p, len, 0, SEED);
	if (bad >= 0) {
		fprintf(stderr, "wrong byte at offset %lld\n", (long long)bad);
		return 5;
	}
	munmap(p, len);
	return 0;
}

FIXTURE(placement) {
	char path[64];
	char prev_policy[32];
	struct file_job job;
};

FIXTURE_SETUP(placement)
{
	snprintf(self->path, sizeof(self->path), "placement.%d", getpid());
	self->job.fd = make_test_file(self->path, NPAGES, SEED);
	ASSERT_LE(0, self->job.fd);
}

FIXTURE_TEARDOWN(placement)
{
	close(self->job.fd);
	unlink(self->path);
	if (self->prev_policy[0])
		policy_set(self->prev_policy);
}

static void fill_cache_on(struct __test_metadata *_metadata,
			  struct file_job *job, int node)
{
	ASSERT_EQ(0, run_on_node(node, read_file_job, job));
}

TEST_F(placement, read_on_node0_lives_on_node0)
{
	fill_cache_on(_metadata, &self->job, 0);
	self->job.want_node = 0;
	ASSERT_EQ(0, run_on_node(0, map_and_check_job, &self->job));
}

TEST_F(placement, read_on_node1_lives_on_node1)
{
	if (nr_online_nodes() < 2)
		SKIP(return, "needs 2 NUMA nodes, the guest has %d",
		     nr_online_nodes());
	fill_cache_on(_metadata, &self->job, 1);
	self->job.want_node = 1;
	ASSERT_EQ(0, run_on_node(1, map_and_check_job, &self->job));
}

TEST_F(placement, node1_maps_node0_original_without_replication)
{
	if (nr_online_nodes() < 2)
		SKIP(return, "needs 2 NUMA nodes, the guest has %d",
		     nr_online_nodes());
	/* Without CONFIG_MM_REPLICA there is no policy: nothing replicates. */
	if (policy_require("none", self->prev_policy,
			   sizeof(self->prev_policy)))
		ASSERT_EQ(-1, policy_get(self->prev_policy,
					 sizeof(self->prev_policy)));
	fill_cache_on(_metadata, &self->job, 0);
	self->job.want_node = 0;
	ASSERT_EQ(0, run_on_node(1, map_and_check_job, &self->job));
}

TEST_HARNESS_MAIN
