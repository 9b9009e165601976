/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the replication selftests: binding to a NUMA node,
 * asking where mapped pages live, and making files whose page cache sits
 * on a chosen node.
 */
#ifndef REPLICA_UTIL_H
#define REPLICA_UTIL_H

#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <unistd.h>

#define PAGE_SIZE_4K	4096UL

/* The libc headers may not know them yet: the kernel's uapi values. */
#ifndef MADV_REPLICATE
#define MADV_REPLICATE		26
#define MADV_NOREPLICATE	27
#endif

/* move_pages(2), without libnuma. */
long sys_move_pages(int pid, unsigned long count, void **pages,
		    const int *nodes, int *status, int flags);

/* Number of online NUMA nodes; nodes are assumed numbered 0..n-1. */
int nr_online_nodes(void);

/* The CPUs of @node, from sysfs: 0, or -1 if it has none. */
int node_cpus(int node, cpu_set_t *set);

/* Move the calling task to @node: its CPUs and its memory (MPOL_BIND). */
int bind_to_node(int node);

/* Undo any binding: every CPU, memory from any node (MPOL_DEFAULT). */
int unbind_from_nodes(void);

/*
 * Where the pages of [addr, addr + npages * page size) live, without
 * faulting anything in: move_pages(2) with a NULL node list.  status[i] is
 * the node, or a negative errno (-ENOENT: not mapped).
 */
int page_nodes(void *addr, size_t npages, int *status);

/* How many of @npages status entries equal @node. */
size_t count_on_node(const int *status, size_t npages, int node);

/* Byte @off of the reference content of a test file made with @seed. */
static inline unsigned char pattern_byte(unsigned int seed, off_t off)
{
	unsigned long x = (unsigned long)off * 2654435761UL + seed;

	return (unsigned char)(x >> 7);
}

/*
 * Create @path with @npages pages of pattern_byte(@seed) content, written
 * back and dropped from the page cache, so that the next reader decides
 * where its page cache lives.  Returns an O_RDONLY descriptor or -1.
 */
int make_test_file(const char *path, size_t npages, unsigned int seed);

/* Drop the clean page cache of @fd (fdatasync + POSIX_FADV_DONTNEED). */
int drop_file_cache(int fd);

/* Fault in every page of [p, p + len) with a read access. */
unsigned long touch_pages(const unsigned char *p, size_t len);

/* Read all of @fd with read(2), so its page cache is filled by the caller. */
int read_whole_file(int fd);

/* Fill the page cache of @fd from a task bound to @node; 0 on success. */
int cache_file_on_node(int fd, int node);

/*
 * Make sure replication policy @name is current for a test: returns 0 and
 * the previous policy in @prev, or -1 when the kernel has no replication
 * or refuses the policy.
 */
int policy_require(const char *name, char *prev, size_t len);

/* First offset where @buf differs from the pattern, or -1 if none. */
off_t pattern_mismatch(const unsigned char *buf, size_t len, off_t start,
		       unsigned int seed);

/* fork(2) for a child that is killed when its parent dies. */
pid_t fork_child(void);

/*
 * Run @fn(@arg) in a child process bound to @node and return its exit
 * status (0 on success), or -1 if it could not be run.  Keeps the caller's
 * own placement untouched.
 */
int run_on_node(int node, int (*fn)(void *arg), void *arg);

/* What run_on_node_timeout() returns for a job that did not end in time. */
#define RUN_TIMED_OUT	1000
/*
 * run_on_node(), but give up after @seconds (0: wait for ever): kill the
 * job and return RUN_TIMED_OUT.
 */
int run_on_node_timeout(int node, int (*fn)(void *arg), void *arg,
			int seconds);

/* Value of @name in /proc/vmstat, or -1 if absent. */
long long vmstat_read(const char *name);

/*
 * Fold the per-CPU vmstat counters into the global ones, which lag them
 * by up to a few pages per CPU (/proc/sys/vm/stat_refresh); 0 or -1.
 */
int vmstat_fold(void);

/* Value of @name in node @node's vmstat, or -1 if absent. */
long long node_vmstat_read(int node, const char *name);

