// SPDX-License-Identifier: GPL-2.0
/*
 * NUMA page-cache replication: the read(2) path.  A page read often enough
 * by a node that has no copy of it gets a replica there, and reads copy
 * from that replica instead of the remote original.
 */

#include <linux/fs.h>
#include <linux/memcontrol.h>
#include <linux/pagemap.h>
#include <linux/rcupdate.h>
#include <linux/vmstat.h>

#include "internal.h"

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
	if (policy->want_read && policy->want_read(&req) &&
	    mem_cgroup_replication_enabled(NULL)) {
		rr->nid = req.nid;
		rr->policy = policy;
		rr->tier = replica_policy_tier(policy, &req);
	}
	rcu_read_unlock();
	rr->file = file;
	if (rr->nid == NUMA_NO_NODE)
		return;
	rr->settling = !replica_file_settled(mapping);
	rr->may_create = !rr->settling &&
			 replica_has_room(rr->nid, current->mm, 1, 0);
}

/* The pages of @folio that a read of @bytes at file position @pos spans. */
static unsigned long replica_read_pages(struct folio *folio, loff_t pos,
					size_t bytes)
{
	loff_t end = min_t(loff_t, pos + bytes,
			   folio_pos(folio) + folio_size(folio));

	if (end <= pos)
		return 0;
	return ((end - 1) >> PAGE_SHIFT) - (pos >> PAGE_SHIFT) + 1;
}

/*
 * Whether a page that a read of @bytes at file position @pos copies from
 * @replica is poisoned: memory failure marks the page, not the folio, and
 * drops the replica only after that.
 */
static bool replica_read_poisoned(struct folio *replica, loff_t pos,
				  size_t bytes)
{
	unsigned long first = (pos - folio_pos(replica)) >> PAGE_SHIFT;
	unsigned long i, nr = replica_read_pages(replica, pos, bytes);

	for (i = first; i < first + nr; i++)
		if (PageHWPoison(folio_page(replica, i)))
			return true;
	return false;
}

struct folio *__replica_read_folio(struct folio *original, loff_t pos,
				   size_t bytes, const struct replica_read *rr)
{
	struct address_space *mapping = original->mapping;
	struct replica_request req;
	struct replica_tree *tree;
	struct folio *replica;

	if (folio_nid(original) == rr->nid || mapping != rr->file->f_mapping ||
	    !replica_original_ok(original, mapping))
		return NULL;
	tree = READ_ONCE(mapping->i_replicas);
	replica = tree ? replica_find_get(tree, rr->nid, original->index) :
		NULL;
	if (replica) {
		unsigned long pages_read = replica_read_pages(original, pos,
							      bytes);

		/*
		 * Under its lock, a replica still in the store has its info:
		 * whoever takes it out holds the lock until it is released.
		 * Busy, it is being made or taken out: read the original, as
		 * for a poisoned replica, which memory failure is dropping.
		 */
		if (folio_trylock(replica)) {
			if (replica_current_copy(tree, replica, rr->nid,
						 original) &&
			    !replica_read_poisoned(replica, pos, bytes)) {
				replica_note_use(replica, REPLICA_KIND_READ |
							  REPLICA_USED);
				folio_unlock(replica);
				replica_count_events(replica, REPLICA_READ,
						     pages_read);
				return replica;
			}
			folio_unlock(replica);
		}
		folio_put(replica);
		return NULL;
	}
	if (!rr->may_create && !rr->settling)
		return NULL;
	tree = tree ? tree : replica_tree_get(mapping);
	if (!tree || replica_count_read(tree, rr->nid, original->index) <
		     READ_ONCE(replica_read_threshold))
		return NULL;
	/*
	 * Only a read that would have made the replica counts as held back:
	 * one below the threshold would have read the original anyway.
	 */
	if (rr->settling) {
		replica_count_mm_events(current->mm, REPLICA_SETTLE,
					replica_read_pages(original, pos, bytes));
		return NULL;
	}

	/* Read often enough: make the replica, if the original holds still. */
	if (!folio_trylock(original))
		return NULL;
	replica = NULL;
	if (original->mapping == mapping &&
	    replica_original_ok(original, mapping) &&
	    (!folio_test_large(original) ||
	     replica_has_room(rr->nid, current->mm,
			      folio_nr_pages(original),
			      folio_order(original)))) {
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
