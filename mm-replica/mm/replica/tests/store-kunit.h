/* SPDX-License-Identifier: GPL-2.0 */
/*
 * KUnit tests of the replica store: read counts, making a replica, the
 * checks that refuse one, collapsing a range, releasing a mapping,
 * migrating a replica as compaction and memory offlining do, soft
 * offlining a page of a large replica, reading around a poisoned page of
 * one, and the grace period of a replica whose original left the page
 * cache.
 *
 * Included at the end of store.c, so that they reach its static functions.
 * The mapping is a bare inode that is in no filesystem and no page cache;
 * the originals are folios that point at it, which is all the store looks
 * at.  No task maps them, so a collapse has nothing to unmap.
 */
#ifndef _MM_REPLICA_STORE_KUNIT_H
#define _MM_REPLICA_STORE_KUNIT_H

#include <kunit/test.h>
#include <linux/page-isolation.h>

#define STORE_TEST_PAGES	8

struct replica_store_test {
	struct inode inode;
	struct folio *originals[STORE_TEST_PAGES];
	int nid;		/* where the replicas go */
	long replicas_before;
};

static struct address_space *store_mapping(struct replica_store_test *st)
{
	return &st->inode.i_data;
}

static int replica_store_test_init(struct kunit *test)
{
	struct replica_store_test *st;
	struct folio *original;
	int i;

	st = kunit_kzalloc(test, sizeof(*st), GFP_KERNEL);
	if (!st)
		return -ENOMEM;
	test->priv = st;
	inode_init_once(&st->inode);
	st->inode.i_mode = S_IFREG | 0444;
	st->inode.i_mapping = store_mapping(st);
	store_mapping(st)->host = &st->inode;
	replica_mapping_init(store_mapping(st));

	for (i = 0; i < STORE_TEST_PAGES; i++) {
		original = folio_alloc(GFP_KERNEL, 0);
		if (!original)
			return -ENOMEM;
		memset(folio_address(original), 0xa0 + i, PAGE_SIZE);
		folio_mark_uptodate(original);
		original->mapping = store_mapping(st);
		original->index = i;
		st->originals[i] = original;
	}
	/* A replica belongs on another node than its original, if any. */
	st->nid = next_memory_node(folio_nid(st->originals[0]));
	if (st->nid >= MAX_NUMNODES)
		st->nid = first_memory_node;
	st->replicas_before = atomic_long_read(&replica_count);
	return 0;
}

static void replica_store_test_exit(struct kunit *test)
{
	struct replica_store_test *st = test->priv;
	int i;

	if (!st)
		return;
	replica_mapping_release(store_mapping(st));
	for (i = 0; i < STORE_TEST_PAGES; i++) {
		if (!st->originals[i])
			continue;
		st->originals[i]->mapping = NULL;
		folio_put(st->originals[i]);
	}
}

/* Make the replica of page @index as a read(2) from st->nid would. */
static struct folio *store_make(struct kunit *test, pgoff_t index)
{
	struct replica_store_test *st = test->priv;
	struct folio *original = st->originals[index], *replica;
	struct replica_request req = {
		.index = index,
		.nid = st->nid,
		.kinds = REPLICA_KIND_READ,
	};
	struct replica_tree *tree = replica_tree_get(store_mapping(st));

	KUNIT_ASSERT_NOT_NULL(test, tree);
	folio_lock(original);
	replica = replica_create(tree, original, &req,
				 rcu_access_pointer(replica_current),
				 REPLICA_TIER_FIRST);
	folio_unlock(original);
	if (replica)
		folio_unlock(replica);
	return replica;
}

/* The replica of @index on st->nid the store holds, unreferenced. */
static struct folio *store_lookup(struct kunit *test, pgoff_t index)
{
	struct replica_store_test *st = test->priv;
	struct replica_tree *tree = store_mapping(st)->i_replicas;
	struct folio *replica;

	if (!tree)
		return NULL;
	replica = replica_find_get(tree, st->nid, index);
	if (replica)
		folio_put(replica);
	return replica;
}