/* The "@key: N kB" line of /proc/meminfo, in kB; -1 if absent. */
long long meminfo_kb(const char *key);

/*
 * The @n @keys' lines of one read of /proc/meminfo into @kb, in kB (-1
 * where absent); -1 if it cannot be read.
 */
int meminfo_snapshot(const char *const *keys, long long *kb, int n);

/* The "Node @node @key: N kB" line of the node's meminfo; -1 if absent. */
long long node_meminfo_kb(int node, const char *key);

/* Node @node's free memory in pages, from its meminfo; -1 if unknown. */
long node_free_pages(int node);

/*
 * Node @node's free pages on the per-CPU lists, which its MemFree does
 * not count: thousands when the lists have grown after large frees.
 */
long node_pcp_free_pages(int node);

/* Sum of @field ("present", "managed", "min", "high") over @node's zones. */
long node_zoneinfo(int node, const char *field);

/*
 * Free pages of node @node in free blocks of order @order or larger, from
 * /proc/buddyinfo: what an allocation of that order can be served from.
 */
long node_free_in_blocks(int node, unsigned int order);

/*
 * Wait up to @seconds for node @node to have @pages free above its high
 * watermark, below which no replica is made.  Returns the pages free
 * above it at the end: fewer than @pages on a timeout.
 */
long node_wait_room_above_high(int node, long pages, int seconds);

/* Sum of nr_replica_pages over all nodes. */
long long replica_pages_total(void);

/*
 * The current replication policy, copied into @buf; -1 when the kernel
 * has no /sys/kernel/mm/replica/policy.
 */
int policy_get(char *buf, size_t len);

/* Switch the replication policy; 0 or -1 with errno set. */
int policy_set(const char *name);

#define POLICY_NAME_LEN	32
#define MAX_POLICIES	8

/*
 * The policies /sys/kernel/mm/replica/policy offers, in its order, copied
 * into @names (at most @max); returns how many, or -1 when the kernel has
 * no replication.
 */
int policy_list(char names[][POLICY_NAME_LEN], int max);

/* Print the last @max_lines lines of @path as TAP comments, if it exists. */
void show_file_tail(const char *path, int max_lines);

/* Read the text of @path into @buf, NUL-terminated; 0 or -1. */
int read_text_file(const char *path, char *buf, size_t len);
/* Write @text to @path in one write(2); 0 or -1 with errno set. */
int write_text_file(const char *path, const char *text);

/*
 * Read or write /sys/kernel/mm/replica/@knob.  replica_knob_set() returns
 * 0 or the errno of the failed open or write.
 */
int replica_knob_get(const char *knob, char *buf, size_t len);
int replica_knob_set(const char *knob, const char *value);

/*
 * The selftests make their files and use them at once, which the thrash
 * guard exists to stop replicating: every selftest program sets settle_ms
 * to 0 when it starts and puts back what it found when it exits.  What it
 * found, "" on a kernel without the knob: for the tests of the guard.
 */
const char *settle_ms_as_found(void);

/* echo 3 > /proc/sys/vm/drop_caches */
int drop_all_caches(void);

/* Page frame numbers of the pages at [addr, +npages), from pagemap. */
int page_pfns(void *addr, size_t npages, unsigned long long *pfns);

/*
 * Fault in every page of this program's own file mappings from a child on
 * @node, so that later children on that node find replicas of the test
 * binary already made and counters move only for the files under test.
 */
int warm_self_on_node(int node);

/*
 * A memory cgroup for a test: cgroup_create() mounts cgroup2 if need be,
 * enables the memory controller and makes /sys/fs/cgroup/replica.<pid>
 * (its path in @path); 0, or -1 with errno set.
 */
