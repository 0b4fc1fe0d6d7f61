/*
 * lab.c - `crashlab lab`: the live lab. One recording guest per file system
 * stays up (engine/lab.h); each op typed runs at once on all of them and
 * their results are shown side by side; `crash` cuts the power now: the run
 * loop (engine/runner.c) checks and judges the crash states of the write
 * logs recorded so far and stores them as a run through the database sink,
 * and the comparison view (cmd/compare.h) shows what each file system kept.
 * The prompt is libedit's (history in the cache, completion of op names and
 * of the paths the session made); without a terminal, lines are read from
 * stdin with no prompt.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <editline/readline.h>

#include "cmd/cmd.h"
#include "cmd/compare.h"
#include "cmd/render.h"
#include "core/fs.h"
#include "core/tree.h"
#include "crashdb/crashdb.h"
#include "engine/guest.h"
#include "engine/lab.h"
#include "engine/runner.h"
#include "host/intr.h"
#include "host/msg.h"
#include "host/sys.h"
#include "judge/judge.h"
#include "judge/models.h"
#include "judge/sim.h"
#include "kbuild/kbuild.h"

static const char lab_usage[] =
	"usage: crashlab lab [--fs LIST] [--model LIST] [--db DB]\n"
	"\n"
	"The live lab. A recording guest per file system (default all four) stays up\n"
	"for the session; every op of the workload language you type runs at once on\n"
	"each of them, and its result (return value or errno) is shown side by side,\n"
	"one column per file system. Say 'crash' to cut the power now: the crash\n"
	"states of what each disk recorded so far are built, checked in a checker\n"
	"guest and judged, stored as a run in the database, and what each file system\n"
	"kept is shown side by side in the words of 'crashlab report' and 'compare'.\n"
	"The session goes on after a crash: the guests keep running.\n"
	"With --backend libvirt every guest is a transient libvirt domain (--connect\n"
	"URI: which libvirt); the crash is the domain's vCPUs stopped, as here.\n"
	"\n"
	"commands besides ops:\n"
	"  crash          a power cut now: the state at the last flush that reached the\n"
	"                 disk and the state with every write logged so far\n"
	"  crash all      also the state at every flush since the last crash\n"
	"  show [FS]      the last crash's states per file system; with FS, their trees\n"
	"  why PATH       which promise covers PATH, per model, and why it was kept or not\n"
	"  ops            the session so far, with each op's results\n"
	"  save FILE.wl   the session as a workload that 'crashlab run' records the same way\n"
	"  load FILE.wl   run a workload's ops in the session ([setup] ops too, in order)\n"
	"  reset          fresh file systems, an empty session\n"
	"  replay         fresh file systems, the session's ops run again (after a guest died)\n"
	"  help [OP]      these commands; with OP its syntax and what each file system\n"
	"                 promises for it\n"
	"  quit           stop the guests and leave (so do end of input and Ctrl-D)\n"
	"\n"
	"On a terminal the prompt has line editing, a history (the cache's lab-history,\n"
	"or the file CRASHLAB_LAB_HISTORY names) and tab completion of op names and of\n"
	"the paths the session made. Without one, lines are read from stdin with no\n"
	"prompt: a script is a workload's ops with commands between them. A line that\n"
	"does not parse is reported as stdin:LINE:COL with a caret under the column,\n"
	"and the session goes on.\n"
	"\n"
	"models (--model LIST, comma-separated, or 'all'): the models the marks and\n"
	"'why' are under; default: posix and each file system's own model.\n"
	"\n"
	"Ctrl-C at the prompt drops the line being typed. Ctrl-C while an op or a\n"
	"crash runs, or SIGTERM, ends the session: the guests are stopped and each\n"
	"crash stored so far stays.\n"
	"\n"
	"exit status: 0 when the session ended (quit, end of input), 130 (143) when it\n"
	"was interrupted (Ctrl-C, SIGTERM), a guest failure's code when no recording\n"
	"guest could start.\n"
	"\n"
	"example:\n"
	"  crashlab lab --fs ext4,btrfs\n"
	"  lab> write A \"hello\"\n"
	"  lab> fsync A\n"
	"  lab> crash\n";

#define COLW 13

struct labcli {
	struct cmd_ctx *ctx;
	struct lab L;
	struct crashdb *db;
	const struct vm_config *guest;
	const char *model_list;   /* --model, or NULL */
	unsigned models;          /* its set (0: each fs's default) */
	long long size;
	char *cmdline;
	const char *input;        /* "stdin" or "lab": how errors name the input */
	int lineno;
	int64_t last_run;         /* the last crash's run id, 0 when none */
	size_t ops_at_crash;      /* session ops at the last crash */
	int crashes;
	bool tty;
};

