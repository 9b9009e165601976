// SPDX-License-Identifier: GPL-2.0
/*
 * NUMA page-cache replication: what writers call.  Replicas are collapsed
 * before the page cache can change (open for write, truncation,
 * invalidation), and those nobody maps are let go of when the page cache
 * is invalidated, since they hold their originals.
 */

#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/pagemap.h>
#include <linux/sched.h>
#include <linux/vmstat.h>

#include "internal.h"

void __replica_collapse_for_write(struct address_space *mapping)
{
	replica_collapse_range(mapping, 0, ULONG_MAX, REPLICA_DROP_WRITE);
}

void __replica_collapse_range(struct address_space *mapping, pgoff_t first,
			      pgoff_t last, enum replica_drop_reason why)
{
	replica_collapse_range(mapping, first, last, why);
}

void __replica_drop_unmapped(struct address_space *mapping, pgoff_t first,
			     pgoff_t last)
{
	struct replica_tree *tree = READ_ONCE(mapping->i_replicas);
	unsigned long index;
	struct folio *replica, *original;
	int nid;

	if (!tree)
		return;
	for (nid = 0; nid < nr_node_ids; nid++) {
		xa_for_each_range(&tree->nodes[nid], index, replica, first,
				  last) {
			cond_resched();
			if (xa_is_value(replica)) {
				replica_forget_reads(tree, nid, index, replica);
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
			if (!replica_in_store(tree, replica, nid, index) ||
			    !folio_trylock(replica_info(replica)->original)) {
				folio_unlock(replica);
				folio_put(replica);
				continue;
			}
			/*
			 * Fault-around maps a replica under its original's
			 * lock alone: only with both locks held does an
			 * unmapped replica stay unmapped until it is out.
			 */
			original = replica_info(replica)->original;
			if (!folio_mapped(replica)) {
				replica_inject_drop_delay();
				replica_unlink(tree, replica, true);
				folio_unlock(original);
				replica_dropped(replica, REPLICA_DROP_UNCACHE);
				replica_release(replica);
			} else {
				folio_unlock(original);
				folio_unlock(replica);
			}
			folio_put(replica);
		}
	}
}
