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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmd/render.h"
#include "crashdb/db.h"
#include "engine/runner.h"
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

/* entries: 'w' a one-sector write, 'F' a flush. The superblock counts all. */
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
	for (size_t i = 0; i < n; i++) {
		memset(sec, 0, sizeof(sec));
		int w = entries[i] == 'w';
		put64(sec, w ? 100 + i : 0);
		put64(sec + 8, w);
		put64(sec + 16, w ? 0 : WLOG_FLUSH);
		sbuf_add(&b, sec, sizeof(sec));
		if (w) {
			memset(sec, (int)('a' + i), sizeof(sec));
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
	int lose_rename;         /* the final tree has the new A/foo but not A/bar (what f2fs keeps) */
	int starts, checks;      /* how often a checker started, states it was asked */
};

static int fake_record(const struct backend *b, const struct record_opts *o, struct recording *rec)
{
	struct fake *f = b->ctx;
	memset(rec, 0, sizeof(*rec));
	rec->res = xcalloc(o->w->n, sizeof(*rec->res));
	rec->base = xasprintf("%s/%s-base.img", o->workdir, o->fs);
	rec->log_path = xasprintf("%s/%s.log", o->workdir, o->fs);
	rec->qemu_cmdline = xstrdup("fake-qemu");
	if (f->fail_record) {
		rec->outcome = VM_PANIC;
		return errbuf_set(&rec->err, EXIT_PANIC, "the recording guest did not start: guest kernel panic: test");
	}
	/* setup: w w F (committed 3) | run: rename, write -> w F (5) | fsync -> w F (7) */
	if (write_log(rec->log_path, "wwFwFwF") < 0)
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
	(void)o;
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

/* The tree at each crash point: nothing of the run at 3, the rename at 5, everything at 7. */
static enum vm_outcome fake_check(struct checker *c, const char *spec, struct check_report *rep, struct errbuf *e)
{
	struct fake *f = (struct fake *)c;
	memset(rep, 0, sizeof(*rep));
	errbuf_clear(e);
	if (++f->checks == f->crash_on_check) {
		errbuf_set(e, EXIT_PANIC, "guest kernel panic: Kernel panic - not syncing: test");
		return VM_PANIC;
	}
	unsigned prefix = 0;
	sscanf(spec, "prefix=%u", &prefix);
	rep->mount_ok = 1;
	rep->fsck_clean = 1;
	rep->fsck_output = xstrdup("clean\n");
	rep->nodes = xcalloc(4, sizeof(*rep->nodes));
	text_node(rep, "A", 10, NULL);
	if (prefix < 5) {
		text_node(rep, "A/foo", 11, "hello");
	} else if (f->lose_rename && prefix >= 7) {
		text_node(rep, "A/foo", 12, "world");
	} else {
		text_node(rep, "A/bar", 11, "hello");
		if (prefix >= 7)
			text_node(rep, "A/foo", 12, "world");
	}
	snprintf(rep->tree_hash, sizeof(rep->tree_hash), "%016x", prefix);
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
					 .nr_fdatabarrier = -1 };
	s->fs[0] = (struct fs_params){ "ext4", NULL, NULL };
	s->fs[1] = (struct fs_params){ "f2fs", NULL, NULL };
	s->run = (struct run_info){ .started_at = xstrdup("2026-01-01T00:00:00Z"), .cmdline = xstrdup("crashlab run seed.wl"),
				    .accel = xstrdup("tcg"), .workload_file = xstrdup("seed.wl"),
				    .workload_text = xstrdup(workload), .crash_mode = xstrdup("flush"),
				    .status = xstrdup("running") };
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
	struct sink sink = { &m, m_run_begin, m_fsrun_begin, m_state, m_fsrun_end, m_run_end };
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

TEST(a_state_that_kills_the_checker)
{
	struct setup s;
	setup(&s, dir);
	s.fake.crash_on_check = 2;
	struct memsink m = { 0 };
	struct sink sink = { &m, m_run_begin, m_fsrun_begin, m_state, m_fsrun_end, m_run_end };
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
	struct sink sink = { &m, m_run_begin, m_fsrun_begin, m_state, m_fsrun_end, m_run_end };
	int rc = runner_run(&s.params, s.fs, 1, &s.run, &sink, s.sums, &s.e);
	CHECK(rc == EXIT_PANIC, "the run exits with the guest's code (%d)", rc);
	CHECK(!strcmp(m.calls.buf, "rfeR") && !strcmp(m.last_outcome, "panic"),
	      "the fs run is stored with its outcome and no states (%s, %s)", m.calls.buf, m.last_outcome);
	CHECK(strstr(s.sums[0].error, "guest kernel panic") && !strcmp(s.run.status, "failed"),
	      "the summary says why and the run failed (%s)", s.sums[0].error);
	sbuf_free(&m.calls);
	teardown(&s);
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
