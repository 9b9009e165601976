// SPDX-License-Identifier: GPL-2.0
/*
 * Helpers shared by the replication selftests.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/mempolicy.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "replica_util.h"

long sys_move_pages(int pid, unsigned long count, void **pages,
		    const int *nodes, int *status, int flags)
{
	return syscall(SYS_move_pages, pid, count, pages, nodes, status, flags);
}

static long sys_set_mempolicy(int mode, const unsigned long *nodemask,
			      unsigned long maxnode)
{
	return syscall(SYS_set_mempolicy, mode, nodemask, maxnode);
}

int nr_online_nodes(void)
{
	char buf[64];
	int first, last, n;
	FILE *f = fopen("/sys/devices/system/node/online", "r");

	if (!f)
		return 1;
	if (!fgets(buf, sizeof(buf), f)) {
		fclose(f);
		return 1;
	}
	fclose(f);
	n = sscanf(buf, "%d-%d", &first, &last);
	if (n == 2)
		return last - first + 1;
	return 1;
}

/* Open @name ("cpulist", "meminfo", ...) in node @node's sysfs folder. */
static FILE *node_file_open(int node, const char *name)
{
	char path[96];

	snprintf(path, sizeof(path), "/sys/devices/system/node/node%d/%s",
		 node, name);
	return fopen(path, "r");
}

int node_cpus(int node, cpu_set_t *set)
{
	char buf[256], *tok, *save;
	FILE *f = node_file_open(node, "cpulist");

	if (!f)
		return -1;
	if (!fgets(buf, sizeof(buf), f)) {
		fclose(f);
		return -1;
	}
	fclose(f);
	CPU_ZERO(set);
	for (tok = strtok_r(buf, ",\n", &save); tok;
	     tok = strtok_r(NULL, ",\n", &save)) {
		int a, b;

		if (sscanf(tok, "%d-%d", &a, &b) != 2) {
			a = atoi(tok);
			b = a;
		}
		for (; a <= b; a++)
			CPU_SET(a, set);
	}
	return CPU_COUNT(set) ? 0 : -1;
}

int bind_to_node(int node)
{
	unsigned long mask = 1UL << node;
	cpu_set_t set;

	if (node_cpus(node, &set))
		return -1;
	if (sched_setaffinity(0, sizeof(set), &set))
		return -1;
	return sys_set_mempolicy(MPOL_BIND, &mask, sizeof(mask) * 8);
}

int unbind_from_nodes(void)
{
	long cpu, cpus = sysconf(_SC_NPROCESSORS_CONF);
	cpu_set_t set;

	CPU_ZERO(&set);
	for (cpu = 0; cpu < cpus && cpu < CPU_SETSIZE; cpu++)
		CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		return -1;
	return sys_set_mempolicy(MPOL_DEFAULT, NULL, 0);
}

int page_nodes(void *addr, size_t npages, int *status)
{
	long page = sysconf(_SC_PAGESIZE);
	void **pages = calloc(npages, sizeof(*pages));
	size_t i;
	long ret;

	if (!pages)
		return -1;
	for (i = 0; i < npages; i++)
		pages[i] = (char *)addr + i * page;
	ret = sys_move_pages(0, npages, pages, NULL, status, 0);
	free(pages);
	return ret ? -1 : 0;
}

size_t count_on_node(const int *status, size_t npages, int node)
{
	size_t i, n = 0;

	for (i = 0; i < npages; i++)
		n += status[i] == node;
	return n;
}

int drop_file_cache(int fd)
{
	if (fdatasync(fd))
		return -1;
	return posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) ? -1 : 0;
}

int make_test_file(const char *path, size_t npages, unsigned int seed)
{
	size_t len = npages * PAGE_SIZE_4K;
	unsigned char *buf = malloc(len);
	ssize_t done;
	size_t i;
	int fd;

	if (!buf)
		return -1;
	for (i = 0; i < len; i++)
		buf[i] = pattern_byte(seed, i);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0) {
		free(buf);
		return -1;
	}
	done = write(fd, buf, len);
	free(buf);
	if (done != (ssize_t)len || drop_file_cache(fd)) {
		close(fd);
		return -1;
	}
	close(fd);
	fd = open(path, O_RDONLY);
	if (fd >= 0 && posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED)) {
		close(fd);
		return -1;
	}
	return fd;
}

