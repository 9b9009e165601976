// SPDX-License-Identifier: GPL-2.0
/*
 * Replicas show where users look for memory: "Replicas:" in /proc/meminfo
 * and each node's meminfo, counted as reclaimable in MemAvailable,
 * "replica" and the replica events in a cgroup's memory.stat and
 * memory.numa_stat, and "Replicated:" per mapping in /proc/PID/smaps.
 * Every figure must add up to nr_replica_pages.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../kselftest_harness.h"
#include "replica_util.h"

#define NPAGES		4096
#define LEN		((size_t)NPAGES * PAGE_SIZE_4K)
#define FILE_SEED	31

/*
 * memory.stat flushes the per-CPU figures only past a batch of updates,
 * and a worker flushes them all every 2 s: wait for it.
 */
#define MEMCG_FLUSH_SECONDS	3

/* A file cached on node 0, a cgroup, and a page shared with children. */
FIXTURE(counters) {
	char prev_policy[32];
	char cgroup[128];
	char path[64];
	int fd;
	long long *shared;
};

FIXTURE_SETUP(counters)
{
	long room;

	self->fd = -1;
	if (nr_online_nodes() < 2)
		SKIP(return, "needs 2 NUMA nodes, the guest has %d",
		     nr_online_nodes());
	if (cgroup_create(self->cgroup, sizeof(self->cgroup)))
		SKIP(return, "no memory cgroup: %s", strerror(errno));
	if (policy_require("private", self->prev_policy,
			   sizeof(self->prev_policy)))
		SKIP(return, "no replication policy \"private\" in this kernel");
	self->shared = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->shared);
	snprintf(self->path, sizeof(self->path), "counters.%d", getpid());
	self->fd = make_test_file(self->path, NPAGES, FILE_SEED);
	ASSERT_LE(0, self->fd);
	/* Below its high watermark node 1 makes no replica, by design. */
	ASSERT_EQ(0, drop_all_caches());
	room = node_wait_room_above_high(1, 2 * NPAGES, 30);
	ASSERT_LE(2 * NPAGES, room)
		TH_LOG("node 1: %ld pages free above its high watermark after 30 s",
		       room);
	ASSERT_EQ(0, cache_file_on_node(self->fd, 0));
	/* Only the file's replicas are made in the tests. */
	ASSERT_EQ(0, warm_self_on_node(1));
}

/*
 * In the parent: a failed ASSERT in the test's process skips a teardown
 * there (the harness's fork result does not survive its longjmp), which
 * would leave the policy switched.  The file closes as the test exits.
 */
FIXTURE_TEARDOWN_PARENT(counters)
{
	if (self->fd >= 0) {
		unlink(self->path);
		drop_all_caches();
	}
	if (self->cgroup[0])
		cgroup_remove(self->cgroup);
	if (self->prev_policy[0])
		policy_set(self->prev_policy);
}

struct map_args {
	int fd;
	int node;		/* the node it runs on */
	const char *cgroup;	/* joined first, if set */
	long long *on_node;	/* pages on the node it ran on, shared */
	long long *replicated_kb; /* the mapping's smaps "Replicated:" */
};

/* Map the file, touch it, and see where its pages are and what smaps says. */
static int map_and_touch(void *arg)
{
	struct map_args *a = arg;
	static int status[NPAGES];
	unsigned char *p;
	char field[64];

	if (a->cgroup && cgroup_enter(a->cgroup))
		return 2;
	p = mmap(NULL, LEN, PROT_READ, MAP_PRIVATE, a->fd, 0);
	if (p == MAP_FAILED)
		return 3;
	touch_pages(p, LEN);
	if (pattern_mismatch(p, LEN, 0, FILE_SEED) >= 0)
		return 4;
	if (page_nodes(p, NPAGES, status))
		return 5;
	*a->on_node = count_on_node(status, NPAGES, a->node);
	if (smaps_field(p, "Replicated", field, sizeof(field)))
		return 6;
	if (sscanf(field, "%lld kB", a->replicated_kb) != 1)
		return 7;
	return 0;
}

/*
 * Make replicas of the whole file @fd on node 1, from a task in @cgroup;
 * @shared is memory the task can write.
 */
static void make_replicas_on_node1(struct __test_metadata *_metadata, int fd,
				   long long *shared, const char *cgroup)
{
	struct map_args a = {
		.fd = fd,
		.node = 1,
		.cgroup = cgroup,
		.on_node = shared,
		.replicated_kb = shared + 1,
	};

	ASSERT_EQ(0, run_on_node(1, map_and_touch, &a));
	ASSERT_EQ(NPAGES, *a.on_node);
}

