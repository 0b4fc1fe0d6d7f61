/*
 * test-merge.c - crashlab db merge (crashdb/merge.c, cmd/db.c) on databases
 * filled through the sink, as the run loop fills them, without a guest.
 *
 * Runs of two or three file systems with ops, states, trees and verdicts
 * go into "shard" databases and into one "whole" database that stores the
 * same runs the way a batch does (fs runs of several runs interleaved).
 * The merge of the shards, in shard order, must equal the merge of the
 * whole, row for row, ids included, and keep every row under the right
 * parent. Then: the ids of an appended output, a run merged twice, a run
 * still running, a failure half-way through an input (nothing of it
 * stays), a column a later schema adds (copied), one the output lacks
 * (refused), and through the binary: files that are not crashlab
 * databases, an input at an older schema version (refused, not changed),
 * the output named as an input, a missing input.
 */
#include <sqlite3.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "crashdb/db.h"
#include "core/util.h"
#include "host/msg.h"
#include "host/sys.h"
#include "tests/unit/check.h"
#include "tests/unit/dbkit.h"

static char dir[4096];
static struct errbuf eb;

static const char workload[] = "[setup]\nmkdir A\nsync\n[run]\nwrite A/f 4K\nfsync A/f\n";
static struct op_result results[] = {
	{ 0, 0, 12, 0, 0.5, 2 },
	{ 0, 0, 0, 0, 3.0, 4 },
	{ 4096, 0, 13, 0, 0.25, 6 },
	{ 0, 0, 13, 0, 1.0, 8 },
};

static char *tmp(const char *name)
{
	return xasprintf("%s/%s", dir, name);
}

/* The same in one of a few static buffers, for a path used once in an expression. */
static const char *ring(const char *name)
{
	static char buf[8][4200];
	static int k;
	k = (k + 1) % 8;
	snprintf(buf[k], sizeof(buf[k]), "%s/%s", dir, name);
	return buf[k];
}

struct fixture_run {
	const char *wl;              /* workload_file */
	const char *started;
	int end;                     /* run_end called (else it stays running) */
	int64_t id;
	struct fsrun fr[3];
};

static const char *const fss[] = { "ext4", "xfs", "f2fs" };

static void begin_run(struct sink *sink, struct fixture_run *r)
{
	struct run_info ri = { .started_at = (char *)r->started, .cmdline = xasprintf("crashlab run %s", r->wl),
			       .workload_file = (char *)r->wl, .workload_text = (char *)workload, .crash_mode = "flush",
			       .accel = "tcg", .workdir = xasprintf("/cache/runs/%s", r->wl), .pid = 42 };
	CHECK(sink->run_begin(sink->ctx, &ri, &eb) == 0, "run %s begun (%s)", r->wl, eb.msg);
	r->id = ri.id;
	free(ri.cmdline);
	free(ri.workdir);
}

static void end_run(struct sink *sink, struct fixture_run *r)
{
	struct run_info ri = { .id = r->id, .status = "ok", .exit_code = 0, .finished_at = "2026-01-01T00:00:09Z" };
	CHECK(sink->run_end(sink->ctx, &ri, &eb) == 0, "run %s ended", r->wl);
}

