/* SPDX-License-Identifier: GPL-2.0 */
/*
 * NUMA page-cache replication: per-node, read-only copies of file pages.
 *
 * A replica is a copy of a page-cache folio (the original) on another NUMA
 * node.  It is mapped into tasks on that node in place of the remote
 * original, or read by them with read(2), and exists only while nobody can
 * write the file.  See Documentation/mm/replication.rst for the design.
 */
#ifndef _LINUX_REPLICA_H
#define _LINUX_REPLICA_H

#include <linux/bits.h>
#include <linux/fs.h>
#include <linux/jump_label.h>
#include <linux/list.h>
#include <linux/memcontrol.h>
#include <linux/numa.h>
#include <linux/mm.h>
#include <linux/pagemap.h>
#include <linux/sched.h>
#include <linux/sched/coredump.h>
#include <linux/topology.h>
#include <linux/tracepoint-defs.h>
#include <linux/types.h>
#include <linux/vmstat.h>
#include <linux/xarray.h>

struct mem_cgroup;
struct pipe_inode_info;
struct vm_area_struct;
struct vm_fault;

/*
 * What a replica is made for.  Each replica keeps the kinds of the
 * requests it served; a policy switch keeps the replicas of the kinds the
 * new policy makes and drops the others.
 */
#define REPLICA_KIND_EXEC	BIT(0)	/* an executable file mapping */
#define REPLICA_KIND_PRIVATE	BIT(1)	/* a MAP_PRIVATE file mapping */
#define REPLICA_KIND_SHARED	BIT(2)	/* a read-only MAP_SHARED mapping */
#define REPLICA_KIND_READ	BIT(3)	/* read(2), splice(2), sendfile(2) */
#define REPLICA_KIND_ADVISED	BIT(4)	/* a range opted in: MADV_REPLICATE */

/*
 * Kept with the kinds in replica_info::use: the replica was mapped or read
 * since reclaim last looked at it, which earns it a second chance.
 */
#define REPLICA_USED		BIT(7)
/*
 * Also kept there, and never cleared: the replica served a request after
 * the one it was made for.  One dropped without it was wasted.
 */
#define REPLICA_REUSED		BIT(8)

/**
 * struct replica_request - the question a policy is asked
 * @vma: the mapping that takes a read fault, or NULL for a read(2)
 * @file: the file whose page cache is read
 * @index: index of the page in the file
 * @nid: node the replica would live on, the reader's node
 * @kinds: REPLICA_KIND_* describing the request
 */
struct replica_request {
	struct vm_area_struct *vma;
	struct file *file;
	pgoff_t index;
	int nid;
	unsigned int kinds;
};

/**
 * enum replica_drop_reason - why a replica is dropped
 * @REPLICA_DROP_WRITE: its file was opened for write or mapped writable
 * @REPLICA_DROP_TRUNCATE: its file was truncated or hole-punched, or its
 *	inode is being evicted
 * @REPLICA_DROP_INVALIDATE: its page cache is being invalidated (direct
 *	I/O, a filesystem's own invalidation)
 * @REPLICA_DROP_INODE: its original had left the page cache by another way
 *	than truncation when its inode was evicted
 * @REPLICA_DROP_UNCACHE: let go for drop_caches or POSIX_FADV_DONTNEED
 * @REPLICA_DROP_SHRINK: memory pressure on its node or memory cgroup
 *	(reclaim, or a write to memory.reclaim)
 * @REPLICA_DROP_POLICY: a policy that does not make its kind became current
 * @REPLICA_DROP_MIGRATE: its original is being migrated
 * @REPLICA_DROP_RECLAIM: its original is being reclaimed
 * @REPLICA_DROP_SPLIT: its original is being split
 * @REPLICA_DROP_THP_COLLAPSE: its original is being collapsed into a THP
 * @REPLICA_DROP_MEMORY_FAILURE: a memory error in it or its original
 * @REPLICA_DROP_SOFT_OFFLINE: its original or it is being soft offlined
 * @REPLICA_DROP_LONGTERM_PIN: a long-term pin asked for its page
 * @REPLICA_DROP_MOVE: it could not be migrated within its node
 * @REPLICA_DROP_STALE: it copies a page that left the page cache meanwhile
 * @REPLICA_DROP_NR: number of reasons
 *
 * The replica_drop tracepoint reports it; the first four count in
 * REPLICA_COLLAPSE (the page cache may change), the next three in
 * REPLICA_RECLAIM (memory is wanted back), the rest in REPLICA_EVICT (the
 * kernel moves or frees the original, or the replica itself).
 */
