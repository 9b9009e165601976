// SPDX-License-Identifier: GPL-2.0
/*
 * sqlthreads DB QUERIES RUNS CPU...: one process, one thread on each CPU
 * named, each with its own read-only connection to the SQLite database
 * DB, running the SQL of the file QUERIES RUNS times.  The workload of
 * make bench whose threads span nodes: every thread runs libsqlite3's
 * text (1.4 MB) from one mapping, in one page table, and reads the
 * database with read(2).  Exits 1 if a thread failed.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>

struct job {
	pthread_t thread;
	int cpu;
	int failed;
};

static const char *db_path;
static char *queries;
static int runs;

/* The rows are read, and dropped. */
static int drop_row(void *arg, int ncols, char **vals, char **names)
{
	return 0;
}

static void *run_queries(void *arg)
{
	struct job *job = arg;
	sqlite3 *db = NULL;
	cpu_set_t one;
	char *err = NULL;
	int i;

	CPU_ZERO(&one);
	CPU_SET(job->cpu, &one);
	if (pthread_setaffinity_np(pthread_self(), sizeof(one), &one) ||
	    sqlite3_open_v2(db_path, &db, SQLITE_OPEN_READONLY |
			    SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
		fprintf(stderr, "sqlthreads: cpu %d: cannot start\n", job->cpu);
		job->failed = 1;
		sqlite3_close(db);
		return NULL;
	}
	for (i = 0; i < runs && !job->failed; i++) {
		if (sqlite3_exec(db, queries, drop_row, NULL, &err) ==
		    SQLITE_OK)
			continue;
		fprintf(stderr, "sqlthreads: cpu %d: %s\n", job->cpu, err);
		sqlite3_free(err);
		job->failed = 1;
	}
	sqlite3_close(db);
	return NULL;
}

static char *read_file(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	long len;

	if (!f)
		return NULL;
	if (!fseek(f, 0, SEEK_END) && (len = ftell(f)) >= 0 &&
	    !fseek(f, 0, SEEK_SET)) {
		buf = calloc(1, len + 1);
		if (buf && fread(buf, 1, len, f) != (size_t)len) {
			free(buf);
			buf = NULL;
		}
	}
	fclose(f);
	return buf;
}

int main(int argc, char **argv)
{
	int nr_jobs = argc - 4, i, failed = 0;
	struct job *jobs;

	if (nr_jobs < 1) {
		fprintf(stderr, "usage: sqlthreads DB QUERIES RUNS CPU...\n");
		return 2;
	}
	db_path = argv[1];
	queries = read_file(argv[2]);
	runs = atoi(argv[3]);
	jobs = calloc(nr_jobs, sizeof(*jobs));
	if (!queries || !jobs) {
		fprintf(stderr, "sqlthreads: cannot read %s\n", argv[2]);
		return 1;
	}
	for (i = 0; i < nr_jobs; i++) {
		jobs[i].cpu = atoi(argv[4 + i]);
		if (pthread_create(&jobs[i].thread, NULL, run_queries,
				   &jobs[i])) {
			fprintf(stderr, "sqlthreads: no thread for cpu %d\n",
				jobs[i].cpu);
			return 1;
		}
	}
	for (i = 0; i < nr_jobs; i++) {
		pthread_join(jobs[i].thread, NULL);
		failed |= jobs[i].failed;
	}
	return failed;
}
