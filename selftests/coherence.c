// SPDX-License-Identifier: GPL-2.0
/*
 * No reader ever sees stale bytes: a task on node 1 maps replicas of a file
 * cached on node 0, then a task on node 0 writes the file in every way
 * there is.  As soon as the write returns, the reader sees the new bytes
 * (or SIGBUS past EOF, as without replication), and the file's replicas
 * are gone; once the last writer is gone, replicas come back on the next
 * fault.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../kselftest_harness.h"
#include "replica_util.h"

#define NPAGES	32
#define LEN	(NPAGES * PAGE_SIZE_4K)

/* What the reader must see, shared between the test and the reader. */
struct model {
	size_t size;			/* file size */
	unsigned char bytes[LEN];	/* file content up to size */
	int status[NPAGES];		/* where the reader's pages live */
	long long bad;			/* first wrong offset, or -1 */
	int sigbus;			/* pages that raised SIGBUS */
	int sigbus_wrong;		/* pages whose SIGBUS was (not) due */
};

static sigjmp_buf bus_jump;

static void on_sigbus(int sig)
{
	siglongjmp(bus_jump, 1);
}

/* Read page @i of @p; 1 if it raised SIGBUS. */
static int read_page(const unsigned char *p, int i, unsigned char *copy)
{
	if (sigsetjmp(bus_jump, 1))
		return 1;
	memcpy(copy, p + i * PAGE_SIZE_4K, PAGE_SIZE_4K);
	return 0;
}

/* Read every page of the reader's mapping and compare it with the model. */
static void check_against_model(const unsigned char *p, struct model *m)
{
	unsigned char copy[PAGE_SIZE_4K];
	int i;

	m->bad = -1;
	m->sigbus = 0;
	m->sigbus_wrong = 0;
	for (i = 0; i < NPAGES; i++) {
		size_t off = i * PAGE_SIZE_4K, j;
		int past_eof = off >= m->size;
		int bus = read_page(p, i, copy);

		m->sigbus += bus;
		/* Past EOF faults, exactly as without replication. */
		if (bus != past_eof) {
			m->sigbus_wrong++;
			continue;
		}
		for (j = 0; !bus && j < PAGE_SIZE_4K; j++) {
			unsigned char want = off + j < m->size ?
				m->bytes[off + j] : 0;

			if (copy[j] != want && m->bad < 0)
				m->bad = off + j;
		}
	}
}

/*
 * The reader: bound to node 1, maps the file MAP_PRIVATE and obeys one
 * byte commands: 'T' touch every page and check it against the model,
 * 'N' only report where the pages live, 'R' map the file anew, 'Q' quit.
 */
static int reader(int fd, struct model *m, int cmd, int reply)
{
	unsigned char *p;
	char c;

	signal(SIGBUS, on_sigbus);
	p = mmap(NULL, LEN, PROT_READ, MAP_PRIVATE, fd, 0);
	if (p == MAP_FAILED)
		return 2;
	while (read(cmd, &c, 1) == 1) {
		switch (c) {
		case 'T':
			check_against_model(p, m);
			if (page_nodes(p, NPAGES, m->status))
				return 3;
			break;
		case 'N':
			if (page_nodes(p, NPAGES, m->status))
				return 3;
			break;
		case 'R':
			munmap(p, LEN);
			p = mmap(NULL, LEN, PROT_READ, MAP_PRIVATE, fd, 0);
			if (p == MAP_FAILED)
				return 2;
			break;
		}
		if (write(reply, &c, 1) != 1)
			return 4;
		if (c == 'Q')
			return 0;
	}
	return 5;
}

struct reader_args {
	int fd;
	struct model *m;
	int cmd;
	int reply;
};

static int reader_job(void *arg)
{
	struct reader_args *a = arg;

	return reader(a->fd, a->m, a->cmd, a->reply);
}

FIXTURE(coherence) {
	char path[64];
	char prev_policy[32];
	struct model *m;
	int rfd;		/* the reader's read-only descriptor */
	int cmd, reply;
	pid_t reader;
};

