// SPDX-License-Identifier: GPL-2.0
/*
 * NUMA page-cache replication: giving replicas back.  Replicas are on
 * per-tier, NUMA- and memcg-aware LRU lists; a shrinker takes them under
 * memory pressure before reclaim turns to the page cache, and a policy
 * switch drops those the new policy does not make.
 */

#include <linux/list_lru.h>
#include <linux/memcontrol.h>
#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/shrinker.h>
#include <linux/slab.h>
#include <linux/swap.h>
#include <linux/vmstat.h>

#include "internal.h"

struct list_lru replica_lru[REPLICA_NR_TIERS];

/*
 * Isolating replicas from the shrinker's lists: @keep_kinds selects the
 * replicas a policy switch keeps (0 takes them all), @second_chance spares
 * those referenced since the last scan once.
 */
struct replica_isolate {
	struct list_head dispose;
	unsigned int keep_kinds;
	bool second_chance;
	bool busy;
};

static enum lru_status replica_isolate(struct list_head *item,
				       struct list_lru_one *list,
				       spinlock_t *lock, void *arg)
{
	struct folio *replica = list_entry(item, struct folio, lru);
	struct replica_isolate *isolate = arg;
	struct folio *original;

	/* On the list, the replica is in the store and has its info. */
	if (isolate->second_chance &&
	    atomic_long_fetch_andnot(REPLICA_USED,
				     &replica_info(replica)->use) & REPLICA_USED)
		return LRU_ROTATE;
	/*
	 * Memory pressure leaves what an mlocked mapping maps alone, as it
	 * does page cache: its task would fault on it.  A policy switch
	 * drops it all the same.
	 */
	if (isolate->second_chance && folio_test_mlocked(replica))
		return LRU_ROTATE;
	/*
	 * A replica being mapped, made or collapsed, or whose original is
	 * being mapped or read in, is busy.  The shrinker leaves it where it
	 * is; a policy switch, walking each list once, moves it and those it
	 * keeps behind the ones it has yet to see.  Both locks are needed to
	 * take it out of the store; trylocks, so their order does not matter.
	 */
	if (!folio_trylock(replica))
		goto busy;
	original = replica_info(replica)->original;
	if (!folio_trylock(original)) {
		folio_unlock(replica);
		goto busy;
	}
	if (atomic_long_read(&replica_info(replica)->use) &
	    isolate->keep_kinds) {
		folio_unlock(original);
		folio_unlock(replica);
		return LRU_ROTATE;
	}
	list_lru_isolate_move(list, item, &isolate->dispose);
	return LRU_REMOVED;

busy:
	isolate->busy = true;
	return isolate->second_chance ? LRU_SKIP : LRU_ROTATE;
}

/**
 * replica_mlocked - whether an mlocked mapping may map a replica
 * @replica: a locked replica in the store
 *
 * mlock() leaves unmarked a large folio whose page table entries it
 * cannot take in one batch, so the flag alone misses some: a mapped
 * replica of a range that an mlocked mapping covers counts as mlocked.
 *
 * Return: true if @replica is mlocked, or mapped while an mlocked
 * mapping covers its range (or the file's rmap is busy).
 */
bool replica_mlocked(struct folio *replica)
{
	struct address_space *mapping = replica_info(replica)->mapping;
	struct vm_area_struct *vma;
	bool locked = false;

	if (folio_test_mlocked(replica))
		return true;
	if (!folio_mapped(replica))
		return false;
	/* Busy: rather keep it, as reclaim keeps a folio it cannot check. */
	if (!i_mmap_trylock_read(mapping))
		return true;
	vma_interval_tree_foreach(vma, &mapping->i_mmap, replica->index,
				  folio_next_index(replica) - 1) {
		if (vma->vm_flags & VM_LOCKED) {
			locked = true;
			break;
		}
	}
	i_mmap_unlock_read(mapping);
	return locked;
}

/*
 * Unmap and release the replicas isolated from the LRU, locked with their
 * originals, but for those that mlocked mappings map if @keep_mlocked,
 * which go back on the list.  Returns how many replicas were released;
 * reclaim and the counters are told how many pages.
 */
static unsigned long replica_dispose(struct list_head *dispose,
				     bool keep_mlocked,
				     enum replica_drop_reason why)
{
	struct folio *replica, *next;
	unsigned long released = 0, replicas = 0;

	list_for_each_entry_safe(replica, next, dispose, lru) {
		/* The inode cannot go while we hold a replica of it locked. */
		struct address_space *mapping = replica_info(replica)->mapping;
		struct folio *original = replica_info(replica)->original;

		list_del_init(&replica->lru);
		if (keep_mlocked && replica_mlocked(replica)) {
			list_lru_add(&replica_lru[replica_info(replica)->tier],
				     &replica->lru, folio_nid(replica),
				     folio_memcg(replica));
			folio_unlock(original);
			folio_unlock(replica);
			continue;
		}
		replica_unlink(READ_ONCE(mapping->i_replicas), replica, false);
		folio_unlock(original);
		replica_unmap(replica);
		released += folio_nr_pages(replica);
		replicas++;
		replica_dropped(replica, why);
		replica_release(replica);
	}
	/*
	 * Reclaim counts only what its own LRUs and the slab give back: tell
	 * it, or kswapd sees no progress, gives the node up, and allocations
	 * fall to the OOM killer with replicas still there to take.
	 */
	mm_account_reclaimed_pages(released);
	return replicas;
}

static unsigned long replica_shrink_count(struct shrinker *shrinker,
					  struct shrink_control *sc)
{
	unsigned long count = 0;
	int tier;