static void print_header(struct labcli *C)
{
	printf("%-5s", "op");
	for (size_t k = 0; k < C->L.nfs; k++)
		printf("%-*s", COLW, C->L.fs[k].fs);
	printf("\n");
}

/* One op's results, one column per file system, then the op. */
static void print_op_row(struct labcli *C, size_t i)
{
	char text[400];
	wl_format(&C->L.ops[i], text, sizeof(text));
	printf("%-5zu", i + 1);
	for (size_t k = 0; k < C->L.nfs; k++) {
		char buf[64];
		if (lab_has_result(&C->L, k, i))
			render_op_result(&C->L.fs[k].res[i], buf, sizeof(buf));
		else
			snprintf(buf, sizeof(buf), "(down)");
		printf("%-*s", COLW, buf);
	}
	printf("%s\n", text);
}

/* Say which guests went down since last said. */
static void report_down(struct labcli *C, bool *said)
{
	for (size_t k = 0; k < C->L.nfs; k++) {
		struct lab_fs *f = &C->L.fs[k];
		if (*f->down && !said[k]) {
			error("%s: the recording guest is down: %s", f->fs, f->down);
			fprintf(stderr, "  'replay' starts fresh file systems and runs the session's ops again\n");
			said[k] = true;
		} else if (!*f->down)
			said[k] = false;
	}
}

static bool down_said[16];

static void run_one_op(struct labcli *C, const struct wl_op *op)
{
	double t0 = now_s();
	lab_op(&C->L, op);
	double ms = (now_s() - t0) * 1000;
	print_op_row(C, C->L.nops - 1);
	if (msg_verbose())
		note("op %zu took %.0f ms on %zu file systems", C->L.nops, ms, C->L.nfs);
	report_down(C, down_said);
}

/* The session as a workload, parsed back (so the stored run's ops are the saved file's). */
static int session_workload(struct labcli *C, const char *name, char **text, struct wl_workload *w, struct errbuf *e)
{
	struct sbuf fsl = SBUF_INIT;
	for (size_t k = 0; k < C->L.nfs; k++)
		sbuf_addf(&fsl, "%s%s", k ? ", " : "", C->L.fs[k].fs);
	char *comment = xasprintf("a crashlab lab session on %s; 'crashlab run' records these ops the same way", fsl.buf);
	sbuf_free(&fsl);
	*text = lab_workload_text(&C->L, comment);
	free(comment);
	if (wl_parse(name, *text, w, e) < 0) {
		free(*text);
		*text = NULL;
		return -1;
	}
	return 0;
}

/* ---- crash ---- */

