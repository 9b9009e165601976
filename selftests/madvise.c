// SPDX-License-Identifier: GPL-2.0
/*
 * madvise(MADV_REPLICATE) and madvise(MADV_NOREPLICATE): opting a range in
 * replicates it under the policy "madvise", opting out unmaps replicas
 * already mapped and keeps them out under every policy, /proc/PID/smaps
 * shows the advice, and memory that is never replicated is refused with
 * EINVAL.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../kselftest_harness.h"
#include "replica_util.h"

#define NPAGES	32
#define LEN	(NPAGES * PAGE_SIZE_4K)
#define SEED	0xad71

struct advised {
	int fd;
	int advice;
	int *status;		/* 3 * NPAGES: after touch, after advice, again */
	int smaps_ok;
};

/*
 * On node 1: map and touch; advise; report; touch again; report.  For
 * MADV_REPLICATE the advice comes first, as an application would give it.
 */
static int advised_job(void *arg)
{
	struct advised *a = arg;
	const char *mnemonic = a->advice == MADV_REPLICATE ? " rp" : " np";
	unsigned char *p;
	char flags[256];

	p = mmap(NULL, LEN, PROT_READ, MAP_PRIVATE, a->fd, 0);
	if (p == MAP_FAILED)
		return 2;
	if (a->advice == MADV_REPLICATE && madvise(p, LEN, a->advice))
		return 3;
	touch_pages(p, LEN);
	if (page_nodes(p, NPAGES, a->status))
		return 4;
	if (a->advice == MADV_NOREPLICATE && madvise(p, LEN, a->advice))
		return 3;
	if (page_nodes(p, NPAGES, a->status + NPAGES))
		return 4;
	touch_pages(p, LEN);
	if (page_nodes(p, NPAGES, a->status + 2 * NPAGES))
		return 4;
	a->smaps_ok = !smaps_field(p, "VmFlags", flags, sizeof(flags)) &&
		      strstr(flags, mnemonic);
	return pattern_mismatch(p, LEN, 0, SEED) >= 0 ? 5 : 0;
}

FIXTURE(advice) {
	char path[64];
	char prev_policy[32];
	int fd;
	struct advised *a;
};

FIXTURE_SETUP(advice)
{
	if (nr_online_nodes() < 2)
		SKIP(return, "needs 2 NUMA nodes, the guest has %d",
		     nr_online_nodes());
	if (policy_get(self->prev_policy, sizeof(self->prev_policy)))
		SKIP(return, "kernel without CONFIG_MM_REPLICA");
	snprintf(self->path, sizeof(self->path), "madvise.%d", getpid());
	self->fd = make_test_file(self->path, NPAGES, SEED);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, cache_file_on_node(self->fd, 0));
	self->a = mmap(NULL, sizeof(*self->a) + 3 * NPAGES * sizeof(int),
		       PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		       -1, 0);
	ASSERT_NE(MAP_FAILED, self->a);
	self->a->status = (int *)(self->a + 1);
	self->a->fd = self->fd;
}

FIXTURE_TEARDOWN(advice)
{
	if (self->path[0]) {
		close(self->fd);
		unlink(self->path);
	}
	if (self->prev_policy[0])
		policy_set(self->prev_policy);
}

TEST_F(advice, replicate_opts_in_under_madvise)
{
	ASSERT_EQ(0, policy_set("madvise"));
	self->a->advice = MADV_REPLICATE;
	ASSERT_EQ(0, run_on_node(1, advised_job, self->a));
	ASSERT_EQ(NPAGES, count_on_node(self->a->status, NPAGES, 1));
	ASSERT_TRUE(self->a->smaps_ok);
}

TEST_F(advice, unadvised_range_stays_remote_under_madvise)
{
	struct holder h;

	ASSERT_EQ(0, policy_set("madvise"));
	ASSERT_EQ(0, holder_start(&h, self->fd, NPAGES, SEED, 1, 0));
	ASSERT_EQ(NPAGES, count_on_node(h.status, NPAGES, 0));
	ASSERT_EQ(0, holder_finish(&h));
}

TEST_F(advice, noreplicate_unmaps_and_keeps_out_under_private)
{
	ASSERT_EQ(0, policy_set("private"));
	self->a->advice = MADV_NOREPLICATE;
	ASSERT_EQ(0, run_on_node(1, advised_job, self->a));
	/* Replicas first; gone at the advice; the originals after that. */
	ASSERT_EQ(NPAGES, count_on_node(self->a->status, NPAGES, 1));
	ASSERT_EQ(NPAGES, count_on_node(self->a->status + NPAGES, NPAGES,
					-ENOENT));
	ASSERT_EQ(NPAGES, count_on_node(self->a->status + 2 * NPAGES, NPAGES,
					0));
	ASSERT_TRUE(self->a->smaps_ok);
}

