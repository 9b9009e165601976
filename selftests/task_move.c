// SPDX-License-Identifier: GPL-2.0
/*
 * Replicas follow the tasks that map them.  A task that runs text cached on
 * node 0 and is moved to node 1 (sched_setaffinity(), a cpuset) maps node
 * 1's replicas of it once back in user space; one moved the other way maps
 * the page cache, local again.  Without replication the pages stay where
 * the task first faulted them.
 *
 * Threads share page tables: while all threads of a process run on one
 * node they map its replicas; once they span nodes they map the page cache
 * itself, as without replication, so that no thread reads remote memory
 * that it would read locally without replication.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "../kselftest_harness.h"
#include "replica_util.h"

#define NPAGES		64
#define LEN		(NPAGES * PAGE_SIZE_4K)
#define SEED		0x7a5c
/* How long a moved task runs before its pages are looked at. */
#define RUN_SECONDS	3

/* A job's exit status when the cgroup v2 cpuset controller is missing. */
#define NO_CPUSET	99

FIXTURE(task_move) {
	char path[64];
	char prev_policy[32];
	char cgroup[128];
	int fd;
	int *on_node;		/* shared: pages on each node, per phase */
};

FIXTURE_SETUP(task_move)
{
	self->fd = -1;
	if (nr_online_nodes() < 2)
		SKIP(return, "needs 2 NUMA nodes, the guest has %d",
		     nr_online_nodes());
	if (policy_require("text", self->prev_policy,
			   sizeof(self->prev_policy)))
		SKIP(return, "no replication policy \"text\" in this kernel");
	self->on_node = mmap(NULL, PAGE_SIZE_4K, PROT_READ | PROT_WRITE,
			     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->on_node);
	snprintf(self->path, sizeof(self->path), "task_move.%d", getpid());
	self->fd = make_test_file(self->path, NPAGES, SEED);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, cache_file_on_node(self->fd, 0));
}

FIXTURE_TEARDOWN(task_move)
{
	if (self->fd >= 0) {
		close(self->fd);
		unlink(self->path);
	}
	if (self->cgroup[0])
		rmdir(self->cgroup);
	if (self->prev_policy[0])
		policy_set(self->prev_policy);
}

/* Map the file as text and run through it. */
static unsigned char *map_text(int fd)
{
	unsigned char *p = mmap(NULL, LEN, PROT_READ | PROT_EXEC, MAP_PRIVATE,
				fd, 0);

	if (p != MAP_FAILED)
		touch_pages(p, LEN);
	return p;
}

/* How many pages of @p are on @node, -1 on error. */
static int pages_on(const unsigned char *p, int node)
{
	int status[NPAGES];

	if (page_nodes((void *)p, NPAGES, status))
		return -1;
	return count_on_node(status, NPAGES, node);
}

/* Run through @p for RUN_SECONDS, as a task running its text does. */
static void keep_running(const unsigned char *p)
{
	time_t end = time(NULL) + RUN_SECONDS;

	while (time(NULL) < end)
		touch_pages(p, LEN);
}

/* Only the CPUs of @node: the memory policy stays as it was. */
static int run_on_cpus_of(int node)
{
	cpu_set_t set;

	if (node_cpus(node, &set))
		return -1;
	return sched_setaffinity(0, sizeof(set), &set);
}

struct move_job {
	int fd;
	int to;			/* the node the task moves to */
	const char *cgroup;	/* moved by joining this cpuset, if set */
	int *on_node;		/* [0]: before, on the node it left; [1]: after, on @to */
};

/* Map the file where the task runs, move to node @to, run, look. */
static int move_job(void *arg)
{
	const struct move_job *j = arg;
	unsigned char *p = map_text(j->fd);
	int from = !j->to;

	if (p == MAP_FAILED)
		return 2;
	j->on_node[0] = pages_on(p, from);
	if (j->cgroup) {
		if (cgroup_enter(j->cgroup))
			return NO_CPUSET;
	} else if (run_on_cpus_of(j->to)) {
		return 3;
	}
	keep_running(p);
	j->on_node[1] = pages_on(p, j->to);
	return 0;
}

/* Before the move, all on the node it left; after, all on its new one. */
static void expect_moved_with_the_task(struct __test_metadata *_metadata,
				       const struct move_job *job)
{
	TH_LOG("before the move: %d of %d pages on node %d; after %d s on node %d: %d (%d%%) there",
	       job->on_node[0], NPAGES, !job->to, RUN_SECONDS, job->to,
	       job->on_node[1], job->on_node[1] * 100 / NPAGES);
	EXPECT_EQ(NPAGES, job->on_node[0]);
	EXPECT_EQ(NPAGES, job->on_node[1]);
}

TEST_F(task_move, setaffinity_to_another_node_maps_its_replicas)
{
	long long follow0 = vmstat_read("replica_follow");
	struct move_job job = { .fd = self->fd, .to = 1,
				.on_node = self->on_node };

	ASSERT_EQ(0, run_on_node(0, move_job, &job));
	expect_moved_with_the_task(_metadata, &job);
	EXPECT_LT(follow0, vmstat_read("replica_follow"));
}

