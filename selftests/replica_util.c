// SPDX-License-Identifier: GPL-2.0
/*
 * Helpers shared by the replication selftests.
 */
#include <errno.h>
#include <fcntl.h>
#include <numaif.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "replica_util.h"

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

static int node_cpus(int node, cpu_set_t *set)
{
	char path[96], buf[256], *tok, *save;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/devices/system/node/node%d/cpulist",
		 node);
	f = fopen(path, "r");
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
	return set_mempolicy(MPOL_BIND, &mask, sizeof(mask) * 8);
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
	ret = move_pages(0, npages, pages, NULL, status, 0);
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

	for (i = 0; i < len; i += PAGE_SIZE_4K)
		sum += p[i];
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

int run_on_node(int node, int (*fn)(void *arg), void *arg)
{
	int status;
	pid_t pid = fork();

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
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

long long vmstat_read(const char *name)
{
	char key[128];
	long long val;
	FILE *f = fopen("/proc/vmstat", "r");

	if (!f)
		return -1;
	while (fscanf(f, "%127s %lld", key, &val) == 2) {
		if (!strcmp(key, name)) {
			fclose(f);
			return val;
		}
	}
	fclose(f);
	return -1;
}