enum replica_drop_reason {
	REPLICA_DROP_WRITE,
	REPLICA_DROP_TRUNCATE,
	REPLICA_DROP_INVALIDATE,
	REPLICA_DROP_INODE,
	REPLICA_DROP_UNCACHE,
	REPLICA_DROP_SHRINK,
	REPLICA_DROP_POLICY,
	REPLICA_DROP_MIGRATE,
	REPLICA_DROP_RECLAIM,
	REPLICA_DROP_SPLIT,
	REPLICA_DROP_THP_COLLAPSE,
	REPLICA_DROP_MEMORY_FAILURE,
	REPLICA_DROP_SOFT_OFFLINE,
	REPLICA_DROP_LONGTERM_PIN,
	REPLICA_DROP_MOVE,
	REPLICA_DROP_STALE,
	REPLICA_DROP_NR
};

/**
 * enum replica_tier - the order in which reclaim takes replicas
 * @REPLICA_TIER_FIRST: reclaimed first, least recently used first
 * @REPLICA_TIER_LAST: reclaimed once no first-tier replica is left
 * @REPLICA_NR_TIERS: number of tiers
 */
enum replica_tier {
	REPLICA_TIER_FIRST,
	REPLICA_TIER_LAST,
	REPLICA_NR_TIERS,
};

/**
 * struct replica_policy - decides what is replicated and what goes first
 * @name: name used by replica_policy= and /sys/kernel/mm/replica/policy
 * @kinds: the REPLICA_KIND_* of the replicas this policy makes; when it
 *	becomes current, replicas of no such kind are dropped.  Include
 *	REPLICA_KIND_ADVISED to honour MADV_REPLICATE.
 * @want_fault: required; called under rcu_read_lock() for a read fault by
 *	a task on node @req->nid on a page cached on another node.  Returns
 *	true if that task should map a replica on its own node.  The core has
 *	already checked that the file can be replicated at all (a regular
 *	file on a block-device filesystem that nobody can write) and has
 *	settled the ranges opted in or out with madvise().
 * @want_read: optional; called under rcu_read_lock() once per read(2),
 *	splice(2) or sendfile(2) of a file by a task on node @req->nid
 *	(@req->vma is NULL).  Returns true if pages cached on other nodes
 *	should be read from replicas on that node; a replica is made once a
 *	page was read remotely read_threshold times.  NULL means never.
 * @reclaim_tier: optional; called under rcu_read_lock() when a replica is
 *	made, for the same request.  Returns the tier the replica joins;
 *	reclaim empties REPLICA_TIER_FIRST before it touches
 *	REPLICA_TIER_LAST.  All replicas are REPLICA_TIER_FIRST when it is
 *	NULL.
 * @list: entry in the registry, owned by the core
 *
 * Policies are built in and never unregistered, so a reader that found the
 * current policy under rcu_read_lock() may call it until rcu_read_unlock().
 */
struct replica_policy {
	const char *name;
	unsigned int kinds;
	bool (*want_fault)(const struct replica_request *req);
	bool (*want_read)(const struct replica_request *req);
	enum replica_tier (*reclaim_tier)(const struct replica_request *req);
	struct list_head list;
};

#ifdef CONFIG_MM_REPLICA

/* The policy registry: mm/replica/policy.c */

DECLARE_STATIC_KEY_FALSE(replica_active);

int replica_policy_register(struct replica_policy *policy);

/* The replica store: mm/replica/store.c */

/**
 * struct replica_info - what a replica remembers, at folio->private
 * @original: the page-cache folio it copies, referenced
 * @mapping: the file's address_space, whose rmap finds the replica's
 *	mappings: folio->mapping holds its movable_operations
 * @use: the REPLICA_KIND_* of the requests it served, REPLICA_USED
 *	while it has been used since reclaim last looked, and REPLICA_REUSED
 *	once it served a request after the one it was made for; atomic,
 *	since reclaim clears REPLICA_USED under no lock that the users hold
 * @maker: the mm of the task whose fault made it, NULL if read(2) did;
 *	compared, never dereferenced: the mm may be gone
 * @tier: its enum replica_tier
 * @replica: the replica, for @rcu
 * @rcu: frees a replica that copies a folio no longer in the page cache
 *	after a grace period (folio->lru, where rcu_head would go, may be on
 *	a migration list)
 */