/*
 * The replica figures of /proc/vmstat, /proc/meminfo and the nodes'
 * meminfo and vmstat, with the per-CPU counters folded in first.
 */
struct replica_figures {
	long long vmstat_pages, meminfo_kb, nodes_meminfo_kb;
	long long node1_vmstat_pages, node1_meminfo_kb;
};

static void replica_figures_read(struct replica_figures *f)
{
	int node;

	vmstat_fold();
	f->vmstat_pages = vmstat_read("nr_replica_pages");
	f->meminfo_kb = meminfo_kb("Replicas");
	f->nodes_meminfo_kb = 0;
	for (node = 0; node < nr_online_nodes(); node++)
		f->nodes_meminfo_kb += node_meminfo_kb(node, "Replicas");
	f->node1_vmstat_pages = node_vmstat_read(1, "nr_replica_pages");
	f->node1_meminfo_kb = node_meminfo_kb(1, "Replicas");
}

TEST_F(counters, meminfo_shows_replicas_on_every_node)
{
	struct replica_figures f;

	make_replicas_on_node1(_metadata, self->fd, self->shared, NULL);
	replica_figures_read(&f);
	TH_LOG("nr_replica_pages %lld, Replicas: %lld kB, over the nodes %lld kB",
	       f.vmstat_pages, f.meminfo_kb, f.nodes_meminfo_kb);
	TH_LOG("node 1: nr_replica_pages %lld, Replicas: %lld kB",
	       f.node1_vmstat_pages, f.node1_meminfo_kb);
	ASSERT_LE(0, f.meminfo_kb);
	ASSERT_LE(0, f.node1_meminfo_kb);
	ASSERT_EQ(f.vmstat_pages * 4, f.meminfo_kb);
	ASSERT_EQ(f.meminfo_kb, f.nodes_meminfo_kb);
	ASSERT_EQ(f.node1_vmstat_pages * 4, f.node1_meminfo_kb);
	ASSERT_LE(NPAGES * 4, f.node1_meminfo_kb);
}

/*
 * The page-cache term of MemAvailable (si_mem_available()): the file LRUs
 * and the replicas, less what must stay, half of them at most.
 */
static long long available_cache_kb(long long cache_kb, long long low_kb)
{
	return cache_kb - (cache_kb / 2 < low_kb ? cache_kb / 2 : low_kb);
}

struct avail_figures {
	long long avail_kb, free_kb, cache_kb;
};

static void avail_figures_read(struct avail_figures *f)
{
	vmstat_fold();
	f->avail_kb = meminfo_kb("MemAvailable");
	f->free_kb = meminfo_kb("MemFree");
	f->cache_kb = meminfo_kb("Active(file)") + meminfo_kb("Inactive(file)") +
		      meminfo_kb("Replicas");
}

TEST_F(counters, memavailable_counts_replicas_as_reclaimable)
{
	struct avail_figures a0, a1;
	long long low_kb = 0, made_kb, moved_kb, want_kb;
	int node;

	for (node = 0; node < nr_online_nodes(); node++)
		low_kb += node_zoneinfo(node, "low") * 4;
	avail_figures_read(&a0);
	make_replicas_on_node1(_metadata, self->fd, self->shared, NULL);
	avail_figures_read(&a1);

	/*
	 * MemAvailable moves with MemFree, and with its page-cache term,
	 * which the replicas join: without them in it, it would fall by
	 * what they took from MemFree.  Slab, the rest of it, hardly moves.
	 */
	made_kb = a1.cache_kb - a0.cache_kb;
	moved_kb = (a1.avail_kb - a0.avail_kb) - (a1.free_kb - a0.free_kb);
	want_kb = available_cache_kb(a1.cache_kb, low_kb) -
		  available_cache_kb(a0.cache_kb, low_kb);
	TH_LOG("low watermarks %lld kB; page cache and replicas %lld -> %lld kB",
	       low_kb, a0.cache_kb, a1.cache_kb);
	TH_LOG("MemFree %lld -> %lld kB; MemAvailable %lld -> %lld kB",
	       a0.free_kb, a1.free_kb, a0.avail_kb, a1.avail_kb);
	TH_LOG("MemAvailable less MemFree moved %lld kB, its page-cache term %lld kB",
	       moved_kb, want_kb);
	ASSERT_LE(NPAGES * 4, made_kb);
	/* At least half of what the replicas add counts. */
	ASSERT_LE(made_kb / 2, want_kb);
	ASSERT_GT(made_kb / 4, llabs(moved_kb - want_kb));
}

