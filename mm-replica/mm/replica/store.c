// SPDX-License-Identifier: GPL-2.0
/*
 * NUMA page-cache replication: the replica store, and making, counting,
 * collapsing and releasing replicas.
 *
 * A replica is a folio, allocated on one node, holding a copy of an
 * uptodate page-cache folio (its original, of the same order) of a file
 * that nobody can write.  It is never in i_pages and never on an LRU list:
 * the store (per mapping, per node, by index) owns one reference on it and
 * it owns one reference on its original, so the original stays in the page
 * cache while it has replicas (reclaim and invalidation leave it alone).
 * Originals that must stay migratable (CMA, ZONE_MOVABLE, isolated for
 * offlining) are not replicated.
 *
 * A replica does not pose as page cache: it is a non-LRU movable page,
 * whose folio->mapping holds replica_movable_ops, so the kernel's pfn
 * walkers (compaction, memory offlining, alloc_contig_range(), soft
 * offlining) isolate and migrate it as any other movable page; migrating
 * it puts the new page in its place in the store.  folio->index is the
 * original's, folio->private points at its struct replica_info, which
 * names the file for the rmap (replica_rmap_mapping()), and folio->lru
 * links it on the shrinker's list, unless migration has isolated it.
 * Where a node has no replica of a page yet, its store may hold instead a
 * value entry counting the remote read(2)s of that page.
 *
 * Whoever removes a replica from the store holds its original's folio lock
 * and its own, in that order, and keeps its own until it has unmapped and
 * released it; whoever maps a replica holds one of the two locks and found
 * it in the store under it.  That is what keeps a replica that is being
 * removed from being mapped again, and lets fault-around, which holds the
 * original's lock anyway, map a replica without touching its lock or its
 * reference count.  read(2) copies from a replica it found in the store
 * without locking it: such a copy overlaps the writer that removes it.
 *
 * A replica may exist only while the file has no writer: not open for
 * write, not mapped shared and writable, and not being truncated or
 * invalidated (i_replica_block).  Writers make themselves visible and then,
 * after a full barrier, remove every replica; a creator publishes its
 * replica and then, after a full barrier, checks for writers and removes
 * its replica again if it finds one.  One of the two always sees the other,
 * as for the huge page cache of CONFIG_READ_ONLY_THP_FOR_FS.
 */

#include <linux/fs.h>
#include <linux/list_lru.h>
#include <linux/log2.h>
#include <linux/memcontrol.h>
#include <linux/migrate.h>
#include <linux/mm.h>
#include <linux/mmzone.h>
#include <linux/pagemap.h>
#include <linux/rmap.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/vmstat.h>

#include "internal.h"

#define CREATE_TRACE_POINTS
#include <trace/events/replica.h>

/*
 * Replicas are an optimisation: take them only from the target node's free
 * memory (no reclaim, no kswapd wake-up, no warning).  They are movable
 * memory, in movable pageblocks, ZONE_MOVABLE and CMA like the page cache:
 * compaction, memory offlining and alloc_contig_range() migrate them
 * (replica_movable_ops).
 */
#define REPLICA_GFP	((GFP_HIGHUSER_MOVABLE | __GFP_THISNODE | \
			  __GFP_NORETRY | __GFP_NOWARN) & ~__GFP_RECLAIM)
/* The store's own memory, charged to the task that makes the replica. */
#define REPLICA_META_GFP	(GFP_NOWAIT | __GFP_NOWARN | __GFP_ACCOUNT)
/* Replicas locked and unmapped in one go by a collapse. */
#define REPLICA_COLLAPSE_BATCH		32

struct kmem_cache *replica_info_cache;
/* Replicas in all stores, exactly: the node counters drift per CPU. */
atomic_long_t replica_count = ATOMIC_LONG_INIT(0);
atomic_long_t replica_isolated = ATOMIC_LONG_INIT(0);

/*
 * Whether @nid has a free block for a replica of @order: a large one is
 * made from a free block of its order or not at all (no compaction for a
 * copy).
 */
