// SPDX-License-Identifier: GPL-2.0
/*
 * NUMA page-cache replication: the fault path.  A read fault on a remote
 * original maps the local replica, made on the spot if need be, and
 * fault-around maps the local replicas of the neighbouring pages.
 */

#include <linux/memcontrol.h>
#include <linux/mm.h>
#include <linux/pagemap.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/topology.h>
#include <linux/userfaultfd_k.h>
#include <linux/vmstat.h>
#include <linux/xarray.h>

#include "internal.h"

/*
 * Fault-around leaves a page without a replica to a fault of its own
 * only while a window's worth of replicas (fault_around_bytes, 64 KiB by
 * default) can still be made: short of that, in a memory cgroup near its
 * limit say, the window maps the originals in one fault rather than take
 * a fault per page that may find no room.
 */
#define REPLICA_AROUND_ROOM	16

static bool replica_vma_ok(struct vm_area_struct *vma)
{
	/*
	 * A fault for a long-term pin maps the original: what is pinned must
	 * show later writes to the file, as a page-cache page does.  So does
	 * a fault taken for another process (ptrace, process_vm_readv()),
	 * whose node says nothing of where that process runs.
	 */
	if (!vma->vm_file || userfaultfd_armed(vma) ||
	    (current->flags & PF_MEMALLOC_PIN) || vma->vm_mm != current->mm)
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

/**
 * replica_threads_on_node - whether a node's replicas suit the whole process
 * @nid: a node
 *
 * Replicas may be mapped for the current process on @nid only if all its
 * threads run there: they share page tables, so a page is mapped once for
 * all of them (see mm/replica/follow.c).
 *
 * Return: true if every thread of the current process last ran on @nid.
 */
bool replica_threads_on_node(int nid)
{
	struct task_struct *t;
	bool all = true;

	if (thread_group_empty(current))
		return true;
	rcu_read_lock();
	for_each_thread(current, t) {
		if (cpu_to_node(task_cpu(t)) != nid) {
			all = false;
			break;
		}
	}
	rcu_read_unlock();
	return all;
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
	/* Last: the memcg walk costs more than the policy's decision. */
	if (want && !mem_cgroup_replication_enabled(req->vma->vm_mm))
		want = false;
	if (!want)
		policy = NULL;
	else if (tier)
		*tier = replica_policy_tier(policy, req);
	rcu_read_unlock();
	return policy;
}

/*
 * What mapping a replica records.  The task that made a large replica maps
 * the rest of it over its next faults, a fault-around window at a time:
 * that is no new use, which would earn the replica the second chance that
 * reclaim gives replicas mapped again.
 */
static unsigned long replica_large_use(struct folio *replica,
				       const struct mm_struct *mm,
				       unsigned long use)
{
	if (folio_test_large(replica) && replica_info(replica)->maker == mm)
		return use & ~REPLICA_USED;
	return use;
}

/* A page of a poisoned replica is never mapped, as for the page cache. */
static bool replica_poisoned(struct folio *replica)
{
	return folio_test_hwpoison(replica) ||
	       (folio_test_large(replica) && folio_test_has_hwpoisoned(replica));
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
	if (original->mapping != mapping ||
	    !replica_original_ok(original, mapping))
		return;
	req.nid = numa_mem_id();
	if (folio_nid(original) == req.nid || replica_writers(mapping) ||
	    !replica_threads_on_node(req.nid))
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
		replica_count_mm_events(vma->vm_mm, REPLICA_ALLOC_FAIL, 1);
		return;
	}
	replica = replica_find_get(tree, req.nid, req.index);
	if (replica) {
		folio_lock(replica);
		if (!replica_current_copy(tree, replica, req.nid, original)) {
			/*
			 * The copy of a page that left the page cache while
			 * it held it: it may differ from what the page cache
			 * holds now.  Drop it alone and without waiting: we
			 * hold the lock of the page now cached at this index,
			 * which taking its replicas on other nodes would wait
			 * for.
			 */
			folio_unlock(replica);
			replica_evict(replica, false, REPLICA_DROP_STALE);
			folio_put(replica);
			return;
		}
		/* A poisoned page is never mapped: map the original. */
		if (replica_poisoned(replica)) {
			folio_unlock(replica);
			folio_put(replica);
			return;
		}
		replica_mapped(replica, vma->vm_mm,
			       replica_large_use(replica, vma->vm_mm,
						 req.kinds | REPLICA_USED));
	} else if (!replica_file_settled(mapping)) {
		replica_count_mm_events(vma->vm_mm, REPLICA_SETTLE,
					folio_nr_pages(original));
		return;
	} else if (replica_has_room(req.nid, vma->vm_mm,
				    folio_nr_pages(original),
				    folio_order(original))) {
		replica = replica_create(tree, original, &req, policy, tier);
		if (!replica)
			return;
		replica_note_mm(vma->vm_mm);
	} else {
		replica_count_mm_events(vma->vm_mm, REPLICA_ALLOC_FAIL,
					folio_nr_pages(original));
		return;
	}

	/* The same page of the replica as of the original. */
	vmf->page = folio_page(replica, folio_page_idx(original, vmf->page));
	folio_unlock(original);
	folio_put(original);
}

