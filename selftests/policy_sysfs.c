// SPDX-License-Identifier: GPL-2.0
/*
 * /sys/kernel/mm/replica/: the policy file lists the policies with the
 * current one in brackets, switches on a write of a known name, refuses
 * unknown names and unprivileged writers, and switching to "none" drops
 * every replica; max_percent caps the replicas of a node.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../kselftest_harness.h"
#include "replica_util.h"

#define POLICY		"/sys/kernel/mm/replica/policy"
#define MAX_PERCENT	"/sys/kernel/mm/replica/max_percent"
#define NPAGES		64
#define LEN		(NPAGES * PAGE_SIZE_4K)

static int write_errno(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY), err = 0;

	if (fd < 0)
		return errno;
	if (write(fd, text, strlen(text)) < 0)
		err = errno;
	close(fd);
	return err;
}

/*
 * Copy the policy list in @buf without the brackets round the current
 * policy into @buf itself, and that policy into @cur; returns @buf.
 */
static char *strip_current(char *buf, char *cur, size_t len)
{
	char *open = strchr(buf, '['), *close = strchr(buf, ']');

	cur[0] = '\0';
	if (!open || !close || close < open)
		return buf;
	snprintf(cur, len, "%.*s", (int)(close - open - 1), open + 1);
	memmove(close, close + 1, strlen(close + 1) + 1);
	memmove(open, open + 1, strlen(open + 1) + 1);
	return buf;
}

FIXTURE(sysfs) {
	char prev_policy[32];
	char prev_percent[16];
};

FIXTURE_SETUP(sysfs)
{
	if (policy_get(self->prev_policy, sizeof(self->prev_policy)))
		SKIP(return, "no %s: kernel without CONFIG_MM_REPLICA", POLICY);
	ASSERT_EQ(0, read_text_file(MAX_PERCENT, self->prev_percent,
				    sizeof(self->prev_percent)));
}

FIXTURE_TEARDOWN(sysfs)
{
	if (self->prev_policy[0])
		policy_set(self->prev_policy);
	if (self->prev_percent[0])
		write_errno(MAX_PERCENT, self->prev_percent);
}

TEST_F(sysfs, lists_policies_with_the_current_in_brackets)
{
	char buf[256], cur[32], name[32];

	ASSERT_EQ(0, read_text_file(POLICY, buf, sizeof(buf)));
	TH_LOG("%s: %s", POLICY, buf);
	ASSERT_NE(NULL, strchr(buf, '['));
	ASSERT_EQ(strchr(buf, '['), strrchr(buf, '['));
	ASSERT_EQ(strchr(buf, ']'), strrchr(buf, ']'));
	/* All five, in the order the documentation gives them. */
	ASSERT_STREQ("none private text readonly madvise\n",
		     strip_current(buf, cur, sizeof(cur)));
	ASSERT_EQ(0, policy_get(name, sizeof(name)));
	ASSERT_STREQ(name, cur);

	ASSERT_EQ(0, policy_set("none"));
	ASSERT_EQ(0, read_text_file(POLICY, buf, sizeof(buf)));
	ASSERT_EQ(0, strncmp(buf, "[none] private", 14));
	ASSERT_EQ(0, policy_set("private\n"));
	ASSERT_EQ(0, policy_get(cur, sizeof(cur)));
	ASSERT_STREQ("private", cur);
}

TEST_F(sysfs, unknown_name_is_einval)
{
	char cur[32];

	ASSERT_EQ(EINVAL, write_errno(POLICY, "bogus"));
	ASSERT_EQ(EINVAL, write_errno(POLICY, "\n"));
	ASSERT_EQ(EINVAL, write_errno(POLICY, "private extra"));
	ASSERT_EQ(0, policy_get(cur, sizeof(cur)));
	ASSERT_STREQ(self->prev_policy, cur);
}

