// SPDX-License-Identifier: GPL-2.0
/*
 * Invalidation against fault-around.  Node 0 drops the file's page cache
 * over and over (POSIX_FADV_DONTNEED), which lets go of the replicas
 * nobody maps, while node 1 unmaps its mapping of the file (MADV_DONTNEED)
 * and faults it in again, and fault-around maps the replicas it finds.  A
 * replica that fault-around maps meanwhile must stay in the store, so that
 * the next writer removes it: after every round a writer changes the
 * file, and node 1 must read the new bytes through the mapping it kept.
 * A third task keeps the file mapped on node 0, so that its page cache
 * stays there and node 1 keeps making replicas of it.
 *
 * The window is a few instructions wide: a kernel built with
 * CONFIG_MM_REPLICA_RACE_INJECT holds it open for DROP_DELAY_US, and the
 * test uses that when it is there; without it, the test is a stress test
 * that may need hours (make soak) to hit the window.
 *
 * Usage: invalidate_race [-t SECONDS]	(default 20; a round takes about 1)
 */
#define _GNU_SOURCE
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

#include "../kselftest.h"
#include "replica_util.h"

#define NPAGES		64
#define LEN		(NPAGES * PAGE_SIZE_4K)
#define SEED		0x1d70
#define DROP_DELAY	"/sys/kernel/debug/replica/drop_delay_us"
#define DROP_DELAY_US	"2000"

enum phase { RACE, HOLD, VERIFY, STOP };

/*
 * What the parent and its three jobs share, in a shared mapping: read and
 * written with atomic builtins only.
 */
struct race {
	int phase;
	int round;
	unsigned int seed;
	int acked;		/* jobs that saw the phase of this round */
	int verified;		/* round whose bytes node 1 checked */
	long stale_pages;	/* pages node 1 read old bytes from */
	long long races;	/* invalidations and faults run */
	int fd;
};

#define LOAD(x)		__atomic_load_n(&(x), __ATOMIC_SEQ_CST)
#define STORE(x, v)	__atomic_store_n(&(x), (v), __ATOMIC_SEQ_CST)

static void ack(struct race *r)
{
	__atomic_add_fetch(&r->acked, 1, __ATOMIC_SEQ_CST);
}

/* Node 0: drop the page cache while the round races. */
static int invalidator_job(void *arg)
{
	struct race *r = arg;
	int round = -1;

	while (LOAD(r->phase) != STOP) {
		if (LOAD(r->phase) == RACE) {
			posix_fadvise(r->fd, 0, 0, POSIX_FADV_DONTNEED);
			__atomic_add_fetch(&r->races, 1, __ATOMIC_RELAXED);
		} else if (LOAD(r->round) != round) {
			round = LOAD(r->round);
			ack(r);
		}
	}
	return 0;
}

/* Node 0: keep the page cache mapped, so that it stays on node 0. */
static int keeper_job(void *arg)
{
	struct race *r = arg;
	unsigned char *p = mmap(NULL, LEN, PROT_READ, MAP_SHARED, r->fd, 0);

	if (p == MAP_FAILED)
		return 2;
	while (LOAD(r->phase) != STOP) {
		touch_pages(p, LEN);
		usleep(1000);
	}
	return 0;
}

/* Node 1: fault the mapping in and out; check its bytes when told. */
static int faulter_job(void *arg)
{
	struct race *r = arg;
	unsigned char *p = mmap(NULL, LEN, PROT_READ, MAP_PRIVATE, r->fd, 0);
	int round = -1;

	if (p == MAP_FAILED)
		return 2;
	while (LOAD(r->phase) != STOP) {
		int phase = LOAD(r->phase);

		if (phase == RACE) {
			madvise(p, LEN, MADV_DONTNEED);
			touch_pages(p, LEN);
			__atomic_add_fetch(&r->races, 1, __ATOMIC_RELAXED);
			continue;
		}
		if (phase == HOLD && LOAD(r->round) != round) {
			round = LOAD(r->round);
			ack(r);
		} else if (phase == VERIFY &&
			   LOAD(r->verified) != LOAD(r->round)) {
			long stale = 0;
			size_t i;

			for (i = 0; i < NPAGES; i++)
				if (pattern_mismatch(p + i * PAGE_SIZE_4K,
						     PAGE_SIZE_4K,
						     i * PAGE_SIZE_4K,
						     LOAD(r->seed)) >= 0)
					stale++;
			__atomic_add_fetch(&r->stale_pages, stale,
					   __ATOMIC_SEQ_CST);
			STORE(r->verified, LOAD(r->round));
		}
	}
	return 0;
}