/**
 * replica_vma_replicated - whether the policy replicates a mapping
 * @vma: a mapping of the current task's process
 *
 * Return: true if faults in @vma by the current task may map replicas.
 */
bool replica_vma_replicated(struct vm_area_struct *vma)
{
	struct replica_request req = {
		.vma = vma,
		.index = vma->vm_pgoff,
		.nid = numa_mem_id(),
	};

	if (!replica_vma_ok(vma))
		return false;
	req.file = vma->vm_file;
	req.kinds = replica_vma_kinds(vma);
	return replica_policy_wants(&req, NULL);
}

bool __replica_leaves_pmd(struct vm_area_struct *vma, struct folio *folio)
{
	return folio_nid(folio) != numa_mem_id() &&
	       !replica_writers(vma->vm_file->f_mapping) &&
	       replica_threads_on_node(numa_mem_id()) &&
	       replica_vma_replicated(vma) &&
	       replica_file_settled(vma->vm_file->f_mapping);
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
	if (!replica_threads_on_node(req.nid) ||
	    !replica_policy_wants(&req, NULL))
		return;
	ra->nid = req.nid;
	ra->mm = vma->vm_mm;
	ra->use = req.kinds | REPLICA_USED;
	ra->may_create = -1;
	ra->settling = false;
	ra->leaf_first = REPLICA_NO_LEAF;
	tree = READ_ONCE(vma->vm_file->f_mapping->i_replicas);
	ra->store = tree ? &tree->nodes[req.nid] : NULL;
}

/**
 * replica_around_walk - look a page up in the store from its root
 * @ra: the fault-around pass
 * @index: the page
 *
 * For the first page of a pass, or the first of another leaf node: finds
 * what the store holds at @index, and remembers the leaf node it is in for
 * the next pages of the pass.  This is xas_load() for a store that has no
 * multi-index entries, without the xa_state: each pass walks once, and
 * with xas_load() the walk cost about twice as much (126 instructions a
 * pass against 64, in make bench's fault case).  A node on the way that
 * has left the tree holds no entry, or retry entries, which end the walk:
 * the fault path looks again.
 *
 * Context: rcu_read_lock() held.
 * Return: the entry at @index, NULL if there is none.
 */
void *replica_around_walk(struct replica_around *ra, pgoff_t index)
{
	struct xa_node *node;
	void *entry;

	if (!ra->store)
		return NULL;
	entry = rcu_dereference(ra->store->xa_head);
	ra->leaf_first = REPLICA_NO_LEAF;
	if (!xa_is_node(entry))
		return index ? NULL : entry;
	node = xa_to_node(entry);
	if ((index >> node->shift) > XA_CHUNK_MASK)
		return NULL;
	for (;;) {
		entry = rcu_dereference(node->slots[(index >> node->shift) &
						    XA_CHUNK_MASK]);
		if (!node->shift)
			break;
		if (!xa_is_node(entry))
			return NULL;
		node = xa_to_node(entry);
	}
	ra->leaf_slots = node->slots;
	ra->leaf_first = index & ~(pgoff_t)XA_CHUNK_MASK;
	return entry;
}

/**
 * __replica_fault_around_folio - fault-around of a page with no replica
 * @original: as for replica_fault_around_folio()
 * @ra: the fault-around pass
 * @entry: what the pass found in the store at @original's index, no
 *	replica of @original that may be mapped
 *
 * Context: rcu_read_lock() and the page table lock held.
 * Return: as for replica_fault_around_folio().
 */
