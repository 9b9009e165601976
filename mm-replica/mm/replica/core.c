// SPDX-License-Identifier: GPL-2.0
/*
 * NUMA page-cache replication: the replica store, the fault paths that map
 * replicas, the collapse that removes them before anyone writes, and the
 * shrinker that gives them back under memory pressure.
 *
 * A replica is an order-0 folio, allocated on one node, holding a copy of
 * an uptodate page-cache folio (its original) of a file that nobody can
 * write.  It is never in i_pages and never on an LRU list: the store (per
 * mapping, per node, by index) owns one reference on it and it owns one
 * reference on its original, so the original stays in the page cache while
 * it has replicas (reclaim and invalidation leave it alone).  Originals that
 * must stay migratable (CMA, ZONE_MOVABLE, isolated for offlining) are not
 * replicated.
 * folio->mapping and folio->index are those of the original, so that the
 * file rmap finds its mappings; folio->private points at the original and
 * carries the reclaim tier; folio->lru links it on the shrinker's list.
 *
 * Whoever removes a replica from the store holds its folio lock and unmaps
 * it before releasing it; whoever maps it holds the lock and finds it still
 * in the store.  That is what keeps a replica that is being removed from
 * being mapped again.
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
#include <linux/memcontrol.h>
#include <linux/mm.h>
#include <linux/mmzone.h>
#include <linux/pagemap.h>
#include <linux/rmap.h>
#include <linux/sched.h>
#include <linux/shmem_fs.h>
#include <linux/shrinker.h>
#include <linux/slab.h>
#include <linux/swap.h>
#include <linux/userfaultfd_k.h>
#include <linux/vmstat.h>
#include <uapi/linux/magic.h>

#include "internal.h"

/*
 * Replicas are an optimisation: take them only from the target node's free
 * memory (no reclaim, no kswapd wake-up, no warning), as reclaimable rather
 * than movable memory, since they cannot be migrated but can be shrunk.
 */
#define REPLICA_GFP	((GFP_HIGHUSER | __GFP_RECLAIMABLE | __GFP_THISNODE | \
			  __GFP_NORETRY | __GFP_NOWARN) & ~__GFP_RECLAIM)
/* The store's own memory, charged to the task that makes the replica. */
#define REPLICA_META_GFP	(GFP_NOWAIT | __GFP_NOWARN | __GFP_ACCOUNT)

/* folio->private of a replica: its original, and this bit for the tier. */
#define REPLICA_PRIVATE_TIER_LAST	1UL

/* Replicas locked and unmapped in one go by a collapse. */
#define REPLICA_COLLAPSE_BATCH		32

static struct list_lru replica_lru[REPLICA_NR_TIERS];
/* Replicas in all stores, exactly: the node counters drift per CPU. */
static atomic_long_t replica_count = ATOMIC_LONG_INIT(0);

static struct folio *replica_original(struct folio *replica)
{
	return (struct folio *)((unsigned long)replica->private &
				~REPLICA_PRIVATE_TIER_LAST);
}

static enum replica_tier replica_tier(struct folio *replica)
{
	return (unsigned long)replica->private & REPLICA_PRIVATE_TIER_LAST ?
		REPLICA_TIER_LAST : REPLICA_TIER_FIRST;
}

/*
 * Files whose page cache only changes through this kernel's writers: not
 * network filesystems, and not fuseblk either, whose server may store into
 * the page cache (FUSE_NOTIFY_STORE).
 */
static bool replica_mapping_ok(struct address_space *mapping)
{
	struct inode *inode = mapping->host;
	struct super_block *sb = inode->i_sb;

	return S_ISREG(inode->i_mode) && !shmem_mapping(mapping) &&
	       !IS_DAX(inode) && !IS_SWAPFILE(inode) &&
	       (sb->s_type->fs_flags & FS_REQUIRES_DEV) &&
	       sb->s_magic != FUSE_SUPER_MAGIC;
}

/*
 * Originals a replica may hold: uptodate single pages that need not stay
 * migratable, since the replica's reference keeps them from moving.
 */
static bool replica_original_ok(struct folio *original)
{
	return !folio_test_large(original) && folio_test_uptodate(original) &&
	       folio_is_longterm_pinnable(original);
}

