/*
 * runner.c - the core loop for one file system (see runner.h): where a
 * recording becomes crash states, each state is checked, and the result is
 * stored.
 */
#include "engine/runner.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/checker.h"
#include "judge/judge.h"
#include "host/progress.h"
#include "engine/record.h"
#include "core/wlog.h"


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

/* Record and check one file system; fills sum. Returns an exit code for a guest failure, else 0. */
void lab_workload_load(const char *file, struct sbuf *text, struct wl_workload *w)
{
	if (read_file(file, text) < 0)
		die_code(errno == ENOENT ? EXIT_NOINPUT : EXIT_DATAERR, "cannot read workload '%s': %s", file,
			 errno_advice(errno));
	char err[512];
	if (wl_parse(file, text->buf, w, err, sizeof(err)) < 0)
		die_code(EXIT_DATAERR, "%s", err);
}

int lab_run_fs(struct crashdb *db, int64_t run_id, const char *fs, const char *mkfs_opts,
	       const char *mount_opts, const struct lab_run_params *p, struct lab_fs_summary *sum)
{
	const struct wl_workload *w = p->w;
	const struct lab_vm_config *guest = p->guest;
	long long size = p->size;
	const char *workdir = p->workdir;
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
	fr.log_path = rec.log_path;
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

	/* The judge: simulate once with the guest's results; each state is judged right after it is checked. */
	struct lab_judge_run jr;
	int judging = r == 0;
	if (judging) {
		struct sim_guest *g = xcalloc(w->n ? w->n : 1, sizeof(*g));
		for (size_t i = 0; i < w->n; i++)
			g[i] = (struct sim_guest){ .ret = rec.res[i].ret, .err = rec.res[i].err, .ino = rec.res[i].ino,
						   .ino2 = rec.res[i].ino2, .log_pos = rec.res[i].log_pos };
		lab_judge_run_init(&jr, w, g);
		free(g);
		char perr[256];
		if (lab_models_select(p->models, fs, w, &sum->models, perr, sizeof(perr)) < 0)
			sum->models = 0;
		char *names = lab_models_join(sum->models);
		if (!jr.ok)
			warning("%s: the judge cannot simulate the workload: %s", fs, jr.err);
		if (jr.notes) {
			warning("%s: the simulator and the guest disagree: %s", fs, jr.notes);
			sum->sim_notes = xstrdup(jr.notes);
		}
		if (crashdb_fsrun_judge_info(db, fr.id, names, jr.notes) < 0)
			die("%s", crashdb_error(db));
		free(names);
	}

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
	if (lab_states_enumerate(&log, (uint64_t)rec.setup_end, p->mode, p->seed, p->max_states, p->torn, &states, &nstates,
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
	int guest_failures = 0; /* consecutive states that took the checker guest down */
	for (size_t i = 0; i < nstates && o == LAB_OK; i++) {
		struct lab_crash_state *cs = &states[i];
		char step[96];
		snprintf(step, sizeof(step), "state %zu/%zu (%s)", i + 1, nstates, cs->kind);
		progress_update(bar, i, step);
		struct lab_state_report rep;
		char cerr[512];
		int last = 0;
		for (size_t k = 0; k < w->n; k++)
			if (w->ops[k].section == WL_RUN && rec.res[k].log_pos <= (int64_t)cs->point)
				last = w->ops[k].id;
		o = lab_checker_state(&ck, cs->text, &rep, cerr, sizeof(cerr));
		if (o != LAB_OK && guest_failures < 2) {
			/* The state itself took the guest down (a panic while mounting
			 * it, a recovery that never ends): that is a finding about the
			 * state, stored as a failed mount; a fresh guest goes on. */
			char why[300], *log = xasprintf("%s/%s-state%d-console.log", workdir, fs, cs->idx);
			lab_vm_describe(&ck.vm, o, why, sizeof(why));
			lab_vm_kill(&ck.vm);
			lab_vm_save_console(&ck.vm, log);
			warning("%s: crash state %d: %s; console log '%s'", fs, cs->idx, why, log);
			char *msg = xasprintf("checker guest: %s (console log '%s')", why, log);
			struct crashdb_state st = {
				.idx = cs->idx, .kind = cs->kind, .spec = cs->text, .point = (int64_t)cs->point,
				.last_completed_op = last, .mount_ok = 0, .mount_msg = msg, .fsck_status = -1, .fsck_clean = 0,
				.fsck_output = "", .tree_hash = "",
			};
			if (crashdb_state_insert(db, fr.id, &st, NULL, 0) < 0)
				die("%s", crashdb_error(db));
			/* Judged as a state that does not mount (U1 broken): a kernel that
			 * panics or hangs on a crash image is the finding, whichever of
			 * mount, capture or unmount set it off; the message says which. */
			if (judging) {
				struct lab_judge_state js = { .mount_ok = 0, .fsck_status = -1, .point = (int64_t)cs->point };
				struct lab_judgement jd;
				lab_judge_state(&jr, &js, &jd);
				if (lab_judge_store(db, st.id, &jd) < 0)
					die("%s", crashdb_error(db));
				if (jd.judged) {
					sum->judged++;
					for (int m = 0; m <= LAB_M_COUNT; m++)
						for (int k = 0; k < LAB_V_COUNT; k++)
							sum->verdicts[m][k] += jd.count[m][k];
				}
				lab_judgement_free(&jd);
			}
			sum->states++;
			sum->mount_fail++;
			sum->fsck_fail++;
			free(msg);
			free(log);
			lab_checker_stop(&ck);
			guest_failures++;
			o = lab_checker_start(&ck, guest, fs, rec.base, rec.log_path, mount_opts);
			continue;
		}
		if (o != LAB_OK)
			break;
		guest_failures = 0;
		if (cerr[0]) {
			progress_abort(bar);
			bar = NULL;
			snprintf(sum->error, sizeof(sum->error), "%s", cerr);
			lab_state_report_free(&rep);
			o = LAB_LOST;
			break;
		}
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
		if (judging) {
			struct lab_judge_state js = {
				.mount_ok = rep.mount_ok, .fsck_status = rep.fsck_status, .fsck_clean = rep.fsck_clean,
				.fsck_output = rep.fsck_output, .point = (int64_t)cs->point, .nodes = rep.nodes,
				.n = rep.n_nodes,
			};
			struct lab_judgement jd;
			lab_judge_state(&jr, &js, &jd);
			if (lab_judge_store(db, st.id, &jd) < 0)
				die("%s", crashdb_error(db));
			if (jd.judged) {
				sum->judged++;
				sum->unexplained += rep.mount_ok && !jd.explained;
				for (int m = 0; m <= LAB_M_COUNT; m++)
					for (int k = 0; k < LAB_V_COUNT; k++)
						sum->verdicts[m][k] += jd.count[m][k];
			}
			lab_judgement_free(&jd);
		}
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
	if (judging)
		lab_judge_run_free(&jr);
	free(ops);
	free(texts);
	/* The overlay is throw-away; the log stays with the run so any state can be rebuilt. */
	if (rec.overlay)
		unlink(rec.overlay);
	lab_recording_free(&rec);
	sum->ms = (now_s() - t0) * 1000;
	return rc;
}

