/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Internals shared by the parts of NUMA page-cache replication.
 */
#ifndef _MM_REPLICA_INTERNAL_H
#define _MM_REPLICA_INTERNAL_H

#include <linux/atomic.h>
#include <linux/fs.h>
#include <linux/list_lru.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/replica.h>
#include <linux/shmem_fs.h>
#include <linux/time64.h>
#include <linux/timekeeping.h>
#include <linux/xarray.h>
#include <uapi/linux/magic.h>

/* The policy registry: mm/replica/policy.c */

#define REPLICA_POLICY_NAME_MAX	32
/* Read counts saturate here: see REPLICA_STORE_SMALL. */
#define REPLICA_READ_THRESHOLD_MAX	1000
/* Ten minutes: a file unchanged for longer is settled whatever its past. */
#define REPLICA_SETTLE_MS_MAX		600000

extern const struct replica_policy __rcu *replica_current;
extern struct replica_policy replica_policy_none;
extern unsigned int replica_max_percent;
extern unsigned int replica_read_threshold;
extern unsigned int replica_settle_ms;

extern struct mutex replica_policy_mutex;
extern struct list_head replica_policies;

struct replica_policy *replica_policy_find(const char *name);

/* The replica store: mm/replica/store.c */

/*
 * A file whose replicas were collapsed unused waits settle_ms doubled
 * this many times at most: 64 times the default is about two minutes.
 */
#define REPLICA_SETTLE_SHIFT_MAX	6

/**
 * struct replica_tree - the replicas of one mapping
 * @rcu: frees the tree after the last lockless lookup
 * @settle_shift: how many times settle_ms doubles for this file: one more
 *	after each collapse that dropped replicas nobody used again, none
 *	once a replica of the file is used again
 * @nodes: per node, the replicas on that node by page index
 *
 * Allocated on the first replica of a mapping, freed with its inode.
 */
struct replica_tree {
	struct rcu_head rcu;
	unsigned int settle_shift;
	struct xarray nodes[];
};

extern struct kmem_cache *replica_info_cache;
extern const struct movable_operations replica_movable_ops;
extern atomic_long_t replica_count;
/* Replicas migration has isolated: they are on no shrinker list then. */
extern atomic_long_t replica_isolated;

/*
 * Files whose page cache only changes through this kernel's writers: not
 * network filesystems, and not fuseblk either, whose server may store into
 * the page cache (FUSE_NOTIFY_STORE).
 */
static inline bool replica_mapping_ok(struct address_space *mapping)
{
	struct inode *inode = mapping->host;
	struct super_block *sb = inode->i_sb;

	return S_ISREG(inode->i_mode) && !shmem_mapping(mapping) &&
	       !IS_DAX(inode) && !IS_SWAPFILE(inode) &&
	       (sb->s_type->fs_flags & FS_REQUIRES_DEV) &&
	       sb->s_magic != FUSE_SUPER_MAGIC;
}

/*
 * Originals a replica may copy, of @mapping: uptodate folios whose bytes
 * nothing but a writer changes, and that hold no poisoned page, which
 * memory failure is about to split off; a large one gets a replica of its
 * order.  Writeback zeroes what a shared mapping wrote past EOF in the
 * folio that ends the file, after its writer is gone: while that folio is
 * dirty or under writeback, it is not copied.
 */
static inline bool replica_original_ok(struct folio *original,
				       struct address_space *mapping)
{
	if (!folio_test_uptodate(original) ||
	    folio_contain_hwpoisoned_page(original))
		return false;
	if (!folio_test_dirty(original) && !folio_test_writeback(original))
		return true;
	return folio_pos(original) + folio_size(original) <=
	       i_size_read(mapping->host);
}

/* Whether anybody may change the file's page cache, now or about to. */
static inline bool replica_writers(struct address_space *mapping)
{
	return inode_is_open_for_write(mapping->host) ||
	       mapping_writably_mapped(mapping) ||
	       atomic_read(&mapping->i_replica_block);
}