static bool replica_node_has_block(pg_data_t *pgdat, unsigned int order)
{
	unsigned int o;
	int z;

	if (!order)
		return true;
	for (z = 0; z < MAX_NR_ZONES; z++) {
		struct zone *zone = &pgdat->node_zones[z];

		if (!managed_zone(zone))
			continue;
		for (o = order; o < NR_PAGE_ORDERS; o++)
			/* A hint, as for compaction's suitability checks. */
			if (data_race(zone->free_area[o].nr_free))
				return true;
	}
	return false;
}

/*
 * Count events that have no replica to charge them to (one wanted but not
 * made, a task following its replicas) in the memory cgroup that one made
 * for @mm, or for a read(2) of the current task, would be charged to.
 */
void replica_count_mm_events(struct mm_struct *mm, enum vm_event_item item,
			     long nr)
{
	struct mem_cgroup *memcg = get_mem_cgroup_from_mm(mm);

	count_vm_events(item, nr);
	if (memcg) {
		count_memcg_events(memcg, item, nr);
		mem_cgroup_put(memcg);
	}
}

/*
 * Whether the memory cgroup that a replica made for @mm is charged to
 * takes @nr more pages: a replica is charged without reclaim, so a cgroup
 * at its limit (or under an ancestor at its limit) gets none.
 */
static bool replica_memcg_has_room(struct mm_struct *mm, long nr)
{
#ifdef CONFIG_MEMCG
	struct mem_cgroup *memcg, *iter;
	bool room = true;

	if (mem_cgroup_disabled())
		return true;
	memcg = get_mem_cgroup_from_mm(mm);
	for (iter = memcg; iter && !mem_cgroup_is_root(iter);
	     iter = parent_mem_cgroup(iter)) {
		if (page_counter_read(&iter->memory) + nr >
		    READ_ONCE(iter->memory.max)) {
			room = false;
			break;
		}
	}
	mem_cgroup_put(memcg);
	return room;
#else
	return true;
#endif
}

/*
 * Whether @nid takes @nr pages of new replicas of @order made for @mm
 * (NULL: for the current task's read(2)): above the node's high watermark
 * once they are made, so that a replica never pushes a node towards
 * reclaim, under the node's cap, within the charging cgroup's limit, and
 * with a free block of that order.  Those who would ask for a replica per
 * page when none can be made (fault-around) ask this first, for a
 * window's worth of pages but single-page blocks: a fragmented node that
 * makes each of them must not refuse the window.
 */
bool replica_has_room(int nid, struct mm_struct *mm, long nr,
		      unsigned int order)
{
	pg_data_t *pgdat = NODE_DATA(nid);
	unsigned long free = 0, high = 0, managed = 0;
	unsigned int max_percent = READ_ONCE(replica_max_percent);
	int z;

	for (z = 0; z < MAX_NR_ZONES; z++) {
		struct zone *zone = &pgdat->node_zones[z];

		if (!managed_zone(zone))
			continue;
		free += zone_page_state(zone, NR_FREE_PAGES);
		high += high_wmark_pages(zone);
		managed += zone_managed_pages(zone);
	}
	if (free <= high + nr)
		return false;
	if ((node_page_state(pgdat, NR_REPLICA_PAGES) + nr) * 100 >
	    (u64)managed * max_percent)
		return false;
	return replica_node_has_block(pgdat, order) &&
	       replica_memcg_has_room(mm, nr);
}

struct replica_tree *replica_tree_get(struct address_space *mapping)
{
	struct replica_tree *tree = READ_ONCE(mapping->i_replicas);
	struct replica_tree *old;
	int nid;

	if (tree)
		return tree;
	tree = kmalloc(struct_size(tree, nodes, nr_node_ids), REPLICA_META_GFP);
	if (!tree)
		return NULL;
	tree->settle_shift = 0;
	for (nid = 0; nid < nr_node_ids; nid++)
		xa_init(&tree->nodes[nid]);
	old = cmpxchg(&mapping->i_replicas, NULL, tree);
	if (old) {
		kfree(tree);
		return old;
	}
	return tree;
}

