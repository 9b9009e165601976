// SPDX-License-Identifier: GPL-2.0
/*
 * Page-cache pages that have replicas move as they do without replication.
 * A task on node 1 holds replicas of a file cached on node 0; moving the
 * page cache to node 1 with move_pages(2) or mbind(2) succeeds with the
 * status and errors of a kernel without replication, the replicas are
 * dropped, and every reader sees the file's bytes, then and after a write.
 * A task that moves the pages it maps through replicas moves the page
 * cache they copy: the same status as the same call without replicas.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/mempolicy.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../kselftest_harness.h"
#include "replica_util.h"

#define NPAGES		64
#define LEN		(NPAGES * PAGE_SIZE_4K)
#define SEED		0x3a11
#define NEW_SEED	0x3a12

static long sys_mbind(void *addr, unsigned long len, int mode,
		      const unsigned long *nodemask, unsigned long maxnode,
		      unsigned int flags)
{
	return syscall(__NR_mbind, addr, len, mode, nodemask, maxnode, flags);
}

/* Bind [p, p + LEN) to @node and move what is mapped there. */
static long mbind_move(void *p, int node)
{
	unsigned long mask = 1UL << node;

	return sys_mbind(p, LEN, MPOL_BIND, &mask, sizeof(mask) * 8,
			 MPOL_MF_MOVE | MPOL_MF_STRICT);
}

FIXTURE(migrate) {
	char prev_policy[32];
	char path[64];
	int fd;
	struct holder holder;
	int holding;
};

FIXTURE_SETUP(migrate)
{
	self->fd = -1;
	if (nr_online_nodes() < 2)
		SKIP(return, "needs 2 NUMA nodes, the guest has %d",
		     nr_online_nodes());
	if (policy_require("private", self->prev_policy,
			   sizeof(self->prev_policy)))
		SKIP(return, "no replication policy \"private\" in this kernel");
	snprintf(self->path, sizeof(self->path), "migrate.%d", getpid());
	self->fd = make_test_file(self->path, NPAGES, SEED);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, cache_file_on_node(self->fd, 0));
	ASSERT_EQ(0, warm_self_on_node(1));
	/* A task on node 1 holds replicas of every page. */
	ASSERT_EQ(0, holder_start(&self->holder, self->fd, NPAGES, SEED, 1, 0));
	self->holding = 1;
	ASSERT_EQ(NPAGES, count_on_node(self->holder.status, NPAGES, 1));
}

FIXTURE_TEARDOWN(migrate)
{
	if (self->holding)
		holder_finish(&self->holder);
	if (self->fd >= 0) {
		close(self->fd);
		unlink(self->path);
	}
	if (self->prev_policy[0])
		policy_set(self->prev_policy);
}

/* The file's pages as the caller maps them: MAP_PRIVATE, touched. */
static unsigned char *map_file(int fd)
{
	unsigned char *p = mmap(NULL, LEN, PROT_READ, MAP_PRIVATE, fd, 0);

	if (p != MAP_FAILED)
		touch_pages(p, LEN);
	return p;
}

struct reader_arg {
	const char *path;
	unsigned int seed;
};

/* A reader mapping the file anew: 0 if it sees pattern @seed. */
static int reader_sees(void *arg)
{
	const struct reader_arg *a = arg;
	int fd = open(a->path, O_RDONLY);
	unsigned char *p;

	if (fd < 0)
		return 2;
	p = map_file(fd);
	if (p == MAP_FAILED)
		return 3;
	return pattern_mismatch(p, LEN, 0, a->seed) >= 0 ? 1 : 0;
}

/*
 * After the page cache moved: the holder sees the file's bytes, and once
 * the file is written, readers on both nodes see the new ones.
 */
