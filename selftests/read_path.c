// SPDX-License-Identifier: GPL-2.0
/*
 * The read(2) path under the policy "readonly": a page read remotely gets
 * a replica on the reader's node at the read_threshold-th read, reads are
 * then served from it (replica_read), with the same bytes through read(2),
 * pread(2), readv(2), splice(2) and sendfile(2); a write is seen by the
 * next read.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/uio.h>
#include <unistd.h>

#include "../kselftest_harness.h"
#include "replica_util.h"

#define NPAGES	16
#define LEN	(NPAGES * PAGE_SIZE_4K)
#define SEED	0x4ead

/* How a node-1 reader reads the whole file, and what it must see. */
enum way { WAY_READ, WAY_PREAD, WAY_READV, WAY_SPLICE, WAY_SENDFILE };

struct reader {
	int fd;
	enum way way;
	unsigned int seed;
};

/* Read the file into @buf from a pipe filled by splice or sendfile. */
static int read_through_pipe(int fd, unsigned char *buf, int use_sendfile)
{
	size_t done = 0;
	int p[2];

	if (pipe(p))
		return -1;
	while (done < LEN) {
		loff_t off = done;
		off_t soff = done;
		ssize_t n, m;

		n = use_sendfile ? sendfile(p[1], fd, &soff, LEN - done) :
			splice(fd, &off, p[1], NULL, LEN - done, 0);
		if (n <= 0)
			break;
		m = read(p[0], buf + done, n);
		if (m != n)
			break;
		done += n;
	}
	close(p[0]);
	close(p[1]);
	return done == LEN ? 0 : -1;
}

static int reader_job(void *arg)
{
	struct reader *r = arg;
	unsigned char *buf = malloc(LEN);
	struct iovec iov[2];
	int err = 0;

	if (!buf)
		return 2;
	switch (r->way) {
	case WAY_READ:
		err = lseek(r->fd, 0, SEEK_SET) || read(r->fd, buf, LEN) != LEN;
		break;
	case WAY_PREAD:
		err = pread(r->fd, buf, LEN, 0) != LEN;
		break;
	case WAY_READV:
		iov[0].iov_base = buf;
		iov[0].iov_len = LEN / 2 + 100;
		iov[1].iov_base = buf + LEN / 2 + 100;
		iov[1].iov_len = LEN / 2 - 100;
		err = preadv(r->fd, iov, 2, 0) != LEN;
		break;
	case WAY_SPLICE:
	case WAY_SENDFILE:
		err = read_through_pipe(r->fd, buf, r->way == WAY_SENDFILE);
		break;
	}
	if (err)
		return 3;
	if (pattern_mismatch(buf, LEN, 0, r->seed) >= 0)
		return 4;
	free(buf);
	return 0;
}

FIXTURE(read_path) {
	char path[64];
	char prev_policy[32];
	char prev_threshold[16];
	int fd;
	struct reader r;
};

FIXTURE_SETUP(read_path)
{
	if (nr_online_nodes() < 2)
		SKIP(return, "needs 2 NUMA nodes, the guest has %d",
		     nr_online_nodes());
	if (policy_require("readonly", self->prev_policy,
			   sizeof(self->prev_policy)))
		SKIP(return, "no replication policy \"readonly\" in this kernel");
	ASSERT_EQ(0, replica_knob_get("read_threshold", self->prev_threshold,
				      sizeof(self->prev_threshold)));
	ASSERT_EQ(0, replica_knob_set("read_threshold", "2"));
	snprintf(self->path, sizeof(self->path), "read_path.%d", getpid());
	self->fd = make_test_file(self->path, NPAGES, SEED);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, cache_file_on_node(self->fd, 0));
	ASSERT_EQ(0, warm_self_on_node(1));
	self->r.fd = self->fd;
	self->r.seed = SEED;
}

FIXTURE_TEARDOWN(read_path)
{
	if (self->path[0]) {
		close(self->fd);
		unlink(self->path);
	}
	if (self->prev_threshold[0])
		replica_knob_set("read_threshold", self->prev_threshold);
	replica_knob_set("settle_ms", "0");
	if (self->prev_policy[0])
		policy_set(self->prev_policy);
}

struct counts {
	long long alloc, read, replicas, settle;
};

static void counts_now(struct counts *c)
{
	c->alloc = vmstat_read("replica_alloc");
	c->read = vmstat_read("replica_read");
	c->replicas = node_vmstat_read(1, "nr_replica_pages");
	c->settle = vmstat_read("replica_settle");
}

