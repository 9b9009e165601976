// SPDX-License-Identifier: GPL-2.0
/*
 * Replicas show where users look for memory: "Replicas:" in /proc/meminfo
 * and each node's meminfo, counted as reclaimable in MemAvailable,
 * "replica" and the replica events in a cgroup's memory.stat and
 * memory.numa_stat, and "Replicated:" per mapping in /proc/PID/smaps.
 * Every figure must add up to nr_replica_pages.  replica_wasted counts
 * the replicas dropped before anyone used them again.
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

FIXTURE(counters) {
	struct cgroup_file cf;
};

/*
 * The file is cached on node 0, and the test binary already replicated
 * on node 1, by each test's first step: a failure there must reach the
 * teardown, which the setup's does not.
 */
FIXTURE_SETUP(counters)
{
	char why[128];
	int rc = cgroup_file_setup(&self->cf, "counters", NPAGES, FILE_SEED,
				   why, sizeof(why));

	if (rc > 0)
		SKIP(return, "%s", why);
	ASSERT_EQ(0, rc);
}

/* In the parent, for the reason given in memcg.c. */
FIXTURE_TEARDOWN_PARENT(counters)
{
	cgroup_file_teardown(&self->cf);
}

/*
 * Each test's first step: room for the replicas on node 1, the file
 * cached on node 0, and the test binary's replicas made on node 1, so
 * that only the file's are made in the test.
 */
static void room_cache_and_warm(struct __test_metadata *_metadata, int fd)
{
	long room = room_then_cache(1, 2 * NPAGES, fd, 0);

	ASSERT_LE(2 * NPAGES, room)
		TH_LOG("node 1: %ld pages free above its high watermark after 30 s",
		       room);
	ASSERT_EQ(0, warm_self_on_node(1));
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

	p = cgroup_map_touched(a->cgroup, a->fd, LEN);
	if (!p)
		return 3;
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
	static const char * const why[] = {
		"replica_alloc", "replica_alloc_fail", "replica_reclaim",
		"replica_evict", "replica_collapse", "pgsteal_kswapd",
		"pgsteal_direct", "pgmigrate_success",
	};
	struct map_args a = {
		.fd = fd,
		.node = 1,
		.cgroup = cgroup,
		.on_node = shared,
		.replicated_kb = shared + 1,
	};
	long long before[ARRAY_SIZE(why)];
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(why); i++)
		before[i] = vmstat_read(why[i]);
	ASSERT_EQ(0, run_on_node(1, map_and_touch, &a));
	/*
	 * Short of local replicas (local pages that are not replicas are
	 * originals that moved), say what happened meanwhile.
	 */
	for (i = 0; i < ARRAY_SIZE(why) && (*a.on_node != NPAGES ||
					    *a.replicated_kb != LEN / 1024);
	     i++)
		TH_LOG("%s +%lld", why[i], vmstat_read(why[i]) - before[i]);
	ASSERT_EQ(NPAGES, *a.on_node);
	ASSERT_EQ(LEN / 1024, *a.replicated_kb);
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

#define FIGURES_TRIES	20

/*
 * The figures come from several files, read one after the other: reclaim
 * may take a replica in between.  Read them until nr_replica_pages stays
 * the same across one reading; false if it never does.
 */
static bool replica_figures_read_settled(struct replica_figures *f)
{
	int try;

	for (try = 0; try < FIGURES_TRIES; try++) {
		replica_figures_read(f);
		if (vmstat_read("nr_replica_pages") == f->vmstat_pages &&
		    node_vmstat_read(1, "nr_replica_pages") ==
		    f->node1_vmstat_pages)
			return true;
		usleep(100000);
	}
	return false;
}

