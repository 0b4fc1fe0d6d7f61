/*
 * show.c - `crashlab show`: print one run (its workload, and per file system
 * the ops as carried out, the write-log summary and the table of crash
 * states), or one crash state in full (its recipe, the mount and fsck
 * outcome, which ops had completed, the observed tree one line per node,
 * and the judge's findings), as text or as a JSON document.
 *
 * Everything comes from crashdb's read API; this file only renders, and
 * text and JSON are made from the same structs, so they always say the same
 * thing. The tree is sorted with '/' below every other byte, so a
 * directory's children follow it directly ("A", "A/x", "A-b").
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "cmd/render.h"
#include "crashdb/crashdb.h"
#include "host/msg.h"

static const char show_usage[] =
	"usage: crashlab show [--db FILE] [--format text|json] RUN [FS STATE]\n"
	"\n"
	"Print what a run stored. RUN is a run id, 'last' or 'last~N' (the Nth before the last).\n"
	"\n"
	"With RUN alone: when and how the run was made (command line, accelerator,\n"
	"kernel, crash mode), the workload with its line numbers, then for each file\n"
	"system its mkfs and mount options, how the recording went, the write-log\n"
	"summary, every op with its result and the log position at which it returned,\n"
	"and the crash states: index, kind, flush point, last op completed by then,\n"
	"whether it mounted, whether fsck was clean, the tree's hash and node count.\n"
	"\n"
	"With FS and STATE (the state's index, as in that table, or the LABEL of a\n"
	"'mark LABEL' op: the first state in which that mark had completed): the state's recipe,\n"
	"the mount and fsck outcome with their messages, which ops had completed\n"
	"(returned at a log position <= the state's point), and the tree the crash\n"
	"left, one line per node: type and mode, links, owner, size, path, the link\n"
	"target, xattrs, and the content (inline text, or one token per 4 KiB block:\n"
	"'p5' is the pattern op 5 wrote there, 'z' zeros, 'h...' other bytes;\n"
	"'p5×16' is 16 such blocks in a row).\n"
	"\n"
	"--format json prints the same data as one JSON document (a state's with its\n"
	"verdicts under every model the run was judged for); --verbose adds\n"
	"each recording's QEMU command line to the text.\n"
	"\n"
	"examples:\n"
	"  crashlab show last\n"
	"  crashlab show 3 ext4 2\n"
	"  crashlab show last xfs before-rename     # the first state after 'mark before-rename'\n"
	"  crashlab show --db runs/ci.db --format json last xfs 0 | jq .tree\n";

static const char *fsck_word(const struct check_report *c)
{
	if (c->fsck_status < 0)
		return "not run";
	return c->fsck_clean ? "clean" : "complaint";
}

/* ------------------------------------------------------------------ */
/* Text */

static const char *or_dash(const char *s)
{
	return s && *s ? s : "-";
}

/* A multi-line message, each line indented under a label column; what a
 * guest wrote there (fsck output, a mount error) is escaped. */
static void print_block(const char *text)
{
	const char *p = text;
	while (p && *p) {
		size_t l = strcspn(p, "\n");
		printf("          | ");
		render_lines(stdout, p, l && p[l - 1] == '\r' ? l - 1 : l);
		putchar('\n');
		p += l;
		if (*p)
			p++;
	}
}

static void print_size(const char *label, int64_t bytes)
{
	if (bytes > 0 && bytes % (1 << 20) == 0)
		printf("%s%" PRId64 " MiB", label, bytes >> 20);
	else
		printf("%s%" PRId64 " bytes", label, bytes);
}

