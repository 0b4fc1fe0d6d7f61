/*
 * test-dbshare.c - one database file, several crashlab processes at once:
 * two runs that write it at the same time (as `crashlab run -j` shards or
 * two terminals do) both complete, with every row there and every id where
 * it belongs; a reader working meanwhile only ever sees whole states, also
 * while a state is judged again; and processes that create the same new
 * file at the same moment, or open the same old one, all open it, migrated
 * once. Every case ends with PRAGMA integrity_check and foreign_key_check.
 *
 * The processes are forked and held at a gate (a pipe whose write end the
 * parent closes) so that they start together; nothing here measures time.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "crashdb/db.h"
#include "host/msg.h"
#include "tests/unit/check.h"
#include "tests/unit/dbkit.h"

static char *dir;
static int current;          /* the schema version of a new database */

/* The shape of a state: idx k has NODES(k) nodes and VERDICTS(k) verdicts,
 * so a reader can tell a whole state from a part of one. */
#define NODES(k) ((size_t)(k) % 7 + 1)
#define VERDICTS(k) ((size_t)(k) % 5 + 1)

static const char workload[] = "[setup]\nmkdir A\nsync\n[run]\nwrite A/f 4K\nfsync A/f\n";
static const struct op_result results[] = { { 0, 0, 12, 0, 0.5, 2 }, { 0, 0, 0, 0, 1, 3 },
					    { 4096, 0, 13, 0, 0.5, 3 }, { 0, 0, 13, 0, 2, 5 } };

/* The gate: children wait on it, the parent opens it for all at once. */
struct gate {
	int fd[2];
};

static void gate_init(struct gate *g)
{
	if (pipe(g->fd) < 0)
		abort();
}

static void gate_wait(struct gate *g)
{
	char c;
	close(g->fd[1]);
	while (read(g->fd[0], &c, 1) < 0 && errno == EINTR)
		;
	close(g->fd[0]);
}

static void gate_open(struct gate *g)
{
	close(g->fd[0]);
	close(g->fd[1]);
}

/* A child that failed says why on stdout as a TAP comment, and exits 1. */
static _Noreturn void child_fail(const char *who, const struct errbuf *e)
{
	printf("# %s: %s\n", who, e->msg);
	fflush(stdout);
	_exit(1);
}

/* One whole run through the sink: nfs fs runs of nstates states each. The
 * ids the sink gave are read back through the read API at the end. */