TEST_F(counters, meminfo_shows_replicas_on_every_node)
{
	struct replica_figures f;

	room_cache_and_warm(_metadata, self->cf.fd);

	make_replicas_on_node1(_metadata, self->cf.fd, self->cf.shared, NULL);
	ASSERT_TRUE(replica_figures_read_settled(&f))
		TH_LOG("nr_replica_pages changed across each of %d readings",
		       FIGURES_TRIES);
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
 * A reclaimable term of MemAvailable (si_mem_available()): what can be
 * reclaimed, less what must stay, half of it at most.
 */
static long long available_term_kb(long long reclaimable_kb, long long low_kb)
{
	return reclaimable_kb - (reclaimable_kb / 2 < low_kb ?
				 reclaimable_kb / 2 : low_kb);
}

/* The meminfo lines MemAvailable is made of, read at one instant. */
enum {
	AVAIL, FREE, ACTIVE_FILE, INACTIVE_FILE, REPLICAS, KRECLAIMABLE,
	NR_AVAIL_KEYS
};

static const char * const avail_keys[NR_AVAIL_KEYS] = {
	[AVAIL] = "MemAvailable",
	[FREE] = "MemFree",
	[ACTIVE_FILE] = "Active(file)",
	[INACTIVE_FILE] = "Inactive(file)",
	[REPLICAS] = "Replicas",
	[KRECLAIMABLE] = "KReclaimable",
};

struct avail_figures {
	long long kb[NR_AVAIL_KEYS];
	long long low_kb;	/* the zones' low watermarks */
	long long cache_kb;	/* the page cache and the replicas */
	long long terms_kb;	/* the reclaimable terms */
};

static int avail_figures_read(struct avail_figures *f)
{
	int node, k;

	vmstat_fold();
	f->low_kb = 0;
	for (node = 0; node < nr_online_nodes(); node++)
		f->low_kb += node_zoneinfo(node, "low") * 4;
	if (meminfo_snapshot(avail_keys, f->kb, NR_AVAIL_KEYS))
		return -1;
	for (k = 0; k < NR_AVAIL_KEYS; k++)
		if (f->kb[k] < 0)
			return -1;
	f->cache_kb = f->kb[ACTIVE_FILE] + f->kb[INACTIVE_FILE] +
		      f->kb[REPLICAS];
	f->terms_kb = available_term_kb(f->cache_kb, f->low_kb) +
		      available_term_kb(f->kb[KRECLAIMABLE], f->low_kb);
	return 0;
}

TEST_F(counters, memavailable_counts_replicas_as_reclaimable)
{
	struct avail_figures a0, a1;
	long long made_kb, moved_kb, want_kb, cache_term_kb;

	room_cache_and_warm(_metadata, self->cf.fd);

	ASSERT_EQ(0, avail_figures_read(&a0));
	make_replicas_on_node1(_metadata, self->cf.fd, self->cf.shared, NULL);
	ASSERT_EQ(0, avail_figures_read(&a1));

	/*
	 * MemAvailable moves with MemFree and with its reclaimable terms:
	 * the page cache's, which the replicas join, and the reclaimable
	 * slab's.  Without the replicas in it, it would fall by what they
	 * took from MemFree.  Only a watermark boost that comes or goes in
	 * between, or counters that change while meminfo is made, move it
	 * otherwise.
	 */
	made_kb = a1.cache_kb - a0.cache_kb;
	moved_kb = (a1.kb[AVAIL] - a0.kb[AVAIL]) - (a1.kb[FREE] - a0.kb[FREE]);
	want_kb = a1.terms_kb - a0.terms_kb;
	cache_term_kb = available_term_kb(a1.cache_kb, a1.low_kb) -
			available_term_kb(a0.cache_kb, a0.low_kb);
	TH_LOG("low watermarks %lld -> %lld kB", a0.low_kb, a1.low_kb);
	TH_LOG("page cache and replicas %lld -> %lld kB; KReclaimable %lld -> %lld kB",
	       a0.cache_kb, a1.cache_kb, a0.kb[KRECLAIMABLE],
	       a1.kb[KRECLAIMABLE]);
	TH_LOG("MemFree %lld -> %lld kB; MemAvailable %lld -> %lld kB",
	       a0.kb[FREE], a1.kb[FREE], a0.kb[AVAIL], a1.kb[AVAIL]);
	TH_LOG("MemAvailable less MemFree moved %lld kB, its reclaimable terms %lld kB",
	       moved_kb, want_kb);
	ASSERT_LE(NPAGES * 4, a1.kb[REPLICAS] - a0.kb[REPLICAS]);
	/*
	 * At least half of what the replicas add counts, in the page cache's
	 * term: the slab's may shrink meanwhile (KReclaimable 9804 -> 8900
	 * kB in one run).
	 */
	ASSERT_LE(made_kb / 2, cache_term_kb);
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

/* The replica events, system-wide and in the cgroup. */
static const char * const replica_events[] = {
	"replica_alloc", "replica_alloc_fail", "replica_map", "replica_read",
	"replica_collapse", "replica_reclaim", "replica_evict",
	"replica_migrate", "replica_follow", "replica_wasted", "replica_settle",
};

#define NR_EVENTS	ARRAY_SIZE(replica_events)

/*
 * What the cgroup's memory.stat says of its replicas, after the flush:
 * their pages, those made, and those removed since.
 */
struct cgroup_replicas {
	long long pages, made, removed;
};

static void cgroup_replicas_read(struct __test_metadata *_metadata,
				 const char *cgroup, const long long *before,
				 struct cgroup_replicas *r)
{
	unsigned int i;

	sleep(MEMCG_FLUSH_SECONDS);
	r->pages = cgroup_read_key(cgroup, "memory.stat", "replica") /
		   PAGE_SIZE_4K;
	r->made = cgroup_read_key(cgroup, "memory.stat", "replica_alloc");
	r->removed = cgroup_read_key(cgroup, "memory.stat", "replica_reclaim") +
		     cgroup_read_key(cgroup, "memory.stat", "replica_collapse") +
		     cgroup_read_key(cgroup, "memory.stat", "replica_evict");
	for (i = 0; i < NR_EVENTS; i++)
		TH_LOG("%s: %lld in /proc/vmstat, %lld in memory.stat",
		       replica_events[i],
		       vmstat_read(replica_events[i]) - before[i],
		       cgroup_read_key(cgroup, "memory.stat",
				       replica_events[i]));
	TH_LOG("memory.stat: replica %lld pages", r->pages);
}

TEST_F(counters, memory_stat_counts_the_cgroups_replicas_and_events)
{
	long long node1_0, node1_made, events0[NR_EVENTS];
	struct cgroup_replicas r;
	unsigned int i;

	room_cache_and_warm(_metadata, self->cf.fd);

	vmstat_fold();
	node1_0 = node_vmstat_read(1, "nr_replica_pages");
	for (i = 0; i < NR_EVENTS; i++)
		events0[i] = vmstat_read(replica_events[i]);
	make_replicas_on_node1(_metadata, self->cf.fd, self->cf.shared,
			       self->cf.cgroup);
	vmstat_fold();
	node1_made = node_vmstat_read(1, "nr_replica_pages") - node1_0;
	cgroup_replicas_read(_metadata, self->cf.cgroup, events0, &r);
	TH_LOG("node 1: %lld more replica pages", node1_made);
	/* Only the cgroup's task made replicas, all on node 1. */
	ASSERT_LE(NPAGES, r.made);
	ASSERT_EQ(node1_made, r.pages);
	ASSERT_EQ(r.made - r.removed, r.pages);
	ASSERT_EQ(r.pages * PAGE_SIZE_4K,
		  numa_stat_read(self->cf.cgroup, "replica", 1));
	ASSERT_EQ(0, numa_stat_read(self->cf.cgroup, "replica", 0));

	/* Dropping caches gives the replicas back; the cgroup sees it. */
	ASSERT_EQ(0, drop_all_caches());
	cgroup_replicas_read(_metadata, self->cf.cgroup, events0, &r);
	ASSERT_EQ(0, r.pages);
	ASSERT_EQ(r.made, r.removed);
}

/* What a collapse did in the cgroup: pages collapsed, and wasted. */
struct collapse_figures {
	long long collapsed, wasted, made, pages;
};

static void collapse_figures_read(const char *cgroup,
				  struct collapse_figures *f)
{
	f->collapsed = cgroup_read_key(cgroup, "memory.stat",
				       "replica_collapse");
	f->wasted = cgroup_read_key(cgroup, "memory.stat", "replica_wasted");
	f->made = cgroup_read_key(cgroup, "memory.stat", "replica_alloc");
	f->pages = cgroup_read_key(cgroup, "memory.stat", "replica") /
		   PAGE_SIZE_4K;
}

#define COLLAPSE_WAIT_SECONDS	20

/*
 * memory.stat takes in the per-CPU counts past a batch of updates or from
 * a worker every 2 s, which an emulated guest may run late: read until
 * @collapsed more collapses show (0: until two readings a second apart
 * agree), for COLLAPSE_WAIT_SECONDS at most.
 */
static void collapse_figures_wait(const char *cgroup, long long collapsed,
				  struct collapse_figures *f)
{
	struct collapse_figures prev;
	int i;

	collapse_figures_read(cgroup, &prev);
	for (i = 0; i < COLLAPSE_WAIT_SECONDS; i++) {
		sleep(1);
		collapse_figures_read(cgroup, f);
		if (collapsed ? f->collapsed >= collapsed :
		    !memcmp(f, &prev, sizeof(prev)))
			return;
		prev = *f;
	}
}

/*
 * Open the file for write and close it, which collapses its replicas, and
 * see what the cgroup counted.
 */
static void collapse_by_open(struct __test_metadata *_metadata,
			     struct cgroup_file *cf, const char *what,
			     long long want_wasted)
{
	struct collapse_figures f0, f1;
	int fd;

	collapse_figures_wait(cf->cgroup, 0, &f0);
	fd = open(cf->path, O_RDWR);
	ASSERT_LE(0, fd);
	close(fd);
	collapse_figures_wait(cf->cgroup, f0.collapsed + NPAGES, &f1);
	TH_LOG("%s: %lld replica pages made so far, %lld there before, %lld after",
	       what, f0.made, f0.pages, f1.pages);
	TH_LOG("%s: replica_collapse +%lld, replica_wasted +%lld", what,
	       f1.collapsed - f0.collapsed, f1.wasted - f0.wasted);
	ASSERT_EQ(NPAGES, f1.collapsed - f0.collapsed);
	ASSERT_EQ(want_wasted, f1.wasted - f0.wasted);
}

/*
 * Three mappings of 16 MiB and two collapses, each waited for in
 * memory.stat: over the default 30 s in an emulated guest.
 */
TEST_F_TIMEOUT(counters, replica_wasted_counts_replicas_dropped_before_reuse,
	       120)
{
	struct cgroup_file *cf = &self->cf;

	room_cache_and_warm(_metadata, cf->fd);

	/* Made by one task and mapped by no other: all wasted. */
	make_replicas_on_node1(_metadata, cf->fd, cf->shared, cf->cgroup);
	collapse_by_open(_metadata, cf, "made, collapsed", NPAGES);

	/* Mapped again by a second task before the collapse: none wasted. */
	make_replicas_on_node1(_metadata, cf->fd, cf->shared, cf->cgroup);
	make_replicas_on_node1(_metadata, cf->fd, cf->shared, cf->cgroup);
	collapse_by_open(_metadata, cf, "made, mapped again, collapsed", 0);
}

TEST_F(counters, smaps_shows_what_a_mapping_maps_from_replicas)
{
	struct map_args a = {
		.fd = self->cf.fd,
		.on_node = self->cf.shared,
		.replicated_kb = self->cf.shared + 1,
	};

	room_cache_and_warm(_metadata, self->cf.fd);

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