static void text_run(const struct run_info *r)
{
	printf("run %" PRId64 "\n", r->id);
	printf("started   %s\n", or_dash(r->started_at));
	if (r->finished_at)
		printf("finished  %s\n", r->finished_at);
	printf("status    %s", or_dash(r->status));
	if (r->has_exit)
		printf(" (exit %d)", r->exit_code);
	printf("\ncommand   ");
	render_puts(stdout, or_dash(r->cmdline));
	putchar('\n');
	printf("accel     %s\n", or_dash(r->accel));
	printf("kernel    %s", or_dash(r->kernel_version));
	if (r->kernel_key)
		printf(" (%s)", r->kernel_key);
	printf("\ncrash     %s", or_dash(r->crash_mode));
	if (r->crash_mode && !strcmp(r->crash_mode, "reorder"))
		printf(", seed %" PRId64 "%s", r->seed, r->torn ? ", torn writes" : "");
	if (r->max_states > 0)
		printf(", at most %" PRId64 " states", r->max_states);
	printf("\nworkload  ");
	render_puts(stdout, or_dash(r->workload_file));
	putchar('\n');
	const char *p = r->workload_text;
	for (int line = 1; p && *p; line++) {
		size_t l = strcspn(p, "\n");
		printf("  %4d  ", line);
		render_lines(stdout, p, l);
		putchar('\n');
		p += l;
		if (*p)
			p++;
	}
}

/* An op's canonical text (malloc'd). */
static char *op_text(const struct wl_op *op)
{
	int len = wl_format(op, NULL, 0);
	char *t = xmalloc((size_t)len + 1);
	wl_format(op, t, (size_t)len + 1);
	return t;
}

/* The guests' console logs kept beside the write log (recording, checking,
 * and each crash state that took a checker guest down). */
static void print_consoles(const struct fsrun *f)
{
	const char *slash = strrchr(f->log_path, '/');
	char *dir = slash ? xstrndup(f->log_path, (size_t)(slash - f->log_path)) : xstrdup(".");
	DIR *d = opendir(dir);
	struct strvec found = STRVEC_INIT;
	size_t n = strlen(f->fs);
	for (struct dirent *de; d && (de = readdir(d));) {
		const char *name = de->d_name;
		size_t l = strlen(name);
		if (!strncmp(name, f->fs, n) && (name[n] == '.' || name[n] == '-') && l > 12 &&
		    !strcmp(name + l - 12, "-console.log"))
			strvec_pushf(&found, "%s/%s", dir, name);
	}
	if (d)
		closedir(d);
	strvec_sort(&found);
	for (size_t i = 0; i < found.n; i++)
		printf("%s%s\n", i ? "          " : "consoles  ", found.v[i]);
	strvec_free(&found);
	free(dir);
}

static void text_fsrun(const struct fsrun *f, const struct state_result *st, size_t nst, int verbose)
{
	printf("\n== %s (fs run %" PRId64 ")\n", f->fs, f->id);
	printf("mkfs      %s\n", f->mkfs_opts && *f->mkfs_opts ? f->mkfs_opts : "(defaults)");
	printf("mount     %s\n", f->mount_opts && *f->mount_opts ? f->mount_opts : "(defaults)");
	print_size("image     ", f->image_size);
	if (f->base_image)
		printf(", base %s", f->base_image);
	printf("\noutcome   %s", or_dash(f->outcome));
	printf(" (recorded in %.0f ms, checked in %.0f ms)\n", f->record_ms, f->check_ms);
	if (f->error && *f->error)
		print_block(f->error);
	if (verbose && f->qemu_cmdline)
		printf("qemu      %s\n", f->qemu_cmdline);
	printf("log       %" PRId64 " entries (%" PRId64 " committed), %" PRId64 " flushes, %" PRId64 " writes, %" PRId64
	       " discards, %" PRId64 " bytes%s\n",
	       f->log.entries, f->log.committed, f->log.flushes, f->log.writes, f->log.discards, f->log.bytes,
	       f->log.truncated ? ", a truncated last entry dropped" : "");
	if (f->log_path) {
		printf("log file  %s\n", f->log_path);
		print_consoles(f);
	}
	printf("setup     ends at log position %" PRId64 "\n", f->setup_end);

	printf("\nops\n");
	size_t nops = f->res ? f->ops.n : 0;
	int rw = 6;
	char res[64];
	for (size_t i = 0; i < nops; i++) {
		render_op_result(&f->res[i], res, sizeof(res));
		if ((int)strlen(res) > rw)
			rw = (int)strlen(res);
	}
	if (nops)
		printf("  %4s  %-5s  %4s  %-*s  %7s  %s\n", "op", "sect", "line", rw, "result", "log pos", "text");
	for (size_t i = 0; i < nops; i++) {
		const struct wl_op *op = &f->ops.ops[i];
		char *text = op_text(op);
		render_op_result(&f->res[i], res, sizeof(res));
		printf("  %4d  %-5s  %4d  %-*s  %7" PRId64 "  %s\n", op->id, op->section ? "run" : "setup", op->line, rw,
		       res, f->res[i].log_pos, or_dash(text));
		free(text);
	}
	if (!nops)
		printf("  (none recorded)\n");

	printf("\nstates (%zu)\n", nst);
	if (!nst)
		return;
	printf("  %4s  %-6s  %7s  %7s  %-6s  %-9s  %-12s  %5s\n", "idx", "kind", "point", "last op", "mount", "fsck",
	       "tree", "nodes");
	for (size_t i = 0; i < nst; i++) {
		const struct state_result *s = &st[i];
		char last[16];
		snprintf(last, sizeof(last), "%d", s->last_completed_op);
		printf("  %4d  %-6s  %7" PRId64 "  %7s  %-6s  %-9s  %-12.12s  %5" PRId64 "\n", s->idx, or_dash(s->kind),
		       s->point, s->last_completed_op ? last : "-", s->check.mount_ok ? "ok" : "failed", fsck_word(&s->check),
		       or_dash(s->check.tree_hash), s->n_nodes);
	}
}

