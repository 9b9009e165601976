// SPDX-License-Identifier: GPL-2.0
/*
 * The thrash guard: no replica is made of a file changed less than
 * settle_ms ago, and a file whose replicas were collapsed before anyone
 * used them again waits twice as long, until one of its replicas is used
 * again.  A build that writes what the other nodes read then wastes at
 * most 5% of the replicas it makes, where without the guard it wastes
 * many.
 *
 * Every selftest program turns the guard off when it starts (see
 * replica_util.c); these turn it on as each test needs.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../kselftest_harness.h"
#include "replica_util.h"

#define NPAGES		64
#define FILE_SEED	0x9a4d

/* The build: its toolchain, what each node compiles, what it links. */
#define BUILD_ROUNDS	5
#define TOOL_PAGES	64
#define OBJECT_PAGES	16
#define PROGRAM_PAGES	32

FIXTURE(guard) {
	char prev_policy[32];
	char path[64];
	int fd;
};

FIXTURE_SETUP(guard)
{
	char found[16];
	long room;

	self->fd = -1;
	if (nr_online_nodes() < 2)
		SKIP(return, "needs 2 NUMA nodes, the guest has %d",
		     nr_online_nodes());
	if (replica_knob_get("settle_ms", found, sizeof(found)))
		SKIP(return, "no /sys/kernel/mm/replica/settle_ms: %s",
		     strerror(errno));
	if (policy_require("private", self->prev_policy,
			   sizeof(self->prev_policy))) {
		self->prev_policy[0] = '\0';
		SKIP(return, "no replication policy \"private\"");
	}
	snprintf(self->path, sizeof(self->path), "guard.%d", getpid());
	self->fd = make_test_file(self->path, NPAGES, FILE_SEED);
	ASSERT_LE(0, self->fd);
	/*
	 * The file cached on node 0 with room for its replicas on node 1,
	 * where this program's own are made first, so that the counters
	 * move for the file only.
	 */
	room = room_then_cache(1, 4 * NPAGES, self->fd, 0);
	ASSERT_LE(4 * NPAGES, room)
		TH_LOG("node 1: %ld pages free above its high watermark", room);
	ASSERT_EQ(0, warm_self_on_node(1));
}

/*
 * In the parent, so that a failed step cannot leave the policy switched;
 * the descriptor is the child's, the name is enough.
 */
FIXTURE_TEARDOWN_PARENT(guard)
{
	if (self->fd >= 0)
		unlink(self->path);
	if (self->prev_policy[0])
		policy_set(self->prev_policy);
	replica_knob_set("settle_ms", "0");
}

/* Sleep until the file's ctime is at least @ms old. */
static int wait_unchanged_for(int fd, long ms)
{
	struct timespec now;
	struct stat st;
	long long due_ns, now_ns;

	if (fstat(fd, &st))
		return -1;
	due_ns = st.st_ctim.tv_sec * 1000000000LL + st.st_ctim.tv_nsec +
		 ms * 1000000LL;
	for (;;) {
		clock_gettime(CLOCK_REALTIME, &now);
		now_ns = now.tv_sec * 1000000000LL + now.tv_nsec;
		if (now_ns >= due_ns)
			return 0;
		usleep((due_ns - now_ns) / 1000 + 1);
	}
}

/* Map @fd from a new task on node 1; how many of its pages are local. */
static long node1_maps_locally(int fd)
{
	struct holder h;
	long local;

	if (holder_start(&h, fd, NPAGES, FILE_SEED, 1, 0))
		return -1;
	local = count_on_node(h.status, NPAGES, 1);
	if (holder_finish(&h))
		return -1;
	return local;
}

/* Change the file's ctime and collapse its replicas: same bytes again. */
static int rewrite_first_byte(const char *path)
{
	unsigned char byte = pattern_byte(FILE_SEED, 0);
	int fd = open(path, O_WRONLY);
	int err = 0;

	if (fd < 0)
		return -1;
	if (pwrite(fd, &byte, 1, 0) != 1)
		err = -1;
	return close(fd) ? -1 : err;
}

