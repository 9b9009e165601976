// SPDX-License-Identifier: GPL-2.0
/*
 * NUMA page-cache replication: the policy registry.
 *
 * The current policy is one pointer, published with rcu_assign_pointer():
 * a fault sees either the old policy or the new one, never a mix.  Policy
 * "none" is built in and always there; while it is current the static key
 * replica_active is off and the fault and writer paths cost one no-op.
 */

#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/rcupdate.h>
#include <linux/string.h>

#include "internal.h"

DEFINE_STATIC_KEY_FALSE(replica_active);

static bool none_want_fault(const struct replica_request *req)
{
	return false;
}

struct replica_policy replica_policy_none = {
	.name = "none",
	.kinds = 0,
	.want_fault = none_want_fault,
};

const struct replica_policy __rcu *replica_current = &replica_policy_none;

/* Per node, the most replica pages as a percentage of its memory. */
unsigned int replica_max_percent = 10;
/* Remote read(2)s of a page after which it is replicated. */
unsigned int replica_read_threshold = 2;
/* How long a file must stay unchanged before it is replicated. */
unsigned int replica_settle_ms = 2000;

/* Protects the registry and serialises policy switches. */
DEFINE_MUTEX(replica_policy_mutex);
/* Registered policies other than "none", in registration order. */
LIST_HEAD(replica_policies);

/* A registered policy by the name written to sysfs or given at boot. */
struct replica_policy *replica_policy_find(const char *name)
{
	struct replica_policy *policy;

	lockdep_assert_held(&replica_policy_mutex);
	if (sysfs_streq(name, replica_policy_none.name))
		return &replica_policy_none;
	list_for_each_entry(policy, &replica_policies, list)
		if (sysfs_streq(name, policy->name))
			return policy;
	return NULL;
}

/**
 * replica_policy_register - make a replication policy available
 * @policy: the policy; it must live as long as the kernel
 *
 * Return: 0, -EINVAL if @policy lacks a name or the want_fault callback,
 * or -EEXIST if a policy of that name is registered already.
 */
int replica_policy_register(struct replica_policy *policy)
{
	int err = 0;

	if (!policy->name || !policy->want_fault ||
	    strlen(policy->name) >= REPLICA_POLICY_NAME_MAX)
		return -EINVAL;
	mutex_lock(&replica_policy_mutex);
	if (replica_policy_find(policy->name))
		err = -EEXIST;
	else
		list_add_tail(&policy->list, &replica_policies);
	mutex_unlock(&replica_policy_mutex);
	return err;
}
