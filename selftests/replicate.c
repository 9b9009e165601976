// SPDX-License-Identifier: GPL-2.0
/*
 * A file cached on node 0 and mapped MAP_PRIVATE by a task on node 1 is
 * mapped from replicas on node 1, with the same bytes; a second task on
 * node 1 maps the same replicas; fault-around never maps a remote page
 * where a replica should be used.  A shared futex in a replicated page is
 * the file's: a task that maps the page cache wakes a waiter on a replica.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/futex.h>

#include "../kselftest_harness.h"
#include "replica_util.h"

#define NPAGES	64
#define SEED	0x7e91

struct map_job {
	int fd;
	size_t touch;				/* pages to touch from 0 */
	int *status;				/* NPAGES, shared */
	unsigned long long *pfns;		/* NPAGES, shared */
	long long *bad;				/* first wrong offset, shared */
};

/* Map the file, touch @touch pages, report nodes, PFNs and wrong bytes. */
static int map_job(void *arg)
{
	struct map_job *job = arg;
	size_t len = NPAGES * PAGE_SIZE_4K;
	unsigned char *p;

	p = mmap(NULL, len, PROT_READ, MAP_PRIVATE, job->fd, 0);
	if (p == MAP_FAILED)
		return 2;
	touch_pages(p, job->touch * PAGE_SIZE_4K);
	if (page_nodes(p, NPAGES, job->status))
		return 3;
	if (job->pfns && page_pfns(p, NPAGES, job->pfns))
		return 4;
	*job->bad = pattern_mismatch(p, job->touch * PAGE_SIZE_4K, 0, SEED);
	munmap(p, len);
	return 0;
}

FIXTURE(replicate) {
	char path[64];
	char prev_policy[32];
	int fd;
	struct map_job job;
};

FIXTURE_SETUP(replicate)
{
	if (nr_online_nodes() < 2)
		SKIP(return, "needs 2 NUMA nodes, the guest has %d",
		     nr_online_nodes());
	if (policy_require("private", self->prev_policy,
			   sizeof(self->prev_policy)))
		SKIP(return, "no replication policy \"private\" in this kernel");
	snprintf(self->path, sizeof(self->path), "replicate.%d", getpid());
	self->fd = make_test_file(self->path, NPAGES, SEED);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, cache_file_on_node(self->fd, 0));
	/* Replicas of this program itself must not disturb the counters. */
	ASSERT_EQ(0, warm_self_on_node(1));

	self->job.fd = self->fd;
	self->job.touch = NPAGES;
	self->job.status = mmap(NULL, NPAGES * sizeof(int) +
				2 * NPAGES * sizeof(unsigned long long) +
				sizeof(long long), PROT_READ | PROT_WRITE,
				MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->job.status);
	self->job.pfns = (unsigned long long *)(self->job.status + NPAGES);
	self->job.bad = (long long *)(self->job.pfns + 2 * NPAGES);
}

FIXTURE_TEARDOWN(replicate)
{
	if (self->path[0]) {
		close(self->fd);
		unlink(self->path);
	}
	if (self->prev_policy[0])
		policy_set(self->prev_policy);
}

TEST_F(replicate, node1_maps_local_replicas_of_node0_cache)
{
	long long pages0 = node_vmstat_read(1, "nr_replica_pages");
	long long alloc0 = vmstat_read("replica_alloc");
	unsigned long long *first = self->job.pfns + NPAGES;
	long long map0, alloc1;
	int i;

	ASSERT_LE(0, pages0);
	/* The originals live on node 0 ... */
	ASSERT_EQ(0, run_on_node(0, map_job, &self->job));
	ASSERT_EQ(NPAGES, count_on_node(self->job.status, NPAGES, 0));

	/* ... and a task on node 1 gets every page from node 1. */
	ASSERT_EQ(0, run_on_node(1, map_job, &self->job));
	for (i = 0; i < NPAGES; i++)
		if (self->job.status[i] != 1)
			TH_LOG("page %d is on node %d", i, self->job.status[i]);
	ASSERT_EQ(NPAGES, count_on_node(self->job.status, NPAGES, 1));
	ASSERT_EQ(-1, *self->job.bad);
	ASSERT_LE(pages0 + NPAGES, node_vmstat_read(1, "nr_replica_pages"));
	alloc1 = vmstat_read("replica_alloc");
	ASSERT_LE(alloc0 + NPAGES, alloc1);
	memcpy(first, self->job.pfns, NPAGES * sizeof(*first));

	/* A second task on node 1 maps the same replicas: none is made. */
	map0 = vmstat_read("replica_map");
	ASSERT_EQ(0, run_on_node(1, map_job, &self->job));
	ASSERT_EQ(NPAGES, count_on_node(self->job.status, NPAGES, 1));
	ASSERT_EQ(-1, *self->job.bad);
	ASSERT_EQ(0, memcmp(first, self->job.pfns, NPAGES * sizeof(*first)));
	ASSERT_LE(map0 + NPAGES, vmstat_read("replica_map"));
	ASSERT_EQ(alloc1, vmstat_read("replica_alloc"));
}