/* fs run f of r, with k + 2 states (each with nodes and verdicts) */
static void add_fsrun(struct sink *sink, struct fixture_run *r, int f, int k)
{
	struct fsrun *fr = &r->fr[f];
	memset(fr, 0, sizeof(*fr));
	fr->run_id = r->id;
	fr->fs = (char *)fss[f];
	fr->outcome = "running";
	fr->log_path = "/cache/runs/x.log";
	CHECK(sink->fsrun_begin(sink->ctx, fr, &eb) == 0, "fs run %s of %s begun", fss[f], r->wl);
	wl_parse("m.wl", workload, &fr->ops, &eb);
	fr->res = results;
	fr->log = (struct log_summary){ 10, 10, 3, 6, 0, 24576, 0 };
	fr->setup_end = 4;
	for (int i = 0; i < k + 2; i++) {
		struct tree_node n[2] = { { 0 }, { 0 } };
		n[0].path = "A";
		n[0].type = 'd';
		n[0].mode = 0755;
		n[0].nlink = 2;
		n[1].path = "A/f";
		n[1].type = 'f';
		n[1].mode = 0644;
		n[1].nlink = 1;
		n[1].size = (uint64_t)(i * 1000 + f);
		n[1].content = (unsigned char *)r->wl;
		n[1].content_len = strlen(r->wl);
		struct state_result s = { .idx = i, .kind = i == k + 1 ? "final" : "flush", .spec = "flush 4", .point = 4 + i,
					  .last_completed_op = i };
		s.check.mount_ok = 1;
		s.check.fsck_status = 0;
		s.check.fsck_clean = 1;
		s.check.nodes = n;
		s.check.n_nodes = 2;
		snprintf(s.check.tree_hash, sizeof(s.check.tree_hash), "%016x", i * 7 + f);
		struct verdict v[2] = { { 0 }, { 0 } };
		for (int j = 0; j < 2; j++) {
			v[j].model = MODEL_POSIX;
			snprintf(v[j].rule, sizeof(v[j].rule), "fsync.file");
			v[j].kind = j ? V_KEPT : V_BONUS;
			v[j].op = 3;
			snprintf(v[j].path, sizeof(v[j].path), "A/f");
			snprintf(v[j].reason, sizeof(v[j].reason), "%s %s state %d verdict %d", r->wl, fss[f], i, j);
		}
		s.judge.judged = 1;
		s.judge.explained = 1;
		s.judge.marks = "ss+";
		s.judge.v = v;
		s.judge.n = 2;
		CHECK(sink->state(sink->ctx, fr, &s, &eb) == 0, "state %d of %s %s", i, r->wl, fss[f]);
	}
	fr->outcome = "ok";
	CHECK(sink->fsrun_end(sink->ctx, fr, &eb) == 0, "fs run %s of %s ended", fss[f], r->wl);
	wl_free(&fr->ops);
}

/* A database at path holding runs[0..n) on nfs file systems. chunks: the
 * runs in chunks of these sizes, stored as a batch stores them (in each
 * chunk every run's first fs, then every run's second); NULL: run by run. */
static void make_db(const char *path, struct fixture_run *runs, size_t n, int nfs, const size_t *chunks)
{
	struct crashdb *db;
	struct sink sink;
	CHECK(crashdb_open(path, &db, &eb) == 0, "%s opened", path);
	crashdb_sink(db, &sink);
	for (size_t i = 0; i < n; i++)
		begin_run(&sink, &runs[i]);
	if (chunks) {
		for (size_t c = 0, first = 0; first < n; first += chunks[c++])
			for (int f = 0; f < nfs; f++)
				for (size_t i = first; i < first + chunks[c] && i < n; i++)
					add_fsrun(&sink, &runs[i], f, (runs[i].wl[0] - 'a') % 3 + f);
	} else {
		for (size_t i = 0; i < n; i++)
			for (int f = 0; f < nfs; f++)
				add_fsrun(&sink, &runs[i], f, (runs[i].wl[0] - 'a') % 3 + f);
	}
	for (size_t i = 0; i < n; i++)
		if (runs[i].end)
			end_run(&sink, &runs[i]);
	crashdb_close(db);
	/* the end time is the sink's clock: one for every database, so they compare */
	dbkit_exec(path, "UPDATE runs SET finished_at = '2026-01-01T00:00:09Z' WHERE finished_at IS NOT NULL");
}

/* The merge of inputs into out through the library; runs added, or -1. */
static int skipped_n;
static char skipped_msg[1024];
static void on_skip(void *ctx, const char *msg)
{
	(void)ctx;
	skipped_n++;
	snprintf(skipped_msg, sizeof(skipped_msg), "%s", msg);
}

static int64_t merge(const char *out, const char *in)
{
	struct crashdb *o, *i;
	if (crashdb_open_readonly(in, &i, &eb) < 0)
		return -1;
	if (crashdb_open(out, &o, &eb) < 0) {
		crashdb_close(i);
		return -1;
	}
	struct crashdb_merge_stats ms = { .skipped = on_skip };
	int r = crashdb_merge(o, i, &ms, &eb);
	crashdb_close(o);
	crashdb_close(i);
	return r < 0 ? -1 : (int64_t)ms.runs;
}

