// SPDX-License-Identifier: GPL-2.0
/*
 * Replication policy "madvise": replicate nothing but the ranges an
 * application opted in with madvise(MADV_REPLICATE), which the core
 * replicates under every policy but "none".  They were asked for: reclaim
 * takes them last.
 */
#include <linux/init.h>
#include <linux/replica.h>

static bool madvise_want_fault(const struct replica_request *req)
{
	return false;
}

static enum replica_tier
madvise_reclaim_tier(const struct replica_request *req)
{
	return REPLICA_TIER_LAST;
}

static struct replica_policy madvise_policy = {
	.name = "madvise",
	.kinds = REPLICA_KIND_ADVISED,
	.want_fault = madvise_want_fault,
	.reclaim_tier = madvise_reclaim_tier,
};

static int __init madvise_policy_init(void)
{
	return replica_policy_register(&madvise_policy);
}
subsys_initcall(madvise_policy_init);