static int store_run(const char *path, const char *name, int nfs, int nstates, struct errbuf *e)
{
	struct crashdb *db;
	if (crashdb_open(path, &db, e) < 0)
		return -1;
	struct sink sink;
	crashdb_sink(db, &sink);
	struct run_info r = { .cmdline = (char *)name, .workload_file = "share.wl", .workload_text = (char *)workload,
			      .crash_mode = "flush" };
	int rc = sink.run_begin(sink.ctx, &r, e);
	int64_t *ids = xcalloc((size_t)nstates, sizeof(*ids));
	for (int f = 0; f < nfs && rc == 0; f++) {
		struct fsrun fr = { .run_id = r.id, .fs = f ? "xfs" : "ext4", .outcome = "running" };
		rc = sink.fsrun_begin(sink.ctx, &fr, e);
		for (int k = 0; k < nstates && rc == 0; k++) {
			struct tree_node nodes[7];
			char paths[7][16];
			for (size_t i = 0; i < NODES(k); i++) {
				snprintf(paths[i], sizeof(paths[i]), "A/f%zu", i);
				nodes[i] = (struct tree_node){ .path = paths[i], .type = 'f', .mode = 0644, .size = (uint64_t)k,
							       .nlink = 1, .ino = 100 + i, .blocks = "z" };
			}
			char spec[32];
			snprintf(spec, sizeof(spec), "prefix=%d", k + 3);
			struct state_result s = { .idx = k, .kind = "flush", .spec = spec, .point = k + 3 };
			s.check = (struct check_report){ .mount_ok = 1, .fsck_status = 0, .fsck_clean = 1, .nodes = nodes,
							 .n_nodes = NODES(k) };
			snprintf(s.check.tree_hash, sizeof(s.check.tree_hash), "%016x", k);
			s.judge = (struct judgement){ .judged = 1, .explained = 1, .marks = "ss+." , .n = VERDICTS(k) };
			s.judge.v = xcalloc(VERDICTS(k), sizeof(*s.judge.v));
			for (size_t i = 0; i < VERDICTS(k); i++) {
				struct verdict *v = &s.judge.v[i];
				v->model = MODEL_POSIX;
				snprintf(v->rule, sizeof(v->rule), "unpromised");
				v->kind = V_BONUS;
				v->op = 3;
				snprintf(v->path, sizeof(v->path), "A/f%zu", i);
				snprintf(v->reason, sizeof(v->reason), "%s: state %d, verdict %zu", name, k, i);
			}
			rc = sink.state(sink.ctx, &fr, &s, e);
			ids[k] = s.id;
			free(s.judge.v);
		}
		if (rc == 0 && wl_parse("share.wl", workload, &fr.ops, e) == 0) {
			fr.res = (struct op_result *)results;
			fr.outcome = "ok";
			fr.models = "posix";
			rc = sink.fsrun_end(sink.ctx, &fr, e);
			wl_free(&fr.ops);
		}
		/* The states read back with the ids the sink gave them. */
		struct state_result *sv;
		size_t n;
		if (rc == 0 && (rc = crashdb_read_states(db, fr.id, 0, &sv, &n, e)) == 0) {
			for (size_t k = 0; k < n && rc == 0; k++)
				if (sv[k].id != ids[k] || sv[k].idx != (int)k)
					rc = errbuf_set(e, 1, "%s: state %zu reads back as id %lld idx %d, stored as id %lld", name,
							k, (long long)sv[k].id, sv[k].idx, (long long)ids[k]);
			if (rc == 0 && n != (size_t)nstates)
				rc = errbuf_set(e, 1, "%s: %zu states read back, %d stored", name, n, nstates);
			crashdb_states_free(sv, n);
		}
	}
	free(ids);
	if (rc == 0) {
		r.status = "ok";
		r.exit_code = 0;
		rc = sink.run_end(sink.ctx, &r, e);
	}
	crashdb_close(db);
	return rc;
}

static pid_t spawn_writer(struct gate *g, const char *path, const char *name, int nfs, int nstates)
{
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		struct errbuf e = { 0 };
		gate_wait(g);
		if (store_run(path, name, nfs, nstates, &e) < 0)
			child_fail(name, &e);
		_exit(0);
	}
	return pid;
}

