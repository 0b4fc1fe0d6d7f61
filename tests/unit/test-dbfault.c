/*
 * test-dbfault.c - a database that cannot be written: full, read-only, or
 * locked by another process for longer than crashlab waits. Each gives a
 * message saying so and what to do, exit code 73 (README "Exit codes"),
 * and leaves the file as it was: sound (integrity_check, foreign_key_check),
 * every state stored before the failure whole, nothing of the one that
 * failed, and usable again once the cause is gone.
 *
 * The full file is made twice: with PRAGMA max_page_count through the sink
 * (always), and end to end with a real full disk, a small tmpfs in a mount
 * namespace of its own, under `crashlab judge` (only as root; skipped
 * otherwise). The read-only file is one without write permission (as root,
 * crashlab runs as nobody for it), next to one it may not even read; the
 * lock is another connection's write transaction, with
 * CRASHLAB_TEST_DB_BUSY_MS shortening the wait. A directory given as the
 * database is named as one (65).
 */
#include <errno.h>
#include <grp.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "crashdb/db.h"
#include "host/msg.h"
#include "tests/unit/check.h"
#include "tests/unit/dbkit.h"

static char *dir;

static void expect_sound(const char *path, const char *when)
{
	char why[512];
	CHECK(dbkit_sound(path, why, sizeof(why)), "integrity_check and foreign_key_check clean %s (%s)", when, why);
}

/* A fixture of an earlier version (one that opening migrates) and the current one's, unpacked. */
static char *fixture(const char *name, const char *as)
{
	char *src = xasprintf("%s/%s", DBKIT_FIXTURES, name), *dst = xasprintf("%s/%s", dir, as);
	CHECK(dbkit_unpack(src, dst) == 0, "%s unpacked as %s", name, as);
	free(src);
	return dst;
}

/* The first line of a command's output, for a one-line message. */
static const char *line1(struct sbuf *out)
{
	char *nl = out->buf ? strchr(out->buf, '\n') : NULL;
	if (nl)
		*nl = '\0';
	return out->buf ? out->buf : "";
}

static int same_bytes(const char *a, const char *b)
{
	struct sbuf x = SBUF_INIT, y = SBUF_INIT;
	int same = read_file(a, &x) == 0 && read_file(b, &y) == 0 && x.len == y.len && !memcmp(x.buf, y.buf, x.len);
	sbuf_free(&x);
	sbuf_free(&y);
	return same;
}

/* ---- full, through the sink ---- */

static struct state_result big_state(int idx, struct tree_node *n, size_t nn, char (*paths)[24])
{
	for (size_t i = 0; i < nn; i++) {
		snprintf(paths[i], sizeof(paths[i]), "dir/file-%04zu", i);
		n[i] = (struct tree_node){ .path = paths[i], .type = 'f', .mode = 0644, .nlink = 1, .ino = 1000 + i,
					   .size = 65536, .blocks = "h0123456789abcdef,h0123456789abcdef,h0123456789abcdef,"
								    "h0123456789abcdef,h0123456789abcdef,h0123456789abcdef" };
	}
	struct state_result s = { .idx = idx, .kind = "flush", .spec = "prefix=3", .point = 3 };
	s.check = (struct check_report){ .mount_ok = 1, .fsck_clean = 1, .nodes = n, .n_nodes = nn };
	snprintf(s.check.tree_hash, sizeof(s.check.tree_hash), "%016x", idx);
	return s;
}