/* One read from node 1 one way; the counter deltas it caused. */
static int read_once(struct reader *r, enum way how, struct counts *delta)
{
	struct counts before, after;
	int err;

	r->way = how;
	counts_now(&before);
	err = run_on_node(1, reader_job, r);
	counts_now(&after);
	delta->alloc = after.alloc - before.alloc;
	delta->read = after.read - before.read;
	delta->replicas = after.replicas - before.replicas;
	delta->settle = after.settle - before.settle;
	return err;
}

/* The threshold-th remote read makes the replicas, later ones use them. */
static void check_threshold(struct __test_metadata *_metadata,
			    struct reader *r, enum way how)
{
	struct counts d;

	ASSERT_EQ(0, read_once(r, how, &d));
	TH_LOG("read 1: %lld made, %lld served", d.alloc, d.read);
	ASSERT_EQ(0, d.alloc);
	ASSERT_EQ(0, d.read);

	ASSERT_EQ(0, read_once(r, how, &d));
	TH_LOG("read 2: %lld made, %lld served", d.alloc, d.read);
	ASSERT_EQ(NPAGES, d.alloc);
	ASSERT_EQ(NPAGES, d.replicas);

	ASSERT_EQ(0, read_once(r, how, &d));
	TH_LOG("read 3: %lld made, %lld served", d.alloc, d.read);
	ASSERT_EQ(0, d.alloc);
	ASSERT_EQ(NPAGES, d.read);
}

TEST_F(read_path, read)
{
	check_threshold(_metadata, &self->r, WAY_READ);
}

TEST_F(read_path, pread)
{
	check_threshold(_metadata, &self->r, WAY_PREAD);
}

TEST_F(read_path, readv)
{
	check_threshold(_metadata, &self->r, WAY_READV);
}

TEST_F(read_path, splice)
{
	check_threshold(_metadata, &self->r, WAY_SPLICE);
}

TEST_F(read_path, sendfile)
{
	check_threshold(_metadata, &self->r, WAY_SENDFILE);
}

TEST_F(read_path, threshold_one_replicates_at_once)
{
	struct counts d;

	ASSERT_EQ(0, replica_knob_set("read_threshold", "1"));
	ASSERT_EQ(0, read_once(&self->r, WAY_PREAD, &d));
	ASSERT_EQ(NPAGES, d.alloc);
	ASSERT_EQ(0, read_once(&self->r, WAY_PREAD, &d));
	ASSERT_EQ(NPAGES, d.read);
}

TEST_F(read_path, local_reads_make_no_replica)
{
	struct counts before, after;
	int i;

	counts_now(&before);
	for (i = 0; i < 3; i++) {
		self->r.way = WAY_PREAD;
		ASSERT_EQ(0, run_on_node(0, reader_job, &self->r));
	}
	counts_now(&after);
	ASSERT_EQ(before.alloc, after.alloc);
	ASSERT_EQ(before.read, after.read);
}

TEST_F(read_path, a_write_is_read_at_once)
{
	unsigned char buf[LEN];
	struct counts d;
	int fd, i;

	check_threshold(_metadata, &self->r, WAY_PREAD);
	fd = open(self->path, O_WRONLY);
	ASSERT_LE(0, fd);
	for (i = 0; i < LEN; i++)
		buf[i] = pattern_byte(SEED + 1, i);
	ASSERT_EQ(LEN, pwrite(fd, buf, LEN, 0));
	self->r.seed = SEED + 1;
	/* Served by the page cache, while the writer is there. */
	ASSERT_EQ(0, read_once(&self->r, WAY_PREAD, &d));
	ASSERT_EQ(0, d.read);
	ASSERT_EQ(0, d.alloc);
	close(fd);
	/* And from new replicas of the new bytes once it is gone. */
	ASSERT_EQ(0, read_once(&self->r, WAY_PREAD, &d));
	ASSERT_EQ(0, read_once(&self->r, WAY_PREAD, &d));
	ASSERT_EQ(NPAGES, d.alloc);
	ASSERT_EQ(0, read_once(&self->r, WAY_PREAD, &d));
	ASSERT_EQ(NPAGES, d.read);
}

