/*
 * run-batch.c - `crashlab run A.wl B.wl DIR/ [-j N]`: many workloads as one
 * batch (engine/batch.h). Every workload is parsed and simulated before
 * anything runs; each becomes a run of its own, with the command line it
 * would have had alone (so `run --resume`, show, report, browse and
 * compare treat it like any run), stored in the batch's order whatever the
 * number of workers. One progress line covers the whole batch; a table with
 * one line per run and the batch's figures ends it. --shard I/N keeps the
 * I-th of N contiguous slices of the workloads (docs/sharding.md), after
 * every one was parsed and simulated.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "cmd/run.h"
#include "core/fs.h"
#include "crashdb/crashdb.h"
#include "engine/batch.h"
#include "engine/guest.h"
#include "engine/pool.h"
#include "host/intr.h"
#include "host/msg.h"
#include "host/progress.h"
#include "host/sys.h"
#include "images/basedisk.h"
#include "judge/models.h"
#include "kbuild/kbuild.h"

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int cmd_run_find_workloads(const char *dir, struct strvec *out, struct errbuf *e)
{
	DIR *d = opendir(dir);
	if (!d)
		return errbuf_errno(e, errno, "cannot read the folder '%s'", dir);
	struct strvec names = STRVEC_INIT;
	struct dirent *de;
	while ((de = readdir(d)))
		if (de->d_name[0] != '.')
			strvec_push(&names, de->d_name);
	closedir(d);
	if (names.n)
		qsort(names.v, names.n, sizeof(char *), cmp_str);
	int r = 0;
	size_t dl = strlen(dir);
	for (size_t i = 0; i < names.n && r == 0; i++) {
		char *path = xasprintf("%s%s%s", dir, dl && dir[dl - 1] == '/' ? "" : "/", names.v[i]);
		struct stat st;
		size_t nl = strlen(names.v[i]);
		if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
			r = cmd_run_find_workloads(path, out, e);
		else if (nl > 3 && !strcmp(names.v[i] + nl - 3, ".wl"))
			strvec_push(out, path);
		free(path);
	}
	strvec_free(&names);
	return r;
}

/* The command line a workload's run would have had alone: this workload,
 * and every option but -j. */
static char *single_cmdline(int argc, char **orig, char **pos, int npos, const char *file)
{
	struct strvec av = STRVEC_INIT;
	strvec_pushl(&av, "crashlab", "run", file, NULL);
	for (int i = 1; i < argc; i++) { /* orig[0] is "run" */
		int positional = 0;
		for (int k = 0; k < npos; k++)
			positional |= orig[i] == pos[k];
		if (positional)
			continue;
		if (!strcmp(orig[i], "-j") || !strcmp(orig[i], "--jobs")) {
			i++;
			continue;
		}
		if (!strncmp(orig[i], "--jobs=", 7) || (!strncmp(orig[i], "-j", 2) && orig[i][2]))
			continue;
		strvec_push(&av, orig[i]);
	}
	char *s = strvec_join_quoted(&av);
	strvec_free(&av);
	return s;
}

/* "I/N" of --shard: 0 with *i and *n (1 <= I <= N), or -1. */
static int parse_shard(const char *s, size_t *i, size_t *n)
{
	char *end;
	if (!s || *s < '0' || *s > '9')
		return -1;
	unsigned long long a = strtoull(s, &end, 10);
	if (*end != '/' || end[1] < '0' || end[1] > '9')
		return -1;
	unsigned long long b = strtoull(end + 1, &end, 10);
	if (*end || a < 1 || b < 1 || a > b || b > 1000000)
		return -1;
	*i = (size_t)a;
	*n = (size_t)b;
	return 0;
}

/* The store, with each run's folder locked while the run is begun and not ended. */
struct bstore {
	struct sink real;
	struct batch_item *items;
	int *locks;
	size_t n;
};

static size_t item_of(const struct bstore *bs, const struct run_info *run)
{
	for (size_t i = 0; i < bs->n; i++)
		if (bs->items[i].run == run)
			return i;
	return 0;
}