/* The judge's findings on a state: LOST and broken first, then bonus. */
static void text_verdicts(const struct run_info *r, const struct state_result *s)
{
	int first = 1;
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < s->judge.n; i++) {
			const struct verdict *v = &s->judge.v[i];
			int finding = v->kind == V_LOST || v->kind == V_BROKEN;
			if (!(pass == 0 ? finding : v->kind == V_BONUS))
				continue;
			if (first)
				printf("\nverdicts (all models; 'crashlab report %" PRId64 "' explains the run's findings)\n", r->id);
			first = 0;
			printf("  %-6s [%s] ", verdict_name(v->kind), model_name(v->model));
			render_puts(stdout, v->reason);
			putchar('\n');
		}
}

static void text_state(const struct run_info *r, const struct fsrun *f, const struct state_result *s)
{
	const struct check_report *c = &s->check;
	printf("run %" PRId64 ", %s (fs run %" PRId64 "), state %d\n", r->id, f->fs, f->id, s->idx);
	printf("kind      %s\n", or_dash(s->kind));
	printf("spec      %s\n", or_dash(s->spec));
	printf("point     %" PRId64 "\n", s->point);
	if (s->last_completed_op)
		printf("last op   %d (the last op completed by this point)\n", s->last_completed_op);
	else
		printf("last op   - (no op had completed by this point)\n");
	printf("mount     %s\n", c->mount_ok ? "ok" : "failed");
	if (c->mount_msg && *c->mount_msg)
		print_block(c->mount_msg);
	if (c->fsck_status < 0)
		printf("fsck      not run\n");
	else
		printf("fsck      %s (exit %d)\n", fsck_word(c), c->fsck_status);
	if (c->fsck_output && *c->fsck_output)
		print_block(c->fsck_output);
	printf("tree      %s, %" PRId64 " nodes\n", or_dash(c->tree_hash), s->n_nodes);
	printf("times     replay %.1f ms, mount %.1f ms, capture %.1f ms, fsck %.1f ms, other %.1f ms\n", c->ms_replay,
	       c->ms_mount, c->ms_capture, c->ms_fsck, c->ms_other);

	printf("\nops\n");
	size_t nops = f->res ? f->ops.n : 0;
	for (size_t i = 0; i < nops; i++) {
		char *text = op_text(&f->ops.ops[i]);
		printf("  %-13s  %4d  %s\n", op_completed(&f->res[i], s) ? "completed" : "not completed", f->ops.ops[i].id,
		       or_dash(text));
		free(text);
	}
	if (!nops)
		printf("  (none recorded)\n");

	printf("\ntree\n");
	render_tree_text(stdout, "", c->nodes, c->n_nodes);
	if (!c->n_nodes)
		printf("  (empty%s)\n", c->mount_ok ? "" : ": the state did not mount");
	text_verdicts(r, s);
}

/* ------------------------------------------------------------------ */
/* JSON */