TEST_F(advice, replicate_is_nothing_under_none)
{
	ASSERT_EQ(0, policy_set("none"));
	self->a->advice = MADV_REPLICATE;
	ASSERT_EQ(0, run_on_node(1, advised_job, self->a));
	ASSERT_EQ(NPAGES, count_on_node(self->a->status, NPAGES, 0));
}

TEST_F(advice, private_copies_survive_noreplicate)
{
	unsigned char *p;

	ASSERT_EQ(0, policy_set("private"));
	p = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE, self->fd, 0);
	ASSERT_NE(MAP_FAILED, p);
	p[0] = 0x5a;
	ASSERT_EQ(0, madvise(p, LEN, MADV_NOREPLICATE));
	ASSERT_EQ(0x5a, p[0]);
	ASSERT_EQ(-1, pattern_mismatch(p + 1, LEN - 1, 1, SEED));
	munmap(p, LEN);
}

static void expect_einval(struct __test_metadata *_metadata, void *p,
			  size_t len, const char *what)
{
	TH_LOG("%s", what);
	ASSERT_EQ(-1, madvise(p, len, MADV_REPLICATE));
	ASSERT_EQ(EINVAL, errno);
	ASSERT_EQ(-1, madvise(p, len, MADV_NOREPLICATE));
	ASSERT_EQ(EINVAL, errno);
}

TEST_F(advice, anonymous_memory_is_einval)
{
	void *p = mmap(NULL, LEN, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	ASSERT_NE(MAP_FAILED, p);
	expect_einval(_metadata, p, LEN, "anonymous");
	munmap(p, LEN);
}

TEST_F(advice, shmem_is_einval)
{
	int fd = memfd_create("replica", 0);
	void *p;

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, ftruncate(fd, LEN));
	p = mmap(NULL, LEN, PROT_READ, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, p);
	expect_einval(_metadata, p, LEN, "memfd (shmem)");
	munmap(p, LEN);
	close(fd);
}

TEST_F(advice, shared_writable_mapping_is_einval)
{
	int fd = open(self->path, O_RDWR);
	void *p;

	ASSERT_LE(0, fd);
	/* Read-only now, but it may write: mprotect() could make it so. */
	p = mmap(NULL, LEN, PROT_READ, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, p);
	expect_einval(_metadata, p, LEN, "shared mapping of an O_RDWR file");
	munmap(p, LEN);
	close(fd);
}

TEST_F(advice, hugetlb_is_einval)
{
	char before[16] = "0";
	void *p;
	int fd;

	fd = open("/proc/sys/vm/nr_hugepages", O_RDWR);
	if (fd < 0)
		SKIP(return, "no hugetlb in this kernel");
	if (read(fd, before, sizeof(before) - 1) < 0 ||
	    pwrite(fd, "1", 1, 0) != 1) {
		close(fd);
		SKIP(return, "cannot reserve a huge page");
	}
	p = mmap(NULL, 2UL << 20, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
	if (p == MAP_FAILED) {
		if (pwrite(fd, before, strlen(before), 0) < 0)
			TH_LOG("cannot restore nr_hugepages");
		close(fd);
		SKIP(return, "no huge page free: %s", strerror(errno));
	}
	expect_einval(_metadata, p, 2UL << 20, "hugetlb");
	munmap(p, 2UL << 20);
	if (pwrite(fd, before, strlen(before), 0) < 0)
		TH_LOG("cannot restore nr_hugepages");
	close(fd);
}

TEST_F(advice, dax_is_einval)
{
	char line[512], dir[256], opts[256];
	int found = 0;
	FILE *f = fopen("/proc/mounts", "r");

	ASSERT_NE(NULL, f);
	while (!found && fgets(line, sizeof(line), f))
		found = sscanf(line, "%*s %255s %*s %255s", dir, opts) == 2 &&
			strstr(opts, "dax");
	fclose(f);
	if (!found)
		SKIP(return, "no filesystem mounted with -o dax in this guest");
	TH_LOG("a DAX mount at %s: not exercised yet", dir);
}

TEST_HARNESS_MAIN
