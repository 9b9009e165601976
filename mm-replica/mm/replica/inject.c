// SPDX-License-Identifier: GPL-2.0
/*
 * NUMA page-cache replication: delays that widen race windows, for tests
 * (CONFIG_MM_REPLICA_RACE_INJECT).  A window a few instructions wide is
 * hit once in hours under an emulator; held open for a millisecond, it is
 * hit in every round of a selftest, which then shows whether the locking
 * around it holds.
 *
 * /sys/kernel/debug/replica/drop_delay_us: how long invalidation waits
 * between deciding that a replica is mapped nowhere and taking it out of
 * the store (__replica_drop_unmapped()); 0, the default, for no wait.
 */

#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/init.h>
#include <linux/minmax.h>

#include "internal.h"

/* Longer waits only slow the tests down. */
#define REPLICA_INJECT_MAX_US	100000U

static u32 replica_drop_delay_us;

void replica_inject_drop_delay(void)
{
	u32 us = READ_ONCE(replica_drop_delay_us);

	if (us)
		fsleep(min(us, REPLICA_INJECT_MAX_US));
}

static int __init replica_inject_init(void)
{
	struct dentry *dir = debugfs_create_dir("replica", NULL);

	debugfs_create_u32("drop_delay_us", 0600, dir, &replica_drop_delay_us);
	return 0;
}
late_initcall(replica_inject_init);
