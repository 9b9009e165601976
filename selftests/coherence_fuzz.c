// SPDX-License-Identifier: GPL-2.0
/*
 * Coherence fuzzer: random writes of every kind to a file whose page cache
 * other nodes read through replicas, each followed by a check, from every
 * node, that what a mapping and read(2) show is what the file holds.
 *
 * The file's content is modelled in memory.  Writers are children bound to
 * random nodes; they use pwrite(2), O_DIRECT writes, ftruncate(2) down and
 * up, fallocate(2) hole punching and zero-range, stores through a
 * MAP_SHARED mapping with msync(2), and stores through a shared mapping
 * whose descriptor was closed before mprotect(2) made it writable.  Other
 * operations drop the caches, compact a random node's memory (which moves
 * replicas and page cache), switch the replication policy, and patch and exec a copy of
 * this program whose executable marker must read as patched.  After each
 * operation, a reader on each node, holding a MAP_PRIVATE PROT_EXEC
 * mapping opted in with MADV_REPLICATE, compares its mapping and a
 * pread(2) of the whole file with the model.
 *
 *   coherence_fuzz [-g] [-n OPS] [-s SEED]  (or SEED=... in the environment)
 *
 * The last line reads
 *   coherence-fuzz: ops=N replicas_made=N collapses=N wasted=N stale=N seed=S
 * (wasted: replica pages dropped before anyone used them again) and the
 * exit status is 0 only when stale is 0 and every operation ran.  Like
 * every selftest, the fuzzer runs with the thrash guard off (settle_ms 0),
 * so that its file, which it writes all the time, is replicated all the
 * same.  With -g it keeps the guard as it found it, and fails too if more
 * than 5% of the replicas it made were wasted.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fuzz_marker.h"
#include "replica_util.h"

#define FILE_PAGES	32
#define FILE_MAX	(FILE_PAGES * PAGE_SIZE_4K)
#define MAX_NODES	8
#define REPORT_MAX	5

/* What the writers and readers share with the fuzzer. */
struct shared {
	unsigned char data[FILE_MAX];	/* page aligned: O_DIRECT source */
	unsigned char model[FILE_MAX];	/* bytes past size are zero */
	off_t size;
	unsigned long long op;		/* the operation being checked */
	off_t off;
	size_t len;
	int flags;
};

static struct shared *sh;
static const char *path;
static unsigned long long stale, failures;
static uint64_t rng;

static uint64_t next_random(void)
{
	/* xorshift64*: reproducible from the seed on every libc */
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 2685821657736338717ULL;
}

static size_t random_below(size_t n)
{
	return n ? next_random() % n : 0;
}

static void random_bytes(unsigned char *buf, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		buf[i] = next_random() >> 56;
}

/* Writers: each runs in a child bound to a node, on sh->off/len/data. */

static int write_pwrite(void *arg)
{
	int fd = open(path, O_WRONLY);

	(void)arg;
	if (fd < 0 || pwrite(fd, sh->data, sh->len, sh->off) != (ssize_t)sh->len)
		return 1;
	return close(fd) ? 1 : 0;
}

static int write_direct(void *arg)
{
	int fd = open(path, O_WRONLY | O_DIRECT);

	(void)arg;
	if (fd < 0 || pwrite(fd, sh->data, sh->len, sh->off) != (ssize_t)sh->len)
		return 1;
	return close(fd) ? 1 : 0;
}

static int write_truncate(void *arg)
{
	int fd = open(path, O_WRONLY);

	(void)arg;
	if (fd < 0 || ftruncate(fd, sh->off))
		return 1;
	return close(fd) ? 1 : 0;
}

static int write_fallocate(void *arg)
{
	int fd = open(path, O_WRONLY);

	(void)arg;
	if (fd < 0 || fallocate(fd, sh->flags, sh->off, sh->len))
		return 1;
	return close(fd) ? 1 : 0;
}

