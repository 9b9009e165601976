// SPDX-License-Identifier: GPL-2.0
/*
 * stress-ng's stressors of file mappings and the page cache, with
 * --verify, under every replication policy in turn: one instance bound to
 * each node at once, so that both nodes run (and replicate) the text of
 * stress-ng and its libraries while its workers map, fault, remap,
 * protect, punch, allocate, read ahead and splice files on the ext4 disk.
 * The policy is switched at run time between rounds, which is itself part
 * of the test.  The last line reads
 *   stress-ng: policies=N bogo_ops=N failures=N
 *
 *   stress_ng [-t SECONDS]   (per policy, default 10)
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../kselftest.h"
#include "replica_util.h"

#define MAX_NODES	8
#define NOBODY		65534
/* stress-ng's status when only a bogo-op counter was left mid-update */
#define EXIT_METRICS_UNTRUSTWORTHY	7

/*
 * The exec stressor refuses to run as root, and the others need not:
 * every instance runs as nobody.
 */
static const char *const stressors[] = {
	"--mmap", "1", "--mmap-file", "--mmap-bytes", "1M",
	"--msync", "1", "--msync-bytes", "8M",
	"--msyncmany", "1",
	"--fault", "1",
	"--madvise", "1",
	"--exec", "1",
	"--mremap", "1", "--mremap-bytes", "8M",
	"--mprotect", "1",
	"--fpunch", "1",
	"--fallocate", "1", "--fallocate-bytes", "1M",
	"--readahead", "1", "--readahead-bytes", "1M",
	"--vm-splice", "1",
	"--rmap", "1",
};

#define NR_STRESSOR_ARGS	ARRAY_SIZE(stressors)

/* Start stress-ng on @node in @dir for @seconds; its pid, or -1. */
static pid_t start_instance(int node, const char *dir, const char *seconds)
{
	const char *argv[NR_STRESSOR_ARGS + 16];
	size_t n = 0, i;
	pid_t pid;

	argv[n++] = "stress-ng";
	for (i = 0; i < NR_STRESSOR_ARGS; i++)
		argv[n++] = stressors[i];
	argv[n++] = "--verify";
	argv[n++] = "--timeout";
	argv[n++] = seconds;
	/* Run in @dir: its files, metrics and log go there. */
	argv[n++] = "--temp-path";
	argv[n++] = ".";
	argv[n++] = "--yaml";
	argv[n++] = "metrics.yaml";
	argv[n++] = "--metrics-brief";
	argv[n] = NULL;

	pid = fork_child();
	if (pid)
		return pid;
	if (bind_to_node(node) || chdir(dir) || setgroups(0, NULL) ||
	    setgid(NOBODY) || setuid(NOBODY))
		_exit(126);
	/* Its report goes to a log, shown if it fails. */
	if (!freopen("log", "w", stdout) || dup2(1, 2) < 0)
		_exit(126);
	execvp(argv[0], (char *const *)argv);
	_exit(127);
}

/*
 * Sum of the bogo-ops of every stressor in a --yaml file; those that
 * managed none under TCG are named, as they tested little.
 */
static long long yaml_bogo_ops(const char *dir, const char *policy, int node)
{
	char path[600], line[256], name[64] = "?";
	long long sum = 0, ops;
	FILE *f;

	snprintf(path, sizeof(path), "%s/metrics.yaml", dir);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, " - stressor: %63s", name) == 1)
			continue;
		if (sscanf(line, " bogo-ops: %lld", &ops) != 1)
			continue;
		if (!ops)
			printf("# policy %s, node %d: %s did no bogo-op in time\n",
			       policy, node, name);
		sum += ops;
	}
	fclose(f);
	return sum;
}

/*
 * How many lines of stress-ng's log contain @what, each shown if @show.
 * Its "fail:" and "error:" lines say what went wrong, and the metrics at
 * the end of the log push them out of the tail.
 */
static int log_lines(const char *log, const char *what, bool show)
{
	char line[512];
	FILE *f = fopen(log, "r");
	int n = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (strstr(line, what)) {
			if (show)
				printf("#   %s", line);
			n++;
		}
	}
	fclose(f);
	return n;
}