static void cmd_crash(struct labcli *C, bool all)
{
	struct errbuf e;
	if (!C->L.nops) {
		printf("nothing to crash yet: the session has no op\n");
		return;
	}
	double t0 = now_s();
	struct wl_workload w;
	char *text;
	char name[64];
	snprintf(name, sizeof(name), "lab-crash-%d.wl", C->crashes + 1);
	if (session_workload(C, name, &text, &w, &e) < 0) {
		error("the session does not make a workload: %s", e.msg);
		return;
	}
	struct strvec up = STRVEC_INIT;
	for (size_t k = 0; k < C->L.nfs; k++)
		if (C->L.fs[k].s)
			strvec_push(&up, C->L.fs[k].fs);
	if (!up.n) {
		error("every recording guest is down: 'replay' starts them again");
		free(text);
		wl_free(&w);
		return;
	}
	const char *kver = kernel_version(C->guest->kernel);
	struct run_info run = {
		.started_at = cmd_utc_now(), .cmdline = xstrdup(C->cmdline), .accel = xstrdup(C->guest->accel),
		.kernel_version = xstrdup(kver ? kver : ""),
		.kernel_key = cmd_kernel_key(C->ctx->kernel),
		.workload_file = xstrdup(name), .workload_text = text, .crash_mode = xstrdup("flush"), .seed = 1,
		.status = xstrdup("running"), .pid = getpid(),
	};
	char suffix[32];
	snprintf(suffix, sizeof(suffix), "-lab%d", C->crashes + 1);
	int lock_fd = cmd_run_folder(&run, suffix, &e);
	if (lock_fd < 0) {
		error_print(&e);
		goto out;
	}

	struct backend be;
	lab_backend(&C->L, &be);
	struct fs_params *fps = xcalloc(up.n, sizeof(*fps));
	for (size_t i = 0; i < up.n; i++)
		fps[i] = (struct fs_params){ up.v[i], NULL, NULL, NULL };
	struct run_params params = {
		.w = &w, .guest = C->guest, .backend = &be, .size = C->size, .mode = CRASH_FLUSH, .seed = 1,
		.workdir = run.workdir, .models = C->model_list, .nr_fbarrier = C->L.p.nr_fbarrier,
		.nr_fdatabarrier = C->L.p.nr_fdatabarrier, .cut_now = 1, .dedup = 1,
		/* crash all: the states since the last crash, in which a later op had completed */
		.cut_since_op = !all ? -1 : C->crashes ? (int)C->ops_at_crash + 1 : 0,
	};
	struct sink sink;
	crashdb_sink(C->db, &sink);
	struct fs_summary *sums = xcalloc(up.n, sizeof(*sums));
	int rc = runner_run(&params, fps, up.n, &run, &sink, sums, &e);
	double secs = now_s() - t0;
	if (rc < 0) {
		error_print(&e);
	} else {
		for (size_t i = 0; i < up.n; i++)
			if (sums[i].exit_code)
				error("%s: %s", sums[i].fs, sums[i].error);
		C->last_run = run.id;
		C->ops_at_crash = C->L.nops;
		C->crashes++;
		printf("crash after op %zu: run %" PRId64 ",", C->L.nops, run.id);
		for (size_t i = 0; i < up.n; i++)
			printf(" %s %zu state%s%s", sums[i].fs, sums[i].states, sums[i].states == 1 ? "" : "s",
			       i + 1 < up.n ? "," : "");
		char tb[32];
		printf(" (%s)\n", render_time(secs, tb, sizeof(tb)));
		if (!intr_pending()) {
			int view_model = C->model_list && !strchr(C->model_list, ',') ? model_parse(C->model_list) : -1;
			putchar('\n');
			fflush(stdout);
			if (cmp_show(C->db, &run.id, 1, NULL, view_model, "text", &e) < 0)
				warning("the comparison view: %s", e.msg);
			printf("details: crashlab report %" PRId64 "%s\n", run.id, cmd_db_arg(C->ctx));
		}
	}
	free(sums);
	free(fps);
out:
	if (lock_fd >= 0)
		close(lock_fd);
	run_info_free(&run);
	wl_free(&w);
	strvec_free(&up);
}

/* ---- show, why ---- */

static int last_crash(struct labcli *C, struct fsrun **frs, size_t *n)
{
	struct errbuf e;
	if (!C->last_run) {
		printf("no crash yet: say 'crash' first\n");
		return -1;
	}
	if (crashdb_read_fsruns(C->db, C->last_run, NULL, frs, n, &e) < 0) {
		error_print(&e);
		return -1;
	}
	return 0;
}

/* Is model m one the view is under for this fs run? */
static bool model_shown(const struct labcli *C, const struct fsrun *fr, int m)
{
	if (m == MODEL_UNIVERSAL)
		return true;
	if (C->models)
		return C->models & (1u << m);
	unsigned set;
	struct errbuf e;
	if (!fr->models || models_select(fr->models, NULL, NULL, NULL, &set, &e) < 0)
		return false;
	return set & (1u << m);
}

