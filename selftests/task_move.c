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
#include <sys/wait.h>
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

/* How many of the @n pages at @p are mapped, from pagemap (no faults). */
static int pages_present(const unsigned char *p, int n)
{
	unsigned long long entry;
	int fd = open("/proc/self/pagemap", O_RDONLY), i, present = 0;

	if (fd < 0)
		return -1;
	for (i = 0; i < n; i++) {
		off_t off = ((unsigned long)p / PAGE_SIZE_4K + i) * sizeof(entry);

		if (pread(fd, &entry, sizeof(entry), off) != sizeof(entry)) {
			present = -1;
			break;
		}
		present += !!(entry & (1ULL << 63));
	}
	close(fd);
	return present;
}

/*
 * A writable shared mapping never holds replicas: a task that moves node
 * keeps it mapped, as without replication.
 */
struct shared_writer {
	const char *path;
	int present[2];		/* pages mapped before and after the move */
};

static int shared_writer_job(void *arg)
{
	struct shared_writer *w = arg;
	unsigned char *p;
	int fd, i;

	fd = open(w->path, O_RDWR);
	if (fd < 0)
		return 2;
	p = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return 3;
	for (i = 0; i < NPAGES; i++)
		p[i * PAGE_SIZE_4K] = pattern_byte(SEED, i * PAGE_SIZE_4K);
	w->present[0] = pages_present(p, NPAGES);
	if (run_on_cpus_of(1))
		return 4;
	w->present[1] = pages_present(p, NPAGES);
	return 0;
}

TEST_F(task_move, a_writable_shared_mapping_is_left_alone)
{
	struct shared_writer *w = (struct shared_writer *)self->on_node;
	char prev[32];

	/* The policy that replicates shared mappings of files. */
	ASSERT_EQ(0, policy_require("readonly", prev, sizeof(prev)));
	w->path = self->path;
	ASSERT_EQ(0, run_on_node(0, shared_writer_job, w));
	TH_LOG("pages mapped: %d before the move to node 1, %d after",
	       w->present[0], w->present[1]);
	EXPECT_EQ(NPAGES, w->present[0]);
	EXPECT_EQ(NPAGES, w->present[1]);
}

/* Threads parked on nodes 0 and 1 while the main thread moves about. */
struct spanning {
	pthread_barrier_t parked, done;
	int node;
};

static void *parked_thread(void *arg)
{
	struct spanning *s = arg;

	if (run_on_cpus_of(s->node))
		return (void *)1;
	pthread_barrier_wait(&s->parked);
	pthread_barrier_wait(&s->done);
	return NULL;
}

#define SPANNING_MOVES	6

/*
 * While the threads of a process span nodes, its faults map the page
 * cache: moving its threads about unmaps nothing, as without replication.
 */
struct spanning_moves {
	int fd;
	int present[SPANNING_MOVES];	/* pages mapped after each move */
	long long follows;		/* replica_follow events meanwhile */
};

static int spanning_job(void *arg)
{
	struct spanning_moves *m = arg;
	struct spanning s[2];
	int i;
	pthread_t t[2];
	unsigned char *p;
	void *ret;

	for (i = 0; i < 2; i++) {
		s[i].node = i;
		if (pthread_barrier_init(&s[i].parked, NULL, 2) ||
		    pthread_barrier_init(&s[i].done, NULL, 2) ||
		    pthread_create(&t[i], NULL, parked_thread, &s[i]))
			return 2;
		pthread_barrier_wait(&s[i].parked);
	}
	p = map_text(m->fd);
	if (p == MAP_FAILED)
		return 3;
	/*
	 * A first move unmaps what the process may have inherited mapped
	 * from replicas; from then on, its faults map the page cache.
	 */
	if (run_on_cpus_of(0))
		return 4;
	touch_pages(p, LEN);
	m->follows = vmstat_read("replica_follow");
	for (i = 0; i < SPANNING_MOVES; i++) {
		if (run_on_cpus_of(!(i % 2)))
			return 4;
		m->present[i] = pages_present(p, NPAGES);
		touch_pages(p, LEN);
	}
	m->follows = vmstat_read("replica_follow") - m->follows;
	for (i = 0; i < 2; i++) {
		pthread_barrier_wait(&s[i].done);
		if (pthread_join(t[i], &ret) || ret)
			return 5;
	}
	return 0;
}

