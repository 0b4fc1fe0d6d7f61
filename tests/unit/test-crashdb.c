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

#include "crashdb/crashdb.h"
#include "host/util.h"
#include "tests/unit/check.h"

static char dir[] = "/tmp/crashlab-crashdb.XXXXXX";

static int64_t query_i64(struct crashdb *db, const char *sql)
{
	sqlite3_stmt *st;
	int64_t v = -999;
	if (sqlite3_prepare_v2(crashdb_sqlite(db), sql, -1, &st, NULL) != SQLITE_OK)
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

static const struct crashdb_op ops[] = {
	{ 1, 0, "mkdir A", 3, 0, 0, 12, 0, 2, 0.5 },
	{ 2, 0, "write A/foo \"hello\"", 4, 5, 0, 13, 0, 3, 0.25 },
	{ 3, 0, "sync", 5, 0, 0, 0, 0, 40, 3.0 },
	{ 4, 1, "rename A/foo A/bar", 7, 0, 0, 13, 0, 40, 0.125 },
	{ 5, 1, "write A/foo 64K", 8, 65536, 0, 14, 0, 40, 1.5 },
	{ 6, 1, "unlink A/nope", 9, -1, 2 /* ENOENT */, 0, 0, 40, 0.0625 },
	{ 7, 1, "fsync A/foo", 10, 0, 0, 14, 0, 52, 9.0 },
};

static int64_t fill(struct crashdb *db)
{
	struct crashdb_run run = {
		.started_at = "2025-01-02T03:04:05Z",
		.cmdline = "crashlab run --fs ext4,xfs tutorials/seed/seed.wl",
		.accel = "tcg",
		.kernel_version = "6.12.9-crashlab",
		.kernel_key = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
		.workload_file = "tutorials/seed/seed.wl",
		.workload_text = workload,
		.crash_mode = "flush",
	};
	int64_t run_id = crashdb_run_insert(db, &run);
	CHECK(run_id > 0 && run.id == run_id, "run inserted (id %lld)", (long long)run_id);

	struct crashdb_fsrun f = {
		.run_id = run_id,
		.fs = "ext4",
		.mkfs_opts = "-O ^metadata_csum",
		.mount_opts = "",
		.base_image = "ext4-512M-0a1b2c",
		.log_path = "runs/1/ext4.log",
		.image_size = 512 << 20,
		.qemu_cmdline = "qemu-system-x86_64 -nodefaults -no-reboot",
	};
	int64_t ext4 = crashdb_fsrun_insert(db, &f);
	CHECK(ext4 > 0 && f.id == ext4, "fs run inserted");
	f.log_entries = 60;
	f.log_committed = 58;
	f.log_flushes = 7;
	f.log_writes = 50;
	f.log_discards = 1;
	f.log_bytes = 409600;
	f.setup_end = 40;
	f.outcome = "ok";
	f.record_ms = 1234;
	f.check_ms = 567;
	f.mkfs_opts = NULL; /* NULL keeps the stored text */
	CHECK(crashdb_fsrun_update(db, &f) == 0, "fs run updated");
	CHECK(query_i64(db, "SELECT log_bytes FROM fsruns WHERE fs = 'ext4'") == 409600, "log summary stored");
	CHECK(query_i64(db, "SELECT mkfs_opts = '-O ^metadata_csum' FROM fsruns WHERE fs = 'ext4'") == 1,
	      "a NULL text field in an update keeps the stored value");
	CHECK(crashdb_ops_insert(db, ext4, ops, sizeof(ops) / sizeof(ops[0])) == 0, "ops inserted");

	/* State 0: after the setup's sync. */
	struct tree_node n0[3];
	n0[0] = node("A", 'd', 0755, 4096);
	n0[1] = node("A/foo", 'f', 0644, 5);
	n0[1].content = (unsigned char *)"hello";
	n0[1].content_len = 5;
	n0[1].blocks = "h0123456789abcdef";
	n0[2] = node("lost+found", 'd', 0700, 16384);
	struct crashdb_state s0 = { .idx = 0, .kind = "flush", .spec = "flush 40", .point = 40,
				    .last_completed_op = 3, .mount_ok = 1, .fsck_status = 0, .fsck_clean = 1,
				    .tree_hash = "a1b2c3d4e5f60718", .ms_replay = 1.5, .ms_mount = 20,
				    .ms_capture = 3.25, .ms_fsck = 90, .ms_other = 0.5 };
	CHECK(crashdb_state_insert(db, ext4, &s0, n0, 3) > 0 && s0.id > 0, "state 0 inserted");

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
	struct crashdb_state s1 = { .idx = 1, .kind = "flush", .spec = "flush 48", .point = 48,
				    .last_completed_op = 6, .mount_ok = 1, .fsck_status = 4, .fsck_clean = 0,
				    .fsck_output = "Pass 1: Checking inodes\nInode 14 has a bad extent\n",
				    .tree_hash = "ffeeddccbbaa9988", .ms_replay = 2, .ms_mount = 25, .ms_capture = 4,
				    .ms_fsck = 110, .ms_other = 1 };
	CHECK(crashdb_state_insert(db, ext4, &s1, n1, 8) > 0, "state 1 inserted (8 nodes)");

	/* State 2: the final state, which did not mount. */
	struct crashdb_state s2 = { .idx = 2, .kind = "final", .spec = "final",
				    .point = 52, .last_completed_op = 7, .mount_ok = 0,
				    .mount_msg = "mount: /mnt: wrong fs type, bad option, bad superblock on /dev/mapper/s",
				    .fsck_status = -1 };
	CHECK(crashdb_state_insert(db, ext4, &s2, NULL, 0) > 0, "state 2 inserted (no nodes)");

	/* A second fs that failed to record. */
	struct crashdb_fsrun x = { .run_id = run_id, .fs = "xfs", .image_size = 300 << 20,
				   .outcome = "timeout", .error = "the guest did not answer in 240 s" };
	CHECK(crashdb_fsrun_insert(db, &x) > 0, "second fs run inserted");
	CHECK(crashdb_run_finish(db, run_id, "finding", 1) == 0, "run finished");
	return run_id;
}

static void check_readback(struct crashdb *db)
{
	sqlite3 *s = crashdb_sqlite(db);
	sqlite3_stmt *st;
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

	int ok = sqlite3_prepare_v2(s, "SELECT content, ino FROM nodes WHERE path = 'A/bin'", -1, &st, NULL) == SQLITE_OK &&
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
}

static void check_atomic(struct crashdb *db, int64_t fsrun)
{
	int64_t nodes = query_i64(db, "SELECT count(*) FROM nodes");
	struct tree_node n[3];
	n[0] = node("x", 'f', 0644, 0);
	n[1] = node("y", 'f', 0644, 0);
	n[2] = node("x", 'f', 0644, 0);
	struct crashdb_state s = { .idx = 9, .kind = "flush", .spec = "flush 9", .point = 9, .mount_ok = 1 };
	CHECK(crashdb_state_insert(db, fsrun, &s, n, 3) == -1 && s.id == 0, "a state with a duplicate path fails");
	CHECK(strstr(crashdb_error(db), "state 9") && strstr(crashdb_error(db), "'x'") &&
		      strstr(crashdb_error(db), "UNIQUE"),
	      "the error names the state and the node: %s", crashdb_error(db));
	CHECK(query_i64(db, "SELECT count(*) FROM states WHERE idx = 9") == 0 &&
		      query_i64(db, "SELECT count(*) FROM nodes") == nodes,
	      "nothing of the failed state remains");
	CHECK(sqlite3_get_autocommit(crashdb_sqlite(db)), "no transaction left open");

	struct crashdb_state dup = { .idx = 0, .kind = "flush", .spec = "again", .point = 1, .mount_ok = 1 };
	CHECK(crashdb_state_insert(db, fsrun, &dup, n, 1) == -1 && query_i64(db, "SELECT count(*) FROM nodes") == nodes,
	      "a duplicate state index is refused, no nodes added");

	struct crashdb_op bad[2] = { { .op_id = 50, .text = "sync", .log_pos = 1 },
				     { .op_id = 1, .text = "mkdir A", .log_pos = 1 } };
	CHECK(crashdb_ops_insert(db, fsrun, bad, 2) == -1 && query_i64(db, "SELECT count(*) FROM ops WHERE op_id = 50") == 0,
	      "ops go in all or nothing");

	struct crashdb_state orphan = { .idx = 0, .kind = "flush", .spec = "x", .point = 1, .mount_ok = 1 };
	CHECK(crashdb_state_insert(db, 9999, &orphan, NULL, 0) == -1, "a state of a missing fs run is refused");
	CHECK(crashdb_run_finish(db, 4242, "ok", 0) == -1 && strstr(crashdb_error(db), "run 4242 does not exist"),
	      "finishing a missing run fails: %s", crashdb_error(db));

	/* Inside the caller's transaction a state is a savepoint: rolled back with it. */
	sqlite3_exec(crashdb_sqlite(db), "BEGIN", NULL, NULL, NULL);
	struct crashdb_state t = { .idx = 10, .kind = "flush", .spec = "flush 10", .point = 10, .mount_ok = 1 };
	CHECK(crashdb_state_insert(db, fsrun, &t, n, 2) > 0, "a state inside a caller's transaction");
	sqlite3_exec(crashdb_sqlite(db), "ROLLBACK", NULL, NULL, NULL);
	CHECK(query_i64(db, "SELECT count(*) FROM states WHERE idx = 10") == 0, "rolled back with the caller's transaction");
}

static void check_cascade(struct crashdb *db)
{
	struct crashdb_run r = { .cmdline = "crashlab run x.wl" };
	int64_t id = crashdb_run_insert(db, &r);
	struct crashdb_fsrun f = { .run_id = id, .fs = "btrfs" };
	int64_t fid = crashdb_fsrun_insert(db, &f);
	struct tree_node n = node("a", 'f', 0644, 0);
	struct crashdb_state s = { .idx = 0, .kind = "final", .spec = "final", .mount_ok = 1 };
	crashdb_ops_insert(db, fid, ops, 2);
	CHECK(id > 0 && fid > 0 && crashdb_state_insert(db, fid, &s, &n, 1) > 0, "a throw-away run");
	CHECK(query_i64(db, "SELECT started_at LIKE '____-__-__T__:__:__Z' FROM runs ORDER BY id DESC LIMIT 1") == 1,
	      "started_at defaults to now, ISO 8601 UTC");
	int64_t nodes = query_i64(db, "SELECT count(*) FROM nodes");
	char *sql = xasprintf("DELETE FROM runs WHERE id = %lld", (long long)id);
	CHECK(sqlite3_exec(crashdb_sqlite(db), sql, NULL, NULL, NULL) == SQLITE_OK, "delete the run");
	free(sql);
	CHECK(query_i64(db, "SELECT count(*) FROM fsruns WHERE fs = 'btrfs'") == 0 &&
		      query_i64(db, "SELECT count(*) FROM ops") == 7 && query_i64(db, "SELECT count(*) FROM nodes") == nodes - 1,
	      "deleting a run deletes its fs runs, ops, states and nodes");
}

static void check_files(void)
{
	char err[1024];
	struct crashdb *db;

	/* A version-0 sqlite file without tables is migrated. */
	char *v0 = xasprintf("%s/v0.db", dir);
	CHECK(raw_sql(v0, "CREATE TABLE t(x); DROP TABLE t;") == 0, "make a version-0 database");
	CHECK(crashdb_open(v0, &db, err, sizeof(err)) == 0, "a version-0 database opens: %s", err);
	if (db) {
		CHECK(crashdb_version(db) == 2, "and is migrated to version 2");
		CHECK(query_i64(db, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN"
				    " ('runs', 'fsruns', 'ops', 'states', 'nodes')") == 5,
		      "with all five tables");
		CHECK(query_i64(db, "PRAGMA foreign_keys") == 1, "foreign keys are on");
		CHECK(query_i64(db, "SELECT count(*) FROM pragma_journal_mode WHERE journal_mode = 'wal'") == 1,
		      "WAL journal");
		crashdb_close(db);
	}
	/* Opening again is a no-op. */
	CHECK(crashdb_open(v0, &db, err, sizeof(err)) == 0 && crashdb_version(db) == 2, "reopening a current database");
	crashdb_close(db);

	/* A database from a newer crashlab is refused. */
	CHECK(raw_sql(v0, "PRAGMA user_version = 5") == 0, "pretend a newer crashlab wrote it");
	db = (struct crashdb *)1;
	CHECK(crashdb_open(v0, &db, err, sizeof(err)) == -1 && db == NULL, "a newer schema is refused");
	char *want = xasprintf("'%s' has schema version 5; this crashlab knows up to 2; upgrade crashlab", v0);
	CHECK(!strcmp(err, want), "with the versions and what to do: %s", err);
	free(want);

	/* Not sqlite at all. */
	char *txt = xasprintf("%s/notes.txt", dir);
	struct sbuf sb = SBUF_INIT;
	for (int i = 0; i < 200; i++)
		sbuf_adds(&sb, "these are my notes, not a database\n");
	write_file_atomic(txt, sb.buf, sb.len);
	sbuf_free(&sb);
	CHECK(crashdb_open(txt, &db, err, sizeof(err)) == -1, "a text file is refused");
	CHECK(strstr(err, txt) && strstr(err, "not a crashlab database") && !strchr(err, '\n'),
	      "one line naming the file: %s", err);

	/* Somebody else's sqlite database. */
	char *other = xasprintf("%s/other.db", dir);
	CHECK(raw_sql(other, "CREATE TABLE songs(title TEXT)") == 0, "make a foreign database");
	CHECK(crashdb_open(other, &db, err, sizeof(err)) == -1 && strstr(err, other) && strstr(err, "not a crashlab"),
	      "a foreign sqlite database is refused and left alone: %s", err);
	CHECK(raw_sql(other, "SELECT * FROM runs") == -1, "no crashlab table was added to it");

	/* A directory that does not exist. */
	char *nodir = xasprintf("%s/no/such/dir/x.db", dir);
	CHECK(crashdb_open(nodir, &db, err, sizeof(err)) == -1 && strstr(err, nodir), "an impossible path: %s", err);
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
static int show(const char *db, const char *args, struct sbuf *out, struct sbuf *err)
{
	char *errf = xasprintf("%s/stderr", dir);
	char *cmd = xasprintf("'%s' show %s%s%s %s 2>'%s'", crashlab, db ? "--db '" : "", db ? db : "", db ? "'" : "",
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
	CHECK(rc == 0, "crashlab show %s exits 0 (%d)", args, rc);
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
		CHECK(same, "crashlab show %s matches %s", args, path);
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
	CHECK(rc == code && strstr(err.buf, msg), "crashlab show %s exits %d (%d) saying \"%s\"", args, code, rc, msg);
	if (rc != code || !strstr(err.buf, msg))
		printf("# stderr: %s", err.buf);
	sbuf_free(&out);
	sbuf_free(&err);
}

static void check_show(const char *db)
{
	crashlab = getenv("CRASHLAB") ? getenv("CRASHLAB") : "./crashlab";
	if (access(crashlab, X_OK) != 0) {
		printf("# skip: %s is not built; the show tests need it\n", crashlab);
		return;
	}
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
	expect_fail(db, "first", EXIT_USAGE, "RUN must be a run id or 'last'");
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

int main(void)
{
	CHECK(mkdtemp(dir) != NULL, "temp dir");
	char *path = xasprintf("%s/crashlab.db", dir);
	char err[1024] = "";
	struct crashdb *db = NULL;
	CHECK(crashdb_open(path, &db, err, sizeof(err)) == 0 && db, "create a database: %s", err);
	if (!db)
		return check_done();
	CHECK(crashdb_version(db) == 2, "a new database is at schema version 2");
	fill(db);
	check_readback(db);
	check_atomic(db, 1);
	check_cascade(db);
	crashdb_close(db);

	CHECK(crashdb_open(path, &db, err, sizeof(err)) == 0, "reopen: %s", err);
	CHECK(query_i64(db, "SELECT count(*) FROM nodes") == 11 && query_i64(db, "SELECT count(*) FROM runs") == 1,
	      "a reopened database keeps its data");
	crashdb_close(db);

	check_files();
	check_show(path);
	/* CRASHLAB_KEEP_DB=FILE keeps the filled database, to try queries on. */
	if (getenv("CRASHLAB_KEEP_DB")) {
		char *cp = xasprintf("cp '%s' '%s'", path, getenv("CRASHLAB_KEEP_DB"));
		CHECK(system(cp) == 0, "kept the database as %s", getenv("CRASHLAB_KEEP_DB"));
		free(cp);
	}
	rm_rf(dir);
	free(path);
	return check_done();
}