/* Have the reader carry out @c and wait until it did. */
static int ask(int cmd, int reply, char c)
{
	char r;

	if (write(cmd, &c, 1) != 1 || read(reply, &r, 1) != 1)
		return -1;
	return r == c ? 0 : -1;
}

/* Update the model: @len bytes of pattern @seed at @off. */
static void model_fill(struct model *m, off_t off, size_t len,
		       unsigned int seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		m->bytes[off + i] = pattern_byte(seed, off + i);
}

static void nodes_summary(struct __test_metadata *_metadata,
			  const struct model *m, const char *when)
{
	TH_LOG("%s: %zu on node 0, %zu on node 1, %zu unmapped", when,
	       count_on_node(m->status, NPAGES, 0),
	       count_on_node(m->status, NPAGES, 1),
	       count_on_node(m->status, NPAGES, -ENOENT));
}

#define EXPECT_READER_SEES_MODEL() do {					\
	ASSERT_EQ(0, ask(self->cmd, self->reply, 'T'));			\
	EXPECT_EQ(-1, self->m->bad);					\
	EXPECT_EQ(0, self->m->sigbus_wrong);				\
} while (0)

/* While a writer exists, reading makes no replica. */
#define EXPECT_READER_SEES_MODEL_UNREPLICATED() do {			\
	long long alloc0 = vmstat_read("replica_alloc");		\
	EXPECT_READER_SEES_MODEL();					\
	EXPECT_EQ(alloc0, vmstat_read("replica_alloc"));		\
} while (0)

/* The reader's pages after 'T': all on @node (up to EOF). */
#define EXPECT_READER_ON(node) do {					\
	size_t mapped = (self->m->size + PAGE_SIZE_4K - 1) / PAGE_SIZE_4K; \
	nodes_summary(_metadata, self->m, "reader");			\
	EXPECT_EQ(mapped, count_on_node(self->m->status, NPAGES, node)); \
} while (0)

FIXTURE_SETUP(coherence)
{
	struct reader_args args;
	int cmd[2], reply[2];

	if (nr_online_nodes() < 2)
		SKIP(return, "needs 2 NUMA nodes, the guest has %d",
		     nr_online_nodes());
	if (policy_require("private", self->prev_policy,
			   sizeof(self->prev_policy)))
		SKIP(return, "no replication policy \"private\" in this kernel");
	self->m = mmap(NULL, sizeof(*self->m), PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->m);
	snprintf(self->path, sizeof(self->path), "coherence.%d", getpid());
	self->rfd = make_test_file(self->path, NPAGES, 1);
	ASSERT_LE(0, self->rfd);
	self->m->size = LEN;
	model_fill(self->m, 0, LEN, 1);
	ASSERT_EQ(0, cache_file_on_node(self->rfd, 0));
	/*
	 * The reader's own text on node 1 is replicated now, not when it
	 * first takes a path (SIGBUS past EOF) while a writer is there.
	 */
	ASSERT_EQ(0, warm_self_on_node(1));

	ASSERT_EQ(0, pipe(cmd));
	ASSERT_EQ(0, pipe(reply));
	self->reader = fork_child();
	ASSERT_LE(0, self->reader);
	if (!self->reader) {
		args.fd = self->rfd;
		args.m = self->m;
		args.cmd = cmd[0];
		args.reply = reply[1];
		_exit(run_on_node(1, reader_job, &args));
	}
	self->cmd = cmd[1];
	self->reply = reply[0];

	/* Before any writer: the reader maps replicas on its node. */
	EXPECT_READER_SEES_MODEL();
	EXPECT_READER_ON(1);
}

FIXTURE_TEARDOWN(coherence)
{
	int status;

	if (self->reader > 0) {
		ask(self->cmd, self->reply, 'Q');
		waitpid(self->reader, &status, 0);
		close(self->rfd);
		unlink(self->path);
	}
	if (self->prev_policy[0])
		policy_set(self->prev_policy);
}

