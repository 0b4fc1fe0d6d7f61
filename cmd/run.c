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
#include "cmd/run.h"
#include "core/fs.h"
#include "crashdb/crashdb.h"
#include "engine/guest.h"
#include "engine/runner.h"
#include "host/intr.h"
#include "host/msg.h"
#include "host/sys.h"
#include "judge/judge.h"
#include "judge/models.h"
#include "judge/sim.h"
#include "kbuild/kbuild.h"

static const char run_usage[] =
	"usage: crashlab run WORKLOAD.wl [--fs LIST] [--crash flush|write|reorder] [options]\n"
	"       crashlab run A.wl B.wl DIR/ ... [-j N] [options]     (a batch)\n"
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
	"overlayfs: a workload whose first header is [overlay] runs [setup] in the\n"
	"lower layer and [run] through an overlay over lower/, upper/ and work/ on the\n"
	"file system under test; every crash state is checked through the overlay,\n"
	"as the program sees it (README \"Workloads\", tutorials/overlayfs/).\n"
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
	"interrupting: Ctrl-C (SIGINT) or SIGTERM stops the run within a second or two:\n"
	"the guests are killed, every crash state stored so far stays (each is stored\n"
	"whole or not at all), the run is marked 'interrupted' and the command exits\n"
	"130 (143 for SIGTERM). 'crashlab run --resume RUN' goes on where it stopped,\n"
	"also after crashlab itself was killed ('crashlab list' says 'crashed'): it\n"
	"takes the stored options and workload, keeps every file system that had\n"
	"finished and every state already checked, checks the rest of a recorded log,\n"
	"and records again a file system whose recording had not finished. A second\n"
	"Ctrl-C stops at once; the run can still be resumed.\n"
	"\n"
	"backends: --backend libvirt runs every guest (recording, checker) as a\n"
	"transient libvirt domain instead of a QEMU started here; --connect URI says\n"
	"which libvirt (qemu+ssh://HOST/system: another machine, where the kernel,\n"
	"initramfs, images and write logs must be at the same paths). The results\n"
	"are the same as with the default --backend qemu.\n"
	"\n"
	"batches: several workloads, folders of .wl files (subfolders too, in name\n"
	"order) or -j make one batch. Every workload is parsed and simulated before\n"
	"anything runs; each becomes a run of its own (as if run alone: list, show,\n"
	"report, compare, browse and --resume take it), stored in the order given\n"
	"whatever finishes first, so -j 1 and -j N store the same rows. -j N workers\n"
	"(default: the cores) each keep their own guests; a job whose guest failed\n"
	"runs once more in a fresh guest, and nothing of the failed try is stored.\n"
	"One progress line covers the batch (workloads done, states/s, ETA); a line\n"
	"per run and the batch's figures end it.\n"
	"\n"
	"shards: --shard I/N runs only the I-th of N slices of the batch, so that N\n"
	"machines share it: the workloads in the batch's order (as given, folders\n"
	"expanded in name order) cut into N contiguous slices of the chunks the\n"
	"batch works in (16 workloads, fewer in small batches or for many shards).\n"
	"Every workload is still parsed and simulated, so a bad one stops every\n"
	"shard. Each run's command line keeps --shard I/N. A shard without\n"
	"workloads says so and exits 0 with an empty database. 'crashlab db merge\n"
	"ALL.db SHARD1.db ... SHARDN.db' (in shard order) makes the batch's database;\n"
	"docs/sharding.md has recipes for GNU parallel over ssh and Slurm arrays.\n"
	"\n"
	"deduplication: crash states whose rebuilt disks are the same (the same final\n"
	"content of every sector their writes touch, hashed from the write log on the\n"
	"host) are checked once; the others are stored with a copy of that check (its\n"
	"times 0), and states with the same tree and the same ops completed are\n"
	"judged once. The table says per file system how many states were built,\n"
	"deduplicated and checked. --no-dedup checks and judges every state.\n"
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
	"  crashlab run --resume last      # go on with a run that was interrupted\n"
	"  crashlab gen --seq 1 --out seq1 && crashlab run seq1/ -j 2   # a generated suite\n"
	"  crashlab run seq1/ --shard 2/4 --db shard-2.db   # this machine's quarter of it\n"
	"  crashlab run my.wl --fs ext4 --mkfs-opts ext4:'-O ^has_journal' --mount-opts ext4:data=journal\n"
	"then: crashlab show last\n";

const char *cmd_run_opts_for(const struct strvec *list, const char *fs)
{
	const char *res = NULL;
	size_t n = strlen(fs);
	for (size_t i = 0; i < list->n; i++)
		if (!strncmp(list->v[i], fs, n) && list->v[i][n] == ':')
			res = list->v[i] + n + 1;
	return res;
}

