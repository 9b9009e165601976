// SPDX-License-Identifier: GPL-2.0
/*
 * Large page-cache folios are replicated whole.  Text that MADV_COLLAPSE
 * made a THP on node 0 (CONFIG_READ_ONLY_THP_FOR_FS) is mapped on node 1
 * from a local replica of the same size, with one PMD (FilePmdMapped in
 * /proc/PID/smaps), and MADV_COLLAPSE succeeds over a range that node 1
 * had replicated in single pages.  XFS caches files in large folios: a
 * task on node 1 maps local replicas of them.  A write to the file
 * removes the replicas, and readers see the new bytes.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/mempolicy.h>

#include "../kselftest_harness.h"
#include "replica_util.h"

#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE		25
#endif
#define XFS_SUPER_MAGIC		0x58465342

#define PMD_SIZE_2M	(2UL << 20)
#define PMD_PAGES	(PMD_SIZE_2M / PAGE_SIZE_4K)
/* Two PMDs' worth: the first is collapsed, the second stays small. */
#define NPAGES		(2 * PMD_PAGES)
#define LEN		(NPAGES * PAGE_SIZE_4K)
#define SEED		0x1a9e
#define NEW_SEED	0x1a9f
#define XFS_DIR		"/xfs"

/* A job's exit status when the kernel cannot make a THP of text. */
#define NO_FILE_THP	99

/* The file under test, and what the jobs on each node report. */
struct large_file {
	char path[128];
	int fd;
	unsigned int seed;	/* the bytes the file holds now */
	int *shared;
};

FIXTURE(large) {
	char prev_policy[32];
	struct large_file f;
};

FIXTURE_SETUP(large)
{
	self->f.fd = -1;
	if (nr_online_nodes() < 2)
		SKIP(return, "needs 2 NUMA nodes, the guest has %d",
		     nr_online_nodes());
	if (policy_require("text", self->prev_policy,
			   sizeof(self->prev_policy)))
		SKIP(return, "no replication policy \"text\" in this kernel");
	self->f.shared = mmap(NULL, PAGE_SIZE_4K, PROT_READ | PROT_WRITE,
			      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->f.shared);
	ASSERT_EQ(0, warm_self_on_node(1));
}

FIXTURE_TEARDOWN(large)
{
	if (self->f.fd >= 0) {
		close(self->f.fd);
		unlink(self->f.path);
	}
	if (self->prev_policy[0])
		policy_set(self->prev_policy);
}

/* The test file in @dir, cached on node 0. */
static int make_file_in(struct large_file *f, const char *dir)
{
	snprintf(f->path, sizeof(f->path), "%s/large.%d", dir, getpid());
	f->seed = SEED;
	f->fd = make_test_file(f->path, NPAGES, SEED);
	if (f->fd < 0)
		return -1;
	return cache_file_on_node(f->fd, 0);
}

/* The minor faults this process has taken. */
static long minor_faults(void)
{
	struct rusage ru;

	return getrusage(RUSAGE_SELF, &ru) ? -1 : ru.ru_minflt;
}

/*
 * Map the file (@prot) at a PMD-aligned address, so that its first 2 MiB
 * can be mapped by one PMD.
 */