static int bs_run_begin(void *ctx, struct run_info *run, struct errbuf *e)
{
	struct bstore *bs = ctx;
	size_t i = item_of(bs, run);
	if (mkdir_p(run->workdir, 0755) < 0)
		return errbuf_errno(e, errno, "cannot create '%s'", run->workdir);
	char *lock = xasprintf("%s/" CRASHDB_RUN_LOCK, run->workdir);
	bs->locks[i] = lock_take(lock);
	int r = bs->locks[i] < 0 ? errbuf_errno(e, errno, "cannot lock '%s'", lock) : 0;
	free(lock);
	if (r < 0)
		return -1;
	free(run->started_at);
	run->started_at = cmd_utc_now();
	return bs->real.run_begin(bs->real.ctx, run, e);
}

static int bs_fsrun_begin(void *ctx, struct fsrun *fr, struct errbuf *e)
{
	struct bstore *bs = ctx;
	return bs->real.fsrun_begin(bs->real.ctx, fr, e);
}

static int bs_fsrun_recorded(void *ctx, const struct fsrun *fr, struct errbuf *e)
{
	struct bstore *bs = ctx;
	return bs->real.fsrun_recorded(bs->real.ctx, fr, e);
}

static int bs_state(void *ctx, const struct fsrun *fr, struct state_result *st, struct errbuf *e)
{
	struct bstore *bs = ctx;
	return bs->real.state(bs->real.ctx, fr, st, e);
}

static int bs_fsrun_end(void *ctx, const struct fsrun *fr, struct errbuf *e)
{
	struct bstore *bs = ctx;
	return bs->real.fsrun_end(bs->real.ctx, fr, e);
}

static int bs_run_end(void *ctx, const struct run_info *run, struct errbuf *e)
{
	struct bstore *bs = ctx;
	size_t i = item_of(bs, run);
	int r = bs->real.run_end(bs->real.ctx, run, e);
	if (bs->locks[i] >= 0)
		close(bs->locks[i]);
	bs->locks[i] = -1;
	return r;
}

/* What the workers' guests are, and the batch's memory as seen so far. */
struct bctx {
	const struct vm_config *guest;
	pthread_mutex_t mu;
	const char *pool_prefix;     /* the pools' folders: <prefix>-poolN */
	int pools;
	struct strvec pool_dirs;
	struct progress *bar;
	size_t nfs;
	long peak_kib;               /* crashlab and every guest, summed, at the highest sample */
	size_t peak_guests;
	struct pool_stats ps;        /* of the pools that are done, summed */
};

/* Resident memory of a process (KiB) and its parent, from /proc/PID/status. */
static long proc_rss(const char *pid, long *ppid)
{
	char path[64], line[256];
	snprintf(path, sizeof(path), "/proc/%s/status", pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return 0;
	long rss = 0;
	*ppid = 0;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "PPid:", 5))
			*ppid = atol(line + 5);
		else if (!strncmp(line, "VmRSS:", 6))
			rss = atol(line + 6);
	}
	fclose(f);
	return rss;
}

/* Sample crashlab's memory with its guests' (its children, QEMU). */
static void sample_memory(struct bctx *c)
{
	DIR *d = opendir("/proc");
	if (!d)
		return;
	char self[32];
	snprintf(self, sizeof(self), "%d", (int)getpid());
	long ppid, total = proc_rss(self, &ppid);
	size_t guests = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		long rss = proc_rss(de->d_name, &ppid);
		if (ppid == (long)getpid()) {
			total += rss;
			guests++;
		}
	}
	closedir(d);
	if (total > c->peak_kib)
		c->peak_kib = total;
	if (guests > c->peak_guests)
		c->peak_guests = guests;
}

/* File systems whose guests a worker keeps up at once: a recording and a
 * checker guest each (up to 1 GiB of guest memory apiece). */
#define LIVE_FS 2

/* Each worker's guests: a pool (engine/pool.h) in a folder of its own
 * beside the runs' folders, removed with it. */