int cgroup_create(char *path, size_t len);
/* Another one: /sys/fs/cgroup/replica.<pid>.<tag>. */
int cgroup_create_tagged(char *path, size_t len, const char *tag);
/* Move the calling task into @path. */
int cgroup_enter(const char *path);
/*
 * Join @cgroup if set, then map @len bytes of @fd read-only and
 * MAP_PRIVATE, and touch every page; NULL on failure.  The mapping is
 * MADV_NOHUGEPAGE: khugepaged would otherwise collapse the file's
 * originals into read-only huge pages while the caller counts, dropping
 * their replicas, and the next open for write would then truncate the
 * whole page cache (vanilla do_dentry_open()), to be read back on
 * whichever node reads it next.
 */
unsigned char *cgroup_map_touched(const char *cgroup, int fd, size_t len);
/* Move the calling task back to the root cgroup. */
int cgroup_leave(void);
/* Move the calling task back to the root cgroup and remove @path. */
void cgroup_remove(const char *path);
/* A value of a cgroup file, or -1. */
long long cgroup_read(const char *path, const char *file);
/* The value of @key in a cgroup file of "key value" lines, or -1. */
long long cgroup_read_key(const char *path, const char *file, const char *key);
/* Write @text to a cgroup file; 0 or -1 with errno set. */
int cgroup_write(const char *path, const char *file, const char *text);

/**
 * struct cgroup_file - a memory cgroup, a test file and the policy "private"
 * @prev_policy: the policy to switch back to
 * @cgroup: the cgroup's path
 * @path: the file's name
 * @fd: the file, open for reading and writing
 * @shared: a page the test's children write their findings in
 *
 * What the tests of how replicas are charged and counted set up.
 */
struct cgroup_file {
	char prev_policy[32];
	char cgroup[128];
	char path[64];
	int fd;
	long long *shared;
};

/*
 * Set @cf up with a file "@name.<pid>" of @npages pages of pattern @seed:
 * 0; 1 if the guest lacks what the tests need (2 nodes, a memory cgroup,
 * the policy), which @why says, and @cf is undone; -1 if a step failed.
 */
int cgroup_file_setup(struct cgroup_file *cf, const char *name, size_t npages,
		      unsigned int seed, char *why, size_t whylen);
/*
 * Undo it, from any process: the file is unlinked, not closed, and its
 * page cache and replicas dropped.
 */
void cgroup_file_teardown(struct cgroup_file *cf);

/*
 * Wait up to 30 s for @pages free pages above @node's high watermark,
 * below which no replica is made, and up to 10 s more for kswapd to stop
 * reclaiming, then cache @fd on @cache_node.  Returns the room found, in
 * pages, or -1.
 */
long room_then_cache(int node, long pages, int fd, int cache_node);

/*
 * The text after "@field:" in the /proc/self/smaps entry of the mapping
 * that holds @addr, into @buf; 0, or -1 if there is none.
 */
int smaps_field(void *addr, const char *field, char *buf, size_t len);

/**
 * struct holder - a child that keeps a file mapped on a node
 * @pid: the child
 * @release: tells it to go on
 * @npages: pages it maps
 * @seed: pattern its bytes must have
 * @status: where its pages live (shared): [0, n) once it touched them,
 *	[n, 2n) when released, [2n, 3n) after it touched them again
 */
struct holder {
	pid_t pid;
	int release;
	size_t npages;
	unsigned int seed;
	int *status;
};

/* How a holder maps its file. */
#define HOLD_MLOCK	0x1	/* mlock() the mapping once touched */
#define HOLD_EXEC	0x2	/* map it PROT_EXEC */
#define HOLD_ADVISED	0x4	/* madvise(MADV_REPLICATE) before touching */
#define HOLD_NOHUGEPAGE	0x8	/* madvise(MADV_NOHUGEPAGE) before touching */

/*
 * Start a child on @node that maps the first @npages pages of @fd
 * MAP_PRIVATE as @how says (HOLD_*), touches them, records where they
 * live, and holds the mapping until holder_finish().  0 on success.
 */
int holder_start(struct holder *h, int fd, size_t npages, unsigned int seed,
		 int node, int how);

/*
 * Let the holder go: it records where its pages live, touches them again,
 * records that, and checks their bytes against the pattern.  Returns its
 * exit status: 0 when all went well.
 */
int holder_finish(struct holder *h);

#endif