TEST_F(guard, settle_ms_rejects_bad_values)
{
	char buf[16];

	ASSERT_EQ(EINVAL, replica_knob_set("settle_ms", "600001"));
	ASSERT_EQ(EINVAL, replica_knob_set("settle_ms", "-1"));
	ASSERT_EQ(EINVAL, replica_knob_set("settle_ms", "two"));
	ASSERT_EQ(0, replica_knob_set("settle_ms", "600000"));
	ASSERT_EQ(0, replica_knob_get("settle_ms", buf, sizeof(buf)));
	ASSERT_STREQ("600000\n", buf);
}

TEST_F(guard, a_file_is_replicated_once_unchanged_for_settle_ms)
{
	long long made0, settle0, fail0;

	ASSERT_EQ(0, replica_knob_set("settle_ms", "600000"));
	made0 = vmstat_read("replica_alloc");
	settle0 = vmstat_read("replica_settle");
	fail0 = vmstat_read("replica_alloc_fail");
	ASSERT_EQ(0, node1_maps_locally(self->fd));
	ASSERT_EQ(0, vmstat_read("replica_alloc") - made0);
	/* Each page mapped from the original says why; none failed. */
	ASSERT_LE(NPAGES, vmstat_read("replica_settle") - settle0);
	ASSERT_EQ(0, vmstat_read("replica_alloc_fail") - fail0);

	ASSERT_EQ(0, replica_knob_set("settle_ms", "1000"));
	ASSERT_EQ(0, wait_unchanged_for(self->fd, 1100));
	ASSERT_EQ(NPAGES, node1_maps_locally(self->fd));
	ASSERT_LE(NPAGES, vmstat_read("replica_alloc") - made0);
}

TEST_F(guard, settle_ms_zero_replicates_a_file_just_written)
{
	long long settle0 = vmstat_read("replica_settle");

	ASSERT_EQ(0, replica_knob_set("settle_ms", "0"));
	ASSERT_EQ(NPAGES, node1_maps_locally(self->fd));
	ASSERT_EQ(0, vmstat_read("replica_settle") - settle0);
}

/*
 * settle_ms is 1.5 s.  Replicas that nobody maps again, collapsed by a
 * write, make the file wait 3 s; replicas mapped again bring it back to
 * 1.5 s.
 */
/* About 8 s of waiting, and five mappings, in an emulated guest. */
TEST_F_TIMEOUT(guard, a_file_whose_replicas_went_unused_waits_longer, 90)
{
	struct holder first, again;

	ASSERT_EQ(0, replica_knob_set("settle_ms", "1500"));
	ASSERT_EQ(0, wait_unchanged_for(self->fd, 1600));
	ASSERT_EQ(NPAGES, node1_maps_locally(self->fd));

	/* Collapsed unused: 3 s now. */
	ASSERT_EQ(0, rewrite_first_byte(self->path));
	ASSERT_EQ(0, wait_unchanged_for(self->fd, 1600));
	ASSERT_EQ(0, node1_maps_locally(self->fd))
		TH_LOG("replicated 1.6 s after a write that wasted replicas");
	ASSERT_EQ(0, wait_unchanged_for(self->fd, 3100));

	/* Made, then mapped by a second task: used again. */
	ASSERT_EQ(0, holder_start(&first, self->fd, NPAGES, FILE_SEED, 1, 0));
	ASSERT_EQ(0, holder_start(&again, self->fd, NPAGES, FILE_SEED, 1, 0));
	EXPECT_EQ(NPAGES, count_on_node(first.status, NPAGES, 1));
	EXPECT_EQ(NPAGES, count_on_node(again.status, NPAGES, 1));
	ASSERT_EQ(0, holder_finish(&first));
	ASSERT_EQ(0, holder_finish(&again));

	/* Back to 1.5 s. */
	ASSERT_EQ(0, rewrite_first_byte(self->path));
	ASSERT_EQ(0, wait_unchanged_for(self->fd, 1600));
	ASSERT_EQ(NPAGES, node1_maps_locally(self->fd))
		TH_LOG("not replicated 1.6 s after a write: reuse kept the 3 s wait");
}