/* Write the whole file with the bytes of @seed, as a writer would. */
static int rewrite(const char *path, unsigned int seed)
{
	unsigned char buf[PAGE_SIZE_4K];
	int fd = open(path, O_WRONLY);
	size_t i, j;

	if (fd < 0)
		return -1;
	for (i = 0; i < NPAGES; i++) {
		for (j = 0; j < sizeof(buf); j++)
			buf[j] = pattern_byte(seed, i * PAGE_SIZE_4K + j);
		if (pwrite(fd, buf, sizeof(buf), i * PAGE_SIZE_4K) !=
		    sizeof(buf)) {
			close(fd);
			return -1;
		}
	}
	return close(fd);
}

static pid_t start_job(int node, int (*fn)(void *), void *arg)
{
	pid_t pid = fork_child();

	if (pid == 0)
		_exit(run_on_node(node, fn, arg));
	return pid;
}

static int wait_for(int *what, int value, int seconds)
{
	int ticks;

	for (ticks = 0; ticks < seconds * 100; ticks++) {
		if (__atomic_load_n(what, __ATOMIC_SEQ_CST) == value)
			return 0;
		usleep(10000);
	}
	return -1;
}

int main(int argc, char **argv)
{
	char path[64], prev[32];
	int seconds = 20, rounds = 0, opt, i, failed = 0, injected;
	struct race *r;
	pid_t pid[3];
	time_t end;

	while ((opt = getopt(argc, argv, "t:")) != -1) {
		if (opt != 't') {
			fprintf(stderr, "usage: %s [-t SECONDS]\n", argv[0]);
			return 2;
		}
		seconds = atoi(optarg);
	}
	setvbuf(stdout, NULL, _IONBF, 0);
	ksft_print_header();
	ksft_set_plan(1);
	if (nr_online_nodes() < 2)
		ksft_exit_skip("needs 2 NUMA nodes, the guest has %d\n",
			       nr_online_nodes());
	if (policy_require("private", prev, sizeof(prev)))
		ksft_exit_skip("no replication policy \"private\" in this kernel\n");
	r = mmap(NULL, sizeof(*r), PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (r == MAP_FAILED)
		ksft_exit_fail_msg("mmap: %s\n", strerror(errno));
	snprintf(path, sizeof(path), "invalidate_race.%d", getpid());
	r->seed = SEED;
	r->fd = make_test_file(path, NPAGES, SEED);
	if (r->fd < 0 || cache_file_on_node(r->fd, 0) || warm_self_on_node(1))
		ksft_exit_fail_msg("cannot set up %s\n", path);

	injected = !write_text_file(DROP_DELAY, DROP_DELAY_US);
	ksft_print_msg("%s\n", injected ?
		       "window held open " DROP_DELAY_US " us (" DROP_DELAY ")" :
		       "no " DROP_DELAY ": a stress test only");
	STORE(r->phase, HOLD);
	pid[0] = start_job(0, keeper_job, r);
	pid[1] = start_job(0, invalidator_job, r);
	pid[2] = start_job(1, faulter_job, r);
	end = time(NULL) + seconds;
	while (!failed && time(NULL) < end) {
		STORE(r->acked, 0);
		STORE(r->phase, RACE);
		usleep(700000);
		STORE(r->round, r->round + 1);
		STORE(r->phase, HOLD);
		/* Both racers stopped: node 1 keeps what it mapped last. */
		if (wait_for(&r->acked, 2, 60)) {
			ksft_print_msg("round %d: the racers did not stop\n",
				       r->round);
			failed = 1;
			break;
		}
		STORE(r->seed, r->seed + 1);
		if (rewrite(path, r->seed)) {
			ksft_print_msg("rewrite: %s\n", strerror(errno));
			failed = 1;
			break;
		}
		STORE(r->phase, VERIFY);
		if (wait_for(&r->verified, r->round, 60)) {
			ksft_print_msg("round %d: node 1 did not check\n",
				       r->round);
			failed = 1;
			break;
		}
		if (LOAD(r->stale_pages)) {
			ksft_print_msg("round %d: node 1 read %ld pages of %s\n",
				       r->round, LOAD(r->stale_pages),
				       "old bytes after a write");
			failed = 1;
		}
		rounds++;
	}
	STORE(r->phase, STOP);
	for (i = 0; i < 3; i++) {
		int status;

		if (pid[i] < 0 || waitpid(pid[i], &status, 0) != pid[i] ||
		    !WIFEXITED(status) || WEXITSTATUS(status)) {
			ksft_print_msg("job %d failed\n", i);
			failed = 1;
		}
	}
	if (injected)
		write_text_file(DROP_DELAY, "0");
	ksft_print_msg("%d rounds, %lld invalidations and fault passes, %ld stale pages\n",
		       rounds, r->races, r->stale_pages);
	close(r->fd);
	unlink(path);
	policy_set(prev);
	ksft_test_result(!failed, "no replica escapes a writer after racing invalidation\n");
	ksft_finished();
}