	for (tier = 0; tier < REPLICA_NR_TIERS; tier++)
		count += list_lru_shrink_count(&replica_lru[tier], sc);
	return count ? count : SHRINK_EMPTY;
}

/*
 * A clock over each tier: a replica referenced since the last scan is
 * passed over once, its bit cleared, so the walk may go round a list once
 * before it frees what it was asked for.  Stopping after nr_to_scan
 * entries instead would let a node whose replicas were all used recently
 * see the shrinker come back empty-handed, several times over, while
 * reclaim takes page cache that costs I/O to read again; a replica costs
 * a copy.  The first tier gives all it can before the last is scanned.
 * The shrinker's objects are replicas, whatever their size, as its lists
 * hold them; what reclaim is credited with is pages.  Reclaim runs the
 * shrinker with a reclaim state; drop_caches (drop_slab()) without one,
 * and takes every replica whatever its use: that is not pressure.
 */
static unsigned long replica_shrink_scan(struct shrinker *shrinker,
					 struct shrink_control *sc)
{
	struct replica_isolate isolate = { .second_chance = true };
	unsigned long want = sc->nr_to_scan, freed = 0;
	enum replica_drop_reason why = current->reclaim_state ?
		REPLICA_DROP_SHRINK : REPLICA_DROP_UNCACHE;
	int tier;

	INIT_LIST_HEAD(&isolate.dispose);
	for (tier = 0; tier < REPLICA_NR_TIERS && freed < want; tier++) {
		struct list_lru *lru = &replica_lru[tier];
		unsigned long left = list_lru_shrink_count(lru, sc) + want;

		while (left && freed < want) {
			unsigned long batch = min(want - freed, left);
			unsigned long walk = batch;

			list_lru_walk_one(lru, sc->nid, sc->memcg,
					  replica_isolate, &isolate, &walk);
			freed += replica_dispose(&isolate.dispose, true, why);
			/* A walk that stopped early took all it could. */
			if (walk)
				break;
			left -= batch;
		}
	}
	return freed;
}

/*
 * Walk one list once, in batches: what the walk keeps or finds busy is
 * rotated behind what it has yet to see, so the walk ends even when it
 * keeps thousands.
 */
static void replica_drop_list(struct list_lru *lru, int nid,
			      struct mem_cgroup *memcg,
			      struct replica_isolate *isolate)
{
	unsigned long left = list_lru_count_one(lru, nid, memcg);

	while (left) {
		unsigned long batch = min(left, 1024UL), walk = batch;

		list_lru_walk_one(lru, nid, memcg, replica_isolate, isolate,
				  &walk);
		replica_dispose(&isolate->dispose, false, REPLICA_DROP_POLICY);
		cond_resched();
		/* A walk that stopped early found the list shorter. */
		if (walk)
			break;
		left -= batch;
	}
}

/**
 * replica_drop_kinds - free the replicas a new policy does not make
 * @keep_kinds: REPLICA_KIND_* of the replicas to keep; 0 frees them all
 *
 * Used when the policy changes; the caller has published the new policy
 * and issued a full barrier, so that a replica made for the old policy
 * after this walk removes itself.  Returns once every replica it could
 * not take at once (a fault, a collapse or the shrinker held it, or
 * migration had it isolated) was looked at again; with @keep_kinds 0,
 * once no replica is left.
 */
void replica_drop_kinds(unsigned int keep_kinds)
{
	struct replica_isolate isolate = { .keep_kinds = keep_kinds };
	struct mem_cgroup *memcg;
	int tier, nid;

	INIT_LIST_HEAD(&isolate.dispose);
	for (;;) {
		isolate.busy = false;
		for (tier = 0; tier < REPLICA_NR_TIERS; tier++) {
			for_each_online_node(nid) {
				memcg = mem_cgroup_iter(NULL, NULL, NULL);
				do {
					replica_drop_list(&replica_lru[tier],
							  nid, memcg, &isolate);
				} while ((memcg = mem_cgroup_iter(NULL, memcg,
								  NULL)));
			}
		}
		/*
		 * Replicas that migration has isolated are on no list: their
		 * migration ends soon, and puts them or their copies back.
		 */
		if (keep_kinds && !isolate.busy &&
		    !atomic_long_read(&replica_isolated))
			break;
		if (!keep_kinds && !atomic_long_read(&replica_count))
			break;
		/* Wait for whoever holds the last ones to let go. */
		schedule_timeout_uninterruptible(1);
	}
}

/**
 * replica_reclaim_init - set up the replica LRUs and their shrinker
 *
 * Return: 0, or a negative errno.
 */
int replica_reclaim_init(void)
{
	struct shrinker *shrinker;
	int tier, err;

	replica_info_cache = KMEM_CACHE(replica_info, SLAB_ACCOUNT);
	if (!replica_info_cache)
		return -ENOMEM;
	shrinker = shrinker_alloc(SHRINKER_NUMA_AWARE | SHRINKER_MEMCG_AWARE,
				  "replica");
	if (!shrinker)
		goto fail_cache;
	for (tier = 0; tier < REPLICA_NR_TIERS; tier++) {
		err = list_lru_init_memcg(&replica_lru[tier], shrinker);
		if (err) {
			while (tier--)
				list_lru_destroy(&replica_lru[tier]);
			shrinker_free(shrinker);
			goto fail_cache;
		}
	}
	shrinker->count_objects = replica_shrink_count;
	shrinker->scan_objects = replica_shrink_scan;
	/* A replica costs one page copy to make again: give them back first. */
	shrinker->seeks = 0;
	shrinker_register(shrinker);
	return 0;

fail_cache:
	kmem_cache_destroy(replica_info_cache);
	return -ENOMEM;
}