static unsigned char *map_aligned(int fd, int prot)
{
	unsigned char *area, *p;

	area = mmap(NULL, LEN + PMD_SIZE_2M, PROT_NONE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (area == MAP_FAILED)
		return NULL;
	p = (unsigned char *)(((unsigned long)area + PMD_SIZE_2M - 1) &
			      ~(PMD_SIZE_2M - 1));
	if (mmap(p, LEN, prot, MAP_PRIVATE | MAP_FIXED, fd, 0) == MAP_FAILED)
		return NULL;
	return p;
}

/*
 * Map the file as text at a PMD-aligned address and run through it;
 * @pmd_faults: the faults its first 2 MiB took.
 */
static unsigned char *map_text_aligned(int fd, long *pmd_faults)
{
	unsigned char *p = map_aligned(fd, PROT_READ | PROT_EXEC);
	long faults0;

	if (!p)
		return NULL;
	faults0 = minor_faults();
	touch_pages(p, PMD_SIZE_2M);
	*pmd_faults = minor_faults() - faults0;
	touch_pages(p + PMD_SIZE_2M, LEN - PMD_SIZE_2M);
	return p;
}

/* FilePmdMapped of the mapping at @p, in kB; -1 if unknown. */
static long file_pmd_mapped_kb(void *p)
{
	char buf[64];

	if (smaps_field(p, "FilePmdMapped", buf, sizeof(buf)))
		return -1;
	return strtol(buf, NULL, 10);
}

/* On node 1: map the file as text; report PMD-mapped kB and pages there. */
static int map_on_node1(void *arg)
{
	struct large_file *f = arg;
	int status[NPAGES];
	unsigned char *p;
	long faults;

	p = map_text_aligned(f->fd, &faults);
	if (!p || page_nodes(p, NPAGES, status))
		return 2;
	f->shared[4] = faults;
	f->shared[0] = file_pmd_mapped_kb(p);
	f->shared[1] = count_on_node(status, NPAGES, 1);
	return pattern_mismatch(p, LEN, 0, f->seed) >= 0 ? 3 : 0;
}

/* On node 0: map the file as text and collapse its first 2 MiB. */
static int collapse_on_node0(void *arg)
{
	struct large_file *f = arg;
	long faults;
	unsigned char *p = map_text_aligned(f->fd, &faults);

	if (!p)
		return 2;
	if (madvise(p, PMD_SIZE_2M, MADV_COLLAPSE)) {
		f->shared[2] = errno;
		return errno == EINVAL ? NO_FILE_THP : 4;
	}
	f->shared[0] = file_pmd_mapped_kb(p);
	return 0;
}

/* Rewrite the file with @seed through a descriptor of its own. */
static int rewrite(const char *path, unsigned int seed)
{
	unsigned char *buf = malloc(LEN);
	int fd, i, ok;

	if (!buf)
		return -1;
	for (i = 0; i < LEN; i++)
		buf[i] = pattern_byte(seed, i);
	fd = open(path, O_RDWR);
	ok = fd >= 0 && pwrite(fd, buf, LEN, 0) == LEN;
	free(buf);
	if (fd >= 0)
		close(fd);
	return ok ? 0 : -1;
}

TEST_F(large, text_thp_is_mapped_from_a_local_pmd_replica)
{
	long long large0, alloc0, collapse0;
	long small_faults;
	int ret;

	ASSERT_EQ(0, make_file_in(&self->f, "."));
	/* Node 1 replicates the text in single pages first. */
	ASSERT_EQ(0, run_on_node(1, map_on_node1, &self->f));
	ASSERT_EQ(NPAGES, self->f.shared[1]);
	small_faults = self->f.shared[4];

	ret = run_on_node(0, collapse_on_node0, &self->f);
	if (ret == NO_FILE_THP)
		SKIP(return, "MADV_COLLAPSE of text is EINVAL: no CONFIG_READ_ONLY_THP_FOR_FS");
	TH_LOG("MADV_COLLAPSE over node 1's replicas: %s, %d kB PMD-mapped on node 0",
	       ret ? strerror(self->f.shared[2]) : "done", self->f.shared[0]);
	ASSERT_EQ(0, ret);
	ASSERT_EQ(2048, self->f.shared[0]);

	large0 = vmstat_read("replica_alloc_large");
	alloc0 = vmstat_read("replica_alloc");
	ASSERT_EQ(0, run_on_node(1, map_on_node1, &self->f));
	TH_LOG("node 1: %d kB PMD-mapped, %d of %lu pages on node 1, %lld large replicas made",
	       self->f.shared[0], self->f.shared[1], NPAGES,
	       vmstat_read("replica_alloc_large") - large0);
	TH_LOG("faults for 2 MiB of text on node 1: %d (PMD replica), %ld (single pages)",
	       self->f.shared[4], small_faults);
	EXPECT_EQ(2048, self->f.shared[0]);
	EXPECT_EQ(1, self->f.shared[4]);
	EXPECT_EQ(NPAGES, self->f.shared[1]);
	EXPECT_LT(large0, vmstat_read("replica_alloc_large"));
	EXPECT_LE(alloc0 + PMD_PAGES, vmstat_read("replica_alloc"));

	/* A write removes the copies; node 1 then reads the new bytes. */
	collapse0 = vmstat_read("replica_collapse");
	ASSERT_EQ(0, rewrite(self->f.path, NEW_SEED));
	self->f.seed = NEW_SEED;
	EXPECT_LE(collapse0 + NPAGES, vmstat_read("replica_collapse"));
	EXPECT_EQ(0, run_on_node(1, map_on_node1, &self->f));
}

/* On node 1: map the file, report, wait for the write, check the bytes. */
static int hold_and_reread(void *arg)
{
	struct large_file *f = arg;
	int status[NPAGES];
	unsigned char *p;

	p = mmap(NULL, LEN, PROT_READ | PROT_EXEC, MAP_PRIVATE, f->fd, 0);
	if (p == MAP_FAILED)
		return 2;
	touch_pages(p, LEN);
	if (page_nodes(p, NPAGES, status))
		return 3;
	f->shared[1] = count_on_node(status, NPAGES, 1);
	/* The test writes the file meanwhile. */
	__atomic_store_n(&f->shared[3], 1, __ATOMIC_SEQ_CST);
	while (__atomic_load_n(&f->shared[3], __ATOMIC_SEQ_CST) != 2)
		usleep(1000);
	return pattern_mismatch(p, LEN, 0, NEW_SEED) >= 0 ? 4 : 0;
}

TEST_F(large, xfs_large_folios_are_replicated_and_collapsed)
{
	long long large0, collapse0;
	struct statfs fs;
	pid_t pid;
	int status;

	if (statfs(XFS_DIR, &fs) || fs.f_type != XFS_SUPER_MAGIC)
		SKIP(return, "no XFS filesystem at " XFS_DIR);
	ASSERT_EQ(0, make_file_in(&self->f, XFS_DIR));
	large0 = vmstat_read("replica_alloc_large");

	pid = fork_child();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(run_on_node(1, hold_and_reread, &self->f));
	while (__atomic_load_n(&self->f.shared[3], __ATOMIC_SEQ_CST) != 1)
		usleep(1000);
	TH_LOG("node 1: %d of %lu pages local, %lld large replicas made",
	       self->f.shared[1], NPAGES,
	       vmstat_read("replica_alloc_large") - large0);
	EXPECT_EQ(NPAGES, self->f.shared[1]);
	EXPECT_LT(large0, vmstat_read("replica_alloc_large"));

	collapse0 = vmstat_read("replica_collapse");
	EXPECT_EQ(0, rewrite(self->f.path, NEW_SEED));
	EXPECT_LE(collapse0 + NPAGES, vmstat_read("replica_collapse"));
	__atomic_store_n(&self->f.shared[3], 2, __ATOMIC_SEQ_CST);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));
}

