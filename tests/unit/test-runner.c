/*
 * test-runner.c - the run loop on the host, with a fake VM: a backend whose
 * "recording" writes a fixture write log and returns canned op results, and
 * whose "checker" answers each state with the tree a file system could have
 * left at that point (or, when told to, dies the way a guest dies). The loop
 * runs for real: the log is read, crash states are enumerated, every state
 * is judged and handed to the sink. Checked: what reaches an in-memory sink
 * and in what order; that a state which takes the checker down is stored as
 * a failed mount and checking goes on in a fresh checker; that a failed
 * recording is an fs run with its outcome; and, through crashdb, the run
 * table and `crashlab report` against golden files (tests/golden/run-*).
 * CRASHLAB_UPDATE_GOLDEN=1 rewrites them.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmd/render.h"
#include "crashdb/db.h"
#include "engine/runner.h"
#include "host/intr.h"
#include "host/msg.h"
#include "host/sys.h"
#include "tests/unit/check.h"

static char dir[] = "/tmp/crashlab-runner.XXXXXX";

/* The seed example; the fixture log below is what a file system that
 * keeps the rename before the new file's data might write. */
static const char workload[] = "[setup]\n"
			       "mkdir A\n"
			       "write A/foo \"hello\"\n"
			       "sync\n"
			       "[run]\n"
			       "rename A/foo A/bar\n"
			       "write A/foo \"world\"\n"
			       "fsync A/foo\n";

/* ---- a dm-log-writes log, written by hand ---- */

