// SPDX-License-Identifier: GPL-2.0
/*
 * NUMA page-cache replication: switching policies, /sys/kernel/mm/replica/
 * and the replica_policy= boot parameter.
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

static char replica_boot_policy[REPLICA_POLICY_NAME_MAX] __initdata =
	CONFIG_MM_REPLICA_DEFAULT_POLICY;

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

/*
 * The knob @_name of /sys/kernel/mm/replica/, which shows replica_@_name,
 * an unsigned int that may be set from @_min to @_max.
 */
#define REPLICA_UINT_KNOB(_name, _min, _max)				\
static ssize_t _name##_show(struct kobject *kobj,			\
			    struct kobj_attribute *attr, char *buf)	\
{									\
	return sysfs_emit(buf, "%u\n", READ_ONCE(replica_##_name));	\
}									\
									\
static ssize_t _name##_store(struct kobject *kobj,			\
			     struct kobj_attribute *attr,		\
			     const char *buf, size_t count)		\
{									\
	return replica_knob_store(&replica_##_name, _min, _max, buf,	\
				  count);				\
}									\
									\
static struct kobj_attribute _name##_attr = __ATTR_RW_MODE(_name, 0644)

REPLICA_UINT_KNOB(max_percent, 0, 100);
REPLICA_UINT_KNOB(read_threshold, 1, REPLICA_READ_THRESHOLD_MAX);
REPLICA_UINT_KNOB(settle_ms, 0, REPLICA_SETTLE_MS_MAX);

static struct attribute *replica_attrs[] = {
	&policy_attr.attr,
	&max_percent_attr.attr,
	&read_threshold_attr.attr,
	&settle_ms_attr.attr,
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