TEST(full_through_the_sink)
{
	char *path = xasprintf("%s/full.db", dir);
	struct crashdb *db;
	struct errbuf e = { 0 };
	CHECK(crashdb_open(path, &db, &e) == 0, "a new database");
	struct sink sink;
	crashdb_sink(db, &sink);
	struct run_info r = { .cmdline = "crashlab run full.wl" };
	struct fsrun f = { .fs = "ext4", .outcome = "running" };
	CHECK(sink.run_begin(sink.ctx, &r, &e) == 0 && (f.run_id = r.id) && sink.fsrun_begin(sink.ctx, &f, &e) == 0,
	      "a run and a fs run");
	static struct tree_node n[400];
	static char paths[400][24];
	struct state_result s0 = big_state(0, n, 5, paths);
	CHECK(sink.state(sink.ctx, &f, &s0, &e) == 0, "state 0 stored");
	/* No page beyond those the file has: the next state does not fit. */
	int64_t pages;
	CHECK(db_query_int(db, "PRAGMA page_count", &pages) == 0, "the file has %lld pages", (long long)pages);
	char *limit = xasprintf("PRAGMA max_page_count = %lld", (long long)pages);
	CHECK(sqlite3_exec(db->db, limit, NULL, NULL, NULL) == SQLITE_OK, "the file may not grow");
	free(limit);
	struct state_result s1 = big_state(1, n, 400, paths);
	errbuf_clear(&e);
	CHECK(sink.state(sink.ctx, &f, &s1, &e) == -1 && s1.id == 0, "state 1, 400 nodes, does not fit");
	CHECK(e.code == EXIT_CANTCREAT, "exit %d, the code for a file that cannot be written (%d)", EXIT_CANTCREAT, e.code);
	CHECK(strstr(e.msg, "cannot store state 1 of fs run") && strstr(e.msg, path) &&
		      strstr(e.msg, "database or disk is full") && strstr(e.msg, "free some space"),
	      "the message names the state, the file, why and what to do: %s", e.msg);
	CHECK(sqlite3_get_autocommit(db->db), "no transaction is left open");
	CHECK(dbkit_int(path, "SELECT count(*) FROM states") == 1 && dbkit_int(path, "SELECT count(*) FROM nodes") == 5,
	      "state 0 is there whole, nothing of state 1");
	expect_sound(path, "after the failure");
	/* Room again: the same connection stores the state. */
	CHECK(sqlite3_exec(db->db, "PRAGMA max_page_count = 1000000", NULL, NULL, NULL) == SQLITE_OK, "room again");
	CHECK(sink.state(sink.ctx, &f, &s1, &e) == 0 && dbkit_int(path, "SELECT count(*) FROM nodes") == 405,
	      "then state 1 goes in whole");
	crashdb_close(db);
	expect_sound(path, "at the end");
	free(path);
}

/* ---- full, end to end: a small tmpfs ---- */

