// SPDX-License-Identifier: GPL-2.0
/*
 * Replication policy "text": replicate executable file mappings, program
 * and library text, on read faults.  Text is what every task of a node
 * fetches all the time, so its replicas are reclaimed last; ranges opted in
 * with MADV_REPLICATE that are not executable go first.
 */
#include <linux/init.h>
#include <linux/mm.h>
#include <linux/replica.h>

static bool text_want_fault(const struct replica_request *req)
{
	return req->vma->vm_flags & VM_EXEC;
}

static enum replica_tier text_reclaim_tier(const struct replica_request *req)
{
	return req->kinds & REPLICA_KIND_EXEC ? REPLICA_TIER_LAST :
		REPLICA_TIER_FIRST;
}

static struct replica_policy text_policy = {
	.name = "text",
	.kinds = REPLICA_KIND_EXEC | REPLICA_KIND_ADVISED,
	.want_fault = text_want_fault,
	.reclaim_tier = text_reclaim_tier,
};

static int __init text_policy_init(void)
{
	return replica_policy_register(&text_policy);
}
subsys_initcall(text_policy_init);