/*
 * On node 1, over a PMD-mapped replica: mbind(MPOL_BIND to node 0,
 * MPOL_MF_MOVE | MPOL_MF_STRICT) succeeds, as it does over the page cache
 * on node 0 that a kernel without replication maps there: the page cache
 * is where the policy wants it.
 */
static int mbind_over_pmd_replica(void *arg)
{
	unsigned long node0 = 1UL << 0;
	struct large_file *f = arg;
	unsigned char *p;
	long faults;

	p = map_text_aligned(f->fd, &faults);
	if (!p)
		return 2;
	f->shared[0] = file_pmd_mapped_kb(p);
	if (syscall(SYS_mbind, p, PMD_SIZE_2M, MPOL_BIND, &node0,
		    8 * sizeof(node0), MPOL_MF_MOVE | MPOL_MF_STRICT)) {
		f->shared[2] = errno;
		return 3;
	}
	return pattern_mismatch(p, LEN, 0, f->seed) >= 0 ? 4 : 0;
}

TEST_F(large, mbind_strict_over_a_pmd_replica)
{
	int ret;

	ASSERT_EQ(0, make_file_in(&self->f, "."));
	ret = run_on_node(0, collapse_on_node0, &self->f);
	if (ret == NO_FILE_THP)
		SKIP(return, "MADV_COLLAPSE of text is EINVAL: no CONFIG_READ_ONLY_THP_FOR_FS");
	ASSERT_EQ(0, ret);
	ret = run_on_node(1, mbind_over_pmd_replica, &self->f);
	TH_LOG("node 1: %d kB PMD-mapped; mbind: %s", self->f.shared[0],
	       ret == 3 ? strerror(self->f.shared[2]) : "done");
	EXPECT_EQ(2048, self->f.shared[0]);
	EXPECT_EQ(0, ret);
}

/*
 * Touch the first 2 MiB at @p; report in f->shared[0] how much of the
 * mapping is PMD-mapped (kB), and in f->shared[1] how many of its first
 * pages are on node 1.
 */
static int report_first_pmd(struct large_file *f, unsigned char *p)
{
	int status[PMD_PAGES];

	touch_pages(p, PMD_SIZE_2M);
	if (page_nodes(p, PMD_PAGES, status))
		return -1;
	f->shared[0] = file_pmd_mapped_kb(p);
	f->shared[1] = count_on_node(status, PMD_PAGES, 1);
	return 0;
}

/*
 * A task on node 1 that collapses its own text (MADV_COLLAPSE) gets it
 * PMD-mapped from its own node, as it would if the text had been a THP
 * already: the replica of the new THP, not the THP on node 0.
 */
