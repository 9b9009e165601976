// SPDX-License-Identifier: GPL-2.0
/*
 * Replicas never keep memory from being offlined or allocated contiguously:
 * they are movable memory.  alloc_contig_range() (here through CMA's
 * debugfs, as gigantic pages and drivers use it) moves the replicas in its
 * range to other pages of their node; memory offlining, which moves pages
 * off the node, drops them.  The task that mapped them goes on reading the
 * file, from its own node.
 *
 * Needs movable memory on node 1 and a CMA area on node 0: make check
 * runs it in a boot of its own, with movablecore= and numa_cma=0:<size>;
 * without them the tests skip and say so.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../kselftest_harness.h"
#include "replica_util.h"

#define NPAGES		4096
#define LEN		(NPAGES * PAGE_SIZE_4K)
#define SEED		0x0ff1

#define MEMORY_DIR	"/sys/devices/system/memory"
#define CMA_DIR		"/sys/kernel/debug/cma/numa0"

/* Offlining and contiguous allocation give up when interrupted. */
#define MOVE_TIMEOUT	120

static void on_alarm(int sig)
{
}

/* A number from a sysfs or debugfs file, in @base; -1 if unreadable. */
static long long read_number(const char *path, int base)
{
	char text[64];

	if (read_text_file(path, text, sizeof(text)))
		return -1;
	return strtoll(text, NULL, base);
}

/* Write @text to a file, giving up after MOVE_TIMEOUT seconds. */
static int write_with_timeout(const char *path, const char *text)
{
	struct sigaction sa = { .sa_handler = on_alarm };
	int ret;

	sigaction(SIGALRM, &sa, NULL);
	alarm(MOVE_TIMEOUT);
	ret = write_text_file(path, text);
	alarm(0);
	return ret;
}

/* A file, the caller's mapping of it, and the page frames it maps. */
struct mapped_file {
	int fd;
	unsigned char *p;
	unsigned long long pfns[NPAGES];
};

FIXTURE(offline) {
	char prev_policy[32];
	char path[64];
	struct mapped_file f;
};

FIXTURE_SETUP(offline)
{
	self->f.fd = -1;
	if (nr_online_nodes() < 2)
		SKIP(return, "needs 2 NUMA nodes, the guest has %d",
		     nr_online_nodes());
	if (policy_require("private", self->prev_policy,
			   sizeof(self->prev_policy)))
		SKIP(return, "no replication policy \"private\" in this kernel");
	snprintf(self->path, sizeof(self->path), "offline.%d", getpid());
	self->f.fd = make_test_file(self->path, NPAGES, SEED);
	ASSERT_LE(0, self->f.fd);
}

FIXTURE_TEARDOWN(offline)
{
	if (self->f.fd >= 0) {
		close(self->f.fd);
		unlink(self->path);
	}
	if (self->prev_policy[0])
		policy_set(self->prev_policy);
}

/*
 * Cache the file on node @cache_node and map it from @map_node, which
 * makes replicas there; record their page frames.
 */
static int map_replicas_on(struct mapped_file *f, int cache_node,
			   int map_node)
{
	int status[NPAGES], ret = -1;

	if (cache_file_on_node(f->fd, cache_node) || bind_to_node(map_node))
		return -1;
	f->p = mmap(NULL, LEN, PROT_READ, MAP_PRIVATE, f->fd, 0);
	if (f->p != MAP_FAILED) {
		touch_pages(f->p, LEN);
		if (!page_nodes(f->p, NPAGES, status) &&
		    count_on_node(status, NPAGES, map_node) == NPAGES &&
		    !page_pfns(f->p, NPAGES, f->pfns))
			ret = 0;
	}
	/* Back where the runner put the test. */
	if (bind_to_node(0))
		return -1;
	return ret;
}

/*
 * The online movable memory blocks of node 1 that hold replicas, into
 * @blocks (at most @max), with how many each holds into @held.
 */
static int movable_blocks_with_replicas(const struct mapped_file *f,
					long *blocks, int *held, int max)
{
	long long block_pages = read_number(MEMORY_DIR "/block_size_bytes",
					    16) / PAGE_SIZE_4K;
	int i, b, n = 0;

	if (block_pages <= 0)
		return 0;
	for (i = 0; i < NPAGES; i++) {
		long block = f->pfns[i] / block_pages;
		char path[128], zones[64], state[32];

		for (b = 0; b < n && blocks[b] != block; b++)
			;
		if (b < n) {
			held[b]++;
			continue;
		}
		snprintf(path, sizeof(path), MEMORY_DIR "/memory%ld/valid_zones",
			 block);
		if (read_text_file(path, zones, sizeof(zones)) ||
		    strncmp(zones, "Movable", 7))
			continue;
		snprintf(path, sizeof(path), MEMORY_DIR "/memory%ld/state",
			 block);
		if (read_text_file(path, state, sizeof(state)) ||
		    strncmp(state, "online", 6) || n == max)
			continue;
		blocks[n] = block;
		held[n++] = 1;
	}
	return n;
}

