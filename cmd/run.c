/*
 * run.c - `crashlab run`: check the options and the workload, describe the
 * run, and hand it to the run loop (engine/runner.c) with the database as
 * its sink (crashdb/write.c); then print the run table from what the loop
 * counted.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "cmd/compare.h"
#include "cmd/render.h"
#include "core/fs.h"
#include "crashdb/crashdb.h"
#include "engine/guest.h"
#include "engine/runner.h"
#include "host/msg.h"
#include "host/sys.h"
#include "judge/judge.h"
#include "judge/models.h"
#include "judge/sim.h"
#include "kbuild/kbuild.h"

static const char run_usage[] =
	"usage: crashlab run WORKLOAD.wl [--fs LIST] [--crash flush|write|reorder] [options]\n"
	"\n"
	"Run the workload on each file system in a guest, recording every block write\n"
	"and flush that reaches the disk; cut the power after the last op; rebuild the\n"
	"disk at every crash point; mount each crash state in a checker guest (journal\n"
	"recovery runs), capture what survived and run the file system's fsck; store\n"
	"everything in the database and print, per file system, the number of crash\n"
	"states, mount failures, fsck complaints and distinct observed trees.\n"
	"\n"
	"Every crash state is then judged (docs/guarantees.md): explained as the set of\n"
	"ops whose effects it shows, and checked against each guarantee model. A\n"
	"second table counts, per file system and selected model, the promises LOST,\n"
	"the universal rules broken (U1-U5) and the bonus (kept beyond the promise).\n"
	"'crashlab report RUN' explains each finding.\n"
	"\n"
	"models (--model LIST, comma-separated, or 'all'; default: posix and the file\n"
	"system's own model under its mount options (f2fs with fsync_mode=strict:\n"
	"f2fs-strict), plus barrier/fiemap_sync when the workload uses them):\n"
	"  sequential, posix, ext4, xfs, btrfs, f2fs-posix, f2fs-strict, somc,\n"
	"  barrier, fiemap_sync, expect (the workload's [expect] lines: selected\n"
	"  when it has some)\n"
	"\n"
	"exit status: 1 when a selected model has a LOST or a universal rule is\n"
	"broken, 0 when every state is as promised.\n"
	"\n"
	"crash modes:\n"
	"  flush    one state per flush after setup, plus the final state (default)\n"
	"  write    every prefix of the write log\n"
	"  reorder  at each flush epoch, subsets of the writes still in the volatile\n"
	"           cache: exhaustive when few, seeded random otherwise (--seed,\n"
	"           --max-states); --torn also tears writes at 512-byte sectors\n"
	"\n"
	"examples:\n"
	"  crashlab run tutorials/seed/seed.wl\n"
	"  crashlab run my.wl --fs ext4,xfs --crash reorder --seed 7 --max-states 200\n"
	"  crashlab run my.wl --check      # parse and simulate only\n"
	"  crashlab run my.wl --fs ext4 --mkfs-opts ext4:'-O ^has_journal' --mount-opts ext4:data=journal\n"
	"then: crashlab show last\n";

/* "fs:opts" values of --mkfs-opts / --mount-opts for one fs, or NULL. */
static const char *opts_for(const struct strvec *list, const char *fs)
{
	const char *res = NULL;
	size_t n = strlen(fs);
	for (size_t i = 0; i < list->n; i++)
		if (!strncmp(list->v[i], fs, n) && list->v[i][n] == ':')
			res = list->v[i] + n + 1;
	return res;
}

static void check_opts_list(const char *cmd, const struct strvec *list, const char *what, const struct strvec *fss)
{
	for (size_t i = 0; i < list->n; i++) {
		const char *colon = strchr(list->v[i], ':');
		if (!colon)
			usage_error(cmd, "%s '%s' must be FS:OPTIONS (e.g. ext4:data=journal)", what, list->v[i]);
		char *fs = xstrndup(list->v[i], (size_t)(colon - list->v[i]));
		if (!fs_lookup(fs))
			usage_error(cmd, "%s names unknown file system '%s' (choose from %s)", what, fs, fs_names_text());
		bool used = false;
		for (size_t k = 0; k < fss->n; k++)
			used |= !strcmp(fss->v[k], fs);
		if (!used)
			warning("%s for '%s' is ignored: '%s' is not in --fs", what, fs, fs);
		free(fs);
	}
}

static char *utc_now(void)
{
	char buf[32];
	time_t t = time(NULL);
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
	return xstrdup(buf);
}

