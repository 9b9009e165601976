/* SPDX-License-Identifier: GPL-2.0 */
/*
 * KUnit tests of the policy registry: lookup by name, what registration
 * refuses, the list /sys/kernel/mm/replica/policy shows, switching, and
 * the decisions of the built-in policies.
 *
 * Included at the end of sysfs.c, so that they reach its static functions.
 */
#ifndef _MM_REPLICA_POLICY_KUNIT_H
#define _MM_REPLICA_POLICY_KUNIT_H

#include <kunit/test.h>

static struct replica_policy *policy_test_find(const char *name)
{
	struct replica_policy *policy;

	mutex_lock(&replica_policy_mutex);
	policy = replica_policy_find(name);
	mutex_unlock(&replica_policy_mutex);
	return policy;
}

static const struct replica_policy *policy_test_current(void)
{
	return rcu_access_pointer(replica_current);
}

static bool policy_test_yes(const struct replica_request *req)
{
	return true;
}

static void replica_policy_finds_names(struct kunit *test)
{
	static const char * const builtin[] = {
		"private", "text", "readonly", "madvise",
	};
	struct replica_policy *policy;
	int i;

	KUNIT_EXPECT_PTR_EQ(test, &replica_policy_none,
			    policy_test_find("none"));
	/* What echo writes to sysfs. */
	KUNIT_EXPECT_PTR_EQ(test, &replica_policy_none,
			    policy_test_find("none\n"));
	for (i = 0; i < ARRAY_SIZE(builtin); i++) {
		policy = policy_test_find(builtin[i]);
		KUNIT_ASSERT_NOT_NULL_MSG(test, policy, "policy %s",
					  builtin[i]);
		KUNIT_EXPECT_STREQ(test, builtin[i], policy->name);
	}
	KUNIT_EXPECT_NULL(test, policy_test_find(""));
	KUNIT_EXPECT_NULL(test, policy_test_find("tex"));
	KUNIT_EXPECT_NULL(test, policy_test_find("texts"));
	KUNIT_EXPECT_NULL(test, policy_test_find("None"));
}

static void replica_policy_register_refuses(struct kunit *test)
{
	struct replica_policy nameless = { .want_fault = policy_test_yes };
	struct replica_policy mute = { .name = "kunit-mute" };
	struct replica_policy verbose = {
		.name = "kunit-a-name-of-thirty-two-chars",
		.want_fault = policy_test_yes,
	};
	struct replica_policy again = {
		.name = "text",
		.want_fault = policy_test_yes,
	};
	struct replica_policy none_again = {
		.name = "none",
		.want_fault = policy_test_yes,
	};

	KUNIT_ASSERT_EQ(test, REPLICA_POLICY_NAME_MAX,
			(int)strlen(verbose.name));
	KUNIT_EXPECT_EQ(test, -EINVAL, replica_policy_register(&nameless));
	KUNIT_EXPECT_EQ(test, -EINVAL, replica_policy_register(&mute));
	KUNIT_EXPECT_EQ(test, -EINVAL, replica_policy_register(&verbose));
	KUNIT_EXPECT_EQ(test, -EEXIST, replica_policy_register(&again));
	KUNIT_EXPECT_EQ(test, -EEXIST, replica_policy_register(&none_again));
	KUNIT_EXPECT_NULL(test, policy_test_find("kunit-mute"));
	KUNIT_EXPECT_PTR_NE(test, &again, policy_test_find("text"));
}

/*
 * What policy_show() should print: every policy in registration order
 * (mm/replica/Makefile's), then the one this test adds, the current one
 * in brackets.
 */
static void policy_test_expected_list(char *buf, size_t len)
{
	static const char * const names[] = {
		"none", "private", "text", "readonly", "madvise", "kunit-extra",
	};
	const char *current_name = policy_test_current()->name;
	size_t used = 0;
	int i;

	for (i = 0; i < ARRAY_SIZE(names); i++)
		used += scnprintf(buf + used, len - used,
				  strcmp(names[i], current_name) ?
				  "%s%s" : "%s[%s]", i ? " " : "", names[i]);
	scnprintf(buf + used, len - used, "\n");
}

static void replica_policy_registers_last(struct kunit *test)
{
	static struct replica_policy extra = {
		.name = "kunit-extra",
		.want_fault = policy_test_yes,
	};
	char *shown, *expected;

	shown = (char *)__get_free_page(GFP_KERNEL);
	expected = kunit_kzalloc(test, PAGE_SIZE, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, shown);
	KUNIT_ASSERT_NOT_NULL(test, expected);

	KUNIT_ASSERT_EQ(test, 0, replica_policy_register(&extra));
	KUNIT_EXPECT_PTR_EQ(test, &extra, policy_test_find("kunit-extra"));
	policy_show(NULL, NULL, shown);
	policy_test_expected_list(expected, PAGE_SIZE);
	KUNIT_EXPECT_STREQ(test, expected, shown);
	KUNIT_EXPECT_NOT_NULL(test, strstr(shown, " kunit-extra\n"));
	/* Exactly one policy is marked current. */
	KUNIT_EXPECT_NOT_NULL(test, strchr(shown, '['));
	KUNIT_EXPECT_PTR_EQ(test, strchr(shown, '['), strrchr(shown, '['));

	/* Policies are never unregistered: only this test may. */
	mutex_lock(&replica_policy_mutex);
	list_del(&extra.list);
	mutex_unlock(&replica_policy_mutex);
	KUNIT_EXPECT_NULL(test, policy_test_find("kunit-extra"));
	free_page((unsigned long)shown);
}