/* The "@key N0=... N1=..." line of memory.numa_stat: node @node's value. */
static long long numa_stat_read(const char *cgroup, const char *key, int node)
{
	char name[256], line[512], want[32], *p;
	size_t klen = strlen(key);
	long long val = -1;
	FILE *f;

	snprintf(name, sizeof(name), "%s/memory.numa_stat", cgroup);
	snprintf(want, sizeof(want), " N%d=", node);
	f = fopen(name, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, key, klen) || line[klen] != ' ')
			continue;
		p = strstr(line, want);
		if (p)
			sscanf(p + strlen(want), "%lld", &val);
		break;
	}
	fclose(f);
	return val;
}

TEST_F(counters, memory_stat_counts_the_cgroups_replicas_and_events)
{
	long long node1_0, made, stat_bytes, numa_bytes, alloc;
	long long reclaimed, collapsed, evicted;

	vmstat_fold();
	node1_0 = node_vmstat_read(1, "nr_replica_pages");
	make_replicas_on_node1(_metadata, self->fd, self->shared,
			       self->cgroup);
	vmstat_fold();
	made = node_vmstat_read(1, "nr_replica_pages") - node1_0;
	sleep(MEMCG_FLUSH_SECONDS);
	stat_bytes = cgroup_read_key(self->cgroup, "memory.stat", "replica");
	numa_bytes = numa_stat_read(self->cgroup, "replica", 1);
	alloc = cgroup_read_key(self->cgroup, "memory.stat", "replica_alloc");
	TH_LOG("node 1 made %lld replicas; numa_stat: replica N1=%lld",
	       made, numa_bytes);
	TH_LOG("memory.stat: replica %lld, replica_alloc %lld", stat_bytes,
	       alloc);
	ASSERT_EQ(NPAGES, made);
	ASSERT_EQ(made * PAGE_SIZE_4K, stat_bytes);
	ASSERT_EQ(made * PAGE_SIZE_4K, numa_bytes);
	ASSERT_EQ(0, numa_stat_read(self->cgroup, "replica", 0));
	ASSERT_EQ(made, alloc);

	/* Dropping caches gives the replicas back; the cgroup sees it. */
	ASSERT_EQ(0, drop_all_caches());
	sleep(MEMCG_FLUSH_SECONDS);
	stat_bytes = cgroup_read_key(self->cgroup, "memory.stat", "replica");
	reclaimed = cgroup_read_key(self->cgroup, "memory.stat",
				    "replica_reclaim");
	collapsed = cgroup_read_key(self->cgroup, "memory.stat",
				    "replica_collapse");
	evicted = cgroup_read_key(self->cgroup, "memory.stat",
				  "replica_evict");
	TH_LOG("after drop_caches: replica %lld; replica_reclaim %lld,",
	       stat_bytes, reclaimed);
	TH_LOG("replica_collapse %lld, replica_evict %lld", collapsed, evicted);
	ASSERT_EQ(0, stat_bytes);
	ASSERT_EQ(made, reclaimed + collapsed + evicted);
}

TEST_F(counters, smaps_shows_what_a_mapping_maps_from_replicas)
{
	struct map_args a = {
		.fd = self->fd,
		.on_node = self->shared,
		.replicated_kb = self->shared + 1,
	};

	/* On node 1, the whole file comes from replicas... */
	a.node = 1;
	ASSERT_EQ(0, run_on_node(1, map_and_touch, &a));
	TH_LOG("node 1: %lld of %d pages local, Replicated: %lld kB",
	       *a.on_node, NPAGES, *a.replicated_kb);
	ASSERT_EQ(NPAGES, *a.on_node);
	ASSERT_EQ(NPAGES * 4, *a.replicated_kb);

	/* ...and on node 0, none of it: the page cache is there. */
	a.node = 0;
	ASSERT_EQ(0, run_on_node(0, map_and_touch, &a));
	TH_LOG("node 0: %lld of %d pages local, Replicated: %lld kB",
	       *a.on_node, NPAGES, *a.replicated_kb);
	ASSERT_EQ(NPAGES, *a.on_node);
	ASSERT_EQ(0, *a.replicated_kb);
}

TEST_HARNESS_MAIN