void cmd_run_check_opts(const char *cmd, const struct strvec *list, const char *what, const struct strvec *fss)
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

void cmd_run_hints(const struct wl_workload *w, const struct sim *s, const char *file)
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

/* Parse argv into a (defaults first); the count of positionals (argv[0..n)). */
static int parse_args(struct cmd_ctx *ctx, int argc, char **argv, struct run_args *a)
{
	*a = (struct run_args){ .fs_list = "all", .crash = "flush", .size_s = "512M", .seed = 1, .jobs = -1 };
	const struct opt opts[] = {
		{ OPT_BOOL, 0, "check", &a->check_only, NULL, "only check the workload: parse and simulate it, run nothing" },
		{ OPT_STRING, 0, "fs", &a->fs_list, "LIST", "file systems, comma-separated (default: all four)" },
		{ OPT_STRING, 0, "crash", &a->crash, "MODE", "flush (default), write or reorder" },
		{ OPT_INT, 0, "seed", &a->seed, "N", "seed of --crash reorder's random subsets (default 1)" },
		{ OPT_INT, 0, "max-states", &a->max_states, "N", "cap on crash states per file system (default 1024)" },
		{ OPT_BOOL, 0, "torn", &a->torn, NULL, "reorder: also tear writes at 512-byte sectors" },
		{ OPT_LIST, 0, "mkfs-opts", &a->mkfs_opts, "FS:OPTS", "extra mkfs options for one fs; repeatable" },
		{ OPT_LIST, 0, "mount-opts", &a->mount_opts, "FS:OPTS", "mount options for one fs; repeatable" },
		{ OPT_STRING, 0, "size", &a->size_s, "SIZE", "test disk size (default 512M; xfs needs 300M)" },
		{ OPT_STRING, 0, "model", &a->model_list, "LIST", "models to count and judge the exit status by, or 'all'" },
		{ OPT_BOOL, 0, "no-dedup", &a->no_dedup, NULL, "check and judge every crash state, equal ones too" },
		{ OPT_STRING, 0, "resume", &a->resume, "RUN", "go on with an interrupted or crashed run (id, last, last~N)" },
		{ OPT_INT, 'j', "jobs", &a->jobs, "N", "a batch's workers, each with its own guests (default: the cores)" },
		{ OPT_STRING, 0, "shard", &a->shard, "I/N", "run only the I-th of N slices of the batch (1 <= I <= N)" },
		{ OPT_END, 0, NULL, NULL, NULL, NULL },
	};
	return cmd_parse(ctx, argc, argv, opts, run_usage, 0);
}

void cmd_run_args_free(struct run_args *a)
{
	strvec_free(&a->mkfs_opts);
	strvec_free(&a->mount_opts);
}

/* The run to resume, with the options it was started with (from its stored
 * command line) in a and its workload in w; dies when it cannot go on. The
 * run's lock is taken (*lock_fd). */
