// SPDX-License-Identifier: GPL-2.0
/*
 * NUMA page-cache replication: the fault path.  A read fault on a remote
 * original maps the local replica, made on the spot if need be, and
 * fault-around maps the local replicas of the neighbouring pages.
 */

#include <linux/mm.h>
#include <linux/pagemap.h>
#include <linux/rcupdate.h>
#include <linux/userfaultfd_k.h>
#include <linux/vmstat.h>
#include <linux/xarray.h>

#include "internal.h"

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
