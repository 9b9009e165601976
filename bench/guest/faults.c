// SPDX-License-Identifier: GPL-2.0
/*
 * faults FILE NODE LABEL: map FILE MAP_PRIVATE from the first CPU of NODE
 * and read one byte of each of its pages, between numa-model's begin and
 * end marks; print the label, the pages and the minor faults taken, so
 * that the model's instructions can be divided by either.
 *
 * faults --cache FILE NODE: read FILE with read(2) from NODE, so that its
 * page cache lives there.
 */
#include "node.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../numa-model/marker.h"

static long minor_faults(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_minflt;
}

int main(int argc, char **argv)
{
	long page = sysconf(_SC_PAGESIZE), before, after;
	volatile unsigned char sum = 0;
	unsigned char *p;
	struct stat st;
	size_t pages, i;
	int fd;

	if (argc == 4 && !strcmp(argv[1], "--cache")) {
		fd = open(argv[2], O_RDONLY);
		if (fd < 0 || cache_file_on_node(fd, atoi(argv[3]))) {
			perror(argv[2]);
			return 1;
		}
		close(fd);
		return 0;
	}
	if (argc != 4) {
		fprintf(stderr, "usage: %s FILE NODE LABEL | --cache FILE NODE\n",
			argv[0]);
		return 2;
	}
	if (pin_to_node(atoi(argv[2]))) {
		perror("node");
		return 1;
	}
	fd = open(argv[1], O_RDONLY);
	if (fd < 0 || fstat(fd, &st)) {
		perror(argv[1]);
		return 1;
	}
	pages = st.st_size / page;
	p = mmap(NULL, pages * page, PROT_READ, MAP_PRIVATE, fd, 0);
	if (p == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	before = minor_faults();
	NUMA_MODEL_BEGIN();
	for (i = 0; i < pages; i++)
		sum += p[i * page];
	NUMA_MODEL_END();
	after = minor_faults();
	printf("faults: %s pages=%zu minflt=%ld\n", argv[3], pages,
	       after - before);
	munmap(p, pages * page);
	close(fd);
	return 0;
}