static void check_bytes_after_move(struct __test_metadata *_metadata,
				   struct holder *holder, const char *path,
				   const unsigned char *p)
{
	struct reader_arg arg = { .path = path, .seed = NEW_SEED };
	unsigned char buf[LEN];
	int fd, i;

	ASSERT_EQ(0, holder_finish(holder));
	EXPECT_EQ(-1, pattern_mismatch(p, LEN, 0, SEED));

	fd = open(path, O_RDWR);
	ASSERT_LE(0, fd);
	for (i = 0; i < LEN; i++)
		buf[i] = pattern_byte(NEW_SEED, i);
	ASSERT_EQ(LEN, pwrite(fd, buf, LEN, 0));
	close(fd);
	EXPECT_EQ(-1, pattern_mismatch(p, LEN, 0, NEW_SEED));
	EXPECT_EQ(0, run_on_node(1, reader_sees, &arg));
	EXPECT_EQ(0, run_on_node(0, reader_sees, &arg));
}

/* move_pages(2) of the NPAGES mapped at @p to @node. */
static long move_all_to(unsigned char *p, int node, int *status)
{
	int nodes[NPAGES], i;
	void *pages[NPAGES];

	for (i = 0; i < NPAGES; i++) {
		pages[i] = p + i * PAGE_SIZE_4K;
		nodes[i] = node;
	}
	return sys_move_pages(0, NPAGES, pages, nodes, status, MPOL_MF_MOVE);
}

/*
 * The return and status of the same move_pages(2) of a file made and
 * cached the same way, with replication off.  Not all 1: on XFS, which
 * caches large folios, 6.12 gives -EBUSY for a page whose folio an earlier
 * page of the call took already.
 */
static long move_without_replicas(const char *policy, int *status)
{
	char path[64];
	unsigned char *p;
	long ret = -1;
	int fd;

	snprintf(path, sizeof(path), "migrate-none.%d", getpid());
	if (policy_set("none"))
		return -1;
	fd = make_test_file(path, NPAGES, SEED);
	if (fd >= 0 && !cache_file_on_node(fd, 0)) {
		p = map_file(fd);
		if (p != MAP_FAILED) {
			ret = move_all_to(p, 1, status);
			munmap(p, LEN);
		}
	}
	if (fd >= 0) {
		close(fd);
		unlink(path);
	}
	if (policy_set(policy))
		return -1;
	return ret;
}

TEST_F(migrate, move_pages_moves_a_replicated_original)
{
	long long evict0 = vmstat_read("replica_evict");
	int status[NPAGES], none_status[NPAGES];
	unsigned char *p;
	long ret;

	/* Switching to none drops the holder's replicas: make them anew. */
	self->holding = 0;
	ASSERT_EQ(0, holder_finish(&self->holder));
	ASSERT_EQ(0, move_without_replicas("private", none_status));
	ASSERT_EQ(0, holder_start(&self->holder, self->fd, NPAGES, SEED, 1, 0));
	self->holding = 1;
	ASSERT_EQ(NPAGES, count_on_node(self->holder.status, NPAGES, 1));
	p = map_file(self->fd);
	ASSERT_NE(MAP_FAILED, p);
	ASSERT_EQ(0, page_nodes(p, NPAGES, status));
	ASSERT_EQ(NPAGES, count_on_node(status, NPAGES, 0));
	ret = move_all_to(p, 1, status);
	TH_LOG("move_pages: %ld, %zu pages on node 1, status[0] %d (none: %zu on node 1)",
	       ret, count_on_node(status, NPAGES, 1), status[0],
	       count_on_node(none_status, NPAGES, 1));
	ASSERT_EQ(0, ret);
	EXPECT_EQ(0, memcmp(none_status, status, sizeof(status)));
	ASSERT_EQ(0, page_nodes(p, NPAGES, status));
	EXPECT_EQ(NPAGES, count_on_node(status, NPAGES, 1));
	/* The replicas went with the page cache they held. */
	EXPECT_LE(evict0 + NPAGES, vmstat_read("replica_evict"));
	self->holding = 0;
	check_bytes_after_move(_metadata, &self->holder, self->path, p);
	/* The holder maps the moved page cache, local to it now. */
	EXPECT_EQ(NPAGES, count_on_node(self->holder.status + 2 * NPAGES,
					NPAGES, 1));
}