/* The kernel's cache key, or "user:<path>" for --kernel. */
static char *kernel_key_of(const char *user_kernel)
{
	if (user_kernel)
		return xasprintf("user:%s", user_kernel);
	struct kbuild_opts ko = { 0 };
	char key[65];
	struct errbuf e;
	return xstrdup(kbuild_key(&ko, key, &e) == 0 ? key : "");
}

/* What a workload most likely did not mean, said before anything runs:
 * an op the simulation says will fail (a mistyped path), and a [run]
 * without any op that makes something durable. */
static void workload_hints(const struct wl_workload *w, const struct sim *s, const char *file)
{
	for (size_t i = 0; i < w->n; i++)
		if (s->ops[i].sim_err) {
			char text[300];
			wl_format(&w->ops[i], text, sizeof(text));
			warning("%s:%d: op %d `%s` will fail (%s): it changes nothing, so no crash state can show it%s",
				file, w->ops[i].line, w->ops[i].id, text, strerror(s->ops[i].sim_err),
				s->ops[i].sim_err == ENOENT ? "; is the path spelled as an earlier op made it?" : "");
		}
	bool persists = false;
	for (size_t i = w->nsetup; i < w->n; i++)
		persists |= wl_is_persistence(&w->ops[i]) != 0;
	if (w->n > w->nsetup && !persists)
		note("%s: [run] has no fsync, fdatasync, sync or syncfs: nothing of it is promised to persist, so "
		     "only the universal rules and ordering promises can be broken; add one to test durability", file);
}