unsigned long touch_pages(const unsigned char *p, size_t len)
{
	unsigned long sum = 0;
	size_t i;

	/* Atomic loads: the compiler may not drop them even when inlined. */
	for (i = 0; i < len; i += PAGE_SIZE_4K)
		sum += __atomic_load_n(&p[i], __ATOMIC_RELAXED);
	return sum;
}

int read_whole_file(int fd)
{
	char buf[65536];
	off_t off = 0;
	ssize_t n;

	while ((n = pread(fd, buf, sizeof(buf), off)) > 0)
		off += n;
	return n < 0 ? -1 : 0;
}

off_t pattern_mismatch(const unsigned char *buf, size_t len, off_t start,
		       unsigned int seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (buf[i] != pattern_byte(seed, start + i))
			return start + i;
	return -1;
}

pid_t fork_child(void)
{
	pid_t parent = getpid(), pid = fork();

	if (pid == 0) {
		/* Never outlive a test that failed an assertion. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(102);
	}
	return pid;
}

int run_on_node_timeout(int node, int (*fn)(void *arg), void *arg,
			int seconds)
{
	int status, waited;
	pid_t pid = fork_child();

	if (pid < 0)
		return -1;
	if (pid == 0) {
		if (bind_to_node(node)) {
			fprintf(stderr, "cannot bind to node %d: %s\n", node,
				strerror(errno));
			_exit(100);
		}
		_exit(fn(arg));
	}
	for (waited = 0; ; waited++) {
		pid_t got = waitpid(pid, &status, seconds ? WNOHANG : 0);

		if (got == pid)
			break;
		if (got < 0)
			return -1;
		if (waited >= seconds * 10) {
			/* A task asleep in the kernel for good stays there. */
			kill(pid, SIGKILL);
			fprintf(stderr, "job on node %d: no answer in %d s\n",
				node, seconds);
			return RUN_TIMED_OUT;
		}
		usleep(100000);
	}
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

int run_on_node(int node, int (*fn)(void *arg), void *arg)
{
	return run_on_node_timeout(node, fn, arg, 0);
}

/*
 * Page counts are kept per CPU and folded into the node's total now and
 * then; fold them now, so that counts are exact (root only).
 */
static void vmstat_refresh(void)
{
	int fd = open("/proc/sys/vm/stat_refresh", O_WRONLY);

	if (fd >= 0) {
		if (write(fd, "1", 1) != 1)
			perror("stat_refresh");
		close(fd);
	}
}

/*
 * The value of @name in an open file of "name value" lines, which it
 * closes; the counters are refreshed first, since such a file is made
 * when it is read.
 */
static long long read_vmstat_file(FILE *f, const char *name)
{
	long long val = -1, found;
	char key[128];

	if (!f)
		return -1;
	vmstat_refresh();
	while (fscanf(f, "%127s %lld", key, &found) == 2) {
		if (!strcmp(key, name)) {
			val = found;
			break;
		}
	}
	fclose(f);
	return val;
}

long long vmstat_read(const char *name)
{
	return read_vmstat_file(fopen("/proc/vmstat", "r"), name);
}

int vmstat_fold(void)
{
	return write_text_file("/proc/sys/vm/stat_refresh", "1");
}

long long node_vmstat_read(int node, const char *name)
{
	return read_vmstat_file(node_file_open(node, "vmstat"), name);
}

/*
 * The lines of @n @keys in one read of a meminfo file, each line prefixed
 * by @skip fields, into @kb (-1 where absent): one read, so that figures
 * that si_mem_available() derives from each other are of one instant.
 */