static int exit_status(pid_t pid)
{
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* Every state of every run in db, read through the read API: how many, and
 * how many were not whole (nodes or verdicts missing). -1 when reading failed. */
static int read_all(struct crashdb *db, size_t *states, size_t *broken, struct errbuf *e)
{
	struct run_row *rows;
	size_t nr;
	*states = *broken = 0;
	if (crashdb_list_runs(db, &rows, &nr, e) < 0)
		return -1;
	int rc = 0;
	for (size_t i = 0; i < nr && rc == 0; i++) {
		struct fsrun *fv;
		size_t nf;
		if ((rc = crashdb_read_fsruns(db, rows[i].id, NULL, &fv, &nf, e)) < 0)
			break;
		for (size_t f = 0; f < nf && rc == 0; f++) {
			struct state_result *sv;
			size_t ns;
			if ((rc = crashdb_read_states(db, fv[f].id, CRASHDB_TREE | CRASHDB_VERDICTS, &sv, &ns, e)) < 0)
				break;
			for (size_t k = 0; k < ns; k++) {
				const struct state_result *s = &sv[k];
				*broken += s->idx != (int)k || s->check.n_nodes != NODES(k) || s->n_nodes != (int64_t)NODES(k) ||
					   s->judge.n != VERDICTS(k) || !s->judge.judged || !s->judge.marks;
			}
			*states += ns;
			crashdb_states_free(sv, ns);
		}
		crashdb_fsruns_free(fv, nf);
	}
	run_rows_free(rows, nr);
	return rc;
}

static void expect_sound(const char *path, const char *when)
{
	char why[512];
	CHECK(dbkit_sound(path, why, sizeof(why)), "integrity_check and foreign_key_check clean %s (%s)", when, why);
}

#define NFS 2
#define NSTATES 150

TEST(two_runs_at_once_and_a_reader)
{
	char *path = xasprintf("%s/two.db", dir);
	struct crashdb *db;
	struct errbuf e;
	CHECK(crashdb_open(path, &db, &e) == 0, "a new database");
	struct gate g;
	gate_init(&g);
	pid_t a = spawn_writer(&g, path, "writer A", NFS, NSTATES);
	pid_t b = spawn_writer(&g, path, "writer B", NFS, NSTATES);
	gate_open(&g);

	/* Read everything over and over while they write. */
	size_t passes = 0, seen = 0, broken = 0, failed = 0;
	int done_a = 0, done_b = 0, st_a = -1, st_b = -1;
	char firsterr[sizeof(e.msg)] = "";
	do {
		size_t n, bad;
		if (read_all(db, &n, &bad, &e) < 0) {
			if (!failed++)
				snprintf(firsterr, sizeof(firsterr), "%s", e.msg);
		} else {
			passes++;
			broken += bad;
			if (n > seen)
				seen = n;
		}
		done_a = done_a || waitpid(a, &st_a, WNOHANG) == a;
		done_b = done_b || waitpid(b, &st_b, WNOHANG) == b;
	} while (!done_a || !done_b);
	CHECK(WIFEXITED(st_a) && WEXITSTATUS(st_a) == 0 && WIFEXITED(st_b) && WEXITSTATUS(st_b) == 0,
	      "both writers succeeded");
	CHECK(passes > 0 && failed == 0, "the reader read %zu times meanwhile, never failing (%zu failures%s%s)", passes,
	      failed, failed ? ": " : "", firsterr);
	CHECK(broken == 0, "and never saw a state without all its nodes and verdicts (%zu did)", broken);
	printf("# the reader saw up to %zu states\n", seen);

	size_t n, bad;
	CHECK(read_all(db, &n, &bad, &e) == 0 && n == 2 * NFS * NSTATES && bad == 0,
	      "both runs stored whole: %d states each, all whole (%zu, %zu not)", NFS * NSTATES, n, bad);
	crashdb_close(db);
	CHECK(dbkit_int(path, "SELECT count(*) FROM runs WHERE status = 'ok' AND finished_at IS NOT NULL") == 2,
	      "both runs finished");
	CHECK(dbkit_int(path, "SELECT count(DISTINCT cmdline) FROM runs") == 2 &&
		      dbkit_int(path, "SELECT count(*) FROM fsruns GROUP BY run_id HAVING count(*) <> 2") == -999 &&
		      dbkit_int(path, "SELECT count(*) FROM fsruns WHERE outcome = 'ok' AND models = 'posix'") == 2 * NFS,
	      "each run has its own two fs runs, ended");
	CHECK(dbkit_int(path, "SELECT count(*) FROM ops") == 2 * NFS * 4 &&
		      dbkit_int(path, "SELECT count(*) FROM (SELECT fsrun_id FROM ops GROUP BY fsrun_id"
				      " HAVING count(*) = 4)") == 2 * NFS,
	      "each fs run has its 4 ops");
	CHECK(dbkit_int(path, "SELECT count(*) FROM (SELECT fsrun_id FROM states GROUP BY fsrun_id"
			      " HAVING count(*) = 150 AND min(idx) = 0 AND max(idx) = 149)") == 2 * NFS,
	      "each fs run has its states 0..%d, none twice, none missing", NSTATES - 1);
	CHECK(dbkit_int(path, "SELECT count(*) FROM states s WHERE n_nodes <>"
			      " (SELECT count(*) FROM nodes WHERE state_id = s.id) OR n_nodes <> idx % 7 + 1") == 0 &&
		      dbkit_int(path, "SELECT count(*) FROM states s WHERE (SELECT count(*) FROM verdicts WHERE state_id = s.id)"
				      " <> idx % 5 + 1") == 0,
	      "each state has its own nodes and verdicts, no more, no fewer");
	CHECK(dbkit_int(path, "SELECT count(*) FROM verdicts v JOIN states s ON s.id = v.state_id JOIN fsruns f ON"
			      " f.id = s.fsrun_id JOIN runs r ON r.id = f.run_id WHERE v.reason NOT LIKE r.cmdline || ': state '"
			      " || s.idx || ', verdict %'") == 0,
	      "every verdict sits under the run and state that wrote it");
	expect_sound(path, "after both runs");
	free(path);
}

/* The same without a reader: the writers only contend with each other. */
TEST(two_runs_at_once_both_complete)
{
	char *path = xasprintf("%s/both.db", dir);
	struct gate g;
	gate_init(&g);
	pid_t a = spawn_writer(&g, path, "writer A", NFS, NSTATES);
	pid_t b = spawn_writer(&g, path, "writer B", NFS, NSTATES);
	gate_open(&g);
	int sa = exit_status(a), sb = exit_status(b);
	CHECK(sa == 0 && sb == 0, "two processes, each storing a run of %d states into one new file, both succeed (%d, %d)",
	      NFS * NSTATES, sa, sb);
	CHECK(dbkit_int(path, "SELECT count(*) FROM states") == 2 * NFS * NSTATES &&
		      dbkit_int(path, "SELECT count(*) FROM runs WHERE status = 'ok'") == 2,
	      "with all their states");
	CHECK(dbkit_int(path, "PRAGMA user_version") == current, "the file is at the current version %d", current);
	expect_sound(path, "after both runs");
	free(path);
}

/* A state judged again while a reader reads it: the reader sees the old
 * judgement or the new one, each whole, never the state row of one with
 * the verdicts of the other. The writer alternates between two judgements
 * (marks "aa" with 2 verdicts, "bbbbb" with 5), so a mix shows. */
static void rejudge(const char *path, int64_t state_id, int rounds)
{
	struct crashdb *db;
	struct errbuf e;
	if (crashdb_open(path, &db, &e) < 0)
		child_fail("rejudge", &e);
	for (int i = 0; i < rounds; i++) {
		size_t n = i % 2 ? 5 : 2;
		struct judgement j = { .judged = 1, .explained = 1, .marks = i % 2 ? "bbbbb" : "aa", .n = n };
		j.v = xcalloc(n, sizeof(*j.v));
		for (size_t k = 0; k < n; k++) {
			j.v[k].model = MODEL_POSIX;
			snprintf(j.v[k].rule, sizeof(j.v[k].rule), "unpromised");
			j.v[k].kind = V_BONUS;
			snprintf(j.v[k].reason, sizeof(j.v[k].reason), "round %d", i);
		}
		if (db_write_judgement(db, state_id, &j, NULL, &e) < 0)
			child_fail("rejudge", &e);
		free(j.v);
	}
	crashdb_close(db);
}

TEST(a_reader_while_a_state_is_judged_again)
{
	char *path = xasprintf("%s/rejudge.db", dir);
	struct errbuf e;
	CHECK(store_run(path, "writer", 1, 1, &e) == 0, "a run with one state (%s)", e.msg);
	rejudge(path, 1, 1); /* its first judgement: "aa" */
	struct crashdb *db;
	CHECK(crashdb_open(path, &db, &e) == 0, "opened to read");
	struct gate g;
	gate_init(&g);
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		gate_wait(&g);
		rejudge(path, 1, 1000);
		_exit(0);
	}
	gate_open(&g);
	size_t reads = 0, mixed = 0, failed = 0;
	int st = 0, done = 0;
	do {
		struct state_result *sv;
		size_t n;
		if (crashdb_read_states(db, 1, CRASHDB_VERDICTS, &sv, &n, &e) < 0 || n != 1) {
			failed++;
		} else {
			reads++;
			mixed += !sv[0].judge.marks || strlen(sv[0].judge.marks) != sv[0].judge.n;
			crashdb_states_free(sv, n);
		}
		done = waitpid(pid, &st, WNOHANG) == pid;
	} while (!done);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the writer judged the state 1000 times");
	CHECK(reads > 0 && failed == 0, "the reader read it %zu times meanwhile (%zu failures)", reads, failed);
	CHECK(mixed == 0, "and always saw one judgement whole: its timeline with its own verdicts (%zu mixed)", mixed);
	crashdb_close(db);
	expect_sound(path, "after it");
	free(path);
}