/* Right after a writer appeared: the reader's replicas were unmapped. */
#define EXPECT_COLLAPSED() do {						\
	ASSERT_EQ(0, ask(self->cmd, self->reply, 'N'));			\
	nodes_summary(_metadata, self->m, "after the writer came");	\
	EXPECT_EQ(NPAGES, count_on_node(self->m->status, NPAGES, -ENOENT)); \
} while (0)

/*
 * Once all writers are gone, a new mapping gets replicas again.  Pages the
 * reader faulted in from disk meanwhile are its own node's: cache the file
 * on node 0 again first.
 */
#define EXPECT_REPLICAS_RETURN() do {					\
	long long alloc0;						\
	ASSERT_EQ(0, ask(self->cmd, self->reply, 'R'));			\
	ASSERT_EQ(0, drop_file_cache(self->rfd));			\
	ASSERT_EQ(0, cache_file_on_node(self->rfd, 0));			\
	alloc0 = vmstat_read("replica_alloc");				\
	EXPECT_READER_SEES_MODEL();					\
	EXPECT_READER_ON(1);						\
	EXPECT_LE(alloc0 + NPAGES, vmstat_read("replica_alloc"));	\
} while (0)

TEST_F(coherence, pwrite)
{
	long long collapse0 = vmstat_read("replica_collapse");
	unsigned char buf[LEN];
	int fd, i;

	fd = open(self->path, O_RDWR);
	ASSERT_LE(0, fd);
	EXPECT_COLLAPSED();
	EXPECT_LE(collapse0 + NPAGES, vmstat_read("replica_collapse"));

	for (i = 0; i < LEN; i++)
		buf[i] = pattern_byte(2, i);
	ASSERT_EQ(LEN, pwrite(fd, buf, LEN, 0));
	model_fill(self->m, 0, LEN, 2);
	EXPECT_READER_SEES_MODEL_UNREPLICATED();
	/* The originals, on node 0. */
	EXPECT_READER_ON(0);
	close(fd);
	EXPECT_REPLICAS_RETURN();
}

TEST_F(coherence, direct_io_write)
{
	unsigned char *buf;
	int fd, i;

	fd = open(self->path, O_RDWR | O_DIRECT);
	ASSERT_LE(0, fd);
	EXPECT_COLLAPSED();
	buf = aligned_alloc(PAGE_SIZE_4K, LEN);
	ASSERT_NE(NULL, buf);
	for (i = 0; i < LEN; i++)
		buf[i] = pattern_byte(3, i);
	ASSERT_EQ(LEN, pwrite(fd, buf, LEN, 0));
	free(buf);
	model_fill(self->m, 0, LEN, 3);
	/* Invalidated: the reader reads the new bytes from disk. */
	EXPECT_READER_SEES_MODEL_UNREPLICATED();
	close(fd);
	EXPECT_REPLICAS_RETURN();
}

TEST_F(coherence, truncate_down_and_up)
{
	int fd = open(self->path, O_RDWR);

	ASSERT_LE(0, fd);
	EXPECT_COLLAPSED();
	ASSERT_EQ(0, ftruncate(fd, LEN / 2));
	self->m->size = LEN / 2;
	EXPECT_READER_SEES_MODEL_UNREPLICATED();
	EXPECT_EQ(NPAGES / 2, self->m->sigbus);
	EXPECT_READER_ON(0);

	ASSERT_EQ(0, ftruncate(fd, LEN));
	self->m->size = LEN;
	memset(self->m->bytes + LEN / 2, 0, LEN / 2);
	EXPECT_READER_SEES_MODEL_UNREPLICATED();
	EXPECT_EQ(0, self->m->sigbus);
	close(fd);
	EXPECT_REPLICAS_RETURN();
}

TEST_F(coherence, punch_hole)
{
	off_t off = 8 * PAGE_SIZE_4K, len = 16 * PAGE_SIZE_4K;
	int fd = open(self->path, O_RDWR);

	ASSERT_LE(0, fd);
	EXPECT_COLLAPSED();
	ASSERT_EQ(0, fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
			       off, len));
	memset(self->m->bytes + off, 0, len);
	EXPECT_READER_SEES_MODEL_UNREPLICATED();
	close(fd);
	EXPECT_REPLICAS_RETURN();
}

