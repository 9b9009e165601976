// SPDX-License-Identifier: GPL-2.0
/*
 * NUMA page-cache replication: what the rest of memory management calls
 * when it moves or frees pages.  A replica holds a reference on its
 * original, so without these migration would fail on the original and
 * reclaim could not free it; memory failure handles LRU pages only; and a
 * long-term pin of a replica would keep the bytes of the time of the pin.
 * A replica is a copy that the next fault makes again: each of them drops
 * it, unmapping it first.  The pfn walkers that move pages (compaction,
 * memory offlining, alloc_contig_range(), soft offlining) need nothing
 * here: a replica is a non-LRU movable page (replica_movable_ops, in
 * mm/replica/store.c).
 */

#define pr_fmt(fmt) "replica: " fmt

#include <linux/memcontrol.h>
#include <linux/migrate.h>
#include <linux/mm.h>
#include <linux/pagemap.h>
#include <linux/rcupdate.h>
#include <linux/rmap.h>
#include <linux/vmstat.h>

#include "internal.h"

/* Unmap and release a locked replica that is out of the store. */
static void replica_drop(struct folio *replica, enum replica_drop_reason why)
{
	replica_unmap(replica);
	replica_dropped(replica, why);
	replica_release(replica);
}

/**
 * __replica_free_copies - drop the replicas of a locked page-cache folio
 * @original: the folio, locked
 * @may_wait: sleep for the lock of a busy replica
 * @keep_mlocked: keep the replicas that mlocked mappings map
 * @why: what is done to @original
 *
 * Forgets the remote reads counted at its index, too.
 *
 * The original's lock keeps new replicas from being made: the fault path
 * makes them under it, read(2) trylocks it.
 *
 * Return: true if no replica of @original is left in the store.
 */
bool __replica_free_copies(struct folio *original, bool may_wait,
			   bool keep_mlocked, enum replica_drop_reason why)
{
	struct replica_tree *tree = READ_ONCE(original->mapping->i_replicas);
	bool all_gone = true;
	int nid;

	VM_WARN_ON_ONCE_FOLIO(!folio_test_locked(original), original);
	for (nid = 0; nid < nr_node_ids; nid++) {
		void *entry = xa_load(&tree->nodes[nid], original->index);
		struct folio *replica;

		if (!entry)
			continue;
		/* The next page cached here is read afresh. */
		if (xa_is_value(entry)) {
			replica_forget_reads(tree, nid, original->index, entry);
			continue;
		}
		replica = replica_find_get(tree, nid, original->index);
		if (!replica)
			continue;
		/* We hold the original: the replica's lock comes after it. */
		if (may_wait) {
			folio_lock(replica);
		} else if (!folio_trylock(replica)) {
			all_gone = false;
			folio_put(replica);
			continue;
		}
		/*
		 * An mlocked mapping's replica holds its original, as the
		 * mlocked original would stay.  The replica at this index may
		 * copy another original, one memory failure took out of the
		 * page cache: not ours to drop.
		 */
		if (keep_mlocked && replica_mlocked(replica)) {
			all_gone = false;
			folio_unlock(replica);
		} else if (replica_current_copy(tree, replica, nid, original)) {
			replica_unlink(tree, replica, true);
			replica_drop(replica, why);
		} else {
			folio_unlock(replica);
		}
		folio_put(replica);
	}
	return all_gone;
}

/**
 * __replica_referenced - references to a page-cache folio through its replicas
 * @original: the folio
 * @is_locked: the caller holds @original's lock
 * @memcg: count only references from tasks in this memory cgroup, if set
 * @vm_flags: the vm_flags of the referencing mappings are added here
 *
 * Return: the number of mappings of @original's replicas that referenced
 * them since the last call, or -1 if @original's lock was busy.
 */
int __replica_referenced(struct folio *original, int is_locked,
			 struct mem_cgroup *memcg, unsigned long *vm_flags)
{
	struct replica_tree *tree;
	int referenced = 0, nid;
	bool copies;

	/* Unlocked, the folio may leave its mapping and the mapping go. */
	rcu_read_lock();
	copies = replica_may_have_copies(original);
	rcu_read_unlock();
	if (!copies)
		return 0;
	/* Its lock keeps the replicas of @original in the store. */
	if (!is_locked && !folio_trylock(original))
		return -1;
	/* Truncated meanwhile: truncation removed its replicas first. */
	tree = original->mapping ? READ_ONCE(original->mapping->i_replicas) :
				   NULL;
	for (nid = 0; tree && nid < nr_node_ids; nid++) {
		unsigned long flags;
		struct folio *replica;
		int ret;

		replica = replica_find_get(tree, nid, original->index);
		if (!replica)
			continue;
		/* Busy, or its rmap is: as folio_referenced(), a reference. */
		if (!folio_trylock(replica)) {
			referenced++;
		} else {
			if (replica_current_copy(tree, replica, nid, original)) {
				ret = folio_referenced(replica, 1, memcg, &flags);
				referenced += ret < 0 ? 1 : ret;
				*vm_flags |= flags;
			}
			folio_unlock(replica);
		}
		folio_put(replica);
	}
	if (!is_locked)
		folio_unlock(original);
	return referenced;
}

