// SPDX-License-Identifier: GPL-2.0
/*
 * NUMA page-cache replication: the policy registry, the replica_policy=
 * boot parameter and /sys/kernel/mm/replica/.
 *
 * The current policy is one pointer, published with rcu_assign_pointer():
 * a fault sees either the old policy or the new one, never a mix.  Policy
 * "none" is built in and always there; while it is current the static key
 * replica_active is off and the fault and writer paths cost one no-op.
 */

#define pr_fmt(fmt) "replica: " fmt

#include <linux/capability.h>
#include <linux/init.h>
#include <linux/kobject.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/rcupdate.h>
#include <linux/string.h>
#include <linux/sysfs.h>

#include "internal.h"

#define REPLICA_POLICY_NAME_MAX	32

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
#define REPLICA_READ_THRESHOLD_MAX	1000

/* Protects the registry and serialises policy switches. */
static DEFINE_MUTEX(replica_policy_mutex);
/* Registered policies other than "none", in registration order. */
static LIST_HEAD(replica_policies);

static char replica_boot_policy[REPLICA_POLICY_NAME_MAX] __initdata =
	CONFIG_MM_REPLICA_DEFAULT_POLICY;

static struct replica_policy *replica_policy_find(const char *name)
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

static void replica_policy_switch(const struct replica_policy *new)
{
	const struct replica_policy *old;

	lockdep_assert_held(&replica_policy_mutex);
	old = rcu_dereference_protected(replica_current,
					lockdep_is_held(&replica_policy_mutex));
	if (new == old)
		return;
	if (old == &replica_policy_none)
		static_branch_enable(&replica_active);
	rcu_assign_pointer(replica_current, new);
	if (old != &replica_policy_none) {
		/*
		 * Every replica was made for the old policy: keep those the
		 * new one makes too.  One made after the walk below sees the
		 * new policy and removes itself.
		 */
		smp_mb();
		replica_drop_kinds(new->kinds);
	}
	if (new == &replica_policy_none)
		static_branch_disable(&replica_active);
	pr_info("policy %s\n", new->name);
}

static ssize_t policy_show(struct kobject *kobj, struct kobj_attribute *attr,
			   char *buf)
{
	const struct replica_policy *current_policy, *policy;
	int len;

	mutex_lock(&replica_policy_mutex);
	current_policy =
		rcu_dereference_protected(replica_current,
					  lockdep_is_held(&replica_policy_mutex));
	len = sysfs_emit(buf, current_policy == &replica_policy_none ?
			 "[%s]" : "%s", replica_policy_none.name);
	list_for_each_entry(policy, &replica_policies, list)
		len += sysfs_emit_at(buf, len, policy == current_policy ?
				     " [%s]" : " %s", policy->name);
	len += sysfs_emit_at(buf, len, "\n");
	mutex_unlock(&replica_policy_mutex);
	return len;
}

static ssize_t policy_store(struct kobject *kobj, struct kobj_attribute *attr,
			    const char *buf, size_t count)
{
	struct replica_policy *policy;

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	mutex_lock(&replica_policy_mutex);
	policy = replica_policy_find(buf);
	if (policy)
		replica_policy_switch(policy);
	mutex_unlock(&replica_policy_mutex);
	return policy ? count : -EINVAL;
}

static struct kobj_attribute policy_attr = __ATTR_RW_MODE(policy, 0644);

/* Store a decimal in [@min, @max] written to a knob into @knob. */
static ssize_t replica_knob_store(unsigned int *knob, unsigned int min,
				  unsigned int max, const char *buf,
				  size_t count)
{
	unsigned int value;
	int err;

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	err = kstrtouint(buf, 10, &value);
	if (err)
		return err;
	if (value < min || value > max)
		return -EINVAL;
	WRITE_ONCE(*knob, value);
	return count;
}

static ssize_t max_percent_show(struct kobject *kobj,
				struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", READ_ONCE(replica_max_percent));
}

static ssize_t max_percent_store(struct kobject *kobj,
				 struct kobj_attribute *attr,
				 const char *buf, size_t count)
{
	return replica_knob_store(&replica_max_percent, 0, 100, buf, count);
}

static struct kobj_attribute max_percent_attr =
	__ATTR_RW_MODE(max_percent, 0644);

static ssize_t read_threshold_show(struct kobject *kobj,
				   struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", READ_ONCE(replica_read_threshold));
}

static ssize_t read_threshold_store(struct kobject *kobj,
				    struct kobj_attribute *attr,
				    const char *buf, size_t count)
{
	return replica_knob_store(&replica_read_threshold, 1,
				  REPLICA_READ_THRESHOLD_MAX, buf, count);
}

static struct kobj_attribute read_threshold_attr =
	__ATTR_RW_MODE(read_threshold, 0644);

static struct attribute *replica_attrs[] = {
	&policy_attr.attr,
	&max_percent_attr.attr,
	&read_threshold_attr.attr,
	NULL,
};

static const struct attribute_group replica_attr_group = {
	.attrs = replica_attrs,
};

/* Only recorded here: the policies register later, in initcalls. */
static int __init replica_policy_setup(char *str)
{
	if (!str)
		return -EINVAL;
	strscpy(replica_boot_policy, str, sizeof(replica_boot_policy));
	return 0;
}
early_param("replica_policy", replica_policy_setup);

/* After the policies registered themselves (subsys_initcall). */
static int __init replica_init(void)
{
	struct replica_policy *policy;
	struct kobject *kobj;
	int err;

	err = replica_reclaim_init();
	if (err) {
		pr_err("cannot set up reclaim (%d): replication stays off\n",
		       err);
		return err;
	}
	kobj = kobject_create_and_add("replica", mm_kobj);
	if (!kobj || sysfs_create_group(kobj, &replica_attr_group))
		pr_err("cannot create /sys/kernel/mm/replica\n");

	mutex_lock(&replica_policy_mutex);
	policy = replica_policy_find(replica_boot_policy);
	if (!policy) {
		pr_warn("unknown policy \"%s\" in replica_policy=, using \"%s\"\n",
			replica_boot_policy, replica_policy_none.name);
		policy = &replica_policy_none;
	}
	replica_policy_switch(policy);
	mutex_unlock(&replica_policy_mutex);
	return 0;
}
late_initcall(replica_init);

#ifdef CONFIG_MM_REPLICA_KUNIT_TEST
#include "tests/policy-kunit.h"
#endif
