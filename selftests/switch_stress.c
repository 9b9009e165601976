// SPDX-License-Identifier: GPL-2.0
/*
 * Switching the replication policy while tasks on every node fault and
 * read files in every way: no task ever reads a wrong byte, and the switch
 * to "none" at the end leaves no replica.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../kselftest_harness.h"
#include "replica_util.h"

#define NPAGES		64
#define LEN		(NPAGES * PAGE_SIZE_4K)
#define NFILES		3
#define SECONDS		15
#define WORKERS_PER_NODE 2

static const char * const policies[] = {
	"private", "text", "readonly", "madvise", "none",
};

struct shared {
	int stop;
	long rounds[16];
	long wrong[16];
};

/* One round of every way of reading file @i; the number of wrong pages. */
static long read_every_way(const int *fd, int i, unsigned char *buf)
{
	static const int prot[] = { PROT_READ | PROT_EXEC, PROT_READ, PROT_READ };
	static const int flags[] = { MAP_PRIVATE, MAP_PRIVATE, MAP_SHARED };
	long wrong = 0;
	unsigned char *p;

	p = mmap(NULL, LEN, prot[i], flags[i], fd[i], 0);
	if (p == MAP_FAILED)
		return NPAGES;
	if (i == 1)
		madvise(p, LEN / 2, MADV_REPLICATE);
	wrong += pattern_mismatch(p, LEN, 0, i + 1) >= 0;
	munmap(p, LEN);
	if (pread(fd[i], buf, LEN, 0) != LEN ||
	    pattern_mismatch(buf, LEN, 0, i + 1) >= 0)
		wrong++;
	return wrong;
}

struct worker {
	const int *fd;
	struct shared *s;
	int id;
};

static int worker_job(void *arg)
{
	struct worker *w = arg;
	unsigned char *buf = malloc(LEN);
	int i;

	if (!buf)
		return 2;
	while (!__atomic_load_n(&w->s->stop, __ATOMIC_RELAXED)) {
		for (i = 0; i < NFILES; i++)
			w->s->wrong[w->id] += read_every_way(w->fd, i, buf);
		w->s->rounds[w->id]++;
	}
	free(buf);
	return 0;
}

TEST(switching_policies_under_load)
{
	int fd[NFILES], i, n, status, switches = 0, nodes = nr_online_nodes();
	char prev[32], path[NFILES][64];
	pid_t pid[16];
	struct worker w;
	struct shared *s;
	time_t end;
	long rounds = 0, wrong = 0;

	if (nodes < 2)
		SKIP(return, "needs 2 NUMA nodes, the guest has %d", nodes);
	if (policy_get(prev, sizeof(prev)))
		SKIP(return, "kernel without CONFIG_MM_REPLICA");
	for (i = 0; i < NFILES; i++) {
		snprintf(path[i], sizeof(path[i]), "switch%d.%d", i, getpid());
		fd[i] = make_test_file(path[i], NPAGES, i + 1);
		ASSERT_LE(0, fd[i]);
		ASSERT_EQ(0, cache_file_on_node(fd[i], 0));
	}
	s = mmap(NULL, sizeof(*s), PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, s);

	n = nodes * WORKERS_PER_NODE;
	if (n > 16)
		n = 16;
	w.fd = fd;
	w.s = s;
	for (i = 0; i < n; i++) {
		w.id = i;
		pid[i] = fork_child();
		ASSERT_LE(0, pid[i]);
		if (!pid[i])
			_exit(run_on_node(i % nodes, worker_job, &w));
	}

	srand(getpid());
	end = time(NULL) + SECONDS;
	while (time(NULL) < end) {
		ASSERT_EQ(0, policy_set(policies[rand() % 5]));
		switches++;
		usleep(rand() % 50000);
	}
	__atomic_store_n(&s->stop, 1, __ATOMIC_RELAXED);
	for (i = 0; i < n; i++) {
		ASSERT_EQ(pid[i], waitpid(pid[i], &status, 0));
		ASSERT_EQ(0, WEXITSTATUS(status));
		rounds += s->rounds[i];
		wrong += s->wrong[i];
	}
	TH_LOG("%d policy switches, %ld rounds of reads, %ld wrong", switches,
	       rounds, wrong);
	ASSERT_LT(0, rounds);
	ASSERT_EQ(0, wrong);

	ASSERT_EQ(0, policy_set("none"));
	ASSERT_EQ(0, replica_pages_total());
	for (i = 0; i < NFILES; i++) {
		close(fd[i]);
		unlink(path[i]);
	}
	policy_set(prev);
}

TEST_HARNESS_MAIN