static bool replica_vma_ok(struct vm_area_struct *vma)
{
	if (!vma->vm_file || userfaultfd_armed(vma))
		return false;
	if (vma->vm_flags & (VM_LOCKED | VM_HUGETLB | VM_PFNMAP | VM_MIXEDMAP |
			     VM_IO))
		return false;
	return replica_mapping_ok(vma->vm_file->f_mapping);
}

/* Whether anybody may change the file's page cache, now or about to. */
static bool replica_writers(struct address_space *mapping)
{
	return inode_is_open_for_write(mapping->host) ||
	       mapping_writably_mapped(mapping) ||
	       atomic_read(&mapping->i_replica_block);
}

/*
 * Ask the current policy; returns the policy that said yes, or NULL.  The
 * caller compares it with the current policy again once its replica is
 * published, so that a switch in between cannot leave a replica behind.
 */
static const struct replica_policy *
replica_policy_wants(const struct replica_request *req, enum replica_tier *tier)
{
	const struct replica_policy *policy;

	rcu_read_lock();
	policy = rcu_dereference(replica_current);
	if (!policy->want_fault(req))
		policy = NULL;
	else if (tier)
		*tier = policy->reclaim_tier ? policy->reclaim_tier(req) :
			REPLICA_TIER_FIRST;
	rcu_read_unlock();
	return policy;
}

/*
 * Whether @nid takes a new replica: above its high watermark, so that a
 * replica never pushes a node towards reclaim, and under its cap.
 */
static bool replica_node_has_room(int nid)
{
	pg_data_t *pgdat = NODE_DATA(nid);
	unsigned long free = 0, high = 0, managed = 0;
	unsigned int max_percent = READ_ONCE(replica_max_percent);
	int z;

	for (z = 0; z <= ZONE_NORMAL; z++) {
		struct zone *zone = &pgdat->node_zones[z];

		if (!managed_zone(zone))
			continue;
		free += zone_page_state(zone, NR_FREE_PAGES);
		high += high_wmark_pages(zone);
		managed += zone_managed_pages(zone);
	}
	if (free <= high)
		return false;
	return node_page_state(pgdat, NR_REPLICA_PAGES) * 100 <
		(u64)managed * max_percent;
}

static struct replica_tree *replica_tree_get(struct address_space *mapping)
{
	struct replica_tree *tree = READ_ONCE(mapping->i_replicas);
	struct replica_tree *old;
	int nid;

