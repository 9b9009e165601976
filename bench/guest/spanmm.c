// SPDX-License-Identifier: GPL-2.0
/*
 * spanmm FILE LABEL ROUNDS: what mprotect() and munmap() of a mapping cost
 * a process whose threads span two nodes.  A thread on node 0 and one on
 * node 1 share the mm; each round maps FILE (MAP_PRIVATE, PROT_READ |
 * PROT_EXEC, as text), both threads read every page of it, then, between
 * numa-model's begin and end marks, the node-0 thread makes it read-only,
 * executable again, and unmaps it (the shootdowns reach the node-1 CPU).
 * Prints "spanmm: LABEL round=R pages=P" after each.  With FILE "anon",
 * the same on anonymous memory, written by both threads, 4 MiB.
 */
#include "node.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../numa-model/marker.h"

#define ANON_LEN	(4UL << 20)

static pthread_barrier_t step;
static unsigned char *volatile area;
static size_t area_len;
static int anon;
static long page_size;
static int rounds;

/* Every page of the round's mapping: read, or for anonymous memory written. */
static void touch(void)
{
	volatile unsigned char sum = 0;
	size_t i;

	for (i = 0; i < area_len; i += page_size) {
		if (anon)
			area[i] = 1;
		else
			sum += area[i];
	}
}

/* The node-1 thread: touches each round's mapping, then waits. */
static void *node1_thread(void *arg)
{
	int r;

	if (pin_to_node(1)) {
		perror("spanmm: node 1");
		exit(1);
	}
	pthread_barrier_wait(&step);
	for (r = 0; r < rounds; r++) {
		pthread_barrier_wait(&step);	/* mapped */
		touch();
		pthread_barrier_wait(&step);	/* touched */
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int fd = -1, prot, r;
	pthread_t helper;
	struct stat st;

	if (argc != 4) {
		fprintf(stderr, "usage: %s FILE|anon LABEL ROUNDS\n", argv[0]);
		return 2;
	}
	anon = !strcmp(argv[1], "anon");
	rounds = atoi(argv[3]);
	page_size = sysconf(_SC_PAGESIZE);
	if (anon) {
		area_len = ANON_LEN;
		prot = PROT_READ | PROT_WRITE;
	} else {
		fd = open(argv[1], O_RDONLY);
		if (fd < 0 || fstat(fd, &st)) {
			perror(argv[1]);
			return 1;
		}
		area_len = st.st_size;
		prot = PROT_READ | PROT_EXEC;
	}
	if (pin_to_node(0) || pthread_barrier_init(&step, NULL, 2) ||
	    pthread_create(&helper, NULL, node1_thread, NULL)) {
		perror("spanmm: threads");
		return 1;
	}
	pthread_barrier_wait(&step);
	for (r = 0; r < rounds; r++) {
		area = anon ? mmap(NULL, area_len, prot,
				   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) :
			      mmap(NULL, area_len, prot, MAP_PRIVATE, fd, 0);
		if (area == MAP_FAILED) {
			perror("spanmm: mmap");
			return 1;
		}
		pthread_barrier_wait(&step);
		touch();
		pthread_barrier_wait(&step);
		NUMA_MODEL_BEGIN();
		if (mprotect(area, area_len, PROT_READ) ||
		    mprotect(area, area_len, prot) || munmap(area, area_len)) {
			perror("spanmm: mprotect, munmap");
			return 1;
		}
		NUMA_MODEL_END();
		printf("spanmm: %s round=%d pages=%zu\n", argv[2], r,
		       area_len / page_size);
		fflush(stdout);
	}
	pthread_join(helper, NULL);
	return 0;
}