TEST_F(task_move, setaffinity_back_to_the_page_cache_maps_it)
{
	struct move_job job = { .fd = self->fd, .to = 0,
				.on_node = self->on_node };

	ASSERT_EQ(0, run_on_node(1, move_job, &job));
	expect_moved_with_the_task(_metadata, &job);
}

TEST_F(task_move, cpuset_change_maps_replicas)
{
	struct move_job job = { .fd = self->fd, .to = 1,
				.on_node = self->on_node };
	char cpus[64], name[128];
	int ret;

	if (cgroup_create_tagged(self->cgroup, sizeof(self->cgroup), "cpuset") ||
	    write_text_file("/sys/fs/cgroup/cgroup.subtree_control", "+cpuset")) {
		self->cgroup[0] = '\0';
		SKIP(return, "no cgroup v2 cpuset controller: %s",
		     strerror(errno));
	}
	snprintf(name, sizeof(name), "/sys/devices/system/node/node1/cpulist");
	ASSERT_EQ(0, read_text_file(name, cpus, sizeof(cpus)));
	ASSERT_EQ(0, cgroup_write(self->cgroup, "cpuset.cpus", cpus));
	job.cgroup = self->cgroup;
	ret = run_on_node(0, move_job, &job);
	if (ret == NO_CPUSET)
		SKIP(return, "cannot join a cpuset cgroup");
	ASSERT_EQ(0, ret);
	expect_moved_with_the_task(_metadata, &job);
}

/* The threads of one process, each bound to the CPUs of a node. */
struct threads {
	int fd;
	int main_node, other_node;
	int main_moves_to;	/* once the file is mapped, or -1 */
	unsigned char *p;
	int *on_node;
	pthread_barrier_t step;
};

/*
 * The other thread maps the file, from its node, once both threads are
 * where they belong; if the main thread moves then, it runs through the
 * file again after the move.
 */
static void *other_thread(void *arg)
{
	struct threads *t = arg;

	if (run_on_cpus_of(t->other_node))
		return (void *)1;
	pthread_barrier_wait(&t->step);
	t->p = map_text(t->fd);
	if (t->p == MAP_FAILED)
		return (void *)2;
	if (t->main_moves_to >= 0) {
		pthread_barrier_wait(&t->step);
		pthread_barrier_wait(&t->step);
		touch_pages(t->p, LEN);
	}
	return NULL;
}

static int threads_job(void *arg)
{
	struct threads *t = arg;
	pthread_t other;
	void *ret;

	if (run_on_cpus_of(t->main_node) ||
	    pthread_barrier_init(&t->step, NULL, 2) ||
	    pthread_create(&other, NULL, other_thread, t))
		return 2;
	pthread_barrier_wait(&t->step);
	if (t->main_moves_to >= 0) {
		pthread_barrier_wait(&t->step);
		if (run_on_cpus_of(t->main_moves_to))
			return 3;
		pthread_barrier_wait(&t->step);
	}
	if (pthread_join(other, &ret) || ret)
		return 4;
	t->on_node[0] = pages_on(t->p, 0);
	t->on_node[1] = pages_on(t->p, 1);
	return 0;
}

/*
 * One thread on node 1 maps text cached on node 0 while another thread of
 * its process runs on node 0: the page cache is mapped, which node 0 reads
 * locally, as without replication.
 */
TEST_F(task_move, threads_on_two_nodes_map_the_page_cache)
{
	struct threads t = { .fd = self->fd, .main_node = 0, .other_node = 1,
			     .main_moves_to = -1, .on_node = self->on_node };

	ASSERT_EQ(0, run_on_node(0, threads_job, &t));
	TH_LOG("%d pages on node 0, %d on node 1", t.on_node[0], t.on_node[1]);
	EXPECT_EQ(NPAGES, t.on_node[0]);
}

/* All threads on node 1: they map node 1's replicas. */
TEST_F(task_move, threads_on_one_node_map_its_replicas)
{
	struct threads t = { .fd = self->fd, .main_node = 1, .other_node = 1,
			     .main_moves_to = -1, .on_node = self->on_node };

	ASSERT_EQ(0, run_on_node(1, threads_job, &t));
	TH_LOG("%d pages on node 0, %d on node 1", t.on_node[0], t.on_node[1]);
	EXPECT_EQ(NPAGES, t.on_node[1]);
}

/*
 * All threads on node 1 map its replicas; then one thread moves to node 0,
 * where the page cache is: the replicas are unmapped, and the page cache
 * is what both threads map from then on.
 */
TEST_F(task_move, a_thread_moving_to_the_page_cache_unmaps_the_replicas)
{
	struct threads t = { .fd = self->fd, .main_node = 1, .other_node = 1,
			     .main_moves_to = 0, .on_node = self->on_node };

	ASSERT_EQ(0, run_on_node(1, threads_job, &t));
	TH_LOG("%d pages on node 0, %d on node 1", t.on_node[0], t.on_node[1]);
	EXPECT_EQ(NPAGES, t.on_node[0]);
}

TEST_HARNESS_MAIN