TEST_F(sysfs, unprivileged_writer_is_refused)
{
	int status;
	pid_t pid = fork_child();

	ASSERT_LE(0, pid);
	if (!pid) {
		if (setgid(65534) || setuid(65534))
			_exit(100);
		_exit(write_errno(POLICY, "none") == EACCES &&
		      write_errno(MAX_PERCENT, "50") == EACCES ? 0 : 1);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_EQ(0, WEXITSTATUS(status));
}

TEST_F(sysfs, max_percent_rejects_bad_values)
{
	char buf[16];

	ASSERT_EQ(EINVAL, write_errno(MAX_PERCENT, "101"));
	ASSERT_EQ(EINVAL, write_errno(MAX_PERCENT, "-1"));
	ASSERT_EQ(EINVAL, write_errno(MAX_PERCENT, "ten"));
	ASSERT_EQ(0, read_text_file(MAX_PERCENT, buf, sizeof(buf)));
	ASSERT_STREQ(self->prev_percent, buf);
}

static void switch_to_none_with_holder(struct __test_metadata *_metadata,
				       int mlocked)
{
	struct holder h;
	char path[64];
	int fd;

	if (nr_online_nodes() < 2)
		SKIP(return, "needs 2 NUMA nodes");
	ASSERT_EQ(0, policy_set("private"));
	snprintf(path, sizeof(path), "sysfs.%d", getpid());
	fd = make_test_file(path, NPAGES, 9);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, cache_file_on_node(fd, 0));
	ASSERT_EQ(0, holder_start(&h, fd, NPAGES, 9, 1,
				  mlocked ? HOLD_MLOCK : 0));
	ASSERT_EQ(NPAGES, count_on_node(h.status, NPAGES, 1));
	ASSERT_LT(0, replica_pages_total());

	ASSERT_EQ(0, policy_set("none"));
	ASSERT_EQ(0, replica_pages_total());

	ASSERT_EQ(0, holder_finish(&h));
	/* Unmapped at the switch, then the originals on the next fault. */
	ASSERT_EQ(NPAGES, count_on_node(h.status + NPAGES, NPAGES, -ENOENT));
	ASSERT_EQ(NPAGES, count_on_node(h.status + 2 * NPAGES, NPAGES, 0));
	close(fd);
	unlink(path);
}

TEST_F(sysfs, switching_to_none_drops_every_replica)
{
	switch_to_none_with_holder(_metadata, 0);
}

/* An mlocked mapping does not keep its replicas, nor stall the switch. */
TEST_F(sysfs, switching_to_none_drops_mlocked_replicas)
{
	switch_to_none_with_holder(_metadata, 1);
}

/*
 * A switch keeps the replicas the new policy makes: from "private" to
 * "text", those of an executable mapping stay mapped, those of a data
 * mapping are unmapped and freed.
 */
TEST_F(sysfs, switching_keeps_what_the_new_policy_makes)
{
	static const int how[2] = { HOLD_EXEC, 0 };
	struct holder h[2];
	char path[2][64];
	int fd[2], i;

	if (nr_online_nodes() < 2)
		SKIP(return, "needs 2 NUMA nodes");
	ASSERT_EQ(0, policy_set("private"));
	for (i = 0; i < 2; i++) {
		snprintf(path[i], sizeof(path[i]), "keep%d.%d", i, getpid());
		fd[i] = make_test_file(path[i], NPAGES, 10 + i);
		ASSERT_LE(0, fd[i]);
		ASSERT_EQ(0, cache_file_on_node(fd[i], 0));
		ASSERT_EQ(0, holder_start(&h[i], fd[i], NPAGES, 10 + i, 1,
					  how[i]));
		ASSERT_EQ(NPAGES, count_on_node(h[i].status, NPAGES, 1));
	}

	ASSERT_EQ(0, policy_set("text"));

	for (i = 0; i < 2; i++)
		ASSERT_EQ(0, holder_finish(&h[i]));
	/* Executable: still the replicas, before and after touching. */
	ASSERT_EQ(NPAGES, count_on_node(h[0].status + NPAGES, NPAGES, 1));
	ASSERT_EQ(NPAGES, count_on_node(h[0].status + 2 * NPAGES, NPAGES, 1));
	/* Data: unmapped at the switch, then the originals. */
	ASSERT_EQ(NPAGES, count_on_node(h[1].status + NPAGES, NPAGES,
					-ENOENT));
	ASSERT_EQ(NPAGES, count_on_node(h[1].status + 2 * NPAGES, NPAGES, 0));
	for (i = 0; i < 2; i++) {
		close(fd[i]);
		unlink(path[i]);
	}
}