struct replica_info {
	struct folio *original;
	struct address_space *mapping;
	atomic_long_t use;
	const struct mm_struct *maker;
	u8 tier;
	struct folio *replica;
	struct rcu_head rcu;
};

static inline struct replica_info *replica_info(struct folio *replica)
{
	return replica->private;
}

/**
 * replica_count_events - count what happened to a replica
 * @replica: the replica, charged to its memory cgroup
 * @item: the REPLICA_* event
 * @nr: how many
 *
 * The events of a replica count in /proc/vmstat and in memory.stat of the
 * cgroup that pays for it.
 */
static inline void replica_count_events(struct folio *replica,
					enum vm_event_item item, long nr)
{
	count_vm_events(item, nr);
	count_memcg_folio_events(replica, item, nr);
}

/**
 * replica_mapping_init - initialise the replication state of a mapping
 * @mapping: the address_space of an inode being set up
 */
static inline void replica_mapping_init(struct address_space *mapping)
{
	mapping->i_replicas = NULL;
	atomic_set(&mapping->i_replica_block, 0);
}

void replica_mapping_release(struct address_space *mapping);
void replica_file_reused(struct address_space *mapping);

/* What writers call: mm/replica/collapse.c */

/*
 * get_write_access() calls __replica_collapse_for_write(), declared in
 * <linux/fs.h>: every writer, with or without an open file, removes the
 * replicas of the file.
 */

void __replica_collapse_range(struct address_space *mapping, pgoff_t first,
			      pgoff_t last, enum replica_drop_reason why);

/**
 * replica_block_begin - stop replication of a mapping while it changes
 * @mapping: the mapping about to be truncated or invalidated
 * @first: first index that changes
 * @last: last index that changes, inclusive
 * @why: REPLICA_DROP_TRUNCATE or REPLICA_DROP_INVALIDATE
 *
 * Removes the replicas of [@first, @last] and keeps new replicas of the
 * whole mapping from being made until replica_block_end().  Not behind the
 * static key: a truncation that began while replication was off must still
 * hold off the replicas of a policy switched on meanwhile.
 */
static inline void replica_block_begin(struct address_space *mapping,
				       pgoff_t first, pgoff_t last,
				       enum replica_drop_reason why)
{
	atomic_inc(&mapping->i_replica_block);
	/* Pairs with the full barrier of a replica maker after publishing. */
	smp_mb__after_atomic();
	if (READ_ONCE(mapping->i_replicas))
		__replica_collapse_range(mapping, first, last, why);
}

/**
 * replica_block_end - allow replication again after replica_block_begin()
 * @mapping: the mapping
 */
static inline void replica_block_end(struct address_space *mapping)
{
	atomic_dec(&mapping->i_replica_block);
}

void __replica_drop_unmapped(struct address_space *mapping, pgoff_t first,
			     pgoff_t last);

/**
 * replica_drop_unmapped - free the unmapped replicas of a range
 * @mapping: the mapping being invalidated
 * @first: first index
 * @last: last index, inclusive
 *
 * A replica holds a reference on its original; dropping the replicas that
 * nobody maps lets invalidate_mapping_pages() evict the originals.
 */
static inline void replica_drop_unmapped(struct address_space *mapping,
					 pgoff_t first, pgoff_t last)
{
	if (READ_ONCE(mapping->i_replicas))
		__replica_drop_unmapped(mapping, first, last);
}

/* madvise(): mm/replica/advice.c */

int replica_madvise(struct vm_area_struct *vma, unsigned long *vm_flags,
		    int advice);
void replica_madvise_done(struct vm_area_struct *vma, unsigned long start,
			  unsigned long end, int advice);

/* The fault path: mm/replica/fault.c */

void __replica_fault(struct vm_fault *vmf);

/**
 * replica_fault - map a local replica instead of a remote original
 * @vmf: a read fault whose vmf->page is a locked, referenced page-cache page
 *
 * When the current policy wants it, replaces vmf->page with a locked and
 * referenced replica on the faulting task's node, releasing the original.
 * Leaves vmf->page alone otherwise.
 */
static inline void replica_fault(struct vm_fault *vmf)
{
	if (static_branch_unlikely(&replica_active))
		__replica_fault(vmf);
}

/**
 * replica_note_use - record that a replica served a request
 * @replica: a replica in the store
 * @use: REPLICA_USED and the REPLICA_KIND_* of the request
 *
 * Context: @replica stays in the store: its lock or its original's held.
 */
