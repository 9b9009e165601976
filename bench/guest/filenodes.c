// SPDX-License-Identifier: GPL-2.0
/*
 * filenodes NODE [FILE...]: where the page cache of each FILE (one a line
 * on stdin when none is named) lives, from
 * /proc/self/numa_maps once the file is mapped and every page of it
 * touched.  Run under replication policy none, so that the mapping shows
 * the page cache itself.  Prints
 *   filenodes: N files, P pages, Q on node NODE
 * and exits 1 when a page of some file is elsewhere (naming the file).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define PAGE	4096

/* Pages of the mapping at @addr on @node and on any node, from numa_maps. */
static int mapped_pages(void *addr, int node, long *on_node, long *all)
{
	char line[4096], start[32];
	FILE *f = fopen("/proc/self/numa_maps", "r");
	int found = -1;

	if (!f)
		return -1;
	snprintf(start, sizeof(start), "%lx ", (unsigned long)addr);
	while (fgets(line, sizeof(line), f)) {
		char *word;

		if (strncmp(line, start, strlen(start)))
			continue;
		found = 0;
		for (word = strtok(line, " \n"); word;
		     word = strtok(NULL, " \n")) {
			int n;
			long pages;

			if (sscanf(word, "N%d=%ld", &n, &pages) != 2)
				continue;
			*all += pages;
			if (n == node)
				*on_node += pages;
		}
		break;
	}
	fclose(f);
	return found;
}

/* The next file to look at: argv[*i], or a line of stdin. */
static const char *next_file(int argc, char **argv, int *i)
{
	static char line[4096];
	size_t len;

	if (argc > 2)
		return *i < argc ? argv[(*i)++] : NULL;
	if (!fgets(line, sizeof(line), stdin))
		return NULL;
	len = strlen(line);
	if (len && line[len - 1] == '\n')
		line[len - 1] = 0;
	return line;
}

int main(int argc, char **argv)
{
	long pages = 0, local = 0, files = 0;
	int node, i = 2, bad = 0;
	const char *path;

	if (argc < 2) {
		fprintf(stderr, "usage: filenodes NODE [FILE...]\n");
		return 2;
	}
	node = atoi(argv[1]);
	while ((path = next_file(argc, argv, &i))) {
		long before = pages, before_local = local;
		volatile const char *p;
		struct stat st;
		off_t off;
		int fd;

		fd = open(path, O_RDONLY);
		if (fd < 0 || fstat(fd, &st)) {
			perror(path);
			return 2;
		}
		if (!S_ISREG(st.st_mode) || !st.st_size) {
			close(fd);
			continue;
		}
		p = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		close(fd);
		if (p == MAP_FAILED) {
			perror(path);
			return 2;
		}
		for (off = 0; off < st.st_size; off += PAGE)
			(void)p[off];
		if (mapped_pages((void *)p, node, &local, &pages)) {
			fprintf(stderr, "filenodes: %s: not in numa_maps\n",
				path);
			return 2;
		}
		munmap((void *)p, st.st_size);
		files++;
		if (pages - before != local - before_local) {
			printf("filenodes: %s: %ld of %ld pages on node %d\n",
			       path, local - before_local, pages - before,
			       node);
			bad = 1;
		}
	}
	printf("filenodes: %ld files, %ld pages, %ld on node %d\n", files,
	       pages, local, node);
	return bad;
}