static int read_meminfo_keys(FILE *f, int skip, const char *const *keys,
			     long long *kb, int n)
{
	char line[256], *p;
	size_t klen;
	int i, k;

	for (k = 0; k < n; k++)
		kb[k] = -1;
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		p = line;
		for (i = 0; i < skip && p; i++) {
			p = strchr(p, ' ');
			p = p ? p + strspn(p, " ") : NULL;
		}
		for (k = 0; p && k < n; k++) {
			klen = strlen(keys[k]);
			if (!strncmp(p, keys[k], klen) && p[klen] == ':')
				sscanf(p + klen + 1, "%lld", &kb[k]);
		}
	}
	fclose(f);
	return 0;
}

int meminfo_snapshot(const char *const *keys, long long *kb, int n)
{
	return read_meminfo_keys(fopen("/proc/meminfo", "r"), 0, keys, kb, n);
}

long long meminfo_kb(const char *key)
{
	long long kb;

	meminfo_snapshot(&key, &kb, 1);
	return kb;
}

long long node_meminfo_kb(int node, const char *key)
{
	long long kb;

	/* "Node 1 MemFree: ..." */
	read_meminfo_keys(node_file_open(node, "meminfo"), 2, &key, &kb, 1);
	return kb;
}

long node_free_pages(int node)
{
	long long kb = node_meminfo_kb(node, "MemFree");

	return kb < 0 ? -1 : kb / 4;
}

long node_zoneinfo(int node, const char *field)
{
	char line[256], key[32];
	long total = 0, val;
	int cur = -1, n;
	FILE *f = fopen("/proc/zoneinfo", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "Node %d, zone", &n) == 1)
			cur = n;
		else if (cur == node &&
			 sscanf(line, " %31s %ld", key, &val) == 2 &&
			 !strcmp(key, field))
			total += val;
	}
	fclose(f);
	return total;
}

long node_pcp_free_pages(int node)
{
	/* Each CPU's "count:" line under the zones' "pagesets". */
	return node_zoneinfo(node, "count:");
}

long node_free_in_blocks(int node, unsigned int order)
{
	char line[512];
	long total = 0;
	FILE *f = fopen("/proc/buddyinfo", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned int o = 0;
		char *pos;
		int n, used;

		if (sscanf(line, "Node %d, zone %*s%n", &n, &used) != 1 ||
		    n != node)
			continue;
		for (pos = line + used; ; pos += used, o++) {
			long blocks;

			if (sscanf(pos, "%ld%n", &blocks, &used) != 1)
				break;
			if (o >= order)
				total += blocks << o;
		}
	}
	fclose(f);
	return total;
}

long node_wait_room_above_high(int node, long pages, int seconds)
{
	long room = 0;
	int tick;

	for (tick = 0; tick <= seconds * 10; tick++) {
		room = node_free_pages(node) - node_zoneinfo(node, "high");
		if (room >= pages)
			break;
		usleep(100 * 1000);
	}
	return room;
}

long long replica_pages_total(void)
{
	return vmstat_read("nr_replica_pages");
}

int policy_get(char *buf, size_t len)
{
	char line[256], *open, *close;
	FILE *f = fopen("/sys/kernel/mm/replica/policy", "r");

	if (!f)
		return -1;
	if (!fgets(line, sizeof(line), f)) {
		fclose(f);
		return -1;
	}
	fclose(f);
	open = strchr(line, '[');
	close = open ? strchr(open, ']') : NULL;
	if (!close)
		return -1;
	*close = '\0';
	snprintf(buf, len, "%s", open + 1);
	return 0;
}

int policy_list(char names[][POLICY_NAME_LEN], int max)
{
	char list[256], *word, *save;
	int n = 0;

	if (read_text_file("/sys/kernel/mm/replica/policy", list, sizeof(list)))
		return -1;
	for (word = strtok_r(list, " []\n", &save); word && n < max;
	     word = strtok_r(NULL, " []\n", &save))
		snprintf(names[n++], POLICY_NAME_LEN, "%s", word);
	return n;
}

