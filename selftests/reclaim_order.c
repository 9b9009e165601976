// SPDX-License-Identifier: GPL-2.0
/*
 * The order in which reclaim takes replicas, as each policy decides: under
 * "text" executable replicas are kept longer than the non-executable ones
 * of ranges opted in with MADV_REPLICATE, however old; under "private" and
 * "readonly" the least recently made go first.  The replicas are charged
 * to a memory cgroup, and the shrinker is asked for as many as one file
 * has, once, through /sys/kernel/debug/shrinker/ (CONFIG_SHRINKER_DEBUG).
 * Its objects are replicas: one a page on ext4, fewer on XFS, whose large
 * folios get large replicas; replica_reclaim counts pages.  A replica
 * mapped again since it was made gets a second chance, but the shrinker
 * never comes back with fewer than it was asked for while replicas are
 * left.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <glob.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../kselftest_harness.h"
#include "replica_util.h"

#define NPAGES	256
#define COMPACT_UNEVICTABLE	"/proc/sys/vm/compact_unevictable_allowed"

FIXTURE(order) {
	char prev_policy[32];
	char cgroup[128];
	char scan[256];
	char count[256];
	char path[2][64];
	int fd[2];
	char compact_unevictable[16];	/* to restore, if a test set it */
};

/* The scan file of the replica shrinker in debugfs, in @path. */
static int shrinker_scan_file(char *path, size_t len)
{
	glob_t g;
	int err = -1;

	if (glob("/sys/kernel/debug/shrinker/replica-*/scan", 0, NULL, &g))
		return -1;
	if (g.gl_pathc == 1) {
		snprintf(path, len, "%s", g.gl_pathv[0]);
		err = 0;
	}
	globfree(&g);
	return err;
}

/*
 * The shrinker's objects (replicas) of @cgroup on @node, from its count
 * file, where a line is "<cgroup inode> <count on node 0> ...", and
 * cgroups without any are left out.
 */
static long shrinker_count(const char *count, const char *cgroup, int node)
{
	unsigned long ino, nr;
	long found = 0;
	char line[256];
	struct stat st;
	FILE *f;

	if (stat(cgroup, &st))
		return -1;
	f = fopen(count, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char *p = line;
		int i;

		ino = strtoul(p, &p, 10);
		if (ino != (unsigned long)st.st_ino)
			continue;
		for (i = 0; i <= node; i++)
			nr = strtoul(p, &p, 10);
		found = nr;
	}
	fclose(f);
	return found;
}

/* Have the shrinker scan @nr replicas of @cgroup on @node, once. */
static int shrinker_scan(const char *scan, const char *cgroup, int node,
			 int nr)
{
	char cmd[64];
	struct stat st;
	ssize_t n;
	int fd;

	if (stat(cgroup, &st))
		return -1;
	snprintf(cmd, sizeof(cmd), "%lu %d %d", (unsigned long)st.st_ino,
		 node, nr);
	fd = open(scan, O_WRONLY);
	if (fd < 0)
		return -1;
	n = write(fd, cmd, strlen(cmd));
	close(fd);
	return n == (ssize_t)strlen(cmd) ? 0 : -1;
}

FIXTURE_SETUP(order)
{
	int i;

	if (nr_online_nodes() < 2)
		SKIP(return, "needs 2 NUMA nodes, the guest has %d",
		     nr_online_nodes());
	if (policy_get(self->prev_policy, sizeof(self->prev_policy)))
		SKIP(return, "kernel without CONFIG_MM_REPLICA");
	if (shrinker_scan_file(self->scan, sizeof(self->scan)))
		SKIP(return, "no shrinker debugfs (CONFIG_SHRINKER_DEBUG)");
	snprintf(self->count, sizeof(self->count), "%.*s/count",
		 (int)(strrchr(self->scan, '/') - self->scan), self->scan);
	/*
	 * This program's own replicas are made before it enters the cgroup,
	 * so that the cgroup's replicas are those of the two files alone:
	 * under "private", which replicates all of its file mappings, not
	 * only those of the policy booted with, or the holders would make
	 * the rest in the cgroup.
	 */
	ASSERT_EQ(0, policy_set("private"));
	ASSERT_EQ(0, warm_self_on_node(1));
	if (cgroup_create(self->cgroup, sizeof(self->cgroup)))
		SKIP(return, "no memory cgroup: %s", strerror(errno));
	ASSERT_EQ(0, cgroup_enter(self->cgroup));
	for (i = 0; i < 2; i++) {
		snprintf(self->path[i], sizeof(self->path[i]), "order%d.%d",
			 i, getpid());
		self->fd[i] = make_test_file(self->path[i], NPAGES, i + 1);
		ASSERT_LE(0, self->fd[i]);
		ASSERT_EQ(0, cache_file_on_node(self->fd[i], 0));
	}
}