/*
 * Take a reference on the replica of @index on @nid, if any.  The store
 * holds a reference until the replica is removed, so a replica that is
 * still in the store after we got ours is the one we looked up.
 */
struct folio *replica_find_get(struct replica_tree *tree, int nid,
			       pgoff_t index)
{
	struct xarray *xa = &tree->nodes[nid];
	struct folio *replica;

	rcu_read_lock();
repeat:
	replica = xa_load(xa, index);
	if (xa_is_value(replica)) {
		replica = NULL;
	} else if (replica) {
		if (!folio_try_get(replica))
			goto repeat;
		if (unlikely(replica != xa_load(xa, index))) {
			folio_put(replica);
			goto repeat;
		}
	}
	rcu_read_unlock();
	return replica;
}

/*
 * Remove a locked replica from the store and, if it is there, its LRU (not
 * while migration has it isolated: folio->lru is migration's then).  The
 * caller holds the original's lock too, and may drop it once this returns.
 */
void replica_unlink(struct replica_tree *tree, struct folio *replica,
		    bool on_lru)
{
	int nid = folio_nid(replica);

	VM_WARN_ON_ONCE_FOLIO(!folio_test_locked(replica), replica);
	VM_WARN_ON_ONCE_FOLIO(!folio_test_locked(replica_info(replica)->original),
			      replica);

	/* Erasing its first index erases every index a large one covers. */
	xa_erase(&tree->nodes[nid], replica->index);
	if (on_lru && !folio_test_isolated(replica))
		list_lru_del(&replica_lru[replica_info(replica)->tier],
			     &replica->lru, nid, folio_memcg(replica));
	lruvec_stat_mod_folio(replica, NR_REPLICA_PAGES,
			      -folio_nr_pages(replica));
	atomic_long_sub(folio_nr_pages(replica), &replica_count);
}

static void replica_free(struct replica_info *info)
{
	struct folio *replica = info->replica;

	replica->private = NULL;
	folio_put(info->original);
	kmem_cache_free(replica_info_cache, info);
	folio_put(replica);
}

static void replica_free_rcu(struct rcu_head *head)
{
	replica_free(container_of(head, struct replica_info, rcu));
}

/* Whether @replica copies a folio that is (still) in the page cache. */
static bool replica_copies_cache(struct folio *replica)
{
	struct replica_info *info = replica_info(replica);

	return info->original->mapping == info->mapping;
}

/*
 * Give up the page of a locked replica out of the store.  From now on it is
 * a page like any other that somebody still holds: isolation and migration
 * see a movable page its owner released, and the pfn walkers that skip
 * poisoned pages skip one that memory failure keeps.
 */
static void replica_disown(struct folio *replica)
{
	__ClearPageMovable(&replica->page);
	folio_clear_replica(replica);
	/* Migration gives it up without putting it back. */
	if (folio_test_isolated(replica))
		atomic_long_dec(&replica_isolated);
}

/*
 * Release a locked replica that is out of the store and mapped nowhere,
 * keeping its lock, which the caller drops: drop its hold on the original
 * and the store's reference, on which the caller must not rely.  Whoever
 * still holds a reference (a GUP pin, a TLB batch, a read(2), migration)
 * frees it later.
 */
static void replica_retire(struct folio *replica)
{
	struct replica_info *info = replica_info(replica);

	replica_disown(replica);
	/*
	 * Fault-around looks at what the store holds while it holds the lock
	 * of the page-cache folio of that index, with no reference: the
	 * replica and its info must outlive its RCU read side, unless the
	 * replica copies that very folio, which we locked to take it out.
	 * Only one whose original left the page cache (memory failure)
	 * copies another: free it after a grace period, and keep its
	 * original until then, so that no new page-cache folio can be at its
	 * address.
	 */
	if (likely(replica_copies_cache(replica)))
		replica_free(info);
	else
		call_rcu(&info->rcu, replica_free_rcu);
}

/*
 * The event a drop counts in: a collapse lets the page cache change, a
 * reclaim gives memory back, an eviction follows what the kernel does to
 * the original or the replica itself.  No default: the compiler names a
 * reason left out.
 */