TEST_F(task_move, moves_of_a_spanning_process_unmap_nothing)
{
	struct spanning_moves *m = (struct spanning_moves *)self->on_node;
	int i;

	m->fd = self->fd;
	ASSERT_EQ(0, run_on_node(1, spanning_job, m));
	for (i = 0; i < SPANNING_MOVES; i++) {
		TH_LOG("move %d, to node %d: %d of %d pages still mapped", i,
		       !(i % 2), m->present[i], NPAGES);
		EXPECT_EQ(NPAGES, m->present[i]);
	}
	EXPECT_EQ(0, m->follows);
}

/* The node of the CPU the caller runs on, or -1. */
static int current_node(void)
{
	int cpu = sched_getcpu(), node;
	cpu_set_t set;

	for (node = 0; node < nr_online_nodes(); node++)
		if (!node_cpus(node, &set) && CPU_ISSET(cpu, &set))
			return node;
	return -1;
}

#define FORK_TRIES	40
#define FORK_NOT_ON_NODE0	99

/*
 * Node 1 maps replicas in a private mapping that fork copies (it has
 * anonymous pages); a child that the scheduler places on node 0 maps the
 * page cache there, local, not the replicas of node 1 it inherited.
 */
static int fork_job(void *arg)
{
	int fd = *(int *)arg, try, status, node;
	unsigned char *p;
	cpu_set_t all;

	p = mmap(NULL, LEN, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE,
		 fd, 0);
	if (p == MAP_FAILED)
		return 2;
	touch_pages(p, LEN);
	p[0] = 1;	/* the mapping gets anonymous pages: fork copies it */
	if (pages_on(p + PAGE_SIZE_4K, 1) < 0)
		return 3;
	/* Free to go anywhere: fork balancing places each child. */
	CPU_ZERO(&all);
	for (node = 0; node < 2; node++) {
		cpu_set_t set;
		int cpu;

		if (node_cpus(node, &set))
			return 4;
		for (cpu = 0; cpu < CPU_SETSIZE; cpu++)
			if (CPU_ISSET(cpu, &set))
				CPU_SET(cpu, &all);
	}
	if (sched_setaffinity(0, sizeof(all), &all))
		return 5;
	for (try = 0; try < FORK_TRIES; try++) {
		pid_t pid = fork();

		if (pid < 0)
			return 6;
		if (!pid) {
			int status[NPAGES - 1];

			if (current_node() != 0)
				_exit(FORK_NOT_ON_NODE0);
			touch_pages(p + PAGE_SIZE_4K, LEN - PAGE_SIZE_4K);
			if (page_nodes(p + PAGE_SIZE_4K, NPAGES - 1, status))
				_exit(7);
			if (current_node() != 0)
				_exit(FORK_NOT_ON_NODE0);
			_exit(count_on_node(status, NPAGES - 1, 0) ==
			      NPAGES - 1 ? 0 : 8);
		}
		if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
			return 9;
		if (WEXITSTATUS(status) != FORK_NOT_ON_NODE0)
			return WEXITSTATUS(status);
	}
	return FORK_NOT_ON_NODE0;
}

TEST_F(task_move, a_child_placed_on_another_node_maps_its_pages)
{
	int ret = run_on_node(1, fork_job, &self->fd);

	if (ret == FORK_NOT_ON_NODE0)
		SKIP(return, "fork balancing placed none of %d children on node 0",
		     FORK_TRIES);
	EXPECT_EQ(0, ret);
}

TEST_HARNESS_MAIN