FIXTURE_TEARDOWN(order)
{
	int i;

	for (i = 0; i < 2; i++) {
		if (self->path[i][0]) {
			close(self->fd[i]);
			unlink(self->path[i]);
		}
	}
	if (self->cgroup[0])
		cgroup_remove(self->cgroup);
	if (self->compact_unevictable[0])
		write_text_file(COMPACT_UNEVICTABLE, self->compact_unevictable);
	if (self->prev_policy[0])
		policy_set(self->prev_policy);
}

/*
 * Replicate file 0 then file 1 on node 1 (how0, how1: HOLD_*), holders
 * @h[0] and @h[1] keeping them mapped; @objects[i]: how many replicas the
 * shrinker counts for file i.
 */
static void replicate_both(struct __test_metadata *_metadata,
			   const char *cgroup, const char *count,
			   const int fd[2], int how0, int how1,
			   struct holder h[2], long objects[2])
{
	long before = 0, now;
	long long pages0;
	int i;

	for (i = 0; i < 2; i++) {
		pages0 = node_vmstat_read(1, "nr_replica_pages");
		ASSERT_EQ(0, holder_start(&h[i], fd[i], NPAGES, i + 1, 1,
					  i ? how1 : how0));
		ASSERT_EQ(NPAGES, count_on_node(h[i].status, NPAGES, 1));
		TH_LOG("file %d: %lld replica pages made on node 1", i,
		       node_vmstat_read(1, "nr_replica_pages") - pages0);
		now = shrinker_count(count, cgroup, 1);
		ASSERT_LT(before, now);
		objects[i] = now - before;
		before = now;
	}
	TH_LOG("the shrinker counts %ld replicas for file 0, %ld for file 1",
	       objects[0], objects[1]);
}

/*
 * Have the shrinker scan @nr replicas of the cgroup on node 1: it must
 * free that many replicas; returns how many pages they were.
 */
static long long scan_node1(struct __test_metadata *_metadata,
			    const char *cgroup, const char *scan,
			    const char *count, long nr)
{
	long long reclaim0 = vmstat_read("replica_reclaim");
	long objects0 = shrinker_count(count, cgroup, 1);

	ASSERT_EQ(0, shrinker_scan(scan, cgroup, 1, nr));
	TH_LOG("asked for %ld replicas, %ld freed, %lld pages", nr,
	       objects0 - shrinker_count(count, cgroup, 1),
	       vmstat_read("replica_reclaim") - reclaim0);
	EXPECT_EQ(objects0 - nr, shrinker_count(count, cgroup, 1));
	return vmstat_read("replica_reclaim") - reclaim0;
}

/*
 * Replicate file 0 then file 1 on node 1, have the shrinker scan as many
 * replicas as file 0 has, and count each file's replicas still mapped.
 */
static void reclaim_after(struct __test_metadata *_metadata,
			  const char *cgroup, const char *scan,
			  const char *count, const int fd[2], int how0,
			  int how1, int left[2])
{
	struct holder h[2];
	long objects[2];
	int i;

	replicate_both(_metadata, cgroup, count, fd, how0, how1, h, objects);
	EXPECT_EQ(NPAGES, scan_node1(_metadata, cgroup, scan, count,
				     objects[0]));
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, holder_finish(&h[i]));
		/* Where the holder's pages were before it touched them again. */
		left[i] = count_on_node(h[i].status + NPAGES, NPAGES, 1);
	}
	TH_LOG("replicas left: %d of file 0, %d of file 1", left[0], left[1]);
}

TEST_F(order, text_keeps_executable_replicas_longest)
{
	int left[2];

	ASSERT_EQ(0, policy_set("text"));
	/* The executable replicas are the older ones. */
	reclaim_after(_metadata, self->cgroup, self->scan, self->count,
		      self->fd, HOLD_EXEC, HOLD_ADVISED, left);
	ASSERT_EQ(NPAGES, left[0]);
	ASSERT_EQ(0, left[1]);
}

TEST_F(order, private_reclaims_least_recently_made_first)
{
	int left[2];

	ASSERT_EQ(0, policy_set("private"));
	reclaim_after(_metadata, self->cgroup, self->scan, self->count,
		      self->fd, 0, 0, left);
	ASSERT_EQ(0, left[0]);
	ASSERT_EQ(NPAGES, left[1]);
}

TEST_F(order, readonly_reclaims_least_recently_made_first)
{
	int left[2];

	ASSERT_EQ(0, policy_set("readonly"));
	reclaim_after(_metadata, self->cgroup, self->scan, self->count,
		      self->fd, 0, 0, left);
	ASSERT_EQ(0, left[0]);
	ASSERT_EQ(NPAGES, left[1]);
}

