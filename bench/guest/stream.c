// SPDX-License-Identifier: GPL-2.0
/*
 * stream CPU_NODE MEM_NODE MIB: read MIB MiB placed on MEM_NODE, twice,
 * from a CPU of CPU_NODE, between numa-model's begin and end marks.  The
 * buffer is larger than any modelled cache, so nearly every line of the
 * second pass misses to memory: local when the nodes are the same,
 * remote otherwise.
 *
 * stream -w CPU_NODE WRITER_NODE KIB ROUNDS: a buffer of KIB KiB, small
 * enough to stay in the caches, shared with a child on WRITER_NODE; each
 * round the child writes every line of it, then the parent, on CPU_NODE,
 * reads every line.  The parent's reads (between the marks) find each
 * line dirty in the writer's cache: a remote transfer every line when
 * the nodes differ.
 */
#include "node.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../numa-model/marker.h"

#define MPOL_BIND	2

/* One byte through @fd, or exit: the two sides take turns. */
static void turn(int fd, bool give)
{
	char c = 0;

	if ((give ? write(fd, &c, 1) : read(fd, &c, 1)) != 1)
		exit(1);
}

static int ping_pong(int cpu_node, int writer_node, size_t len, int rounds)
{
	volatile unsigned long sum = 0;
	int to_writer[2], to_reader[2], round, status;
	volatile char *buf;
	size_t i;
	pid_t pid;

	buf = mmap(NULL, len, PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED || pipe(to_writer) || pipe(to_reader)) {
		perror("stream -w");
		return 1;
	}
	memset((char *)buf, 0, len);
	pid = fork();
	if (pid < 0) {
		perror("fork");
		return 1;
	}
	if (!pid) {
		if (pin_to_node(writer_node))
			_exit(1);
		for (round = 0; round < rounds; round++) {
			turn(to_writer[0], false);
			for (i = 0; i < len; i += 64)
				buf[i] = round;
			turn(to_reader[1], true);
		}
		_exit(0);
	}
	if (pin_to_node(cpu_node)) {
		perror("cpu node");
		return 1;
	}
	NUMA_MODEL_BEGIN();
	for (round = 0; round < rounds; round++) {
		turn(to_writer[1], true);
		turn(to_reader[0], false);
		for (i = 0; i < len; i += 64)
			sum += buf[i];
	}
	NUMA_MODEL_END();
	if (waitpid(pid, &status, 0) != pid || status) {
		fprintf(stderr, "stream -w: the writer failed\n");
		return 1;
	}
	printf("stream: ping-pong, reader node %d, writer node %d, %zu KiB, "
	       "%d rounds\n", cpu_node, writer_node, len >> 10, rounds);
	return 0;
}

int main(int argc, char **argv)
{
	volatile unsigned long sum = 0;
	unsigned long mask;
	size_t len, i;
	int pass, cpu_node, mem_node;
	char *buf;

	if (argc == 6 && !strcmp(argv[1], "-w"))
		return ping_pong(atoi(argv[2]), atoi(argv[3]),
				 strtoul(argv[4], NULL, 10) << 10, atoi(argv[5]));
	if (argc != 4) {
		fprintf(stderr, "usage: %s CPU_NODE MEM_NODE MIB\n"
			"       %s -w CPU_NODE WRITER_NODE KIB ROUNDS\n",
			argv[0], argv[0]);
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