static void replica_store_tree_made_once(struct kunit *test)
{
	struct replica_store_test *st = test->priv;
	struct replica_tree *tree;

	KUNIT_EXPECT_NULL(test, store_mapping(st)->i_replicas);
	tree = replica_tree_get(store_mapping(st));
	KUNIT_ASSERT_NOT_NULL(test, tree);
	KUNIT_EXPECT_PTR_EQ(test, tree, store_mapping(st)->i_replicas);
	KUNIT_EXPECT_PTR_EQ(test, tree, replica_tree_get(store_mapping(st)));
}

static void replica_store_counts_remote_reads(struct kunit *test)
{
	struct replica_store_test *st = test->priv;
	struct replica_tree *tree = replica_tree_get(store_mapping(st));
	struct folio *replica;
	int i;

	KUNIT_ASSERT_NOT_NULL(test, tree);
	KUNIT_EXPECT_EQ(test, 1UL, replica_count_read(tree, st->nid, 3));
	KUNIT_EXPECT_EQ(test, 2UL, replica_count_read(tree, st->nid, 3));
	KUNIT_EXPECT_EQ(test, 1UL, replica_count_read(tree, st->nid, 4));
	/* A count is no replica. */
	KUNIT_EXPECT_NULL(test, store_lookup(test, 3));

	/* Counts saturate, below what fault-around takes for a replica. */
	for (i = 1; i < REPLICA_READ_THRESHOLD_MAX; i++)
		replica_count_read(tree, st->nid, 4);
	KUNIT_EXPECT_EQ(test, (unsigned long)REPLICA_READ_THRESHOLD_MAX,
			replica_count_read(tree, st->nid, 4));
	KUNIT_EXPECT_LT(test, (unsigned long)xa_load(&tree->nodes[st->nid], 4),
			REPLICA_STORE_SMALL);
	KUNIT_EXPECT_FALSE(test, replica_mappable(xa_load(&tree->nodes[st->nid],
							  4), NULL));

	/* The replica takes the count's place; reads are no longer counted. */
	replica = store_make(test, 3);
	KUNIT_ASSERT_NOT_NULL(test, replica);
	KUNIT_EXPECT_PTR_EQ(test, replica, store_lookup(test, 3));
	KUNIT_EXPECT_EQ(test, 0UL, replica_count_read(tree, st->nid, 3));
	folio_put(replica);
}

static void replica_store_copies_original(struct kunit *test)
{
	struct replica_store_test *st = test->priv;
	struct folio *original = st->originals[5], *replica;
	int refs = folio_ref_count(original);

	replica = store_make(test, 5);
	KUNIT_ASSERT_NOT_NULL(test, replica);
	KUNIT_EXPECT_EQ(test, st->nid, folio_nid(replica));
	KUNIT_EXPECT_EQ(test, 0, memcmp(folio_address(replica),
					folio_address(original), PAGE_SIZE));
	/* It does not pose as page cache; the rmap still finds the file. */
	KUNIT_EXPECT_NULL(test, folio_mapping(replica));
	KUNIT_EXPECT_TRUE(test, __folio_test_movable(replica));
	KUNIT_EXPECT_PTR_EQ(test, store_mapping(st),
			    replica_rmap_mapping(replica));
	KUNIT_EXPECT_EQ(test, 5UL, replica->index);
	KUNIT_EXPECT_FALSE(test, folio_test_locked(replica));
	/* The replica holds its original in the page cache. */
	KUNIT_EXPECT_EQ(test, refs + 1, folio_ref_count(original));
	KUNIT_EXPECT_EQ(test, st->replicas_before + 1,
			atomic_long_read(&replica_count));
	KUNIT_EXPECT_PTR_EQ(test, replica, store_lookup(test, 5));
	folio_lock(replica);
	KUNIT_EXPECT_TRUE(test, replica_current_copy(store_mapping(st)->i_replicas,
						     replica, st->nid, original));
	folio_unlock(replica);
	folio_put(replica);
}

