/*
 * run.c - `crashlab run`: the core loop. For each file system: record the
 * workload (engine/record.c), enumerate crash states from the write log
 * (engine/states.c), check every state in a checker guest (engine/checker.c) and
 * store it in crashdb, one transaction per state. Ends with a table.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cmd/cmds.h"
#include "crashdb/crashdb.h"
#include "images/basedisk.h"
#include "engine/guest.h"
#include "judge/judge.h"
#include "kbuild/kbuild.h"
#include "cmd/opt.h"
#include "host/progress.h"
#include "engine/runner.h"
#include "engine/states.h"

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
	"Every crash state is then judged (GUARANTEES.md): explained as the set of\n"
	"ops whose effects it shows, and checked against each guarantee model. A\n"
	"second table counts, per file system and selected model, the promises LOST,\n"
	"the universal rules broken (U1-U5) and the bonus (kept beyond the promise).\n"
	"'crashlab report RUN' explains each finding.\n"
	"\n"
	"models (--model LIST, comma-separated, or 'all'; default: posix and the file\n"
	"system's own model, plus barrier/fiemap_sync when the workload uses them):\n"
	"  sequential, posix, ext4, xfs, btrfs, f2fs-posix, f2fs-strict, somc,\n"
	"  barrier, fiemap_sync\n"
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

static void check_opts_list(const struct strvec *list, const char *what, const struct strvec *fss)
{
	for (size_t i = 0; i < list->n; i++) {
		const char *colon = strchr(list->v[i], ':');
		if (!colon)
			usage_error("crashlab run", "%s '%s' must be FS:OPTIONS (e.g. ext4:data=journal)", what,
				    list->v[i]);
		char *fs = xasprintf("%.*s", (int)(colon - list->v[i]), list->v[i]);
		if (!img_fs_valid(fs))
			usage_error("crashlab run", "%s names unknown file system '%s' (choose from %s)", what, fs,
				    img_fs_list());
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

int cmd_run(int argc, char **argv)
{
	const char *fs_list = "all", *crash = "flush", *db_path = CRASHDB_DEFAULT, *accel = "auto";
	const char *size_s = "512M";
	struct strvec mkfs_opts = STRVEC_INIT, mount_opts = STRVEC_INIT;
	const char *model_list = NULL;
	int seed = 1, max_states = 0, torn = 0;
	const struct opt opts[] = {
		{ OPT_STRING, 0, "fs", &fs_list, "LIST", "file systems, comma-separated (default: all four)" },
		{ OPT_STRING, 0, "crash", &crash, "MODE", "flush (default), write or reorder" },
		{ OPT_INT, 0, "seed", &seed, "N", "seed of --crash reorder's random subsets (default 1)" },
		{ OPT_INT, 0, "max-states", &max_states, "N", "cap on crash states per file system (default 1024)" },
		{ OPT_BOOL, 0, "torn", &torn, NULL, "reorder: also tear writes at 512-byte sectors" },
		{ OPT_LIST, 0, "mkfs-opts", &mkfs_opts, "FS:OPTS", "extra mkfs options for one fs; repeatable" },
		{ OPT_LIST, 0, "mount-opts", &mount_opts, "FS:OPTS", "mount options for one fs; repeatable" },
		{ OPT_STRING, 0, "size", &size_s, "SIZE", "test disk size (default 512M; xfs needs 300M)" },
		{ OPT_STRING, 0, "model", &model_list, "LIST", "models to count and judge the exit status by, or 'all'" },
		{ OPT_STRING, 0, "db", &db_path, "FILE", "database (default ./crashlab.db)" },
		{ OPT_STRING, 0, "accel", &accel, "auto|kvm|tcg", "accelerator" },
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
	int n = opt_parse(argc, argv, opts, run_usage, 0);
	if (n != 1)
		usage_error("crashlab run", n ? "give one workload file" : "no workload file given");
	enum lab_crash_mode mode;
	if (lab_crash_mode_parse(crash, &mode) < 0)
		usage_error("crashlab run", "unknown crash mode '%s' (use flush, write or reorder)", crash);
	if (torn && mode != LAB_CRASH_REORDER)
		usage_error("crashlab run", "--torn needs --crash reorder");
	long long size = parse_size(size_s);
	if (size <= 0)
		usage_error("crashlab run", "bad size '%s' (use e.g. 512M)", size_s);
	struct strvec fss = STRVEC_INIT;
	img_fs_split("crashlab run", fs_list, &fss);
	check_opts_list(&mkfs_opts, "--mkfs-opts", &fss);
	check_opts_list(&mount_opts, "--mount-opts", &fss);

	/* The workload: a parse error stops everything before anything runs. */
	const char *file = argv[0];
	struct sbuf text = SBUF_INIT;
	struct wl_workload w;
	lab_workload_load(file, &text, &w);
	{
		unsigned set;
		char merr[256];
		if (lab_models_select(model_list, NULL, &w, &set, merr, sizeof(merr)) < 0)
			usage_error("crashlab run", "%s", merr);
		if (sim_check(&w, merr, sizeof(merr)) < 0)
			die_code(EXIT_DATAERR, "%s: %s", file, merr);
	}

	struct crashdb *db;
	char derr[512];
	if (crashdb_open(db_path, &db, derr, sizeof(derr)) < 0)
		die_code(EXIT_CANTCREAT, "%s", derr);

	struct lab_vm_config guest = { .mem_mb = 1024 };
	lab_guest_prepare(&guest, accel);
	char *kkey;
	if (opt_kernel) {
		kkey = xasprintf("user:%s", opt_kernel);
	} else {
		struct lab_kbuild_opts ko = { 0 };
		char key[65];
		struct sbuf kerr = SBUF_INIT;
		int kcode;
		kkey = xstrdup(lab_kbuild_key(&ko, key, &kerr, &kcode) == 0 ? key : "");
		sbuf_free(&kerr);
	}
	char *started = utc_now();
	const char *kver = lab_kernel_version(guest.kernel);
	struct crashdb_run run = {
		.started_at = started, .cmdline = cmdline, .accel = guest.accel,
		.kernel_version = kver ? kver : "", .kernel_key = kkey ? kkey : "", .workload_file = file,
		.workload_text = text.buf, .crash_mode = crash, .seed = seed, .max_states = max_states,
		.torn = torn,
	};
	if (crashdb_run_insert(db, &run) < 0)
		die("%s", crashdb_error(db));

	/* The write logs stay with the run (so any state can be rebuilt); the
	 * folder is unique even across databases. */
	char *workdir = xasprintf("%s/runs/%s-%lld-%d", cache_dir(), started, (long long)run.id, (int)getpid());
	if (mkdir_p(workdir, 0755) < 0)
		die_code(exit_for_errno(errno), "cannot create '%s': %s", workdir, errno_advice(errno));

	struct lab_fs_summary *sums = xcalloc(fss.n, sizeof(*sums));
	struct lab_run_params params = {
		.w = &w, .guest = &guest, .size = size, .mode = mode, .seed = (uint64_t)seed,
		.max_states = (size_t)max_states, .torn = torn, .workdir = workdir, .models = model_list,
	};
	int rc = 0;
	for (size_t i = 0; i < fss.n; i++) {
		const char *fs = fss.v[i];
		int r = lab_run_fs(db, run.id, fs, opts_for(&mkfs_opts, fs), opts_for(&mount_opts, fs), &params,
				   &sums[i]);
		if (r && !rc)
			rc = r;
	}
	/* A promise broken under a selected model, or a universal rule broken: exit 1. */
	int finding = 0;
	for (size_t i = 0; i < fss.n; i++) {
		finding |= sums[i].verdicts[LAB_M_UNIVERSAL][LAB_V_BROKEN] > 0;
		for (int m = 0; m < LAB_M_COUNT; m++)
			if (sums[i].models & (1u << m))
				finding |= sums[i].verdicts[m][LAB_V_LOST] > 0;
	}
	if (!rc && finding)
		rc = EXIT_FINDING;
	crashdb_run_finish(db, run.id, rc == EXIT_FINDING ? "findings" : rc ? "failed" : "ok", rc);

	printf("run %lld: %s on %zu file system%s, crash mode %s (%s)\n", (long long)run.id, file, fss.n,
	       fss.n == 1 ? "" : "s", crash, guest.accel);
	printf("%-7s %7s %7s %7s %9s %8s  %s\n", "fs", "states", "mount", "fsck", "distinct", "time", "");
	printf("%-7s %7s %7s %7s %9s %8s\n", "", "", "failed", "flagged", "trees", "");
	for (size_t i = 0; i < fss.n; i++) {
		struct lab_fs_summary *s = &sums[i];
		char t[16];
		progress_fmt_time(s->ms / 1000, t, sizeof(t));
		printf("%-7s %7zu %7zu %7zu %9zu %8s  %s\n", s->fs, s->states, s->mount_fail, s->fsck_fail,
		       s->distinct, t, s->error[0] ? s->error : "");
	}
	printf("\n%-7s %-12s %6s %7s %6s %6s %6s  %s\n", "fs", "model", "LOST", "broken", "bonus", "kept", "gone",
	       "(broken: universal rules U1-U5, the same for every model)");
	for (size_t i = 0; i < fss.n; i++) {
		struct lab_fs_summary *s = &sums[i];
		size_t broken = s->verdicts[LAB_M_UNIVERSAL][LAB_V_BROKEN];
		for (int m = 0; m < LAB_M_COUNT; m++) {
			if (!(s->models & (1u << m)))
				continue;
			printf("%-7s %-12s %6zu %7zu %6zu %6zu %6zu\n", s->fs, lab_model_name(m), s->verdicts[m][LAB_V_LOST],
			       broken, s->verdicts[m][LAB_V_BONUS], s->verdicts[m][LAB_V_KEPT], s->verdicts[m][LAB_V_GONE]);
		}
		if (s->unexplained)
			printf("%-7s %zu state%s no set of ops explains (U3)\n", s->fs, s->unexplained,
			       s->unexplained == 1 ? "" : "s");
	}
	printf("findings: crashlab report %lld%s%s\n", (long long)run.id, strcmp(db_path, CRASHDB_DEFAULT) ? " --db " : "",
	       strcmp(db_path, CRASHDB_DEFAULT) ? db_path : "");
	printf("details: crashlab show %lld%s%s\n", (long long)run.id, strcmp(db_path, CRASHDB_DEFAULT) ? " --db " : "",
	       strcmp(db_path, CRASHDB_DEFAULT) ? db_path : "");
	crashdb_close(db);
	for (size_t i = 0; i < fss.n; i++)
		free(sums[i].sim_notes);
	free(sums);
	free(workdir);
	free(started);
	free(kkey);
	free(cmdline);
	wl_free(&w);
	sbuf_free(&text);
	strvec_free(&fss);
	strvec_free(&mkfs_opts);
	strvec_free(&mount_opts);
	return rc;
}