static enum vm_event_item replica_drop_event(enum replica_drop_reason why)
{
	switch (why) {
	case REPLICA_DROP_WRITE:
	case REPLICA_DROP_TRUNCATE:
	case REPLICA_DROP_INVALIDATE:
	case REPLICA_DROP_INODE:
		return REPLICA_COLLAPSE;
	case REPLICA_DROP_UNCACHE:
	case REPLICA_DROP_SHRINK:
	case REPLICA_DROP_POLICY:
		return REPLICA_RECLAIM;
	case REPLICA_DROP_MIGRATE:
	case REPLICA_DROP_RECLAIM:
	case REPLICA_DROP_SPLIT:
	case REPLICA_DROP_THP_COLLAPSE:
	case REPLICA_DROP_MEMORY_FAILURE:
	case REPLICA_DROP_SOFT_OFFLINE:
	case REPLICA_DROP_LONGTERM_PIN:
	case REPLICA_DROP_MOVE:
	case REPLICA_DROP_STALE:
	case REPLICA_DROP_NR:
		break;
	}
	return REPLICA_EVICT;
}

/*
 * Count and trace a locked replica that is out of the store and mapped
 * nowhere, for @why, before it is released.  One collapsed, or reclaimed
 * under memory pressure, before it served a second request was wasted:
 * replication misjudged what would be used.  Dropping caches, advice to
 * drop them and a policy switch take every replica whatever its use, and
 * the kernel evicts others for what it does to the original: neither
 * says whether a replica paid.  Returns whether it was wasted.
 */
bool replica_dropped(struct folio *replica, enum replica_drop_reason why)
{
	enum vm_event_item event = replica_drop_event(why);
	long nr = folio_nr_pages(replica);
	bool wasted = false;

	replica_count_events(replica, event, nr);
	if ((event == REPLICA_COLLAPSE || why == REPLICA_DROP_SHRINK) &&
	    !(atomic_long_read(&replica_info(replica)->use) & REPLICA_REUSED)) {
		replica_count_events(replica, REPLICA_WASTED, nr);
		wasted = true;
	}
	trace_replica_drop(replica, replica_info(replica)->mapping, why);
	return wasted;
}

/**
 * replica_file_reused - a replica of a file served a second request
 * @mapping: the file's address_space
 *
 * The file's replicas pay for themselves: it waits settle_ms again, not
 * the longer time that collapses of unused replicas taught it.
 */
void replica_file_reused(struct address_space *mapping)
{
	struct replica_tree *tree = READ_ONCE(mapping->i_replicas);

	if (tree && READ_ONCE(tree->settle_shift))
		WRITE_ONCE(tree->settle_shift, 0);
}

void replica_trace_map(struct folio *replica)
{
	trace_replica_map(replica, replica_info(replica)->mapping);
}

/*
 * Release a locked replica that is out of the store and mapped nowhere,
 * and unlock it.
 */
void replica_release(struct folio *replica)
{
	/* The store's reference may be the last: free it unlocked. */
	folio_get(replica);
	replica_retire(replica);
	folio_unlock(replica);
	folio_put(replica);
}

/*
 * Migration (compaction, memory offlining, alloc_contig_range(), soft
 * offlining) isolates a replica under its lock, which it holds in the store
 * and off the shrinker's list: folio->lru is migration's until it puts the
 * replica back or migrates it.
 */
static bool replica_isolate_page(struct page *page, isolate_mode_t mode)
{
	struct folio *replica = page_folio(page);
	struct replica_info *info = replica_info(replica);

	/* Where compaction leaves mlocked page cache alone, as on PREEMPT_RT. */
	if (!(mode & ISOLATE_UNEVICTABLE) && replica_mlocked(replica))
		return false;
	list_lru_del(&replica_lru[info->tier], &replica->lru,
		     folio_nid(replica), folio_memcg(replica));
	atomic_long_inc(&replica_isolated);
	return true;
}