static void replica_store_first_replica_stays(struct kunit *test)
{
	struct replica_store_test *st = test->priv;
	struct folio *first, *second;

	first = store_make(test, 0);
	KUNIT_ASSERT_NOT_NULL(test, first);
	second = store_make(test, 0);
	KUNIT_EXPECT_NULL(test, second);
	KUNIT_EXPECT_PTR_EQ(test, first, store_lookup(test, 0));
	KUNIT_EXPECT_EQ(test, st->replicas_before + 1,
			atomic_long_read(&replica_count));
	if (second)
		folio_put(second);
	folio_put(first);
}

static void replica_store_refuses_writers(struct kunit *test)
{
	struct replica_store_test *st = test->priv;
	struct address_space *mapping = store_mapping(st);
	int refs = folio_ref_count(st->originals[1]);

	/* Open for write. */
	atomic_inc(&st->inode.i_writecount);
	KUNIT_EXPECT_NULL(test, store_make(test, 1));
	atomic_dec(&st->inode.i_writecount);
	/* Mapped shared and writable. */
	atomic_inc(&mapping->i_mmap_writable);
	KUNIT_EXPECT_NULL(test, store_make(test, 1));
	atomic_dec(&mapping->i_mmap_writable);
	/* Being truncated or invalidated. */
	atomic_inc(&mapping->i_replica_block);
	KUNIT_EXPECT_NULL(test, store_make(test, 1));
	atomic_dec(&mapping->i_replica_block);

	KUNIT_EXPECT_NULL(test, store_lookup(test, 1));
	KUNIT_EXPECT_EQ(test, refs, folio_ref_count(st->originals[1]));
	KUNIT_EXPECT_EQ(test, st->replicas_before,
			atomic_long_read(&replica_count));
}

static void replica_store_collapses_range(struct kunit *test)
{
	struct replica_store_test *st = test->priv;
	struct address_space *mapping = store_mapping(st);
	struct replica_tree *tree;
	struct folio *replica;
	int refs[STORE_TEST_PAGES];
	pgoff_t i;

	for (i = 0; i < STORE_TEST_PAGES; i++) {
		refs[i] = folio_ref_count(st->originals[i]);
		/* Page 2's replica on the other node is a read count here. */
		if (i == 2)
			continue;
		replica = store_make(test, i);
		KUNIT_ASSERT_NOT_NULL(test, replica);
		folio_put(replica);
	}
	tree = mapping->i_replicas;
	KUNIT_EXPECT_EQ(test, 1UL, replica_count_read(tree, st->nid, 2));

	KUNIT_EXPECT_EQ(test, 3UL,
			replica_collapse_range(mapping, 2, 5,
					       REPLICA_DROP_TRUNCATE));
	for (i = 0; i < STORE_TEST_PAGES; i++) {
		bool kept = (i < 2 || i > 5);

		KUNIT_EXPECT_EQ(test, kept, !!store_lookup(test, i));
		KUNIT_EXPECT_EQ(test, refs[i] + kept,
				folio_ref_count(st->originals[i]));
	}
	/* The count went with the replicas. */
	KUNIT_EXPECT_NULL(test, xa_load(&tree->nodes[st->nid], 2));
	KUNIT_EXPECT_EQ(test, st->replicas_before + 4,
			atomic_long_read(&replica_count));
}

static void replica_store_release_frees_all(struct kunit *test)
{
	struct replica_store_test *st = test->priv;
	int refs = folio_ref_count(st->originals[7]);
	struct folio *replica;

	replica = store_make(test, 7);
	KUNIT_ASSERT_NOT_NULL(test, replica);
	folio_put(replica);
	replica_mapping_release(store_mapping(st));
	KUNIT_EXPECT_NULL(test, store_mapping(st)->i_replicas);
	KUNIT_EXPECT_EQ(test, refs, folio_ref_count(st->originals[7]));
	KUNIT_EXPECT_EQ(test, st->replicas_before,
			atomic_long_read(&replica_count));
}

