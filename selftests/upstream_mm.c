// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel's own mm selftests (tools/testing/selftests/mm of the same
 * tree, built statically), run under policy "none" and then under each
 * replication policy, switched at run time.  The working directory is on
 * the ext4 disk, so that the tests' file mappings are page cache that
 * replication serves.
 *
 * Some of them are flaky under TCG (uffd-unit-tests' event test fails
 * about one run in five with replication off), so a failure is run again,
 * up to RERUNS more times, under the policy it failed under.  A test is a
 * regression when it fails every run under a policy and not under "none";
 * one that failed and then passed is reported as flaky.
 *
 *   upstream_mm [-a] [-d DIR] [-t SECONDS]
 *
 * -a also runs the slow tests (make soak does); DIR holds the binaries
 * (default /mnt/mm-tests); SECONDS bounds each run of a test that names no
 * limit of its own (default 300).
 *
 * Prints a table of the results and ends with
 *   upstream-mm: tests=N policies=N regressions=N
 */
#include <errno.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../kselftest.h"
#include "replica_util.h"

#define MAX_ARGS	8
#define NOBODY		65534
#define RERUNS		2

/**
 * struct upstream_test - one run of an mm selftest
 * @argv: the program and its arguments, as run_vmtests.sh runs it
 * @as_nobody: run it unprivileged, as run_vmtests.sh does with sudo
 * @slow: takes more than half a minute under TCG with the debug kernel:
 *	run only with -a (make soak)
 * @timeout: seconds a run may take, when the default (-t) is too short
 */
struct upstream_test {
	const char *argv[MAX_ARGS];
	bool as_nobody;
	bool slow;
	unsigned int timeout;
};

static const struct upstream_test tests[] = {
	{ { "map_fixed_noreplace" } },
	{ { "mremap_dontunmap" } },
	{ { "madv_populate" } },
	{ { "mlock2-tests" } },
	{ { "on-fault-limit" }, true },
	{ { "mrelease_test" } },
	{ { "mkdirty" } },
	{ { "mdwe_test" } },
	{ { "seal_elf" } },
	{ { "mseal_test" } },
	{ { "droppable" } },
	{ { "gup_test", "-u" } },
	{ { "gup_test", "-a" } },
	{ { "gup_test", "-ct", "-F", "0x1", "0", "19", "0x1000" } },
	{ { "gup_longterm" } },
	/*
	 * 45 to 65 s a policy under TCG with KASAN, on anonymous memory,
	 * memfd and a tmpfile in tmpfs, none of which is ever replicated.
	 */
	{ { "cow" }, false, true },
	{ { "ksm_tests", "-M", "-p", "10" } },
	{ { "uffd-stress", "anon", "20", "16" }, false, true },
	{ { "hugepage-mremap" } },
	{ { "hugepage-vmemmap" } },
	{ { "hugetlb_dio" } },
	{ { "protection_keys_64" } },
	{ { "pkey_sighandler_tests_64" } },
	/* Last of the quick ones: each run dissolves a huge page. */
	{ { "hugetlb-soft-offline" } },
	{ { "pagemap_ioctl" }, false, true },
	{ { "compaction_test" }, false, true },
	{ { "transhuge-stress", "-d", "20" }, false, true },
	{ { "uffd-stress", "shmem", "20", "16" }, false, true },
	{ { "uffd-stress", "shmem-private", "20", "16" }, false, true },
	/* 255 to 300 s under TCG with KASAN: give it room. */
	{ { "uffd-unit-tests" }, false, true, 900 },
	{ { "ksm_functional_tests" }, false, true },
	{ { "migration" }, false, true },
};

#define NR_TESTS	ARRAY_SIZE(tests)

/*
 * Left out, and why: printed with the results, so that the list of what
 * did not run is part of every run.
 */