/* Every row of every table in id (or key) order, as text. */
static void dump(const char *path, struct sbuf *out)
{
	char *cmd = xasprintf("sqlite3 -batch -noheader '%s' \"SELECT * FROM runs ORDER BY id; SELECT * FROM fsruns ORDER "
			      "BY id; SELECT * FROM ops ORDER BY fsrun_id, op_id; SELECT id, fsrun_id, idx, kind, spec, "
			      "point, tree_hash, judged, explained, timeline FROM states ORDER BY id; SELECT state_id, "
			      "path, size, hex(content) FROM nodes ORDER BY state_id, path; SELECT * FROM verdicts "
			      "ORDER BY id\"",
			      path);
	dbkit_popen(cmd, out);
	free(cmd);
}

static int have_sqlite3(void)
{
	return system("sqlite3 -version >/dev/null 2>&1") == 0;
}

static struct fixture_run R[] = {
	{ .wl = "a.wl", .started = "2026-01-01T00:00:01Z", .end = 1 },
	{ .wl = "b.wl", .started = "2026-01-01T00:00:02Z", .end = 1 },
	{ .wl = "c.wl", .started = "2026-01-01T00:00:03Z", .end = 1 },
};

/* The whole batch, and its two shards: s1 (run a), s2 (runs b and c); each case may be run alone. */
static void fixtures(void)
{
	static int made;
	if (made++)
		return;
	char *whole = tmp("whole.db"), *s1 = tmp("s1.db"), *s2 = tmp("s2.db");
	/* the batch's chunks: {a}, {b, c}; a shard is whole chunks */
	static const size_t whole_chunks[] = { 1, 2 }, s1_chunks[] = { 1 }, s2_chunks[] = { 2 };
	make_db(whole, R, 3, 2, whole_chunks);
	make_db(s1, R, 1, 2, s1_chunks);
	make_db(s2, R + 1, 2, 2, s2_chunks);
	CHECK(dbkit_int(whole, "SELECT run_id FROM fsruns WHERE id = 4") == 3,
	      "the whole database's fs runs are interleaved as a batch's");
	free(whole);
	free(s1);
	free(s2);
}