TEST_F(migrate, mbind_moves_a_replicated_original)
{
	int status[NPAGES];
	unsigned char *p;
	long ret;

	p = map_file(self->fd);
	ASSERT_NE(MAP_FAILED, p);
	ret = mbind_move(p, 1);
	TH_LOG("mbind(MPOL_MF_MOVE | MPOL_MF_STRICT): %ld (%s)", ret,
	       ret ? strerror(errno) : "ok");
	ASSERT_EQ(0, ret);
	ASSERT_EQ(0, page_nodes(p, NPAGES, status));
	EXPECT_EQ(NPAGES, count_on_node(status, NPAGES, 1));
	self->holding = 0;
	check_bytes_after_move(_metadata, &self->holder, self->path, p);
}

struct move_arg {
	int fd;
	int use_mbind;
};

/*
 * On node 1, map the file (replicas), then move the pages to node 0 with
 * move_pages(2) or mbind(2): the page cache is there already, so both
 * succeed without moving anything, as without replication.
 */
static int move_own_replicas(void *arg)
{
	const struct move_arg *a = arg;
	int status[NPAGES];
	unsigned char *p;

	p = map_file(a->fd);
	if (p == MAP_FAILED)
		return 2;
	if (page_nodes(p, NPAGES, status) ||
	    count_on_node(status, NPAGES, 1) != NPAGES)
		return 3;
	if (a->use_mbind) {
		if (!mbind_move(p, 0))
			return 0;
		fprintf(stderr, "mbind: %s\n", strerror(errno));
		return 4;
	}
	if (move_all_to(p, 0, status))
		return 5;
	/* -EBUSY or -EACCES: the replica was taken for the page. */
	if (count_on_node(status, NPAGES, 0) != NPAGES) {
		fprintf(stderr, "move_pages status[0] %d\n", status[0]);
		return 6;
	}
	return 0;
}

/*
 * The holder lets go first: a replica mapped by two tasks would be shared,
 * which move_pages(2) refuses and mbind(2) skips without MPOL_MF_MOVE_ALL.
 * The replicas stay in the store for the next task on node 1.
 */
TEST_F(migrate, move_pages_of_a_replica_moves_its_original)
{
	struct move_arg arg = { .fd = self->fd, .use_mbind = 0 };

	self->holding = 0;
	ASSERT_EQ(0, holder_finish(&self->holder));
	EXPECT_EQ(0, run_on_node(1, move_own_replicas, &arg));
}

TEST_F(migrate, mbind_of_a_replica_moves_its_original)
{
	struct move_arg arg = { .fd = self->fd, .use_mbind = 1 };

	self->holding = 0;
	ASSERT_EQ(0, holder_finish(&self->holder));
	EXPECT_EQ(0, run_on_node(1, move_own_replicas, &arg));
}

/*
 * On node 1, map the file (replicas) and ask move_pages(2) to move it to
 * node 1 without MPOL_MF_MOVE_ALL, while a task on node 0 maps the page
 * cache: the pages are shared, and every status is -EACCES, as without
 * replication, where both tasks would map the page cache.
 */
static int move_shared_replicas(void *arg)
{
	int status[NPAGES];
	unsigned char *p;

	p = map_file(*(int *)arg);
	if (p == MAP_FAILED)
		return 2;
	if (page_nodes(p, NPAGES, status) ||
	    count_on_node(status, NPAGES, 1) != NPAGES)
		return 3;
	if (move_all_to(p, 1, status))
		return 4;
	if (count_on_node(status, NPAGES, -EACCES) != NPAGES) {
		fprintf(stderr, "move_pages status[0] %d\n", status[0]);
		return 5;
	}
	return 0;
}

TEST_F(migrate, move_pages_refuses_a_page_that_others_map)
{
	struct holder on0;

	self->holding = 0;
	ASSERT_EQ(0, holder_finish(&self->holder));
	ASSERT_EQ(0, holder_start(&on0, self->fd, NPAGES, SEED, 0, 0));
	EXPECT_EQ(0, run_on_node(1, move_shared_replicas, &self->fd));
	EXPECT_EQ(0, holder_finish(&on0));
	/* Nothing moved: the page cache is on node 0. */
	EXPECT_EQ(NPAGES, count_on_node(on0.status + 2 * NPAGES, NPAGES, 0));
}

TEST_HARNESS_MAIN
