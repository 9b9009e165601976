/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Placing a bench program on a NUMA node, with the selftests' helpers
 * (selftests/replica_util.c is linked in).
 */
#ifndef BENCH_NODE_H
#define BENCH_NODE_H

#include <time.h>

#include "replica_util.h"

/*
 * Run the caller on the first CPU of @node only, so that a numa-model
 * measurement can be read from that one vCPU; 0 or -1.
 */
static inline int pin_to_node(int node)
{
	cpu_set_t cpus, one;
	int cpu;

	if (node_cpus(node, &cpus))
		return -1;
	for (cpu = 0; !CPU_ISSET(cpu, &cpus); cpu++)
		;
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	return sched_setaffinity(0, sizeof(one), &one);
}

/* The guest's monotonic clock in nanoseconds (TCG time, not the model's). */
static inline long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

#endif