	if (tree)
		return tree;
	tree = kmalloc(struct_size(tree, nodes, nr_node_ids), REPLICA_META_GFP);
	if (!tree)
		return NULL;
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
static struct folio *replica_find_get(struct replica_tree *tree, int nid,
				      pgoff_t index)
{
	struct xarray *xa = &tree->nodes[nid];
	struct folio *replica;

	rcu_read_lock();
repeat:
	replica = xa_load(xa, index);
	if (replica) {
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

static bool replica_in_store(struct replica_tree *tree, struct folio *replica,
			     int nid, pgoff_t index)
{
	return xa_load(&tree->nodes[nid], index) == replica;
}

/* Remove a locked replica from the store and, if it is there, its LRU. */
static void replica_unlink(struct replica_tree *tree, struct folio *replica,
			   bool on_lru)
{
	int nid = folio_nid(replica);

	xa_erase(&tree->nodes[nid], replica->index);
	if (on_lru)
		list_lru_del(&replica_lru[replica_tier(replica)],
			     &replica->lru, nid, folio_memcg(replica));
	mod_node_page_state(folio_pgdat(replica), NR_REPLICA_PAGES, -1);
	atomic_long_dec(&replica_count);
}

/*
 * Release a locked replica that is out of the store and mapped nowhere:
 * drop its hold on the original and the store's reference.  Whoever still
 * holds a reference (a GUP pin, a TLB batch) frees it later.
 */
static void replica_release(struct folio *replica)
{
	struct folio *original = replica_original(replica);

	replica->mapping = NULL;
	replica->private = NULL;
	folio_unlock(replica);
	folio_put(original);
	folio_put(replica);
}

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
 * Make the replica of the locked @original on @req->nid.  Return it locked
 * and with a reference for the caller, or NULL.
 */
static struct folio *replica_create(struct replica_tree *tree,
				    struct folio *original,
				    const struct replica_request *req,
				    const struct replica_policy *policy,
				    enum replica_tier tier)
{
	struct address_space *mapping = original->mapping;
	struct mm_struct *mm = req->vma ? req->vma->vm_mm : NULL;
	unsigned long private = (unsigned long)original;
	struct folio *replica;

	replica = __folio_alloc_node(REPLICA_GFP, 0, req->nid);
	if (!replica)
		goto fail;
	if (mem_cgroup_charge(replica, mm, REPLICA_GFP))
		goto fail_put;
	if (IS_ENABLED(CONFIG_MEMCG) && folio_memcg(replica) &&
	    memcg_list_lru_alloc(folio_memcg(replica), &replica_lru[tier],
				 REPLICA_META_GFP))
		goto fail_put;

	folio_copy(replica, original);
	__folio_set_locked(replica);
	__folio_mark_uptodate(replica);
	INIT_LIST_HEAD(&replica->lru);
	replica->mapping = mapping;
	replica->index = original->index;
	if (tier == REPLICA_TIER_LAST)
		private |= REPLICA_PRIVATE_TIER_LAST;
	replica->private = (void *)private;
	folio_get(original);

	if (xa_insert(&tree->nodes[req->nid], replica->index, replica,
		      REPLICA_META_GFP)) {
		replica_release(replica);
		count_vm_event(REPLICA_ALLOC_FAIL);
		return NULL;
	}
	list_lru_add(&replica_lru[tier], &replica->lru, req->nid,
		     folio_memcg(replica));
	mod_node_page_state(NODE_DATA(req->nid), NR_REPLICA_PAGES, 1);
	atomic_long_inc(&replica_count);

	if (replica_refused(original, policy)) {
		replica_unlink(tree, replica, true);
		replica_release(replica);
		return NULL;
	}
	count_vm_event(REPLICA_ALLOC);
	folio_get(replica);
	return replica;

fail_put:
	folio_put(replica);
fail:
	count_vm_event(REPLICA_ALLOC_FAIL);
	return NULL;
}

/*
 * Remove every replica of [@first, @last] from the store, unmap it and
 * release it.  Returns how many were removed.
 */
static unsigned long replica_collapse_range(struct address_space *mapping,
					    pgoff_t first, pgoff_t last)
{
	struct replica_tree *tree = READ_ONCE(mapping->i_replicas);
	struct folio *batch[REPLICA_COLLAPSE_BATCH];
	unsigned long collapsed = 0;
	int nid, n, i;

	if (!tree)
		return 0;
	for (nid = 0; nid < nr_node_ids; nid++) {
		pgoff_t index = first;
		bool more = true;

		while (more) {
			struct folio *replica;

			for (n = 0; n < REPLICA_COLLAPSE_BATCH; ) {
				if (!xa_find(&tree->nodes[nid], &index, last,
					     XA_PRESENT)) {
					more = false;
					break;
				}
				replica = replica_find_get(tree, nid, index);
				if (replica) {
					folio_lock(replica);
					if (replica_in_store(tree, replica, nid,
							     index)) {
						replica_unlink(tree, replica,
							       true);
						batch[n++] = replica;
					} else {
						folio_unlock(replica);
						folio_put(replica);
					}
				}
				if (index == last) {
					more = false;
					break;
				}
				index++;
			}
			if (!n)
				break;
			/*
			 * Nobody maps a replica that is out of the store, and
			 * the rmap walk reaches a task that forked from one
			 * that mapped it after it reached the parent.
			 */
			unmap_mapping_pages(mapping, batch[0]->index,
					    batch[n - 1]->index -
					    batch[0]->index + 1, false);
			for (i = 0; i < n; i++) {
				replica = batch[i];
				replica_release(replica);
				folio_put(replica);
			}
			collapsed += n;
			cond_resched();
		}
	}
	count_vm_events(REPLICA_COLLAPSE, collapsed);
	return collapsed;
}

void __replica_fault(struct vm_fault *vmf)
{
	struct folio *original = page_folio(vmf->page);
	struct vm_area_struct *vma = vmf->vma;
	const struct replica_policy *policy;
	struct address_space *mapping;
	struct replica_request req;
	struct replica_tree *tree;
	enum replica_tier tier;
	struct folio *replica;

	if (!replica_vma_ok(vma))
		return;
	mapping = vma->vm_file->f_mapping;
	if (original->mapping != mapping || !replica_original_ok(original))
		return;
	req.nid = numa_mem_id();
	if (folio_nid(original) == req.nid || replica_writers(mapping))
		return;
	req.vma = vma;
	req.file = vma->vm_file;
	req.index = original->index;
	policy = replica_policy_wants(&req, &tier);
	if (!policy)
		return;

	tree = replica_tree_get(mapping);
	if (!tree) {
		count_vm_event(REPLICA_ALLOC_FAIL);
		return;
	}
	replica = replica_find_get(tree, req.nid, req.index);
	if (replica) {
		folio_lock(replica);
		if (!replica_in_store(tree, replica, req.nid, req.index) ||
		    replica_original(replica) != original) {
			folio_unlock(replica);
			folio_put(replica);
			/*
			 * The copy of a page that left the page cache while
			 * it held it (memory failure): it may differ from
			 * what the page cache holds now.
			 */
			replica_collapse_range(mapping, req.index, req.index);
			return;
		}
		folio_set_referenced(replica);
		count_vm_event(REPLICA_MAP);
	} else if (replica_node_has_room(req.nid)) {
		replica = replica_create(tree, original, &req, policy, tier);
		if (!replica)
			return;
	} else {
		count_vm_event(REPLICA_ALLOC_FAIL);
		return;
	}

	folio_unlock(original);
	folio_put(original);
	vmf->page = &replica->page;
}

void __replica_fault_around_start(struct vm_fault *vmf,
				  struct replica_around *ra)
{
	struct vm_area_struct *vma = vmf->vma;
	struct replica_request req;

	if (!replica_vma_ok(vma) || replica_writers(vma->vm_file->f_mapping))
		return;
	req.vma = vma;
	req.file = vma->vm_file;
	req.index = vmf->pgoff;
	req.nid = numa_mem_id();
	if (!replica_policy_wants(&req, NULL))
		return;
	ra->nid = req.nid;
	ra->may_create = replica_node_has_room(req.nid);
}

struct folio *__replica_fault_around_folio(struct folio *original,
					   const struct replica_around *ra)
{
	struct replica_tree *tree;
	struct folio *replica;

	if (folio_nid(original) == ra->nid || !replica_original_ok(original))
		return original;
	tree = READ_ONCE(original->mapping->i_replicas);
	replica = tree ? replica_find_get(tree, ra->nid, original->index) :
		NULL;
	if (replica) {
		if (folio_trylock(replica)) {
			if (replica_in_store(tree, replica, ra->nid,
					     original->index) &&
			    replica_original(replica) == original) {
				folio_set_referenced(replica);
				count_vm_event(REPLICA_MAP);
				return replica;
			}
			folio_unlock(replica);
		}
		folio_put(replica);
	}
	/* A replica is wanted but cannot be mapped now: let the fault decide. */
	if (ra->may_create)
		return NULL;
	count_vm_event(REPLICA_ALLOC_FAIL);
	return original;
}

void __replica_collapse_for_write(struct address_space *mapping)
{
	replica_collapse_range(mapping, 0, ULONG_MAX);
}

void __replica_collapse_range(struct address_space *mapping, pgoff_t first,
			      pgoff_t last)
{
	replica_collapse_range(mapping, first, last);
}

void __replica_drop_unmapped(struct address_space *mapping, pgoff_t first,
			     pgoff_t last)
{
	struct replica_tree *tree = READ_ONCE(mapping->i_replicas);
	unsigned long index, dropped = 0;
	struct folio *replica;
	int nid;

	if (!tree)
		return;
	for (nid = 0; nid < nr_node_ids; nid++) {
		xa_for_each_range(&tree->nodes[nid], index, replica, first,
				  last) {
			cond_resched();
			replica = replica_find_get(tree, nid, index);
			if (!replica)
				continue;
			/* Invalidation does not wait: a busy replica stays. */
			if (!folio_trylock(replica)) {
				folio_put(replica);
				continue;
			}
			if (replica_in_store(tree, replica, nid, index) &&
			    !folio_mapped(replica)) {
				replica_unlink(tree, replica, true);
				replica_release(replica);
				dropped++;
			} else {
				folio_unlock(replica);
			}
			folio_put(replica);
		}
	}
	count_vm_events(REPLICA_RECLAIM, dropped);
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
	replica_collapse_range(mapping, 0, ULONG_MAX);
	for (nid = 0; nid < nr_node_ids; nid++)
		xa_destroy(&tree->nodes[nid]);
	mapping->i_replicas = NULL;
	kfree_rcu(tree, rcu);
}

struct replica_isolate {
	struct list_head dispose;
	bool second_chance;
};

static enum lru_status replica_isolate(struct list_head *item,
				       struct list_lru_one *list,
				       spinlock_t *lock, void *arg)
{
	struct folio *replica = list_entry(item, struct folio, lru);
	struct replica_isolate *isolate = arg;

	if (isolate->second_chance && folio_test_clear_referenced(replica))
		return LRU_ROTATE;
	/* A replica being mapped, made or collapsed is busy: skip it. */
	if (!folio_trylock(replica))
		return LRU_SKIP;
	list_lru_isolate_move(list, item, &isolate->dispose);
	return LRU_REMOVED;
}

/*
 * Unmap and release the locked replicas isolated from the LRU.  An mlocked
 * mapping loses its replica too: its next access maps the original, which
 * is as resident.  Returns how many were released.
 */
static unsigned long replica_dispose(struct list_head *dispose)
{
	struct folio *replica, *next;
	unsigned long released = 0;

	list_for_each_entry_safe(replica, next, dispose, lru) {
		/* The inode cannot go while we hold a replica of it locked. */
		struct address_space *mapping = replica->mapping;

		list_del_init(&replica->lru);
		replica_unlink(READ_ONCE(mapping->i_replicas), replica, false);
		if (folio_mapped(replica))
			try_to_unmap(replica, TTU_SYNC | TTU_IGNORE_MLOCK);
		/* What the rmap walk could not unmap, the range zap does. */
		if (folio_mapped(replica))
			unmap_mapping_pages(mapping, replica->index, 1, false);
		VM_WARN_ON_ONCE_FOLIO(folio_mapped(replica), replica);
		replica_release(replica);
		released++;
	}
	count_vm_events(REPLICA_RECLAIM, released);
	/*
	 * Reclaim counts only what its own LRUs and the slab give back: tell
	 * it, or kswapd sees no progress, gives the node up, and allocations
	 * fall to the OOM killer with replicas still there to take.
	 */
	mm_account_reclaimed_pages(released);
	return released;
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

/* The first tier gives all it can before the last tier is scanned. */
static unsigned long replica_shrink_scan(struct shrinker *shrinker,
					 struct shrink_control *sc)
{
	struct replica_isolate isolate = { .second_chance = true };
	unsigned long freed = 0;
	int tier;

	INIT_LIST_HEAD(&isolate.dispose);
	for (tier = 0; tier < REPLICA_NR_TIERS && sc->nr_to_scan; tier++) {
		list_lru_shrink_walk(&replica_lru[tier], sc, replica_isolate,
				     &isolate);
		freed += replica_dispose(&isolate.dispose);
	}
	return freed;
}

/**
 * replica_drop_all - free every replica
 *
 * Used when the policy changes; the caller has published the new policy
 * and issued a full barrier, so that a replica made for the old policy
 * after this walk removes itself.  Returns once no replica is left, those
 * that others hold locked (a fault, a collapse, the shrinker) included.
 */
void replica_drop_all(void)
{
	struct replica_isolate isolate = { .second_chance = false };
	int tier, nid;

	INIT_LIST_HEAD(&isolate.dispose);
	for (;;) {
		for (tier = 0; tier < REPLICA_NR_TIERS; tier++) {
			for_each_online_node(nid) {
				unsigned long walk;

				do {
					walk = 1024;
					list_lru_walk_node(&replica_lru[tier],
							   nid, replica_isolate,
							   &isolate, &walk);
					replica_dispose(&isolate.dispose);
					cond_resched();
				} while (!walk);
			}
		}
		if (!atomic_long_read(&replica_count))
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

	shrinker = shrinker_alloc(SHRINKER_NUMA_AWARE | SHRINKER_MEMCG_AWARE,
				  "replica");
	if (!shrinker)
		return -ENOMEM;
	for (tier = 0; tier < REPLICA_NR_TIERS; tier++) {
		err = list_lru_init_memcg(&replica_lru[tier], shrinker);
		if (err) {
			while (tier--)
				list_lru_destroy(&replica_lru[tier]);
			shrinker_free(shrinker);
			return err;
		}
	}
	shrinker->count_objects = replica_shrink_count;
	shrinker->scan_objects = replica_shrink_scan;
	/* A replica costs one page copy to make again: give them back first. */
	shrinker->seeks = 0;
	shrinker_register(shrinker);
	return 0;
}