void show_file_tail(const char *path, int max_lines)
{
	char line[512];
	FILE *f = fopen(path, "r");
	int left = 0;

	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		left++;
	rewind(f);
	/* The end of it, where a failure shows. */
	while (fgets(line, sizeof(line), f))
		if (left-- <= max_lines)
			printf("#   %s", line);
	fclose(f);
}

int write_text_file(const char *path, const char *text)
{
	ssize_t len = strlen(text), done;
	int fd = open(path, O_WRONLY);

	if (fd < 0)
		return -1;
	done = write(fd, text, len);
	close(fd);
	return done == len ? 0 : -1;
}

int policy_set(const char *name)
{
	return write_text_file("/sys/kernel/mm/replica/policy", name);
}

int read_text_file(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	return 0;
}

int replica_knob_get(const char *knob, char *buf, size_t len)
{
	char path[128];

	snprintf(path, sizeof(path), "/sys/kernel/mm/replica/%s", knob);
	return read_text_file(path, buf, len);
}

int replica_knob_set(const char *knob, const char *value)
{
	char path[128];
	int fd, err = 0;

	snprintf(path, sizeof(path), "/sys/kernel/mm/replica/%s", knob);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return errno;
	if (write(fd, value, strlen(value)) < 0)
		err = errno;
	close(fd);
	return err;
}

static char settle_found[16];
static pid_t settle_owner;

const char *settle_ms_as_found(void)
{
	return settle_found;
}

/* Only the process that turned the guard off: children exit too. */
static void settle_ms_restore(void)
{
	if (getpid() == settle_owner)
		replica_knob_set("settle_ms", settle_found);
}

__attribute__((constructor)) static void settle_ms_off(void)
{
	if (replica_knob_get("settle_ms", settle_found, sizeof(settle_found))) {
		settle_found[0] = '\0';
		return;
	}
	settle_found[strcspn(settle_found, "\n")] = '\0';
	if (replica_knob_set("settle_ms", "0"))
		return;
	settle_owner = getpid();
	atexit(settle_ms_restore);
}

int drop_all_caches(void)
{
	sync();
	return write_text_file("/proc/sys/vm/drop_caches", "3");
}

int page_pfns(void *addr, size_t npages, unsigned long long *pfns)
{
	long page = sysconf(_SC_PAGESIZE);
	off_t off = (unsigned long)addr / page * sizeof(unsigned long long);
	ssize_t want = npages * sizeof(unsigned long long);
	int fd = open("/proc/self/pagemap", O_RDONLY);
	size_t i;

	if (fd < 0)
		return -1;
	if (pread(fd, pfns, want, off) != want) {
		close(fd);
		return -1;
	}
	close(fd);
	for (i = 0; i < npages; i++)
		pfns[i] &= (1ULL << 55) - 1;
	return 0;
}

static int touch_self_job(void *arg)
{
	char line[512], path[256];
	unsigned long start, end;
	unsigned long sum = 0;
	FILE *f = fopen("/proc/self/maps", "r");

	(void)arg;
	if (!f)
		return 1;
	while (fgets(line, sizeof(line), f)) {
		path[0] = '\0';
		if (sscanf(line, "%lx-%lx %*s %*s %*s %*s %255s", &start, &end,
			   path) < 3 || path[0] != '/')
			continue;
		sum += touch_pages((const unsigned char *)start, end - start);
	}
	fclose(f);
	return sum == 1 ? 2 : 0;
}

int warm_self_on_node(int node)
{
	return run_on_node(node, touch_self_job, NULL);
}

static int read_file_job(void *arg)
{
	return read_whole_file(*(int *)arg) ? 1 : 0;
}

int cache_file_on_node(int fd, int node)
{
	return run_on_node(node, read_file_job, &fd);
}

int policy_require(const char *name, char *prev, size_t len)
{
	if (policy_get(prev, len))
		return -1;
	if (!strcmp(prev, name))
		return 0;
	return policy_set(name);
}

struct holder_args {
	struct holder *h;
	int fd;
	int how;
	int ready;	/* write end */
	int release;	/* read end */
};

