/*
 * bench-suite.c - `crashlab bench suite`: the throughput of the whole lab on
 * a generated suite (crashlab gen), as a user pays it. It runs this
 * crashlab's own commands, so what it measures is exactly `crashlab run`:
 *
 *   1. the suite (or an evenly spaced sample of it) as one batch, -j N;
 *   2. a small evenly spaced sample of it run the way one workload was
 *      run before batches: one `crashlab run` per workload, one recording
 *      and one checker guest per file system, every state checked
 *      (--no-dedup), right after, so the speedup (seconds per workload per
 *      fs, old over batch) is a ratio measured side by side in one
 *      invocation. (The same few workloads as a batch of their own would
 *      say little: a guest boot is shared by many workloads or by none.)
 *
 * It prints seconds per workload per file system, crash states built and
 * checked per second, the deduplication ratio, and the floor: the time the
 * checked states spent mounting (journal or log recovery included) and in
 * fsck, which no scheduling can remove.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "cmd/run.h"
#include "crashdb/crashdb.h"
#include "host/intr.h"
#include "host/msg.h"
#include "host/progress.h"
#include "host/sys.h"

/* What one database of runs says about them. */
struct figures {
	size_t runs, jobs, states, checked;
	double ms_mount, ms_fsck, ms_check;  /* summed over the checked states */
	double wall;                         /* seconds, measured around the command */
};

/* Run this crashlab with argv (after "crashlab"), stdout to out_path,
 * stderr shown; its exit status, or -1. */
static int self_run(const struct strvec *args, const char *out_path)
{
	char exe[4096];
	ssize_t k = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (k <= 0)
		return -1;
	exe[k] = 0;
	struct strvec av = STRVEC_INIT;
	strvec_push(&av, exe);
	for (size_t i = 0; i < args->n; i++)
		strvec_push(&av, args->v[i]);
	pid_t pid = fork();
	if (pid < 0) {
		strvec_free(&av);
		return -1;
	}
	if (pid == 0) {
		int fd = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd >= 0)
			dup2(fd, 1);
		execv(av.v[0], av.v);
		_exit(127);
	}
	strvec_free(&av);
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	return WEXITSTATUS(st);
}

static int read_figures(const char *db_path, struct figures *fg, struct errbuf *e)
{
	struct crashdb *db;
	if (crashdb_open_existing(db_path, &db, e) < 0)
		return -1;
	struct run_row *rows;
	size_t nr;
	if (crashdb_list_runs(db, &rows, &nr, e) < 0) {
		crashdb_close(db);
		return -1;
	}
	fg->runs += nr;
	for (size_t i = 0; i < nr; i++) {
		struct fsrun *frs;
		size_t nf;
		if (crashdb_read_fsruns(db, rows[i].id, NULL, &frs, &nf, e) < 0)
			break;
		fg->jobs += nf;
		for (size_t f = 0; f < nf; f++) {
			struct state_result *sts;
			size_t ns;
			if (crashdb_read_states(db, frs[f].id, 0, &sts, &ns, e) < 0)
				break;
			fg->states += ns;
			for (size_t s = 0; s < ns; s++) {
				const struct check_report *c = &sts[s].check;
				double all = c->ms_replay + c->ms_mount + c->ms_capture + c->ms_fsck + c->ms_other;
				if (all <= 0)
					continue; /* a copy of a state with the same disk: not checked again */
				fg->checked++;
				fg->ms_mount += c->ms_mount;
				fg->ms_fsck += c->ms_fsck;
				fg->ms_check += all;
			}
			crashdb_states_free(sts, ns);
		}
		crashdb_fsruns_free(frs, nf);
	}
	run_rows_free(rows, nr);
	crashdb_close(db);
	return e->code ? -1 : 0;
}

/* k evenly spaced of v (all of them when k is 0 or at least v->n). */
static void spaced(const struct strvec *v, size_t k, struct strvec *out)
{
	if (!k || k >= v->n) {
		for (size_t i = 0; i < v->n; i++)
			strvec_push(out, v->v[i]);
		return;
	}
	for (size_t i = 0; i < k; i++)
		strvec_push(out, v->v[i * v->n / k]);
}

