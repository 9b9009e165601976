// SPDX-License-Identifier: GPL-2.0
/*
 * A long-term pin (FOLL_LONGTERM, here through the gup_test driver) never
 * pins a replica: a task on node 1 that maps replicas of a file cached on
 * node 0, through a read-only shared mapping, pins the page cache itself,
 * so that a later write to the file is seen through the pin, as without
 * replication.  (A read-only long-term pin of a private mapping gets a
 * private copy of the page, replicated or not: GUP unshares it.)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../kselftest_harness.h"
#include "../../../../mm/gup_test.h"
#include "replica_util.h"

#define NPAGES		16
#define LEN		(NPAGES * PAGE_SIZE_4K)
#define SEED		0x10a9
#define NEW_SEED	0x10aa

#define GUP_TEST_FILE	"/sys/kernel/debug/gup_test"
/* A job's exit status when the kernel has no gup_test driver. */
#define NO_GUP_TEST	99

FIXTURE(longterm_pin) {
	char path[64];
	char prev_policy[32];
	int fd;
};

FIXTURE_VARIANT(longterm_pin) {
	unsigned int flags;	/* PIN_LONGTERM_TEST_FLAG_* */
};

FIXTURE_VARIANT_ADD(longterm_pin, pin_user_pages) {
	.flags = 0,
};

FIXTURE_VARIANT_ADD(longterm_pin, pin_user_pages_fast) {
	.flags = PIN_LONGTERM_TEST_FLAG_USE_FAST,
};

FIXTURE_SETUP(longterm_pin)
{
	self->fd = -1;
	if (nr_online_nodes() < 2)
		SKIP(return, "needs 2 NUMA nodes, the guest has %d",
		     nr_online_nodes());
	/* "readonly" replicates read-only shared mappings. */
	if (policy_require("readonly", self->prev_policy,
			   sizeof(self->prev_policy)))
		SKIP(return, "no replication policy \"readonly\" in this kernel");
	snprintf(self->path, sizeof(self->path), "longterm_pin.%d", getpid());
	self->fd = make_test_file(self->path, NPAGES, SEED);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, cache_file_on_node(self->fd, 0));
	ASSERT_EQ(0, warm_self_on_node(1));
}

FIXTURE_TEARDOWN(longterm_pin)
{
	if (self->fd >= 0) {
		close(self->fd);
		unlink(self->path);
	}
	if (self->prev_policy[0])
		policy_set(self->prev_policy);
}

struct pin_arg {
	const char *path;
	int fd;
	unsigned int flags;
};

/* Write the whole file with pattern @seed, through a descriptor of its own. */
static int rewrite_file(const char *path, unsigned int seed)
{
	unsigned char buf[LEN];
	int fd, i, ok;

	for (i = 0; i < LEN; i++)
		buf[i] = pattern_byte(seed, i);
	fd = open(path, O_RDWR);
	if (fd < 0)
		return -1;
	ok = pwrite(fd, buf, LEN, 0) == LEN;
	close(fd);
	return ok ? 0 : -1;
}

/*
 * On node 1: map replicas through a read-only shared mapping, pin them
 * long term, write the file, and read what the pin holds.
 */
static int pin_job(void *arg)
{
	const struct pin_arg *a = arg;
	struct pin_longterm_test pin = { .size = LEN, .flags = a->flags };
	int status[NPAGES], gup, ret = 0;
	unsigned char buf[LEN];
	__u64 to = (unsigned long)buf;
	unsigned char *p;

	gup = open(GUP_TEST_FILE, O_RDWR);
	if (gup < 0)
		return errno == ENOENT ? NO_GUP_TEST : 2;
	p = mmap(NULL, LEN, PROT_READ, MAP_SHARED, a->fd, 0);
	if (p == MAP_FAILED)
		return 3;
	touch_pages(p, LEN);
	if (page_nodes(p, NPAGES, status) ||
	    count_on_node(status, NPAGES, 1) != NPAGES) {
		fprintf(stderr, "no replicas to pin\n");
		return 4;
	}
	pin.addr = (unsigned long)p;
	if (ioctl(gup, PIN_LONGTERM_TEST_START, &pin)) {
		fprintf(stderr, "PIN_LONGTERM_TEST_START: %s\n",
			strerror(errno));
		return 5;
	}
	/* The pin took the page cache, which the mapping shows now. */
	if (page_nodes(p, NPAGES, status) ||
	    count_on_node(status, NPAGES, 0) != NPAGES) {
		fprintf(stderr, "%zu pinned pages on node 1\n",
			count_on_node(status, NPAGES, 1));
		ret = 6;
	} else if (rewrite_file(a->path, NEW_SEED)) {
		ret = 7;
	} else if (ioctl(gup, PIN_LONGTERM_TEST_READ, &to)) {
		ret = 8;
	} else if (pattern_mismatch(buf, LEN, 0, NEW_SEED) >= 0) {
		fprintf(stderr, "the pin does not show the write\n");
		ret = 9;
	}
	ioctl(gup, PIN_LONGTERM_TEST_STOP);
	close(gup);
	return ret;
}

TEST_F(longterm_pin, pin_gets_the_page_cache_and_sees_later_writes)
{
	struct pin_arg arg = {
		.path = self->path,
		.fd = self->fd,
		.flags = variant->flags,
	};
	int ret = run_on_node(1, pin_job, &arg);

	if (ret == NO_GUP_TEST)
		SKIP(return, "no " GUP_TEST_FILE ": needs CONFIG_GUP_TEST");
	EXPECT_EQ(0, ret);
}

TEST_HARNESS_MAIN
