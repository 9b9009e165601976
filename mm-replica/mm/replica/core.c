// SPDX-License-Identifier: GPL-2.0
/*
 * NUMA page-cache replication: the replica store, the fault and read paths
 * that use replicas, the collapse that removes them before anyone writes,
 * and the shrinker that gives them back under memory pressure.
 *
 * A replica is an order-0 folio, allocated on one node, holding a copy of
 * an uptodate page-cache folio (its original) of a file that nobody can
 * write.  It is never in i_pages and never on an LRU list: the store (per
 * mapping, per node, by index) owns one reference on it and it owns one
 * reference on its original, so the original stays in the page cache while
 * it has replicas (reclaim and invalidation leave it alone).  Originals that
 * must stay migratable (CMA, ZONE_MOVABLE, isolated for offlining) are not
 * replicated.  folio->mapping and folio->index are those of the original,
 * so that the file rmap finds its mappings; folio->private points at its
 * struct replica_info; folio->lru links it on the shrinker's list.  Where
 * a node has no replica of a page yet, its store may hold instead a value
 * entry counting the remote read(2)s of that page.
 *
 * Whoever removes a replica from the store holds its folio lock and unmaps
 * it before releasing it; whoever maps it holds the lock and finds it still
 * in the store.  That is what keeps a replica that is being removed from
 * being mapped again.  read(2) copies from a replica it found in the store
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
#include <linux/memcontrol.h>
#include <linux/mm.h>
#include <linux/mman.h>
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

/* Replicas locked and unmapped in one go by a collapse. */
#define REPLICA_COLLAPSE_BATCH		32

/**
 * struct replica_info - what a replica remembers, at folio->private
 * @original: the page-cache folio it copies, referenced
 * @tier: its enum replica_tier
 * @kinds: REPLICA_KIND_* of the requests it served, under the folio lock
 */
struct replica_info {
	struct folio *original;
	u8 tier;
	u8 kinds;
};

static struct kmem_cache *replica_info_cache;
static struct list_lru replica_lru[REPLICA_NR_TIERS];
/* Replicas in all stores, exactly: the node counters drift per CPU. */
static atomic_long_t replica_count = ATOMIC_LONG_INIT(0);

static struct replica_info *replica_info(struct folio *replica)
{
	return replica->private;
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
			     VM_IO | VM_NOREPLICATE))
		return false;
	return replica_mapping_ok(vma->vm_file->f_mapping);
}

static unsigned int replica_vma_kinds(struct vm_area_struct *vma)
{
	unsigned int kinds = 0;

	if (vma->vm_flags & VM_EXEC)
		kinds |= REPLICA_KIND_EXEC;
	if (vma->vm_flags & VM_MAYSHARE)
		kinds |= REPLICA_KIND_SHARED;
	else
		kinds |= REPLICA_KIND_PRIVATE;
	if (vma->vm_flags & VM_REPLICATE)
		kinds |= REPLICA_KIND_ADVISED;
	return kinds;
}

/* Whether anybody may change the file's page cache, now or about to. */
static bool replica_writers(struct address_space *mapping)
{
	return inode_is_open_for_write(mapping->host) ||
	       mapping_writably_mapped(mapping) ||
	       atomic_read(&mapping->i_replica_block);
}

/* The reclaim tier @policy puts a replica made for @req in. */
static enum replica_tier
replica_policy_tier(const struct replica_policy *policy,
		    const struct replica_request *req)
{
	return policy->reclaim_tier ? policy->reclaim_tier(req) :
				      REPLICA_TIER_FIRST;
}

/*
 * Ask the current policy about a fault; returns the policy that said yes,
 * or NULL.  A range opted in with MADV_REPLICATE needs no asking, as long
 * as the policy honours it.  The caller compares the policy with the
 * current one again once its replica is published, so that a switch in
 * between cannot leave a replica behind.
 */