static int collapse_on_node1(void *arg)
{
	struct large_file *f = arg;
	unsigned char *p;
	long faults;

	p = map_text_aligned(f->fd, &faults);
	if (!p)
		return 2;
	if (madvise(p, PMD_SIZE_2M, MADV_COLLAPSE)) {
		f->shared[2] = errno;
		return errno == EINVAL ? NO_FILE_THP : 4;
	}
	if (report_first_pmd(f, p))
		return 5;
	return pattern_mismatch(p, LEN, 0, f->seed) >= 0 ? 6 : 0;
}

TEST_F(large, madv_collapse_on_node1_maps_a_local_pmd)
{
	int ret;

	ASSERT_EQ(0, make_file_in(&self->f, "."));
	ret = run_on_node(1, collapse_on_node1, &self->f);
	if (ret == NO_FILE_THP)
		SKIP(return, "MADV_COLLAPSE of text is EINVAL: no CONFIG_READ_ONLY_THP_FOR_FS");
	TH_LOG("node 1 after its MADV_COLLAPSE: %d kB PMD-mapped, %d of %lu pages local",
	       self->f.shared[0], self->f.shared[1], PMD_PAGES);
	ASSERT_EQ(0, ret);
	EXPECT_EQ(2048, self->f.shared[0]);
	EXPECT_EQ(PMD_PAGES, self->f.shared[1]);
}

/*
 * A task on node 1 whose page table for the range outlived the collapse of
 * the page cache into a THP on node 0 (its mapping has an anon_vma, which
 * keeps khugepaged from retracting the table) maps the THP's local replica
 * page by page.  MADV_COLLAPSE over its range then maps that replica with
 * one PMD, as it would map the THP itself without replication; the
 * entries of a replica must not make it fail.
 */
static int hold_ptes_then_collapse(void *arg)
{
	struct large_file *f = arg;
	unsigned char *p;

	p = map_aligned(f->fd, PROT_READ | PROT_WRITE | PROT_EXEC);
	if (!p)
		return 2;
	touch_pages(p, LEN);
	/* An anon_vma, and no private page left in the range. */
	p[0] ^= 1;
	if (madvise(p, PAGE_SIZE_4K, MADV_DONTNEED))
		return 3;
	/* The test collapses the page cache on node 0 meanwhile. */
	__atomic_store_n(&f->shared[3], 1, __ATOMIC_SEQ_CST);
	while (__atomic_load_n(&f->shared[3], __ATOMIC_SEQ_CST) != 2)
		usleep(1000);
	touch_pages(p, PMD_SIZE_2M);
	f->shared[4] = file_pmd_mapped_kb(p);
	f->shared[2] = madvise(p, PMD_SIZE_2M, MADV_COLLAPSE) ? errno : 0;
	if (report_first_pmd(f, p))
		return 4;
	return pattern_mismatch(p, LEN, 0, f->seed) >= 0 ? 5 : 0;
}

TEST_F(large, madv_collapse_over_ptes_of_a_local_replica)
{
	pid_t pid;
	int ret, status;

	ASSERT_EQ(0, make_file_in(&self->f, "."));
	self->f.shared[3] = 0;
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(run_on_node(1, hold_ptes_then_collapse, &self->f));
	while (__atomic_load_n(&self->f.shared[3], __ATOMIC_SEQ_CST) != 1) {
		ASSERT_EQ(0, waitpid(pid, &status, WNOHANG));
		usleep(1000);
	}
	ret = run_on_node(0, collapse_on_node0, &self->f);
	__atomic_store_n(&self->f.shared[3], 2, __ATOMIC_SEQ_CST);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	if (ret == NO_FILE_THP)
		SKIP(return, "MADV_COLLAPSE of text is EINVAL: no CONFIG_READ_ONLY_THP_FOR_FS");
	ASSERT_EQ(0, ret);
	TH_LOG("node 1: %d kB PMD-mapped, then MADV_COLLAPSE: %s",
	       self->f.shared[4], strerror(self->f.shared[2]));
	TH_LOG("node 1 after it: %d kB PMD-mapped, %d of %lu pages local",
	       self->f.shared[0], self->f.shared[1], PMD_PAGES);
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	EXPECT_EQ(0, self->f.shared[2]);
	/*
	 * The collapse maps the first 2 MiB with one PMD.  khugepaged may
	 * have mapped the second, which the test never wrote, by then: it
	 * did in a boot that ran this test twice (2048 kB before, 4096
	 * after).
	 */
	EXPECT_EQ(2048, self->f.shared[0] - self->f.shared[4]);
	EXPECT_EQ(PMD_PAGES, self->f.shared[1]);
}

TEST_HARNESS_MAIN