static void resume_prepare(struct cmd_ctx *ctx, struct crashdb *db, struct run_info *run, struct run_args *a,
			   struct wl_workload *w, struct strvec *av, int *lock_fd)
{
	struct errbuf e;
	int64_t id;
	if (crashdb_resolve_run(db, a->resume, &id, &e) < 0 || crashdb_read_run(db, id, run, &e) < 0)
		die_err(&e);
	if (!strcmp(run->status, "running"))
		die_code(EXIT_USAGE, "run %" PRId64 " is still running (crashlab pid %" PRId64 "); stop it first or let it end",
			 id, run->pid);
	if (strcmp(run->status, "interrupted") && strcmp(run->status, "crashed"))
		die_code(EXIT_USAGE, "run %" PRId64 " ended (status %s): there is nothing to resume", id, run->status);
	/* the options it was started with (a's strings point into av) */
	strvec_split(av, run->cmdline ? run->cmdline : "");
	if (av->n < 2 || strcmp(av->v[0], "crashlab") || strcmp(av->v[1], "run"))
		die_code(EXIT_DATAERR, "run %" PRId64 "'s command line is not a crashlab run: '%s'", id,
			 run->cmdline ? run->cmdline : "");
	const char *db_path = ctx->db_path, *kernel = ctx->kernel, *accel = ctx->accel;
	const char *backend = ctx->backend, *connect = ctx->connect;
	int verbose = ctx->verbose, quiet = ctx->quiet;
	char **args = xcalloc(av->n, sizeof(char *));
	for (size_t i = 1; i < av->n; i++)
		args[i - 1] = av->v[i];
	cmd_run_args_free(a);
	int n = parse_args(ctx, (int)av->n - 1, args, a);
	if (n != 1 || a->resume)
		die_code(EXIT_DATAERR, "run %" PRId64 "'s command line cannot be resumed: '%s'", id, run->cmdline);
	/* where and how it runs now is this invocation's business */
	ctx->db_path = db_path;
	ctx->accel = accel;
	ctx->backend = backend;
	ctx->connect = connect;
	ctx->verbose = verbose;
	ctx->quiet = quiet;
	msg_configure(verbose, quiet);
	if (kernel)
		ctx->kernel = kernel;
	free(args);
	if (!run->workload_text || wl_parse(run->workload_file ? run->workload_file : "workload", run->workload_text, w,
					     &e) < 0)
		die_code(EXIT_DATAERR, "run %" PRId64 "'s stored workload does not parse: %s", id, e.msg);
	/* the same kernel, or the results would not be one run's */
	char *key = cmd_kernel_key(ctx->kernel);
	if (run->kernel_key && *run->kernel_key && strcmp(key, run->kernel_key))
		die_code(EXIT_USAGE, "run %" PRId64 " used another kernel (%s); this crashlab's is %s: resume it with the "
			 "crashlab and kernel series it was started with, or give its kernel with --kernel "
			 "(or --kernel-source)",
			 id, run->kernel_key, key);
	free(key);
	if (!run->workdir)
		die_code(EXIT_DATAERR, "run %" PRId64 " was stored by an older crashlab that did not keep its folder: it "
			 "cannot be resumed; run it again", id);
	if (mkdir_p(run->workdir, 0755) < 0)
		die_code(exit_for_errno(errno), "cannot create '%s': %s", run->workdir, errno_advice(errno));
	char *lock = xasprintf("%s/" CRASHDB_RUN_LOCK, run->workdir);
	*lock_fd = lock_take(lock);
	if (*lock_fd < 0)
		die_code(errno == EWOULDBLOCK ? EXIT_USAGE : exit_for_errno(errno), "cannot lock run %" PRId64 " ('%s'): %s",
			 id, lock, errno == EWOULDBLOCK ? "another crashlab is resuming it" : errno_advice(errno));
	free(lock);
	run->pid = getpid();
	if (crashdb_run_resume(db, run, &e) < 0)
		die_err(&e);
}