/*
 * File 0's replicas, the older, are mapped again by a second holder: the
 * shrinker passes over them once and takes file 1's instead, as many as
 * it was asked for.
 */
TEST_F(order, replicas_mapped_again_get_a_second_chance)
{
	struct holder h[2], again;
	long objects[2];
	int i, left[2];

	ASSERT_EQ(0, policy_set("private"));
	replicate_both(_metadata, self->cgroup, self->count, self->fd, 0, 0,
		       h, objects);
	ASSERT_EQ(0, holder_start(&again, self->fd[0], NPAGES, 1, 1, 0));
	ASSERT_EQ(NPAGES, count_on_node(again.status, NPAGES, 1));
	EXPECT_EQ(NPAGES, scan_node1(_metadata, self->cgroup, self->scan,
				     self->count, objects[1]));
	ASSERT_EQ(0, holder_finish(&again));
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, holder_finish(&h[i]));
		left[i] = count_on_node(h[i].status + NPAGES, NPAGES, 1);
	}
	TH_LOG("replicas left: %d of file 0, %d of file 1", left[0], left[1]);
	ASSERT_EQ(NPAGES, left[0]);
	ASSERT_EQ(0, left[1]);
}

/*
 * Every replica was mapped again: one scan still frees as many as asked.
 * A shrinker that only cleared their bits would come back empty-handed,
 * and reclaim would take page cache, which costs I/O to read back, first.
 */
TEST_F(order, replicas_all_used_again_still_give_way_at_once)
{
	long objects0, pages;
	struct holder h, again;
	int left;

	ASSERT_EQ(0, policy_set("private"));
	ASSERT_EQ(0, holder_start(&h, self->fd[0], NPAGES, 1, 1, 0));
	objects0 = shrinker_count(self->count, self->cgroup, 1);
	ASSERT_LT(1, objects0);
	ASSERT_EQ(0, holder_start(&again, self->fd[0], NPAGES, 1, 1, 0));
	ASSERT_EQ(NPAGES, count_on_node(again.status, NPAGES, 1));
	pages = scan_node1(_metadata, self->cgroup, self->scan, self->count,
			   objects0 / 2);
	ASSERT_EQ(0, holder_finish(&again));
	ASSERT_EQ(0, holder_finish(&h));
	left = count_on_node(h.status + NPAGES, NPAGES, 1);
	TH_LOG("replicas left: %d pages", left);
	ASSERT_LT(0, pages);
	ASSERT_EQ(NPAGES - pages, left);
}

/*
 * Replicas that an mlocked mapping maps are not given back under memory
 * pressure, as the page cache they stand for is not reclaimed; and where
 * compaction must leave mlocked memory alone (compact_unevictable_allowed
 * 0, the PREEMPT_RT default), it does not move them either, proactive
 * compaction included: a task that locked its text takes no fault on it.
 * The other replicas go as before.
 */
TEST_F(order, mlocked_replicas_stay)
{
	long long reclaim0, evict0, migrate0;
	struct holder h[2];
	long objects[2];
	int left[2], i;

	ASSERT_EQ(0, policy_set("private"));
	ASSERT_EQ(0, read_text_file(COMPACT_UNEVICTABLE,
				    self->compact_unevictable,
				    sizeof(self->compact_unevictable)));
	ASSERT_EQ(0, write_text_file(COMPACT_UNEVICTABLE, "0"));
	replicate_both(_metadata, self->cgroup, self->count, self->fd,
		       HOLD_MLOCK, 0, h, objects);
	reclaim0 = vmstat_read("replica_reclaim");
	evict0 = vmstat_read("replica_evict");
	migrate0 = vmstat_read("replica_migrate");
	ASSERT_EQ(0, shrinker_scan(self->scan, self->cgroup, 1,
				   objects[0] + objects[1]));
	TH_LOG("the shrinker took %lld pages of replicas",
	       vmstat_read("replica_reclaim") - reclaim0);
	ASSERT_EQ(0, write_text_file("/proc/sys/vm/compact_memory", "1"));
	TH_LOG("replica pages dropped by movers: %lld; moved: %lld",
	       vmstat_read("replica_evict") - evict0,
	       vmstat_read("replica_migrate") - migrate0);
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, holder_finish(&h[i]));
		left[i] = count_on_node(h[i].status + NPAGES, NPAGES, 1);
	}
	TH_LOG("replicas left: %d of the mlocked file, %d of the other",
	       left[0], left[1]);
	EXPECT_EQ(NPAGES, left[0]);
	EXPECT_EQ(0, left[1]);
}

TEST_HARNESS_MAIN