/*
 * Whether an instance that exited with @status passed.  stress-ng exits
 * with EXIT_METRICS_UNTRUSTWORTHY only when no stressor failed (a failed
 * --verify, a signal or an error is reported with a status that ranks
 * above it): a stressor's bogo-op counter was left mid-update when its
 * timeout killed it, which under TCG is a stressor cut short, like one
 * that did no bogo-op in time.  It passes only with no fail or error
 * line in the log.
 */
static bool instance_passed(int status, const char *log, const char *policy,
			    int node)
{
	if (!WIFEXITED(status))
		return false;
	if (WEXITSTATUS(status) == EXIT_SUCCESS)
		return true;
	if (WEXITSTATUS(status) != EXIT_METRICS_UNTRUSTWORTHY ||
	    log_lines(log, " fail: ", false) || log_lines(log, " error: ", false))
		return false;
	printf("# policy %s, node %d: a stressor was cut short mid bogo-op:\n",
	       policy, node);
	log_lines(log, "untrustworthy", true);
	return true;
}

int main(int argc, char **argv)
{
	char policies[MAX_POLICIES][POLICY_NAME_LEN], prev[32] = "", log[600];
	const char *seconds = "10";
	long long total_ops = 0;
	int nr_policies, failures = 0, nodes, p, node, opt;

	while ((opt = getopt(argc, argv, "t:")) != -1) {
		if (opt != 't') {
			fprintf(stderr, "usage: %s [-t SECONDS]\n", argv[0]);
			return 2;
		}
		seconds = optarg;
	}
	setvbuf(stdout, NULL, _IONBF, 0);
	nodes = nr_online_nodes();
	if (nodes < 2 || nodes > MAX_NODES) {
		printf("# SKIP: needs 2 to %d NUMA nodes, the guest has %d\n",
		       MAX_NODES, nodes);
		return 4;
	}
	if (system("stress-ng --version >/dev/null 2>&1")) {
		printf("# SKIP: no stress-ng on the guest's disk\n");
		return 4;
	}
	nr_policies = policy_list(policies, MAX_POLICIES);
	if (nr_policies < 1 || policy_get(prev, sizeof(prev))) {
		printf("# SKIP: kernel without CONFIG_MM_REPLICA\n");
		return 4;
	}

	for (p = 0; p < nr_policies; p++) {
		char dir[MAX_NODES][64];
		pid_t pid[MAX_NODES];
		long long made0 = vmstat_read("replica_alloc");
		long long collapsed0 = vmstat_read("replica_collapse");
		long long ops = 0;
		int failed = 0;

		if (policy_set(policies[p])) {
			printf("# cannot switch to policy %s: %s\n", policies[p],
			       strerror(errno));
			failures++;
			continue;
		}
		for (node = 0; node < nodes; node++) {
			snprintf(dir[node], sizeof(dir[node]), "stress.%s.%d",
				 policies[p], node);
			if (mkdir(dir[node], 0777) || chmod(dir[node], 0777))
				return 1;
			pid[node] = start_instance(node, dir[node], seconds);
		}
		for (node = 0; node < nodes; node++) {
			long long n;
			int status;

			snprintf(log, sizeof(log), "%s/log", dir[node]);
			if (pid[node] < 0 ||
			    waitpid(pid[node], &status, 0) != pid[node] ||
			    !instance_passed(status, log, policies[p], node)) {
				printf("# policy %s, node %d: stress-ng failed (status %#x)\n",
				       policies[p], node, pid[node] < 0 ? -1 : status);
				log_lines(log, " fail: ", true);
				log_lines(log, " error: ", true);
				show_file_tail(log, 40);
				failed++;
			}
			n = yaml_bogo_ops(dir[node], policies[p], node);
			if (n <= 0) {
				printf("# policy %s, node %d: no bogo-ops in its metrics\n",
				       policies[p], node);
				failed++;
			} else {
				ops += n;
			}
		}
		printf("# policy %-8s bogo_ops=%lld failures=%d made=%lld collapsed=%lld\n",
		       policies[p], ops, failed,
		       vmstat_read("replica_alloc") - made0,
		       vmstat_read("replica_collapse") - collapsed0);
		total_ops += ops;
		failures += failed;
	}
	policy_set(prev);
	printf("stress-ng: policies=%d bogo_ops=%lld failures=%d\n", nr_policies,
	       total_ops, failures);
	return failures || nr_policies < 5 ? 1 : 0;
}