static void cmd_show_last(struct labcli *C, const char *fs)
{
	struct fsrun *frs;
	size_t n;
	if (fs && !fs_lookup(fs)) {
		error("%s:%d: unknown file system '%s' (choose from %s)", C->input, C->lineno, fs, fs_names_text());
		return;
	}
	if (last_crash(C, &frs, &n) < 0)
		return;
	printf("run %" PRId64 ": the crash after op %zu\n", C->last_run, C->ops_at_crash);
	bool found = false;
	for (size_t i = 0; i < n; i++) {
		if (fs && strcmp(frs[i].fs, fs))
			continue;
		found = true;
		struct state_result *st;
		size_t nst;
		struct errbuf e;
		if (crashdb_read_states(C->db, frs[i].id, CRASHDB_TREE | CRASHDB_VERDICTS, &st, &nst, &e) < 0) {
			error_print(&e);
			continue;
		}
		printf("%s (%s): %s%s%s\n", frs[i].fs, frs[i].models ? frs[i].models : "not judged", frs[i].outcome,
		       frs[i].error && *frs[i].error ? ": " : "", frs[i].error ? frs[i].error : "");
		for (size_t s = 0; s < nst; s++) {
			size_t lost = 0, broken = 0, bonus = 0;
			for (int m = 0; m < MODEL_COUNT; m++)
				if (model_shown(C, &frs[i], m)) {
					lost += st[s].judge.count[m][V_LOST];
					bonus += st[s].judge.count[m][V_BONUS];
				}
			broken = st[s].judge.count[MODEL_UNIVERSAL][V_BROKEN];
			printf("  state %d (%s, after op %d): %s, fsck %s, %" PRId64 " node%s; %zu LOST, %zu broken, %zu bonus\n",
			       st[s].idx, st[s].kind, st[s].last_completed_op, st[s].check.mount_ok ? "mounted" : "did not mount",
			       st[s].check.fsck_clean ? "clean" : "complained", st[s].n_nodes, st[s].n_nodes == 1 ? "" : "s",
			       lost, broken, bonus);
			if (fs && st[s].check.mount_ok) {
				render_tree_sort(st[s].check.nodes, st[s].check.n_nodes);
				render_tree_text(stdout, "    ", st[s].check.nodes, st[s].check.n_nodes);
			}
		}
		crashdb_states_free(st, nst);
	}
	if (!found)
		printf("%s was not in the last crash\n", fs);
	if (!fs)
		printf("trees: show FS; findings: crashlab report %" PRId64 "%s\n", C->last_run, cmd_db_arg(C->ctx));
	crashdb_fsruns_free(frs, n);
}

/* One fact of `why`: a verdict's sentence, with the models that gave it and
 * the states it holds in. */
struct why_fact {
	const struct verdict *v;
	struct sbuf models, states;
	unsigned mset;
	int last_state;
	size_t nstates;
};

static bool same_fact(const struct verdict *a, const struct verdict *b)
{
	return !strcmp(a->rule, b->rule) && a->kind == b->kind && a->op == b->op && !strcmp(a->reason, b->reason);
}

static void cmd_why(struct labcli *C, const char *path)
{
	struct fsrun *frs;
	size_t n;
	if (last_crash(C, &frs, &n) < 0)
		return;
	while (path[0] == '/')
		path++;
	for (size_t i = 0; i < n; i++) {
		struct state_result *st;
		size_t nst;
		struct errbuf e;
		if (crashdb_read_states(C->db, frs[i].id, CRASHDB_VERDICTS, &st, &nst, &e) < 0) {
			error_print(&e);
			continue;
		}
		struct why_fact *fa = NULL;
		size_t nfa = 0, cap = 0;
		for (size_t s = 0; s < nst; s++)
			for (size_t k = 0; k < st[s].judge.n; k++) {
				const struct verdict *v = &st[s].judge.v[k];
				if (strcmp(v->path, path) || !model_shown(C, &frs[i], v->model))
					continue;
				size_t f = 0;
				while (f < nfa && !same_fact(fa[f].v, v))
					f++;
				if (f == nfa) {
					ALLOC_GROW(fa, nfa + 1, cap);
					fa[nfa++] = (struct why_fact){ .v = v, .models = SBUF_INIT, .states = SBUF_INIT,
								       .last_state = -1 };
				}
				if (v->model != MODEL_UNIVERSAL && !(fa[f].mset & (1u << v->model))) {
					fa[f].mset |= 1u << v->model;
					sbuf_addf(&fa[f].models, "%s%s", fa[f].models.len ? ", " : "", model_name(v->model));
				}
				if (fa[f].last_state != st[s].idx) {
					fa[f].last_state = st[s].idx;
					fa[f].nstates++;
					sbuf_addf(&fa[f].states, "%s%d (%s)", fa[f].states.len ? ", " : "", st[s].idx,
						  st[s].kind);
				}
			}
		printf("%s, %s in state%s", frs[i].fs, path, nst == 1 ? "" : "s");
		for (size_t s = 0; s < nst; s++)
			printf("%s %d (%s, after op %d)", s ? "," : "", st[s].idx, st[s].kind, st[s].last_completed_op);
		printf(":\n");
		struct strvec cited = STRVEC_INIT;
		for (size_t f = 0; f < nfa; f++) {
			const struct verdict *v = fa[f].v;
			printf("   %-6s [%s] ", verdict_name(v->kind), v->model == MODEL_UNIVERSAL ? "universal" : fa[f].models.buf);
			render_puts(stdout, v->reason);
			if (fa[f].nstates < nst)
				printf(" (only in state %s)", fa[f].states.buf);
			putchar('\n');
			if (strcmp(v->rule, "unpromised") && !strvec_has(&cited, v->rule)) {
				strvec_push(&cited, v->rule);
				printf("          rule %s: %s\n", v->rule, v->cite);
			}
			sbuf_free(&fa[f].models);
			sbuf_free(&fa[f].states);
		}
		if (!nfa)
			printf("   no verdict names %s: no op of the session changed it, or the states were not judged\n", path);
		free(fa);
		strvec_free(&cited);
		crashdb_states_free(st, nst);
	}
	crashdb_fsruns_free(frs, n);
}