TEST(shards_merge_as_the_whole)
{
	fixtures();
	char *whole = tmp("whole.db"), *s1 = tmp("s1.db"), *s2 = tmp("s2.db");
	char *mw = tmp("merged-whole.db"), *ms = tmp("merged-shards.db");
	CHECK(merge(mw, whole) == 3, "the whole merged: 3 runs (%s)", eb.msg);
	CHECK(merge(ms, s1) == 1 && merge(ms, s2) == 2, "shard 1 then shard 2 merged: 1 and 2 runs (%s)", eb.msg);
	char why[256];
	CHECK(dbkit_sound(ms, why, sizeof(why)), "the merged database is sound (%s)", why);
	CHECK(dbkit_int(ms, "SELECT max(id) = count(*) FROM runs") == 1 && dbkit_int(ms, "SELECT max(id) = count(*) FROM "
									 "fsruns") == 1 &&
		      dbkit_int(ms, "SELECT max(id) = count(*) FROM states") == 1 &&
		      dbkit_int(ms, "SELECT max(id) = count(*) FROM verdicts") == 1,
	      "ids are dense");
	CHECK(dbkit_int(ms, "SELECT group_concat(run_id || substr(fs, 1, 1), ' ') = '1e 1x 2e 3e 2x 3x' FROM (SELECT "
			    "run_id, fs FROM fsruns ORDER BY id)") == 1,
	      "the fs runs keep the order the batch stored them in");
	/* every row kept its parent: a node's content names its run's workload, a verdict its run and fs */
	CHECK(dbkit_int(ms, "SELECT count(*) FROM nodes n JOIN states s ON s.id = n.state_id JOIN fsruns f ON f.id = "
			    "s.fsrun_id JOIN runs r ON r.id = f.run_id WHERE CAST(n.content AS TEXT) <> r.workload_file") ==
		      0 && dbkit_int(ms, "SELECT count(*) FROM nodes WHERE content IS NOT NULL") == (2 + 3) + (3 + 4) + (4 + 5),
	      "each state's tree is under its own run");
	CHECK(dbkit_int(ms, "SELECT count(*) FROM verdicts v JOIN states s ON s.id = v.state_id JOIN fsruns f ON f.id = "
			    "s.fsrun_id JOIN runs r ON r.id = f.run_id WHERE v.reason <> r.workload_file || ' ' || f.fs || "
			    "' state ' || s.idx || ' verdict ' || (CASE v.verdict WHEN 'bonus' THEN 0 ELSE 1 END)") == 0,
	      "each verdict is under its own state, fs run and run");
	CHECK(dbkit_int(ms, "SELECT count(*) FROM ops") == 4 * 6, "every fs run's ops");
	if (!have_sqlite3())
		SKIP("the sqlite3 tool is not here to compare whole databases");
	struct sbuf a = SBUF_INIT, b = SBUF_INIT;
	dump(mw, &a);
	dump(ms, &b);
	CHECK(a.len > 1000 && a.len == b.len && !memcmp(a.buf, b.buf, a.len),
	      "the shards merged equal the whole merged, row for row (%zu bytes)", a.len);
	/* the merge of a database that was stored run by run is that database */
	char *plain = tmp("plain.db"), *mp = tmp("merged-plain.db");
	struct fixture_run P[3];
	memcpy(P, R, sizeof(P));
	make_db(plain, P, 3, 2, NULL);
	CHECK(merge(mp, plain) == 3, "a database stored run by run merged");
	dump(plain, &a);
	dump(mp, &b);
	CHECK(a.len == b.len && !memcmp(a.buf, b.buf, a.len), "is the same database, ids included");
	sbuf_free(&a);
	sbuf_free(&b);
	free(plain);
	free(mp);
	free(whole);
	free(s1);
	free(s2);
	free(mw);
	free(ms);
}

TEST(append_duplicates_running)
{
	fixtures();
	char *out = tmp("append.db"), *s1 = tmp("s1.db"), *s2 = tmp("s2.db"), *live = tmp("live.db");
	struct fixture_run L[] = { { .wl = "x.wl", .started = "2026-01-02T00:00:00Z", .end = 1 },
				   { .wl = "y.wl", .started = "2026-01-02T00:00:01Z", .end = 0 } };
	make_db(out, L, 1, 1, NULL); /* an output with a run of its own */
	CHECK(merge(out, s2) == 2, "two runs appended to an output that has one (%s)", eb.msg);
	CHECK(dbkit_int(out, "SELECT group_concat(workload_file, ' ') = 'x.wl b.wl c.wl' FROM (SELECT workload_file FROM "
			     "runs ORDER BY id)") == 1 &&
		      dbkit_int(out, "SELECT max(id) FROM runs") == 3,
	      "they are runs 2 and 3");
	CHECK(dbkit_int(out, "SELECT min(id) FROM fsruns WHERE run_id = 2") == 2, "their fs runs follow the output's");
	skipped_n = 0;
	CHECK(merge(out, s2) == 0 && skipped_n == 2, "merged again: nothing added, both skipped (%d)", skipped_n);
	CHECK(strstr(skipped_msg, "run 2 of '") && strstr(skipped_msg, "c.wl") && strstr(skipped_msg, "already (run 3"),
	      "the message names the run, its workload and its id in the output: %s", skipped_msg);
	CHECK(merge(out, s1) == 1 && dbkit_int(out, "SELECT max(id) FROM runs") == 4, "another input adds run 4");
	make_db(live, L + 1, 1, 1, NULL);
	skipped_n = 0;
	CHECK(merge(out, live) == 0 && skipped_n == 1 && strstr(skipped_msg, "still running"),
	      "a run still running is skipped: %s", skipped_msg);
	char why[256];
	CHECK(dbkit_sound(out, why, sizeof(why)), "the output is sound (%s)", why);
	free(out);
	free(s1);
	free(s2);
	free(live);
}

