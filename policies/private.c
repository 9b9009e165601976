// SPDX-License-Identifier: GPL-2.0
/*
 * Replication policy "private": replicate the pages of every MAP_PRIVATE
 * file mapping on read faults, as the 2003 replication patch did.  Program
 * and library text, read-only data and the not-yet-written parts of their
 * data segments all qualify.  Reclaim takes the least recently used first.
 */
#include <linux/init.h>
#include <linux/mm.h>
#include <linux/replica.h>

/* A read-only MAP_SHARED mapping has VM_MAYSHARE, not VM_SHARED. */
static bool private_want_fault(const struct replica_request *req)
{
	return !(req->vma->vm_flags & VM_MAYSHARE);
}

static struct replica_policy private_policy = {
	.name = "private",
	.kinds = REPLICA_KIND_PRIVATE | REPLICA_KIND_ADVISED,
	.want_fault = private_want_fault,
};

static int __init private_policy_init(void)
{
	return replica_policy_register(&private_policy);
}
subsys_initcall(private_policy_init);