/* ---- help ---- */

static const char *const lab_cmds[] = { "crash", "show", "why", "ops", "save", "load", "reset", "replay", "help",
					"quit", NULL };

/* The rules an op of kind k triggers: their ids name it ("fsync.file",
 * "btrfs.fsync-dir", "barrier.fbarrier"). */
static bool rule_is_for(const char *id, const char *op)
{
	if (!strcmp(op, "syncfs"))
		op = "sync";
	size_t n = strlen(op);
	for (const char *p = id; (p = strstr(p, op)); p++) {
		bool start = p == id || p[-1] == '.' || p[-1] == '-';
		bool end = p[n] == 0 || p[n] == '.' || p[n] == '-';
		if (start && end)
			return true;
	}
	return false;
}

static void cmd_help(struct labcli *C, const char *what)
{
	if (!what) {
		const char *p = strstr(lab_usage, "commands besides ops:");
		const char *q = strstr(lab_usage, "On a terminal");
		fwrite(p, 1, (size_t)(q - p), stdout);
		printf("ops (help OP for one):\n ");
		for (int k = 0; k < WL_NKINDS; k++)
			printf(" %s", wl_kind_name((enum wl_kind)k));
		printf("\n");
		return;
	}
	int kind = -1;
	for (int k = 0; k < WL_NKINDS; k++)
		if (!strcmp(what, wl_kind_name((enum wl_kind)k)))
			kind = k;
	if (kind < 0) {
		for (size_t i = 0; lab_cmds[i]; i++)
			if (!strcmp(what, lab_cmds[i])) {
				cmd_help(C, NULL);
				return;
			}
		error("%s:%d: no op or command '%s': 'help' lists them", C->input, C->lineno, what);
		return;
	}
	printf("%s\n", wl_kind_usage((enum wl_kind)kind));
	const struct rule_info *rules;
	size_t nr = model_rules(&rules);
	bool any = false;
	for (size_t r = 0; r < nr; r++) {
		if (!rules[r].models || !rule_is_for(rules[r].id, what))
			continue;
		if (!any)
			printf("what it promises (rule: models):\n");
		any = true;
		printf("  %s:", rules[r].id);
		for (int m = 0; m < MODEL_COUNT; m++)
			if (rules[r].models & (1u << m))
				printf(" %s", model_name(m));
		printf("\n    %s\n", rules[r].cite);
	}
	if (!any)
		printf("it promises nothing by itself: what it does is durable only once a later fsync, fdatasync,\n"
		       "sync or syncfs covers it (ordering models such as somc and sequential still judge it)\n");
	else {
		printf("per file system, under the models it is judged by here:\n");
		for (size_t k = 0; k < C->L.nfs; k++) {
			unsigned set;
			struct errbuf e;
			if (models_select(C->model_list, C->L.fs[k].fs, NULL, NULL, &set, &e) < 0)
				continue;
			printf("  %-6s", C->L.fs[k].fs);
			bool one = false;
			for (size_t r = 0; r < nr; r++) {
				if (!(rules[r].models & set) || !rule_is_for(rules[r].id, what))
					continue;
				printf("%s%s", one ? ", " : " ", rules[r].id);
				one = true;
			}
			printf("%s\n", one ? "" : " nothing");
		}
	}
}

/* ---- save, load ---- */

static void cmd_save(struct labcli *C, const char *file)
{
	struct errbuf e;
	struct wl_workload w;
	char *text;
	if (session_workload(C, file, &text, &w, &e) < 0) {
		error("the session does not make a workload: %s", e.msg);
		return;
	}
	wl_free(&w);
	if (write_file_atomic(file, text, strlen(text)) < 0)
		error("cannot write '%s': %s", file, errno_advice(errno));
	else
		printf("saved %zu op%s to %s: crashlab run %s\n", C->L.nops, C->L.nops == 1 ? "" : "s", file, file);
	free(text);
}