TEST_F(coherence, shared_mapping_outlives_its_descriptor)
{
	unsigned char *p;
	int fd, i;

	fd = open(self->path, O_RDWR);
	ASSERT_LE(0, fd);
	EXPECT_COLLAPSED();
	p = mmap(NULL, LEN, PROT_READ, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, p);
	close(fd);

	/* The mapping may still write: no replica comes back. */
	ASSERT_EQ(0, ask(self->cmd, self->reply, 'R'));
	EXPECT_READER_SEES_MODEL_UNREPLICATED();
	EXPECT_READER_ON(0);

	ASSERT_EQ(0, mprotect(p, LEN, PROT_READ | PROT_WRITE));
	for (i = 0; i < LEN; i++)
		p[i] = pattern_byte(4, i);
	model_fill(self->m, 0, LEN, 4);
	EXPECT_READER_SEES_MODEL_UNREPLICATED();
	EXPECT_READER_ON(0);
	ASSERT_EQ(0, msync(p, LEN, MS_SYNC));
	munmap(p, LEN);
	EXPECT_REPLICAS_RETURN();
}

/*
 * truncate(2) by path is a writer without an open file: like an open for
 * write, it removes every replica of the file, not only those of the
 * pages it cuts off.
 */
TEST_F(coherence, truncate_by_path)
{
	long long collapse0 = vmstat_read("replica_collapse");

	ASSERT_EQ(0, truncate(self->path, LEN / 2));
	EXPECT_COLLAPSED();
	EXPECT_LE(collapse0 + NPAGES, vmstat_read("replica_collapse"));
	self->m->size = LEN / 2;
	EXPECT_READER_SEES_MODEL();
	EXPECT_EQ(NPAGES / 2, self->m->sigbus);

	ASSERT_EQ(0, truncate(self->path, LEN));
	EXPECT_COLLAPSED();
	self->m->size = LEN;
	memset(self->m->bytes + LEN / 2, 0, LEN / 2);
	EXPECT_READER_SEES_MODEL();
	EXPECT_EQ(0, self->m->sigbus);
	EXPECT_REPLICAS_RETURN();
}

/*
 * A shared mapping writes past EOF in the last page, then goes with its
 * descriptor: the page is dirty, and writeback will zero what it holds
 * past EOF.  No replica is made of it meanwhile, so the reader sees what
 * the page cache holds once it is written back, and zeros there once the
 * file grows.
 */
TEST_F(coherence, dirty_page_past_eof_is_not_replicated)
{
	size_t size = LEN - PAGE_SIZE_4K / 2;
	unsigned char *w;
	int fd;

	fd = open(self->path, O_RDWR);
	ASSERT_LE(0, fd);
	EXPECT_COLLAPSED();
	ASSERT_EQ(0, ftruncate(fd, size));
	w = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, w);
	memset(w + size, 0xee, LEN - size);
	munmap(w, LEN);
	close(fd);
	self->m->size = size;

	/*
	 * No writer left: the pages are replicated but the dirty last one
	 * (with the rest of its folio, where the page cache has large ones).
	 */
	ASSERT_EQ(0, ask(self->cmd, self->reply, 'R'));
	ASSERT_EQ(0, ask(self->cmd, self->reply, 'T'));
	nodes_summary(_metadata, self->m, "with the last page dirty");
	EXPECT_LT(0, count_on_node(self->m->status, NPAGES, 1));
	EXPECT_EQ(0, self->m->status[NPAGES - 1]);

	ASSERT_EQ(0, fsync(self->rfd));
	EXPECT_READER_SEES_MODEL();

	ASSERT_EQ(0, truncate(self->path, LEN));
	self->m->size = LEN;
	memset(self->m->bytes + size, 0, LEN - size);
	EXPECT_READER_SEES_MODEL();
	EXPECT_REPLICAS_RETURN();
}

TEST_HARNESS_MAIN