TEST_F(replicate, node0_maps_its_local_originals)
{
	long long alloc0 = vmstat_read("replica_alloc");

	ASSERT_EQ(0, run_on_node(0, map_job, &self->job));
	ASSERT_EQ(NPAGES, count_on_node(self->job.status, NPAGES, 0));
	ASSERT_EQ(-1, *self->job.bad);
	ASSERT_EQ(alloc0, vmstat_read("replica_alloc"));
}

TEST_F(replicate, fault_around_maps_no_remote_page)
{
	int i, mapped = 0;

	/* One touch: fault-around would map the neighbours as well. */
	self->job.touch = 1;
	ASSERT_EQ(0, run_on_node(1, map_job, &self->job));
	ASSERT_EQ(1, self->job.status[0]);
	for (i = 0; i < NPAGES; i++) {
		if (self->job.status[i] == -ENOENT)
			continue;
		mapped++;
		if (self->job.status[i] != 1)
			TH_LOG("page %d mapped from node %d", i,
			       self->job.status[i]);
		ASSERT_EQ(1, self->job.status[i]);
	}
	TH_LOG("%d of %d pages mapped by one fault", mapped, NPAGES);

	/* Once the replicas exist, fault-around maps them. */
	self->job.touch = NPAGES;
	ASSERT_EQ(0, run_on_node(1, map_job, &self->job));
	self->job.touch = 1;
	ASSERT_EQ(0, run_on_node(1, map_job, &self->job));
	for (i = 0, mapped = 0; i < NPAGES; i++)
		mapped += self->job.status[i] == 1;
	TH_LOG("%d of %d replicas mapped by one fault", mapped, NPAGES);
	ASSERT_LT(1, mapped);
	ASSERT_EQ(0, count_on_node(self->job.status, NPAGES, 0));
}

/* Waiting on a futex in a replica: 0 once woken. */
struct futex_job {
	int fd;
	int *waiting;		/* shared: set before the wait */
};

static int futex_wait_job(void *arg)
{
	struct futex_job *job = arg;
	struct timespec timeout = { .tv_sec = 30 };
	unsigned int *word, value;
	int node;

	word = mmap(NULL, PAGE_SIZE_4K, PROT_READ, MAP_PRIVATE, job->fd, 0);
	if (word == MAP_FAILED)
		return 2;
	/* The read faults in the replica. */
	value = __atomic_load_n(word, __ATOMIC_RELAXED);
	if (page_nodes(word, 1, &node) || node != 1)
		return 3;
	__atomic_store_n(job->waiting, 1, __ATOMIC_SEQ_CST);
	/* Not FUTEX_PRIVATE_FLAG: keyed by the file and the page's index. */
	if (syscall(SYS_futex, word, FUTEX_WAIT, value, &timeout, NULL, 0)) {
		fprintf(stderr, "FUTEX_WAIT: %s\n", strerror(errno));
		return errno == ETIMEDOUT ? 4 : 5;
	}
	return 0;
}

TEST_F(replicate, shared_futex_in_a_replica_is_the_files)
{
	struct futex_job job = { .fd = self->fd, .waiting = self->job.status };
	unsigned int *word;
	int status, tries;
	bool exited = false;
	long woken = 0;
	pid_t pid;

	word = mmap(NULL, PAGE_SIZE_4K, PROT_READ, MAP_PRIVATE, self->fd, 0);
	ASSERT_NE(MAP_FAILED, word);
	*job.waiting = 0;
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(run_on_node(1, futex_wait_job, &job));
	/* Wake until the waiter is woken or gone: it may not sleep yet. */
	for (tries = 0; tries < 2000 && !woken && !exited; tries++) {
		exited = waitpid(pid, &status, WNOHANG) == pid;
		if (!exited && __atomic_load_n(job.waiting, __ATOMIC_SEQ_CST))
			woken = syscall(SYS_futex, word, FUTEX_WAKE, 1, NULL,
					NULL, 0);
		usleep(10000);
	}
	if (!exited) {
		if (!woken)
			kill(pid, SIGKILL);
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
	}
	TH_LOG("FUTEX_WAKE on the page cache woke %ld waiter(s) on node 1",
	       woken);
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	EXPECT_EQ(1, woken);
}

TEST_HARNESS_MAIN
