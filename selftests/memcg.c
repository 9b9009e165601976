// SPDX-License-Identifier: GPL-2.0
/*
 * Replicas are charged to the memory cgroup of the task that makes them,
 * like page cache: mapping a file cached on node 0 from a cgroup on node 1
 * raises the cgroup's memory.current by the replicas it made.  A cgroup at
 * its limit gets its replicas reclaimed, not its tasks OOM-killed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../kselftest_harness.h"
#include "replica_util.h"

#define NPAGES		1024
#define LEN		(NPAGES * PAGE_SIZE_4K)

#define FILE_SEED	5
#define LIMIT_MB	16
#define ANON_MB		12

/*
 * A cgroup, and a file cached on node 0 by a task outside it, so that the
 * cgroup's tasks on node 1 make replicas of it.
 */
FIXTURE(memcg) {
	struct cgroup_file cf;
};

FIXTURE_SETUP(memcg)
{
	char why[128];
	int rc = cgroup_file_setup(&self->cf, "memcg", NPAGES, FILE_SEED, why,
				   sizeof(why));

	if (rc > 0)
		SKIP(return, "%s", why);
	ASSERT_EQ(0, rc);
}

/*
 * In the parent: a failed ASSERT in the test's process skips a teardown
 * there (the harness's fork result does not survive its longjmp), which
 * would leave the policy switched.
 */
FIXTURE_TEARDOWN_PARENT(memcg)
{
	cgroup_file_teardown(&self->cf);
}

/*
 * Wait for room for replicas on node 1, then cache the file on node 0: a
 * test's first step, not the fixture's, so that the teardown undoes the
 * fixture when it fails.  The test before may have left node 1 full
 * (pressure does, on purpose, and so may the other test here) and its
 * memory takes a while to come back under TCG; below the high watermark
 * no replica is made, by design.  The originals are charged to the root
 * cgroup's reader, on node 0.
 */
static void room_on_node1_then_cache(struct __test_metadata *_metadata,
				     int fd)
{
	long room = room_then_cache(1, 2 * NPAGES, fd, 0);

	ASSERT_LE(2 * NPAGES, room)
		TH_LOG("node 1: %ld pages free above its high watermark after 30 s",
		       room);
}

/* Node 1 as a replica allocation sees it, to tell why one was refused. */
struct node1_room {
	long free, high, free_in_order4_blocks;
	long long alloc_fail;
};

static void node1_room_read(struct node1_room *r)
{
	r->free = node_free_pages(1);
	r->high = node_zoneinfo(1, "high");
	r->free_in_order4_blocks = node_free_in_blocks(1, 4);
	r->alloc_fail = vmstat_read("replica_alloc_fail");
}

struct map_args {
	int fd;
	const char *cgroup;
	long long *before, *after;	/* memory.current, shared */
	int *on_node1;			/* shared */
	struct node1_room *room;	/* before and after mapping, shared */
};

/* Join the cgroup, then map and touch the file. */
static int map_in_cgroup(void *arg)
{
	struct map_args *a = arg;
	int status[NPAGES];
	unsigned char *p;

	if (cgroup_enter(a->cgroup))
		return 2;
	*a->before = cgroup_read(a->cgroup, "memory.current");
	node1_room_read(&a->room[0]);
	p = cgroup_map_touched(NULL, a->fd, LEN);
	if (!p)
		return 3;
	node1_room_read(&a->room[1]);
	*a->after = cgroup_read(a->cgroup, "memory.current");
	if (page_nodes(p, NPAGES, status))
		return 4;
	*a->on_node1 = count_on_node(status, NPAGES, 1);
	return 0;
}

TEST_F(memcg, replicas_are_charged_to_the_cgroup_that_makes_them)
{
	struct map_args a = {
		.fd = self->cf.fd,
		.cgroup = self->cf.cgroup,
		.before = self->cf.shared,
		.after = self->cf.shared + 1,
		.on_node1 = (int *)(self->cf.shared + 2),
		.room = (struct node1_room *)(self->cf.shared + 4),
	};
	int i;

	room_on_node1_then_cache(_metadata, self->cf.fd);
	ASSERT_EQ(0, run_on_node(1, map_in_cgroup, &a));
	TH_LOG("memory.current %lld -> %lld, %d of %d pages on node 1",
	       *a.before, *a.after, *a.on_node1, NPAGES);
	for (i = 0; i < 2; i++)
		TH_LOG("node 1 %s: %ld free, high %ld, order>=4 %ld, alloc_fail %lld",
		       i ? "after" : "before", a.room[i].free, a.room[i].high,
		       a.room[i].free_in_order4_blocks, a.room[i].alloc_fail);
	ASSERT_EQ(NPAGES, *a.on_node1);
	/* At least the replicas; page tables and the stack come on top. */
	ASSERT_LE(*a.before + LEN, *a.after);
}

struct limit_args {
	int fd;
	const char *cgroup;
	long long *replicas;	/* the cgroup's replicas, shared */
};

/*
 * In a cgroup limited to LIMIT_MB, make LEN of replicas, then touch
 * ANON_MB of anonymous memory, which fits only if the replicas give way
 * (there is no swap).  The file's bytes must be right before and after.
 */