TEST(one_transaction_per_input)
{
	fixtures();
	char *out = tmp("tx.db"), *whole = tmp("whole.db");
	CHECK(merge(out, ring("s1.db")) == 1, "one input merged");
	int64_t before = dbkit_int(out, "SELECT count(*) FROM nodes");
	/* a trigger of the output's refuses the third run's nodes: the whole input goes */
	dbkit_exec(out, "CREATE TRIGGER boom BEFORE INSERT ON nodes WHEN CAST(NEW.content AS TEXT) = 'c.wl' BEGIN "
			"SELECT RAISE(ABORT, 'refused by the test'); END");
	CHECK(merge(out, whole) < 0 && strstr(eb.msg, "refused by the test"), "a failure half-way fails the merge: %s",
	      eb.msg);
	CHECK(dbkit_int(out, "SELECT count(*) FROM runs") == 1 && dbkit_int(out, "SELECT count(*) FROM nodes") == before &&
		      dbkit_int(out, "SELECT count(*) FROM states") == dbkit_int(ring("s1.db"), "SELECT count(*) FROM states"),
	      "nothing of that input stays (its runs a and b neither)");
	dbkit_exec(out, "DROP TRIGGER boom");
	free(out);
	free(whole);
}

TEST(columns_of_later_schemas)
{
	char *in = tmp("col-in.db"), *out = tmp("col-out.db"), *bad = tmp("col-bad.db");
	struct fixture_run A[] = { { .wl = "a.wl", .started = "2026-01-03T00:00:00Z", .end = 1 } };
	make_db(in, A, 1, 1, NULL);
	struct crashdb *o;
	CHECK(crashdb_open(out, &o, &eb) == 0, "an output");
	crashdb_close(o);
	/* as if a later step had added a column to states, in both */
	const char *add = "ALTER TABLE states ADD COLUMN later TEXT; UPDATE states SET later = 'seen ' || idx";
	CHECK(dbkit_exec(in, add) == 0 && dbkit_exec(out, "ALTER TABLE states ADD COLUMN later TEXT") == 0,
	      "a column added to states");
	CHECK(merge(out, in) == 1, "merged (%s)", eb.msg);
	CHECK(dbkit_int(out, "SELECT count(*) FROM states WHERE later = 'seen ' || idx") == 2, "the new column is copied");
	/* a table a later step adds under states, in both: copied, under the new state ids */
	const char *notes = "CREATE TABLE notes (id INTEGER PRIMARY KEY, state_id INTEGER NOT NULL REFERENCES states(id) "
			    "ON DELETE CASCADE, text TEXT)";
	char *in2 = tmp("col-in2.db");
	struct fixture_run B[] = { { .wl = "b.wl", .started = "2026-01-03T00:00:01Z", .end = 1 } };
	make_db(in2, B, 1, 1, NULL);
	CHECK(dbkit_exec(in2, add) == 0 && dbkit_exec(in2, notes) == 0 && dbkit_exec(out, notes) == 0 &&
		      dbkit_exec(in2, "INSERT INTO notes (state_id, text) SELECT id, 'note of ' || idx FROM states") == 0,
	      "a table of notes under states");
	CHECK(merge(out, in2) == 1, "merged (%s)", eb.msg);
	CHECK(dbkit_int(out, "SELECT count(*) FROM notes n JOIN states s ON s.id = n.state_id JOIN fsruns f ON f.id = "
			     "s.fsrun_id WHERE f.run_id = 2 AND n.text = 'note of ' || s.idx") == 3 &&
		      dbkit_int(out, "SELECT count(*) FROM notes") == 3,
	      "its rows are copied, each under its state's new id");
	/* a table outside the tree is refused, not dropped */
	dbkit_exec(out, "CREATE TABLE loose (x)");
	dbkit_exec(in2, "CREATE TABLE loose (x)");
	CHECK(merge(out, in2) < 0 && eb.code == EXIT_SOFTWARE && strstr(eb.msg, "'loose' is not under runs"),
	      "a table not under runs is refused: %s", eb.msg);
	free(in2);
	/* an input with a column the output has not */
	make_db(bad, A, 1, 1, NULL);
	dbkit_exec(bad, "ALTER TABLE verdicts ADD COLUMN unknown INTEGER");
	CHECK(merge(ring("col-out2.db"), bad) < 0 && eb.code == EXIT_DATAERR && strstr(eb.msg, "verdicts.unknown"),
	      "an input with a column the output lacks is refused (65): %s", eb.msg);
	free(in);
	free(out);
	free(bad);
}

