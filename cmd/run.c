/*
 * run.c - `crashlab run`: the core loop. For each file system: record the
 * workload (lab/record.c), enumerate crash states from the write log
 * (lab/states.c), check every state in a checker guest (lab/check.c) and
 * store it in crashdb, one transaction per state. Ends with a table.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cmds.h"
#include "crashdb/crashdb.h"
#include "images/basedisk.h"
#include "lab/check.h"
#include "lab/guest.h"
#include "lab/kbuild.h"
#include "lab/opt.h"
#include "lab/progress.h"
#include "lab/record.h"
#include "lab/states.h"
#include "lab/wlog.h"

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

static void split_fs(const char *list, struct strvec *out)
{
	char *copy = xstrdup(list);
	char *save = NULL;
	for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		if (!strcmp(t, "all")) {
			for (int i = 0; img_fs_names[i]; i++)
				strvec_push(out, img_fs_names[i]);
		} else if (!img_fs_valid(t)) {
			usage_error("crashlab run", "unknown file system '%s' (choose from %s)", t, img_fs_list());
		} else {
			strvec_push(out, t);
		}
	}
	free(copy);
	if (!out->n)
		usage_error("crashlab run", "no file system given to --fs");
}

struct fs_summary {
	const char *fs;
	size_t states, mount_fail, fsck_fail, distinct;
	const char *outcome;
	char error[1024];
	double ms;
};

struct rec_progress {
	struct progress *bar;
	const char *fs;
};

static void rec_progress_cb(void *ctx, size_t done, size_t total, const char *what)
{
	struct rec_progress *rp = ctx;
	char step[256];
	snprintf(step, sizeof(step), "op %zu/%zu: %s", done + 1, total, what);
	progress_update(rp->bar, done, step);
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

/* Record and check one file system; fills sum. Returns an exit code for a guest failure, else 0. */
static int run_fs(struct crashdb *db, int64_t run_id, const char *fs, const struct wl_workload *w,
		  const struct lab_vm_config *guest, const char *mkfs_opts, const char *mount_opts,
		  long long size, enum lab_crash_mode mode, uint64_t seed, size_t max_states, int torn,
		  const char *workdir, struct fs_summary *sum)
{
	double t0 = now_s();
	sum->fs = fs;
	long nr_fb, nr_fdb;
	lab_barrier_syscalls(&nr_fb, &nr_fdb);

	struct crashdb_fsrun fr = {
		.run_id = run_id, .fs = fs, .mkfs_opts = mkfs_opts ? mkfs_opts : "",
		.mount_opts = mount_opts ? mount_opts : "", .image_size = size, .outcome = "running",
	};
	if (crashdb_fsrun_insert(db, &fr) < 0)
		die("%s", crashdb_error(db));

	char title[64];
	snprintf(title, sizeof(title), "%s: recording", fs);
	struct rec_progress rp = { progress_start(title, w->n + 1), fs };
	struct lab_record_opts ro = {
		.fs = fs, .mkfs_opts = mkfs_opts, .mount_opts = mount_opts, .size = size, .w = w,
		.guest = guest, .nr_fbarrier = nr_fb, .nr_fdatabarrier = nr_fdb, .workdir = workdir,
		.progress = rec_progress_cb, .ctx = &rp,
	};
	struct lab_recording rec;
	int r = lab_record(&ro, &rec);
	progress_done(rp.bar, NULL);
	fr.base_image = rec.base;
	fr.qemu_cmdline = rec.qemu_cmdline;
	fr.record_ms = rec.ms;
	fr.setup_end = rec.setup_end;

	/* The ops, with their results and log positions. */
	struct crashdb_op *ops = xcalloc(w->n ? w->n : 1, sizeof(*ops));
	char (*texts)[512] = xcalloc(w->n ? w->n : 1, sizeof(*texts));
	for (size_t i = 0; i < w->n; i++) {
		wl_format(&w->ops[i], texts[i], sizeof(texts[i]));
		ops[i] = (struct crashdb_op){
			.op_id = w->ops[i].id, .section = w->ops[i].section, .text = texts[i],
			.line = w->ops[i].line, .ret = rec.res[i].ret, .err = rec.res[i].err,
			.ino = rec.res[i].ino, .ino2 = rec.res[i].ino2, .log_pos = rec.res[i].log_pos,
			.ms = rec.res[i].ms,
		};
	}
	if (r == 0 && crashdb_ops_insert(db, fr.id, ops, w->n) < 0)
		die("%s", crashdb_error(db));

	int rc = 0;
	if (r < 0) {
		fr.outcome = rec.outcome == LAB_OK ? "error" : lab_outcome_name(rec.outcome);
		fr.error = rec.error;
		snprintf(sum->error, sizeof(sum->error), "%s", rec.error);
		sum->outcome = fr.outcome;
		rc = rec.outcome == LAB_OK ? EXIT_GUEST : lab_outcome_exit(rec.outcome);
		crashdb_fsrun_update(db, &fr);
		goto out;
	}

	/* The log and its crash states. */
	int lfd = open(rec.log_path, O_RDONLY | O_CLOEXEC);
	struct wlog log;
	char err[256];
	if (lfd < 0 || wlog_open(&log, lfd, err, sizeof(err)) < 0) {
		if (lfd < 0)
			snprintf(err, sizeof(err), "%s", errno_advice(errno));
		snprintf(sum->error, sizeof(sum->error), "write log '%s': %s", rec.log_path, err);
		fr.outcome = sum->outcome = "error";
		fr.error = sum->error;
		crashdb_fsrun_update(db, &fr);
		rc = EXIT_DATAERR;
		goto out;
	}
	struct wlog_counts ls;
	wlog_count(&log, 0, log.n, &ls);
	fr.log_entries = (int64_t)log.n;
	fr.log_committed = (int64_t)log.committed;
	fr.log_flushes = (int64_t)ls.flushes;
	fr.log_writes = (int64_t)ls.writes;
	fr.log_discards = (int64_t)ls.discards;
	fr.log_bytes = (int64_t)ls.bytes_written;
	fr.log_truncated = log.dropped;
	struct lab_crash_state *states = NULL;
	size_t nstates = 0;
	if (lab_states_enumerate(&log, (uint64_t)rec.setup_end, mode, seed, max_states, torn, &states, &nstates,
				 err, sizeof(err)) < 0) {
		snprintf(sum->error, sizeof(sum->error), "crash states: %s", err);
		fr.outcome = sum->outcome = "error";
		fr.error = sum->error;
		crashdb_fsrun_update(db, &fr);
		rc = EXIT_DATAERR;
		wlog_close(&log);
		close(lfd);
		goto out;
	}

	snprintf(title, sizeof(title), "%s: checking", fs);
	struct progress *bar = progress_start(title, nstates);
	struct lab_checker ck;
	enum lab_outcome o = lab_checker_start(&ck, guest, fs, rec.base, rec.log_path, mount_opts);
	struct strvec hashes = STRVEC_INIT;
	for (size_t i = 0; i < nstates && o == LAB_OK; i++) {
		struct lab_crash_state *cs = &states[i];
		char step[96];
		snprintf(step, sizeof(step), "state %zu/%zu (%s)", i + 1, nstates, cs->kind);
		progress_update(bar, i, step);
		struct lab_state_report rep;
		char cerr[512];
		o = lab_checker_state(&ck, cs->text, &rep, cerr, sizeof(cerr));
		if (o != LAB_OK)
			break;
		if (cerr[0]) {
			progress_abort(bar);
			bar = NULL;
			snprintf(sum->error, sizeof(sum->error), "%s", cerr);
			lab_state_report_free(&rep);
			o = LAB_LOST;
			break;
		}
		int last = 0;
		for (size_t k = 0; k < w->n; k++)
			if (w->ops[k].section == WL_RUN && rec.res[k].log_pos <= (int64_t)cs->point)
				last = w->ops[k].id;
		struct crashdb_state st = {
			.idx = cs->idx, .kind = cs->kind, .spec = cs->text, .point = (int64_t)cs->point,
			.last_completed_op = last, .mount_ok = rep.mount_ok,
			.mount_msg = rep.mount_msg ? rep.mount_msg : "", .fsck_status = rep.fsck_status,
			.fsck_clean = rep.fsck_clean, .fsck_output = rep.fsck_output ? rep.fsck_output : "",
			.tree_hash = rep.mount_ok ? rep.tree_hash : "", .ms_replay = rep.ms_replay,
			.ms_mount = rep.ms_mount, .ms_capture = rep.ms_capture, .ms_fsck = rep.ms_fsck,
			.ms_other = rep.ms_host - rep.ms_replay - rep.ms_mount - rep.ms_capture - rep.ms_fsck,
		};
		if (crashdb_state_insert(db, fr.id, &st, rep.nodes, rep.n_nodes) < 0)
			die("%s", crashdb_error(db));
		sum->states++;
		sum->mount_fail += !rep.mount_ok;
		sum->fsck_fail += !rep.fsck_clean;
		if (rep.mount_ok) {
			bool seen = false;
			for (size_t h = 0; h < hashes.n && !seen; h++)
				seen = !strcmp(hashes.v[h], rep.tree_hash);
			if (!seen)
				strvec_push(&hashes, rep.tree_hash);
		}
		lab_state_report_free(&rep);
	}
	if (bar)
		progress_done(bar, NULL);
	sum->distinct = hashes.n;
	strvec_free(&hashes);
	if (o != LAB_OK) {
		lab_vm_kill(&ck.vm);
		rc = lab_vm_report(&ck.vm, o);
		snprintf(sum->error, sizeof(sum->error), "checker guest: %s", lab_outcome_name(o));
		fr.outcome = sum->outcome = lab_outcome_name(o);
		fr.error = sum->error;
	} else if (sum->error[0]) {
		fr.outcome = sum->outcome = "error";
		fr.error = sum->error;
		rc = EXIT_GUEST;
	} else {
		fr.outcome = sum->outcome = "ok";
	}
	lab_checker_stop(&ck);
	fr.check_ms = (now_s() - t0) * 1000 - rec.ms;
	crashdb_fsrun_update(db, &fr);
	lab_states_free(states, nstates);
	wlog_close(&log);
	close(lfd);
out:
	free(ops);
	free(texts);
	/* The overlay is throw-away; the log stays with the run so any state can be rebuilt. */
	if (rec.overlay)
		unlink(rec.overlay);
	lab_recording_free(&rec);
	sum->ms = (now_s() - t0) * 1000;
	return rc;
}