int cmd_run(int argc, char **argv, struct cmd_ctx *ctx)
{
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
	struct run_args a;
	char **orig = xcalloc((size_t)argc + 1, sizeof(char *));
	memcpy(orig, argv, (size_t)argc * sizeof(char *));
	int n = parse_args(ctx, argc, argv, &a);
	const int resuming = a.resume != NULL; /* a is the stored run's options once resume_prepare read them */
	if (!resuming && (n > 1 || a.jobs >= 0 || a.shard || (n == 1 && is_dir(argv[0])))) {
		/* many workloads, a folder of them, -j or --shard: a batch */
		int rc = cmd_run_batch(ctx, argc, orig, argv, n, &a);
		free(orig);
		free(cmdline);
		cmd_run_args_free(&a);
		return rc;
	}
	free(orig);
	struct errbuf e;
	struct sbuf text = SBUF_INIT;
	struct wl_workload w;
	struct run_info run = { 0 };
	struct crashdb *db = NULL;
	int lock_fd = -1;
	struct strvec stored_args = STRVEC_INIT;
	const char *file;
	if (resuming) {
		if (n)
			usage_error(cmd, "--resume takes the run's own workload and options: give nothing else");
		db = cmd_db_existing(ctx);
		resume_prepare(ctx, db, &run, &a, &w, &stored_args, &lock_fd);
		file = run.workload_file;
	} else {
		if (n != 1)
			usage_error(cmd, "no workload file given");
		/* The workload: a parse error stops everything before anything runs. */
		file = argv[0];
		if (wl_load(file, &text, &w, &e) < 0)
			die_err(&e);
	}
	enum crash_mode mode;
	if (crash_mode_parse(a.crash, &mode) < 0)
		usage_error(cmd, "unknown crash mode '%s' (use flush, write or reorder)", a.crash);
	if (a.torn && mode != CRASH_REORDER)
		usage_error(cmd, "--torn needs --crash reorder");
	long long size = cmd_size(ctx, a.size_s);
	struct strvec fss = STRVEC_INIT;
	cmd_fs_list(ctx, a.fs_list, &fss);
	cmd_run_check_opts(cmd, &a.mkfs_opts, "--mkfs-opts", &fss);
	cmd_run_check_opts(cmd, &a.mount_opts, "--mount-opts", &fss);

	unsigned set;
	if (models_select(a.model_list, NULL, NULL, &w, &set, &e) < 0)
		usage_error(cmd, "%s", e.msg);
	struct sim sim; /* the workload simulated once: what it cannot model stops it, what fails is said */
	if (sim_run(&sim, &w, NULL, &e) < 0)
		die_code(EXIT_DATAERR, "%s: %s", file, e.msg);
	if (!resuming)
		cmd_run_hints(&w, &sim, file);
	sim_free(&sim);
	if (expect_validate(&w, &e) < 0)
		die_err(&e);
	if (a.check_only) {
		printf("%s: %zu setup op%s, %zu run op%s, %zu expectation%s", file, w.nsetup, w.nsetup == 1 ? "" : "s",
		       w.n - w.nsetup, w.n - w.nsetup == 1 ? "" : "s", w.nexpects, w.nexpects == 1 ? "" : "s");
		if (w.nexpects)
			printf(" (judged once op %d completed)", wl_expect_point(&w));
		if (w.overlay)
			printf("; [setup] in an overlay's lower layer, [run] through the overlay");
		printf("\n");
		wl_free(&w);
		sbuf_free(&text);
		free(cmdline);
		cmd_run_args_free(&a);
		strvec_free(&fss);
		strvec_free(&stored_args);
		return 0;
	}

	struct vm_config guest = { .mem_mb = 1024 };
	cmd_guest(ctx, &guest);
	if (!resuming) {
		db = cmd_db_open(ctx);
		const char *kver = kernel_version(guest.kernel);
		run = (struct run_info){
			.started_at = cmd_utc_now(), .cmdline = cmdline, .accel = xstrdup(guest.accel),
			.kernel_version = xstrdup(kver ? kver : ""), .kernel_key = cmd_kernel_key(ctx->kernel),
			.workload_file = xstrdup(file), .workload_text = xstrdup(text.buf), .crash_mode = xstrdup(a.crash),
			.seed = a.seed, .max_states = a.max_states, .torn = a.torn, .status = xstrdup("running"),
			.pid = getpid(),
		};
		cmdline = NULL;
		/* The write logs, consoles and the lock stay with the run (so any
		 * state can be rebuilt, and the run resumed); the folder is unique
		 * even across databases. */
		lock_fd = cmd_run_folder(&run, NULL, &e);
		if (lock_fd < 0)
			die_err(&e);
	}

	struct fs_params *fps = xcalloc(fss.n, sizeof(*fps));
	for (size_t i = 0; i < fss.n; i++)
		fps[i] = (struct fs_params){ fss.v[i], cmd_run_opts_for(&a.mkfs_opts, fss.v[i]), cmd_run_opts_for(&a.mount_opts, fss.v[i]),
					     NULL };
	struct crashdb_resume R = { 0 };
	if (resuming && crashdb_resume_fs(db, &run, &w, fps, fss.n, &R, &e) < 0)
		die_err(&e);
	struct run_params params = {
		.w = &w, .guest = &guest, .backend = backend_qemu(), .size = size, .mode = mode, .seed = (uint64_t)a.seed,
		.max_states = (size_t)a.max_states, .torn = a.torn, .workdir = run.workdir, .models = a.model_list,
		.dedup = !a.no_dedup,
	};
	guest_barrier_syscalls(ctx->kernel, &params.nr_fbarrier, &params.nr_fdatabarrier);
	struct sink sink;
	crashdb_sink(db, &sink);
	struct fs_summary *sums = xcalloc(fss.n, sizeof(*sums));
	/* From here a Ctrl-C stops the run between two steps, nothing half-stored. */
	intr_install();
	int rc = runner_run(&params, fps, fss.n, &run, &sink, sums, &e);
	if (rc < 0)
		die_err(&e);
	/* A fs run that failed says why, in full, before the table. */
	for (size_t i = 0; i < fss.n; i++)
		if (sums[i].exit_code)
			error("%s: %s", sums[i].fs, sums[i].error);
	render_run_table(stdout, &run, sums, fss.n);
	if (intr_pending()) {
		printf("interrupted: what was checked is stored; go on with: crashlab run --resume %" PRId64 "%s\n", run.id,
		       cmd_db_arg(ctx));
	} else {
		printf("findings: crashlab report %" PRId64 "%s\n", run.id, cmd_db_arg(ctx));
		printf("details: crashlab show %" PRId64 "%s\n", run.id, cmd_db_arg(ctx));
		/* Last, what each file system kept, side by side: the answer the run
		 * was for. Marked under the one model --model names, else each fs's own. */
		int view_model = a.model_list && !strchr(a.model_list, ',') ? model_parse(a.model_list) : -1;
		putchar('\n');
		if (cmp_show(db, &run.id, 1, NULL, view_model, "text", &e) < 0)
			warning("the comparison view: %s", e.msg);
	}
	crashdb_close(db);
	if (lock_fd >= 0)
		close(lock_fd);
	crashdb_resume_free(&R);
	free(sums);
	free(fps);
	free(cmdline);
	run_info_free(&run);
	guest_config_free(&guest);
	wl_free(&w);
	sbuf_free(&text);
	strvec_free(&fss);
	cmd_run_args_free(&a);
	strvec_free(&stored_args);
	return rc;
}