struct folio *__replica_fault_around_folio(struct folio *original,
					   struct replica_around *ra,
					   void *entry)
{
	/* The leaf left the store since the pass found it: walk again. */
	if (xa_is_retry(entry)) {
		entry = replica_around_walk(ra, original->index);
		if (replica_mappable(entry, original)) {
			replica_mapped(entry, ra->mm, ra->use);
			return entry;
		}
	}
	/* Locked and in the page cache: its mapping holds still. */
	if (!replica_original_ok(original, original->mapping))
		return original;
	if (ra->may_create < 0) {
		ra->settling = !replica_file_settled(original->mapping);
		ra->may_create = !ra->settling &&
				 replica_has_room(ra->nid, ra->mm,
						  REPLICA_AROUND_ROOM, 0);
	}
	/* A replica is wanted but cannot be mapped now: let the fault decide. */
	if (ra->may_create)
		return NULL;
	replica_count_mm_events(ra->mm, ra->settling ? REPLICA_SETTLE :
						       REPLICA_ALLOC_FAIL, 1);
	return original;
}

/*
 * The local replica of a large @original that fault-around may map, or
 * NULL.  The store's multi-index entry answers for every index it covers.
 */
static struct folio *replica_around_large_lookup(struct folio *original,
						 struct replica_around *ra)
{
	struct folio *replica = ra->store ? xa_load(ra->store, original->index) :
					    NULL;

	if (!replica_mappable(replica, original) ||
	    folio_nr_pages(replica) != folio_nr_pages(original) ||
	    replica_poisoned(replica))
		return NULL;
	return replica;
}

/*
 * Whether fault-around leaves a large @original that has no local replica
 * to the fault path, which makes one, rather than mapping the original.
 */
static bool replica_around_leaves_large(struct folio *original,
					struct replica_around *ra)
{
	long nr = folio_nr_pages(original);

	if (!replica_original_ok(original, original->mapping))
		return false;
	if (!replica_file_settled(original->mapping)) {
		replica_count_mm_events(ra->mm, REPLICA_SETTLE, nr);
		return false;
	}
	if (replica_has_room(ra->nid, ra->mm, nr, folio_order(original)))
		return true;
	replica_count_mm_events(ra->mm, REPLICA_ALLOC_FAIL, nr);
	return false;
}

/**
 * replica_fault_around_large - the folio fault-around maps for a large one
 * @original: a locked large page-cache folio that fault-around maps part of
 * @ra: the state of a pass for which replica_fault_around_wanted() is true
 *
 * The large counterpart of replica_fault_around_folio(): a large replica
 * copies a large original of the same order, page for page.
 *
 * Context: rcu_read_lock() and the page table lock held.
 * Return: @original, its local replica to map instead (with no reference
 * of the caller's: @original's lock keeps it in the store), or NULL to map
 * nothing of @original and leave it to the fault path.
 */
struct folio *replica_fault_around_large(struct folio *original,
					 struct replica_around *ra)
{
	struct folio *replica;

	if (folio_nid(original) == ra->nid)
		return original;
	replica = replica_around_large_lookup(original, ra);
	if (replica) {
		replica_mapped(replica, ra->mm,
			       replica_large_use(replica, ra->mm, ra->use));
		return replica;
	}
	return replica_around_leaves_large(original, ra) ? NULL : original;
}

/**
 * replica_fault_around_pmd - map the PMD of a replica, not of its original
 * @vmf: the fault, whose PMD is empty
 * @original: the first folio of a fault-around pass, locked, referenced and
 *	PMD-mappable
 * @ra: the state of a pass for which replica_fault_around_wanted() is true
 *
 * Where fault-around would map a remote PMD-sized page-cache folio with one
 * PMD, it maps the local replica, so that text keeps its large TLB entry
 * and is read locally.  If the node has no replica of it but may take one,
 * fault-around maps nothing, so that the PMD stays empty for the fault
 * path, which makes the replica and maps it with one PMD.
 *
 * Context: rcu_read_lock() held.
 * Return: VM_FAULT_NOPAGE if the replica was mapped, 0 to leave the fault
 * to the fault path (both with @original unlocked and released), or
 * VM_FAULT_FALLBACK to go on with @original as without replication.
 */
vm_fault_t replica_fault_around_pmd(struct vm_fault *vmf,
				    struct folio *original,
				    struct replica_around *ra)
{
	struct folio *replica;

	if (folio_nid(original) == ra->nid)
		return VM_FAULT_FALLBACK;
	replica = replica_around_large_lookup(original, ra);
	if (replica) {
		/* The mapping's reference; the store's keeps it till then. */
		folio_get(replica);
		if (do_set_pmd(vmf, &replica->page)) {
			folio_put(replica);
			return VM_FAULT_FALLBACK;
		}
		replica_mapped(replica, ra->mm, ra->use);
		folio_unlock(original);
		folio_put(original);
		return VM_FAULT_NOPAGE;
	}
	if (!replica_around_leaves_large(original, ra))
		return VM_FAULT_FALLBACK;
	folio_unlock(original);
	folio_put(original);
	return 0;
}
