// SPDX-License-Identifier: GPL-2.0
/*
 * The replica_policy= boot parameter: a known name is the policy at boot,
 * an unknown one gives "none" and a warning in the kernel log, and the
 * kernel boots either way.  The guest runner says in REPLICA_BOOT_POLICY
 * what the kernel command line asked for.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/klog.h>

#include "../kselftest_harness.h"
#include "replica_util.h"

#define LOG_BUF	(1024 * 1024)

/* Whether /sys/kernel/mm/replica/policy lists @name. */
static int policy_listed(const char *name)
{
	char names[MAX_POLICIES][POLICY_NAME_LEN];
	int i, n = policy_list(names, MAX_POLICIES);

	for (i = 0; i < n; i++)
		if (!strcmp(names[i], name))
			return 1;
	return 0;
}

TEST(boot_policy_is_in_force)
{
	const char *asked = getenv("REPLICA_BOOT_POLICY");
	char cur[32], want[64], *log;
	int len;

	if (!asked)
		SKIP(return, "booted without replica_policy=");
	if (policy_get(cur, sizeof(cur)))
		SKIP(return, "kernel without CONFIG_MM_REPLICA");
	log = malloc(LOG_BUF);
	ASSERT_NE(NULL, log);
	len = klogctl(3 /* SYSLOG_ACTION_READ_ALL */, log, LOG_BUF - 1);
	ASSERT_LT(0, len);
	log[len] = '\0';
	snprintf(want, sizeof(want), "replica: unknown policy \"%s\"", asked);

	if (policy_listed(asked)) {
		ASSERT_STREQ(asked, cur);
		ASSERT_EQ(NULL, strstr(log, want));
	} else {
		TH_LOG("replica_policy=%s gave policy %s", asked, cur);
		ASSERT_STREQ("none", cur);
		ASSERT_NE(NULL, strstr(log, want));
	}
	free(log);
}

TEST_HARNESS_MAIN