/* What the child in its own mount namespace found, one line per check: "1 what" or "0 what". */
static void report(FILE *out, int ok, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void report(FILE *out, int ok, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *m = xvasprintf(fmt, ap);
	va_end(ap);
	for (char *p = m; *p; p++)
		if (*p == '\n')
			*p = ' ';
	fprintf(out, "%d %s\n", ok, m);
	free(m);
}

/* Exit 77: no mount namespace here (not root, or not allowed). */
static _Noreturn void full_disk_child(const char *src, const char *mnt, FILE *out)
{
	if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		_exit(77);
	/* Room for the file, its -shm (32 KiB) and a little of its -wal: the
	 * migration fits, judging every state does not. */
	struct stat st;
	char *db = xasprintf("%s/full.db", mnt);
	if (stat(src, &st) < 0)
		_exit(1);
	char *opts = xasprintf("size=%lld", ((long long)st.st_size + 32768 + 49152 + 4095) / 4096 * 4096);
	if (mount("tmpfs", mnt, "tmpfs", 0, opts) < 0)
		_exit(77);
	report(out, dbkit_unpack(src, db) == 0, "the fixture fits on a tmpfs of %s", opts);
	struct sbuf o = SBUF_INIT;
	char *args = xasprintf("judge 1 --db '%s'", db);
	int rc = dbkit_run(args, &o);
	report(out, rc == EXIT_CANTCREAT && strstr(o.buf, "database or disk is full") && strstr(o.buf, "free some space"),
	       "crashlab judge on a disk that fills up exits %d saying so (%d: %s)", EXIT_CANTCREAT, rc, line1(&o));
	char why[512];
	report(out, dbkit_sound(db, why, sizeof(why)), "the file is sound after it (%s)", why);
	int64_t judged = dbkit_int(db, "SELECT count(*) FROM states s JOIN fsruns f ON f.id = s.fsrun_id"
				       " WHERE f.run_id = 1 AND s.judged = 1");
	report(out, judged >= 0 && judged < 6 &&
		       dbkit_int(db, "SELECT count(*) FROM states s WHERE judged = 1 AND NOT EXISTS"
				     " (SELECT 1 FROM verdicts WHERE state_id = s.id)") == 0 &&
		       dbkit_int(db, "SELECT count(*) FROM states s WHERE judged = 0 AND EXISTS"
				     " (SELECT 1 FROM verdicts WHERE state_id = s.id)") == 0,
	       "the states judged before the disk filled keep their verdicts, the others have none (%lld of 6 judged)",
	       (long long)judged);
	char *more = xasprintf("size=%lld", (long long)st.st_size * 8);
	report(out, mount(NULL, mnt, NULL, MS_REMOUNT, more) == 0, "room again (%s)", more);
	char *want = xasprintf("run 1: %lld states judged", 6 - (long long)judged);
	rc = dbkit_run(args, &o);
	report(out, rc == 0 && strstr(o.buf, want), "then crashlab judge judges the rest: %s (%d: %s)", want, rc, line1(&o));
	report(out, dbkit_sound(db, why, sizeof(why)) &&
		       dbkit_int(db, "SELECT count(*) FROM states s JOIN fsruns f ON f.id = s.fsrun_id"
				     " WHERE f.run_id = 1 AND s.judged = 0") == 0,
	       "and the file is sound, every state of run 1 judged (%s)", why);
	fflush(out);
	_exit(0);
}

TEST(full_disk_end_to_end)
{
	if (access(dbkit_crashlab(), X_OK) != 0)
		SKIP("%s is not built", dbkit_crashlab());
	if (geteuid() != 0)
		SKIP("a small tmpfs of its own needs root (a mount namespace)");
	struct strvec fx = STRVEC_INIT;
	dbkit_fixtures(&fx);
	char *src = fx.n ? xasprintf("%s/%s", DBKIT_FIXTURES, fx.v[0]) : NULL;
	char *plain = xasprintf("%s/full-src.db", dir), *mnt = xasprintf("%s/mnt", dir);
	CHECK(src && dbkit_unpack(src, plain) == 0 && mkdir(mnt, 0755) == 0, "the oldest fixture, %s, and a mount point",
	      src ? src : "none");
	int64_t v = dbkit_int(plain, "PRAGMA user_version");
	char *tmp = xasprintf("%s/report", dir);
	FILE *out = fopen(tmp, "w");
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0)
		full_disk_child(plain, mnt, out);
	fclose(out);
	int st;
	waitpid(pid, &st, 0);
	if (WIFEXITED(st) && WEXITSTATUS(st) == 77) {
		free(src);
		free(plain);
		free(mnt);
		free(tmp);
		strvec_free(&fx);
		SKIP("no mount namespace here for a small tmpfs");
	}
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the child with the small tmpfs ran to the end");
	struct sbuf r = SBUF_INIT;
	read_file(tmp, &r);
	int lines = 0;
	for (char *l = r.buf, *nl; l && *l; l = nl ? nl + 1 : NULL, lines++) {
		nl = strchr(l, '\n');
		if (nl)
			*nl = '\0';
		CHECK(l[0] == '1', "schema %lld: %s", (long long)v, l + 2);
	}
	CHECK(lines == 7, "all 7 of its checks reported (%d)", lines);
	sbuf_free(&r);
	free(src);
	free(plain);
	free(mnt);
	free(tmp);
	strvec_free(&fx);
}

/* ---- read-only ---- */

/* Run `crashlab ARGS` as a user who may not write the file: this one, or
 * nobody when this one is root (root writes anything). Its exit status, or
 * 77 when nobody cannot run crashlab from here. */