static int holder_job(void *arg)
{
	struct holder_args *a = arg;
	struct holder *h = a->h;
	size_t len = h->npages * PAGE_SIZE_4K;
	unsigned char *p;
	char c;

	p = mmap(NULL, len, PROT_READ | (a->how & HOLD_EXEC ? PROT_EXEC : 0),
		 MAP_PRIVATE, a->fd, 0);
	if (p == MAP_FAILED)
		return 2;
	if (a->how & HOLD_ADVISED && madvise(p, len, MADV_REPLICATE))
		return 3;
	if (a->how & HOLD_NOHUGEPAGE && madvise(p, len, MADV_NOHUGEPAGE))
		return 3;
	touch_pages(p, len);
	if (a->how & HOLD_MLOCK && mlock(p, len))
		return 3;
	if (page_nodes(p, h->npages, h->status) || write(a->ready, "r", 1) != 1)
		return 4;
	/* Hold the mapping until told, or until the test is gone. */
	if (read(a->release, &c, 1) != 1)
		return 5;
	if (page_nodes(p, h->npages, h->status + h->npages))
		return 6;
	touch_pages(p, len);
	if (page_nodes(p, h->npages, h->status + 2 * h->npages))
		return 7;
	return pattern_mismatch(p, len, 0, h->seed) >= 0 ? 8 : 0;
}