/* Whether node 1 has memory in ZONE_MOVABLE at all. */
static int node1_has_movable_memory(void)
{
	char path[128], zones[64];
	long block;

	for (block = 0; block < 4096; block++) {
		snprintf(path, sizeof(path),
			 "/sys/devices/system/node/node1/memory%ld/valid_zones",
			 block);
		if (!read_text_file(path, zones, sizeof(zones)) &&
		    !strncmp(zones, "Movable", 7))
			return 1;
	}
	return 0;
}

/*
 * Offline the movable blocks of node 1 that hold replicas, one after the
 * other: a block that also holds memory nobody can move (the memory map
 * at the top of a node, a hole) fails with or without replicas, but a
 * block that holds replicas and movable memory only goes offline.
 */
TEST_F(offline, offline_a_memory_block_that_holds_replicas)
{
	long long evict0 = vmstat_read("replica_evict");
	int held[16], n, i, offlined = -1;
	long blocks[16];
	char state[128];

	if (access(MEMORY_DIR "/block_size_bytes", F_OK))
		SKIP(return, "no memory hotplug (CONFIG_MEMORY_HOTREMOVE)");
	if (!node1_has_movable_memory())
		SKIP(return, "node 1 has no ZONE_MOVABLE memory: boot with movablecore=");
	ASSERT_EQ(0, map_replicas_on(&self->f, 0, 1));
	n = movable_blocks_with_replicas(&self->f, blocks, held, 16);
	/* Replicas are movable memory: some are in movable blocks. */
	ASSERT_LT(0, n);
	for (i = 0; i < n && offlined < 0; i++) {
		snprintf(state, sizeof(state), MEMORY_DIR "/memory%ld/state",
			 blocks[i]);
		if (!write_with_timeout(state, "offline"))
			offlined = i;
		TH_LOG("memory%ld, holding %d of %d replicas: offline %s",
		       blocks[i], held[i], NPAGES,
		       offlined == i ? "done" : strerror(errno));
	}
	ASSERT_LE(0, offlined);
	EXPECT_LE(evict0 + held[offlined], vmstat_read("replica_evict"));
	EXPECT_EQ(-1, pattern_mismatch(self->f.p, LEN, 0, SEED));
	ASSERT_EQ(0, write_with_timeout(state, "online_movable"));
}

TEST_F(offline, cma_allocation_over_replicas)
{
	long long base, count, migrate0;
	int i, in_cma = 0, still_in_cma = 0, status[NPAGES];
	char pages[32];

	base = read_number(CMA_DIR "/base_pfn", 10);
	count = read_number(CMA_DIR "/count", 10);
	if (base < 0 || count <= 0)
		SKIP(return, "no CMA area on node 0 (" CMA_DIR "): boot with numa_cma=0:<size>");
	/* Page cache on node 1, replicas on node 0, where the CMA area is. */
	ASSERT_EQ(0, map_replicas_on(&self->f, 1, 0));
	for (i = 0; i < NPAGES; i++)
		in_cma += self->f.pfns[i] >= base && self->f.pfns[i] < base + count;
	TH_LOG("%d of %d replicas in the CMA area of %lld pages", in_cma,
	       NPAGES, count);
	/* Replicas are movable memory: the allocator puts some there. */
	ASSERT_LT(0, in_cma);

	migrate0 = vmstat_read("replica_migrate");
	snprintf(pages, sizeof(pages), "%lld", count);
	EXPECT_EQ(0, write_with_timeout(CMA_DIR "/alloc", pages)) {
		TH_LOG("cma alloc of %lld pages: %s", count, strerror(errno));
	}
	/* Moved within node 0, not dropped: the node keeps its copies. */
	EXPECT_LE(migrate0 + in_cma, vmstat_read("replica_migrate"));
	EXPECT_EQ(-1, pattern_mismatch(self->f.p, LEN, 0, SEED));
	ASSERT_EQ(0, page_nodes(self->f.p, NPAGES, status));
	EXPECT_EQ((size_t)NPAGES, count_on_node(status, NPAGES, 0));
	ASSERT_EQ(0, page_pfns(self->f.p, NPAGES, self->f.pfns));
	for (i = 0; i < NPAGES; i++)
		still_in_cma += self->f.pfns[i] >= base &&
				self->f.pfns[i] < base + count;
	EXPECT_EQ(0, still_in_cma);
	ASSERT_EQ(0, write_text_file(CMA_DIR "/free", pages));
}