static void replica_putback_page(struct page *page)
{
	struct folio *replica = page_folio(page);

	/* Migration took it off its list with list_del(). */
	INIT_LIST_HEAD(&replica->lru);
	list_lru_add(&replica_lru[replica_info(replica)->tier], &replica->lru,
		     folio_nid(replica), folio_memcg(replica));
	atomic_long_dec(&replica_isolated);
}

/* Put @new in the place of @old, its copy, in the store of @nid. */
static void replica_store_replace(struct replica_tree *tree, int nid,
				  struct folio *old, struct folio *new)
{
	XA_STATE_ORDER(xas, &tree->nodes[nid], old->index, folio_order(old));

	xas_lock(&xas);
	/* An entry of the same order is there: nothing to allocate. */
	WARN_ON_ONCE(xas_load(&xas) != old);
	xas_store(&xas, new);
	xas_unlock(&xas);
}

/*
 * Migrate the isolated replica @src_page to @dst_page, both locked.  Within
 * the node, the copy takes the replica's place: unmapped, its tasks map the
 * new page on their next access.  A new page on another node (memory
 * offlining moves pages off the node), an original no longer in the page
 * cache, or a copy that meets a memory error drop the replica instead: the
 * next fault on its node makes it again, and migration frees @dst_page.
 */
static int replica_migrate_page(struct page *dst_page, struct page *src_page,
				enum migrate_mode mode)
{
	struct folio *dst = page_folio(dst_page), *src = page_folio(src_page);
	struct replica_info *info = replica_info(src);
	struct replica_tree *tree = READ_ONCE(info->mapping->i_replicas);
	struct folio *original = info->original;
	long nr = folio_nr_pages(src);
	int nid = folio_nid(src);

	/*
	 * Both locks keep anybody from mapping it (fault-around holds the
	 * original's only).  The original's comes first: do not wait for it.
	 */
	if (!folio_trylock(original))
		return -EAGAIN;
	if (folio_nid(dst) != nid || !replica_copies_cache(src) ||
	    folio_mc_copy(dst, src)) {
		replica_unlink(tree, src, true);
		folio_unlock(original);
		replica_unmap(src);
		replica_dropped(src, REPLICA_DROP_MOVE);
		replica_retire(src);
		return MIGRATEPAGE_SUCCESS;
	}
	replica_unmap(src);
	folio_mark_uptodate(dst);
	folio_set_replica(dst);
	dst->index = src->index;
	dst->private = info;
	info->replica = dst;
	/* A pfn walker that finds it movable finds it whole. */
	smp_wmb();
	__SetPageMovable(dst_page, &replica_movable_ops);
	mem_cgroup_migrate(src, dst);
	INIT_LIST_HEAD(&dst->lru);
	list_lru_add(&replica_lru[info->tier], &dst->lru, nid,
		     folio_memcg(dst));
	/* The store's reference. */
	folio_get(dst);
	replica_store_replace(tree, nid, src, dst);
	folio_unlock(original);

	src->private = NULL;
	replica_disown(src);
	folio_put(src);
	replica_count_events(dst, REPLICA_MIGRATE, nr);
	return MIGRATEPAGE_SUCCESS;
}

const struct movable_operations replica_movable_ops = {
	.isolate_page = replica_isolate_page,
	.migrate_page = replica_migrate_page,
	.putback_page = replica_putback_page,
};

/* Whether a replica of @original published for @policy must go again. */
static bool replica_refused(struct folio *original,
			    const struct replica_policy *policy)
{
	/*
	 * Pairs with the full barrier of a writer between making itself
	 * visible and looking for replicas, and with the one of a policy
	 * switch between publishing the new policy and dropping replicas:
	 * either they find this replica, or we find them.
	 */
	smp_mb();
	/*
	 * A pin for DMA may write the original after its mapping and file
	 * are gone; a new pin needs a writable mapping, which is a writer.
	 */
	return replica_writers(original->mapping) ||
	       folio_maybe_dma_pinned(original) ||
	       rcu_access_pointer(replica_current) != policy;
}

/*
 * Publish @replica on @nid at every index it covers (one multi-index
 * entry for a large replica, as in the page cache), replacing the read
 * counts there.  Returns false if another replica got there first.
 */
