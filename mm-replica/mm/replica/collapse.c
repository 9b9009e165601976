// SPDX-License-Identifier: GPL-2.0
/*
 * NUMA page-cache replication: collapsing replicas before the page cache
 * can change, and letting go of those nobody maps when it is invalidated.
 */

#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/pagemap.h>
#include <linux/sched.h>
#include <linux/vmstat.h>

#include "internal.h"

/* Replicas locked and unmapped in one go by a collapse. */
#define REPLICA_COLLAPSE_BATCH		32

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
unsigned long replica_collapse_range(struct address_space *mapping,
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