static inline void replica_note_use(struct folio *replica, unsigned long use)
{
	struct replica_info *info = replica_info(replica);
	unsigned long new;

	/* A use that earns a second chance is a use after the first. */
	if (use & REPLICA_USED)
		use |= REPLICA_REUSED;
	/*
	 * One test covers the kinds and reclaim's second chance.  Every CPU
	 * of the node that maps the page reads the word: write it only when
	 * there is something new to say.
	 */
	new = ~atomic_long_read(&info->use) & use;
	if (unlikely(new)) {
		atomic_long_or(use, &info->use);
		if (new & REPLICA_REUSED)
			replica_file_reused(info->mapping);
	}
}

/**
 * replica_note_mm - note that a process maps replicas
 * @mm: the process's mm, about to map a replica
 *
 * A thread that moves node unmaps the replicas of its process only if
 * the process has mapped any since the last time (mm/replica/follow.c).
 */
static inline void replica_note_mm(struct mm_struct *mm)
{
	if (!test_bit(MMF_REPLICA_MAPPED, &mm->flags))
		set_bit(MMF_REPLICA_MAPPED, &mm->flags);
}

DECLARE_TRACEPOINT(replica_map);
void replica_trace_map(struct folio *replica);

/**
 * replica_mapped - count a replica that is mapped again
 * @replica: a replica in the store, about to be mapped
 * @mm: the mm it is mapped into
 * @use: REPLICA_USED and the REPLICA_KIND_* of the mapping
 *
 * Context: the original's folio lock held.
 */
static inline void replica_mapped(struct folio *replica, struct mm_struct *mm,
				  unsigned long use)
{
	replica_note_use(replica, use);
	replica_note_mm(mm);
	replica_count_events(replica, REPLICA_MAP, 1);
	if (tracepoint_enabled(replica_map))
		replica_trace_map(replica);
}

bool __replica_leaves_pmd(struct vm_area_struct *vma, struct folio *folio);

/**
 * replica_leaves_pmd - whether a new PMD of page cache is left to the fault
 * @vma: the current task's mapping that MADV_COLLAPSE made @folio for
 * @folio: the page-cache THP, locked, or the replica of it that the range
 *	was mapped from
 *
 * A task whose faults map local replicas gets a remote THP that it has
 * just collapsed mapped the same way: its next fault maps the THP's local
 * replica with one PMD, so the PMD is left empty for it.
 *
 * Return: true if the caller must not map @folio's PMD now.
 */
static inline bool replica_leaves_pmd(struct vm_area_struct *vma,
				      struct folio *folio)
{
	return static_branch_unlikely(&replica_active) &&
	       __replica_leaves_pmd(vma, folio);
}

/**
 * struct replica_around - replication state of one fault-around pass
 * @nid: node whose replicas to map, or NUMA_NO_NODE to map originals
 * @use: what mapping a replica records: REPLICA_USED and the
 *	REPLICA_KIND_* of the faulting mapping
 * @mm: the faulting mm
 * @may_create: 1 if the node takes new replicas, so that a remote original
 *	without a replica is left to the fault path rather than mapped, 0 if
 *	not, -1 until a page of the pass needs to know
 * @settling: set with @may_create: the file changed too recently to be
 *	replicated, which counts in REPLICA_SETTLE, not REPLICA_ALLOC_FAIL
 * @leaf_slots: the slots of the leaf node of the store that held the last
 *	page looked up; fault-around goes up the file, so the next one is
 *	most often in the same node, which the pass reads without a walk
 * @leaf_first: the index of the leaf's first slot, or REPLICA_NO_LEAF
 * @store: the store of @nid's replicas, for a walk, or NULL while the
 *	file has none
 */
struct replica_around {
	int nid;
	int may_create;
	bool settling;
	unsigned long use;
	struct mm_struct *mm;
	void __rcu **leaf_slots;
	pgoff_t leaf_first;
	struct xarray *store;
};

/* A first index that puts every page index out of range: no leaf yet. */
#define REPLICA_NO_LEAF		(-(pgoff_t)XA_CHUNK_SIZE)

void __replica_fault_around_start(struct vm_fault *vmf,
				  struct replica_around *ra);

/**
 * replica_fault_around_start - decide how a fault-around pass replicates
 * @vmf: the fault
 * @ra: filled in for replica_fault_around_wanted()
 *
 * Context: rcu_read_lock() held, as in filemap_map_pages().
 */
