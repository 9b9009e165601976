// SPDX-License-Identifier: GPL-2.0
/*
 * The replica tracepoints fire as replicas are made, mapped again and
 * dropped, and a drop says why: each test makes replicas of a file on
 * node 1, does one thing that drops them, and counts the replica_drop
 * events of that file by reason in the trace buffer.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../kselftest_harness.h"
#include "replica_util.h"

#ifndef MADV_HWPOISON
#define MADV_HWPOISON	100
#endif

#define NPAGES		64
#define LEN		(NPAGES * PAGE_SIZE_4K)
#define FILE_SEED	0x7ace

#define TRACEFS		"/sys/kernel/tracing"
#define EVENTS		TRACEFS "/events/replica"

static const char * const replica_tracepoints[] = {
	"replica_make", "replica_map", "replica_drop",
};

/* Write @text to a file of tracefs; 0 or -1. */
static int tracefs_write(const char *name, const char *text)
{
	char path[256];

	snprintf(path, sizeof(path), TRACEFS "/%s", name);
	return write_text_file(path, text);
}

/* Empty the trace buffer: 0 or -1. */
static int trace_clear(void)
{
	int fd = open(TRACEFS "/trace", O_WRONLY | O_TRUNC);

	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

/* Trace the replica events of inode @ino only, from an empty buffer. */
static int trace_file_start(unsigned long ino)
{
	char name[128], filter[64];
	unsigned int i;

	snprintf(filter, sizeof(filter), "ino == %lu", ino);
	for (i = 0; i < ARRAY_SIZE(replica_tracepoints); i++) {
		snprintf(name, sizeof(name), "events/replica/%s/filter",
			 replica_tracepoints[i]);
		if (tracefs_write(name, filter))
			return -1;
	}
	if (tracefs_write("events/replica/enable", "1"))
		return -1;
	return trace_clear();
}

static void trace_stop(void)
{
	char name[128];
	unsigned int i;

	tracefs_write("events/replica/enable", "0");
	for (i = 0; i < ARRAY_SIZE(replica_tracepoints); i++) {
		snprintf(name, sizeof(name), "events/replica/%s/filter",
			 replica_tracepoints[i]);
		tracefs_write(name, "0");
	}
}

/*
 * Pages in the @event lines of the trace buffer ("pages N"), of those
 * with "reason @reason" if set; the lines of other reasons in @others.
 */
static long trace_pages(const char *event, const char *reason, long *others)
{
	char line[512], tag[64], want[64], *p;
	long pages = 0, n;
	FILE *f = fopen(TRACEFS "/trace", "r");

	if (!f)
		return -1;
	snprintf(tag, sizeof(tag), " %s: ", event);
	snprintf(want, sizeof(want), " reason %s\n", reason ? reason : "");
	if (others)
		*others = 0;
	while (fgets(line, sizeof(line), f)) {
		if (line[0] == '#' || !strstr(line, tag))
			continue;
		if (reason && !strstr(line, want)) {
			if (others)
				(*others)++;
			continue;
		}
		p = strstr(line, " pages ");
		if (p && sscanf(p, " pages %ld", &n) == 1)
			pages += n;
	}
	fclose(f);
	return pages;
}

FIXTURE(tracing) {
	struct cgroup_file cf;
	unsigned long ino;
};

FIXTURE_SETUP(tracing)
{
	struct stat st;
	char why[128];
	int rc;

	if (access(EVENTS, F_OK) &&
	    mount("nodev", TRACEFS, "tracefs", 0, NULL) && errno != EBUSY)
		SKIP(return, "no tracefs: %s", strerror(errno));
	if (access(EVENTS, F_OK))
		SKIP(return, "no replica tracepoints: a kernel without CONFIG_TRACING");
	rc = cgroup_file_setup(&self->cf, "tracing", NPAGES, FILE_SEED, why,
			       sizeof(why));
	if (rc > 0)
		SKIP(return, "%s", why);
	ASSERT_EQ(0, rc);
	ASSERT_EQ(0, fstat(self->cf.fd, &st));
	self->ino = st.st_ino;
}

/* In the parent, for the reason given in memcg.c. */
FIXTURE_TEARDOWN_PARENT(tracing)
{
	trace_stop();
	cgroup_file_teardown(&self->cf);
}

struct map_args {
	int fd;
	const char *cgroup;	/* joined first, if set */
	int poison;		/* then MADV_HWPOISON its first page */
	long long *on_node1;	/* shared */
};

static int map_on_node1(void *arg)
{
	struct map_args *a = arg;
	int status[NPAGES];
	unsigned char *p = cgroup_map_touched(a->cgroup, a->fd, LEN);

	if (!p)
		return 2;
	if (page_nodes(p, NPAGES, status))
		return 3;
	*a->on_node1 = count_on_node(status, NPAGES, 1);
	if (a->poison && madvise(p, PAGE_SIZE_4K, MADV_HWPOISON))
		return 4;
	return pattern_mismatch(p, LEN, 0, FILE_SEED) >= 0 ? 5 : 0;
}

/*
 * Each test's first step: the file cached on node 0, the test binary
 * replicated on node 1, then the file's replicas made there, traced.
 */
static void replicate_traced(struct __test_metadata *_metadata,
			     struct cgroup_file *cf, unsigned long ino,
			     const char *cgroup)
{
	struct map_args a = {
		.fd = cf->fd,
		.cgroup = cgroup,
		.on_node1 = cf->shared,
	};
	long room = room_then_cache(1, 2 * NPAGES, cf->fd, 0);

	ASSERT_LE(2 * NPAGES, room);
	ASSERT_EQ(0, warm_self_on_node(1));
	ASSERT_EQ(0, trace_file_start(ino));
	ASSERT_EQ(0, run_on_node(1, map_on_node1, &a));
	ASSERT_EQ(NPAGES, *a.on_node1);
	ASSERT_EQ(NPAGES, trace_pages("replica_make", NULL, NULL));
	ASSERT_EQ(0, trace_clear());
}

/* The file's replicas were all dropped, every one for @reason. */
static void dropped_for(struct __test_metadata *_metadata, const char *reason,
			long want)
{
	long others, pages = trace_pages("replica_drop", reason, &others);

	TH_LOG("replica_drop: %ld pages for %s, %ld events for other reasons",
	       pages, reason, others);
	ASSERT_EQ(want, pages);
	ASSERT_EQ(0, others);
}

TEST_F(tracing, a_replica_mapped_again_is_traced)
{
	struct map_args a = {
		.fd = self->cf.fd,
		.on_node1 = self->cf.shared,
	};
	long long map0 = vmstat_read("replica_map");
	long mapped;

	replicate_traced(_metadata, &self->cf, self->ino, NULL);
	ASSERT_EQ(0, run_on_node(1, map_on_node1, &a));
	mapped = trace_pages("replica_map", NULL, NULL);
	TH_LOG("replica_map: %ld pages traced, %lld counted", mapped,
	       vmstat_read("replica_map") - map0);
	ASSERT_LE(1, mapped);
	ASSERT_LE(mapped, vmstat_read("replica_map") - map0);
	ASSERT_EQ(0, trace_pages("replica_make", NULL, NULL));
}

TEST_F(tracing, opening_for_write_drops_for_write)
{
	int fd;

	replicate_traced(_metadata, &self->cf, self->ino, NULL);
	fd = open(self->cf.path, O_WRONLY);
	ASSERT_LE(0, fd);
	close(fd);
	dropped_for(_metadata, "write", NPAGES);
}

TEST_F(tracing, deleting_the_file_drops_for_truncate)
{
	replicate_traced(_metadata, &self->cf, self->ino, NULL);
	/* The last reference goes: the inode is evicted, its pages truncated. */
	ASSERT_EQ(0, unlink(self->cf.path));
	ASSERT_EQ(0, close(self->cf.fd));
	self->cf.fd = -1;
	dropped_for(_metadata, "truncate", NPAGES);
}

TEST_F(tracing, fadvise_dontneed_drops_for_uncache)
{
	replicate_traced(_metadata, &self->cf, self->ino, NULL);
	ASSERT_EQ(0, posix_fadvise(self->cf.fd, 0, 0, POSIX_FADV_DONTNEED));
	dropped_for(_metadata, "uncache", NPAGES);
}

TEST_F(tracing, memory_reclaim_drops_for_shrink)
{
	long others, pages;
	int rc;

	replicate_traced(_metadata, &self->cf, self->ino, self->cf.cgroup);
	/*
	 * The cgroup holds little but the replicas: ask for more than there
	 * is, which fails with EAGAIN once reclaim has taken all it could.
	 */
	rc = cgroup_write(self->cf.cgroup, "memory.reclaim", "16M");
	ASSERT_TRUE(rc == 0 || errno == EAGAIN)
		TH_LOG("memory.reclaim: %s", strerror(errno));
	pages = trace_pages("replica_drop", "shrink", &others);
	TH_LOG("replica_drop: %ld pages for shrink, %ld events for others",
	       pages, others);
	ASSERT_LE(1, pages);
	ASSERT_EQ(0, others);
}

TEST_F(tracing, a_policy_switch_drops_for_policy)
{
	replicate_traced(_metadata, &self->cf, self->ino, NULL);
	ASSERT_EQ(0, policy_set("none"));
	dropped_for(_metadata, "policy", NPAGES);
}

TEST_F(tracing, a_memory_error_drops_for_memory_failure)
{
	struct map_args a = {
		.fd = self->cf.fd,
		.poison = 1,
		.on_node1 = self->cf.shared,
	};
	long others, pages;

	replicate_traced(_metadata, &self->cf, self->ino, NULL);
	ASSERT_EQ(0, run_on_node(1, map_on_node1, &a));
	/* The replica of the first page, one page or a large folio (XFS). */
	pages = trace_pages("replica_drop", "memory_failure", &others);
	TH_LOG("replica_drop: %ld pages for memory_failure, %ld for others",
	       pages, others);
	ASSERT_LE(1, pages);
	ASSERT_GE(NPAGES, pages);
	ASSERT_EQ(0, others);
}

TEST_HARNESS_MAIN