static void jset(json_t *o, const char *key, json_t *v)
{
	json_object_set_new(o, key, v);
}

static json_t *jms(double v)
{
	return json_real(isfinite(v) ? round(v * 1000) / 1000 : 0.0);
}

static json_t *json_op(const struct wl_op *op, const struct op_result *r, const struct state_result *s)
{
	char nb[24];
	char *text = op_text(op);
	json_t *o = json_object();
	jset(o, "op", json_integer(op->id));
	jset(o, "section", json_string(op->section ? "run" : "setup"));
	jset(o, "line", json_integer(op->line));
	jset(o, "text", render_json_str(text));
	jset(o, "ret", json_integer(r->ret));
	jset(o, "errno", json_integer(r->err));
	jset(o, "error", r->err ? json_string(render_errno_name(r->err, nb)) : json_null());
	jset(o, "ino", json_integer((json_int_t)r->ino));
	jset(o, "ino2", json_integer((json_int_t)r->ino2));
	jset(o, "log_pos", json_integer(r->log_pos));
	jset(o, "ms", jms(r->ms));
	if (s)
		jset(o, "completed", json_boolean(op_completed(r, s)));
	free(text);
	return o;
}

static json_t *json_ops(const struct fsrun *f, const struct state_result *s)
{
	json_t *a = json_array();
	for (size_t i = 0; f->res && i < f->ops.n; i++)
		json_array_append_new(a, json_op(&f->ops.ops[i], &f->res[i], s));
	return a;
}

static json_t *json_state(const struct state_result *s)
{
	const struct check_report *c = &s->check;
	json_t *o = json_object();
	jset(o, "idx", json_integer(s->idx));
	jset(o, "kind", render_json_str(s->kind));
	jset(o, "spec", render_json_str(s->spec));
	jset(o, "point", json_integer(s->point));
	jset(o, "last_completed_op", json_integer(s->last_completed_op));
	jset(o, "mount_ok", json_boolean(c->mount_ok));
	jset(o, "mount_msg", render_json_str(c->mount_msg && *c->mount_msg ? c->mount_msg : NULL));
	jset(o, "fsck_status", json_integer(c->fsck_status));
	jset(o, "fsck_clean", json_boolean(c->fsck_clean));
	jset(o, "fsck_output", render_json_str(c->fsck_output));
	jset(o, "tree_hash", render_json_str(c->tree_hash[0] ? c->tree_hash : NULL));
	jset(o, "nodes", json_integer(s->n_nodes));
	json_t *ms = json_object();
	jset(ms, "replay", jms(c->ms_replay));
	jset(ms, "mount", jms(c->ms_mount));
	jset(ms, "capture", jms(c->ms_capture));
	jset(ms, "fsck", jms(c->ms_fsck));
	jset(ms, "other", jms(c->ms_other));
	jset(o, "ms", ms);
	return o;
}

static json_t *json_fsrun(const struct fsrun *f, const struct state_result *st, size_t nst)
{
	json_t *o = json_object();
	jset(o, "id", json_integer(f->id));
	jset(o, "fs", render_json_str(f->fs));
	jset(o, "mkfs_opts", render_json_str(f->mkfs_opts));
	jset(o, "mount_opts", render_json_str(f->mount_opts));
	jset(o, "base_image", render_json_str(f->base_image));
	jset(o, "log_path", render_json_str(f->log_path));
	jset(o, "image_size", json_integer(f->image_size));
	jset(o, "qemu_cmdline", render_json_str(f->qemu_cmdline));
	jset(o, "outcome", render_json_str(f->outcome));
	jset(o, "error", render_json_str(f->error));
	jset(o, "record_ms", jms(f->record_ms));
	jset(o, "check_ms", jms(f->check_ms));
	json_t *log = json_object();
	jset(log, "entries", json_integer(f->log.entries));
	jset(log, "committed", json_integer(f->log.committed));
	jset(log, "flushes", json_integer(f->log.flushes));
	jset(log, "writes", json_integer(f->log.writes));
	jset(log, "discards", json_integer(f->log.discards));
	jset(log, "bytes", json_integer(f->log.bytes));
	jset(log, "truncated", json_boolean(f->log.truncated));
	jset(log, "setup_end", json_integer(f->setup_end));
	jset(o, "log", log);
	jset(o, "ops", json_ops(f, NULL));
	json_t *a = json_array();
	for (size_t i = 0; i < nst; i++)
		json_array_append_new(a, json_state(&st[i]));
	jset(o, "states", a);
	return o;
}