/* crashlab run FILES... with common options; the wall time; dies on a failure. */
static void timed_run(struct cmd_ctx *ctx, const struct strvec *files, const char *fs_list, int jobs, int classic,
		      const char *db, const char *out, double *wall)
{
	struct strvec av = STRVEC_INIT;
	strvec_push(&av, "run");
	for (size_t i = 0; i < files->n; i++)
		strvec_push(&av, files->v[i]);
	strvec_pushl(&av, "--fs", fs_list, "--db", db, NULL);
	if (classic)
		strvec_push(&av, "--no-dedup");
	else
		strvec_pushf(&av, "--jobs=%d", jobs);
	if (ctx->kernel)
		strvec_pushl(&av, "--kernel", ctx->kernel, NULL);
	if (ctx->accel)
		strvec_pushl(&av, "--accel", ctx->accel, NULL);
	double t0 = now_s();
	int rc = self_run(&av, out);
	*wall += now_s() - t0;
	strvec_free(&av);
	if (rc != 0 && rc != EXIT_FINDING) {
		if (intr_pending() || rc >= 128)
			exit(rc);
		die_code(rc > 0 ? rc : EXIT_SOFTWARE, "crashlab run failed (exit %d); its table is in '%s'", rc, out);
	}
}

static void print_row(const char *what, const struct figures *fg, size_t nfs)
{
	double per = fg->jobs ? fg->wall / (double)fg->jobs : 0;
	printf("%-28s %5zu %6.2f %8zu %8zu %6.2f %8.1f %8.1f\n", what, fg->jobs / (nfs ? nfs : 1), per, fg->states,
	       fg->checked, fg->checked ? (double)fg->states / (double)fg->checked : 0.0,
	       fg->wall > 0 ? (double)fg->states / fg->wall : 0.0, fg->wall > 0 ? (double)fg->checked / fg->wall : 0.0);
}