/*
 * A large page-cache folio of order 2 at @index, filled with @fill, and
 * its replica on st->nid, unlocked and referenced, in *@replica.
 */
static struct folio *store_make_large(struct kunit *test, pgoff_t index,
				      int fill, unsigned int order,
				      struct folio **replica)
{
	struct replica_store_test *st = test->priv;
	struct replica_request req = {
		.index = index,
		.nid = st->nid,
		.kinds = REPLICA_KIND_READ,
	};
	struct replica_tree *tree;
	struct folio *original;

	original = folio_alloc(GFP_KERNEL, order);
	KUNIT_ASSERT_NOT_NULL(test, original);
	memset(folio_address(original), fill, folio_size(original));
	folio_mark_uptodate(original);
	original->mapping = store_mapping(st);
	original->index = index;
	tree = replica_tree_get(store_mapping(st));
	KUNIT_ASSERT_NOT_NULL(test, tree);
	folio_lock(original);
	*replica = replica_create(tree, original, &req,
				  rcu_access_pointer(replica_current),
				  REPLICA_TIER_FIRST);
	folio_unlock(original);
	KUNIT_ASSERT_NOT_NULL(test, *replica);
	folio_unlock(*replica);
	return original;
}

/*
 * A large original gets a replica of its order, found at every index it
 * covers, and a collapse of any of them removes it whole.
 */
static void replica_store_large_replica(struct kunit *test)
{
	struct replica_store_test *st = test->priv;
	struct address_space *mapping = store_mapping(st);
	struct folio *original, *replica;
	pgoff_t i;

	original = store_make_large(test, 16, 0xb0, 2, &replica);

	KUNIT_EXPECT_EQ(test, 2U, folio_order(replica));
	KUNIT_EXPECT_EQ(test, 0, memcmp(folio_address(replica),
					folio_address(original),
					folio_size(original)));
	for (i = 16; i < 20; i++)
		KUNIT_EXPECT_PTR_EQ(test, replica, store_lookup(test, i));
	KUNIT_EXPECT_NULL(test, store_lookup(test, 20));
	KUNIT_EXPECT_EQ(test, st->replicas_before + 4,
			atomic_long_read(&replica_count));

	KUNIT_EXPECT_EQ(test, 4UL,
			replica_collapse_range(mapping, 18, 18,
					       REPLICA_DROP_TRUNCATE));
	for (i = 16; i < 20; i++)
		KUNIT_EXPECT_NULL(test, store_lookup(test, i));
	KUNIT_EXPECT_EQ(test, st->replicas_before,
			atomic_long_read(&replica_count));
	folio_put(replica);
	original->mapping = NULL;
	folio_put(original);
}

/*
 * read(2) never copies a poisoned page of a large replica, which memory
 * failure marks before it drops the replica, and reads its other pages.
 */
static void replica_store_read_skips_poisoned_page(struct kunit *test)
{
	struct replica_store_test *st = test->priv;
	struct address_space *mapping = store_mapping(st);
	struct file file = { .f_mapping = mapping };
	struct replica_read rr = {
		.nid = st->nid,
		.file = &file,
	};
	struct folio *original, *replica, *read;
	struct page *poisoned;

	original = store_make_large(test, 48, 0xd0, 2, &replica);
	if (folio_nid(original) == st->nid) {
		replica_collapse_range(mapping, 48, 48, REPLICA_DROP_TRUNCATE);
		folio_put(replica);
		original->mapping = NULL;
		folio_put(original);
		kunit_skip(test, "one memory node: replicas live where the page cache does");
	}
	poisoned = folio_page(replica, 2);
	SetPageHWPoison(poisoned);

	read = __replica_read_folio(original, folio_pos(original) +
				    2 * PAGE_SIZE + 10, 100, &rr);
	KUNIT_EXPECT_NULL(test, read);
	if (read)
		folio_put(read);
	read = __replica_read_folio(original, folio_pos(original), 100, &rr);
	KUNIT_EXPECT_PTR_EQ(test, replica, read);
	if (read)
		folio_put(read);

	/* Never really poisoned: free it as it was. */
	ClearPageHWPoison(poisoned);
	replica_collapse_range(mapping, 48, 48, REPLICA_DROP_TRUNCATE);
	folio_put(replica);
	original->mapping = NULL;
	folio_put(original);
}