static void cmd_load(struct labcli *C, const char *file)
{
	struct errbuf e;
	struct sbuf text = SBUF_INIT;
	struct wl_workload w;
	if (wl_load(file, &text, &w, &e) < 0) {
		error_print(&e);
		sbuf_free(&text);
		return;
	}
	if (w.overlay) {
		/* the lab's guests mount the file systems alone */
		error("%s:%d: the lab cannot load an [overlay] workload; run it with 'crashlab run %s'", file, w.overlay,
		      file);
		wl_free(&w);
		sbuf_free(&text);
		return;
	}
	size_t from = 0;
	if (w.nsetup && !C->L.nops) {
		/* an empty session takes the file's setup as its own: fresh file
		 * systems, the setup ops, the setup's sync, as crashlab run does */
		if (lab_setup(&C->L, w.ops, w.nsetup, &e) < 0)
			error_print(&e);
		report_down(C, down_said);
		C->ops_at_crash = 0;
		char tb[32];
		printf("fresh file systems with the setup of %s, then its sync (%s):\n", file,
		       render_time(C->L.boot_ms / 1000, tb, sizeof(tb)));
		print_header(C);
		for (size_t i = 0; i < w.nsetup; i++)
			print_op_row(C, i);
		from = w.nsetup;
		if (w.n > w.nsetup)
			printf("[run]\n");
	} else if (w.nsetup) {
		note("%s: the session has ops already: its %zu [setup] op%s run as session ops, in order", file, w.nsetup,
		     w.nsetup == 1 ? "" : "s");
	}
	if (w.nexpects)
		note("%s: its [expect] lines are not used by the lab", file);
	for (size_t i = from; i < w.n && !intr_pending(); i++)
		run_one_op(C, &w.ops[i]);
	wl_free(&w);
	sbuf_free(&text);
}

/* ---- completion ---- */

static struct labcli *completing;
static struct strvec comp_words;

/* The words the current word may become: commands and op names first,
 * the paths the program has now after. */
static void comp_fill(bool first)
{
	strvec_free(&comp_words);
	if (first) {
		for (size_t i = 0; lab_cmds[i]; i++)
			strvec_push(&comp_words, lab_cmds[i]);
		for (int k = 0; k < WL_NKINDS; k++)
			strvec_push(&comp_words, wl_kind_name((enum wl_kind)k));
		return;
	}
	struct labcli *C = completing;
	if (!C || !C->L.nops)
		return;
	struct wl_workload w;
	char *text;
	struct errbuf e;
	if (session_workload(C, "lab", &text, &w, &e) < 0)
		return;
	/* the results of the first file system that has them all */
	const struct op_result *res = NULL;
	for (size_t k = 0; k < C->L.nfs && !res; k++)
		if (C->L.fs[k].s)
			res = C->L.fs[k].res;
	struct sim s;
	if (sim_run(&s, &w, res, &e) == 0) {
		struct tree_node *nodes;
		size_t n;
		sim_tree_at(&s, (int)w.n, &nodes, &n);
		for (size_t i = 0; i < n; i++) {
			strvec_push(&comp_words, nodes[i].path);
			tree_node_free(&nodes[i]);
		}
		free(nodes);
		sim_free(&s);
	}
	wl_free(&w);
	free(text);
}

static char *comp_gen(const char *word, int state)
{
	static size_t i;
	if (!state)
		i = 0;
	size_t n = strlen(word);
	while (i < comp_words.n) {
		const char *c = comp_words.v[i++];
		if (!strncmp(c, word, n))
			return strdup(c);
	}
	return NULL;
}

static char **lab_complete(const char *word, int start, int end)
{
	(void)end;
	bool first = true;
	for (int i = 0; i < start; i++)
		if (rl_line_buffer[i] != ' ' && rl_line_buffer[i] != '\t')
			first = false;
	comp_fill(first);
	return rl_completion_matches(word, comp_gen);
}

/* ---- the loop ---- */