#ifndef MADV_HWPOISON
#define MADV_HWPOISON		100
#endif

/* What the job of the poisoned-replica test reports. */
#define POISON_NO_MEMORY_FAILURE	99
#define POISON_NO_BLOCK			98

/*
 * On node 1, which maps the replicas: poison one replica in a movable
 * block, and offline that block; the next block if it holds memory that
 * cannot go (the memory map, say), until one goes.  The job stays on node
 * 1 throughout: a task that moves node leaves its replicas behind.
 */
static int poison_and_offline_job(void *arg)
{
	struct mapped_file *f = arg;
	int held[16], status[NPAGES], n, i, j, timed_out = 0;
	long block_pages, blocks[16];
	char state[128];

	block_pages = read_number(MEMORY_DIR "/block_size_bytes", 16) /
		      PAGE_SIZE_4K;
	f->p = mmap(NULL, LEN, PROT_READ, MAP_PRIVATE, f->fd, 0);
	if (f->p == MAP_FAILED || block_pages <= 0)
		return 2;
	touch_pages(f->p, LEN);
	if (page_nodes(f->p, NPAGES, status) || page_pfns(f->p, NPAGES, f->pfns))
		return 3;
	/* Only replicas are poisoned. */
	for (j = 0; j < NPAGES; j++)
		if (status[j] != 1)
			f->pfns[j] = 0;
	n = movable_blocks_with_replicas(f, blocks, held, 16);
	for (i = 0; i < n; i++) {
		for (j = 0; j < NPAGES; j++)
			if (f->pfns[j] && f->pfns[j] / block_pages == blocks[i])
				break;
		if (madvise(f->p + j * PAGE_SIZE_4K, PAGE_SIZE_4K,
			    MADV_HWPOISON)) {
			if (errno == EINVAL)
				return POISON_NO_MEMORY_FAILURE;
			fprintf(stderr, "MADV_HWPOISON of the replica at %#llx: %s\n",
				f->pfns[j], strerror(errno));
			return 4;
		}
		snprintf(state, sizeof(state), MEMORY_DIR "/memory%ld/state",
			 blocks[i]);
		if (!write_with_timeout(state, "offline")) {
			fprintf(stderr, "memory%ld, %d replicas, one poisoned: offline\n",
				blocks[i], held[i]);
			if (pattern_mismatch(f->p, LEN, 0, SEED) >= 0)
				return 5;
			/* A block that held a poisoned page stays offline. */
			if (!write_with_timeout(state, "online_movable") ||
			    errno == EHWPOISON)
				return 0;
			fprintf(stderr, "online again: %s\n", strerror(errno));
			return 6;
		}
		fprintf(stderr, "memory%ld, %d replicas, one poisoned: %s\n",
			blocks[i], held[i], strerror(errno));
		if (errno == EINTR)
			timed_out++;
	}
	return timed_out ? 7 : POISON_NO_BLOCK;
}

/*
 * A block that holds a poisoned replica goes offline as one that holds a
 * poisoned page-cache page does: the poisoned page is skipped, the other
 * replicas are dropped, and nothing loops until the timeout.  As for any
 * block that held a poisoned page, it cannot be onlined again (EHWPOISON):
 * the test gets a boot of its own.
 */
TEST_F(offline, offline_a_memory_block_with_a_poisoned_replica)
{
	int ret;

	if (access(MEMORY_DIR "/block_size_bytes", F_OK))
		SKIP(return, "no memory hotplug (CONFIG_MEMORY_HOTREMOVE)");
	if (!node1_has_movable_memory())
		SKIP(return, "node 1 has no ZONE_MOVABLE memory: boot with movablecore=");
	ASSERT_EQ(0, cache_file_on_node(self->f.fd, 0));
	ret = run_on_node(1, poison_and_offline_job, &self->f);
	if (ret == POISON_NO_MEMORY_FAILURE)
		SKIP(return, "no CONFIG_MEMORY_FAILURE");
	EXPECT_EQ(0, ret);
}

TEST_HARNESS_MAIN
