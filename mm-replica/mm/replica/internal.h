/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Internals shared by the parts of NUMA page-cache replication.
 */
#ifndef _MM_REPLICA_INTERNAL_H
#define _MM_REPLICA_INTERNAL_H

#include <linux/replica.h>
#include <linux/xarray.h>

/**
 * struct replica_tree - the replicas of one mapping
 * @rcu: frees the tree after the last lockless lookup
 * @nodes: per node, the replicas on that node by page index
 *
 * Allocated on the first replica of a mapping, freed with its inode.
 */
struct replica_tree {
	struct rcu_head rcu;
	struct xarray nodes[];
};

extern const struct replica_policy __rcu *replica_current;
extern struct replica_policy replica_policy_none;
extern unsigned int replica_max_percent;
extern unsigned int replica_read_threshold;

void replica_drop_kinds(unsigned int keep_kinds);
int replica_reclaim_init(void);

#endif /* _MM_REPLICA_INTERNAL_H */