static const struct backend *pool_new(void *ctx)
{
	struct bctx *c = ctx;
	pthread_mutex_lock(&c->mu);
	char *dir = xasprintf("%s-pool%d", c->pool_prefix, ++c->pools);
	pthread_mutex_unlock(&c->mu);
	mkdir_p(dir, 0755);
	struct pool_opts po = { .guest = c->guest, .slots = 0, .dir = dir, .max_fs = LIVE_FS };
	const struct backend *b = pool_backend_new(&po);
	pthread_mutex_lock(&c->mu);
	strvec_push(&c->pool_dirs, dir);
	pthread_mutex_unlock(&c->mu);
	free(dir);
	return b;
}

static void pool_free(void *ctx, const struct backend *b)
{
	struct bctx *c = ctx;
	struct pool_stats ps;
	pool_backend_stats(b, &ps);
	pthread_mutex_lock(&c->mu);
	c->ps.record_boots += ps.record_boots;
	c->ps.checker_boots += ps.checker_boots;
	c->ps.recordings += ps.recordings;
	pthread_mutex_unlock(&c->mu);
	pool_backend_free(b);
}

static size_t pool_failures(void *ctx, const struct backend *b)
{
	(void)ctx;
	struct pool_stats ps;
	pool_backend_stats(b, &ps);
	return ps.guest_failures;
}

static void batch_progress(void *ctx, const struct batch_stats *st)
{
	struct bctx *c = ctx;
	sample_memory(c);
	if (!c->bar)
		return;
	char step[200], eta[16] = "?";
	if (st->jobs_done && st->jobs_done < st->jobs)
		progress_fmt_time(st->elapsed / (double)st->jobs_done * (double)(st->jobs - st->jobs_done), eta,
				  sizeof(eta));
	snprintf(step, sizeof(step), "%zu/%zu workloads, %.1f states/s, ETA %s", st->runs_done, st->runs,
		 st->elapsed > 0 ? (double)st->states / st->elapsed : 0.0, st->jobs_done >= st->jobs ? "0s" : eta);
	progress_update(c->bar, st->jobs_stored, step);
	progress_tick(c->bar);
}

/* One line per run: id, status, per fs the outcome and its states, the workload. */
static void print_run_line(const struct batch_item *it, size_t nfs)
{
	printf("%6" PRId64 "  %-11s", it->run->id, it->run->status ? it->run->status : "?");
	for (size_t f = 0; f < nfs; f++) {
		const struct fs_summary *s = &it->sums[f];
		size_t lost = 0;
		for (int m = 0; m < MODEL_COUNT; m++)
			if (s->models & (1u << m))
				lost += s->verdicts[m][V_LOST];
		char cell[48];
		if (strcmp(s->outcome, "ok"))
			snprintf(cell, sizeof(cell), "%s", s->outcome);
		else if (lost || s->verdicts[MODEL_UNIVERSAL][V_BROKEN])
			snprintf(cell, sizeof(cell), "%zu:%zuL%zuU", s->states, lost, s->verdicts[MODEL_UNIVERSAL][V_BROKEN]);
		else
			snprintf(cell, sizeof(cell), "%zu", s->states);
		printf(" %-9s", cell);
	}
	printf(" %s\n", it->run->workload_file ? it->run->workload_file : "");
}