int cmd_run(int argc, char **argv)
{
	const char *fs_list = "all", *crash = "flush", *db_path = CRASHDB_DEFAULT, *accel = "auto";
	const char *size_s = "512M";
	struct strvec mkfs_opts = STRVEC_INIT, mount_opts = STRVEC_INIT;
	int seed = 1, max_states = 0, torn = 0;
	const struct opt opts[] = {
		{ OPT_STRING, 0, "fs", &fs_list, "LIST", "file systems, comma-separated (default: all four)" },
		{ OPT_STRING, 0, "crash", &crash, "MODE", "flush (default), write or reorder" },
		{ OPT_INT, 0, "seed", &seed, "N", "seed of --crash reorder's random subsets (default 1)" },
		{ OPT_INT, 0, "max-states", &max_states, "N", "cap on crash states per file system (reorder)" },
		{ OPT_BOOL, 0, "torn", &torn, NULL, "reorder: also tear writes at 512-byte sectors" },
		{ OPT_LIST, 0, "mkfs-opts", &mkfs_opts, "FS:OPTS", "extra mkfs options for one fs; repeatable" },
		{ OPT_LIST, 0, "mount-opts", &mount_opts, "FS:OPTS", "mount options for one fs; repeatable" },
		{ OPT_STRING, 0, "size", &size_s, "SIZE", "test disk size (default 512M; xfs needs 300M)" },
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
	split_fs(fs_list, &fss);
	check_opts_list(&mkfs_opts, "--mkfs-opts", &fss);
	check_opts_list(&mount_opts, "--mount-opts", &fss);

	/* The workload: a parse error stops everything before anything runs. */
	const char *file = argv[0];
	struct sbuf text = SBUF_INIT;
	if (read_file(file, &text) < 0)
		die_code(errno == ENOENT ? EXIT_NOINPUT : EXIT_DATAERR, "cannot read workload '%s': %s", file,
			 errno_advice(errno));
	struct wl_workload w;
	char perr[512];
	if (wl_parse(file, text.buf, &w, perr, sizeof(perr)) < 0)
		die_code(EXIT_DATAERR, "%s", perr);

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

	char *workdir = xasprintf("%s/runs/%lld", cache_dir(), (long long)run.id);
	if (mkdir_p(workdir, 0755) < 0)
		die_code(exit_for_errno(errno), "cannot create '%s': %s", workdir, errno_advice(errno));

	struct fs_summary *sums = xcalloc(fss.n, sizeof(*sums));
	int rc = 0;
	for (size_t i = 0; i < fss.n; i++) {
		const char *fs = fss.v[i];
		int r = run_fs(db, run.id, fs, &w, &guest, opts_for(&mkfs_opts, fs), opts_for(&mount_opts, fs),
			       size, mode, (uint64_t)seed, (size_t)max_states, torn, workdir, &sums[i]);
		if (r && !rc)
			rc = r;
	}
	crashdb_run_finish(db, run.id, rc ? "failed" : "ok", rc);

	printf("run %lld: %s on %zu file system%s, crash mode %s (%s)\n", (long long)run.id, file, fss.n,
	       fss.n == 1 ? "" : "s", crash, guest.accel);
	printf("%-7s %7s %7s %7s %9s %8s  %s\n", "fs", "states", "mount", "fsck", "distinct", "time", "");
	printf("%-7s %7s %7s %7s %9s %8s\n", "", "", "failed", "flagged", "trees", "");
	for (size_t i = 0; i < fss.n; i++) {
		struct fs_summary *s = &sums[i];
		char t[16];
		progress_fmt_time(s->ms / 1000, t, sizeof(t));
		printf("%-7s %7zu %7zu %7zu %9zu %8s  %s\n", s->fs, s->states, s->mount_fail, s->fsck_fail,
		       s->distinct, t, s->error[0] ? s->error : "");
	}
	printf("details: crashlab show %lld%s%s\n", (long long)run.id, strcmp(db_path, CRASHDB_DEFAULT) ? " --db " : "",
	       strcmp(db_path, CRASHDB_DEFAULT) ? db_path : "");
	crashdb_close(db);
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