/*
 * Soft offlining a page of a large replica (MADV_SOFT_OFFLINE, or rasdaemon
 * on corrected errors) drops the replica, and the page, poisoned, stays out
 * of the buddy allocator: no free block covers it afterwards.
 */
#ifdef CONFIG_MEMORY_FAILURE
static void replica_store_soft_offline_large(struct kunit *test)
{
	struct folio *original, *replica;
	struct page *page;

	original = store_make_large(test, 32, 0xc0, 2, &replica);
	/* Only the store holds it now, as for a replica nobody maps. */
	page = folio_page(replica, 1);
	folio_put(replica);

	KUNIT_EXPECT_EQ(test, 0, soft_offline_page(page_to_pfn(page), 0));
	KUNIT_EXPECT_NULL(test, store_lookup(test, 33));
	/* Freed pages wait on per-CPU lists before they are buddies. */
	drain_all_pages(page_zone(page));
	KUNIT_EXPECT_TRUE(test, PageHWPoison(page));
	KUNIT_EXPECT_FALSE(test, is_free_buddy_page(page));
	KUNIT_EXPECT_EQ(test, 1, page_ref_count(page));
	/*
	 * Software poison: give the page back, or it stays out of every
	 * later allocation, a CMA area's whole range included.
	 */
	if (PageHWPoison(page))
		KUNIT_EXPECT_EQ(test, 0, unpoison_memory(page_to_pfn(page)));
	original->mapping = NULL;
	folio_put(original);
}
#else
static void replica_store_soft_offline_large(struct kunit *test)
{
	kunit_skip(test, "no CONFIG_MEMORY_FAILURE");
}
#endif

static struct folio *store_alloc_on(struct folio *src, unsigned long nid)
{
	return __folio_alloc_node(GFP_HIGHUSER_MOVABLE | __GFP_THISNODE,
				  folio_order(src), nid);
}

/*
 * Migrate the replica of @index to a new page on @nid as compaction (same
 * node) or memory offlining (another node) would: isolated, then moved.
 */
static void store_migrate(struct kunit *test, pgoff_t index, int nid)
{
	struct folio *replica = store_lookup(test, index);
	unsigned int succeeded = 0, nr;
	LIST_HEAD(list);

	KUNIT_ASSERT_NOT_NULL(test, replica);
	nr = folio_nr_pages(replica);
	KUNIT_ASSERT_TRUE(test, isolate_movable_page(&replica->page,
						     ISOLATE_UNEVICTABLE));
	list_add(&replica->lru, &list);
	KUNIT_EXPECT_EQ(test, 0, migrate_pages(&list, store_alloc_on, NULL, nid,
					       MIGRATE_SYNC, MR_COMPACTION,
					       &succeeded));
	/* Counted in base pages. */
	KUNIT_EXPECT_EQ(test, nr, succeeded);
}

/*
 * Compaction and alloc_contig_range() move a replica within its node: the
 * copy takes its place in the store, with its info and on the shrinker's
 * list, and the old page is no replica any more.
 */