/* Store through a shared mapping of the file's whole size, then msync. */
static int store_and_sync(int fd, int prot)
{
	size_t maplen = sh->size;
	unsigned char *p;

	p = mmap(NULL, maplen, prot, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return 1;
	if (prot == PROT_READ) {
		/* The descriptor goes first; the mapping stays a writer. */
		if (close(fd) || mprotect(p, maplen, PROT_READ | PROT_WRITE))
			return 1;
	}
	memcpy(p + sh->off, sh->data, sh->len);
	if (msync(p, maplen, MS_SYNC) || munmap(p, maplen))
		return 1;
	return prot == PROT_READ ? 0 : close(fd);
}

static int write_mmap(void *arg)
{
	int fd = open(path, O_RDWR);

	(void)arg;
	return fd < 0 ? 1 : store_and_sync(fd, PROT_READ | PROT_WRITE);
}

static int write_mmap_closed_fd(void *arg)
{
	int fd = open(path, O_RDWR);

	(void)arg;
	return fd < 0 ? 1 : store_and_sync(fd, PROT_READ);
}

/* Readers: one per node, for the whole run. */

struct reader {
	pid_t pid;
	int cmd;	/* write end: 'v' verify, 'q' quit */
	int result;	/* read end: one int, the mismatches found */
};

static struct reader readers[MAX_NODES];
static int nr_nodes;

/* Log the first mismatch of a view, for the replay. */
static int view_mismatch(int node, const char *view, const unsigned char *got,
			 size_t len)
{
	size_t i;

	for (i = 0; i < len; i++) {
		if (got[i] != sh->model[i]) {
			printf("# op %llu: node %d %s: byte %zu is %#x, the file has %#x\n",
			       sh->op, node, view, i, got[i], sh->model[i]);
			return 1;
		}
	}
	return 0;
}

static int reader_job(int node, int cmd, int result)
{
	unsigned char *map, *buf = malloc(FILE_MAX + 1);
	int fd = open(path, O_RDONLY);
	char c;

	if (fd < 0 || !buf)
		return 1;
	map = mmap(NULL, FILE_MAX, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED)
		return 1;
	/* Opted in, for the "madvise" policy. */
	if (madvise(map, FILE_MAX, MADV_REPLICATE) && errno != EINVAL)
		return 1;
	while (read(cmd, &c, 1) == 1 && c == 'v') {
		int bad = 0;
		ssize_t n;

		/* Pages past the end of the file would raise SIGBUS. */
		bad += view_mismatch(node, "mapping", map, sh->size);
		n = pread(fd, buf, FILE_MAX + 1, 0);
		if (n != sh->size) {
			printf("# op %llu: node %d read(2): %zd bytes, the file has %jd\n",
			       sh->op, node, n, (intmax_t)sh->size);
			bad++;
		} else {
			bad += view_mismatch(node, "read(2)", buf, n);
		}
		if (write(result, &bad, sizeof(bad)) != sizeof(bad))
			return 1;
	}
	return 0;
}

static int readers_start(void)
{
	int node;

	for (node = 0; node < nr_nodes; node++) {
		int cmd[2], result[2];
		struct reader *r = &readers[node];

		if (pipe(cmd) || pipe(result))
			return -1;
		r->pid = fork_child();
		if (r->pid < 0)
			return -1;
		if (!r->pid) {
			close(cmd[1]);
			close(result[0]);
			_exit(bind_to_node(node) ? 100 :
			      reader_job(node, cmd[0], result[1]));
		}
		close(cmd[0]);
		close(result[1]);
		r->cmd = cmd[1];
		r->result = result[0];
	}
	return 0;
}

static void readers_stop(void)
{
	int node;

	for (node = 0; node < nr_nodes; node++) {
		if (write(readers[node].cmd, "q", 1) != 1)
			kill(readers[node].pid, SIGKILL);
		waitpid(readers[node].pid, NULL, 0);
	}
}

/* Every node checks its view, in random order; returns mismatches. */
static unsigned long long readers_verify(void)
{
	unsigned long long bad = 0;
	int i, node, first = random_below(nr_nodes);

	for (i = 0; i < nr_nodes; i++) {
		int found;

		node = (first + i) % nr_nodes;
		if (write(readers[node].cmd, "v", 1) != 1 ||
		    read(readers[node].result, &found, sizeof(found)) !=
		    sizeof(found)) {
			printf("# op %llu: the reader on node %d is gone\n",
			       sh->op, node);
			failures++;
			continue;
		}
		bad += found;
	}
	return bad;
}

/* The exec operation: patch the marker of a copy of us, run it. */

static char exe_copy[64];
static off_t marker_offset;

/* File offset of exec_marker, from the mapping that holds it. */
static off_t find_marker_offset(void)
{
	unsigned long start, end, pgoff, addr = (unsigned long)exec_marker;
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");
	off_t off = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx %*s %lx", &start, &end, &pgoff) == 3 &&
		    addr >= start && addr < end) {
			off = addr - start + pgoff;
			break;
		}
	}
	fclose(f);
	return off;
}

