// SPDX-License-Identifier: GPL-2.0
/*
 * Program and library text: a dynamically linked program from the disk,
 * run on node 0 and then on node 1, has all its text on node 1 in the
 * second run.  Writers are refused exactly as without replication: a
 * running program refuses open(O_WRONLY) with ETXTBSY, a mapped library
 * accepts it (and loses its replicas).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../kselftest_harness.h"
#include "replica_util.h"

#define PROGRAM	"/usr/bin/sleep"
#define LIBC	"/lib/x86_64-linux-gnu/libc.so.6"

FIXTURE(exec) {
	char dir[PATH_MAX];
	char prog[PATH_MAX + 16];
	char lib[PATH_MAX + 16];
	char prev_policy[32];
	pid_t child;
};

static int copy_file(const char *from, const char *to, mode_t mode)
{
	char buf[65536];
	int in, out;
	ssize_t n;

	in = open(from, O_RDONLY);
	if (in < 0)
		return -1;
	out = open(to, O_WRONLY | O_CREAT | O_TRUNC, mode);
	if (out < 0) {
		close(in);
		return -1;
	}
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, n) != n)
			n = -1;
	close(in);
	if (n < 0 || fsync(out)) {
		close(out);
		return -1;
	}
	return close(out);
}

/* Run @prog on @node with the libraries of @dir first; don't wait. */
static pid_t spawn_on(const char *prog, const char *dir, int node,
		      const char *secs)
{
	pid_t pid = fork_child();

	if (pid)
		return pid;
	if (bind_to_node(node))
		_exit(100);
	setenv("LD_LIBRARY_PATH", dir, 1);
	execl(prog, prog, secs, (char *)NULL);
	_exit(101);
}

static int run_on(const char *prog, const char *dir, int node)
{
	int status;
	pid_t pid = spawn_on(prog, dir, node, "0");

	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* Wait until @pid sleeps with our library mapped. */
static int wait_started(pid_t pid, const char *lib)
{
	char path[64], line[512], state;
	int tries, mapped;
	FILE *f;

	for (tries = 0; tries < 200; tries++) {
		snprintf(path, sizeof(path), "/proc/%d/maps", pid);
		f = fopen(path, "r");
		if (!f)
			return -1;
		mapped = 0;
		while (fgets(line, sizeof(line), f))
			mapped |= !!strstr(line, lib);
		fclose(f);
		snprintf(path, sizeof(path), "/proc/%d/stat", pid);
		f = fopen(path, "r");
		if (!f)
			return -1;
		state = 0;
		if (fscanf(f, "%*d %*s %c", &state) != 1)
			state = 0;
		fclose(f);
		if (mapped && state == 'S')
			return 0;
		usleep(50000);
	}
	return -1;
}

/*
 * Where the present pages of @pid's executable mappings of @file live:
 * counts per node in @on[0], @on[1], present pages in total returned.
 */
static int text_nodes(pid_t pid, const char *file, int on[2])
{
	char path[64], line[512], name[PATH_MAX];
	unsigned long start, end, addr;
	int present = 0;
	FILE *f;

	on[0] = 0;
	on[1] = 0;
	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char perms[8];

		if (sscanf(line, "%lx-%lx %7s %*s %*s %*s %4095s", &start,
			   &end, perms, name) != 4 ||
		    strcmp(name, file) || perms[2] != 'x')
			continue;
		for (addr = start; addr < end; addr += PAGE_SIZE_4K) {
			void *page = (void *)addr;
			int status;

			if (sys_move_pages(pid, 1, &page, NULL, &status, 0))
				continue;
			if (status < 0)
				continue;
			present++;
			if (status <= 1)
				on[status]++;
		}
	}
	fclose(f);
	return present;
}

FIXTURE_SETUP(exec)
{
	if (nr_online_nodes() < 2)
		SKIP(return, "needs 2 NUMA nodes, the guest has %d",
		     nr_online_nodes());
	if (access(PROGRAM, X_OK) || access(LIBC, R_OK))
		SKIP(return, "%s or %s missing from the disk", PROGRAM, LIBC);
	if (policy_require("private", self->prev_policy,
			   sizeof(self->prev_policy)))
		SKIP(return, "no replication policy \"private\" in this kernel");
	ASSERT_NE(NULL, getcwd(self->dir, sizeof(self->dir) - 32));
	strcat(self->dir, "/exec-test");
	ASSERT_EQ(0, mkdir(self->dir, 0755));
	snprintf(self->prog, sizeof(self->prog), "%s/sleep", self->dir);
	snprintf(self->lib, sizeof(self->lib), "%s/libc.so.6", self->dir);
	/* Written from node 0: their page cache is there. */
	ASSERT_EQ(0, copy_file(PROGRAM, self->prog, 0755));
	ASSERT_EQ(0, copy_file(LIBC, self->lib, 0755));
	ASSERT_EQ(0, run_on(self->prog, self->dir, 0));
}

FIXTURE_TEARDOWN(exec)
{
	int status;

	if (self->child > 0) {
		kill(self->child, SIGKILL);
		waitpid(self->child, &status, 0);
	}
	if (self->dir[0]) {
		unlink(self->prog);
		unlink(self->lib);
		rmdir(self->dir);
	}
	if (self->prev_policy[0])
		policy_set(self->prev_policy);
}

TEST_F(exec, node1_runs_from_local_text)
{
	int on[2], present;

	self->child = spawn_on(self->prog, self->dir, 1, "30");
	ASSERT_LT(0, self->child);
	ASSERT_EQ(0, wait_started(self->child, self->lib));

	present = text_nodes(self->child, self->prog, on);
	TH_LOG("program: %d text pages present, %d on node 0, %d on node 1",
	       present, on[0], on[1]);
	ASSERT_LT(0, present);
	ASSERT_EQ(present, on[1]);

	present = text_nodes(self->child, self->lib, on);
	TH_LOG("library: %d text pages present, %d on node 0, %d on node 1",
	       present, on[0], on[1]);
	ASSERT_LT(0, present);
	ASSERT_EQ(present, on[1]);
}

TEST_F(exec, running_program_refuses_write)
{
	int fd;

	self->child = spawn_on(self->prog, self->dir, 1, "30");
	ASSERT_LT(0, self->child);
	ASSERT_EQ(0, wait_started(self->child, self->lib));
	fd = open(self->prog, O_WRONLY);
	ASSERT_EQ(-1, fd);
	ASSERT_EQ(ETXTBSY, errno);
}

TEST_F(exec, mapped_library_accepts_write)
{
	int on[2], present, fd;

	self->child = spawn_on(self->prog, self->dir, 1, "30");
	ASSERT_LT(0, self->child);
	ASSERT_EQ(0, wait_started(self->child, self->lib));
	present = text_nodes(self->child, self->lib, on);
	ASSERT_LT(0, present);
	ASSERT_EQ(present, on[1]);

	fd = open(self->lib, O_WRONLY);
	ASSERT_LE(0, fd);
	/* Its replicas are gone from the program's page tables. */
	present = text_nodes(self->child, self->lib, on);
	TH_LOG("library open for write: %d text pages present, %d on node 1",
	       present, on[1]);
	ASSERT_EQ(0, on[1]);
	close(fd);
	ASSERT_EQ(0, kill(self->child, 0));
}

TEST_HARNESS_MAIN