int holder_start(struct holder *h, int fd, size_t npages, unsigned int seed,
		 int node, int how)
{
	struct holder_args a = { .h = h, .fd = fd, .how = how };
	int ready[2], release[2];
	char c;

	h->npages = npages;
	h->seed = seed;
	h->status = mmap(NULL, 3 * npages * sizeof(int), PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (h->status == MAP_FAILED || pipe(ready) || pipe(release))
		return -1;
	a.ready = ready[1];
	a.release = release[0];
	h->pid = fork_child();
	if (h->pid < 0)
		return -1;
	if (!h->pid) {
		close(release[1]);
		close(ready[0]);
		_exit(run_on_node(node, holder_job, &a));
	}
	close(ready[1]);
	close(release[0]);
	h->release = release[1];
	/* EOF instead of a byte: the holder failed. */
	if (read(ready[0], &c, 1) != 1) {
		close(ready[0]);
		holder_finish(h);
		return -1;
	}
	close(ready[0]);
	return 0;
}

int holder_finish(struct holder *h)
{
	int status;

	if (write(h->release, "g", 1) != 1)
		status = -1;
	close(h->release);
	if (waitpid(h->pid, &status, 0) != h->pid)
		return -1;
	if (!WIFEXITED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

#define CGROUP_ROOT	"/sys/fs/cgroup"

int cgroup_create_tagged(char *path, size_t len, const char *tag)
{
	if (access(CGROUP_ROOT "/cgroup.controllers", F_OK) &&
	    mount("cgroup2", CGROUP_ROOT, "cgroup2", 0, NULL))
		return -1;
	if (write_text_file(CGROUP_ROOT "/cgroup.subtree_control", "+memory"))
		return -1;
	snprintf(path, len, CGROUP_ROOT "/replica.%d%s%s", getpid(),
		 tag ? "." : "", tag ? tag : "");
	return mkdir(path, 0755);
}

int cgroup_create(char *path, size_t len)
{
	return cgroup_create_tagged(path, len, NULL);
}

int cgroup_leave(void)
{
	return cgroup_enter(CGROUP_ROOT);
}

int cgroup_enter(const char *path)
{
	char procs[256], pid[32];

	snprintf(procs, sizeof(procs), "%s/cgroup.procs", path);
	snprintf(pid, sizeof(pid), "%d", getpid());
	return write_text_file(procs, pid);
}

unsigned char *cgroup_map_touched(const char *cgroup, int fd, size_t len)
{
	unsigned char *p;

	if (cgroup && cgroup_enter(cgroup))
		return NULL;
	p = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
	if (p == MAP_FAILED)
		return NULL;
	if (madvise(p, len, MADV_NOHUGEPAGE)) {
		munmap(p, len);
		return NULL;
	}
	touch_pages(p, len);
	return p;
}

void cgroup_remove(const char *path)
{
	if (cgroup_leave() || rmdir(path))
		perror("cgroup_remove");
}

long long cgroup_read(const char *path, const char *file)
{
	char name[256];
	long long val = -1;
	FILE *f;

	snprintf(name, sizeof(name), "%s/%s", path, file);
	f = fopen(name, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%lld", &val) != 1)
		val = -1;
	fclose(f);
	return val;
}

long long cgroup_read_key(const char *path, const char *file, const char *key)
{
	char name[256];

	snprintf(name, sizeof(name), "%s/%s", path, file);
	return read_vmstat_file(fopen(name, "r"), key);
}

int cgroup_write(const char *path, const char *file, const char *text)
{
	char name[256];

	snprintf(name, sizeof(name), "%s/%s", path, file);
	return write_text_file(name, text);
}

int cgroup_file_setup(struct cgroup_file *cf, const char *name, size_t npages,
		      unsigned int seed, char *why, size_t whylen)
{
	memset(cf, 0, sizeof(*cf));
	cf->fd = -1;
	if (nr_online_nodes() < 2) {
		snprintf(why, whylen, "needs 2 NUMA nodes, the guest has %d",
			 nr_online_nodes());
		return 1;
	}
	if (cgroup_create(cf->cgroup, sizeof(cf->cgroup))) {
		snprintf(why, whylen, "no memory cgroup: %s", strerror(errno));
		cf->cgroup[0] = '\0';
		return 1;
	}
	if (policy_require("private", cf->prev_policy,
			   sizeof(cf->prev_policy))) {
		snprintf(why, whylen,
			 "no replication policy \"private\" in this kernel");
		cgroup_remove(cf->cgroup);
		cf->cgroup[0] = '\0';
		cf->prev_policy[0] = '\0';
		return 1;
	}
	cf->shared = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (cf->shared == MAP_FAILED)
		return -1;
	snprintf(cf->path, sizeof(cf->path), "%s.%d", name, getpid());
	cf->fd = make_test_file(cf->path, npages, seed);
	return cf->fd < 0 ? -1 : 0;
}

void cgroup_file_teardown(struct cgroup_file *cf)
{
	if (cf->fd >= 0) {
		unlink(cf->path);
		drop_all_caches();
	}
	if (cf->cgroup[0])
		cgroup_remove(cf->cgroup);
	if (cf->prev_policy[0])
		policy_set(cf->prev_policy);
}

/*
 * Wait up to @seconds for kswapd to stop: after a test that filled a
 * node, it may go on reclaiming there (a boosted watermark keeps it past
 * the high one), and it takes replicas first, as soon as they are made.
 */
static void kswapd_wait_idle(int seconds)
{
	long long scanned = vmstat_read("pgscan_kswapd"), now;
	int tick;

	for (tick = 0; tick < seconds * 4; tick++) {
		usleep(250 * 1000);
		now = vmstat_read("pgscan_kswapd");
		if (now == scanned)
			return;
		scanned = now;
	}
}

long room_then_cache(int node, long pages, int fd, int cache_node)
{
	long room;

	if (drop_all_caches())
		return -1;
	room = node_wait_room_above_high(node, pages, 30);
	if (room < pages)
		return room;
	kswapd_wait_idle(10);
	return cache_file_on_node(fd, cache_node) ? -1 : room;
}

int smaps_field(void *addr, const char *field, char *buf, size_t len)
{
	unsigned long start, end, want = (unsigned long)addr;
	size_t flen = strlen(field);
	int found = 0;
	char line[256];
	FILE *f = fopen("/proc/self/smaps", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx ", &start, &end) == 2 &&
		    strchr(line, '-') < strchr(line, ' ')) {
			found = want >= start && want < end;
			continue;
		}
		if (found && !strncmp(line, field, flen) && line[flen] == ':') {
			snprintf(buf, len, "%s", line + flen + 1);
			fclose(f);
			return 0;
		}
	}
	fclose(f);
	return -1;
}