/* ------------------------------------------------------------------ */

int cmd_show(int argc, char **argv, struct cmd_ctx *ctx)
{
	const char *format = "text";
	const struct opt opts[] = {
		{ OPT_STRING, 'f', "format", &format, "text|json", "output format (default text)" },
		{ OPT_END, 0, NULL, NULL, NULL, NULL },
	};
	const char *cmd = ctx->name;
	int n = cmd_parse(ctx, argc, argv, opts, show_usage, 0);
	bool json = false;
	if (!strcmp(format, "json"))
		json = true;
	else if (strcmp(format, "text"))
		usage_error(cmd, "--format wants 'text' or 'json', not '%s'", format);
	if (n == 0)
		usage_error(cmd, "no run given; say which run to show (a run id, or 'last')");
	if (n == 2)
		usage_error(cmd, "a state needs both FS and STATE (e.g. 'crashlab show %s ext4 0')", argv[0]);
	if (n > 3)
		usage_error(cmd, "unexpected argument '%s'", argv[3]);
	struct crashdb *db = cmd_db_existing(ctx);
	struct errbuf e;
	int64_t run_id;
	struct run_info run;
	struct fsrun *fv;
	size_t nfs;
	if (crashdb_resolve_run(db, argv[0], &run_id, &e) < 0) {
		if (e.code == EXIT_USAGE)
			usage_error(cmd, "%s", e.msg);
		die_err(&e);
	}
	if (crashdb_read_run(db, run_id, &run, &e) < 0 ||
	    crashdb_read_fsruns(db, run.id, n == 3 ? argv[1] : NULL, &fv, &nfs, &e) < 0)
		die_err(&e);

	if (n == 1) {
		struct state_result **st = xcalloc(nfs ? nfs : 1, sizeof(*st));
		size_t *nst = xcalloc(nfs ? nfs : 1, sizeof(*nst));
		for (size_t i = 0; i < nfs; i++)
			if (crashdb_read_states(db, fv[i].id, 0, &st[i], &nst[i], &e) < 0)
				die_err(&e);
		if (json) {
			json_t *doc = json_object(), *a = json_array();
			jset(doc, "run", render_json_run(&run));
			for (size_t i = 0; i < nfs; i++)
				json_array_append_new(a, json_fsrun(&fv[i], st[i], nst[i]));
			jset(doc, "fs", a);
			render_json_print(doc);
			json_decref(doc);
		} else {
			text_run(&run);
			for (size_t i = 0; i < nfs; i++)
				text_fsrun(&fv[i], st[i], nst[i], ctx->verbose);
		}
		for (size_t i = 0; i < nfs; i++)
			crashdb_states_free(st[i], nst[i]);
		free(st);
		free(nst);
	} else {
		struct state_result s;
		cmd_read_state(cmd, db, &fv[0], argv[2], &s);
		render_tree_sort(s.check.nodes, s.check.n_nodes);
		if (json) {
			json_t *doc = json_object();
			jset(doc, "run", json_integer(run.id));
			jset(doc, "fs", render_json_str(fv[0].fs));
			jset(doc, "fsrun", json_integer(fv[0].id));
			jset(doc, "state", json_state(&s));
			jset(doc, "ops", json_ops(&fv[0], &s));
			jset(doc, "tree", render_json_tree(s.check.nodes, s.check.n_nodes));
			json_t *va = json_array();
			for (size_t i = 0; i < s.judge.n; i++)
				json_array_append_new(va, render_json_verdict(&s.judge.v[i]));
			jset(doc, "verdicts", va);
			render_json_print(doc);
			json_decref(doc);
		} else {
			text_state(&run, &fv[0], &s);
		}
		state_result_free(&s);
	}
	crashdb_fsruns_free(fv, nfs);
	run_info_free(&run);
	crashdb_close(db);
	return 0;
}