static bool replica_store_insert(struct replica_tree *tree, int nid,
				 struct folio *replica)
{
	XA_STATE_ORDER(xas, &tree->nodes[nid], replica->index,
		       folio_order(replica));
	void *entry;

	do {
		xas_lock(&xas);
		xas_for_each_conflict(&xas, entry) {
			if (!xa_is_value(entry)) {
				xas_set_err(&xas, -EEXIST);
				break;
			}
		}
		if (!xas_error(&xas))
			xas_store(&xas, replica);
		xas_unlock(&xas);
	} while (xas_nomem(&xas, REPLICA_META_GFP));
	return !xas_error(&xas);
}

/*
 * Make the replica of the locked @original on @req->nid, of the same order:
 * a large original gets a large replica, from a free block of that order on
 * the node (no reclaim or compaction for it), or none.  Return it locked
 * and with a reference for the caller, or NULL.
 */
struct folio *replica_create(struct replica_tree *tree, struct folio *original,
			     const struct replica_request *req,
			     const struct replica_policy *policy,
			     enum replica_tier tier)
{
	struct address_space *mapping = original->mapping;
	struct mm_struct *mm = req->vma ? req->vma->vm_mm : NULL;
	long nr = folio_nr_pages(original);
	struct replica_info *info;
	struct folio *replica;

	info = kmem_cache_alloc(replica_info_cache, REPLICA_META_GFP);
	if (!info)
		goto fail;
	replica = __folio_alloc_node(REPLICA_GFP, folio_order(original),
				     req->nid);
	if (!replica) {
		if (nr > 1)
			replica_count_mm_events(mm, REPLICA_ALLOC_LARGE_FAIL,
						1);
		goto fail_info;
	}
	if (mem_cgroup_charge(replica, mm, REPLICA_GFP))
		goto fail_put;
	if (IS_ENABLED(CONFIG_MEMCG) && folio_memcg(replica) &&
	    memcg_list_lru_alloc(folio_memcg(replica), &replica_lru[tier],
				 REPLICA_META_GFP))
		goto fail_put;

	/* A memory error in the original fails the copy, not the kernel. */
	if (folio_mc_copy(replica, original))
		goto fail_put;
	__folio_set_locked(replica);
	__folio_set_replica(replica);
	__folio_mark_uptodate(replica);
	INIT_LIST_HEAD(&replica->lru);
	replica->index = original->index;
	info->original = original;
	info->mapping = mapping;
	info->replica = replica;
	info->tier = tier;
	info->maker = mm;
	atomic_long_set(&info->use, req->kinds);
	replica->private = info;
	folio_get(original);
	/*
	 * Pfn walkers look at a movable page with no reference of ours: the
	 * lock and the rest are visible first, and they trylock it.
	 */
	smp_wmb();
	__SetPageMovable(&replica->page, &replica_movable_ops);

	if (!replica_store_insert(tree, req->nid, replica)) {
		replica_release(replica);
		replica_count_mm_events(mm, REPLICA_ALLOC_FAIL, nr);
		return NULL;
	}
	list_lru_add(&replica_lru[tier], &replica->lru, req->nid,
		     folio_memcg(replica));
	lruvec_stat_mod_folio(replica, NR_REPLICA_PAGES, nr);
	atomic_long_add(nr, &replica_count);

	if (replica_refused(original, policy)) {
		replica_unlink(tree, replica, true);
		replica_release(replica);
		return NULL;
	}
	replica_count_events(replica, REPLICA_ALLOC, nr);
	if (nr > 1)
		replica_count_events(replica, REPLICA_ALLOC_LARGE, 1);
	trace_replica_make(replica, mapping);
	folio_get(replica);
	return replica;

fail_put:
	folio_put(replica);
fail_info:
	kmem_cache_free(replica_info_cache, info);
fail:
	replica_count_mm_events(mm, REPLICA_ALLOC_FAIL, nr);
	return NULL;
}