/*
 * The thrash guard: whether a replica of the file of @mapping may be made.
 * A file changed a moment ago is likely to change again: a build writes an
 * object and reads it back, rewrites a binary and runs it.  Replicas made
 * of it then would be collapsed before anyone used them twice (Piggin's
 * 2007 patch saw 95-98% of its replicas zapped).  So none is made until
 * the file's ctime, which every write, truncation, hole punch and rename
 * moves, is settle_ms old, doubled for a file whose replicas went unused
 * before.  ctime comes from the coarse clock and may lead ours by a tick;
 * one further ahead than the wait itself is from before the clock was set
 * back, and settled.
 */
static inline bool replica_file_settled(struct address_space *mapping)
{
	struct replica_tree *tree = READ_ONCE(mapping->i_replicas);
	u64 wait_ns = READ_ONCE(replica_settle_ms);
	struct timespec64 now, changed;
	s64 age_ns;

	if (!wait_ns)
		return true;
	if (tree)
		wait_ns <<= READ_ONCE(tree->settle_shift);
	wait_ns *= NSEC_PER_MSEC;
	changed = inode_get_ctime(mapping->host);
	ktime_get_coarse_real_ts64(&now);
	age_ns = timespec64_to_ns(&now) - timespec64_to_ns(&changed);
	return age_ns >= (s64)wait_ns || age_ns <= -(s64)wait_ns;
}

/* The reclaim tier @policy puts a replica made for @req in. */
static inline enum replica_tier
replica_policy_tier(const struct replica_policy *policy,
		    const struct replica_request *req)
{
	return policy->reclaim_tier ? policy->reclaim_tier(req) :
				      REPLICA_TIER_FIRST;
}

static inline bool replica_in_store(struct replica_tree *tree,
				    struct folio *replica, int nid,
				    pgoff_t index)
{
	return xa_load(&tree->nodes[nid], index) == replica;
}

/*
 * A replica in the store that copies @original, the current page cache.  A
 * split original loses its replicas, so the orders match; the check costs
 * nothing.
 */
static inline bool replica_current_copy(struct replica_tree *tree,
					struct folio *replica, int nid,
					struct folio *original)
{
	return replica_in_store(tree, replica, nid, original->index) &&
	       replica_info(replica)->original == original &&
	       folio_nr_pages(replica) == folio_nr_pages(original);
}

/*
 * Forget the read count @entry that the store of @nid holds at @index,
 * unless it changed meanwhile: counts go with the page cache they count.
 */
static inline void replica_forget_reads(struct replica_tree *tree, int nid,
					pgoff_t index, void *entry)
{
	xa_cmpxchg(&tree->nodes[nid], index, entry, NULL, 0);
}

void replica_count_mm_events(struct mm_struct *mm, enum vm_event_item item,
			     long nr);
bool replica_has_room(int nid, struct mm_struct *mm, long nr,
		      unsigned int order);
struct replica_tree *replica_tree_get(struct address_space *mapping);
struct folio *replica_find_get(struct replica_tree *tree, int nid,
			       pgoff_t index);
void replica_unlink(struct replica_tree *tree, struct folio *replica,
		    bool on_lru);
bool replica_take(struct folio *replica, bool may_wait);
void replica_unmap(struct folio *replica);
void replica_release(struct folio *replica);
bool replica_dropped(struct folio *replica, enum replica_drop_reason why);
struct folio *replica_create(struct replica_tree *tree, struct folio *original,
			     const struct replica_request *req,
			     const struct replica_policy *policy,
			     enum replica_tier tier);
unsigned long replica_count_read(struct replica_tree *tree, int nid,
				 pgoff_t index);
unsigned long replica_collapse_range(struct address_space *mapping,
				     pgoff_t first, pgoff_t last,
				     enum replica_drop_reason why);

/* The fault path: mm/replica/fault.c */

bool replica_vma_replicated(struct vm_area_struct *vma);
bool replica_threads_on_node(int nid);

/* Race windows held open for tests: mm/replica/inject.c */

#ifdef CONFIG_MM_REPLICA_RACE_INJECT
void replica_inject_drop_delay(void);
#else
static inline void replica_inject_drop_delay(void) { }
#endif

/* Reclaim: mm/replica/reclaim.c */

extern struct list_lru replica_lru[REPLICA_NR_TIERS];

void replica_drop_kinds(unsigned int keep_kinds);
bool replica_mlocked(struct folio *replica);
int replica_reclaim_init(void);

#endif /* _MM_REPLICA_INTERNAL_H */