static const struct replica_policy *
replica_policy_wants(const struct replica_request *req, enum replica_tier *tier)
{
	const struct replica_policy *policy;
	bool want;

	rcu_read_lock();
	policy = rcu_dereference(replica_current);
	if (req->kinds & REPLICA_KIND_ADVISED)
		want = policy->kinds & REPLICA_KIND_ADVISED;
	else
		want = policy->want_fault(req);
	if (!want)
		policy = NULL;
	else if (tier)
		*tier = replica_policy_tier(policy, req);
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

static bool replica_in_store(struct replica_tree *tree, struct folio *replica,
			     int nid, pgoff_t index)
{
	return xa_load(&tree->nodes[nid], index) == replica;
}

/* A replica in the store that copies @original, the current page cache. */
static bool replica_current_copy(struct replica_tree *tree,
				 struct folio *replica, int nid,
				 struct folio *original)
{
	return replica_in_store(tree, replica, nid, original->index) &&
	       replica_info(replica)->original == original;
}

/* Remove a locked replica from the store and, if it is there, its LRU. */
static void replica_unlink(struct replica_tree *tree, struct folio *replica,
			   bool on_lru)
{
	int nid = folio_nid(replica);

	xa_erase(&tree->nodes[nid], replica->index);
	if (on_lru)
		list_lru_del(&replica_lru[replica_info(replica)->tier],
			     &replica->lru, nid, folio_memcg(replica));
	mod_node_page_state(folio_pgdat(replica), NR_REPLICA_PAGES, -1);
	atomic_long_dec(&replica_count);
}

/*
 * Release a locked replica that is out of the store and mapped nowhere:
 * drop its hold on the original and the store's reference.  Whoever still
 * holds a reference (a GUP pin, a TLB batch, a read(2)) frees it later.
 */
static void replica_release(struct folio *replica)
{
	struct replica_info *info = replica_info(replica);

	replica->mapping = NULL;
	replica->private = NULL;
	folio_unlock(replica);
	folio_put(info->original);
	kmem_cache_free(replica_info_cache, info);
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
 * Publish @replica at @index on @nid, replacing a read count there.
 * Returns false if another replica got there first.
 */
static bool replica_store_insert(struct replica_tree *tree, int nid,
				 pgoff_t index, struct folio *replica)
{
	struct xarray *xa = &tree->nodes[nid];
	void *old = NULL, *found;

	for (;;) {
		found = xa_cmpxchg(xa, index, old, replica, REPLICA_META_GFP);
		if (found == old)
			return true;
		if (xa_is_err(found) || !xa_is_value(found))
			return false;
		old = found;
	}
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
	struct replica_info *info;
	struct folio *replica;

	info = kmem_cache_alloc(replica_info_cache, REPLICA_META_GFP);
	if (!info)
		goto fail;
	replica = __folio_alloc_node(REPLICA_GFP, 0, req->nid);
	if (!replica)
		goto fail_info;
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
	info->original = original;
	info->tier = tier;
	info->kinds = req->kinds;
	replica->private = info;
	folio_get(original);

	if (!replica_store_insert(tree, req->nid, replica->index, replica)) {
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
fail_info:
	kmem_cache_free(replica_info_cache, info);
fail:
	count_vm_event(REPLICA_ALLOC_FAIL);
	return NULL;
}

/*
 * Take what the store of @nid holds at @index out of it: forget a read
 * count; lock a replica, unlink it and return it, referenced.
 */
static struct folio *replica_collapse_take(struct replica_tree *tree, int nid,
					   pgoff_t index, void *entry)
{
	struct folio *replica;

	if (xa_is_value(entry)) {
		xa_cmpxchg(&tree->nodes[nid], index, entry, NULL, 0);
		return NULL;
	}
	replica = replica_find_get(tree, nid, index);
	if (!replica)
		return NULL;
	folio_lock(replica);
	if (!replica_in_store(tree, replica, nid, index)) {
		folio_unlock(replica);
		folio_put(replica);
		return NULL;
	}
	replica_unlink(tree, replica, true);
	return replica;
}

/*
 * Remove every replica of [@first, @last] from the store, unmap it and
 * release it, and forget the read counts there.  Returns how many replicas
 * were removed.
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
				if (replica)
					batch[n++] = replica;
				if (index == last) {
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
	req.kinds = replica_vma_kinds(vma);
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
		if (!replica_current_copy(tree, replica, req.nid, original)) {
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
		replica_info(replica)->kinds |= req.kinds;
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
	struct replica_tree *tree;

	if (!replica_vma_ok(vma) || replica_writers(vma->vm_file->f_mapping))
		return;
	req.vma = vma;
	req.file = vma->vm_file;
	req.index = vmf->pgoff;
	req.nid = numa_mem_id();
	req.kinds = replica_vma_kinds(vma);
	if (!replica_policy_wants(&req, NULL))
		return;
	ra->nid = req.nid;
	ra->kinds = req.kinds;
	ra->may_create = replica_node_has_room(req.nid);
	tree = READ_ONCE(vma->vm_file->f_mapping->i_replicas);
	ra->store = (struct xa_state)
		__XA_STATE(tree ? &tree->nodes[req.nid] : NULL, 0, 0, 0);
}

/*
 * What the store holds at @index, stepping from the last page looked up
 * when fault-around goes to the next one.
 */
static void *replica_around_entry(struct replica_around *ra, pgoff_t index)
{
	struct xa_state *xas = &ra->store;
	void *entry;

	if (index == xas->xa_index + 1 && !xas_invalid(xas)) {
		entry = xas_next(xas);
	} else {
		xas_set(xas, index);
		entry = xas_load(xas);
	}
	if (xas_retry(xas, entry)) {
		xas_set(xas, index);
		entry = xas_load(xas);
	}
	return xa_is_internal(entry) || xa_is_value(entry) ? NULL : entry;
}

/**
 * replica_fault_around_folio - the folio fault-around should map
 * @vmf: the fault, its pte pointing at the entry of @original
 * @original: a locked page-cache folio that fault-around is about to map
 * @ra: the state from replica_fault_around_start(), for which
 *	replica_fault_around_wanted() is true
 *
 * Fault-around maps a run of neighbouring pages, so this is the path a
 * replica is mapped by most often: it steps through the store beside the
 * page cache, and takes the replica's lock to know it is still the
 * current copy (whoever takes a replica out of the store holds its lock
 * until it is unmapped and released).
 *
 * Context: rcu_read_lock() and the page table lock held.
 * Return: @original, a locked and referenced local replica to map instead
 * (release it with replica_fault_around_done()), or NULL to map nothing
 * and leave the page to the fault path.
 */
struct folio *replica_fault_around_folio(struct vm_fault *vmf,
					 struct folio *original,
					 struct replica_around *ra)
{
	struct folio *replica;

	/*
	 * What is mapped already stays, and is no new use of a replica:
	 * leave its reclaim age and the replica_map count alone.
	 */
	if (!pte_none(ptep_get(vmf->pte)) || folio_nid(original) == ra->nid)
		return original;
	replica = ra->store.xa ? replica_around_entry(ra, original->index) :
		NULL;
	if (replica && folio_try_get(replica)) {
		if (folio_trylock(replica)) {
			/* Still in the store, and a copy of the page cache */
			if (xas_reload(&ra->store) == replica &&
			    replica_info(replica)->original == original) {
				replica_info(replica)->kinds |= ra->kinds;
				folio_set_referenced(replica);
				count_vm_event(REPLICA_MAP);
				return replica;
			}
			folio_unlock(replica);
		}
		folio_put(replica);
	}
	if (!replica_original_ok(original))
		return original;
	/* A replica is wanted but cannot be mapped now: let the fault decide. */
	if (ra->may_create)
		return NULL;
	count_vm_event(REPLICA_ALLOC_FAIL);
	return original;
}

void __replica_read_start(struct file *file, struct replica_read *rr)
{
	struct address_space *mapping = file->f_mapping;
	const struct replica_policy *policy;
	struct replica_request req = {
		.file = file,
		.nid = numa_mem_id(),
		.kinds = REPLICA_KIND_READ,
	};

	if (!replica_mapping_ok(mapping) || replica_writers(mapping))
		return;
	rcu_read_lock();
	policy = rcu_dereference(replica_current);
	if (policy->want_read && policy->want_read(&req)) {
		rr->nid = req.nid;
		rr->policy = policy;
		rr->tier = replica_policy_tier(policy, &req);
	}
	rcu_read_unlock();
	rr->file = file;
	rr->may_create = rr->nid != NUMA_NO_NODE &&
			 replica_node_has_room(rr->nid);
}

/*
 * Count a remote read of @index by @nid; returns the count so far, or 0 if
 * a replica appeared meanwhile or the count could not be kept.
 */
static unsigned long replica_count_read(struct replica_tree *tree, int nid,
					pgoff_t index)
{
	struct xarray *xa = &tree->nodes[nid];
	unsigned long count;
	void *old, *found;

	old = xa_load(xa, index);
	for (;;) {
		if (old && !xa_is_value(old))
			return 0;
		count = old ? xa_to_value(old) + 1 : 1;
		found = xa_cmpxchg(xa, index, old, xa_mk_value(count),
				   REPLICA_META_GFP);
		if (found == old)
			return count;
		if (xa_is_err(found))
			return 0;
		old = found;
	}
}

struct folio *__replica_read_folio(struct folio *original,
				   const struct replica_read *rr)
{
	struct address_space *mapping = original->mapping;
	struct replica_request req;
	struct replica_tree *tree;
	struct folio *replica;

	if (folio_nid(original) == rr->nid || !mapping ||
	    !replica_original_ok(original))
		return NULL;
	tree = READ_ONCE(mapping->i_replicas);
	replica = tree ? replica_find_get(tree, rr->nid, original->index) :
		NULL;
	if (replica) {
		/*
		 * Under its lock, a replica still in the store has its info:
		 * whoever takes it out holds the lock until it is released.
		 * Busy, it is being made or taken out: read the original.
		 */
		if (folio_trylock(replica)) {
			bool current_copy = replica_current_copy(tree, replica,
								 rr->nid,
								 original);

			folio_unlock(replica);
			if (current_copy) {
				/* A use, for reclaim's second chance. */
				if (!folio_test_referenced(replica))
					folio_set_referenced(replica);
				count_vm_event(REPLICA_READ);
				return replica;
			}
		}
		folio_put(replica);
		return NULL;
	}
	if (!rr->may_create)
		return NULL;
	tree = tree ? tree : replica_tree_get(mapping);
	if (!tree || replica_count_read(tree, rr->nid, original->index) <
		     READ_ONCE(replica_read_threshold))
		return NULL;

	/* Read often enough: make the replica, if the original holds still. */
	if (!folio_trylock(original))
		return NULL;
	replica = NULL;
	if (original->mapping == mapping && replica_original_ok(original)) {
		req.vma = NULL;
		req.file = rr->file;
		req.index = original->index;
		req.nid = rr->nid;
		req.kinds = REPLICA_KIND_READ;
		replica = replica_create(tree, original, &req, rr->policy,
					 rr->tier);
		if (replica)
			folio_unlock(replica);
	}
	folio_unlock(original);
	return replica;
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
			/* Read counts go with the cache they counted. */
			if (xa_is_value(replica)) {
				xa_cmpxchg(&tree->nodes[nid], index, replica,
					   NULL, 0);
				continue;
			}
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
 * replica_madvise - opt a range in or out of replication
 * @vma: the VMA madvise() is applied to
 * @vm_flags: its new flags, updated
 * @advice: MADV_REPLICATE or MADV_NOREPLICATE
 *
 * Only file mappings that may hold replicas can be advised: not anonymous,
 * hugetlb, DAX or shmem memory, and not shared mappings that may write.
 *
 * Return: 0, or -EINVAL for a range that cannot be advised.
 */
int replica_madvise(struct vm_area_struct *vma, unsigned long *vm_flags,
		    int advice)
{
	if (!vma->vm_file || vma_is_anonymous(vma) ||
	    is_vm_hugetlb_page(vma) || vma_is_dax(vma) ||
	    shmem_file(vma->vm_file) ||
	    (vma->vm_flags & (VM_SHARED | VM_MAYWRITE)) ==
	    (VM_SHARED | VM_MAYWRITE))
		return -EINVAL;
	if (advice == MADV_REPLICATE) {
		*vm_flags &= ~VM_NOREPLICATE;
		*vm_flags |= VM_REPLICATE;
	} else {
		*vm_flags &= ~VM_REPLICATE;
		*vm_flags |= VM_NOREPLICATE;
	}
	return 0;
}

/**
 * replica_madvise_done - finish madvise() on a range with its new flags
 * @vma: the VMA of [@start, @end), flags updated, write-locked
 * @start: start of the advised range
 * @end: end of the advised range
 * @advice: MADV_REPLICATE or MADV_NOREPLICATE
 *
 * MADV_NOREPLICATE unmaps the file pages mapped there, so that the next
 * access maps the original instead of a replica.  The mapping is write
 * locked, so no fault maps a replica again meanwhile; private copies made
 * by writes stay.
 */
void replica_madvise_done(struct vm_area_struct *vma, unsigned long start,
			  unsigned long end, int advice)
{
	struct zap_details details = { .even_cows = false };

	if (advice == MADV_NOREPLICATE)
		zap_page_range_single(vma, start, end - start, &details);
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

	if (isolate->second_chance && folio_test_clear_referenced(replica))
		return LRU_ROTATE;
	/*
	 * A replica being mapped, made or collapsed is busy.  The shrinker
	 * leaves it where it is; a policy switch, walking each list once,
	 * moves it and those it keeps behind the ones it has yet to see.
	 */
	if (!folio_trylock(replica)) {
		isolate->busy = true;
		return isolate->second_chance ? LRU_SKIP : LRU_ROTATE;
	}
	if (replica_info(replica)->kinds & isolate->keep_kinds) {
		folio_unlock(replica);
		return LRU_ROTATE;
	}
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

/*
 * A clock over each tier: a replica referenced since the last scan is
 * passed over once, its bit cleared, so the walk may go round a list once
 * before it frees what it was asked for.  Stopping after nr_to_scan
 * entries instead would let a node whose replicas were all used recently
 * see the shrinker come back empty-handed, several times over, while
 * reclaim takes page cache that costs I/O to read again; a replica costs
 * a copy.  The first tier gives all it can before the last is scanned.
 */
static unsigned long replica_shrink_scan(struct shrinker *shrinker,
					 struct shrink_control *sc)
{
	struct replica_isolate isolate = { .second_chance = true };
	unsigned long want = sc->nr_to_scan, freed = 0;
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
			freed += replica_dispose(&isolate.dispose);
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
		replica_dispose(&isolate->dispose);
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
 * not take at once (a fault, a collapse or the shrinker held it) was
 * looked at again; with @keep_kinds 0, once no replica is left.
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
		if (keep_kinds ? !isolate.busy : !atomic_long_read(&replica_count))
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

#ifdef CONFIG_MM_REPLICA_KUNIT_TEST
#include "tests/core-kunit.h"
#endif