static int fill_limited_cgroup(void *arg)
{
	struct limit_args *a = arg;
	size_t anon = ANON_MB << 20;
	unsigned char *p;
	char *q;

	p = cgroup_map_touched(a->cgroup, a->fd, LEN);
	if (!p)
		return 3;
	*a->replicas = node_vmstat_read(1, "nr_replica_pages");
	if (pattern_mismatch(p, LEN, 0, FILE_SEED) >= 0)
		return 4;
	q = mmap(NULL, anon, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (q == MAP_FAILED)
		return 5;
	memset(q, 1, anon);
	return pattern_mismatch(p, LEN, 0, FILE_SEED) >= 0 ? 6 : 0;
}

/* The "oom_kill N" line of the cgroup's memory.events. */
static long long cgroup_oom_kills(const char *cgroup)
{
	return cgroup_read_key(cgroup, "memory.events", "oom_kill");
}

TEST_F(memcg, a_cgroup_at_its_limit_reclaims_replicas_instead_of_oom)
{
	struct limit_args a = {
		.fd = self->cf.fd,
		.cgroup = self->cf.cgroup,
		.replicas = self->cf.shared,
	};
	long long reclaim0, replicas0;
	char max[32];
	int rc;

	room_on_node1_then_cache(_metadata, self->cf.fd);
	snprintf(max, sizeof(max), "%d", LIMIT_MB << 20);
	ASSERT_EQ(0, cgroup_write(self->cf.cgroup, "memory.max", max));
	replicas0 = node_vmstat_read(1, "nr_replica_pages");
	reclaim0 = vmstat_read("replica_reclaim");

	rc = run_on_node(1, fill_limited_cgroup, &a);
	TH_LOG("node 1 replicas %lld -> %lld, then %lld reclaimed; oom kills %lld",
	       replicas0, *a.replicas, vmstat_read("replica_reclaim") - reclaim0,
	       cgroup_oom_kills(self->cf.cgroup));
	/* Killed by the OOM killer: 128 + SIGKILL. */
	ASSERT_EQ(0, rc);
	ASSERT_EQ(0, cgroup_oom_kills(self->cf.cgroup));
	ASSERT_LE(replicas0 + NPAGES / 2, *a.replicas);
	ASSERT_LT(reclaim0, vmstat_read("replica_reclaim"));
}

/* How far above its usage the cgroup's limit is set: 32 pages. */
#define HEADROOM	(128 << 10)

struct fault_args {
	int fd;
	const char *cgroup;
	long long *faults;	/* minor faults to map the file, shared */
	long long *made;	/* replicas made meanwhile, shared */
};

/*
 * Join the cgroup, set its limit just above what it uses, and map the
 * file: count the minor faults that takes.
 */
static int faults_at_limit(void *arg)
{
	struct fault_args *a = arg;
	struct rusage before, after;
	char max[32];
	unsigned char *p;

	if (cgroup_enter(a->cgroup))
		return 2;
	snprintf(max, sizeof(max), "%lld",
		 cgroup_read(a->cgroup, "memory.current") + HEADROOM);
	if (cgroup_write(a->cgroup, "memory.max", max))
		return 3;
	p = mmap(NULL, LEN, PROT_READ, MAP_PRIVATE, a->fd, 0);
	*a->made = vmstat_read("replica_alloc");
	if (p == MAP_FAILED || getrusage(RUSAGE_SELF, &before))
		return 4;
	touch_pages(p, LEN);
	if (getrusage(RUSAGE_SELF, &after))
		return 5;
	*a->made = vmstat_read("replica_alloc") - *a->made;
	*a->faults = after.ru_minflt - before.ru_minflt;
	return pattern_mismatch(p, LEN, 0, FILE_SEED) >= 0 ? 6 : 0;
}

/*
 * A cgroup near its limit makes the replicas its headroom takes, and its
 * faults otherwise map as many pages each as without replication:
 * fault-around does not leave each page to a fault of its own that then
 * fails to charge a replica.  A fault per replica made is the price of
 * making it; a fault more per window is allowed for the window in which
 * the room runs out.
 */
TEST_F(memcg, a_cgroup_at_its_limit_faults_as_without_replication)
{
	long long faults_none, faults_private, made;
	struct fault_args a = {
		.fd = self->cf.fd,
		.cgroup = self->cf.cgroup,
		.faults = self->cf.shared,
		.made = self->cf.shared + 1,
	};

	room_on_node1_then_cache(_metadata, self->cf.fd);
	ASSERT_EQ(0, policy_set("none"));
	ASSERT_EQ(0, run_on_node(1, faults_at_limit, &a));
	faults_none = *self->cf.shared;
	ASSERT_EQ(0, cgroup_write(self->cf.cgroup, "memory.max", "max"));
	ASSERT_EQ(0, policy_set("private"));
	ASSERT_EQ(0, run_on_node(1, faults_at_limit, &a));
	faults_private = *self->cf.shared;
	made = self->cf.shared[1];
	TH_LOG("faults to map %d pages at the limit: %lld under none, %lld under private",
	       NPAGES, faults_none, faults_private);
	TH_LOG("replicas made under private: %lld", made);
	EXPECT_LE(faults_private, faults_none + made + 16);
}

TEST_HARNESS_MAIN