static void replica_store_migrates_within_its_node(struct kunit *test)
{
	struct replica_store_test *st = test->priv;
	struct folio *replica, *moved;
	struct replica_info *info;
	long count;

	replica = store_make(test, 7);
	KUNIT_ASSERT_NOT_NULL(test, replica);
	info = replica_info(replica);
	count = atomic_long_read(&replica_count);

	store_migrate(test, 7, st->nid);
	moved = store_lookup(test, 7);
	KUNIT_ASSERT_NOT_NULL(test, moved);
	KUNIT_EXPECT_PTR_NE(test, replica, moved);
	KUNIT_EXPECT_EQ(test, st->nid, folio_nid(moved));
	KUNIT_EXPECT_EQ(test, 0, memcmp(folio_address(moved),
					folio_address(st->originals[7]),
					PAGE_SIZE));
	KUNIT_EXPECT_PTR_EQ(test, info, replica_info(moved));
	KUNIT_EXPECT_PTR_EQ(test, moved, info->replica);
	KUNIT_EXPECT_TRUE(test, folio_test_replica(moved));
	KUNIT_EXPECT_FALSE(test, list_empty(&moved->lru));
	KUNIT_EXPECT_EQ(test, count, atomic_long_read(&replica_count));
	KUNIT_EXPECT_FALSE(test, folio_test_replica(replica));
	KUNIT_EXPECT_NULL(test, replica->private);
	/* Ours is the last reference to the old page. */
	KUNIT_EXPECT_EQ(test, 1, folio_ref_count(replica));
	folio_put(replica);
}

/*
 * Memory offlining moves pages off their node: a replica is dropped, as a
 * copy that belongs on its node, and the next fault there makes it again.
 */
static void replica_store_migration_off_its_node_drops_it(struct kunit *test)
{
	struct replica_store_test *st = test->priv;
	struct folio *original = st->originals[4], *replica;
	int other = next_memory_node(st->nid), refs;

	if (other >= MAX_NUMNODES)
		other = first_memory_node;
	if (other == st->nid)
		kunit_skip(test, "needs 2 memory nodes");
	refs = folio_ref_count(original);
	replica = store_make(test, 4);
	KUNIT_ASSERT_NOT_NULL(test, replica);

	store_migrate(test, 4, other);
	KUNIT_EXPECT_NULL(test, store_lookup(test, 4));
	KUNIT_EXPECT_FALSE(test, folio_test_replica(replica));
	KUNIT_EXPECT_EQ(test, st->replicas_before,
			atomic_long_read(&replica_count));
	/* Its hold on the original went with it. */
	KUNIT_EXPECT_EQ(test, refs, folio_ref_count(original));
	KUNIT_EXPECT_EQ(test, 1, folio_ref_count(replica));
	folio_put(replica);
}

/* A large replica moves whole, found at every index it covers. */
static void replica_store_large_replica_migrates(struct kunit *test)
{
	struct replica_store_test *st = test->priv;
	struct folio *original, *replica, *moved;
	int i;

	original = store_make_large(test, 40, 0xe0, 2, &replica);
	store_migrate(test, 40, st->nid);
	moved = store_lookup(test, 40);
	KUNIT_ASSERT_NOT_NULL(test, moved);
	KUNIT_EXPECT_PTR_NE(test, replica, moved);
	KUNIT_EXPECT_EQ(test, folio_order(original), folio_order(moved));
	KUNIT_EXPECT_EQ(test, 0, memcmp(folio_address(moved),
					folio_address(original),
					folio_size(original)));
	for (i = 41; i < 44; i++)
		KUNIT_EXPECT_PTR_EQ(test, moved, store_lookup(test, i));
	folio_put(replica);
	KUNIT_EXPECT_EQ(test, 4UL,
			replica_collapse_range(store_mapping(st), 40, 43,
					       REPLICA_DROP_TRUNCATE));
	original->mapping = NULL;
	folio_put(original);
}

/*
 * Memory offlining and alloc_contig_range() isolate the pageblocks they
 * need; one that holds a large replica is movable, as one that holds a
 * large folio of page cache is.  The replica fills its pageblock, so that
 * it alone is asked about.
 */
