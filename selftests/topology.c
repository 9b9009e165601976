// SPDX-License-Identifier: GPL-2.0
/*
 * The guest has the NUMA topology it was booted with: the node count, the
 * CPUs of each node and the memory of each node.  The expected figures come
 * from the environment of the runner (REPLICA_EXPECT_*), which the host
 * derives from the same knobs it gives QEMU.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../kselftest_harness.h"
#include "replica_util.h"

static long expect(const char *name)
{
	const char *v = getenv(name);

	return v ? atol(v) : -1;
}

static int read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	char *nl;

	if (!f)
		return -1;
	if (!fgets(buf, len, f)) {
		fclose(f);
		return -1;
	}
	fclose(f);
	nl = strchr(buf, '\n');
	if (nl)
		*nl = '\0';
	return 0;
}

TEST(nodes_online)
{
	long nodes = expect("REPLICA_EXPECT_NODES");
	char want[32], got[64];

	if (nodes < 1)
		SKIP(return, "REPLICA_EXPECT_NODES not set: not run by the guest runner");
	if (nodes == 1)
		snprintf(want, sizeof(want), "0");
	else
		snprintf(want, sizeof(want), "0-%ld", nodes - 1);
	ASSERT_EQ(0, read_line("/sys/devices/system/node/online", got,
			       sizeof(got)));
	ASSERT_STREQ(want, got);
	ASSERT_EQ(nodes, nr_online_nodes());
}

TEST(cpus_of_each_node)
{
	long nodes = expect("REPLICA_EXPECT_NODES");
	long cpus = expect("REPLICA_EXPECT_CPUS_PER_NODE");
	/* The last nodes may have memory alone (a CXL memory expander). */
	long cpu_nodes = nodes - expect("REPLICA_EXPECT_MEM_ONLY_NODES");
	char path[96], want[64], got[64];
	long node;

	if (nodes < 1 || cpus < 1 || cpu_nodes > nodes)
		SKIP(return, "REPLICA_EXPECT_* not set: not run by the guest runner");
	for (node = 0; node < nodes; node++) {
		snprintf(path, sizeof(path),
			 "/sys/devices/system/node/node%ld/cpulist", node);
		if (node >= cpu_nodes)
			want[0] = '\0';
		else if (cpus == 1)
			snprintf(want, sizeof(want), "%ld", node);
		else
			snprintf(want, sizeof(want), "%ld-%ld", node * cpus,
				 node * cpus + cpus - 1);
		ASSERT_EQ(0, read_line(path, got, sizeof(got)));
		TH_LOG("node %ld: cpus %s", node, got);
		ASSERT_STREQ(want, got);
	}
}

TEST(memory_of_each_node)
{
	long nodes = expect("REPLICA_EXPECT_NODES");
	long mb = expect("REPLICA_EXPECT_MEM_PER_NODE_MB");
	long node, want, got;

	if (nodes < 1 || mb < 1)
		SKIP(return, "REPLICA_EXPECT_* not set: not run by the guest runner");
	want = mb * 1024 * 1024 / PAGE_SIZE_4K;
	for (node = 0; node < nodes; node++) {
		got = node_zoneinfo(node, "present");
		TH_LOG("node %ld: %ld present pages, %ld expected", node, got,
		       want);
		/* Firmware holes (the legacy 640K-1M gap on node 0) only. */
		ASSERT_LE(got, want);
		ASSERT_GE(got, want - 16 * 1024 * 1024 / PAGE_SIZE_4K);
	}
}

TEST_HARNESS_MAIN