static void put64(unsigned char *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

/* entries: 'w' a one-sector write (entry i: sector 100 + i, bytes 'a' + i),
 * 'F' a flush, 'r' the last 'w' again (its sector and bytes), 'o' its
 * sector overwritten with other bytes, 'x' a write outside the sectors the
 * fake checker looks at (50 + i). The superblock counts all. */
static int write_log(const char *path, const char *entries)
{
	struct sbuf b = SBUF_INIT;
	unsigned char sec[512] = { 0 };
	size_t n = strlen(entries);
	put64(sec, WLOG_MAGIC);
	put64(sec + 8, WLOG_VERSION);
	put64(sec + 16, n);
	sec[25] = 2; /* 512 */
	sbuf_add(&b, sec, sizeof(sec));
	size_t lastw = 0;
	for (size_t i = 0; i < n; i++) {
		memset(sec, 0, sizeof(sec));
		char c = entries[i];
		int w = c != 'F';
		if (c == 'w')
			lastw = i;
		uint64_t sector = c == 'w' ? 100 + i : c == 'x' ? 50 + i : 100 + lastw;
		put64(sec, w ? sector : 0);
		put64(sec + 8, w);
		put64(sec + 16, w ? 0 : WLOG_FLUSH);
		sbuf_add(&b, sec, sizeof(sec));
		if (w) {
			memset(sec, (int)(c == 'o' ? 'A' + i : c == 'x' ? 'a' + i : 'a' + lastw), sizeof(sec));
			sbuf_add(&b, sec, sizeof(sec));
		}
	}
	int r = write_file_atomic(path, b.buf, b.len);
	sbuf_free(&b);
	return r;
}

/* ---- the fake backend ---- */

struct fake {
	int fail_record;         /* the recording guest panics */
	int crash_on_check;      /* the checker dies on this check (1-based), 0: never */
	int stop_on_check;       /* SIGINT arrives during this check (1-based), 0: never */
	int stop_on_record;      /* SIGINT arrives during this recording (1-based), 0: never */
	int records;             /* recordings made */
	int lose_rename;         /* the final tree has the new A/foo but not A/bar (what f2fs keeps) */
	int starts, checks;      /* how often a checker started, states it was asked */
	const char *log;         /* the fixture log's entries, NULL: "wwFwFwF" */
	char log_path[512];      /* the log the checker rebuilds states from */
};

static int fake_record(const struct backend *b, const struct record_opts *o, struct recording *rec)
{
	struct fake *f = b->ctx;
	memset(rec, 0, sizeof(*rec));
	rec->res = xcalloc(o->w->n, sizeof(*rec->res));
	rec->base = xasprintf("%s/%s-base.img", o->workdir, o->fs);
	rec->log_path = xasprintf("%s/%s.log", o->workdir, o->fs);
	rec->qemu_cmdline = xstrdup("fake-qemu");
	write_file_atomic(rec->base, "base\n", 5);
	if (++f->records == f->stop_on_record) {
		/* as vm.c does when a signal comes: the guest killed, the recording lost */
		raise(SIGINT);
		rec->outcome = VM_INTERRUPTED;
		return errbuf_set(&rec->err, 130, "interrupted");
	}
	if (f->fail_record) {
		rec->outcome = VM_PANIC;
		return errbuf_set(&rec->err, EXIT_PANIC, "the recording guest did not start: guest kernel panic: test");
	}
	/* setup: w w F (committed 3) | run: rename, write -> w F (5) | fsync -> w F (7) */
	if (write_log(rec->log_path, f->log ? f->log : "wwFwFwF") < 0)
		return errbuf_errno(&rec->err, errno, "cannot write the fixture log");
	/* ret, err, ino, ino2, ms, log_pos of mkdir A, write A/foo, sync, rename, write, fsync */
	static const struct op_result res[] = { { 0, 0, 10, 0, 1, 0 }, { 5, 0, 11, 0, 1, 0 }, { 0, 0, 0, 0, 1, 3 },
						{ 0, 0, 0, 11, 1, 3 }, { 5, 0, 12, 0, 1, 3 }, { 0, 0, 12, 0, 1, 7 } };
	memcpy(rec->res, res, sizeof(res));
	rec->setup_end = 3;
	rec->ms = 1;
	return 0;
}

static enum vm_outcome fake_start(const struct backend *b, const struct checker_opts *o, struct checker **out,
				  struct errbuf *e)
{
	struct fake *f = b->ctx;
	f->starts++;
	*out = (struct checker *)f;
	snprintf(f->log_path, sizeof(f->log_path), "%s", o->log_path);
	(void)e;
	return VM_OK;
}

static void text_node(struct check_report *r, const char *path, uint64_t ino, const char *text)
{
	struct tree_node *t = &r->nodes[r->n_nodes++];
	memset(t, 0, sizeof(*t));
	t->path = xstrdup(path);
	t->ino = ino;
	t->nlink = 1;
	if (!text) {
		t->type = 'd';
		t->mode = 0755;
		t->size = 4096;
		return;
	}
	t->type = 'f';
	t->mode = 0644;
	size_t len = strlen(text);
	unsigned char blk[TREE_BLOCK] = { 0 };
	memcpy(blk, text, len);
	char tok[24];
	tree_block_token(blk, len, 0, tok);
	t->size = len;
	t->blocks = xstrdup(tok);
	t->content = xmemdup(text, len);
	t->content_len = len;
}

/* How many of the run's sectors (100 + 3 on) the state's rebuilt disk holds:
 * the state is built for real (wlog_apply onto a scratch disk), so equal
 * disks give equal trees whatever their specs. -1 when it cannot be built. */
static int run_sectors(const struct fake *f, const char *spec)
{
	int lfd = open(f->log_path, O_RDONLY), dfd = -1, n = -1;
	char *disk = xasprintf("%s.disk", f->log_path);
	struct wlog l;
	struct wlog_spec s = { 0 };
	struct errbuf e;
	if (lfd < 0 || wlog_open(&l, lfd, &e) < 0)
		goto out;
	dfd = open(disk, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (dfd >= 0 && ftruncate(dfd, 1 << 20) == 0 && wlog_spec_parse(spec, &s, &e) == 0 &&
	    wlog_apply(&l, &s, dfd, NULL, &e) == 0) {
		n = 0;
		unsigned char sec[512], zero[512] = { 0 };
		for (int k = 103; k < 160; k++)
			n += pread(dfd, sec, 512, (off_t)k * 512) == 512 && memcmp(sec, zero, 512);
	}
	wlog_spec_free(&s);
	wlog_close(&l);
out:
	if (lfd >= 0)
		close(lfd);
	if (dfd >= 0)
		close(dfd);
	unlink(disk);
	free(disk);
	return n;
}

/* The tree a state shows, from its disk: nothing of the run with none of
 * the run's sectors, the rename with one (the fixture log: at 5), everything
 * with two or more (at 7). */
static enum vm_outcome fake_check(struct checker *c, const char *spec, struct check_report *rep, struct errbuf *e)
{
	struct fake *f = (struct fake *)c;
	memset(rep, 0, sizeof(*rep));
	errbuf_clear(e);
	if (f->checks + 1 == f->stop_on_check) {
		f->checks++;
		raise(SIGINT);
		errbuf_set(e, 130, "interrupted");
		return VM_INTERRUPTED;
	}
	if (++f->checks == f->crash_on_check) {
		errbuf_set(e, EXIT_PANIC, "guest kernel panic: Kernel panic - not syncing: test");
		return VM_PANIC;
	}
	int sectors = run_sectors(f, spec);
	if (sectors < 0) {
		errbuf_set(e, EXIT_DATAERR, "cannot rebuild '%s'", spec);
		return VM_OK;
	}
	rep->mount_ok = 1;
	rep->ms_replay = rep->ms_mount = rep->ms_fsck = 1; /* a check takes time */
	rep->fsck_clean = 1;
	rep->fsck_output = xstrdup("clean\n");
	rep->nodes = xcalloc(4, sizeof(*rep->nodes));
	text_node(rep, "A", 10, NULL);
	if (sectors < 1) {
		text_node(rep, "A/foo", 11, "hello");
	} else if (f->lose_rename && sectors >= 2) {
		text_node(rep, "A/foo", 12, "world");
	} else {
		text_node(rep, "A/bar", 11, "hello");
		if (sectors >= 2)
			text_node(rep, "A/foo", 12, "world");
	}
	snprintf(rep->tree_hash, sizeof(rep->tree_hash), "%016x", sectors + (f->lose_rename && sectors >= 2 ? 16 : 0));
	return VM_OK;
}

static void fake_stop(struct checker *c, int failed, const char *console_path)
{
	if (console_path)
		write_file_atomic(console_path, "fake console\n", 13);
	(void)c;
	(void)failed;
}

/* ---- an in-memory sink ---- */

struct memsink {
	struct sbuf calls;       /* one letter per call: r f s e R */
	int states_mounted, states_failed;
	char last_outcome[32];
};

static int m_run_begin(void *ctx, struct run_info *r, struct errbuf *e)
{
	sbuf_adds(&((struct memsink *)ctx)->calls, "r");
	r->id = 1;
	return 0;
}

static int m_fsrun_begin(void *ctx, struct fsrun *f, struct errbuf *e)
{
	sbuf_adds(&((struct memsink *)ctx)->calls, "f");
	f->id = 7;
	return 0;
}

static int m_state(void *ctx, const struct fsrun *f, struct state_result *s, struct errbuf *e)
{
	struct memsink *m = ctx;
	sbuf_adds(&m->calls, "s");
	if (s->check.mount_ok)
		m->states_mounted++;
	else
		m->states_failed++;
	return 0;
}

static int m_fsrun_end(void *ctx, const struct fsrun *f, struct errbuf *e)
{
	struct memsink *m = ctx;
	sbuf_adds(&m->calls, "e");
	snprintf(m->last_outcome, sizeof(m->last_outcome), "%s", f->outcome);
	return 0;
}

static int m_run_end(void *ctx, const struct run_info *r, struct errbuf *e)
{
	sbuf_adds(&((struct memsink *)ctx)->calls, "R");
	return 0;
}

/* ---- running ---- */

struct setup {
	struct wl_workload w;
	struct fake fake;
	struct backend backend;
	struct vm_config guest;
	struct run_params params;
	struct fs_params fs[2];
	struct run_info run;
	struct fs_summary sums[2];
	struct errbuf e;
};

static void setup(struct setup *s, const char *workdir)
{
	memset(s, 0, sizeof(*s));
	if (wl_parse("seed.wl", workload, &s->w, &s->e) < 0)
		BUG("fixture workload: %s", s->e.msg);
	s->backend = (struct backend){ "fake", &s->fake, fake_record, fake_start, fake_check, fake_stop };
	s->guest.accel = "tcg";
	s->params = (struct run_params){ .w = &s->w, .guest = &s->guest, .backend = &s->backend, .size = 512 << 20,
					 .mode = CRASH_FLUSH, .seed = 1, .workdir = workdir, .nr_fbarrier = -1,
					 .nr_fdatabarrier = -1, .dedup = 1 };
	s->fs[0] = (struct fs_params){ .fs = "ext4" };
	s->fs[1] = (struct fs_params){ .fs = "f2fs" };
	s->run = (struct run_info){ .started_at = xstrdup("2026-01-01T00:00:00Z"), .cmdline = xstrdup("crashlab run seed.wl"),
				    .accel = xstrdup("tcg"), .workload_file = xstrdup("seed.wl"),
				    .workload_text = xstrdup(workload), .crash_mode = xstrdup("flush"),
				    .status = xstrdup("running"), .workdir = xstrdup(workdir) };
}

static void teardown(struct setup *s)
{
	run_info_free(&s->run);
	wl_free(&s->w);
}

TEST(loop_through_a_sink)
{
	struct setup s;
	setup(&s, dir);
	struct memsink m = { 0 };
	struct sink sink = { .ctx = &m, .run_begin = m_run_begin, .fsrun_begin = m_fsrun_begin, .state = m_state, .fsrun_end = m_fsrun_end, .run_end = m_run_end };
	int rc = runner_run(&s.params, s.fs, 2, &s.run, &sink, s.sums, &s.e);
	CHECK(rc == 0, "the run ends with exit 0: nothing any selected model promised was lost (%d)", rc);
	CHECK(!strcmp(m.calls.buf, "rfsssefssseR"), "the sink hears run, fs run, each state, fs run end, run end (%s)",
	      m.calls.buf);
	CHECK(s.sums[0].states == 3 && s.sums[0].distinct == 3 && s.sums[0].mount_fail == 0 && s.sums[0].judged == 3,
	      "three flush states, three distinct trees, all judged (%zu %zu %zu)", s.sums[0].states, s.sums[0].distinct,
	      s.sums[0].judged);
	CHECK(s.sums[0].unexplained == 0 && s.sums[0].verdicts[MODEL_UNIVERSAL][V_BROKEN] == 0,
	      "every state is explained and no universal rule breaks");
	CHECK(s.sums[0].verdicts[MODEL_POSIX][V_BONUS] > 0, "the rename kept before its file's data is a POSIX bonus");
	CHECK(s.fake.starts == 2 && s.fake.checks == 6, "one checker per fs, one check per state (%d, %d)", s.fake.starts,
	      s.fake.checks);
	CHECK(!strcmp(s.run.status, "ok") && s.run.exit_code == 0, "the run's status is ok");
	sbuf_free(&m.calls);
	teardown(&s);
}

/* crashlab lab's crash: only the states of a power cut at the end of the log. */
static int kinds(void *ctx, const struct fsrun *f, struct state_result *st, struct errbuf *e)
{
	sbuf_addf(ctx, "%d:%s@%" PRId64 " ", st->idx, st->kind, st->point);
	return 0;
}

TEST(a_power_cut_now)
{
	static const struct {
		const char *log;   /* NULL: the fixture's own log */
		int since_op;      /* -1: crash; N: crash all since op N */
		const char *want, *what;
	} cases[] = {
		{ "wwFwFwFw", -1, "0:flush@7 1:final@8 ",
		  "a write cached after the last flush: the last flush's state and the final one, numbered from 0" },
		{ NULL, -1, "0:final@7 ", "nothing after the last flush: one state" },
		{ "wwFwFwFw", 6, "0:flush@7 1:final@8 ",
		  "crash all since op 6: the states in which op 6 had completed" },
		{ "wwFwFwFw", 0, "0:flush@3 1:flush@5 2:flush@7 3:final@8 ", "crash all, the first: every state" },
	};
	struct sbuf got = SBUF_INIT;
	struct sink sink = { .ctx = &got, .state = kinds };
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		struct setup s;
		sbuf_reset(&got);
		setup(&s, dir);
		if (cases[k].log)
			s.fake.log = cases[k].log;
		s.params.cut_now = 1;
		s.params.cut_since_op = cases[k].since_op;
		runner_run(&s.params, s.fs, 1, &s.run, &sink, s.sums, &s.e);
		CHECK(!strcmp(got.buf, cases[k].want), "%s (%s)", cases[k].what, got.buf);
		teardown(&s);
	}
	sbuf_free(&got);
}

TEST(a_state_that_kills_the_checker)
{
	struct setup s;
	setup(&s, dir);
	s.fake.crash_on_check = 2;
	struct memsink m = { 0 };
	struct sink sink = { .ctx = &m, .run_begin = m_run_begin, .fsrun_begin = m_fsrun_begin, .state = m_state, .fsrun_end = m_fsrun_end, .run_end = m_run_end };
	int rc = runner_fs(&s.params, &s.fs[0], &s.run, &sink, &s.sums[0], &s.e);
	CHECK(rc == 0 && !strcmp(m.last_outcome, "ok"), "the fs run goes on to the end (%d, %s)", rc, m.last_outcome);
	CHECK(m.states_failed == 1 && m.states_mounted == 2, "the state is stored as one that did not mount");
	CHECK(s.fake.starts == 2, "checking goes on in a fresh checker (%d starts)", s.fake.starts);
	CHECK(s.sums[0].verdicts[MODEL_UNIVERSAL][V_BROKEN] == 1, "and it is judged U1 broken");
	char *log = xasprintf("%s/ext4-state1-console.log", dir);
	CHECK(file_exists(log), "its console log is kept with the run");
	free(log);
	sbuf_free(&m.calls);
	teardown(&s);
}

TEST(a_recording_that_fails)
{
	struct setup s;
	setup(&s, dir);
	s.fake.fail_record = 1;
	struct memsink m = { 0 };
	struct sink sink = { .ctx = &m, .run_begin = m_run_begin, .fsrun_begin = m_fsrun_begin, .state = m_state, .fsrun_end = m_fsrun_end, .run_end = m_run_end };
	int rc = runner_run(&s.params, s.fs, 1, &s.run, &sink, s.sums, &s.e);
	CHECK(rc == EXIT_PANIC, "the run exits with the guest's code (%d)", rc);
	CHECK(!strcmp(m.calls.buf, "rfeR") && !strcmp(m.last_outcome, "panic"),
	      "the fs run is stored with its outcome and no states (%s, %s)", m.calls.buf, m.last_outcome);
	CHECK(strstr(s.sums[0].error, "guest kernel panic") && !strcmp(s.run.status, "failed"),
	      "the summary says why and the run failed (%s)", s.sums[0].error);
	sbuf_free(&m.calls);
	teardown(&s);
}

/* ---- interrupted, crashed and resumed runs, through the database ---- */

/* What a run stored, times and ids left out: every fs run's outcome and
 * ops, every state with its tree and its verdicts, in order. */
static char *dump_run(const char *dbp, int64_t run_id)
{
	sqlite3 *h;
	struct sbuf out = SBUF_INIT;
	if (sqlite3_open_v2(dbp, &h, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK)
		return xstrdup("cannot open");
	static const char *const q[] = {
		"SELECT status, exit_code FROM runs WHERE id = ?1",
		"SELECT fs, outcome, coalesce(error, ''), log_entries, setup_end, models FROM fsruns WHERE run_id = ?1 ORDER BY id",
		"SELECT f.fs, o.op_id, o.text, o.ret, o.err, o.log_pos FROM ops o JOIN fsruns f ON f.id = o.fsrun_id"
		" WHERE f.run_id = ?1 ORDER BY f.id, o.op_id",
		"SELECT f.fs, s.idx, s.kind, s.spec, s.point, s.mount_ok, s.fsck_clean, s.tree_hash, s.judged, s.explained,"
		" s.difference, s.timeline FROM states s JOIN fsruns f ON f.id = s.fsrun_id WHERE f.run_id = ?1 ORDER BY f.id, s.idx",
		"SELECT f.fs, s.idx, n.path, n.type, n.size, n.blocks FROM nodes n JOIN states s ON s.id = n.state_id"
		" JOIN fsruns f ON f.id = s.fsrun_id WHERE f.run_id = ?1 ORDER BY f.id, s.idx, n.path",
		"SELECT f.fs, s.idx, v.model, v.rule, v.verdict, v.op_id, v.path, v.expected, v.observed, v.reason"
		" FROM verdicts v JOIN states s ON s.id = v.state_id JOIN fsruns f ON f.id = s.fsrun_id"
		" WHERE f.run_id = ?1 ORDER BY f.id, s.idx, v.id",
	};
	for (size_t i = 0; i < sizeof(q) / sizeof(q[0]); i++) {
		sqlite3_stmt *st;
		if (sqlite3_prepare_v2(h, q[i], -1, &st, NULL) != SQLITE_OK) {
			sbuf_addf(&out, "bad query %zu: %s\n", i, sqlite3_errmsg(h));
			continue;
		}
		sqlite3_bind_int64(st, 1, run_id);
		while (sqlite3_step(st) == SQLITE_ROW) {
			for (int c = 0; c < sqlite3_column_count(st); c++) {
				const unsigned char *t = sqlite3_column_text(st, c);
				sbuf_addf(&out, "%s%s", c ? "|" : "", t ? (const char *)t : "NULL");
			}
			sbuf_adds(&out, "\n");
		}
		sqlite3_finalize(st);
	}
	sqlite3_close(h);
	return sbuf_detach(&out);
}

/* CHECK(cond, what), and when it fails the dump as diagnostics */
#define SAME_OR_SHOW(cond, dump, what)                                      \
	do {                                                                \
		int ok_ = (cond) != 0;                                      \
		CHECK(ok_, what);                                           \
		if (!ok_)                                                   \
			for (const char *l = (dump); *l; l += strcspn(l, "\n") + (l[strcspn(l, "\n")] != 0)) \
				printf("#   %.*s\n", (int)strcspn(l, "\n"), l); \
	} while (0)

static char *sql_text(const char *dbp, const char *sql)
{
	sqlite3 *h;
	char *res = NULL;
	if (sqlite3_open_v2(dbp, &h, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK) {
		sqlite3_stmt *st;
		if (sqlite3_prepare_v2(h, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW &&
		    sqlite3_column_text(st, 0))
			res = xstrdup((const char *)sqlite3_column_text(st, 0));
		sqlite3_finalize(st);
	}
	sqlite3_close(h);
	return res ? res : xstrdup("");
}

/* A sink that stores through another until its die_at-th state, then
 * fails every call: what the database sees when crashlab is killed. */
struct dying {
	struct sink inner;
	int states, die_at;
};
#define DYING(call, ...)                                                                  \
	struct dying *d = ctx;                                                            \
	if (d->states >= d->die_at)                                                       \
		return errbuf_set(e, 70, "killed");                                        \
	return d->inner.call ? d->inner.call(d->inner.ctx, __VA_ARGS__) : 0
static int d_run_begin(void *ctx, struct run_info *r, struct errbuf *e) { DYING(run_begin, r, e); }
static int d_fsrun_begin(void *ctx, struct fsrun *f, struct errbuf *e) { DYING(fsrun_begin, f, e); }
static int d_fsrun_recorded(void *ctx, const struct fsrun *f, struct errbuf *e) { DYING(fsrun_recorded, f, e); }
static int d_fsrun_end(void *ctx, const struct fsrun *f, struct errbuf *e) { DYING(fsrun_end, f, e); }
static int d_run_end(void *ctx, const struct run_info *r, struct errbuf *e) { DYING(run_end, r, e); }
static int d_state(void *ctx, const struct fsrun *f, struct state_result *st, struct errbuf *e)
{
	struct dying *d = ctx;
	if (++d->states >= d->die_at)
		return errbuf_set(e, 70, "killed");
	return d->inner.state(d->inner.ctx, f, st, e);
}

/* Resume run id as `crashlab run --resume` does: read it, mark it resumed,
 * plan what each fs has, run the loop. Its exit code, -1 on an error. */
static int resume(struct setup *s, struct crashdb *db, int64_t id, char status[16])
{
	struct run_info run;
	if (crashdb_read_run(db, id, &run, &s->e) < 0)
		return -1;
	snprintf(status, 16, "%s", run.status);
	struct crashdb_resume R;
	struct sink sink;
	crashdb_sink(db, &sink);
	int rc = -1;
	if (crashdb_run_resume(db, &run, &s->e) == 0 && crashdb_resume_fs(db, &run, &s->w, s->fs, 2, &R, &s->e) == 0) {
		rc = runner_run(&s->params, s->fs, 2, &run, &sink, s->sums, &s->e);
		crashdb_resume_free(&R);
	}
	run_info_free(&run);
	s->fs[0].resume = s->fs[1].resume = NULL;
	return rc;
}

TEST(interrupt_and_resume)
{
	char *dbp = xasprintf("%s/resume.db", dir);
	struct crashdb *db;
	struct setup s;
	struct sink sink;
	char *wd = xasprintf("%s/resume", dir);
	mkdir_p(wd, 0755);
	CHECK(crashdb_open(dbp, &db, &s.e) == 0, "a database");
	crashdb_sink(db, &sink);

	/* the reference: the same run, uninterrupted */
	setup(&s, wd);
	int rc = runner_run(&s.params, s.fs, 2, &s.run, &sink, s.sums, &s.e);
	CHECK(rc == 0 && s.run.id == 1, "an uninterrupted run (%d)", rc);
	teardown(&s);
	char *want = dump_run(dbp, 1);

	/* SIGINT while ext4's second state is checked */
	setup(&s, wd);
	intr_install();
	s.fake.stop_on_check = 2;
	rc = runner_run(&s.params, s.fs, 2, &s.run, &sink, s.sums, &s.e);
	CHECK(rc == 130 && !strcmp(s.run.status, "interrupted"), "SIGINT stops the run: exit 130, status interrupted (%d %s)",
	      rc, s.run.status);
	CHECK(s.fake.checks == 2 && s.sums[0].states == 1 && !strcmp(s.sums[0].outcome, "interrupted") &&
		      !strcmp(s.sums[1].outcome, "not started"),
	      "no state is checked after it; ext4 interrupted after one state, f2fs not started (%d %zu %s %s)",
	      s.fake.checks, s.sums[0].states, s.sums[0].outcome, s.sums[1].outcome);
	char *got = dump_run(dbp, 2);
	SAME_OR_SHOW(strstr(got, "interrupted|130\n") && strstr(got, "ext4|interrupted|interrupted (Interrupt) after 1 of 3 crash states") &&
		      !strstr(got, "\nf2fs|"),
	      got, "stored: the run interrupted, ext4 with what was done, nothing of f2fs");
	free(got);
	teardown(&s);
	intr_clear();

	/* --resume: the rest is checked, and the run equals the uninterrupted one */
	setup(&s, wd);
	char status[16];
	rc = resume(&s, db, 2, status);
	CHECK(rc == 0 && !strcmp(status, "interrupted"), "the interrupted run resumes and ends with exit 0 (%d %s)", rc,
	      status);
	CHECK(s.fake.checks == 2 + 3, "ext4's stored state is not checked again; f2fs is recorded and checked (%d)",
	      s.fake.checks);
	CHECK(s.sums[0].states == 3 && s.sums[0].judged == 3 && s.sums[0].distinct == 3,
	      "ext4's summary counts every state, stored before or after (%zu %zu %zu)", s.sums[0].states,
	      s.sums[0].judged, s.sums[0].distinct);
	got = dump_run(dbp, 2);
	SAME_OR_SHOW(!strcmp(got, want), got, "the resumed run stored what the uninterrupted run stored");
	free(got);
	char *resumes = sql_text(dbp, "SELECT resumes FROM runs WHERE id = 2");
	CHECK(!strcmp(resumes, "1"), "and counts one resume (%s)", resumes);
	free(resumes);
	teardown(&s);

	/* SIGINT while f2fs records: f2fs alone is recorded again when resumed */
	setup(&s, wd);
	intr_install();
	s.fake.stop_on_record = 2;
	rc = runner_run(&s.params, s.fs, 2, &s.run, &sink, s.sums, &s.e);
	got = dump_run(dbp, 3);
	SAME_OR_SHOW(rc == 130 && strstr(got, "ext4|ok|") && strstr(got, "f2fs|interrupted|interrupted (Interrupt) while recording"),
	      got, "SIGINT while f2fs records: ext4 done, f2fs interrupted");
	free(got);
	teardown(&s);
	intr_clear();
	setup(&s, wd);
	rc = resume(&s, db, 3, status);
	CHECK(rc == 0 && s.fake.records == 1 && s.fake.checks == 3,
	      "resumed: only f2fs is recorded and checked again (%d, %d records, %d checks)", rc, s.fake.records,
	      s.fake.checks);
	got = dump_run(dbp, 3);
	SAME_OR_SHOW(!strcmp(got, want), got, "and the run equals the uninterrupted one");
	free(got);
	teardown(&s);

	/* crashlab itself killed (kill -9) mid-run: nothing more is stored, the
	 * run stays 'running' with nobody holding its lock, and reads as crashed */
	setup(&s, wd);
	struct dying dy = { .inner = sink, .die_at = 2 };
	struct sink dsink = { .ctx = &dy, .run_begin = d_run_begin, .fsrun_begin = d_fsrun_begin,
			      .fsrun_recorded = d_fsrun_recorded, .state = d_state, .fsrun_end = d_fsrun_end,
			      .run_end = d_run_end };
	rc = runner_run(&s.params, s.fs, 2, &s.run, &dsink, s.sums, &s.e);
	CHECK(rc == -1 && s.run.id == 4, "the run dies at its second state (%d)", rc);
	teardown(&s);
	struct run_info ri;
	CHECK(crashdb_read_run(db, 4, &ri, &s.e) == 0 && !strcmp(ri.status, "crashed"),
	      "a 'running' run whose lock is free reads as crashed (%s)", ri.status);
	run_info_free(&ri);
	char *lock = xasprintf("%s/" CRASHDB_RUN_LOCK, wd);
	int fd = lock_take(lock);
	CHECK(fd >= 0 && crashdb_read_run(db, 4, &ri, &s.e) == 0 && !strcmp(ri.status, "running"),
	      "while its lock is held it is running (%s)", ri.status);
	run_info_free(&ri);
	CHECK(lock_take(lock) < 0 && errno == EWOULDBLOCK, "and nobody else can take the lock");
	close(fd);
	free(lock);
	setup(&s, wd);
	rc = resume(&s, db, 4, status);
	CHECK(rc == 0 && !strcmp(status, "crashed") && s.fake.records == 1 && s.fake.checks == 2 + 3,
	      "the crashed run resumes from its stored recording (%d %s, %d records, %d checks)", rc, status,
	      s.fake.records, s.fake.checks);
	got = dump_run(dbp, 4);
	SAME_OR_SHOW(!strcmp(got, want), got, "and ends equal to the uninterrupted run");
	free(got);
	teardown(&s);
	rc = resume(&s, db, 4, status);
	CHECK(rc == 0 && !strcmp(status, "ok"), "(a finished run read back: %s)", status);
	crashdb_close(db);
	free(want);
	free(wd);
	free(dbp);
}

/* ---- deduplication ---- */

/* Run the two fs of s into a fresh database dbp (in its own folder); the
 * run's exit code. */
static int run_into(struct setup *s, const char *dbp)
{
	struct crashdb *db;
	if (crashdb_open(dbp, &db, &s->e) < 0)
		return -1;
	struct sink sink;
	crashdb_sink(db, &sink);
	int rc = runner_run(&s->params, s->fs, 2, &s->run, &sink, s->sums, &s->e);
	crashdb_close(db);
	return rc;
}

/* A log whose states repeat a disk ('r': the same bytes written again) and
 * repeat a tree on another disk ('x': a write the tree does not show):
 * states at 3, 5, 7 (= the disk of 5), 9 (another disk, the tree of 7) and 11. */
static const char dup_log[] = "wwFwFrFxFwF";

TEST(dedup_same_results)
{
	char *wd_off = xasprintf("%s/plain", dir), *wd_on = xasprintf("%s/dedup", dir);
	mkdir_p(wd_off, 0755);
	mkdir_p(wd_on, 0755);
	char *db_off = xasprintf("%s/plain.db", wd_off), *db_on = xasprintf("%s/dedup.db", wd_on);
	struct setup s;

	setup(&s, wd_off);
	s.fake.log = dup_log;
	s.params.dedup = 0;
	int rc_off = run_into(&s, db_off);
	CHECK(rc_off >= 0 && s.fake.checks == 10, "--no-dedup: every state of both fs is checked (%d, %d checks)", rc_off,
	      s.fake.checks);
	CHECK(s.sums[0].built == 5 && s.sums[0].checked == 5 && s.sums[0].deduplicated == 0 && s.sums[0].judged_once == 0,
	      "and counted as built 5 = checked 5, none deduplicated or judged by copy (%zu %zu %zu %zu)", s.sums[0].built,
	      s.sums[0].checked, s.sums[0].deduplicated, s.sums[0].judged_once);
	teardown(&s);

	setup(&s, wd_on);
	s.fake.log = dup_log;
	int rc = run_into(&s, db_on);
	CHECK(rc == rc_off && s.fake.checks == 8,
	      "dedup: the same exit code, and the checker gets the 4 distinct disks of each fs, not 5 (%d, %d checks)", rc,
	      s.fake.checks);
	CHECK(s.sums[0].built == 5 && s.sums[0].deduplicated == 1 && s.sums[0].checked == 4 &&
		      s.sums[1].built == s.sums[1].deduplicated + s.sums[1].checked,
	      "built 5 = 1 deduplicated + 4 checked (%zu %zu %zu)", s.sums[0].built, s.sums[0].deduplicated,
	      s.sums[0].checked);
	CHECK(s.sums[0].judged_once == 1 && s.sums[0].judged == 5,
	      "the state with another disk but the tree and completed ops of the one before is judged by copy; all 5 "
	      "judged (%zu, %zu)", s.sums[0].judged_once, s.sums[0].judged);
	teardown(&s);

	char *want = dump_run(db_off, 1), *got = dump_run(db_on, 1);
	SAME_OR_SHOW(!strcmp(got, want) && strstr(got, "prefix=7"), got,
		     "both store the same states: spec, point, check, tree and verdicts, times and ids aside");
	free(want);
	free(got);
	want = sql_text(db_on, "SELECT group_concat(ms_replay + ms_mount + ms_capture + ms_fsck + ms_other, ',') FROM states"
			       " WHERE idx = 2");
	CHECK(!strcmp(want, "0.0,0.0"), "the copy claims no time (%s)", want);
	free(want);
	free(wd_off);
	free(wd_on);
	free(db_off);
	free(db_on);
}

/* A state whose disk was checked before the run stopped: resumed, it gets
 * the stored report (read whole, tree and all) instead of a check. States
 * at 3, 5, 7 (another disk) and 9 (the disk of 5 again). */
TEST(dedup_and_resume)
{
	char *wd = xasprintf("%s/dresume", dir);
	mkdir_p(wd, 0755);
	char *dbp = xasprintf("%s/r.db", wd), *refp = xasprintf("%s/ref.db", wd);
	struct setup s;
	setup(&s, wd);
	s.fake.log = "wwFwFoFrF";
	s.params.dedup = 0;
	int rc_ref = run_into(&s, refp);
	CHECK(rc_ref >= 0, "the reference: every state checked (%d)", rc_ref);
	teardown(&s);

	struct crashdb *db;
	CHECK(crashdb_open(dbp, &db, &s.e) == 0, "a database");
	struct sink sink;
	crashdb_sink(db, &sink);
	setup(&s, wd);
	s.fake.log = "wwFwFoFrF";
	intr_install();
	s.fake.stop_on_check = 3; /* the state at 7 */
	int rc = runner_run(&s.params, s.fs, 2, &s.run, &sink, s.sums, &s.e);
	CHECK(rc == 130 && s.sums[0].checked == 2, "stopped after ext4's states at 3 and 5 (%d, %zu)", rc,
	      s.sums[0].checked);
	teardown(&s);
	intr_clear();

	setup(&s, wd);
	s.fake.log = "wwFwFoFrF";
	char status[16];
	rc = resume(&s, db, 1, status);
	CHECK(rc == rc_ref && s.fake.checks == 1 + 3, "resumed: ext4 checks only the state at 7, f2fs its 3 disks (%d, %d)", rc,
	      s.fake.checks);
	CHECK(s.sums[0].resumed == 2 && s.sums[0].checked == 1 && s.sums[0].deduplicated == 1,
	      "ext4: 2 stored before the stop, 1 checked, 1 a copy of a stored report (%zu %zu %zu)", s.sums[0].resumed,
	      s.sums[0].checked, s.sums[0].deduplicated);
	teardown(&s);
	crashdb_close(db);
	char *want = dump_run(refp, 1), *got = dump_run(dbp, 1);
	SAME_OR_SHOW(!strcmp(got, want), got, "and the run equals the reference");
	free(want);
	free(got);

	/* The state at 5 took the checker down: stored as a failed mount, it is
	 * no report to copy, and the state at 9 is checked. */
	CHECK(crashdb_open(dbp, &db, &s.e) == 0, "the database again");
	crashdb_sink(db, &sink);
	setup(&s, wd);
	s.fake.log = "wwFwFoFrF";
	intr_install();
	s.fake.crash_on_check = 2;
	s.fake.stop_on_check = 3;
	rc = runner_run(&s.params, s.fs, 2, &s.run, &sink, s.sums, &s.e);
	CHECK(rc == 130 && s.sums[0].checked == 2, "stopped after the state at 5 took the checker down (%d, %zu)", rc,
	      s.sums[0].checked);
	teardown(&s);
	intr_clear();
	setup(&s, wd);
	s.fake.log = "wwFwFoFrF";
	rc = resume(&s, db, 2, status);
	CHECK(rc >= 0 && s.sums[0].resumed == 2 && s.sums[0].checked == 2 && s.sums[0].deduplicated == 0 &&
		      s.fake.checks == 2 + 3,
	      "resumed: the state at 9 is checked, not a copy of the failed one (%d: %zu %zu %zu, %d checks)", rc,
	      s.sums[0].resumed, s.sums[0].checked, s.sums[0].deduplicated, s.fake.checks);
	teardown(&s);
	crashdb_close(db);
	free(dbp);
	free(refp);
	free(wd);
}

/* ---- a store that fails half-way ---- */

static int64_t db_count(struct crashdb *db, const char *sql)
{
	int64_t v = -1;
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(db->db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

/* The sink fails on a verdict of the second state: the run stops with the
 * sink's error, nothing of that state is stored, the first state is whole. */
TEST(a_store_that_fails_mid_state)
{
	struct setup s;
	setup(&s, dir);
	char *dbp = xasprintf("%s/fail.db", dir);
	struct crashdb *db;
	CHECK(crashdb_open(dbp, &db, &s.e) == 0, "a database");
	CHECK(sqlite3_exec(db->db, "CREATE TEMP TRIGGER inject BEFORE INSERT ON main.verdicts WHEN"
				   " (SELECT idx FROM main.states WHERE id = NEW.state_id) = 1 AND NEW.model = 'posix'"
				   " BEGIN SELECT RAISE(ABORT, 'injected failure'); END", NULL, NULL, NULL) == SQLITE_OK,
	      "a failure injected at state 1's first posix verdict");
	struct sink sink;
	crashdb_sink(db, &sink);
	int rc = runner_run(&s.params, s.fs, 2, &s.run, &sink, s.sums, &s.e);
	CHECK(rc == -1 && s.e.code == EXIT_SOFTWARE && strstr(s.e.msg, "cannot store state 1 of fs run 1") &&
		      strstr(s.e.msg, "injected failure") && strstr(s.e.msg, "posix"),
	      "the run stops with the store's error, which names the state and the verdict (%d: %s)", rc, s.e.msg);
	CHECK(s.fake.checks == 2 && db_count(db, "SELECT count(*) FROM fsruns") == 1,
	      "nothing after the failing state was checked or stored (%d checks)", s.fake.checks);
	CHECK(db_count(db, "SELECT count(*) FROM states") == 1 && db_count(db, "SELECT idx FROM states") == 0,
	      "only state 0 is stored");
	CHECK(db_count(db, "SELECT count(*) FROM nodes") == 2 &&
		      db_count(db, "SELECT count(*) FROM verdicts WHERE model = 'posix'") > 0 &&
		      db_count(db, "SELECT count(*) FROM verdicts WHERE state_id NOT IN (SELECT id FROM states)") == 0 &&
		      db_count(db, "SELECT judged FROM states") == 1,
	      "state 0 whole: its 2 nodes, its verdicts and its judgement; no orphan verdict");
	CHECK(db_count(db, "SELECT count(*) FROM runs WHERE status = 'running' AND finished_at IS NULL") == 1 &&
		      db_count(db, "SELECT count(*) FROM fsruns WHERE outcome = 'running'") == 1,
	      "the run and its fs run stay 'running', as a killed run's do");
	CHECK(db_count(db, "SELECT count(*) FROM pragma_integrity_check WHERE integrity_check = 'ok'") == 1 &&
		      db_count(db, "SELECT count(*) FROM pragma_foreign_key_check") == 0,
	      "the file is sound");
	crashdb_close(db);
	free(dbp);
	teardown(&s);
}

/* ---- golden output, through the database ---- */

static void golden(const char *name, const struct sbuf *out)
{
	char *path = xasprintf("tests/golden/%s", name);
	if (getenv("CRASHLAB_UPDATE_GOLDEN")) {
		CHECK(write_file_atomic(path, out->buf, out->len) == 0, "wrote %s", path);
	} else {
		struct sbuf want = SBUF_INIT;
		int r = read_file(path, &want);
		int same = r == 0 && want.len == out->len && !memcmp(want.buf, out->buf, out->len);
		CHECK(same, "the output matches %s", path);
		if (!same) {
			char *got = xasprintf("%s/%s", dir, name);
			write_file_atomic(got, out->buf, out->len);
			char *diff = xasprintf("diff -u '%s' '%s' | head -n 40 | sed 's/^/# /'", path, got);
			if (system(diff) != 0)
				printf("# (diff failed)\n");
			free(diff);
			free(got);
		}
		sbuf_free(&want);
	}
	free(path);
}

/* Runs cmd, its output (stdout and whatever cmd redirects) into out; its exit status. */
static int capture(const char *cmd, struct sbuf *out)
{
	FILE *p = popen(cmd, "r");
	char buf[4096];
	size_t n;
	if (!p)
		return -1;
	while ((n = fread(buf, 1, sizeof(buf), p)) > 0)
		sbuf_add(out, buf, n);
	int st = pclose(p);
	sbuf_addf(out, "%s", ""); /* terminated, even when empty */
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

TEST(run_table_and_report)
{
	const char *crashlab = getenv("CRASHLAB") ? getenv("CRASHLAB") : "./crashlab";
	if (access(crashlab, X_OK) != 0)
		SKIP("%s is not built; the report needs it", crashlab);
	struct setup s;
	setup(&s, dir);
	char *dbp = xasprintf("%s/run.db", dir);
	struct crashdb *db;
	CHECK(crashdb_open(dbp, &db, &s.e) == 0, "a database");
	struct sink sink;
	crashdb_sink(db, &sink);
	int rc = runner_run(&s.params, s.fs, 2, &s.run, &sink, s.sums, &s.e);
	CHECK(rc == 0, "the run stored (%d: %s)", rc, rc < 0 ? s.e.msg : "");
	crashdb_close(db);

	/* The run table, times taken out. */
	s.sums[0].ms = s.sums[1].ms = 0;
	char *tbl = xasprintf("%s/table.txt", dir);
	FILE *f = fopen(tbl, "w");
	render_run_table(f, &s.run, s.sums, 2);
	fclose(f);
	struct sbuf out = SBUF_INIT;
	read_file(tbl, &out);
	golden("run-table.txt", &out);
	sbuf_reset(&out);

	char *cmd = xasprintf("'%s' report last --db '%s' --all 2>&1", crashlab, dbp);
	FILE *p = popen(cmd, "r");
	char buf[4096];
	size_t n;
	while (p && (n = fread(buf, 1, sizeof(buf), p)) > 0)
		sbuf_add(&out, buf, n);
	CHECK(p && pclose(p) == 0, "crashlab report exits 0");
	golden("run-report.txt", &out);
	sbuf_free(&out);
	free(cmd);
	/* the default report: findings only, equal states once */
	cmd = xasprintf("'%s' report last --db '%s' 2>&1", crashlab, dbp);
	p = popen(cmd, "r");
	while (p && (n = fread(buf, 1, sizeof(buf), p)) > 0)
		sbuf_add(&out, buf, n);
	CHECK(p && pclose(p) == 0, "crashlab report (findings only) exits 0");
	golden("run-report-findings.txt", &out);
	sbuf_free(&out);
	free(cmd);
	free(tbl);

	/* The comparison view of the run, in its three formats. */
	static const char *const fmts[][2] = { { "text", "compare.txt" }, { "markdown", "compare.md" },
					       { "json", "compare.json" } };
	for (size_t i = 0; i < 3; i++) {
		cmd = xasprintf("'%s' compare last --db '%s' --format %s 2>&1", crashlab, dbp, fmts[i][0]);
		CHECK(capture(cmd, &out) == 0, "crashlab compare --format %s exits 0", fmts[i][0]);
		golden(fmts[i][1], &out);
		sbuf_free(&out);
		free(cmd);
	}
	teardown(&s);

	/* A second run in which the rename is lost: compare 1 2 puts the runs
	 * side by side and marks the rows that differ. */
	setup(&s, dir);
	s.fake.lose_rename = 1;
	CHECK(crashdb_open(dbp, &db, &s.e) == 0, "the database again");
	crashdb_sink(db, &sink);
	rc = runner_run(&s.params, s.fs, 2, &s.run, &sink, s.sums, &s.e);
	CHECK(rc == 0, "the second run stored (%d: %s)", rc, rc < 0 ? s.e.msg : "");
	crashdb_close(db);
	cmd = xasprintf("'%s' compare 1 2 --db '%s' 2>&1", crashlab, dbp);
	CHECK(capture(cmd, &out) == 0, "crashlab compare 1 2 exits 0");
	golden("compare-two-runs.txt", &out);
	CHECK(strstr(out.buf, "* A/bar") && strstr(out.buf, "run 2 f2fs"),
	      "the two runs' columns are named and the lost rename's row is marked as differing");
	sbuf_free(&out);
	free(cmd);
	cmd = xasprintf("'%s' compare 1 3 --db '%s' 2>&1", crashlab, dbp);
	CHECK(capture(cmd, &out) != 0 && strstr(out.buf, "3"), "a run that does not exist is an error naming it (%s)",
	      out.buf);
	sbuf_free(&out);
	free(cmd);
	free(dbp);
	teardown(&s);
}

__attribute__((constructor(101))) static void make_dir(void)
{
	if (!mkdtemp(dir))
		abort();
	msg_configure(0, 1);
}

__attribute__((destructor)) static void remove_dir(void)
{
	rm_rf(dir);
}

TEST_MAIN()