/* A line: 1 to go on, 0 to quit. */
static int handle_line(struct labcli *C, char *line)
{
	char *p = line;
	while (*p == ' ' || *p == '\t')
		p++;
	size_t len = strlen(p);
	while (len && (p[len - 1] == '\n' || p[len - 1] == '\r' || p[len - 1] == ' ' || p[len - 1] == '\t'))
		p[--len] = 0;
	if (!*p || *p == '#')
		return 1;
	struct strvec words = STRVEC_INIT;
	strvec_split(&words, p);
	const char *w0 = words.v[0], *arg = words.n > 1 ? words.v[1] : NULL;
	int go_on = 1;
	bool is_cmd = false;
	for (size_t i = 0; lab_cmds[i]; i++)
		is_cmd |= !strcmp(w0, lab_cmds[i]);
	if (!strcmp(w0, "exit"))
		is_cmd = true;
	/* a command takes at most one word */
	size_t max_args = !strcmp(w0, "crash") || !strcmp(w0, "show") || !strcmp(w0, "help") || !strcmp(w0, "why") ||
					  !strcmp(w0, "save") || !strcmp(w0, "load")
				  ? 2
				  : 1;
	bool needs_arg = !strcmp(w0, "why") || !strcmp(w0, "save") || !strcmp(w0, "load");
	if (is_cmd && (words.n > max_args || (needs_arg && !arg) || (!strcmp(w0, "crash") && arg && strcmp(arg, "all")))) {
		error("%s:%d: %s", C->input, C->lineno,
		      !strcmp(w0, "crash") ? "usage: crash [all]"
		      : needs_arg         ? (!strcmp(w0, "why") ? "usage: why PATH" : "usage: save|load FILE.wl")
		      : !strcmp(w0, "show") ? "usage: show [FS]"
		      : !strcmp(w0, "help") ? "usage: help [OP]"
					   : "this command takes no argument");
	} else if (!strcmp(w0, "quit") || !strcmp(w0, "exit")) {
		go_on = 0;
	} else if (!strcmp(w0, "crash")) {
		cmd_crash(C, arg != NULL);
	} else if (!strcmp(w0, "show")) {
		cmd_show_last(C, arg);
	} else if (!strcmp(w0, "why")) {
		cmd_why(C, arg);
	} else if (!strcmp(w0, "ops")) {
		if (!C->L.nops)
			printf("the session has no op yet\n");
		else
			print_header(C);
		for (size_t i = 0; i < C->L.nops; i++) {
			if (C->L.nsetup && (i == 0 || i == C->L.nsetup))
				printf("%s\n", i ? "[run]" : "[setup]");
			print_op_row(C, i);
		}
	} else if (!strcmp(w0, "save")) {
		cmd_save(C, arg);
	} else if (!strcmp(w0, "load")) {
		cmd_load(C, arg);
	} else if (!strcmp(w0, "reset") || !strcmp(w0, "replay")) {
		struct errbuf e;
		bool replay = !strcmp(w0, "replay");
		if (lab_reset(&C->L, replay, &e) < 0)
			error_print(&e);
		report_down(C, down_said);
		char tb[32];
		printf("fresh file systems (%s)%s\n", render_time(C->L.boot_ms / 1000, tb, sizeof(tb)),
		       replay ? ", the session's ops ran again:" : "; the session is empty");
		if (replay) {
			print_header(C);
			for (size_t i = 0; i < C->L.nops; i++)
				print_op_row(C, i);
		} else {
			C->ops_at_crash = 0;
		}
	} else if (!strcmp(w0, "help")) {
		cmd_help(C, arg);
	} else {
		struct wl_op op;
		struct errbuf e;
		if (wl_parse_line_at(C->input, C->lineno, p, (int)C->L.nops + 1, WL_RUN, &op, &e) < 0) {
			error("%s", e.msg);
			/* the line, and a caret under the column */
			const char *col = strrchr(e.msg, ':');
			int c = 0;
			char pre[64];
			snprintf(pre, sizeof(pre), "%s:%d:", C->input, C->lineno);
			if (!strncmp(e.msg, pre, strlen(pre)))
				c = atoi(e.msg + strlen(pre));
			(void)col;
			fprintf(stderr, "  %s\n", p);
			if (c > 0)
				fprintf(stderr, "  %*s^\n", c - 1, "");
		} else {
			if (C->L.nops == C->L.nsetup || C->L.nops == C->ops_at_crash)
				print_header(C);
			run_one_op(C, &op);
			wl_op_free(&op);
		}
	}
	fflush(stdout);
	strvec_free(&words);
	return go_on;
}