#ifdef CONFIG_MEMORY_ISOLATION
static void
replica_store_pageblock_of_a_large_replica_isolates(struct kunit *test)
{
	struct replica_store_test *st = test->priv;
	struct folio *original, *replica;
	unsigned long start;
	int migratetype;

	original = store_make_large(test, 512, 0xf0, pageblock_order, &replica);
	start = folio_pfn(replica);
	KUNIT_ASSERT_EQ(test, (long)pageblock_nr_pages, folio_nr_pages(replica));
	/* As alloc_contig_range() asks: a CMA pageblock as CMA. */
	migratetype = get_pageblock_migratetype(&replica->page);
	KUNIT_EXPECT_EQ(test, 0,
			start_isolate_page_range(start,
						 start + pageblock_nr_pages,
						 migratetype, 0, GFP_KERNEL));
	undo_isolate_page_range(start, start + pageblock_nr_pages,
				migratetype);
	folio_put(replica);
	replica_collapse_range(store_mapping(st), 512, 1023,
			       REPLICA_DROP_TRUNCATE);
	original->mapping = NULL;
	folio_put(original);
}
#else
static void
replica_store_pageblock_of_a_large_replica_isolates(struct kunit *test)
{
	kunit_skip(test, "no CONFIG_MEMORY_ISOLATION");
}
#endif

/*
 * Fault-around reads what the store holds under the lock of the page-cache
 * folio, without a reference.  A replica of a folio that has left the page
 * cache (memory failure) can go meanwhile: what such a reader sees of it,
 * its info and its original, stays until a grace period has passed.
 */
static void replica_store_stale_copy_outlives_readers(struct kunit *test)
{
	struct replica_store_test *st = test->priv;
	struct folio *original = st->originals[6], *replica, *found, *seen;
	int refs = folio_ref_count(original), refs_seen;
	struct replica_info *info;

	replica = store_make(test, 6);
	KUNIT_ASSERT_NOT_NULL(test, replica);
	original->mapping = NULL;
	KUNIT_ASSERT_TRUE(test, folio_trylock(original));
	KUNIT_ASSERT_TRUE(test, folio_trylock(replica));

	/* What a reader that found it in the store sees, gone meanwhile. */
	rcu_read_lock();
	replica_unlink(store_mapping(st)->i_replicas, replica, true);
	folio_unlock(original);
	replica_release(replica);
	found = store_lookup(test, 6);
	info = replica_info(replica);
	seen = info ? info->original : NULL;
	refs_seen = folio_ref_count(original);
	rcu_read_unlock();

	KUNIT_EXPECT_NULL(test, found);
	KUNIT_EXPECT_PTR_EQ(test, original, seen);
	KUNIT_EXPECT_EQ(test, refs + 1, refs_seen);

	rcu_barrier();
	KUNIT_EXPECT_NULL(test, replica->private);
	KUNIT_EXPECT_EQ(test, refs, folio_ref_count(original));
	folio_put(replica);
}

static struct kunit_case replica_store_test_cases[] = {
	KUNIT_CASE(replica_store_tree_made_once),
	KUNIT_CASE(replica_store_counts_remote_reads),
	KUNIT_CASE(replica_store_copies_original),
	KUNIT_CASE(replica_store_first_replica_stays),
	KUNIT_CASE(replica_store_refuses_writers),
	KUNIT_CASE(replica_store_collapses_range),
	KUNIT_CASE(replica_store_release_frees_all),
	KUNIT_CASE(replica_store_large_replica),
	KUNIT_CASE(replica_store_migrates_within_its_node),
	KUNIT_CASE(replica_store_migration_off_its_node_drops_it),
	KUNIT_CASE(replica_store_large_replica_migrates),
	KUNIT_CASE(replica_store_pageblock_of_a_large_replica_isolates),
	KUNIT_CASE(replica_store_soft_offline_large),
	KUNIT_CASE(replica_store_read_skips_poisoned_page),
	KUNIT_CASE(replica_store_stale_copy_outlives_readers),
	{}
};

static struct kunit_suite replica_store_test_suite = {
	.name = "replica_store",
	.init = replica_store_test_init,
	.exit = replica_store_test_exit,
	.test_cases = replica_store_test_cases,
};

kunit_test_suites(&replica_store_test_suite);

#endif /* _MM_REPLICA_STORE_KUNIT_H */