static int copy_self(void)
{
	int in = open("/proc/self/exe", O_RDONLY), out;
	char buf[65536];
	ssize_t n;

	snprintf(exe_copy, sizeof(exe_copy), "fuzz-exe.%d", getpid());
	out = open(exe_copy, O_WRONLY | O_CREAT | O_TRUNC, 0755);
	if (in < 0 || out < 0)
		return -1;
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, n) != n)
			return -1;
	close(in);
	return close(out) || n < 0 ? -1 : 0;
}

static char expected_marker[MARKER_DIGITS + 1];

static int exec_job(void *arg)
{
	int p[2];
	pid_t pid;
	char got[MARKER_DIGITS + 2] = "";
	ssize_t n;
	int status;

	(void)arg;
	if (pipe(p))
		return 1;
	pid = fork();
	if (pid < 0)
		return 1;
	if (!pid) {
		dup2(p[1], 1);
		execl(exe_copy, exe_copy, "--print-marker", (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	n = read(p[0], got, sizeof(got) - 1);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status))
		return 1;
	if (n != MARKER_DIGITS || memcmp(got, expected_marker, MARKER_DIGITS)) {
		printf("# op %llu: exec read marker \"%.*s\", the file has \"%s\"\n",
		       sh->op, (int)(n > 0 ? n : 0), got, expected_marker);
		return 2;
	}
	return 0;
}

static int op_exec(void)
{
	int fd, node, rc = 0;

	snprintf(expected_marker, sizeof(expected_marker), "%016llx",
		 (unsigned long long)next_random());
	fd = open(exe_copy, O_WRONLY);
	if (fd < 0 || pwrite(fd, expected_marker, MARKER_DIGITS,
			     marker_offset) != MARKER_DIGITS || close(fd))
		return -1;
	/* Every node runs the patched copy. */
	for (node = 0; node < nr_nodes && !rc; node++)
		rc = run_on_node(node, exec_job, NULL);
	if (rc == 2) {
		stale++;
		return 0;
	}
	return rc ? -1 : 0;
}

/* Policy switches. */

static char policies[MAX_POLICIES][POLICY_NAME_LEN];
static int nr_policies;

/* The operations, in the model and on the file. */

enum op {
	OP_PWRITE,
	OP_DIRECT,
	OP_TRUNCATE,
	OP_PUNCH,
	OP_ZERO,
	OP_MMAP,
	OP_MMAP_CLOSED_FD,
	OP_EXEC,
	OP_DROP_CACHES,
	OP_COMPACT,
	OP_POLICY,
	NR_OPS,
};

static const char *const op_names[NR_OPS] = {
	"pwrite", "O_DIRECT write", "ftruncate", "punch hole", "zero range",
	"MAP_SHARED store", "store after close and mprotect", "exec",
	"drop_caches", "compact a node", "policy switch",
};

/* Pick a range of the file for a write: [off, off + len) within FILE_MAX. */
static void pick_range(size_t align, off_t limit)
{
	size_t units = limit / align;

	sh->off = random_below(units) * align;
	sh->len = (1 + random_below(3 * PAGE_SIZE_4K / align)) * align;
	if (sh->off + sh->len > (size_t)limit)
		sh->len = limit - sh->off;
}

static void model_write(void)
{
	memcpy(sh->model + sh->off, sh->data, sh->len);
	if (sh->off + (off_t)sh->len > sh->size)
		sh->size = sh->off + sh->len;
}

static void model_zero(off_t from, off_t to)
{
	if (to > from)
		memset(sh->model + from, 0, to - from);
}

static int run_writer(int (*job)(void *))
{
	return run_on_node(random_below(nr_nodes), job, NULL);
}

/*
 * One node, not the whole machine: it moves the same kinds of pages at a
 * fraction of the cost under TCG.
 */
static int compact_node(int node)
{
	char path[64];

	snprintf(path, sizeof(path), "/sys/devices/system/node/node%d/compact",
		 node);
	return write_text_file(path, "1");
}

/* Run one random operation; -1 when it could not be carried out. */
static int do_op(enum op op)
{
	off_t end;
	int rc;

	switch (op) {
	case OP_PWRITE:
		pick_range(1, FILE_MAX);
		random_bytes(sh->data, sh->len);
		rc = run_writer(write_pwrite);
		if (!rc)
			model_write();
		return rc ? -1 : 0;
	case OP_DIRECT:
		pick_range(PAGE_SIZE_4K, FILE_MAX);
		random_bytes(sh->data, sh->len);
		rc = run_writer(write_direct);
		if (!rc)
			model_write();
		return rc ? -1 : 0;
	case OP_TRUNCATE:
		sh->off = random_below(FILE_MAX + 1);
		if (run_writer(write_truncate))
			return -1;
		model_zero(sh->off, sh->size);
		sh->size = sh->off;
		return 0;
	case OP_PUNCH:
	case OP_ZERO:
		pick_range(1, FILE_MAX);
		sh->flags = op == OP_PUNCH ?
			FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE :
			FALLOC_FL_ZERO_RANGE |
			(random_below(2) ? FALLOC_FL_KEEP_SIZE : 0);
		if (run_writer(write_fallocate))
			return -1;
		end = sh->off + sh->len;
		model_zero(sh->off, end < sh->size ? end : sh->size);
		if (!(sh->flags & FALLOC_FL_KEEP_SIZE) && end > sh->size)
			sh->size = end;
		return 0;
	case OP_MMAP:
	case OP_MMAP_CLOSED_FD:
		if (!sh->size)
			return 0;
		pick_range(1, sh->size);
		random_bytes(sh->data, sh->len);
		rc = run_writer(op == OP_MMAP ? write_mmap :
				write_mmap_closed_fd);
		if (!rc)
			model_write();
		return rc ? -1 : 0;
	case OP_EXEC:
		return op_exec();
	case OP_DROP_CACHES:
		return drop_all_caches();
	case OP_COMPACT:
		return compact_node(random_below(nr_nodes));
	case OP_POLICY:
		return policy_set(policies[random_below(nr_policies)]);
	default:
		return -1;
	}
}

static void bad_arguments(const char *argv0)
{
	fprintf(stderr, "usage: %s [-g] [-n OPS] [-s SEED]\n", argv0);
	exit(2);
}

int main(int argc, char **argv)
{
	unsigned long long nr_ops = 400, seed, ops;
	long long made0, collapse0, wasted0, made, wasted;
	char prev_policy[32] = "", file[64];
	const char *env = getenv("SEED");
	const char *settle_ms = settle_ms_as_found();
	int opt, fd, guard = 0;

	if (argc == 2 && !strcmp(argv[1], "--print-marker")) {
		fputs(exec_marker, stdout);
		return 0;
	}
	/* Children print too: nothing may sit in a buffer when they fork. */
	setvbuf(stdout, NULL, _IONBF, 0);
	seed = env ? strtoull(env, NULL, 0) :
		(unsigned long long)time(NULL) ^ ((unsigned long long)getpid() << 32);
	while ((opt = getopt(argc, argv, "gn:s:")) != -1) {
		if (opt == 'g')
			guard = 1;
		else if (opt == 'n')
			nr_ops = strtoull(optarg, NULL, 0);
		else if (opt == 's')
			seed = strtoull(optarg, NULL, 0);
		else
			bad_arguments(argv[0]);
	}
	printf("# coherence-fuzz: seed %llu (replay with SEED=%llu), %llu operations\n",
	       seed, seed, nr_ops);
	rng = seed ? seed : 1;

	nr_nodes = nr_online_nodes();
	if (nr_nodes < 2 || nr_nodes > MAX_NODES) {
		printf("# SKIP: needs 2 to %d NUMA nodes, the guest has %d\n",
		       MAX_NODES, nr_nodes);
		return 4;
	}
	nr_policies = policy_list(policies, MAX_POLICIES);
	if (nr_policies < 1 || policy_get(prev_policy, sizeof(prev_policy))) {
		printf("# SKIP: kernel without CONFIG_MM_REPLICA\n");
		return 4;
	}
	if (guard) {
		if (!*settle_ms || !strcmp(settle_ms, "0")) {
			printf("# SKIP: the thrash guard is off (settle_ms \"%s\")\n",
			       settle_ms);
			return 4;
		}
		if (replica_knob_set("settle_ms", settle_ms))
			return 1;
		printf("# thrash guard on: settle_ms %s\n", settle_ms);
	}

	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		return 1;
	snprintf(file, sizeof(file), "fuzz.%d", getpid());
	path = file;
	/* The file starts with the size and bytes of a test pattern. */
	fd = make_test_file(path, FILE_PAGES / 2, (unsigned int)seed);
	if (fd < 0)
		return 1;
	close(fd);
	sh->size = FILE_PAGES / 2 * PAGE_SIZE_4K;
	for (off_t i = 0; i < sh->size; i++)
		sh->model[i] = pattern_byte((unsigned int)seed, i);
	marker_offset = find_marker_offset();
	if (marker_offset < 0 || copy_self()) {
		printf("# cannot make a copy of this program to exec\n");
		return 1;
	}
	snprintf(expected_marker, sizeof(expected_marker), "%s", exec_marker);
	if (readers_start())
		return 1;

	made0 = vmstat_read("replica_alloc");
	collapse0 = vmstat_read("replica_collapse");
	wasted0 = vmstat_read("replica_wasted");
	stale += readers_verify();
	for (sh->op = 1; sh->op <= nr_ops; sh->op++) {
		enum op op = random_below(NR_OPS);

		if (do_op(op)) {
			printf("# op %llu: %s failed: %s\n", sh->op,
			       op_names[op], strerror(errno));
			failures++;
		} else {
			stale += readers_verify();
		}
		if (failures || stale >= REPORT_MAX)
			break;
	}
	ops = sh->op > nr_ops ? nr_ops : sh->op;
	readers_stop();
	policy_set(prev_policy);
	unlink(path);
	unlink(exe_copy);

	made = vmstat_read("replica_alloc") - made0;
	wasted = vmstat_read("replica_wasted") - wasted0;
	if (guard && wasted * 20 > made) {
		printf("# thrash guard: %lld of %lld replica pages wasted, over 5%%\n",
		       wasted, made);
		failures++;
	}
	printf("coherence-fuzz: ops=%llu replicas_made=%lld collapses=%lld",
	       ops, made, vmstat_read("replica_collapse") - collapse0);
	printf(" wasted=%lld stale=%llu seed=%llu\n", wasted, stale, seed);
	return stale || failures ? 1 : 0;
}