TEST_F(sysfs, max_percent_zero_makes_no_replica)
{
	long long fail0;
	struct holder h;
	char path[64];
	int fd;

	if (nr_online_nodes() < 2)
		SKIP(return, "needs 2 NUMA nodes");
	ASSERT_EQ(0, policy_set("private"));
	ASSERT_EQ(0, write_errno(MAX_PERCENT, "0"));
	snprintf(path, sizeof(path), "sysfs.%d", getpid());
	fd = make_test_file(path, NPAGES, 9);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, cache_file_on_node(fd, 0));
	fail0 = vmstat_read("replica_alloc_fail");
	ASSERT_EQ(0, holder_start(&h, fd, NPAGES, 9, 1, 0));
	ASSERT_EQ(NPAGES, count_on_node(h.status, NPAGES, 0));
	ASSERT_LE(fail0 + 1, vmstat_read("replica_alloc_fail"));
	ASSERT_EQ(0, holder_finish(&h));
	close(fd);
	unlink(path);
}

struct big_map {
	int fd;
	size_t pages;
	int on_node1;
};

static int big_map_job(void *arg)
{
	struct big_map *b = arg;
	size_t len = b->pages * PAGE_SIZE_4K;
	int *status = calloc(b->pages, sizeof(int));
	unsigned char *p;

	p = mmap(NULL, len, PROT_READ, MAP_PRIVATE, b->fd, 0);
	if (p == MAP_FAILED || !status)
		return 2;
	touch_pages(p, len);
	if (page_nodes(p, b->pages, status))
		return 3;
	b->on_node1 = count_on_node(status, b->pages, 1);
	return 0;
}

TEST_F(sysfs, max_percent_caps_the_replicas_of_a_node)
{
	long long replicas0, replicas;
	struct big_map *b;
	long cap;
	char path[64];

	if (nr_online_nodes() < 2)
		SKIP(return, "needs 2 NUMA nodes");
	ASSERT_EQ(0, policy_set("private"));
	ASSERT_EQ(0, write_errno(MAX_PERCENT, "1"));
	cap = node_zoneinfo(1, "managed") / 100;
	replicas0 = node_vmstat_read(1, "nr_replica_pages");
	ASSERT_GT(cap, replicas0);
	b = mmap(NULL, sizeof(*b), PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, b);
	/* Twice what the cap leaves room for. */
	b->pages = 2 * (cap - replicas0);
	snprintf(path, sizeof(path), "cap.%d", getpid());
	b->fd = make_test_file(path, b->pages, 4);
	ASSERT_LE(0, b->fd);
	ASSERT_EQ(0, cache_file_on_node(b->fd, 0));
	ASSERT_EQ(0, run_on_node(1, big_map_job, b));
	replicas = node_vmstat_read(1, "nr_replica_pages");
	TH_LOG("cap %ld pages: %lld replica pages on node 1, %d of %zu pages of the file there",
	       cap, replicas, b->on_node1, b->pages);
	/* The cap reads per-CPU counters: allow their drift. */
	ASSERT_GE(cap + 128, replicas);
	ASSERT_LE(cap / 2, b->on_node1);
	ASSERT_GT(b->pages, (size_t)b->on_node1);
	close(b->fd);
	unlink(path);
}

TEST_HARNESS_MAIN