/* Several processes open a file that does not exist yet at the same moment:
 * one creates and migrates it, the others wait for it, and all of them
 * store a run. Repeated, since the window is narrow. */
TEST(new_file_opened_by_several_at_once)
{
	enum { ROUNDS = 30, PROCS = 4 };
	int failures = 0, wal = 0, version = 0, sound = 0, runs = 0;
	for (int round = 0; round < ROUNDS; round++) {
		char *path = xasprintf("%s/new-%d.db", dir, round);
		struct gate g;
		gate_init(&g);
		pid_t pid[PROCS];
		for (int p = 0; p < PROCS; p++) {
			char name[32];
			snprintf(name, sizeof(name), "opener %d.%d", round, p);
			pid[p] = spawn_writer(&g, path, name, 1, 3);
		}
		gate_open(&g);
		for (int p = 0; p < PROCS; p++)
			failures += exit_status(pid[p]) != 0;
		wal += dbkit_int(path, "SELECT count(*) FROM pragma_journal_mode WHERE journal_mode = 'wal'") == 1;
		version += dbkit_int(path, "PRAGMA user_version") == current;
		runs += dbkit_int(path, "SELECT count(*) FROM runs WHERE status = 'ok'") == PROCS;
		char why[512];
		sound += dbkit_sound(path, why, sizeof(why));
		free(path);
	}
	CHECK(failures == 0, "%d rounds of %d processes opening one new file at once: every open and run succeeded "
	      "(%d failed)", ROUNDS, PROCS, failures);
	CHECK(version == ROUNDS, "every file ends at the current version %d (%d of %d)", current, version, ROUNDS);
	CHECK(runs == ROUNDS, "with every process's run in it (%d of %d)", runs, ROUNDS);
	CHECK(wal == ROUNDS, "in WAL mode, as every crashlab database is (%d of %d)", wal, ROUNDS);
	CHECK(sound == ROUNDS, "integrity_check and foreign_key_check clean (%d of %d)", sound, ROUNDS);
}