int cmd_bench_suite(int argc, char **argv, struct cmd_ctx *ctx, const char *usage)
{
	const char *fs_list = "all", *from = NULL, *keep = NULL;
	int seq = 1, jobs = 0, sample = 0, classic = 4;
	const struct opt opts[] = {
		{ OPT_INT, 0, "seq", &seq, "N", "the generated suite: crashlab gen --seq N (default 1)" },
		{ OPT_STRING, 0, "from", &from, "DIR", "the workloads of DIR instead of a generated suite" },
		{ OPT_STRING, 0, "fs", &fs_list, "LIST", "file systems (default: all four)" },
		{ OPT_INT, 'j', "jobs", &jobs, "N", "the batch's workers (default: the cores)" },
		{ OPT_INT, 0, "sample", &sample, "N", "N evenly spaced workloads of the suite (default: all)" },
		{ OPT_INT, 0, "classic", &classic, "N", "workloads run one at a time the old way, beside the batch (default 4)" },
		{ OPT_STRING, 0, "keep", &keep, "DIR", "keep the suite and the databases in DIR" },
		{ OPT_END, 0, NULL, NULL, NULL, NULL },
	};
	int n = cmd_parse(ctx, argc, argv, opts, usage, 0);
	if (n)
		usage_error(ctx->name, "unexpected argument '%s'", argv[0]);
	if (seq < 1 || seq > 3)
		usage_error(ctx->name, "--seq %d: 1, 2 or 3", seq);
	if (sample < 0 || classic < 0 || jobs < 0)
		usage_error(ctx->name, "--sample, --classic and -j take a count");
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	if (!jobs)
		jobs = cores > 0 ? (int)cores : 1;
	struct strvec fss = STRVEC_INIT;
	cmd_fs_list(ctx, fs_list, &fss);
	char *dir = keep ? xstrdup(keep) : cmd_tmpdir("suite");
	if (keep && mkdir_p(dir, 0755) < 0)
		die_code(exit_for_errno(errno), "cannot create '%s': %s", dir, errno_advice(errno));
	intr_install();

	/* the suite */
	struct strvec all = STRVEC_INIT;
	struct errbuf e;
	if (from) {
		if (cmd_run_find_workloads(from, &all, &e) < 0)
			die_err(&e);
	} else {
		char *suite = xasprintf("%s/suite", dir), *out = xasprintf("%s/gen.txt", dir);
		rm_rf(suite);
		struct strvec av = STRVEC_INIT;
		strvec_pushl(&av, "gen", "--out", suite, NULL);
		strvec_pushf(&av, "--seq=%d", seq);
		int rc = self_run(&av, out);
		strvec_free(&av);
		if (rc)
			die_code(rc > 0 ? rc : EXIT_SOFTWARE, "crashlab gen failed (exit %d): see '%s'", rc, out);
		if (cmd_run_find_workloads(suite, &all, &e) < 0)
			die_err(&e);
		free(suite);
		free(out);
	}
	if (!all.n)
		die_code(EXIT_NOINPUT, "no workload to run%s%s", from ? " in " : "", from ? from : "");
	struct strvec batch = STRVEC_INIT, small = STRVEC_INIT;
	spaced(&all, (size_t)sample, &batch);
	spaced(&batch, (size_t)classic, &small);
	note("bench suite: %zu workloads (%zu in the suite), %zu fs, %d worker%s; %zu of them also one at a time", batch.n,
	     all.n, fss.n, jobs, jobs == 1 ? "" : "s", small.n);

	struct figures fb = { 0 }, fc = { 0 };
	char *db = xasprintf("%s/batch.db", dir), *out = xasprintf("%s/batch.txt", dir);
	unlink(db);
	timed_run(ctx, &batch, fs_list, jobs, 0, db, out, &fb.wall);
	if (read_figures(db, &fb, &e) < 0)
		die_err(&e);
	free(db);
	free(out);
	if (small.n) {
		db = xasprintf("%s/classic.db", dir);
		unlink(db);
		for (size_t i = 0; i < small.n; i++) {
			struct strvec one = STRVEC_INIT;
			strvec_push(&one, small.v[i]);
			out = xasprintf("%s/classic-%zu.txt", dir, i + 1);
			timed_run(ctx, &one, fs_list, 1, 1, db, out, &fc.wall);
			free(out);
			strvec_free(&one);
		}
		if (read_figures(db, &fc, &e) < 0)
			die_err(&e);
		free(db);
	}
	printf("%-28s %5s %6s %8s %8s %6s %8s %8s\n", "", "wls", "s/wl/fs", "states", "checked", "dedup", "built/s",
	       "checked/s");
	char what[64];
	snprintf(what, sizeof(what), "suite, batch -j %d", jobs);
	print_row(what, &fb, fss.n);
	if (small.n) {
		print_row("sample, one run each (old)", &fc, fss.n);
		double old = fc.jobs ? fc.wall / (double)fc.jobs : 0, now = fb.jobs ? fb.wall / (double)fb.jobs : 0;
		if (now > 0)
			printf("speedup: %.1fx (%.2f s per workload per fs run one at a time, %.2f s in the batch)\n", old / now,
			       old, now);
	}
	double per = fb.jobs ? fb.wall / (double)fb.jobs : 0;
	double floor1 = fb.jobs ? (fb.ms_mount + fb.ms_fsck) / 1000.0 / (double)fb.jobs : 0;
	double floorj = floor1 / jobs;
	printf("floor: mount with recovery + fsck of each checked state: %.2f s per workload per fs in one guest, "
	       "%.2f s with %d workers side by side; the batch took %.2f s, %.1fx the floor\n",
	       floor1, floorj, jobs, per, floorj > 0 ? per / floorj : 0.0);
	printf("checking (replay, mount, capture, fsck, transport in the guest): %.2f s per workload per fs; "
	       "the rest (recording, guests, judging, storing): %.2f s\n",
	       fb.jobs ? fb.ms_check / 1000.0 / (double)fb.jobs / jobs : 0.0,
	       per - (fb.jobs ? fb.ms_check / 1000.0 / (double)fb.jobs / jobs : 0.0));
	if (!from && batch.n == all.n)
		printf("the whole seq-%d suite on %zu fs: %s\n", seq, fss.n, progress_fmt_time(fb.wall, what, sizeof(what)));
	if (keep)
		printf("kept in %s: the suite, batch.db, classic.db, sample.db and each run's table\n", dir);
	else
		rm_rf(dir);
	free(dir);
	strvec_free(&all);
	strvec_free(&batch);
	strvec_free(&small);
	strvec_free(&fss);
	return 0;
}