static inline void replica_fault_around_start(struct vm_fault *vmf,
					      struct replica_around *ra)
{
	ra->nid = NUMA_NO_NODE;
	if (static_branch_unlikely(&replica_active))
		__replica_fault_around_start(vmf, ra);
}

/**
 * replica_fault_around_wanted - whether fault-around must ask for replicas
 * @ra: the state from replica_fault_around_start()
 *
 * While replication is off this is a jump patched out (CONFIG_JUMP_LABEL):
 * one no-op per page.
 *
 * Return: true if each small folio of the pass goes through
 * replica_fault_around_folio() before it is mapped.
 */
static inline bool replica_fault_around_wanted(const struct replica_around *ra)
{
	return static_branch_unlikely(&replica_active) &&
	       ra->nid != NUMA_NO_NODE;
}

/*
 * Every entry of a store that is not a replica is a small number: NULL, a
 * read count (a value entry; counts saturate at the largest read_threshold,
 * see mm/replica/store.c) or one of the xarray's internal entries, which
 * are below 4096 (xa_is_node() relies on that too).  A replica is a folio
 * pointer, above them all.
 */
#define REPLICA_STORE_SMALL	4096UL

/*
 * Whether what the store held is a replica of @original that may be
 * mapped: a pointer, a copy of @original, and not poisoned (a poisoned
 * page is never mapped, as for the page cache).  Only a replica of the
 * page-cache folio we hold locked is sure to stay in the store, but the
 * info of any other one is still there to look at: a replica that copies
 * a folio no longer in the page cache is freed after an RCU grace period.
 */
static inline bool replica_mappable(void *entry, struct folio *original)
{
	return (unsigned long)entry >= REPLICA_STORE_SMALL &&
	       replica_info(entry)->original == original &&
	       !folio_test_hwpoison(entry);
}

void *replica_around_walk(struct replica_around *ra, pgoff_t index);
struct folio *__replica_fault_around_folio(struct folio *original,
					   struct replica_around *ra,
					   void *entry);

/**
 * replica_fault_around_folio - the folio fault-around should map
 * @original: a locked page-cache folio that fault-around is about to map
 *	at an empty page table entry
 * @ra: the state from replica_fault_around_start(), for which
 *	replica_fault_around_wanted() is true
 *
 * Fault-around maps a run of neighbouring pages, so this is the path a
 * replica is mapped by most often, and it is inline.  It takes neither the
 * replica's lock nor a reference on it: whoever takes a replica out of the
 * store holds its original's lock, so @original's lock keeps a replica of
 * it in the store, with the store's reference (see mm/replica/store.c).
 * The caller asks only for entries that are still empty: what is mapped
 * already stays, and is no new use of a replica.
 *
 * Context: rcu_read_lock() and the page table lock held.
 * Return: @original, a local replica to map instead (its reference comes
 * with the mapping; until @original is unlocked it is the store's), or
 * NULL to map nothing and leave the page to the fault path.
 */
static inline struct folio *
replica_fault_around_folio(struct folio *original, struct replica_around *ra)
{
	unsigned long slot;
	void *entry;

	if (folio_nid(original) == ra->nid)
		return original;
	/*
	 * A leaf that has left the tree since holds no entry, or a retry
	 * entry: the pass reads it under rcu_read_lock().
	 */
	slot = original->index - ra->leaf_first;
	if (likely(slot < XA_CHUNK_SIZE))
		entry = rcu_dereference(ra->leaf_slots[slot]);
	else
		entry = replica_around_walk(ra, original->index);
	if (likely(replica_mappable(entry, original))) {
		replica_mapped(entry, ra->mm, ra->use);
		return entry;
	}
	return __replica_fault_around_folio(original, ra, entry);
}

struct folio *replica_fault_around_large(struct folio *original,
					 struct replica_around *ra);
vm_fault_t replica_fault_around_pmd(struct vm_fault *vmf,
				    struct folio *original,
				    struct replica_around *ra);

/* What the kernel's movers call: mm/replica/movers.c */

/*
 * Whether @folio is a page-cache folio of a file that has had replicas, so
 * that some may hold it now.  Replicas exist only while a policy other
 * than "none" is current.  The caller holds the folio's lock, or
 * rcu_read_lock(), under which a mapping that a truncation took the folio
 * from meanwhile is still there to read: inodes are freed after a grace
 * period.
 */