/* The same with a file from an earlier version: every opener finds it old,
 * one migrates it under the write lock, the others find it done. */
TEST(old_file_opened_by_several_at_once)
{
	enum { ROUNDS = 10, PROCS = 4 };
	struct strvec fx = STRVEC_INIT;
	dbkit_fixtures(&fx);
	size_t old = 0;
	for (size_t i = 0; i < fx.n; i++) {
		char *src = xasprintf("%s/%s", DBKIT_FIXTURES, fx.v[i]);
		char *probe = xasprintf("%s/probe-%s.db", dir, fx.v[i]);
		int64_t v = dbkit_unpack(src, probe) == 0 ? dbkit_int(probe, "PRAGMA user_version") : -1;
		free(probe);
		if (v < 1 || v >= current) {
			free(src);
			continue;
		}
		old++;
		int failures = 0, version = 0, runs = 0, sound = 0;
		for (int round = 0; round < ROUNDS; round++) {
			char *path = xasprintf("%s/old-%d-%s.db", dir, round, fx.v[i]);
			int64_t before = dbkit_unpack(src, path) == 0 ? dbkit_int(path, "SELECT count(*) FROM runs") : -1;
			struct gate g;
			gate_init(&g);
			pid_t pid[PROCS];
			for (int p = 0; p < PROCS; p++) {
				char name[64];
				snprintf(name, sizeof(name), "migrator %d.%d", round, p);
				pid[p] = spawn_writer(&g, path, name, 1, 3);
			}
			gate_open(&g);
			for (int p = 0; p < PROCS; p++)
				failures += exit_status(pid[p]) != 0;
			version += dbkit_int(path, "PRAGMA user_version") == current;
			runs += before >= 0 && dbkit_int(path, "SELECT count(*) FROM runs") == before + PROCS;
			char why[512];
			sound += dbkit_sound(path, why, sizeof(why));
			free(path);
		}
		CHECK(failures == 0 && version == ROUNDS && runs == ROUNDS && sound == ROUNDS,
		      "%s: %d rounds of %d processes opening it at once: all succeed (%d failed), it is migrated once to "
		      "version %d (%d of %d), every run is added to the old ones (%d) and the file is sound (%d)",
		      fx.v[i], ROUNDS, PROCS, failures, current, version, ROUNDS, runs, sound);
		free(src);
	}
	CHECK(old > 0, "there is a fixture from an earlier version to try (%zu)", old);
	strvec_free(&fx);
}

__attribute__((constructor(101))) static void setup(void)
{
	dir = cmd_tmpdir("dbshare");
	msg_configure(0, 1);
	current = crashdb_schema_version();
}

__attribute__((destructor)) static void teardown(void)
{
	if (dir)
		rm_rf(dir);
}

TEST_MAIN()