static const char *const left_out[] = {
	"khugepaged: does not build in 6.12.118 (KSFT_SKIP undeclared)",
	"memfd_secret, mlock-random-test: need libcap (sys/capability.h)",
	"hmm-tests, test_hmm.sh, test_vmalloc.sh: need test modules",
	"map_populate: needs AF_UNIX sockets (the guest kernel has no networking)",
	"hugepage-shm: needs System V IPC (CONFIG_SYSVIPC)",
	"hugepage-mmap, map_hugetlb, thuge-gen: need 256 MB of huge pages, or 1 GB ones",
	"hugetlb_fault_after_madv, hugetlb_madv_vs_map: need exactly one huge page",
	"hugetlb-madvise: needs 20 free huge pages, which the guest gets only at times",
	"mremap_test, virtual_address_range: need more memory than the guest has",
	"va_high_addr_switch: needs 5-level paging, which the guest runs without (boot/qemu.sh); upstream's va_high_addr_switch.sh skips it too",
	"hugetlb-read-hwpoison: dies of the SIGBUS that 6.12's MADV_HWPOISON sends the task that maps the page (MF_ACTION_REQUIRED), under none as under every policy",
	"soft-dirty: needs CONFIG_MEM_SOFT_DIRTY, which needs CONFIG_CHECKPOINT_RESTORE",
	"split_huge_page_test: writes its 4 MB file a byte per write(2), 9 times, over 15 min a run under TCG with KASAN; its files are on tmpfs, which is never replicated",
	"write_to_hugetlbfs, charge_reserved_hugetlb.sh, hugetlb_reparenting_test.sh: helpers of scripts",
};

enum result { PASS, SKIP, FLAKY, FAIL };

static const char *const result_names[] = { "ok", "skip", "flaky", "FAIL" };

/* Run one test from @bindir, bounded by @timeout seconds. */
static enum result run_test(const char *bindir, const struct upstream_test *t,
			    unsigned int timeout, const char *log)
{
	char prog[512];
	int status;
	pid_t pid;

	snprintf(prog, sizeof(prog), "%s/%s", bindir, t->argv[0]);
	pid = fork_child();
	if (pid < 0)
		return FAIL;
	if (!pid) {
		/* Its own process group: see below. */
		if (setpgid(0, 0) || !freopen(log, "w", stdout) ||
		    dup2(1, 2) < 0)
			_exit(126);
		/*
		 * As run_vmtests.sh runs them, unbound.  The runner binds
		 * every selftest to node 0, and compaction_test, which
		 * mlocks 80% of the machine's MemFree, would get itself
		 * OOM-killed on node 0 alone.
		 */
		if (unbind_from_nodes())
			_exit(126);
		if (t->as_nobody && (setgroups(0, NULL) || setgid(NOBODY) ||
				     setuid(NOBODY)))
			_exit(126);
		alarm(t->timeout ? t->timeout : timeout);
		execv(prog, (char *const *)t->argv);
		_exit(127);
	}
	setpgid(pid, pid);
	if (waitpid(pid, &status, 0) != pid)
		return FAIL;
	/*
	 * What a test leaves running goes with it: a process still
	 * printing protection_keys_64's results into the log of a later
	 * hugetlb_dio run moved that test's free huge page counts by one.
	 */
	kill(-pid, SIGKILL);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return PASS;
	if (WIFEXITED(status) && WEXITSTATUS(status) == KSFT_SKIP)
		return SKIP;
	return FAIL;
}

static void test_name(const struct upstream_test *t, char *buf, size_t len)
{
	size_t used = 0;
	int i;

	buf[0] = '\0';
	for (i = 0; t->argv[i] && used < len; i++)
		used += snprintf(buf + used, len - used, "%s%s", i ? " " : "",
				 t->argv[i]);
}

/* Switch to @policy; a kernel that refuses its own policy fails the run. */
static int switch_policy(const char *policy)
{
	if (!policy_set(policy))
		return 0;
	printf("# cannot switch to policy %s: %s\n", policy, strerror(errno));
	return -1;
}

/* Run @t under the current @policy, telling of a failure with its output. */
static enum result run_under(const char *bindir, const struct upstream_test *t,
			     unsigned int timeout, const char *policy)
{
	char name[128];
	enum result r;

	r = run_test(bindir, t, timeout, "upstream.log");
	if (r == FAIL) {
		test_name(t, name, sizeof(name));
		printf("# %s under %s: FAIL\n", name, policy);
		show_file_tail("upstream.log", 20);
	}
	return r;
}