static inline bool replica_may_have_copies(const struct folio *folio)
{
	const struct address_space *mapping = READ_ONCE(folio->mapping);

	if (!static_branch_unlikely(&replica_active) || !mapping ||
	    ((unsigned long)mapping & PAGE_MAPPING_FLAGS) ||
	    folio_test_replica(folio))
		return false;
	return READ_ONCE(mapping->i_replicas);
}

bool __replica_free_copies(struct folio *original, bool may_wait,
			   bool keep_mlocked, enum replica_drop_reason why);

/**
 * replica_free_copies - drop the replicas that hold a page-cache folio
 * @folio: a locked folio that migration or reclaim is about to move or free
 * @may_wait: sleep for the lock of a busy replica
 * @keep_mlocked: keep the replicas that mlocked mappings map (for reclaim
 *	and compaction, which leave mlocked page cache alone)
 * @why: what is done to @folio: REPLICA_DROP_MIGRATE, _RECLAIM, _SPLIT,
 *	_THP_COLLAPSE, _MEMORY_FAILURE or _SOFT_OFFLINE
 *
 * A replica holds a reference on its original, which keeps the original
 * from migrating and from leaving the page cache.  Replicas are copies
 * that the next fault makes again: unmap and drop them.
 *
 * Return: true if no replica holds @folio any more.
 */
static inline bool replica_free_copies(struct folio *folio, bool may_wait,
				       bool keep_mlocked,
				       enum replica_drop_reason why)
{
	if (!replica_may_have_copies(folio))
		return true;
	return __replica_free_copies(folio, may_wait, keep_mlocked, why);
}

/**
 * replica_free_copies_to_split - drop every replica of a folio that must split
 * @folio: a large page-cache folio, referenced but not locked, that memory
 *	failure or soft offlining is about to split
 * @why: REPLICA_DROP_MEMORY_FAILURE or REPLICA_DROP_SOFT_OFFLINE
 *
 * The replicas that mlocked mappings map keep a folio whole against other
 * splits; a poisoned page must be split off all the same.
 */
static inline void replica_free_copies_to_split(struct folio *folio,
						enum replica_drop_reason why)
{
	if (!static_branch_unlikely(&replica_active))
		return;
	folio_lock(folio);
	replica_free_copies(folio, true, false, why);
	folio_unlock(folio);
}

int __replica_referenced(struct folio *original, int is_locked,
			 struct mem_cgroup *memcg, unsigned long *vm_flags);

/**
 * replica_referenced - count the references made through a folio's replicas
 * @folio: a folio whose references folio_referenced() counts
 * @is_locked: the caller holds @folio's lock
 * @memcg: count only references from tasks in this memory cgroup, if set
 * @vm_flags: the vm_flags of the referencing mappings are added here
 *
 * Tasks on other nodes use the page through its replicas: reclaim should
 * see those uses as uses of the page, as it would without replication.
 *
 * Return: the number of referencing mappings, or -1 if a lock was busy.
 */
static inline int replica_referenced(struct folio *folio, int is_locked,
				     struct mem_cgroup *memcg,
				     unsigned long *vm_flags)
{
	if (!static_branch_unlikely(&replica_active))
		return 0;
	return __replica_referenced(folio, is_locked, memcg, vm_flags);
}

bool replica_evict(struct folio *replica, bool may_wait,
		   enum replica_drop_reason why);
enum mf_result replica_memory_failure(struct folio *replica);

/**
 * replica_mapped_original - the page-cache folio behind a mapped folio
 * @folio: a folio that a present page table entry maps, whose page table
 *	lock the caller holds
 *
 * Those who move the pages of a range (move_pages(2), mbind(2)) move the
 * page cache: a replica stands for its original.  A replica mapped by an
 * entry stays in the store with its original until the entry is gone.
 *
 * Return: the original if @folio is a replica, else @folio.
 */
static inline struct folio *replica_mapped_original(struct folio *folio)
{
	return folio_test_replica(folio) ? replica_info(folio)->original :
					   folio;
}

struct folio *__replica_mapped_copy(struct folio *original,
				    struct folio *replica);

/**
 * replica_mapped_copy - the folio a range of a page-cache folio is mapped from
 * @folio: a page-cache folio, locked
 * @page: what a present page table entry in its range maps, under the page
 *	table lock
 *
 * khugepaged folds the entries that map the pages of a THP into one PMD;
 * a task on another node may map them from the THP's replica, which it
 * folds the same way.  @folio's lock keeps that replica in the store.
 *
 * Return: the replica @page is a page of, if it is a replica of @folio in
 * the store; else @folio.
 */
