/*
 * test-crashdb.c - the sqlite store and `crashlab show` over it.
 *
 * Part one drives crashdb.h on a temporary database: a run, two fs runs,
 * their ops and crash states with observed trees (blobs with NUL bytes,
 * NULL against empty content, 64-bit inode numbers), then reads it all
 * back with plain SQL. It checks that a state and its nodes, and a fs run's
 * ops, go in all or nothing; that a run's deletion cascades; that a
 * reopened file keeps its data; that a version-0 file is migrated, a file
 * from a newer crashlab refused, and a file that is not sqlite (or not
 * crashlab's) named in a one-line error.
 *
 * Part two runs `./crashlab show` (or $CRASHLAB) on that database, filters
 * the timestamps, and compares with tests/golden/show-*; the JSON forms are
 * also parsed with python3 when it is there. CRASHLAB_UPDATE_GOLDEN=1
 * rewrites the golden files instead of comparing; CRASHLAB_KEEP_DB=FILE
 * keeps a copy of the filled database.
 */
#include <sqlite3.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmd/render.h"
#include "crashdb/db.h"
#include "core/util.h"
#include "host/msg.h"
#include "host/sys.h"
#include "tests/unit/check.h"
#include "tests/unit/dbkit.h"

static char dir[] = "/tmp/crashlab-crashdb.XXXXXX";
static char *path;
static struct crashdb *db;
static struct fsrun ext4;
static int fill_ok;