static int run_unprivileged(const char *args, struct sbuf *out)
{
	if (geteuid() != 0)
		return dbkit_run(args, out);
	int fd[2];
	if (pipe(fd) < 0)
		return -1;
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		close(fd[0]);
		if (setgroups(0, NULL) < 0 || setgid(65534) < 0 || setuid(65534) < 0 || access(dbkit_crashlab(), X_OK) != 0)
			_exit(77);
		struct sbuf o = SBUF_INIT;
		int rc = dbkit_run(args, &o);
		if (o.len && write(fd[1], o.buf, o.len) < 0)
			_exit(77);
		_exit(rc);
	}
	close(fd[1]);
	sbuf_reset(out);
	read_fd(fd[0], out);
	sbuf_add(out, "", 0);
	close(fd[0]);
	int st;
	waitpid(pid, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* The newest fixture opened once, so it is at the current version whatever that is. */
static char *current_db(const struct strvec *fx, const char *as)
{
	char *p = fixture(fx->v[fx->n - 1], as);
	struct crashdb *db;
	struct errbuf e;
	CHECK(crashdb_open(p, &db, &e) == 0, "%s brought to the current version (%s)", as, db ? "ok" : e.msg);
	crashdb_close(db);
	return p;
}

TEST(read_only)
{
	if (access(dbkit_crashlab(), X_OK) != 0)
		SKIP("%s is not built", dbkit_crashlab());
	struct strvec fx = STRVEC_INIT;
	dbkit_fixtures(&fx);
	if (fx.n < 2)
		SKIP("needs a fixture of an earlier version and one of the current");
	/* A directory everyone may write (sqlite keeps its -shm there), a file nobody may. */
	char *sub = xasprintf("%s/ro", dir);
	CHECK(mkdir(sub, 0777) == 0 && chmod(sub, 01777) == 0 && chmod(dir, 0755) == 0, "a directory for them");
	char *old = fixture(fx.v[0], "ro/old.db"), *cur = current_db(&fx, "ro/current.db");
	char *old_ref = fixture(fx.v[0], "ro-old-ref.db"), *cur_ref = xasprintf("%s/ro-current-ref.db", dir);
	CHECK(dbkit_unpack(cur, cur_ref) == 0 && chmod(old, 0444) == 0 && chmod(cur, 0444) == 0,
	      "both read-only, and copies to compare them with");
	int64_t oldv = dbkit_int(old_ref, "PRAGMA user_version");
	int64_t curv = dbkit_int(cur_ref, "PRAGMA user_version");
	CHECK(oldv < curv, "one at an earlier schema version (%lld), one at the current (%lld)", (long long)oldv,
	      (long long)curv);

	struct sbuf out = SBUF_INIT;
	char *args = xasprintf("list --db '%s'", cur);
	int rc = run_unprivileged(args, &out);
	if (rc == 77)
		SKIP("nobody cannot run %s from here", dbkit_crashlab());
	CHECK(rc == 0 && strstr(out.buf, "ext4,f2fs"), "a read-only database can still be listed (%d)", rc);
	free(args);
	args = xasprintf("judge 1 --again --db '%s'", cur);
	rc = run_unprivileged(args, &out);
	CHECK(rc == EXIT_CANTCREAT && strstr(out.buf, "attempt to write a readonly database") &&
		      strstr(out.buf, "check their permissions"),
	      "crashlab judge on it exits %d, saying it is read-only and what to do (%d: %s)", EXIT_CANTCREAT, rc,
	      line1(&out));
	free(args);
	args = xasprintf("list --db '%s'", old);
	rc = run_unprivileged(args, &out);
	CHECK(rc == EXIT_CANTCREAT && strstr(out.buf, "cannot migrate from schema version") &&
		      strstr(out.buf, "readonly"),
	      "one of schema version %lld cannot be migrated: exit %d, saying why (%d: %s)", (long long)oldv,
	      EXIT_CANTCREAT, rc, line1(&out));
	free(args);
	/* Not even readable. */
	char *none = xasprintf("%s/ro/unreadable.db", dir);
	CHECK(dbkit_unpack(cur, none) == 0 && chmod(none, 0) == 0, "a copy nobody may read");
	args = xasprintf("list --db '%s'", none);
	rc = run_unprivileged(args, &out);
	CHECK(rc == EXIT_CANTCREAT && strstr(out.buf, "cannot open") && strstr(out.buf, "permission denied"),
	      "crashlab list on it exits %d: permission denied (%d: %s)", EXIT_CANTCREAT, rc, line1(&out));
	free(args);
	free(none);
	CHECK(same_bytes(cur, cur_ref) && same_bytes(old, old_ref), "both files are byte for byte as they were");
	CHECK(dbkit_int(old, "PRAGMA user_version") == oldv, "the old one still at version %lld", (long long)oldv);
	expect_sound(old, "(the old one)");
	expect_sound(cur, "(the current one)");
	sbuf_free(&out);
	free(sub);
	free(old);
	free(cur);
	free(old_ref);
	free(cur_ref);
	strvec_free(&fx);
}

TEST(a_directory)
{
	struct crashdb *db;
	struct errbuf e = { 0 };
	CHECK(crashdb_open(dir, &db, &e) == -1 && e.code == EXIT_DATAERR && strstr(e.msg, "is a directory, not a database"),
	      "a directory given as the database: exit %d, saying so (%d: %s)", EXIT_DATAERR, e.code, e.msg);
	CHECK(crashdb_open_existing(dir, &db, &e) == -1 && e.code == EXIT_DATAERR, "also where it must exist (%d)", e.code);
}

/* ---- locked past the wait ---- */

TEST(locked_past_the_wait)
{
	if (access(dbkit_crashlab(), X_OK) != 0)
		SKIP("%s is not built", dbkit_crashlab());
	struct strvec fx = STRVEC_INIT;
	dbkit_fixtures(&fx);
	if (fx.n < 2)
		SKIP("needs a fixture of an earlier version and one of the current");
	char *old = fixture(fx.v[0], "locked-old.db"), *cur = current_db(&fx, "locked-current.db");
	int64_t oldv = dbkit_int(old, "PRAGMA user_version");
	CHECK(oldv < dbkit_int(cur, "PRAGMA user_version"), "one at an earlier schema version (%lld), one at the current",
	      (long long)oldv);
	/* Another process's write transaction on each: here, a connection of ours. */
	sqlite3 *h1, *h2;
	CHECK(sqlite3_open(old, &h1) == SQLITE_OK && sqlite3_exec(h1, "BEGIN IMMEDIATE", NULL, NULL, NULL) == SQLITE_OK &&
		      sqlite3_open(cur, &h2) == SQLITE_OK &&
		      sqlite3_exec(h2, "BEGIN IMMEDIATE", NULL, NULL, NULL) == SQLITE_OK,
	      "both files locked for writing by another connection");
	setenv("CRASHLAB_TEST_DB_BUSY_MS", "300", 1);
	struct sbuf out = SBUF_INIT;
	char *args = xasprintf("judge 1 --again --db '%s'", cur);
	int rc = dbkit_run(args, &out);
	CHECK(rc == EXIT_CANTCREAT && strstr(out.buf, "database is locked") &&
		      strstr(out.buf, "another process kept it locked for more than the 0.3 s crashlab waits"),
	      "crashlab judge exits %d, saying another process holds the lock (%d: %s)", EXIT_CANTCREAT, rc, line1(&out));
	char *show = xasprintf("show 1 --db '%s'", cur);
	rc = dbkit_run(show, &out);
	CHECK(rc == 0 && strstr(out.buf, "== ext4"), "reading it meanwhile works (%d)", rc);
	char *list = xasprintf("list --db '%s'", old);
	rc = dbkit_run(list, &out);
	CHECK(rc == EXIT_CANTCREAT && strstr(out.buf, "cannot lock the database to migrate it") &&
		      strstr(out.buf, "database is locked"),
	      "one of schema version %lld cannot be migrated meanwhile: exit %d (%d: %s)", (long long)oldv, EXIT_CANTCREAT,
	      rc, line1(&out));
	unsetenv("CRASHLAB_TEST_DB_BUSY_MS");
	sqlite3_exec(h1, "ROLLBACK", NULL, NULL, NULL);
	sqlite3_exec(h2, "ROLLBACK", NULL, NULL, NULL);
	sqlite3_close(h1);
	sqlite3_close(h2);
	CHECK(dbkit_int(old, "PRAGMA user_version") == oldv, "the old one is still at version %lld", (long long)oldv);
	expect_sound(old, "after the failed migration");
	expect_sound(cur, "after the failed judge");
	/* The lock gone, the same commands work. */
	rc = dbkit_run(args, &out);
	CHECK(rc == 0 && strstr(out.buf, "run 1: 6 states judged"), "then crashlab judge works (%d: %s)", rc, line1(&out));
	rc = dbkit_run(list, &out);
	CHECK(rc == 0 && strstr(out.buf, "ext4,f2fs") && dbkit_int(old, "PRAGMA user_version") > oldv,
	      "and the old one is migrated (%d)", rc);
	expect_sound(old, "at the end");
	expect_sound(cur, "at the end");
	sbuf_free(&out);
	free(args);
	free(show);
	free(list);
	free(old);
	free(cur);
	strvec_free(&fx);
}

__attribute__((constructor(101))) static void setup(void)
{
	dir = cmd_tmpdir("dbfault");
	msg_configure(0, 1);
}

__attribute__((destructor)) static void teardown(void)
{
	if (dir)
		rm_rf(dir);
}

TEST_MAIN()