/**
 * replica_evict - drop a replica found by its page
 * @replica: a folio that folio_test_replica() says is a replica, which the
 *	caller holds a reference on but has not locked
 * @may_wait: sleep for busy locks
 * @why: REPLICA_DROP_MEMORY_FAILURE, _SOFT_OFFLINE, _LONGTERM_PIN or _STALE
 *
 * For those who find a replica by its page frame or its page table entry
 * rather than by its original and cannot migrate it: memory failure, soft
 * offlining of a large replica (which cannot be split), long-term pins.
 *
 * Return: true if this call took @replica out of the store and unmapped
 * it; it is freed once the caller's and any other reference are gone.
 */
bool replica_evict(struct folio *replica, bool may_wait,
		   enum replica_drop_reason why)
{
	if (!replica_take(replica, may_wait))
		return false;
	replica_drop(replica, why);
	return true;
}

/**
 * replica_memory_failure - recover from a memory error in a replica
 * @replica: the replica, with the poisoned page; memory_failure() holds a
 *	reference on it and keeps it, so that the page is never used again
 *
 * A replica is a clean copy of page cache: unmap and drop it, and the tasks
 * that mapped it fault on their next access and map the original or a new
 * replica, as for a clean page-cache page, which memory failure drops.
 *
 * Return: MF_RECOVERED, or MF_FAILED if somebody else, a GUP pin say,
 * still holds the poisoned page.
 */
enum mf_result replica_memory_failure(struct folio *replica)
{
	replica_evict(replica, true, REPLICA_DROP_MEMORY_FAILURE);
	if (folio_ref_count(replica) > 1) {
		pr_err("%#lx: poisoned replica still referenced by %d users\n",
		       folio_pfn(replica), folio_ref_count(replica) - 1);
		return MF_FAILED;
	}
	return MF_RECOVERED;
}

/**
 * __replica_mapped_shared - whether others map a page a replica stands for
 * @replica: a replica that a present page table entry maps, whose page
 *	table lock the caller holds: it stays in the store
 *
 * Return: true if more than one mapping maps the page through @replica,
 * its original or its other replicas (as folio_likely_mapped_shared(),
 * an estimate for large folios).
 */
bool __replica_mapped_shared(struct folio *replica)
{
	struct replica_tree *tree =
		READ_ONCE(replica_info(replica)->mapping->i_replicas);
	struct folio *copy;
	bool shared = false;
	int nid;

	if (folio_likely_mapped_shared(replica) ||
	    folio_mapped(replica_info(replica)->original))
		return true;
	rcu_read_lock();
	for (nid = 0; nid < nr_node_ids && !shared; nid++) {
		copy = xa_load(&tree->nodes[nid], replica->index);
		shared = copy != replica && !xa_is_value(copy) && copy &&
			 folio_mapped(copy);
	}
	rcu_read_unlock();
	return shared;
}

/**
 * __replica_mapped_copy - a mapped replica of a page-cache folio, if current
 * @original: the page-cache folio, locked
 * @replica: a replica that a page table entry in @original's range maps,
 *	under the page table lock
 *
 * A replica out of the store may be mapped still, until its remover, who
 * holds only its lock by then, unmaps it: only one in the store, which
 * @original's lock keeps there, may be mapped anew.
 *
 * Return: @replica if it is the current copy of @original, else @original.
 */
struct folio *__replica_mapped_copy(struct folio *original,
				    struct folio *replica)
{
	struct replica_tree *tree = READ_ONCE(original->mapping->i_replicas);

	return tree && replica_current_copy(tree, replica, folio_nid(replica),
					    original) ? replica : original;
}

/**
 * __replica_page_original - the page-cache page a replica's page stands for
 * @page: a page of a movable folio, referenced
 *
 * Return: the page of the replica's original at @page's index, referenced
 * in place of @page; NULL, with @page put, if the replica was released;
 * @page if it is no replica.
 */
struct page *__replica_page_original(struct page *page)
{
	struct folio *folio = page_folio(page), *original;
	struct page *found = page;

	folio_lock(folio);
	/* Under its lock, a replica that is still movable is in the store. */
	if (folio_test_movable(folio) && folio_test_replica(folio)) {
		original = replica_info(folio)->original;
		found = folio_page(original, folio_page_idx(folio, page));
		folio_get(original);
	} else if (__folio_test_movable(folio)) {
		found = NULL;
	}
	folio_unlock(folio);
	if (found != page)
		put_page(page);
	return found;
}