static int64_t query_i64(struct crashdb *db, const char *sql)
{
	sqlite3_stmt *st;
	int64_t v = -999;
	if (sqlite3_prepare_v2(db->db, sql, -1, &st, NULL) != SQLITE_OK)
		return -998;
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

/* Run raw SQL on a file with sqlite alone (not through crashdb). */
static int raw_sql(const char *path, const char *sql)
{
	sqlite3 *s;
	int rc = sqlite3_open(path, &s);
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(s, sql, NULL, NULL, NULL);
	sqlite3_close(s);
	return rc == SQLITE_OK ? 0 : -1;
}

static struct tree_node node(const char *path, char type, uint32_t mode, uint64_t size)
{
	struct tree_node n = { 0 };
	n.path = (char *)path;
	n.type = type;
	n.mode = mode;
	n.size = size;
	n.nlink = type == 'd' ? 2 : 1;
	n.ino = 100 + (uint64_t)strlen(path);
	return n;
}

static const char workload[] =
	"# the seed example\n"
	"[setup]\n"
	"mkdir A\n"
	"write A/foo \"hello\"\n"
	"sync\n"
	"[run]\n"
	"rename A/foo A/bar\n"
	"write A/foo 64K\n"
	"unlink A/nope\n"
	"fsync A/foo\n";

/* ret, err, ino, ino2, ms, log_pos of ops 1..7 */
static struct op_result results[] = {
	{ 0, 0, 12, 0, 0.5, 2 },
	{ 5, 0, 13, 0, 0.25, 3 },
	{ 0, 0, 0, 0, 3.0, 40 },
	{ 0, 0, 13, 0, 0.125, 40 },
	{ 65536, 0, 14, 0, 1.5, 40 },
	{ -1, 2 /* ENOENT */, 0, 0, 0.0625, 40 },
	{ 0, 0, 14, 0, 9.0, 52 },
};

static struct sink sink;
static struct errbuf eb;

/* A state as the run loop hands it to the sink (the fixture's strings are not freed). */
static struct state_result state(int idx, const char *kind, const char *spec, int64_t point, int last, int mount_ok,
				 struct tree_node *nodes, size_t n)
{
	struct state_result s = { .idx = idx, .kind = (char *)kind, .spec = (char *)spec, .point = point,
				  .last_completed_op = last };
	s.check.mount_ok = mount_ok;
	s.check.nodes = nodes;
	s.check.n_nodes = n;
	s.check.fsck_status = -1;
	return s;
}

static int64_t fill(struct crashdb *db, struct fsrun *ext4)
{
	struct run_info run = {
		.started_at = "2025-01-02T03:04:05Z",
		.cmdline = "crashlab run --fs ext4,xfs tutorials/seed/seed.wl",
		.accel = "tcg",
		.kernel_version = "6.12.9-crashlab",
		.kernel_key = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
		.workload_file = "tutorials/seed/seed.wl",
		.workload_text = (char *)workload,
		.crash_mode = "flush",
	};
	CHECK(sink.run_begin(sink.ctx, &run, &eb) == 0 && run.id > 0, "run inserted (id %lld)", (long long)run.id);

	struct fsrun *f = ext4;
	memset(f, 0, sizeof(*f));
	f->run_id = run.id;
	f->fs = "ext4";
	f->mkfs_opts = "-O ^metadata_csum";
	f->mount_opts = "";
	f->base_image = "ext4-512M-0a1b2c";
	f->log_path = "runs/1/ext4.log";
	f->image_size = 512 << 20;
	f->qemu_cmdline = "qemu-system-x86_64 -nodefaults -no-reboot";
	f->outcome = "running";
	CHECK(sink.fsrun_begin(sink.ctx, f, &eb) == 0 && f->id > 0, "fs run inserted");
	CHECK(wl_parse("seed.wl", workload, &f->ops, &eb) == 0 && f->ops.n == 7, "the fixture's ops parse");
	f->res = results;
	f->log = (struct log_summary){ 60, 58, 7, 50, 1, 409600, 0 };
	f->setup_end = 40;
	f->outcome = "ok";
	f->record_ms = 1234;
	f->check_ms = 567;
	f->mkfs_opts = NULL; /* NULL keeps the stored text */

	/* State 0: after the setup's sync. */
	struct tree_node n0[3];
	n0[0] = node("A", 'd', 0755, 4096);
	n0[1] = node("A/foo", 'f', 0644, 5);
	n0[1].content = (unsigned char *)"hello";
	n0[1].content_len = 5;
	n0[1].blocks = "h0123456789abcdef";
	n0[2] = node("lost+found", 'd', 0700, 16384);
	struct state_result s0 = state(0, "flush", "flush 40", 40, 3, 1, n0, 3);
	s0.check.fsck_status = 0;
	s0.check.fsck_clean = 1;
	snprintf(s0.check.tree_hash, sizeof(s0.check.tree_hash), "a1b2c3d4e5f60718");
	s0.check.ms_replay = 1.5;
	s0.check.ms_mount = 20;
	s0.check.ms_capture = 3.25;
	s0.check.ms_fsck = 90;
	s0.check.ms_other = 0.5;
	CHECK(sink.state(sink.ctx, f, &s0, &eb) == 0 && s0.id > 0, "state 0 inserted");

	/* State 1: at the flush before the fsync returned, a rich tree. */
	static const unsigned char bin[] = { 'a', 0, 'b', 0, 0, 0xff, 0x01, 'c' };
	static const char big_blocks[] = "p5,p5,p5,p5,p5,p5,p5,p5,p5,p5,p5,p5,p5,p5,p5,p5,z,h00ff00ff00ff00ff";
	struct tree_node n1[8];
	n1[0] = node("A", 'd', 0755, 4096);
	n1[1] = node("A/bar", 'f', 0644, 5);
	n1[1].content = (unsigned char *)"hello";
	n1[1].content_len = 5;
	n1[1].blocks = "h0123456789abcdef";
	n1[1].nlink = 1;
	n1[2] = node("A/foo", 'f', 0644, 73728);
	n1[2].blocks = (char *)big_blocks;
	n1[2].xattrs = "user.note=caf%C3%A9%3B%20ok;user.z=";
	n1[3] = node("A/bin", 'f', 04755, sizeof(bin));
	n1[3].content = (unsigned char *)bin;
	n1[3].content_len = sizeof(bin);
	n1[3].blocks = "h1111111111111111";
	n1[3].ino = UINT64_C(0x8000000000000005);
	n1[4] = node("A/empty", 'f', 0600, 0);
	n1[4].content = (unsigned char *)"";
	n1[4].content_len = 0;
	n1[4].uid = 1000;
	n1[4].gid = 100;
	n1[5] = node("A/link", 'l', 0777, 3);
	n1[5].target = "bar";
	n1[6] = node("A-b", 'f', 0644, 12);
	n1[6].content = (unsigned char *)"line \"1\"\n\tx\n";
	n1[6].content_len = 12;
	n1[6].blocks = "h2222222222222222";
	n1[7] = node("A/fifo", 'o', 01644, 0);
	struct state_result s1 = state(1, "flush", "flush 48", 48, 6, 1, n1, 8);
	s1.check.fsck_status = 4;
	s1.check.fsck_output = "Pass 1: Checking inodes\nInode 14 has a bad extent\n";
	snprintf(s1.check.tree_hash, sizeof(s1.check.tree_hash), "ffeeddccbbaa9988");
	s1.check.ms_replay = 2;
	s1.check.ms_mount = 25;
	s1.check.ms_capture = 4;
	s1.check.ms_fsck = 110;
	s1.check.ms_other = 1;
	CHECK(sink.state(sink.ctx, f, &s1, &eb) == 0, "state 1 inserted (8 nodes)");

	/* State 2: the final state, which did not mount. */
	struct state_result s2 = state(2, "final", "final", 52, 7, 0, NULL, 0);
	s2.check.mount_msg = "mount: /mnt: wrong fs type, bad option, bad superblock on /dev/mapper/s";
	CHECK(sink.state(sink.ctx, f, &s2, &eb) == 0, "state 2 inserted (no nodes)");
	CHECK(sink.fsrun_end(sink.ctx, f, &eb) == 0, "fs run ended: summary, ops and outcome stored (%s)", eb.msg);
	CHECK(query_i64(db, "SELECT log_bytes FROM fsruns WHERE fs = 'ext4'") == 409600, "log summary stored");
	CHECK(query_i64(db, "SELECT mkfs_opts = '-O ^metadata_csum' FROM fsruns WHERE fs = 'ext4'") == 1,
	      "a NULL text field at the end keeps the stored value");

	/* A second fs that failed to record. */
	struct fsrun x = { .run_id = run.id, .fs = "xfs", .image_size = 300 << 20, .outcome = "timeout",
			   .error = "the guest did not answer in 240 s" };
	CHECK(sink.fsrun_begin(sink.ctx, &x, &eb) == 0 && sink.fsrun_end(sink.ctx, &x, &eb) == 0,
	      "second fs run inserted");
	run.status = "finding";
	run.exit_code = 1;
	CHECK(sink.run_end(sink.ctx, &run, &eb) == 0, "run finished");
	return run.id;
}

TEST(fill)
{
	CHECK(fill_ok, "a new database is at the current schema version (%d)", crashdb_schema_version());
	fill(db, &ext4);
}

TEST(write_and_read_back)
{
	CHECK(query_i64(db, "SELECT count(*) FROM ops") == 7, "7 ops stored");
	CHECK(query_i64(db, "SELECT err FROM ops WHERE op_id = 6") == 2 &&
		      query_i64(db, "SELECT ret FROM ops WHERE op_id = 6") == -1,
	      "an op's error stored");
	CHECK(query_i64(db, "SELECT count(*) FROM states") == 3, "3 states stored");
	CHECK(query_i64(db, "SELECT count(*) FROM nodes") == 11, "11 nodes stored");
	CHECK(query_i64(db, "SELECT n_nodes FROM states WHERE idx = 1") == 8, "node count kept with the state");
	CHECK(query_i64(db, "SELECT fsck_status FROM states WHERE idx = 2") == -1 &&
		      query_i64(db, "SELECT mount_ok FROM states WHERE idx = 2") == 0,
	      "mount and fsck outcomes stored");
	CHECK(query_i64(db, "SELECT count(*) FROM runs WHERE finished_at IS NOT NULL AND status = 'finding'"
			    " AND exit_code = 1") == 1,
	      "run finish stored");

	sqlite3_stmt *st;
	int ok = sqlite3_prepare_v2(db->db, "SELECT content, ino FROM nodes WHERE path = 'A/bin'", -1, &st, NULL) ==
			 SQLITE_OK &&
		 sqlite3_step(st) == SQLITE_ROW;
	static const unsigned char bin[] = { 'a', 0, 'b', 0, 0, 0xff, 0x01, 'c' };
	CHECK(ok && sqlite3_column_bytes(st, 0) == (int)sizeof(bin) && !memcmp(sqlite3_column_blob(st, 0), bin, sizeof(bin)),
	      "a blob with NUL bytes reads back intact");
	CHECK(ok && (uint64_t)sqlite3_column_int64(st, 1) == UINT64_C(0x8000000000000005), "a 64-bit inode number survives");
	sqlite3_finalize(st);
	CHECK(query_i64(db, "SELECT typeof(content) = 'blob' AND length(content) = 0 FROM nodes WHERE path = 'A/empty'") == 1,
	      "empty content is an empty blob");
	CHECK(query_i64(db, "SELECT content IS NULL FROM nodes WHERE path = 'A/foo' AND state_id ="
			    " (SELECT id FROM states WHERE idx = 1)") == 1,
	      "no inline content is NULL");

	/* The typed read API gives the same back. */
	struct run_info r;
	struct fsrun *fv;
	size_t n;
	CHECK(crashdb_read_run(db, 1, &r, &eb) == 0 && r.has_exit && r.exit_code == 1 && !strcmp(r.status, "finding") &&
	      !strcmp(r.workload_text, workload), "read_run: the run as stored");
	CHECK(crashdb_read_fsruns(db, 1, NULL, &fv, &n, &eb) == 0 && n == 2 && !strcmp(fv[0].fs, "ext4") &&
	      fv[0].ops.n == 7 && fv[0].res[5].err == 2 && fv[0].ops.ops[3].kind == WL_RENAME && fv[0].ops.ops[3].line == 7 &&
	      fv[0].ops.nsetup == 3 && fv[1].ops.n == 0 && fv[1].res == NULL,
	      "read_fsruns: each fs run with its ops parsed back and their results");
	struct state_result *sv;
	size_t ns;
	CHECK(n && crashdb_read_states(db, fv[0].id, CRASHDB_TREE, &sv, &ns, &eb) == 0 && ns == 3 &&
	      sv[1].check.n_nodes == 8 && sv[1].n_nodes == 8 && sv[1].check.fsck_status == 4 &&
	      sv[1].check.nodes[3].content_len == sizeof(bin) && !memcmp(sv[1].check.nodes[3].content, bin, sizeof(bin)),
	      "read_states: trees, blobs and outcomes as stored");
	struct state_result one;
	CHECK(crashdb_read_state(db, &fv[0], 9, 0, &one, &eb) < 0 && eb.code == EXIT_NOINPUT &&
	      strstr(eb.msg, "states 0..2"), "read_state names the states there are: %s", eb.msg);
	struct fsrun *none;
	size_t nnone;
	CHECK(crashdb_read_fsruns(db, 1, "btrfs", &none, &nnone, &eb) < 0 && strstr(eb.msg, "it has: ext4, xfs"),
	      "read_fsruns of a missing fs names those there are: %s", eb.msg);
	int64_t id;
	CHECK(crashdb_resolve_run(db, "last", &id, &eb) == 0 && id == 1, "'last' resolves to the newest run");
	CHECK(crashdb_resolve_run(db, "x", &id, &eb) < 0 && eb.code == EXIT_USAGE, "a bad RUN is a usage error");
	crashdb_states_free(sv, ns);
	crashdb_fsruns_free(fv, n);
	run_info_free(&r);
}

TEST(all_or_nothing)
{
	int64_t nodes = query_i64(db, "SELECT count(*) FROM nodes");
	struct tree_node n[3];
	n[0] = node("x", 'f', 0644, 0);
	n[1] = node("y", 'f', 0644, 0);
	n[2] = node("x", 'f', 0644, 0);
	struct state_result s = state(9, "flush", "flush 9", 9, 0, 1, n, 3);
	CHECK(sink.state(sink.ctx, &ext4, &s, &eb) == -1 && s.id == 0, "a state with a duplicate path fails");
	CHECK(strstr(eb.msg, "state 9") && strstr(eb.msg, "'x'") && strstr(eb.msg, "UNIQUE"),
	      "the error names the state and the node: %s", eb.msg);
	CHECK(query_i64(db, "SELECT count(*) FROM states WHERE idx = 9") == 0 &&
		      query_i64(db, "SELECT count(*) FROM nodes") == nodes,
	      "nothing of the failed state remains");
	CHECK(sqlite3_get_autocommit(db->db), "no transaction left open");

	struct state_result dup = state(0, "flush", "again", 1, 0, 1, n, 1);
	CHECK(sink.state(sink.ctx, &ext4, &dup, &eb) == -1 && query_i64(db, "SELECT count(*) FROM nodes") == nodes,
	      "a duplicate state index is refused, no nodes added");

	/* The ops go with the fs run's end, all or nothing: two ops with one id. */
	struct fsrun bad = ext4;
	struct wl_workload w2;
	CHECK(wl_parse("bad.wl", "sync\nsync\n", &w2, &eb) == 0, "two ops");
	w2.ops[1].id = 1;
	bad.ops = w2;
	bad.res = results;
	bad.outcome = "changed";
	CHECK(sink.fsrun_end(sink.ctx, &bad, &eb) == -1 && query_i64(db, "SELECT count(*) FROM ops") == 7 &&
	      query_i64(db, "SELECT count(*) FROM fsruns WHERE outcome = 'changed'") == 0,
	      "ops go in all or nothing, with the fs run's update");
	wl_free(&w2);

	struct fsrun orphan = { .id = 9999 };
	struct state_result o = state(0, "flush", "x", 1, 0, 1, NULL, 0);
	CHECK(sink.state(sink.ctx, &orphan, &o, &eb) == -1, "a state of a missing fs run is refused");
	struct run_info missing = { .id = 4242, .status = "ok" };
	CHECK(sink.run_end(sink.ctx, &missing, &eb) == -1 && strstr(eb.msg, "run 4242 does not exist"),
	      "finishing a missing run fails: %s", eb.msg);

	/* Inside the caller's transaction a state is a savepoint: rolled back with it. */
	sqlite3_exec(db->db, "BEGIN", NULL, NULL, NULL);
	struct state_result t = state(10, "flush", "flush 10", 10, 0, 1, n, 2);
	CHECK(sink.state(sink.ctx, &ext4, &t, &eb) == 0, "a state inside a caller's transaction");
	sqlite3_exec(db->db, "ROLLBACK", NULL, NULL, NULL);
	CHECK(query_i64(db, "SELECT count(*) FROM states WHERE idx = 10") == 0, "rolled back with the caller's transaction");
}

/* ---- one transaction per state, per fs run end ---- */

static int64_t count_of(const char *sql_fmt, int64_t id)
{
	char *sql = xasprintf(sql_fmt, (long long)id);
	int64_t n = query_i64(db, sql);
	free(sql);
	return n;
}

/* A judgement of n verdicts (posix, unpromised, bonus for op 4), the last one of kind last. */
static void verdicts(struct judgement *j, size_t n, enum verdict_kind last)
{
	memset(j, 0, sizeof(*j));
	j->judged = 1;
	j->explained = 1;
	j->marks = "sss+";
	j->v = xcalloc(n, sizeof(*j->v));
	j->n = n;
	for (size_t i = 0; i < n; i++) {
		struct verdict *v = &j->v[i];
		v->model = MODEL_POSIX;
		snprintf(v->rule, sizeof(v->rule), "unpromised");
		v->kind = i + 1 == n ? last : V_BONUS;
		v->op = 4;
		snprintf(v->path, sizeof(v->path), "B/%zu", i);
		snprintf(v->reason, sizeof(v->reason), "verdict %zu", i);
	}
}

/* What is left of state idx of fs run f: the state row, its nodes, its verdicts. */
static void expect_no_state(int64_t fsrun, int idx, const char *why)
{
	char *sql = xasprintf("SELECT count(*) FROM states WHERE fsrun_id = %lld AND idx = %d", (long long)fsrun, idx);
	CHECK(query_i64(db, sql) == 0, "%s: the state is not there", why);
	free(sql);
	CHECK(query_i64(db, "SELECT count(*) FROM nodes WHERE state_id NOT IN (SELECT id FROM states)") == 0 &&
		      query_i64(db, "SELECT count(*) FROM verdicts WHERE state_id NOT IN (SELECT id FROM states)") == 0,
	      "%s: nor any of its nodes or verdicts", why);
	CHECK(sqlite3_get_autocommit(db->db), "%s: no transaction is left open", why);
}

TEST(state_nodes_and_verdicts_in_one_transaction)
{
	/* A run of its own, deleted at the end, so the other cases' counts hold. */
	struct run_info r = { .cmdline = "crashlab run tx.wl" };
	struct fsrun f = { .fs = "btrfs", .outcome = "running" };
	CHECK(sink.run_begin(sink.ctx, &r, &eb) == 0 && (f.run_id = r.id) && sink.fsrun_begin(sink.ctx, &f, &eb) == 0,
	      "a run and a fs run");
	struct tree_node n[3] = { node("B", 'd', 0755, 4096), node("B/1", 'f', 0644, 0), node("B/2", 'f', 0644, 0) };
	struct state_result s0 = state(0, "flush", "prefix=3", 3, 0, 1, n, 3);
	verdicts(&s0.judge, 4, V_KEPT);
	CHECK(sink.state(sink.ctx, &f, &s0, &eb) == 0 && s0.id > 0, "state 0 with 3 nodes and 4 verdicts stored");
	free(s0.judge.v);

	/* The last verdict breaks the table's CHECK: the state goes with it. */
	struct state_result s1 = state(1, "flush", "prefix=5", 5, 4, 1, n, 3);
	verdicts(&s1.judge, 5, V_COUNT);
	CHECK(sink.state(sink.ctx, &f, &s1, &eb) == -1 && s1.id == 0, "a state whose last verdict is invalid fails");
	CHECK(strstr(eb.msg, "cannot store state 1 of fs run") && strstr(eb.msg, path) &&
		      strstr(eb.msg, "CHECK constraint failed") && strstr(eb.msg, "verdict 5 of 5"),
	      "the error names the state, the file, the verdict and what sqlite refused: %s", eb.msg);
	CHECK(eb.code == EXIT_SOFTWARE, "a row the schema refuses is crashlab's bug: exit %d (%d)", EXIT_SOFTWARE, eb.code);
	expect_no_state(f.id, 1, "an invalid verdict");
	free(s1.judge.v);

	/* A failure injected at each step of the state's transaction: the
	 * state row, a node in the middle, the judgement, a verdict in the
	 * middle. */
	static const char *const inject[][2] = {
		{ "the state row", "BEFORE INSERT ON main.states WHEN NEW.idx = 1" },
		{ "its second node", "BEFORE INSERT ON main.nodes WHEN NEW.path = 'B/1'" },
		{ "the judgement", "BEFORE UPDATE OF judged ON main.states" },
		{ "its third verdict", "BEFORE INSERT ON main.verdicts WHEN NEW.path = 'B/2'" },
	};
	for (size_t k = 0; k < ARRAY_SIZE(inject); k++) {
		char *sql = xasprintf("CREATE TEMP TRIGGER inject %s BEGIN SELECT RAISE(ABORT, 'injected failure'); END",
				      inject[k][1]);
		CHECK(sqlite3_exec(db->db, sql, NULL, NULL, NULL) == SQLITE_OK, "inject a failure at %s", inject[k][0]);
		free(sql);
		struct state_result s = state(1, "flush", "prefix=5", 5, 4, 1, n, 3);
		verdicts(&s.judge, 4, V_KEPT);
		errbuf_clear(&eb);
		CHECK(sink.state(sink.ctx, &f, &s, &eb) == -1 && strstr(eb.msg, "cannot store state 1 of fs run") &&
			      strstr(eb.msg, "injected failure"),
		      "a failure at %s reaches the caller: %s", inject[k][0], eb.msg);
		char why[64];
		snprintf(why, sizeof(why), "a failure at %s", inject[k][0]);
		expect_no_state(f.id, 1, why);
		sqlite3_exec(db->db, "DROP TRIGGER temp.inject", NULL, NULL, NULL);
		free(s.judge.v);
	}

	/* State 0 is untouched by all that. */
	CHECK(count_of("SELECT count(*) FROM nodes WHERE state_id = %lld", s0.id) == 3 &&
		      count_of("SELECT count(*) FROM verdicts WHERE state_id = %lld", s0.id) == 4 &&
		      count_of("SELECT judged FROM states WHERE id = %lld", s0.id) == 1,
	      "the state stored before keeps its 3 nodes, 4 verdicts and its judgement");
	/* And the same state goes in once nothing is in the way. */
	struct state_result s2 = state(1, "flush", "prefix=5", 5, 4, 1, n, 3);
	verdicts(&s2.judge, 4, V_KEPT);
	CHECK(sink.state(sink.ctx, &f, &s2, &eb) == 0 && count_of("SELECT count(*) FROM verdicts WHERE state_id = %lld",
								      s2.id) == 4,
	      "state 1 stored whole after all");
	free(s2.judge.v);

	/* Judging again replaces a state's verdicts all or nothing too. */
	struct judgement j;
	verdicts(&j, 3, V_COUNT);
	CHECK(db_write_judgement(db, s2.id, &j, NULL, &eb) == -1 &&
		      count_of("SELECT count(*) FROM verdicts WHERE state_id = %lld", s2.id) == 4 &&
		      count_of("SELECT count(*) FROM verdicts WHERE state_id = %lld AND path = 'B/3'", s2.id) == 1,
	      "new verdicts that fail leave the old ones: %s", eb.msg);
	free(j.v);

	char *del = xasprintf("DELETE FROM runs WHERE id = %lld", (long long)r.id);
	CHECK(sqlite3_exec(db->db, del, NULL, NULL, NULL) == SQLITE_OK, "the run deleted");
	free(del);
}

TEST(fsrun_end_in_one_transaction)
{
	struct run_info r = { .cmdline = "crashlab run tx.wl" };
	struct fsrun f = { .fs = "f2fs", .outcome = "running" };
	CHECK(sink.run_begin(sink.ctx, &r, &eb) == 0 && (f.run_id = r.id) && sink.fsrun_begin(sink.ctx, &f, &eb) == 0,
	      "a run and a fs run");
	CHECK(wl_parse("seed.wl", workload, &f.ops, &eb) == 0, "its 7 ops");
	f.res = results;
	f.outcome = "ok";
	f.models = "posix,f2fs-posix";
	f.log = (struct log_summary){ 60, 58, 7, 50, 1, 409600, 0 };
	CHECK(sqlite3_exec(db->db, "CREATE TEMP TRIGGER inject BEFORE INSERT ON main.ops WHEN NEW.op_id = 7 BEGIN "
				   "SELECT RAISE(ABORT, 'injected failure'); END", NULL, NULL, NULL) == SQLITE_OK,
	      "inject a failure at the last op");
	CHECK(sink.fsrun_end(sink.ctx, &f, &eb) == -1 && strstr(eb.msg, "cannot store op 7 of fs run") &&
		      strstr(eb.msg, "injected failure"),
	      "the fs run's end fails, naming the op: %s", eb.msg);
	CHECK(count_of("SELECT count(*) FROM ops WHERE fsrun_id = %lld", f.id) == 0 &&
		      count_of("SELECT outcome = 'running' AND log_bytes = 0 AND models IS NULL FROM fsruns WHERE id = %lld",
			       f.id) == 1,
	      "none of its ops is there, and the fs run row is as it was before");
	CHECK(sqlite3_get_autocommit(db->db), "no transaction is left open");
	sqlite3_exec(db->db, "DROP TRIGGER temp.inject", NULL, NULL, NULL);
	CHECK(sink.fsrun_end(sink.ctx, &f, &eb) == 0 &&
		      count_of("SELECT count(*) FROM ops WHERE fsrun_id = %lld", f.id) == 7 &&
		      count_of("SELECT models = 'posix,f2fs-posix' FROM fsruns WHERE id = %lld", f.id) == 1,
	      "then it goes in whole");
	wl_free(&f.ops);
	char *del = xasprintf("DELETE FROM runs WHERE id = %lld", (long long)r.id);
	CHECK(sqlite3_exec(db->db, del, NULL, NULL, NULL) == SQLITE_OK, "the run deleted");
	free(del);
}

TEST(cascade)
{
	struct run_info r = { .cmdline = "crashlab run x.wl" };
	CHECK(sink.run_begin(sink.ctx, &r, &eb) == 0, "a throw-away run");
	struct fsrun f = { .run_id = r.id, .fs = "btrfs", .res = results };
	CHECK(sink.fsrun_begin(sink.ctx, &f, &eb) == 0 && wl_parse("x.wl", "mkdir A\nsync\n", &f.ops, &eb) == 0, "its fs run");
	struct tree_node n = node("a", 'f', 0644, 0);
	struct state_result s = state(0, "final", "final", 0, 0, 1, &n, 1);
	CHECK(sink.fsrun_end(sink.ctx, &f, &eb) == 0 && sink.state(sink.ctx, &f, &s, &eb) == 0, "with two ops and a state");
	CHECK(query_i64(db, "SELECT started_at LIKE '____-__-__T__:__:__Z' FROM runs ORDER BY id DESC LIMIT 1") == 1,
	      "started_at defaults to now, ISO 8601 UTC");
	int64_t nodes = query_i64(db, "SELECT count(*) FROM nodes");
	char *sql = xasprintf("DELETE FROM runs WHERE id = %lld", (long long)r.id);
	CHECK(sqlite3_exec(db->db, sql, NULL, NULL, NULL) == SQLITE_OK, "delete the run");
	free(sql);
	CHECK(query_i64(db, "SELECT count(*) FROM fsruns WHERE fs = 'btrfs'") == 0 &&
		      query_i64(db, "SELECT count(*) FROM ops") == 7 && query_i64(db, "SELECT count(*) FROM nodes") == nodes - 1,
	      "deleting a run deletes its fs runs, ops, states and nodes");
	wl_free(&f.ops);
}

TEST(files)
{
	struct errbuf e = { 0 };
	char *err = e.msg;
	struct crashdb *db;

	/* A version-0 sqlite file without tables is migrated. */
	char *v0 = xasprintf("%s/v0.db", dir);
	CHECK(raw_sql(v0, "CREATE TABLE t(x); DROP TABLE t;") == 0, "make a version-0 database");
	CHECK(crashdb_open(v0, &db, &e) == 0, "a version-0 database opens: %s", err);
	if (db) {
		CHECK(crashdb_version(db) == crashdb_schema_version(), "and is migrated to the current version");
		CHECK(query_i64(db, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN"
				    " ('runs', 'fsruns', 'ops', 'states', 'nodes')") == 5,
		      "with all five tables");
		CHECK(query_i64(db, "PRAGMA foreign_keys") == 1, "foreign keys are on");
		CHECK(query_i64(db, "SELECT count(*) FROM pragma_journal_mode WHERE journal_mode = 'wal'") == 1,
		      "WAL journal");
		crashdb_close(db);
	}
	/* Opening again is a no-op. */
	CHECK(crashdb_open(v0, &db, &e) == 0 && crashdb_version(db) == crashdb_schema_version(), "reopening a current database");
	crashdb_close(db);

	/* A database from a newer crashlab is refused. */
	CHECK(raw_sql(v0, "PRAGMA user_version = 5") == 0, "pretend a newer crashlab wrote it");
	db = (struct crashdb *)1;
	CHECK(crashdb_open(v0, &db, &e) == -1 && db == NULL, "a newer schema is refused");
	char *want = xasprintf("'%s' has schema version 5; this crashlab knows up to %d; upgrade crashlab", v0,
			       crashdb_schema_version());
	CHECK(!strcmp(err, want), "with the versions and what to do: %s", err);
	free(want);

	/* Not sqlite at all. */
	char *txt = xasprintf("%s/notes.txt", dir);
	struct sbuf sb = SBUF_INIT;
	for (int i = 0; i < 200; i++)
		sbuf_adds(&sb, "these are my notes, not a database\n");
	write_file_atomic(txt, sb.buf, sb.len);
	sbuf_free(&sb);
	CHECK(crashdb_open(txt, &db, &e) == -1, "a text file is refused");
	CHECK(strstr(err, txt) && strstr(err, "not a crashlab database") && !strchr(err, '\n'),
	      "one line naming the file: %s", err);

	/* Somebody else's sqlite database. */
	char *other = xasprintf("%s/other.db", dir);
	CHECK(raw_sql(other, "CREATE TABLE songs(title TEXT)") == 0, "make a foreign database");
	CHECK(crashdb_open(other, &db, &e) == -1 && strstr(err, other) && strstr(err, "not a crashlab"),
	      "a foreign sqlite database is refused and left alone: %s", err);
	CHECK(raw_sql(other, "SELECT * FROM runs") == -1, "no crashlab table was added to it");

	/* A directory that does not exist. */
	char *nodir = xasprintf("%s/no/such/dir/x.db", dir);
	CHECK(crashdb_open(nodir, &db, &e) == -1 && strstr(err, nodir), "an impossible path: %s", err);
	free(v0);
	free(txt);
	free(other);
	free(nodir);
}

/* ------------------------------------------------------------------ */
/* Golden output of `crashlab show` */

/* Replace every ISO 8601 UTC timestamp with <time>. */
static void filter_times(struct sbuf *sb)
{
	struct sbuf out = SBUF_INIT;
	sbuf_add(&out, "", 0);
	static const char shape[] = "dddd-dd-ddTdd:dd:ddZ";
	size_t w = sizeof(shape) - 1;
	for (size_t i = 0; i < sb->len;) {
		bool match = i + w <= sb->len;
		for (size_t k = 0; match && k < w; k++)
			match = shape[k] == 'd' ? sb->buf[i + k] >= '0' && sb->buf[i + k] <= '9' : sb->buf[i + k] == shape[k];
		if (match) {
			sbuf_adds(&out, "<time>");
			i += w;
		} else {
			sbuf_add(&out, &sb->buf[i], 1);
			i++;
		}
	}
	sbuf_free(sb);
	*sb = out;
}

static const char *crashlab;

/* Run `crashlab show ARGS` on db; stdout in out, stderr in err; the exit code. */
/* The command the helpers below run: show, or list and report in their tests. */
static const char *verb = "show";

static int show(const char *db, const char *args, struct sbuf *out, struct sbuf *err)
{
	char *errf = xasprintf("%s/stderr", dir);
	char *cmd = xasprintf("'%s' %s %s%s%s %s 2>'%s'", crashlab, verb, db ? "--db '" : "", db ? db : "", db ? "'" : "",
			      args, errf);
	sbuf_reset(out);
	sbuf_add(out, "", 0);
	FILE *p = popen(cmd, "r");
	char buf[4096];
	size_t n;
	while (p && (n = fread(buf, 1, sizeof(buf), p)) > 0)
		sbuf_add(out, buf, n);
	int st = p ? pclose(p) : -1;
	sbuf_reset(err);
	read_file(errf, err);
	sbuf_add(err, "", 0);
	free(cmd);
	free(errf);
	return st >= 0 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static bool have_python(void)
{
	return system("python3 -c 'import json' >/dev/null 2>&1") == 0;
}

static void golden(const char *db, const char *args, const char *name, bool json)
{
	struct sbuf out = SBUF_INIT, err = SBUF_INIT;
	int rc = show(db, args, &out, &err);
	CHECK(rc == 0, "crashlab %s %s exits 0 (%d)", verb, args, rc);
	if (rc != 0)
		printf("# %s", err.buf);
	filter_times(&out);
	char *path = xasprintf("tests/golden/%s", name);
	if (getenv("CRASHLAB_UPDATE_GOLDEN")) {
		CHECK(write_file_atomic(path, out.buf, out.len) == 0, "wrote %s", path);
	} else {
		struct sbuf want = SBUF_INIT;
		int r = read_file(path, &want);
		bool same = r == 0 && want.len == out.len && !memcmp(want.buf, out.buf, out.len);
		CHECK(same, "crashlab %s %s matches %s", verb, args, path);
		if (!same) {
			char *got = xasprintf("%s/%s", dir, name);
			write_file_atomic(got, out.buf, out.len);
			char *diff = xasprintf("diff -u '%s' '%s' | head -n 40 | sed 's/^/# /'", path, got);
			if (system(diff) != 0)
				printf("# (diff failed)\n");
			free(diff);
			free(got);
		}
		sbuf_free(&want);
	}
	if (json) {
		if (have_python()) {
			char *f = xasprintf("%s/out.json", dir);
			write_file_atomic(f, out.buf, out.len);
			char *cmd = xasprintf("python3 -c 'import json,sys; json.load(sys.stdin)' <'%s'", f);
			CHECK(system(cmd) == 0, "crashlab show %s is valid JSON", args);
			free(cmd);
			free(f);
		} else {
			printf("# skip: python3 is not here to parse the JSON\n");
		}
	}
	free(path);
	sbuf_free(&out);
	sbuf_free(&err);
}

static void expect_fail(const char *db, const char *args, int code, const char *msg)
{
	struct sbuf out = SBUF_INIT, err = SBUF_INIT;
	int rc = show(db, args, &out, &err);
	CHECK(rc == code && strstr(err.buf, msg), "crashlab %s %s exits %d (%d) saying \"%s\"", verb, args, code, rc, msg);
	if (rc != code || !strstr(err.buf, msg))
		printf("# stderr: %s", err.buf);
	sbuf_free(&out);
	sbuf_free(&err);
}

TEST(show)
{
	const char *db = path;
	crashlab = getenv("CRASHLAB") ? getenv("CRASHLAB") : "./crashlab";
	if (access(crashlab, X_OK) != 0)
		SKIP("%s is not built; the show tests need it", crashlab);
	golden(db, "1", "show-run.txt", false);
	golden(db, "--format json last", "show-run.json", true);
	golden(db, "1 ext4 1", "show-state.txt", false);
	golden(db, "--format=json 1 ext4 1", "show-state.json", true);
	golden(db, "last ext4 2", "show-state-unmounted.txt", false);

	char *missing = xasprintf("%s/nothere.db", dir);
	char *want = xasprintf("run 42 does not exist in '%s'", db);
	expect_fail(db, "42", EXIT_NOINPUT, want);
	expect_fail(missing, "1", EXIT_NOINPUT, "does not exist");
	CHECK(!file_exists(missing), "show does not create a missing database");
	expect_fail(db, "1 ext4 9", EXIT_NOINPUT, "state 9 does not exist for ext4 in run 1 (it has states 0..2)");
	expect_fail(db, "1 btrfs 0", EXIT_NOINPUT, "run 1 has no file system 'btrfs' (it has: ext4, xfs)");
	expect_fail(db, "", EXIT_USAGE, "no run given");
	expect_fail(db, "first", EXIT_USAGE, "RUN must be a run id, 'last' or 'last~N'");
	expect_fail(db, "last~x", EXIT_USAGE, "RUN must be a run id, 'last' or 'last~N', not 'last~x'");
	expect_fail(db, "last~-1", EXIT_USAGE, "not 'last~-1'");
	expect_fail(db, "lastly", EXIT_USAGE, "not 'lastly'");
	expect_fail(db, "last~1", EXIT_NOINPUT, "holds fewer than 2 runs");
	golden(db, "last~0 ext4 1", "show-state.txt", false);
	expect_fail(db, "1 ext4", EXIT_USAGE, "needs both FS and STATE");
	expect_fail(db, "1 ext4 x", EXIT_USAGE, "STATE must be a state index");
	expect_fail(db, "--format xml 1", EXIT_USAGE, "--format wants 'text' or 'json'");
	char *txt = xasprintf("%s/notes.txt", dir);
	expect_fail(txt, "1", EXIT_DATAERR, "not a crashlab database");

	struct sbuf out = SBUF_INIT, err = SBUF_INIT;
	CHECK(show(NULL, "--help", &out, &err) == 0 && strstr(out.buf, "usage: crashlab show") &&
		      strstr(out.buf, "examples:"),
	      "crashlab show --help teaches, with examples");
	sbuf_free(&out);
	sbuf_free(&err);
	free(missing);
	free(want);
	free(txt);
}

/* list: every run with its findings; report: --fs, --state, --findings-only, and what markdown and JSON carry. */
TEST(list_and_report)
{
	const char *db = path;
	if (access(crashlab, X_OK) != 0)
		SKIP("%s is not built; the list tests need it", crashlab);
	verb = "list";
	golden(db, "", "list.txt", false);
	golden(db, "--format json", "list.json", true);
	expect_fail(db, "1", EXIT_USAGE, "list takes no run");
	verb = "report";
	golden(db, "--format markdown --fs ext4 --state 1 1", "report-state.md", false);
	golden(db, "--format json --fs ext4 --state 0 1", "report-state.json", true);
	golden(db, "--findings-only 1", "report-findings-only.txt", false);
	expect_fail(db, "--fs btrfs 1", EXIT_NOINPUT, "--fs: run 1 has no file system 'btrfs' (it has: ext4, xfs)");
	expect_fail(db, "--fs zfs 1", EXIT_USAGE, "zfs");
	expect_fail(db, "--state 7 1", EXIT_NOINPUT, "state 7 does not exist for ext4 in run 1");
	expect_fail(db, "--state nope 1", EXIT_USAGE, "--state: STATE must be a state index (0, 1, ...) or the LABEL");
	verb = "show";
}

/* STATE names a state by index or by a `mark LABEL` op: the first state in which the mark had completed. */
TEST(state_by_mark)
{
	struct fsrun f = { .fs = "xfs", .run_id = 7 };
	struct errbuf e;
	CHECK(wl_parse("m.wl", "[run]\nmark start\nwrite f 4K\nfsync f\nmark written\nrename f g\nmark end\n", &f.ops,
		       &e) == 0,
	      "a workload with marks parses");
	struct op_result res[6] = { { .log_pos = 3 }, { .log_pos = 3 }, { .log_pos = 9 },
				    { .log_pos = 9 }, { .log_pos = 9 }, { .log_pos = 30 } };
	f.res = res;
	struct state_result st[3] = { { .idx = 0, .point = 3 }, { .idx = 1, .point = 9 }, { .idx = 2, .point = 12 } };
	CHECK(render_state_arg(&f, st, 3, "1", &e) == 1, "an index names its state");
	CHECK(render_state_arg(&f, st, 3, "start", &e) == 0, "mark start: state 0, where it had completed");
	CHECK(render_state_arg(&f, st, 3, "written", &e) == 1, "mark written: the first state after the fsync");
	CHECK(render_state_arg(&f, st, 3, "@written", &e) == 1, "@LABEL is the same");
	CHECK(render_state_arg(&f, st, 3, "end", &e) == -1 && e.code == EXIT_NOINPUT &&
		      strstr(e.msg, "no crash state in which 'mark end'"),
	      "a mark after the last crash point names no state: %s", e.msg);
	CHECK(render_state_arg(&f, st, 3, "nope", &e) == -1 && e.code == EXIT_USAGE &&
		      strstr(e.msg, "xfs's marks: 'start', 'written', 'end'"),
	      "an unknown label lists the marks: %s", e.msg);
	CHECK(render_state_arg(&f, st, 3, "5", &e) == -1 && e.code == EXIT_NOINPUT &&
		      strstr(e.msg, "state 5 does not exist for xfs in run 7 (it has states 0..2)"),
	      "a missing index says which there are: %s", e.msg);
	wl_free(&f.ops);
}

TEST(reopen)
{
	crashdb_close(db);
	CHECK(crashdb_open(path, &db, &eb) == 0, "reopen: %s", eb.msg);
	CHECK(query_i64(db, "SELECT count(*) FROM nodes") == 11 && query_i64(db, "SELECT count(*) FROM runs") == 1,
	      "a reopened database keeps its data");
	/* CRASHLAB_KEEP_DB=FILE keeps the filled database, to try queries on. */
	if (getenv("CRASHLAB_KEEP_DB")) {
		char *cp = xasprintf("cp '%s' '%s'", path, getenv("CRASHLAB_KEEP_DB"));
		CHECK(system(cp) == 0, "kept the database as %s", getenv("CRASHLAB_KEEP_DB"));
		free(cp);
	}
}

/* tests/lib.sh's expect_db_ok, which the shell tests end a fault with; its output on one line in out. */
static int lib_expect_db_ok(const char *db, struct sbuf *out)
{
	char *cmd = xasprintf("bash -c 'source tests/lib.sh && expect_db_ok \"$0\" helper' '%s' 2>&1", db);
	int st = dbkit_popen(cmd, out);
	for (size_t i = 0; i < out->len; i++)
		if (out->buf[i] == '\n')
			out->buf[i] = ' '; /* one TAP line, whatever the helper printed */
	free(cmd);
	return st == 0 ? 0 : -1;
}

TEST(shell_helper_expect_db_ok)
{
	if (system("command -v sqlite3 >/dev/null 2>&1") != 0)
		SKIP("the sqlite3 tool is not installed; expect_db_ok skips too");
	/* Copies of a fixture (not of this case's database, which is open). */
	char *src = xasprintf("%s/v2.db.gz", DBKIT_FIXTURES);
	char *sound = xasprintf("%s/sound.db", dir), *orphan = xasprintf("%s/orphan.db", dir);
	char *bad = xasprintf("%s/damaged.db", dir), *none = xasprintf("%s/none.db", dir);
	CHECK(dbkit_unpack(src, sound) == 0 && dbkit_unpack(src, orphan) == 0 && dbkit_unpack(src, bad) == 0,
	      "three copies of %s", src);
	struct sbuf out = SBUF_INIT;
	CHECK(lib_expect_db_ok(sound, &out) == 0 && !strncmp(out.buf, "ok - helper", 11),
	      "a sound database: ok (%s)", out.buf);
	/* A row without its parent (a connection without foreign keys, as the sqlite3 tool's). */
	CHECK(dbkit_exec(orphan, "INSERT INTO nodes (state_id, path, type, mode, uid, gid, size, nlink, ino)"
				 " VALUES (4242, 'x', 'f', 0, 0, 0, 0, 1, 1)") == 0,
	      "a copy with a node of no state");
	CHECK(lib_expect_db_ok(orphan, &out) == 0 && !strncmp(out.buf, "not ok - helper", 15) && strstr(out.buf, "nodes|"),
	      "a row without its parent: not ok, showing it (%s)", out.buf);
	/* A damaged b-tree page: page 2, the runs table's root, claims 65535 cells. */
	FILE *f = fopen(bad, "r+b");
	CHECK(f && fseek(f, 4096 + 3, SEEK_SET) == 0 && fwrite("\xff\xff", 1, 2, f) == 2 && fclose(f) == 0,
	      "a copy with its runs table's page damaged");
	CHECK(lib_expect_db_ok(bad, &out) == 0 && !strncmp(out.buf, "not ok - helper", 15),
	      "a damaged file: not ok (%.70s)", out.buf);
	CHECK(lib_expect_db_ok(none, &out) == 0 && strstr(out.buf, "not ok - helper") && strstr(out.buf, "does not exist"),
	      "a file that is not there: not ok (%s)", out.buf);
	sbuf_free(&out);
	free(src);
	free(sound);
	free(orphan);
	free(bad);
	free(none);
}

/* The database every case uses: created and filled before the first. */
__attribute__((constructor(101))) static void setup(void)
{
	if (!mkdtemp(dir))
		abort();
	path = xasprintf("%s/crashlab.db", dir);
	if (crashdb_open(path, &db, &eb) < 0) {
		fprintf(stderr, "cannot create a database: %s\n", eb.msg);
		exit(1);
	}
	crashdb_sink(db, &sink);
	fill_ok = crashdb_version(db) == crashdb_schema_version();
}

__attribute__((destructor)) static void teardown(void)
{
	crashdb_close(db);
	rm_rf(dir);
}

TEST_MAIN()