static inline struct folio *replica_mapped_copy(struct folio *folio,
						struct page *page)
{
	if (!static_branch_unlikely(&replica_active) || !page ||
	    !folio_test_replica(page_folio(page)))
		return folio;
	return __replica_mapped_copy(folio, page_folio(page));
}

struct page *__replica_page_original(struct page *page);

/**
 * replica_page_original - the page-cache page a user page stands for
 * @page: a page get_user_pages_fast() returned, referenced
 *
 * Futexes of shared file mappings are keyed by the file and the page's
 * index: a replica mapped there stands for its page-cache page.  Only a
 * replica, or a page that was one, is both mapped in user space and a
 * movable page.
 *
 * Return: @page, or in its place the page of the original at the same
 * index, referenced; NULL, with @page put, if @page is a replica released
 * meanwhile: look the address up again.
 */
static inline struct page *replica_page_original(struct page *page)
{
	if (likely(!__folio_test_movable(page_folio(page))))
		return page;
	return __replica_page_original(page);
}

/**
 * replica_rmap_mapping - the mapping whose rmap finds a file folio's mappings
 * @folio: a locked folio that is not anonymous
 *
 * A replica is mapped at its index in the file's mappings, but its
 * ->mapping holds its movable_operations: its info names the file.
 *
 * Return: the file's address_space, or NULL if @folio has none (it was
 * truncated, or is a movable page of another kind).
 */
static inline struct address_space *replica_rmap_mapping(struct folio *folio)
{
	return folio_test_replica(folio) ? replica_info(folio)->mapping :
					   folio_mapping(folio);
}

bool __replica_mapped_shared(struct folio *replica);

/**
 * replica_move_pages_allowed - whether move_pages(2) may move a mapped folio
 * @folio: a folio that a present page table entry maps, whose page table
 *	lock the caller holds
 * @migrate_all: MPOL_MF_MOVE_ALL was given
 *
 * Without MPOL_MF_MOVE_ALL, a task moves only pages no other task maps.
 * For a replica that is the page cache it stands for, mapped directly or
 * through any of its replicas: the original's map count alone misses the
 * tasks that map its replicas.
 *
 * Return: false if @folio is a replica of a page that other tasks map too.
 */
static inline bool replica_move_pages_allowed(struct folio *folio,
					      bool migrate_all)
{
	return migrate_all || !folio_test_replica(folio) ||
	       !__replica_mapped_shared(folio);
}

/* Tasks that move between nodes: mm/replica/follow.c */

/**
 * replica_task_migrate - note a task's move to another CPU
 * @p: the task
 * @new_cpu: the CPU it moves to
 *
 * A task that changes node remaps its replicated pages on its way back to
 * user space (__replica_follow_task(), from resume_user_mode_work()), so
 * that it uses the copies of its new node.
 *
 * Context: set_task_cpu(), with @p's runqueue locked.
 */
static inline void replica_task_migrate(struct task_struct *p, int new_cpu)
{
	if (static_branch_unlikely(&replica_active) && p->mm &&
	    cpu_to_node(task_cpu(p)) != cpu_to_node(new_cpu)) {
		task_set_replica_follow(p);
		set_tsk_thread_flag(p, TIF_NOTIFY_RESUME);
	}
}

/* The read path: mm/replica/read.c */

/**
 * struct replica_read - replication state of one read(2) or splice
 * @nid: node whose replicas to read, or NUMA_NO_NODE to read originals
 * @may_create: the node takes new replicas
 * @settling: the file changed too recently to be replicated
 * @tier: tier of replicas made by this read
 * @policy: the policy that wants this read replicated
 * @file: the file read
 */
struct replica_read {
	int nid;
	bool may_create;
	bool settling;
	enum replica_tier tier;
	const struct replica_policy *policy;
	struct file *file;
};

void __replica_read_start(struct file *file, struct replica_read *rr);

/**
 * replica_read_start - decide whether a read(2) or splice reads replicas
 * @file: the file read
 * @rr: filled in for replica_read_folio()
 */
static inline void replica_read_start(struct file *file,
				      struct replica_read *rr)
{
	rr->nid = NUMA_NO_NODE;
	if (static_branch_unlikely(&replica_active))
		__replica_read_start(file, rr);
}

struct folio *__replica_read_folio(struct folio *original, loff_t pos,
				   size_t bytes, const struct replica_read *rr);