int cmd_lab(int argc, char **argv, struct cmd_ctx *ctx)
{
	const char *fs_list = "all", *model_list = NULL, *size_s = "512M";
	const struct opt opts[] = {
		{ OPT_STRING, 0, "fs", &fs_list, "LIST", "file systems, comma-separated (default: all four)" },
		{ OPT_STRING, 0, "model", &model_list, "LIST", "models to mark and explain under, or 'all'" },
		{ OPT_STRING, 0, "size", &size_s, "SIZE", "test disk size (default 512M; xfs needs 300M)" },
		{ OPT_END, 0, NULL, NULL, NULL, NULL },
	};
	int n = cmd_parse(ctx, argc, argv, opts, lab_usage, 0);
	if (n)
		usage_error(ctx->name, "the lab takes no workload: type ops, or 'load FILE.wl' in it");
	struct labcli C = { .ctx = ctx, .model_list = model_list, .input = "stdin", .tty = isatty(0) && isatty(1) };
	struct errbuf e;
	if (model_list && models_select(model_list, NULL, NULL, NULL, &C.models, &e) < 0)
		usage_error(ctx->name, "%s", e.msg);
	C.size = cmd_size(ctx, size_s);
	struct strvec fss = STRVEC_INIT;
	cmd_fs_list(ctx, fs_list, &fss);
	if (fss.n > sizeof(down_said) / sizeof(down_said[0]))
		usage_error(ctx->name, "at most %zu file systems", sizeof(down_said) / sizeof(down_said[0]));
	{
		struct strvec all = STRVEC_INIT;
		strvec_push(&all, "crashlab");
		strvec_push(&all, "lab");
		for (int i = 1; i < argc; i++)
			strvec_push(&all, argv[i]);
		C.cmdline = strvec_join_quoted(&all);
		strvec_free(&all);
	}
	struct vm_config guest = { .mem_mb = 1024 };
	cmd_guest(ctx, &guest);
	C.guest = &guest;
	C.db = cmd_db_open(ctx);

	char *labs = cache_subdir("lab", &e);
	if (!labs)
		die_err(&e);
	char *now = cmd_utc_now();
	char *workdir = xasprintf("%s/%s-%d", labs, now, (int)getpid());
	free(now);
	if (mkdir_p(workdir, 0755) < 0)
		die_code(exit_for_errno(errno), "cannot create '%s': %s", workdir, errno_advice(errno));
	struct lab_params lp = { (const char *const *)fss.v, fss.n, &guest, C.size, -1, -1, workdir };
	guest_barrier_syscalls(ctx->kernel, &lp.nr_fbarrier, &lp.nr_fdatabarrier);
	intr_install();
	int rc = 0;
	double t0 = now_s();
	if (lab_start(&C.L, &lp, &e) < 0) {
		lab_stop(&C.L);
		rm_rf(workdir);
		die_err(&e);
	}
	report_down(&C, down_said);
	if (C.tty) {
		char tb[32];
		printf("crashlab lab: %zu recording guest%s up (%s):", fss.n, fss.n == 1 ? "" : "s",
		       render_time(now_s() - t0, tb, sizeof(tb)));
		for (size_t k = 0; k < fss.n; k++)
			printf(" %s", fss.v[k]);
		printf("; 'help' lists the commands, 'quit' or Ctrl-D leaves\n");
	}

	char *hist = NULL;
	if (C.tty) {
		C.input = "lab";
		const char *h = getenv("CRASHLAB_LAB_HISTORY");
		char *cdir = h && *h ? NULL : cache_subdir("", &e);
		if (h && *h)
			hist = xstrdup(h);
		else if (cdir)
			hist = xasprintf("%s/lab-history", cdir);
		free(cdir);
		rl_readline_name = "crashlab";
		rl_attempted_completion_function = lab_complete;
		completing = &C;
		using_history();
		if (hist)
			read_history(hist);
	}
	for (;;) {
		if (intr_pending())
			break;
		char *line = NULL;
		if (C.tty) {
			line = readline("lab> ");
			/* Ctrl-C at the prompt drops the line being typed, as a
			 * shell does; SIGTERM and SIGHUP still end the session. */
			if (intr_pending() == SIGINT) {
				free(line);
				intr_clear();
				putchar('\n');
				continue;
			}
			if (!line)
				break;
		} else {
			size_t cap = 0;
			if (getline(&line, &cap, stdin) < 0) {
				free(line);
				break;
			}
		}
		C.lineno++;
		if (C.tty && *line)
			add_history(line);
		int go_on = handle_line(&C, line);
		free(line);
		if (!go_on || intr_pending())
			break;
	}
	if (C.tty) {
		if (hist) {
			stifle_history(1000);
			write_history(hist);
		}
		putchar('\n');
	}
	if (intr_pending()) {
		rc = intr_exit_code();
		error("interrupted: the guests are stopped%s", C.crashes ? "; the crashes stored so far stay" : "");
	}
	lab_stop(&C.L);
	rm_rf(workdir);
	free(workdir);
	free(labs);
	free(hist);
	strvec_free(&comp_words);
	crashdb_close(C.db);
	guest_config_free(&guest);
	strvec_free(&fss);
	free(C.cmdline);
	return rc;
}