/* The build's files, in its own directory. */
struct build {
	char dir[64];
	int nodes;
	int round;
	int node;	/* the node a job runs on */
};

static void build_path(const struct build *b, char *buf, size_t len,
		       const char *name, int node)
{
	if (node < 0)
		snprintf(buf, len, "%s/%s", b->dir, name);
	else
		snprintf(buf, len, "%s/%s.%d", b->dir, name, node);
}

/* Write @npages of pattern @seed from this task: cached on its node. */
static int build_write(const char *path, size_t npages, unsigned int seed)
{
	size_t len = npages * PAGE_SIZE_4K, i;
	unsigned char *buf = malloc(len);
	int fd, err = 0;

	if (!buf)
		return -1;
	for (i = 0; i < len; i++)
		buf[i] = pattern_byte(seed, i);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0755);
	if (fd < 0 || write(fd, buf, len) != (ssize_t)len)
		err = -1;
	free(buf);
	if (fd >= 0 && close(fd))
		err = -1;
	return err;
}

/* Map @npages of @path MAP_PRIVATE with @prot, read them, check them. */
static int build_read(const char *path, size_t npages, unsigned int seed,
		      int prot)
{
	size_t len = npages * PAGE_SIZE_4K;
	int fd = open(path, O_RDONLY);
	unsigned char *p;
	int err = 0;

	if (fd < 0)
		return -1;
	p = mmap(NULL, len, prot, MAP_PRIVATE, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return -1;
	touch_pages(p, len);
	if (pattern_mismatch(p, len, 0, seed) >= 0)
		err = -1;
	munmap(p, len);
	return err;
}

/* A compiler on its node: runs the toolchain, writes its object. */
static int compile_job(void *arg)
{
	const struct build *b = arg;
	char path[128];

	build_path(b, path, sizeof(path), "cc", -1);
	if (build_read(path, TOOL_PAGES, 1, PROT_READ | PROT_EXEC))
		return 1;
	build_path(b, path, sizeof(path), "include", -1);
	if (build_read(path, TOOL_PAGES, 2, PROT_READ))
		return 1;
	build_path(b, path, sizeof(path), "obj", b->node);
	return build_write(path, OBJECT_PAGES, 100 * b->round + b->node) ? 1 : 0;
}

/* The linker on its node: reads every object, writes the program. */
static int link_job(void *arg)
{
	const struct build *b = arg;
	char path[128];
	int node;

	for (node = 0; node < b->nodes; node++) {
		build_path(b, path, sizeof(path), "obj", node);
		if (build_read(path, OBJECT_PAGES, 100 * b->round + node,
			       PROT_READ))
			return 1;
	}
	build_path(b, path, sizeof(path), "prog", -1);
	return build_write(path, PROGRAM_PAGES, b->round) ? 1 : 0;
}

/* A test of the program on its node: runs it. */
static int run_job(void *arg)
{
	const struct build *b = arg;
	char path[128];

	build_path(b, path, sizeof(path), "prog", -1);
	return build_read(path, PROGRAM_PAGES, b->round,
			  PROT_READ | PROT_EXEC) ? 1 : 0;
}

static int build_remove(struct build *b)
{
	static const char * const names[] = { "cc", "include", "prog" };
	char path[128];
	int i;

	for (i = 0; i < 3; i++) {
		build_path(b, path, sizeof(path), names[i], -1);
		unlink(path);
	}
	for (i = 0; i < b->nodes; i++) {
		build_path(b, path, sizeof(path), "obj", i);
		unlink(path);
	}
	return rmdir(b->dir);
}

/*
 * A parallel build, BUILD_ROUNDS times over, under settle_ms @settle_ms:
 * a compiler on every node maps the toolchain, cached on node 0, and
 * writes an object; a linker on a node that changes each round maps every
 * object and writes a program; a test on every node runs the program.
 * Each round rewrites every object and the program.  The toolchain is
 * installed settle_ms before the build starts, as a system's is.  @made
 * and @wasted get the replica pages made and wasted, counted once every
 * file is gone, @held the pages mapped from originals that had not
 * settled.
 */
static int build_workload(const char *settle_ms, long long *made,
			  long long *wasted, long long *held)
{
	struct build b = { .nodes = nr_online_nodes() };
	long long made0, wasted0, held0;
	char cc[128], include[128];
	int fd;

	snprintf(b.dir, sizeof(b.dir), "build.%d", getpid());
	if (replica_knob_set("settle_ms", settle_ms) || mkdir(b.dir, 0755))
		return -1;
	build_path(&b, cc, sizeof(cc), "cc", -1);
	build_path(&b, include, sizeof(include), "include", -1);
	if (build_write(cc, TOOL_PAGES, 1) ||
	    build_write(include, TOOL_PAGES, 2) || drop_all_caches())
		return -1;
	fd = open(cc, O_RDONLY);
	if (fd < 0 || cache_file_on_node(fd, 0))
		return -1;
	close(fd);
	/* Written last, it is the one to wait for. */
	fd = open(include, O_RDONLY);
	if (fd < 0 || cache_file_on_node(fd, 0) ||
	    wait_unchanged_for(fd, atol(settle_ms) + 100))
		return -1;
	close(fd);

	made0 = vmstat_read("replica_alloc");
	wasted0 = vmstat_read("replica_wasted");
	held0 = vmstat_read("replica_settle");
	for (b.round = 0; b.round < BUILD_ROUNDS; b.round++) {
		for (b.node = 0; b.node < b.nodes; b.node++)
			if (run_on_node(b.node, compile_job, &b))
				return -1;
		b.node = b.round % b.nodes;
		if (run_on_node(b.node, link_job, &b))
			return -1;
		for (b.node = 0; b.node < b.nodes; b.node++)
			if (run_on_node(b.node, run_job, &b))
				return -1;
	}
	/* Gone with their files: every replica's fate is known. */
	if (build_remove(&b) || drop_all_caches())
		return -1;
	*made = vmstat_read("replica_alloc") - made0;
	*wasted = vmstat_read("replica_wasted") - wasted0;
	*held = vmstat_read("replica_settle") - held0;
	return 0;
}

/* Two builds of five rounds, a task on each node a step of each. */
TEST_F_TIMEOUT(guard, a_build_wastes_at_most_5_percent_of_its_replicas, 180)
{
	const char *settle_ms = settle_ms_as_found();
	long long made, wasted, held, made_off, wasted_off, held_off;
	long long toolchain = (nr_online_nodes() - 1) * 2LL * TOOL_PAGES;

	if (!strcmp(settle_ms, "0"))
		SKIP(return, "the thrash guard was off when the test started");

	ASSERT_EQ(0, build_workload("0", &made_off, &wasted_off, &held_off));
	TH_LOG("settle_ms 0: %lld replica pages made, %lld wasted, %lld held back",
	       made_off, wasted_off, held_off);
	ASSERT_EQ(0, build_workload(settle_ms, &made, &wasted, &held));
	TH_LOG("settle_ms %s: %lld replica pages made, %lld wasted, %lld held back",
	       settle_ms, made, wasted, held);

	/* Without the guard, the build is one that wastes replicas. */
	ASSERT_LT(made_off, wasted_off * 20);
	/* With it, the toolchain is still replicated on every other node. */
	ASSERT_LE(toolchain, made);
	ASSERT_LE(wasted * 20, made);
	/* What it did not replicate, it says. */
	ASSERT_EQ(0, held_off);
	ASSERT_LT(0, held);
}

TEST_HARNESS_MAIN