static int run_merge(const char *args, struct sbuf *out)
{
	char *a = xasprintf("db merge %s", args);
	int rc = dbkit_run(a, out);
	free(a);
	return rc;
}

TEST(the_command)
{
	fixtures();
	if (access(dbkit_crashlab(), X_OK) != 0)
		SKIP("%s is not built", dbkit_crashlab());
	struct sbuf o = SBUF_INIT;
	char *out = tmp("cmd.db"), *txt = tmp("notes.txt"), *other = tmp("other.db"), *old = tmp("old.db");
	write_file_atomic(txt, "hello\n", 6);
	dbkit_exec(other, "");
	sqlite3 *s;
	sqlite3_open(other, &s);
	sqlite3_exec(s, "CREATE TABLE t (x); INSERT INTO t VALUES (1)", NULL, NULL, NULL);
	sqlite3_close(s);
	char *args = xasprintf("'%s' '%s' '%s'", out, tmp("s1.db"), txt);
	int rc = run_merge(args, &o);
	CHECK(rc == 65 && strstr(o.buf, "notes.txt' is not a crashlab database"), "a text file is refused (65)");
	CHECK(!file_exists(out), "and the output was not made");
	free(args);
	args = xasprintf("'%s' '%s'", out, other);
	rc = run_merge(args, &o);
	CHECK(rc == 65 && strstr(o.buf, "not a crashlab one"), "another program's sqlite file is refused (65)");
	free(args);
	args = xasprintf("'%s' '%s'", out, ring("nothere.db"));
	rc = run_merge(args, &o);
	CHECK(rc == 66 && strstr(o.buf, "does not exist"), "a missing input (66)");
	free(args);
	if (dbkit_unpack(DBKIT_FIXTURES "/v2.db.gz", old) == 0) {
		args = xasprintf("'%s' '%s'", out, old);
		rc = run_merge(args, &o);
		CHECK(rc == 65 && strstr(o.buf, "schema version 2"), "an input at schema version 2 is refused (65)");
		CHECK(dbkit_int(old, "PRAGMA user_version") == 2, "and left as it was");
		free(args);
	}
	args = xasprintf("'%s' '%s' '%s'", ring("s1.db"), ring("s2.db"), ring("s1.db"));
	rc = run_merge(args, &o);
	CHECK(rc == 2 && strstr(o.buf, "is the output and an input"), "the output named as an input (2)");
	free(args);
	rc = run_merge("", &o);
	CHECK(rc == 2, "no arguments: usage (2)");
	args = xasprintf("'%s' '%s' '%s' '%s'", out, ring("s1.db"), ring("s2.db"), ring("s1.db"));
	rc = run_merge(args, &o);
	CHECK(rc == 0 && strstr(o.buf, "s2.db: 2 runs as 2-3") && strstr(o.buf, "no run to add; 1 already in") &&
		      strstr(o.buf, "skipped: run 1 of '") && strstr(o.buf, "3 runs added from 3 databases, 1 skipped"),
	      "three inputs, one of them twice: 3 runs, the repeat skipped and said");
	rc = dbkit_run("db merge --help", &o);
	CHECK(rc == 0 && strstr(o.buf, "usage: crashlab db merge OUT.db IN.db...") && strstr(o.buf, "--shard"),
	      "--help teaches");
	sbuf_free(&o);
	free(out);
	free(txt);
	free(other);
	free(old);
}

int main(int argc, char **argv)
{
	snprintf(dir, sizeof(dir), "%s/crashlab-merge.XXXXXX",
		 getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	msg_configure(0, 1);
	int rc = test_main(argc, argv);
	if (getenv("CRASHLAB_KEEP_TMP"))
		return rc;
	char *rm = xasprintf("rm -rf '%s'", dir);
	if (system(rm) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
	free(rm);
	return rc;
}