/*
 * The thrash guard holds back the read that would make the replicas of a
 * file changed less than settle_ms ago, and counts only that one: a read
 * below the threshold reads the original with or without the guard.
 * Each reader also counts, while the guard is on, the pages of its own
 * program and libraries (as new as the guest's disk) that fault-around
 * maps from their originals instead of leaving to a fault: the same
 * pages in every reader, forked from this one, so the read below the
 * threshold measures them.
 */
TEST_F(read_path, a_file_just_changed_is_read_from_its_originals)
{
	long long reader_own;
	struct counts d;
	int i;

	ASSERT_EQ(0, replica_knob_set("read_threshold", "3"));
	ASSERT_EQ(0, read_once(&self->r, WAY_PREAD, &d));
	ASSERT_EQ(0, d.read);

	ASSERT_EQ(0, replica_knob_set("settle_ms", "600000"));
	ASSERT_EQ(0, read_once(&self->r, WAY_PREAD, &d));
	reader_own = d.settle;
	TH_LOG("read 2, threshold 3: %lld made, %lld held back, none the file's",
	       d.replicas, reader_own);
	ASSERT_EQ(0, d.replicas);
	ASSERT_EQ(0, d.read);
	for (i = 3; i <= 4; i++) {
		ASSERT_EQ(0, read_once(&self->r, WAY_PREAD, &d));
		TH_LOG("read %d, threshold 3: %lld made, %lld served, %lld held back",
		       i, d.replicas, d.read, d.settle);
		ASSERT_EQ(0, d.replicas);
		ASSERT_EQ(0, d.read);
		ASSERT_EQ(NPAGES, d.settle - reader_own);
	}

	/* With the guard off, the next read makes them. */
	ASSERT_EQ(0, replica_knob_set("settle_ms", "0"));
	ASSERT_EQ(0, read_once(&self->r, WAY_PREAD, &d));
	TH_LOG("guard off: %lld made, %lld held back", d.replicas, d.settle);
	ASSERT_EQ(NPAGES, d.replicas);
	ASSERT_EQ(0, d.settle);
}

TEST_F(read_path, threshold_rejects_bad_values)
{
	char buf[16];

	ASSERT_EQ(EINVAL, replica_knob_set("read_threshold", "0"));
	ASSERT_EQ(EINVAL, replica_knob_set("read_threshold", "1001"));
	ASSERT_EQ(EINVAL, replica_knob_set("read_threshold", "two"));
	ASSERT_EQ(0, replica_knob_get("read_threshold", buf, sizeof(buf)));
	ASSERT_STREQ("2\n", buf);
}

/* Pages of @fd's first NPAGES that are in the page cache (mincore(2)). */
static int cached_pages(int fd)
{
	unsigned char vec[NPAGES];
	void *p = mmap(NULL, LEN, PROT_READ, MAP_SHARED, fd, 0);
	int i, n = 0;

	if (p == MAP_FAILED || mincore(p, LEN, vec))
		return -1;
	for (i = 0; i < NPAGES; i++)
		n += vec[i] & 1;
	munmap(p, LEN);
	return n;
}

/*
 * Remote reads are counted against the page cache that holds the page:
 * once reclaim takes that page, the count is gone with it, and a page
 * cached again needs read_threshold reads of its own before it is
 * replicated.
 */
TEST_F(read_path, read_counts_go_with_reclaimed_page_cache)
{
	char cg[128];
	struct counts d;

	if (cgroup_create(cg, sizeof(cg)))
		SKIP(return, "no memory cgroup: %s", strerror(errno));
	/* The page cache is charged to a cgroup that reclaim is asked of. */
	ASSERT_EQ(0, drop_file_cache(self->fd));
	ASSERT_EQ(0, cgroup_enter(cg));
	ASSERT_EQ(0, cache_file_on_node(self->fd, 0));
	ASSERT_EQ(0, cgroup_leave());

	ASSERT_EQ(0, read_once(&self->r, WAY_PREAD, &d));
	ASSERT_EQ(0, d.alloc);
	/* memory.reclaim may say EAGAIN: what it took is what counts. */
	cgroup_write(cg, "memory.reclaim", "64M");
	ASSERT_EQ(0, cached_pages(self->fd));

	ASSERT_EQ(0, cache_file_on_node(self->fd, 0));
	ASSERT_EQ(0, read_once(&self->r, WAY_PREAD, &d));
	TH_LOG("first read of the page cache read in again: %lld replicas made",
	       d.alloc);
	EXPECT_EQ(0, d.alloc);
	cgroup_remove(cg);
}

TEST_HARNESS_MAIN