int main(int argc, char **argv)
{
	static enum result results[NR_TESTS][MAX_POLICIES];
	static time_t seconds[NR_TESTS][MAX_POLICIES];
	char policies[MAX_POLICIES][POLICY_NAME_LEN], prev[32] = "", name[128];
	const char *bindir = "/mnt/mm-tests";
	unsigned int timeout = 300;
	int nr_policies, regressions = 0, ran = 0, p, opt;
	bool all = false;
	char hugepages[32] = "0";
	size_t i;

	while ((opt = getopt(argc, argv, "ad:t:")) != -1) {
		if (opt == 'a') {
			all = true;
		} else if (opt == 'd') {
			bindir = optarg;
		} else if (opt == 't') {
			timeout = atoi(optarg);
		} else {
			fprintf(stderr, "usage: %s [-a] [-d DIR] [-t SECONDS]\n",
				argv[0]);
			return 2;
		}
	}
	setvbuf(stdout, NULL, _IONBF, 0);
	/* The image always has them: one missing is a build failure. */
	for (i = 0; i < NR_TESTS; i++) {
		snprintf(name, sizeof(name), "%s/%s", bindir, tests[i].argv[0]);
		if (access(name, X_OK)) {
			printf("# %s: %s\n", name, strerror(errno));
			return 1;
		}
	}
	nr_policies = policy_list(policies, MAX_POLICIES);
	if (nr_policies < 1 || policy_get(prev, sizeof(prev))) {
		printf("# SKIP: kernel without CONFIG_MM_REPLICA\n");
		return KSFT_SKIP;
	}
	/* "none" first: the reference the others are compared with. */
	for (p = 1; p < nr_policies; p++) {
		if (!strcmp(policies[p], "none")) {
			memcpy(policies[p], policies[0], POLICY_NAME_LEN);
			memcpy(policies[0], "none", sizeof("none"));
		}
	}
	/* As run_vmtests.sh: hugetlb tests need a few huge pages. */
	read_text_file("/proc/sys/vm/nr_hugepages", hugepages,
		       sizeof(hugepages));
	write_text_file("/proc/sys/vm/nr_hugepages", "32");
	/* on-fault-limit runs as nobody, in this directory. */
	chmod(".", 0777);

	for (p = 0; p < nr_policies; p++) {
		if (switch_policy(policies[p]))
			return 1;
		for (i = 0; i < NR_TESTS; i++) {
			if (tests[i].slow && !all)
				continue;
			seconds[i][p] = time(NULL);
			results[i][p] = run_under(bindir, &tests[i], timeout,
						  policies[p]);
			seconds[i][p] = time(NULL) - seconds[i][p];
		}
	}
	/* Again, failures only: a flaky test is not a regression. */
	for (p = 0; p < nr_policies; p++) {
		for (i = 0; i < NR_TESTS; i++) {
			int rerun;

			if (results[i][p] != FAIL)
				continue;
			if (switch_policy(policies[p]))
				return 1;
			for (rerun = 0; rerun < RERUNS &&
			     results[i][p] == FAIL; rerun++) {
				test_name(&tests[i], name, sizeof(name));
				printf("# %s under %s: run %d of %d\n", name,
				       policies[p], rerun + 2, RERUNS + 1);
				if (run_under(bindir, &tests[i], timeout,
					      policies[p]) != FAIL)
					results[i][p] = FLAKY;
			}
		}
	}
	policy_set(prev);
	write_text_file("/proc/sys/vm/nr_hugepages", hugepages);

	printf("# %-40s", "test");
	for (p = 0; p < nr_policies; p++)
		printf(" %-8s", policies[p]);
	printf(" seconds\n");
	for (i = 0; i < NR_TESTS; i++) {
		if (tests[i].slow && !all)
			continue;
		ran++;
		test_name(&tests[i], name, sizeof(name));
		printf("# %-40s", name);
		for (p = 0; p < nr_policies; p++) {
			bool regressed = results[i][p] == FAIL &&
					 results[i][0] != FAIL;

			printf(" %-8s", result_names[results[i][p]]);
			regressions += regressed;
		}
		for (p = 0; p < nr_policies; p++)
			printf("%s%ld", p ? "/" : " ", (long)seconds[i][p]);
		printf("\n");
	}
	printf("# left out:\n");
	for (i = 0; i < ARRAY_SIZE(left_out); i++)
		printf("#   %s\n", left_out[i]);
	if (!all)
		printf("#   %zu slow tests, which make soak runs (-a)\n",
		       NR_TESTS - ran);
	printf("upstream-mm: tests=%d policies=%d regressions=%d\n", ran,
	       nr_policies, regressions);
	return regressions || nr_policies < 5 ? 1 : 0;
}