int cmd_run_batch(struct cmd_ctx *ctx, int argc, char **orig, char **pos, int npos, struct run_args *a)
{
	const char *cmd = ctx->name;
	struct errbuf e;
	if (npos < 1)
		usage_error(cmd, "no workload file given");
	if (a->jobs == 0 || a->jobs > 64)
		usage_error(cmd, "-j %d: give between 1 and 64 workers", a->jobs);
	size_t shard_i = 1, shard_n = 1;
	if (a->shard && parse_shard(a->shard, &shard_i, &shard_n) < 0)
		usage_error(cmd, "--shard '%s': give I/N, the I-th of N slices, with 1 <= I <= N (e.g. --shard 2/4)",
			    a->shard);
	struct strvec files = STRVEC_INIT;
	for (int i = 0; i < npos; i++) {
		if (is_dir(pos[i])) {
			size_t before = files.n;
			if (cmd_run_find_workloads(pos[i], &files, &e) < 0)
				die_err(&e);
			if (files.n == before)
				die_code(EXIT_NOINPUT, "%s: no .wl file in this folder", pos[i]);
		} else {
			strvec_push(&files, pos[i]);
		}
	}
	enum crash_mode mode;
	if (crash_mode_parse(a->crash, &mode) < 0)
		usage_error(cmd, "unknown crash mode '%s' (use flush, write or reorder)", a->crash);
	if (a->torn && mode != CRASH_REORDER)
		usage_error(cmd, "--torn needs --crash reorder");
	long long size = cmd_size(ctx, a->size_s);
	struct strvec fss = STRVEC_INIT;
	cmd_fs_list(ctx, a->fs_list, &fss);
	cmd_run_check_opts(cmd, &a->mkfs_opts, "--mkfs-opts", &fss);
	cmd_run_check_opts(cmd, &a->mount_opts, "--mount-opts", &fss);

	/* Every workload parses and simulates before anything runs. */
	size_t n = files.n;
	struct wl_workload *ws = xcalloc(n, sizeof(*ws));
	struct sbuf *texts = xcalloc(n, sizeof(*texts));
	for (size_t i = 0; i < n; i++) {
		if (wl_load(files.v[i], &texts[i], &ws[i], &e) < 0)
			die_err(&e);
		unsigned set;
		if (models_select(a->model_list, NULL, NULL, &ws[i], &set, &e) < 0)
			usage_error(cmd, "%s", e.msg);
		struct sim sim;
		if (sim_run(&sim, &ws[i], NULL, &e) < 0)
			die_code(EXIT_DATAERR, "%s: %s", files.v[i], e.msg);
		cmd_run_hints(&ws[i], &sim, files.v[i]);
		sim_free(&sim);
		if (expect_validate(&ws[i], &e) < 0)
			die_err(&e);
		if (a->check_only)
			printf("%s: %zu setup op%s, %zu run op%s, %zu expectation%s\n", files.v[i], ws[i].nsetup,
			       ws[i].nsetup == 1 ? "" : "s", ws[i].n - ws[i].nsetup, ws[i].n - ws[i].nsetup == 1 ? "" : "s",
			       ws[i].nexpects, ws[i].nexpects == 1 ? "" : "s");
	}
	if (a->check_only) {
		for (size_t i = 0; i < n; i++) {
			wl_free(&ws[i]);
			sbuf_free(&texts[i]);
		}
		free(ws);
		free(texts);
		strvec_free(&files);
		strvec_free(&fss);
		return 0;
	}

	/* This shard's slice: workloads [lo, hi) of the batch's order, whole
	 * chunks of the batch (engine/batch.h), so that the shards merged in
	 * order store what the batch stores on one machine. */
	size_t total = n, lo = 0, chunk = 0;
	if (a->shard) {
		chunk = batch_chunk(total, fss.n);
		/* more shards than chunks: smaller chunks, so each shard has work
		 * (the merge then interleaves fs runs unlike one machine) */
		while (chunk > 1 && (total + chunk - 1) / chunk < shard_n)
			chunk = (chunk + 1) / 2;
		size_t nchunks = (total + chunk - 1) / chunk;
		lo = (shard_i - 1) * nchunks / shard_n * chunk;
		size_t hi = shard_i * nchunks / shard_n * chunk;
		if (hi > total)
			hi = total;
		if (lo > total)
			lo = total;
		for (size_t i = 0; i < total; i++)
			if (i < lo || i >= hi) {
				wl_free(&ws[i]);
				sbuf_free(&texts[i]);
			}
		memmove(ws, ws + lo, (hi - lo) * sizeof(*ws));
		memmove(texts, texts + lo, (hi - lo) * sizeof(*texts));
		struct strvec slice = STRVEC_INIT;
		for (size_t i = lo; i < hi; i++)
			strvec_push(&slice, files.v[i]);
		strvec_free(&files);
		files = slice;
		n = hi - lo;
		if (!n) {
			/* the database is made all the same, so every shard's can be merged */
			crashdb_close(cmd_db_open(ctx));
			printf("shard %zu/%zu has no workloads: the batch has %zu, fewer than its %zu shards; nothing to run\n",
			       shard_i, shard_n, total, shard_n);
			free(ws);
			free(texts);
			strvec_free(&files);
			strvec_free(&fss);
			return 0;
		}
		note("shard %zu/%zu: workloads %zu to %zu of the batch's %zu", shard_i, shard_n, lo + 1, hi, total);
	}

	struct vm_config guest = { .mem_mb = 1024 };
	cmd_guest(ctx, &guest);
	/* what the workers' threads would otherwise each find out first: the
	 * base images, QEMU's sandbox support, the cache folder */
	vm_qemu_has_sandbox();
	for (size_t f = 0; f < fss.n; f++) {
		char *base = img_base_ensure(fss.v[f], size, cmd_run_opts_for(&a->mkfs_opts, fss.v[f]), &e);
		if (!base)
			die_err(&e);
		free(base);
	}
	struct crashdb *db = cmd_db_open(ctx);
	char *runs_dir = cache_subdir("runs", &e);
	if (!runs_dir)
		die_err(&e);
	char *t0 = cmd_utc_now();
	const char *kver = kernel_version(guest.kernel);
	char *kkey = cmd_kernel_key(ctx->kernel);
	struct run_info *runs = xcalloc(n, sizeof(*runs));
	struct batch_item *items = xcalloc(n, sizeof(*items));
	struct fs_summary *sums = xcalloc(n * fss.n, sizeof(*sums));
	for (size_t i = 0; i < n; i++) {
		runs[i] = (struct run_info){
			.started_at = xstrdup(t0), .cmdline = single_cmdline(argc, orig, pos, npos, files.v[i]),
			.accel = xstrdup(guest.accel), .kernel_version = xstrdup(kver ? kver : ""), .kernel_key = xstrdup(kkey),
			.workload_file = xstrdup(files.v[i]), .workload_text = xstrdup(texts[i].buf),
			.crash_mode = xstrdup(a->crash), .seed = a->seed, .max_states = a->max_states, .torn = a->torn,
			.status = xstrdup("running"), .pid = getpid(),
			.workdir = xasprintf("%s/%s-%d-%zu", runs_dir, t0, (int)getpid(), lo + i + 1),
		};
		items[i] = (struct batch_item){ .w = &ws[i], .run = &runs[i], .sums = &sums[i * fss.n] };
	}
	struct fs_params *fps = xcalloc(fss.n, sizeof(*fps));
	for (size_t i = 0; i < fss.n; i++)
		fps[i] = (struct fs_params){ fss.v[i], cmd_run_opts_for(&a->mkfs_opts, fss.v[i]),
					     cmd_run_opts_for(&a->mount_opts, fss.v[i]), NULL };
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	int workers = a->jobs > 0 ? a->jobs : cores > 0 ? (int)cores : 1;
	char *pool_prefix = xasprintf("%s/%s-%d", runs_dir, t0, (int)getpid());
	struct bctx bc = { .nfs = fss.n, .guest = &guest, .pool_prefix = pool_prefix, .mu = PTHREAD_MUTEX_INITIALIZER };
	struct batch_params bp = {
		.p = { .guest = &guest, .size = size, .mode = mode, .seed = (uint64_t)a->seed,
		       .max_states = (size_t)a->max_states, .torn = a->torn, .models = a->model_list,
		       .dedup = !a->no_dedup },
		.fss = fps, .nfs = fss.n, .items = items, .n = n, .workers = workers, .chunk = chunk, .live_fs = LIVE_FS,
		.backend_new = pool_new, .backend_free = pool_free,
		.guest_failures = pool_failures, .ctx = &bc, .progress = batch_progress,
	};
	guest_barrier_syscalls(ctx->kernel, &bp.p.nr_fbarrier, &bp.p.nr_fdatabarrier);
	struct bstore bs = { .items = items, .n = n, .locks = xcalloc(n, sizeof(int)) };
	for (size_t i = 0; i < n; i++)
		bs.locks[i] = -1;
	crashdb_sink(db, &bs.real);
	struct sink sink = { &bs, bs_run_begin, bs_fsrun_begin, bs_fsrun_recorded, bs_state, bs_fsrun_end, bs_run_end };
	note("a batch of %zu workload%s on %zu file system%s, %d worker%s", n, n == 1 ? "" : "s", fss.n,
	     fss.n == 1 ? "" : "s", workers, workers == 1 ? "" : "s");
	char title[32];
	snprintf(title, sizeof(title), "batch");
	bc.bar = progress_start(title, n * fss.n);
	intr_install();
	struct batch_stats st;
	int rc = batch_run(&bp, &sink, &st, &e);
	progress_done(bc.bar, NULL);
	for (size_t i = 0; i < bc.pool_dirs.n; i++)
		rm_rf(bc.pool_dirs.v[i]);
	strvec_free(&bc.pool_dirs);
	free(pool_prefix);
	if (rc < 0)
		die_err(&e);

	/* The table: one line per stored run. */
	printf("%6s  %-11s", "run", "status");
	for (size_t f = 0; f < fss.n; f++)
		printf(" %-9s", fss.v[f]);
	printf(" workload\n");
	size_t findings = 0, failed = 0, ok = 0;
	int64_t first_finding = 0;
	for (size_t i = 0; i < n; i++) {
		if (!items[i].begun)
			continue;
		print_run_line(&items[i], fss.n);
		if (items[i].rc == EXIT_FINDING) {
			findings++;
			if (!first_finding)
				first_finding = runs[i].id;
		} else if (items[i].rc)
			failed++;
		else
			ok++;
	}
	printf("(a cell: crash states, or states:LOSTs L and universal rules broken U; a failed fs says how)\n");
	size_t built = 0, dedup = 0, checked = 0;
	for (size_t i = 0; i < n * fss.n; i++) {
		built += sums[i].built;
		dedup += sums[i].deduplicated;
		checked += sums[i].checked;
	}
	struct rusage self, kids;
	getrusage(RUSAGE_SELF, &self);
	getrusage(RUSAGE_CHILDREN, &kids);
	char took[16];
	progress_fmt_time(st.elapsed, took, sizeof(took));
	printf("\n%zu run%s: %zu ok, %zu with findings, %zu failed%s\n", st.runs_done, st.runs_done == 1 ? "" : "s", ok,
	       findings, failed, st.runs_done < n ? " (the rest not started)" : "");
	printf("%zu workload%s x %zu fs in %s with %d worker%s: %.2f s per workload per fs, %zu crash states, "
	       "%.1f states/s\n",
	       n, n == 1 ? "" : "s", fss.n, took, workers, workers == 1 ? "" : "s",
	       st.jobs_done ? st.elapsed / (double)st.jobs_done : 0.0, st.states,
	       st.elapsed > 0 ? (double)st.states / st.elapsed : 0.0);
	printf("crash states: %zu built, %zu deduplicated, %zu checked in a guest (%.1f checked/s)\n", built, dedup, checked,
	       st.elapsed > 0 ? (double)checked / st.elapsed : 0.0);
	printf("jobs run again after a guest failure: %zu; peak memory: %ld MiB (crashlab and its guests, "
	       "at most %zu processes at once; crashlab alone %ld MiB, the largest guest %ld MiB); "
	       "jobs held back for the order at most %zu\n",
	       st.retries, bc.peak_kib / 1024, bc.peak_guests, self.ru_maxrss / 1024, kids.ru_maxrss / 1024,
	       st.peak_held);
	printf("guests booted: %zu for %zu recordings, %zu checkers\n", bc.ps.record_boots, bc.ps.recordings,
	       bc.ps.checker_boots);
	if (intr_pending())
		printf("interrupted: what was checked is stored; each run goes on with: crashlab run --resume RUN%s\n",
		       cmd_db_arg(ctx));
	else if (first_finding)
		printf("findings: crashlab report %" PRId64 "%s (and the other runs with findings)\n", first_finding,
		       cmd_db_arg(ctx));

	crashdb_close(db);
	for (size_t i = 0; i < n; i++) {
		if (bs.locks[i] >= 0)
			close(bs.locks[i]);
		run_info_free(&runs[i]);
		wl_free(&ws[i]);
		sbuf_free(&texts[i]);
	}
	free(bs.locks);
	free(runs);
	free(items);
	free(sums);
	free(fps);
	free(ws);
	free(texts);
	free(t0);
	free(kkey);
	free(runs_dir);
	guest_config_free(&guest);
	strvec_free(&files);
	strvec_free(&fss);
	return rc;
}
