// SPDX-License-Identifier: GPL-2.0
/*
 * Replication policy "readonly": replicate files nobody can write, however
 * they are read: MAP_PRIVATE and read-only MAP_SHARED mappings on read
 * faults, and read(2), splice(2) and sendfile(2), which read a page from
 * its replica once it was read remotely read_threshold times.  The core
 * has ruled out every file that has a writer.  Reclaim takes the least
 * recently used first.
 */
#include <linux/init.h>
#include <linux/replica.h>

static bool readonly_want(const struct replica_request *req)
{
	return true;
}

static struct replica_policy readonly_policy = {
	.name = "readonly",
	.kinds = REPLICA_KIND_PRIVATE | REPLICA_KIND_SHARED |
		 REPLICA_KIND_READ | REPLICA_KIND_ADVISED,
	.want_fault = readonly_want,
	.want_read = readonly_want,
};

static int __init readonly_policy_init(void)
{
	return replica_policy_register(&readonly_policy);
}
subsys_initcall(readonly_policy_init);
