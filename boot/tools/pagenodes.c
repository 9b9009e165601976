// SPDX-License-Identifier: GPL-2.0
/*
 * pagenodes: where the executable file pages of running processes live.
 *
 *   pagenodes PID...
 *
 * For every executable file mapping of each process, prints how many of
 * its pages are mapped and on which NUMA node each lives, asking
 * move_pages(2) with a NULL node list (which faults nothing in).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MAX_NODES	64
#define PAGE		4096UL

static int page_node(int pid, unsigned long addr)
{
	void *page = (void *)addr;
	int status;

	if (syscall(SYS_move_pages, pid, 1UL, &page, NULL, &status, 0))
		return -errno;
	return status;
}

static int show(int pid)
{
	char path[64], line[1024], file[512], comm[64] = "?";
	unsigned long start, end, addr;
	int on[MAX_NODES], mapped, node, max_node;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	f = fopen(path, "r");
	if (f) {
		if (fgets(comm, sizeof(comm), f))
			comm[strcspn(comm, "\n")] = '\0';
		fclose(f);
	}
	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "r");
	if (!f) {
		fprintf(stderr, "pagenodes: no process %d\n", pid);
		return 1;
	}
	printf("  %s (pid %d):\n", comm, pid);
	while (fgets(line, sizeof(line), f)) {
		char perms[8];

		if (sscanf(line, "%lx-%lx %7s %*s %*s %*s %511s", &start, &end,
			   perms, file) != 4 || perms[2] != 'x' || file[0] != '/')
			continue;
		memset(on, 0, sizeof(on));
		mapped = 0;
		max_node = 0;
		for (addr = start; addr < end; addr += PAGE) {
			node = page_node(pid, addr);
			if (node < 0 || node >= MAX_NODES)
				continue;
			mapped++;
			on[node]++;
			if (node > max_node)
				max_node = node;
		}
		printf("    %-44s %4d text pages mapped:", file, mapped);
		for (node = 0; node <= max_node || node < 2; node++)
			printf(" %4d on node %d", on[node], node);
		printf("\n");
	}
	fclose(f);
	return 0;
}

int main(int argc, char **argv)
{
	int i, err = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: pagenodes PID...\n");
		return 2;
	}
	for (i = 1; i < argc; i++)
		err |= show(atoi(argv[i]));
	return err;
}