/*
 * Count a remote read of @index by @nid; returns the count so far, which
 * stops at REPLICA_READ_THRESHOLD_MAX, or 0 if a replica appeared meanwhile
 * or the count could not be kept.
 */
unsigned long replica_count_read(struct replica_tree *tree, int nid,
				 pgoff_t index)
{
	struct xarray *xa = &tree->nodes[nid];
	unsigned long count;
	void *old, *found;

	/* Fault-around tells replicas from other entries by size. */
	BUILD_BUG_ON((unsigned long)xa_mk_value(REPLICA_READ_THRESHOLD_MAX) >=
		     REPLICA_STORE_SMALL);
	old = xa_load(xa, index);
	for (;;) {
		if (old && !xa_is_value(old))
			return 0;
		count = old ? xa_to_value(old) + 1 : 1;
		if (count > REPLICA_READ_THRESHOLD_MAX)
			return REPLICA_READ_THRESHOLD_MAX;
		found = xa_cmpxchg(xa, index, old, xa_mk_value(count),
				   REPLICA_META_GFP);
		if (found == old)
			return count;
		if (xa_is_err(found))
			return 0;
		old = found;
	}
}

/**
 * replica_take - take a replica out of the store
 * @replica: a replica the caller holds a reference on, but not its lock
 * @may_wait: sleep for the locks if they are busy
 *
 * Locks @replica after its original, as the fault path does, and unlinks
 * it if it is still in the store.  The caller may hold the lock of another
 * original of the same index (a fault that found the copy of one that
 * memory failure took out of the page cache): nobody takes them the other
 * way round.
 *
 * Return: true with @replica locked and out of the store, for
 * replica_unmap() and replica_release(); false if it was no longer in the
 * store, or a lock was busy and @may_wait is false.
 */
bool replica_take(struct folio *replica, bool may_wait)
{
	struct replica_tree *tree;
	struct folio *original;

	if (!folio_trylock(replica)) {
		if (!may_wait)
			return false;
		folio_lock(replica);
	}
	/*
	 * Under its lock, a replica that is still movable is in the store:
	 * whoever takes it out keeps the lock until it is released.
	 */
	if (!folio_test_movable(replica))
		goto unlock;
	/* Only a replica in the store (locked) is sure to have an original. */
	original = replica_info(replica)->original;
	folio_get(original);
	if (!folio_trylock(original)) {
		if (!may_wait)
			goto put;
		folio_unlock(replica);
		folio_lock(original);
		folio_lock(replica);
		if (!folio_test_movable(replica)) {
			folio_unlock(original);
			goto put;
		}
	}
	tree = READ_ONCE(replica_info(replica)->mapping->i_replicas);
	VM_WARN_ON_ONCE_FOLIO(!replica_in_store(tree, replica, folio_nid(replica),
						replica->index), replica);
	replica_unlink(tree, replica, true);
	folio_unlock(original);
	folio_put(original);
	return true;

put:
	folio_put(original);
unlock:
	folio_unlock(replica);
	return false;
}

/**
 * replica_unmap - unmap a replica out of the store from every page table
 * @replica: a locked replica that replica_take() or a caller holding its
 *	original's lock took out of the store
 *
 * An mlocked mapping loses its replica too: its next access maps the
 * original, which is as resident.
 */
void replica_unmap(struct folio *replica)
{
	enum ttu_flags flags = TTU_SYNC | TTU_IGNORE_MLOCK;

	/* A PMD that maps a file folio is zapped, not split into PTEs. */
	if (folio_test_pmd_mappable(replica))
		flags |= TTU_SPLIT_HUGE_PMD;
	if (folio_mapped(replica))
		try_to_unmap(replica, flags);
	/* What the rmap walk could not unmap, the range zap does. */
	if (folio_mapped(replica))
		unmap_mapping_pages(replica_info(replica)->mapping,
				    replica->index, folio_nr_pages(replica),
				    false);
	VM_WARN_ON_ONCE_FOLIO(folio_mapped(replica), replica);
}

/*
 * Take what the store of @nid holds at @index out of it: forget a read
 * count; lock a replica, unlink it and return it, locked and referenced.
 */