static void replica_policy_switch_sets_key(struct kunit *test)
{
	const struct replica_policy *boot_policy = policy_test_current();
	struct replica_policy *text = policy_test_find("text");

	KUNIT_ASSERT_NOT_NULL(test, text);
	mutex_lock(&replica_policy_mutex);
	replica_policy_switch(&replica_policy_none);
	KUNIT_EXPECT_PTR_EQ(test, &replica_policy_none, policy_test_current());
	KUNIT_EXPECT_FALSE(test, static_key_enabled(&replica_active));
	replica_policy_switch(text);
	KUNIT_EXPECT_PTR_EQ(test, text, policy_test_current());
	KUNIT_EXPECT_TRUE(test, static_key_enabled(&replica_active));
	replica_policy_switch(text);
	KUNIT_EXPECT_TRUE(test, static_key_enabled(&replica_active));
	replica_policy_switch(boot_policy);
	KUNIT_EXPECT_PTR_EQ(test, boot_policy, policy_test_current());
	KUNIT_EXPECT_EQ(test, boot_policy != &replica_policy_none,
			static_key_enabled(&replica_active));
	mutex_unlock(&replica_policy_mutex);
}

/* Ask @name about a fault in a mapping with @vm_flags. */
static bool policy_test_wants(struct kunit *test, const char *name,
			      vm_flags_t vm_flags)
{
	struct replica_policy *policy = policy_test_find(name);
	struct vm_area_struct vma = { };
	struct replica_request req = { .vma = &vma };

	KUNIT_ASSERT_NOT_NULL(test, policy);
	vm_flags_init(&vma, vm_flags);
	return policy->want_fault(&req);
}

/* The tier @name puts a replica made for a request of @kinds in. */
static enum replica_tier policy_test_tier(struct kunit *test, const char *name,
					  unsigned int kinds)
{
	struct replica_policy *policy = policy_test_find(name);
	struct replica_request req = { .kinds = kinds };

	KUNIT_ASSERT_NOT_NULL(test, policy);
	return policy->reclaim_tier ? policy->reclaim_tier(&req) :
				      REPLICA_TIER_FIRST;
}

static void replica_policy_builtin_decisions(struct kunit *test)
{
	const vm_flags_t text = VM_READ | VM_EXEC | VM_MAYREAD | VM_MAYEXEC;
	const vm_flags_t data = VM_READ | VM_MAYREAD | VM_MAYWRITE;
	const vm_flags_t shared = VM_READ | VM_MAYREAD | VM_MAYSHARE;

	KUNIT_EXPECT_FALSE(test, policy_test_wants(test, "none", text));
	KUNIT_EXPECT_EQ(test, 0U, replica_policy_none.kinds);

	KUNIT_EXPECT_TRUE(test, policy_test_wants(test, "text", text));
	KUNIT_EXPECT_FALSE(test, policy_test_wants(test, "text", data));
	KUNIT_EXPECT_EQ(test, REPLICA_TIER_LAST,
			policy_test_tier(test, "text", REPLICA_KIND_EXEC |
					 REPLICA_KIND_PRIVATE));
	KUNIT_EXPECT_EQ(test, REPLICA_TIER_FIRST,
			policy_test_tier(test, "text", REPLICA_KIND_ADVISED |
					 REPLICA_KIND_PRIVATE));

	KUNIT_EXPECT_TRUE(test, policy_test_wants(test, "private", text));
	KUNIT_EXPECT_TRUE(test, policy_test_wants(test, "private", data));
	KUNIT_EXPECT_FALSE(test, policy_test_wants(test, "private", shared));

	KUNIT_EXPECT_TRUE(test, policy_test_wants(test, "readonly", shared));
	KUNIT_EXPECT_NOT_NULL(test, policy_test_find("readonly")->want_read);
	KUNIT_EXPECT_NULL(test, policy_test_find("text")->want_read);

	KUNIT_EXPECT_FALSE(test, policy_test_wants(test, "madvise", text));
	KUNIT_EXPECT_EQ(test, REPLICA_TIER_LAST,
			policy_test_tier(test, "madvise", REPLICA_KIND_ADVISED));
	KUNIT_EXPECT_EQ(test, (unsigned int)REPLICA_KIND_ADVISED,
			policy_test_find("madvise")->kinds);
}

static struct kunit_case replica_policy_test_cases[] = {
	KUNIT_CASE(replica_policy_finds_names),
	KUNIT_CASE(replica_policy_register_refuses),
	KUNIT_CASE(replica_policy_registers_last),
	KUNIT_CASE(replica_policy_switch_sets_key),
	KUNIT_CASE(replica_policy_builtin_decisions),
	{}
};

static struct kunit_suite replica_policy_test_suite = {
	.name = "replica_policy",
	.test_cases = replica_policy_test_cases,
};

kunit_test_suites(&replica_policy_test_suite);

#endif /* _MM_REPLICA_POLICY_KUNIT_H */