/**
 * replica_read_folio - the local replica to copy a page-cache folio from
 * @original: an uptodate page-cache folio the caller holds a reference on
 * @pos: the file position the caller reads from, in @original
 * @bytes: how many bytes the caller reads from @original at @pos
 * @rr: the state from replica_read_start()
 *
 * Counts a read of a remote page without a local replica, and makes the
 * replica when the count reaches read_threshold.  A read served from a
 * replica counts the pages it reads in replica_read.
 *
 * Return: a referenced replica to read instead of @original (put it when
 * done; it is no page-cache folio), or NULL to read @original.
 */
static inline struct folio *replica_read_folio(struct folio *original,
					       loff_t pos, size_t bytes,
					       const struct replica_read *rr)
{
	if (rr->nid == NUMA_NO_NODE)
		return NULL;
	return __replica_read_folio(original, pos, bytes, rr);
}

#else /* !CONFIG_MM_REPLICA */

/* The replica store: mm/replica/store.c */

static inline void replica_mapping_init(struct address_space *mapping) { }
static inline void replica_mapping_release(struct address_space *mapping) { }

/* What writers call: mm/replica/collapse.c */

static inline void replica_block_begin(struct address_space *mapping,
				       pgoff_t first, pgoff_t last,
				       enum replica_drop_reason why) { }
static inline void replica_block_end(struct address_space *mapping) { }
static inline void replica_drop_unmapped(struct address_space *mapping,
					 pgoff_t first, pgoff_t last) { }

/* madvise(): mm/replica/advice.c */

static inline int replica_madvise(struct vm_area_struct *vma,
				  unsigned long *vm_flags, int advice)
{
	return -EINVAL;
}

static inline void replica_madvise_done(struct vm_area_struct *vma,
					unsigned long start, unsigned long end,
					int advice) { }

/* The fault path: mm/replica/fault.c */

static inline void replica_fault(struct vm_fault *vmf) { }

static inline bool replica_leaves_pmd(struct vm_area_struct *vma,
				      struct folio *folio)
{
	return false;
}

struct replica_around { };

static inline void replica_fault_around_start(struct vm_fault *vmf,
					      struct replica_around *ra) { }
static inline bool replica_fault_around_wanted(const struct replica_around *ra)
{
	return false;
}

static inline struct folio *
replica_fault_around_folio(struct folio *original, struct replica_around *ra)
{
	return original;
}

static inline struct folio *
replica_fault_around_large(struct folio *original, struct replica_around *ra)
{
	return original;
}

static inline vm_fault_t replica_fault_around_pmd(struct vm_fault *vmf,
						  struct folio *original,
						  struct replica_around *ra)
{
	return VM_FAULT_FALLBACK;
}

/* What the kernel's movers call: mm/replica/movers.c */

static inline bool replica_free_copies(struct folio *folio, bool may_wait,
				       bool keep_mlocked,
				       enum replica_drop_reason why)
{
	return true;
}

static inline void replica_free_copies_to_split(struct folio *folio,
						enum replica_drop_reason why) { }

static inline int replica_referenced(struct folio *folio, int is_locked,
				     struct mem_cgroup *memcg,
				     unsigned long *vm_flags)
{
	return 0;
}

static inline bool replica_evict(struct folio *replica, bool may_wait,
				 enum replica_drop_reason why)
{
	return false;
}

static inline enum mf_result replica_memory_failure(struct folio *replica)
{
	return MF_IGNORED;
}

static inline struct address_space *replica_rmap_mapping(struct folio *folio)
{
	return folio_mapping(folio);
}

static inline struct folio *replica_mapped_copy(struct folio *folio,
						struct page *page)
{
	return folio;
}

static inline struct page *replica_page_original(struct page *page)
{
	return page;
}

static inline struct folio *replica_mapped_original(struct folio *folio)
{
	return folio;
}

static inline bool replica_move_pages_allowed(struct folio *folio,
					      bool migrate_all)
{
	return true;
}

/* Tasks that move between nodes: mm/replica/follow.c */

static inline void replica_task_migrate(struct task_struct *p, int new_cpu) { }

/* The read path: mm/replica/read.c */

struct replica_read { };

static inline void replica_read_start(struct file *file,
				      struct replica_read *rr) { }
static inline struct folio *replica_read_folio(struct folio *original,
					       loff_t pos, size_t bytes,
					       const struct replica_read *rr)
{
	return NULL;
}

#endif /* CONFIG_MM_REPLICA */
#endif /* _LINUX_REPLICA_H */