static struct folio *replica_collapse_take(struct replica_tree *tree, int nid,
					   pgoff_t index, void *entry)
{
	struct folio *replica;

	if (xa_is_value(entry)) {
		replica_forget_reads(tree, nid, index, entry);
		return NULL;
	}
	/*
	 * One that migration moved to a new page while we waited for it left
	 * its copy in its place: take that one.
	 */
	while ((replica = replica_find_get(tree, nid, index))) {
		if (replica_take(replica, true))
			return replica;
		folio_put(replica);
	}
	return NULL;
}

/*
 * Remove every replica that covers an index of [@first, @last] from the
 * store, unmap it and release it, and forget the read counts there;
 * @why is REPLICA_DROP_WRITE, _TRUNCATE, _INVALIDATE or _INODE.  Returns
 * how many pages of replicas were removed.  A file that changes while
 * replicas of it have served no second request is one that changes too
 * often for them: it waits twice as long before it is replicated again.
 */
unsigned long replica_collapse_range(struct address_space *mapping,
				     pgoff_t first, pgoff_t last,
				     enum replica_drop_reason why)
{
	struct replica_tree *tree = READ_ONCE(mapping->i_replicas);
	struct folio *batch[REPLICA_COLLAPSE_BATCH];
	unsigned long collapsed = 0;
	bool wasted = false;
	int nid, n, i;

	if (!tree)
		return 0;
	for (nid = 0; nid < nr_node_ids; nid++) {
		struct xarray *xa = &tree->nodes[nid];
		pgoff_t index = first;
		bool more = true;

		while (more) {
			struct folio *replica;
			void *entry;

			for (n = 0; n < REPLICA_COLLAPSE_BATCH; ) {
				entry = xa_find(xa, &index, last, XA_PRESENT);
				if (!entry) {
					more = false;
					break;
				}
				replica = replica_collapse_take(tree, nid, index,
								entry);
				if (replica) {
					batch[n++] = replica;
					/* Past every index a large one covers. */
					index = max(index,
						    folio_next_index(replica) - 1);
				}
				if (index >= last) {
					more = false;
					break;
				}
				index++;
			}
			if (!n)
				continue;
			/*
			 * Nobody maps a replica that is out of the store, and
			 * the rmap walk reaches a task that forked from one
			 * that mapped it after it reached the parent.  The
			 * first may start before @first: it goes whole.
			 */
			unmap_mapping_pages(mapping, batch[0]->index,
					    folio_next_index(batch[n - 1]) -
					    batch[0]->index, false);
			for (i = 0; i < n; i++) {
				replica = batch[i];
				collapsed += folio_nr_pages(replica);
				wasted |= replica_dropped(replica, why);
				replica_release(replica);
				folio_put(replica);
			}
			cond_resched();
		}
	}
	if (wasted && why != REPLICA_DROP_INODE) {
		unsigned int shift = READ_ONCE(tree->settle_shift);

		if (shift < REPLICA_SETTLE_SHIFT_MAX)
			WRITE_ONCE(tree->settle_shift, shift + 1);
	}
	return collapsed;
}

/**
 * replica_mapping_release - free the replication state of a dying inode
 * @mapping: the address_space of an inode being cleared
 *
 * truncate_inode_pages_final() removed the replicas of every original in
 * the page cache.  A replica whose original left it by another way (memory
 * failure removes a poisoned original whatever holds it) is still in the
 * store: nothing maps it any more, release it now.
 */
void replica_mapping_release(struct address_space *mapping)
{
	struct replica_tree *tree = mapping->i_replicas;
	int nid;

	if (!tree)
		return;
	replica_collapse_range(mapping, 0, ULONG_MAX, REPLICA_DROP_INODE);
	for (nid = 0; nid < nr_node_ids; nid++)
		xa_destroy(&tree->nodes[nid]);
	mapping->i_replicas = NULL;
	kfree_rcu(tree, rcu);
}

#ifdef CONFIG_MM_REPLICA_KUNIT_TEST
#include "tests/store-kunit.h"
#endif
