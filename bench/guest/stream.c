// SPDX-License-Identifier: GPL-2.0
/*
 * stream CPU_NODE MEM_NODE MIB: read MIB MiB placed on MEM_NODE, twice,
 * from a CPU of CPU_NODE, between numa-model's begin and end marks.  The
 * buffer is larger than any modelled cache, so nearly every line of the
 * second pass misses to memory: local when the nodes are the same,
 * remote otherwise.
 */
#include "node.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../numa-model/marker.h"

#define MPOL_BIND	2

int main(int argc, char **argv)
{
	volatile unsigned long sum = 0;
	unsigned long mask;
	size_t len, i;
	int pass, cpu_node, mem_node;
	char *buf;

	if (argc != 4) {
		fprintf(stderr, "usage: %s CPU_NODE MEM_NODE MIB\n", argv[0]);
		return 2;
	}
	cpu_node = atoi(argv[1]);
	mem_node = atoi(argv[2]);
	len = strtoul(argv[3], NULL, 10) << 20;
	mask = 1UL << mem_node;
	if (pin_to_node(cpu_node)) {
		perror("cpu node");
		return 1;
	}
	buf = mmap(NULL, len, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED ||
	    syscall(SYS_mbind, buf, len, MPOL_BIND, &mask, 64, 0)) {
		perror("memory node");
		return 1;
	}
	memset(buf, 1, len);
	NUMA_MODEL_BEGIN();
	for (pass = 0; pass < 2; pass++)
		for (i = 0; i < len; i += 64)
			sum += buf[i];
	NUMA_MODEL_END();
	printf("stream: cpu node %d, memory node %d, %zu MiB\n", cpu_node,
	       mem_node, len >> 20);
	return 0;
}