int cmd_run(int argc, char **argv, struct cmd_ctx *ctx)
{
	const char *fs_list = "all", *crash = "flush", *size_s = "512M", *model_list = NULL;
	struct strvec mkfs_opts = STRVEC_INIT, mount_opts = STRVEC_INIT;
	int seed = 1, max_states = 0, torn = 0, check_only = 0;
	const struct opt opts[] = {
		{ OPT_BOOL, 0, "check", &check_only, NULL, "only check the workload: parse and simulate it, run nothing" },
		{ OPT_STRING, 0, "fs", &fs_list, "LIST", "file systems, comma-separated (default: all four)" },
		{ OPT_STRING, 0, "crash", &crash, "MODE", "flush (default), write or reorder" },
		{ OPT_INT, 0, "seed", &seed, "N", "seed of --crash reorder's random subsets (default 1)" },
		{ OPT_INT, 0, "max-states", &max_states, "N", "cap on crash states per file system (default 1024)" },
		{ OPT_BOOL, 0, "torn", &torn, NULL, "reorder: also tear writes at 512-byte sectors" },
		{ OPT_LIST, 0, "mkfs-opts", &mkfs_opts, "FS:OPTS", "extra mkfs options for one fs; repeatable" },
		{ OPT_LIST, 0, "mount-opts", &mount_opts, "FS:OPTS", "mount options for one fs; repeatable" },
		{ OPT_STRING, 0, "size", &size_s, "SIZE", "test disk size (default 512M; xfs needs 300M)" },
		{ OPT_STRING, 0, "model", &model_list, "LIST", "models to count and judge the exit status by, or 'all'" },
		{ OPT_END, 0, NULL, NULL, NULL, NULL },
	};
	char *cmdline;
	{
		struct strvec all = STRVEC_INIT;
		strvec_push(&all, "crashlab");
		strvec_push(&all, "run");
		for (int i = 1; i < argc; i++)
			strvec_push(&all, argv[i]);
		cmdline = strvec_join_quoted(&all);
		strvec_free(&all);
	}
	const char *cmd = ctx->name;
	int n = cmd_parse(ctx, argc, argv, opts, run_usage, 0);
	if (n != 1)
		usage_error(cmd, n ? "give one workload file" : "no workload file given");
	enum crash_mode mode;
	if (crash_mode_parse(crash, &mode) < 0)
		usage_error(cmd, "unknown crash mode '%s' (use flush, write or reorder)", crash);
	if (torn && mode != CRASH_REORDER)
		usage_error(cmd, "--torn needs --crash reorder");
	long long size = cmd_size(ctx, size_s);
	struct strvec fss = STRVEC_INIT;
	struct errbuf e;
	cmd_fs_list(ctx, fs_list, &fss);
	check_opts_list(cmd, &mkfs_opts, "--mkfs-opts", &fss);
	check_opts_list(cmd, &mount_opts, "--mount-opts", &fss);

	/* The workload: a parse error stops everything before anything runs. */
	const char *file = argv[0];
	struct sbuf text = SBUF_INIT;
	struct wl_workload w;
	unsigned set;
	if (wl_load(file, &text, &w, &e) < 0)
		die_err(&e);
	if (models_select(model_list, NULL, NULL, &w, &set, &e) < 0)
		usage_error(cmd, "%s", e.msg);
	struct sim sim; /* the workload simulated once: what it cannot model stops it, what fails is said */
	if (sim_run(&sim, &w, NULL, &e) < 0)
		die_code(EXIT_DATAERR, "%s: %s", file, e.msg);
	workload_hints(&w, &sim, file);
	sim_free(&sim);
	if (expect_validate(&w, &e) < 0)
		die_err(&e);
	if (check_only) {
		printf("%s: %zu setup op%s, %zu run op%s, %zu expectation%s", file, w.nsetup, w.nsetup == 1 ? "" : "s",
		       w.n - w.nsetup, w.n - w.nsetup == 1 ? "" : "s", w.nexpects, w.nexpects == 1 ? "" : "s");
		if (w.nexpects)
			printf(" (judged once op %d completed)", wl_expect_point(&w));
		printf("\n");
		wl_free(&w);
		sbuf_free(&text);
		free(cmdline);
		return 0;
	}

	struct crashdb *db = cmd_db_open(ctx);
	struct vm_config guest = { .mem_mb = 1024 };
	cmd_guest(ctx, &guest);
	const char *kver = kernel_version(guest.kernel);
	struct run_info run = {
		.started_at = utc_now(), .cmdline = cmdline, .accel = xstrdup(guest.accel),
		.kernel_version = xstrdup(kver ? kver : ""), .kernel_key = kernel_key_of(ctx->kernel),
		.workload_file = xstrdup(file), .workload_text = xstrdup(text.buf), .crash_mode = xstrdup(crash),
		.seed = seed, .max_states = max_states, .torn = torn, .status = xstrdup("running"),
	};
	/* The write logs stay with the run (so any state can be rebuilt); the
	 * folder is unique even across databases. */
	char *runs = cache_subdir("runs", &e);
	if (!runs)
		die_err(&e);
	char *workdir = xasprintf("%s/%s-%d", runs, run.started_at, (int)getpid());
	if (mkdir_p(workdir, 0755) < 0)
		die_code(exit_for_errno(errno), "cannot create '%s': %s", workdir, errno_advice(errno));

	struct fs_params *fps = xcalloc(fss.n, sizeof(*fps));
	for (size_t i = 0; i < fss.n; i++)
		fps[i] = (struct fs_params){ fss.v[i], opts_for(&mkfs_opts, fss.v[i]), opts_for(&mount_opts, fss.v[i]) };
	struct run_params params = {
		.w = &w, .guest = &guest, .backend = backend_qemu(), .size = size, .mode = mode, .seed = (uint64_t)seed,
		.max_states = (size_t)max_states, .torn = torn, .workdir = workdir, .models = model_list,
	};
	guest_barrier_syscalls(ctx->kernel, &params.nr_fbarrier, &params.nr_fdatabarrier);
	struct sink sink;
	crashdb_sink(db, &sink);
	struct fs_summary *sums = xcalloc(fss.n, sizeof(*sums));
	int rc = runner_run(&params, fps, fss.n, &run, &sink, sums, &e);
	if (rc < 0)
		die_err(&e);
	/* A fs run that failed says why, in full, before the table. */
	for (size_t i = 0; i < fss.n; i++)
		if (sums[i].exit_code)
			error("%s: %s", sums[i].fs, sums[i].error);
	render_run_table(stdout, &run, sums, fss.n);
	printf("findings: crashlab report %" PRId64 "%s\n", run.id, cmd_db_arg(ctx));
	printf("details: crashlab show %" PRId64 "%s\n", run.id, cmd_db_arg(ctx));
	/* Last, what each file system kept, side by side: the answer the run
	 * was for. Marked under the one model --model names, else each fs's own. */
	int view_model = model_list && !strchr(model_list, ',') ? model_parse(model_list) : -1;
	putchar('\n');
	if (cmp_show(db, &run.id, 1, NULL, view_model, "text", &e) < 0)
		warning("the comparison view: %s", e.msg);
	crashdb_close(db);
	free(sums);
	free(fps);
	free(workdir);
	free(runs);
	run_info_free(&run);
	guest_config_free(&guest);
	wl_free(&w);
	sbuf_free(&text);
	strvec_free(&fss);
	strvec_free(&mkfs_opts);
	strvec_free(&mount_opts);
	return rc;
}
