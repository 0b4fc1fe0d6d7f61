/*
 * test-migrate.c - a database from every earlier schema version opens with
 * this crashlab and reads back as it was written.
 *
 * tests/fixtures/db/ holds one database per schema version, each made by
 * the crashlab of its time (README.md there says how and from which
 * commit), all with the same scenario: run 1 of the seed workload on ext4
 * and f2fs, three flush states each; run 2 on ext4 with data=journal, whose
 * final state does not mount, and xfs, whose recording guest panicked.
 * Every case goes over every fixture of the folder, so a new one is
 * checked as soon as it is added, on a copy of its own:
 *
 *  - there is a fixture for every version before the current one;
 *  - opening migrates it to the current version (whatever that is) without
 *    losing a row, and leaves integrity_check and foreign_key_check clean;
 *  - the read API returns the scenario's runs, fs runs, ops, states and
 *    trees, value by value;
 *  - its verdicts: stored ones read back; a fixture from before the judge
 *    has none, and judging it gives the scenario's verdicts;
 *  - `crashlab list`, `show`, `report` and `judge`, run as processes on the
 *    copy (the first of them migrating it), work.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "core/tree.h"
#include "crashdb/db.h"
#include "host/msg.h"
#include "tests/unit/check.h"
#include "tests/unit/dbkit.h"

#define FIXTURES DBKIT_FIXTURES

static char *dir;
static int current;          /* the schema version of a new database */
static struct strvec fixtures = STRVEC_INIT;

/* The workload of the scenario, as every fixture stores it. */
static const char workload[] = "# the seed example: a rename, then a new file under the old name\n"
			       "[setup]\n"
			       "mkdir A\n"
			       "write A/foo \"hello\"\n"
			       "sync\n"
			       "[run]\n"
			       "rename A/foo A/bar\n"
			       "write A/foo \"world\"\n"
			       "unlink A/nope\n"
			       "fsync A/foo\n";

/* A copy of fixture i of its own, not opened yet (malloc'd path). */
static char *unpack(size_t i, const char *tag)
{
	char *src = xasprintf("%s/%s", FIXTURES, fixtures.v[i]);
	char *dst = xasprintf("%s/%s-%s.db", dir, tag, fixtures.v[i]);
	CHECK(dbkit_unpack(src, dst) == 0, "%s: unpacked into a file of its own", fixtures.v[i]);
	free(src);
	return dst;
}

static struct crashdb *open_copy(const char *path, const char *name)
{
	struct crashdb *db;
	struct errbuf e = { 0 };
	int r = crashdb_open(path, &db, &e);
	CHECK(r == 0, "%s: today's crashdb opens it (%s)", name, r ? e.msg : "ok");
	return r == 0 ? db : NULL;
}

static void expect_sound(const char *path, const char *name, const char *when)
{
	char why[512];
	CHECK(dbkit_sound(path, why, sizeof(why)), "%s: integrity_check and foreign_key_check clean %s (%s)", name,
	      when, why);
}

TEST(a_fixture_for_every_earlier_version)
{
	CHECK(fixtures.n > 0, "%s holds fixtures (%zu)", FIXTURES, fixtures.n);
	CHECK(current >= 2, "a new database is at the current version (%d)", current);
	bool *have = xcalloc((size_t)current + 1, sizeof(*have));
	for (size_t i = 0; i < fixtures.n; i++) {
		char *p = unpack(i, "as-shipped");
		int64_t v = dbkit_int(p, "PRAGMA user_version");
		CHECK(v >= 1 && v <= current, "%s: schema version %lld, one this crashlab knows", fixtures.v[i], (long long)v);
		CHECK(dbkit_int(p, "PRAGMA application_id") == 0x43724c62, "%s: crashlab's application id", fixtures.v[i]);
		expect_sound(p, fixtures.v[i], "as shipped");
		if (v >= 1 && v <= current)
			have[v] = true;
		free(p);
	}
	for (int v = 1; v < current; v++)
		CHECK(have[v], "schema version %d has a fixture (README.md in %s says how to make one)", v, FIXTURES);
	free(have);
}

static const char *const tables[] = { "runs", "fsruns", "ops", "states", "nodes", "verdicts" };

TEST(migrates_to_the_current_version)
{
	for (size_t i = 0; i < fixtures.n; i++) {
		const char *name = fixtures.v[i];
		char *p = unpack(i, "migrate");
		int64_t before[ARRAY_SIZE(tables)];
		for (size_t t = 0; t < ARRAY_SIZE(tables); t++) {
			char *sql = xasprintf("SELECT count(*) FROM %s", tables[t]);
			before[t] = dbkit_int(p, sql); /* -999: no such table yet */
			free(sql);
		}
		struct crashdb *db = open_copy(p, name);
		if (!db) {
			free(p);
			continue;
		}
		CHECK(crashdb_version(db) == current, "%s: migrated to the current version %d (%d)", name, current,
		      crashdb_version(db));
		crashdb_close(db);
		expect_sound(p, name, "after the migration");
		CHECK(dbkit_int(p, "PRAGMA user_version") == current, "%s: the file says so too", name);
		for (size_t t = 0; t < ARRAY_SIZE(tables); t++) {
			char *sql = xasprintf("SELECT count(*) FROM %s", tables[t]);
			int64_t after = dbkit_int(p, sql);
			free(sql);
			CHECK(after == (before[t] == -999 ? 0 : before[t]), "%s: %s keeps its %lld rows (%lld)", name, tables[t],
			      (long long)(before[t] == -999 ? 0 : before[t]), (long long)after);
		}
		CHECK(dbkit_int(p, "SELECT count(*) FROM runs") == 2 && dbkit_int(p, "SELECT count(*) FROM states") == 9 &&
			      dbkit_int(p, "SELECT count(*) FROM nodes") == 18,
		      "%s: the scenario's 2 runs, 9 states and 18 nodes", name);
		/* Opening it again changes nothing. */
		db = open_copy(p, name);
		CHECK(db && crashdb_version(db) == current, "%s: reopened, still at version %d", name, current);
		crashdb_close(db);
		free(p);
	}
}

/* ---- the scenario, through the read API ---- */

struct want_node {
	const char *path;
	char type;
	uint64_t size, ino;
	const char *text;        /* the content, NULL for a directory */
};

static void check_tree(const char *name, const char *what, const struct state_result *s, const struct want_node *w,
		       size_t n)
{
	int ok = s->check.n_nodes == n && s->n_nodes == (int64_t)n;
	for (size_t k = 0; ok && k < n; k++) {
		const struct tree_node *t = &s->check.nodes[k];
		ok = t->path && !strcmp(t->path, w[k].path) && t->type == w[k].type && t->size == w[k].size &&
		     t->ino == w[k].ino && t->nlink == (w[k].text ? 1u : 2u) && t->uid == 0 && t->gid == 0 &&
		     t->mode == (w[k].text ? 0644u : 0755u) && !t->xattrs && !t->target;
		if (ok && w[k].text) {
			char tok[24];
			unsigned char blk[TREE_BLOCK] = { 0 };
			memcpy(blk, w[k].text, strlen(w[k].text));
			tree_block_token(blk, strlen(w[k].text), 0, tok);
			ok = t->content && t->content_len == strlen(w[k].text) &&
			     !memcmp(t->content, w[k].text, t->content_len) && t->blocks && !strcmp(t->blocks, tok);
		} else if (ok) {
			ok = !t->content && !t->blocks;
		}
	}
	CHECK(ok, "%s: %s: the tree as observed (%zu nodes)", name, what, s->check.n_nodes);
}

static const struct fs_want {
	const char *fs;
	uint64_t ino_a, ino_foo, ino_new, dir_size;
	const char *fsck;        /* a line of the clean fsck output */
} run1_fs[] = {
	{ "ext4", 12, 13, 14, 4096, "Pass 5: Checking group summary information" },
	{ "f2fs", 4, 5, 6, 3488, "[FSCK] other corrupted bugs" },
};

static void check_ops(const char *name, const struct fsrun *f, const struct fs_want *w)
{
	static const char *const text[] = { "mkdir A 0755", "write A/foo \"hello\"", "sync", "rename A/foo A/bar",
					    "write A/foo \"world\"", "unlink A/nope", "fsync A/foo" };
	static const enum wl_kind kind[] = { WL_MKDIR, WL_WRITE, WL_SYNC, WL_RENAME, WL_WRITE, WL_UNLINK, WL_FSYNC };
	static const int line[] = { 3, 4, 5, 7, 8, 9, 10 };
	static const int64_t pos[] = { 0, 0, 3, 3, 3, 3, 7 };
	int ok = f->ops.n == 7 && f->ops.nsetup == 3 && f->res;
	for (size_t k = 0; ok && k < 7; k++) {
		const struct wl_op *op = &f->ops.ops[k];
		char buf[256];
		wl_format(op, buf, sizeof(buf));
		ok = op->id == (int)k + 1 && op->kind == kind[k] && op->line == line[k] && !strcmp(buf, text[k]) &&
		     op->section == (k < 3 ? WL_SETUP : WL_RUN) && f->res[k].log_pos == pos[k];
	}
	CHECK(ok, "%s: %s: the 7 ops parsed back, with their lines, sections and log positions", name, f->fs);
	CHECK(ok && f->res[0].ino == w->ino_a && f->res[1].ret == 5 && f->res[1].ino == w->ino_foo &&
		      f->res[3].ino == 0 && f->res[3].ino2 == w->ino_foo && f->res[4].ino == w->ino_new &&
		      f->res[5].ret == -1 && f->res[5].err == ENOENT && f->res[6].ino == w->ino_new &&
		      f->res[2].ms == 12.5 && f->res[6].ms == 4.25,
	      "%s: %s: each op's result: return values, errno, inode numbers, times", name, f->fs);
}

static void check_run1_states(struct crashdb *db, const char *name, const struct fsrun *f, const struct fs_want *w)
{
	struct state_result *sv;
	size_t n;
	struct errbuf e;
	CHECK(crashdb_read_states(db, f->id, CRASHDB_TREE, &sv, &n, &e) == 0 && n == 3, "%s: %s: 3 states",
	      name, f->fs);
	if (n != 3)
		return;
	static const char *const kind[] = { "flush", "flush", "final" };
	static const int last[] = { 6, 6, 7 };
	int ok = 1;
	for (int k = 0; k < 3; k++) {
		const struct state_result *s = &sv[k];
		char spec[16];
		snprintf(spec, sizeof(spec), "prefix=%d", 3 + 2 * k);
		ok = ok && s->idx == k && !strcmp(s->kind, kind[k]) && !strcmp(s->spec, spec) && s->point == 3 + 2 * k &&
		     s->last_completed_op == last[k] && s->check.mount_ok && s->check.fsck_status == 0 &&
		     s->check.fsck_clean && strstr(s->check.fsck_output, w->fsck) && strlen(s->check.tree_hash) == 16 &&
		     s->check.ms_replay == 1.25 + k && s->check.ms_mount == 18.5 && s->check.ms_capture == 2.75 &&
		     s->check.ms_fsck == 95 && s->check.ms_other == 0.5;
	}
	CHECK(ok, "%s: %s: each state's index, kind, spec, point, last op, mount, fsck and times", name, f->fs);
	CHECK(strcmp(sv[0].check.tree_hash, sv[1].check.tree_hash) && strcmp(sv[1].check.tree_hash, sv[2].check.tree_hash),
	      "%s: %s: three different trees, three different hashes", name, f->fs);
	const struct want_node t0[] = { { "A", 'd', w->dir_size, w->ino_a, NULL }, { "A/foo", 'f', 5, w->ino_foo, "hello" } };
	const struct want_node t1[] = { { "A", 'd', w->dir_size, w->ino_a, NULL }, { "A/bar", 'f', 5, w->ino_foo, "hello" } };
	const struct want_node t2[] = { { "A", 'd', w->dir_size, w->ino_a, NULL },
					{ "A/bar", 'f', 5, w->ino_foo, "hello" },
					{ "A/foo", 'f', 5, w->ino_new, "world" } };
	char what[32];
	snprintf(what, sizeof(what), "%s state 0", f->fs);
	check_tree(name, what, &sv[0], t0, 2);
	snprintf(what, sizeof(what), "%s state 1", f->fs);
	check_tree(name, what, &sv[1], t1, 2);
	snprintf(what, sizeof(what), "%s state 2", f->fs);
	check_tree(name, what, &sv[2], t2, 3);
	/* One state by its index gives the same. */
	struct state_result one;
	CHECK(crashdb_read_state(db, f, 2, CRASHDB_TREE, &one, &e) == 0 && one.id == sv[2].id &&
		      one.check.n_nodes == 3 && !strcmp(one.check.nodes[2].path, "A/foo") &&
		      !strcmp(one.check.tree_hash, sv[2].check.tree_hash),
	      "%s: %s: read_state 2 is the same state", name, f->fs);
	state_result_free(&one);
	crashdb_states_free(sv, n);
}

TEST(read_api_returns_the_scenario)
{
	for (size_t i = 0; i < fixtures.n; i++) {
		const char *name = fixtures.v[i];
		char *p = unpack(i, "read");
		struct crashdb *db = open_copy(p, name);
		free(p);
		if (!db)
			continue;
		struct errbuf e;
		struct run_row *rows;
		size_t nr;
		CHECK(crashdb_list_runs(db, &rows, &nr, &e) == 0 && nr == 2, "%s: list_runs: two runs", name);
		if (nr == 2) {
			CHECK(rows[0].id == 1 && !strcmp(rows[0].status, "ok") && !strcmp(rows[0].fs, "ext4,f2fs") &&
				      !rows[0].options && rows[0].states == 6 && !strcmp(rows[0].workload_file, "seed.wl"),
			      "%s: run 1: ok, ext4 and f2fs with default options, 6 states", name);
			CHECK(rows[1].id == 2 && !strcmp(rows[1].status, "failed") && !strcmp(rows[1].fs, "ext4,xfs") &&
				      rows[1].options && !strcmp(rows[1].options, "ext4:data=journal") && rows[1].states == 3,
			      "%s: run 2: failed, ext4 with data=journal and xfs, 3 states (%s)", name,
			      rows[1].options ? rows[1].options : "no options");
			run_rows_free(rows, nr);
		}

		int64_t id;
		CHECK(crashdb_resolve_run(db, "last", &id, &e) == 0 && id == 2, "%s: 'last' is run 2", name);
		struct run_info r;
		CHECK(crashdb_read_run(db, 1, &r, &e) == 0, "%s: read_run 1", name);
		CHECK(!strcmp(r.started_at, "2026-01-05T10:00:00Z") && r.finished_at && strlen(r.finished_at) == 20 &&
			      !strcmp(r.status, "ok") && r.has_exit && r.exit_code == 0 &&
			      !strcmp(r.cmdline, "crashlab run --fs ext4,f2fs seed.wl") && !strcmp(r.accel, "kvm") &&
			      !strncmp(r.kernel_version, "6.12.9-crashlab ", 16) && r.kernel_key && strlen(r.kernel_key) == 64 &&
			      !strcmp(r.workload_file, "seed.wl") && !strcmp(r.workload_text, workload) &&
			      !strcmp(r.crash_mode, "flush") && r.seed == 0 && r.max_states == 0 && r.torn == 0,
		      "%s: run 1 as it was stored: times, status, command, kernel, workload text, crash mode", name);
		run_info_free(&r);
		CHECK(crashdb_read_run(db, 2, &r, &e) == 0 && !strcmp(r.status, "failed") && r.has_exit &&
			      r.exit_code == EXIT_PANIC && strstr(r.cmdline, "--mount-opts ext4:data=journal"),
		      "%s: run 2 failed with the panic's exit code %d (%d)", name, EXIT_PANIC, r.exit_code);
		run_info_free(&r);

		struct fsrun *fv;
		size_t nf;
		CHECK(crashdb_read_fsruns(db, 1, NULL, &fv, &nf, &e) == 0 && nf == 2, "%s: run 1 has two fs runs", name);
		for (size_t k = 0; k < nf && k < 2; k++) {
			const struct fsrun *f = &fv[k];
			const struct fs_want *w = &run1_fs[k];
			char *base = xasprintf("images/%s-536870912.img", w->fs);
			char *log = xasprintf("runs/1/%s.log", w->fs);
			CHECK(!strcmp(f->fs, w->fs) && f->run_id == 1 && !strcmp(f->base_image, base) &&
				      !strcmp(f->log_path, log) && f->image_size == 536870912 && f->setup_end == 3 &&
				      !strcmp(f->outcome, "ok") && !f->error && f->record_ms == 2345.5 &&
				      strstr(f->qemu_cmdline, "-no-reboot") && (!f->mkfs_opts || !*f->mkfs_opts) &&
				      (!f->mount_opts || !*f->mount_opts),
			      "%s: fs run %s: image, log file, setup end, outcome, recording time", name, w->fs);
			CHECK(f->log.entries == 7 && f->log.committed == 7 && f->log.flushes == 3 && f->log.writes == 4 &&
				      f->log.discards == 0 && f->log.bytes == 2048 && !f->log.truncated,
			      "%s: fs run %s: the write log's summary", name, w->fs);
			check_ops(name, f, w);
			check_run1_states(db, name, f, w);
			free(base);
			free(log);
		}
		crashdb_fsruns_free(fv, nf);

		CHECK(crashdb_read_fsruns(db, 2, NULL, &fv, &nf, &e) == 0 && nf == 2, "%s: run 2 has two fs runs", name);
		if (nf == 2) {
			CHECK(!strcmp(fv[0].fs, "ext4") && !strcmp(fv[0].mount_opts, "data=journal") &&
				      !strcmp(fv[0].outcome, "ok") && fv[0].ops.n == 7,
			      "%s: run 2's ext4 with its mount options, recorded", name);
			CHECK(!strcmp(fv[1].fs, "xfs") && !strcmp(fv[1].outcome, "panic") && fv[1].error &&
				      strstr(fv[1].error, "the guest failed while mounting") && fv[1].ops.n == 0 &&
				      !fv[1].res && fv[1].log.entries == 0,
			      "%s: run 2's xfs: the recording guest panicked; no ops, no log (%s)", name,
			      fv[1].error ? fv[1].error : "no error");
			struct state_result *sv;
			size_t ns;
			CHECK(crashdb_read_states(db, fv[1].id, CRASHDB_TREE | CRASHDB_VERDICTS, &sv, &ns, &e) == 0 && ns == 0,
			      "%s: xfs has no states", name);
			crashdb_states_free(sv, ns);
			CHECK(crashdb_read_states(db, fv[0].id, CRASHDB_TREE, &sv, &ns, &e) == 0 && ns == 3, "%s: ext4 has 3",
			      name);
			if (ns == 3) {
				const struct state_result *s = &sv[2];
				CHECK(!s->check.mount_ok && s->check.mount_msg &&
					      strstr(s->check.mount_msg, "Structure needs cleaning") &&
					      s->check.fsck_status == 4 && !s->check.fsck_clean &&
					      strstr(s->check.fsck_output, "Journal transaction 7 is corrupt") &&
					      s->check.n_nodes == 0 && s->n_nodes == 0 && !s->check.tree_hash[0] &&
					      s->check.ms_capture == 0,
				      "%s: run 2's ext4 state 2 did not mount: its message, fsck status and output, no tree",
				      name);
				CHECK(sv[0].check.mount_ok && sv[0].check.n_nodes == 2 && sv[1].check.n_nodes == 2,
				      "%s: its states 0 and 1 did", name);
			}
			crashdb_states_free(sv, ns);
		}
		crashdb_fsruns_free(fv, nf);
		CHECK(crashdb_read_fsruns(db, 2, "f2fs", &fv, &nf, &e) < 0 && strstr(e.msg, "it has: ext4, xfs"),
		      "%s: a file system run 2 does not have is named with those it has: %s", name, e.msg);
		crashdb_close(db);
	}
}

/* ---- verdicts ---- */

static const struct verdict *find_verdict(const struct state_result *s, int model, const char *rule,
					  enum verdict_kind kind, int op, const char *path)
{
	for (size_t k = 0; k < s->judge.n; k++) {
		const struct verdict *v = &s->judge.v[k];
		if (v->model == model && !strcmp(v->rule, rule) && v->kind == kind && v->op == op &&
		    (!path || !strcmp(v->path, path)))
			return v;
	}
	return NULL;
}

/* The scenario's verdicts, whoever judged it. */
static void check_verdicts(struct crashdb *db, const char *name, const char *who)
{
	struct errbuf e;
	for (int64_t run = 1; run <= 2; run++) {
		struct fsrun *fv;
		size_t nf;
		if (crashdb_read_fsruns(db, run, NULL, &fv, &nf, &e) < 0 || nf != 2) {
			CHECK(0, "%s: run %lld's fs runs: %s", name, (long long)run, e.msg);
			continue;
		}
		for (size_t k = 0; k < nf; k++) {
			const struct fsrun *f = &fv[k];
			if (!f->res)
				continue; /* xfs: nothing was recorded */
			struct state_result *sv;
			size_t ns;
			if (crashdb_read_states(db, f->id, CRASHDB_VERDICTS, &sv, &ns, &e) < 0 || ns != 3) {
				CHECK(0, "%s: run %lld %s: states: %s", name, (long long)run, f->fs, e.msg);
				continue;
			}
			char *models = xasprintf("posix,%s", !strcmp(f->fs, "f2fs") ? "f2fs-posix" : f->fs);
			CHECK(f->models && !strcmp(f->models, models), "%s: run %lld %s: %s judged for %s (%s)", name,
			      (long long)run, f->fs, who, models, f->models ? f->models : "none");
			free(models);
			int judged = 1;
			for (size_t s = 0; s < ns; s++)
				judged = judged && sv[s].judge.judged && sv[s].judge.n > 0 && sv[s].judge.marks;
			CHECK(judged, "%s: run %lld %s: every state %s judged, with verdicts and a timeline", name,
			      (long long)run, f->fs, who);
			CHECK(sv[0].judge.explained && sv[0].judge.setup_state && !strcmp(sv[0].judge.marks, "sss--x.") &&
				      find_verdict(&sv[0], MODEL_UNIVERSAL, "U3", V_KEPT, 0, NULL),
			      "%s: run %lld %s: state 0 is the setup state (%s)", name, (long long)run, f->fs,
			      sv[0].judge.marks ? sv[0].judge.marks : "no marks");
			CHECK(sv[1].judge.explained && !sv[1].judge.setup_state && !strcmp(sv[1].judge.marks, "sss+-x.") &&
				      find_verdict(&sv[1], MODEL_POSIX, "unpromised", V_BONUS, 4, "A/bar"),
			      "%s: run %lld %s: state 1 kept the rename, which POSIX did not promise (a bonus)", name,
			      (long long)run, f->fs);
			if (run == 1) {
				const struct verdict *v = find_verdict(&sv[2], MODEL_POSIX, "fsync.file", V_KEPT, 5, "A/foo");
				CHECK(sv[2].judge.explained && !strcmp(sv[2].judge.marks, "sss++x.") && v && v->trigger == 7 &&
					      strstr(v->reason, "fsync A/foo") && v->cite[0],
				      "%s: run 1 %s: state 2 kept what fsync promised, with the reason and where it is written",
				      name, f->fs);
				int clean = 1;
				for (size_t s = 0; s < ns; s++)
					clean = clean && !sv[s].judge.count[MODEL_POSIX][V_LOST] &&
						!sv[s].judge.count[MODEL_UNIVERSAL][V_BROKEN];
				CHECK(clean, "%s: run 1 %s: nothing LOST, nothing broken", name, f->fs);
			} else {
				const struct verdict *v = find_verdict(&sv[2], MODEL_UNIVERSAL, "U1", V_BROKEN, 0, NULL);
				CHECK(!sv[2].judge.explained && strstr(sv[2].judge.diff, "did not mount") && v,
				      "%s: run 2 ext4: the state that did not mount breaks U1", name);
			}
			crashdb_states_free(sv, ns);
		}
		crashdb_fsruns_free(fv, nf);
	}
}

TEST(verdicts)
{
	for (size_t i = 0; i < fixtures.n; i++) {
		const char *name = fixtures.v[i];
		char *p = unpack(i, "verdicts");
		struct crashdb *db = open_copy(p, name);
		if (!db) {
			free(p);
			continue;
		}
		int64_t unjudged = crashdb_unjudged(db, 1) + crashdb_unjudged(db, 2);
		CHECK(unjudged == 0 || unjudged == 9, "%s: judged throughout or not at all (%lld unjudged)", name,
		      (long long)unjudged);
		struct errbuf e;
		if (unjudged) {
			/* From before the judge: no verdicts; judging them now gives the scenario's. */
			CHECK(dbkit_int(p, "SELECT count(*) FROM verdicts") == 0 &&
				      dbkit_int(p, "SELECT count(*) FROM fsruns WHERE models IS NOT NULL") == 0,
			      "%s: no verdicts, no models yet", name);
			size_t n1 = 0, n2 = 0;
			CHECK(crashdb_judge_run(db, 1, 0, &n1, &e) == 0 && crashdb_judge_run(db, 2, 0, &n2, &e) == 0 &&
				      n1 == 6 && n2 == 3,
			      "%s: judging the runs judges their 6 and 3 states (%zu, %zu)", name, n1, n2);
			check_verdicts(db, name, "now");
		} else {
			check_verdicts(db, name, "when it was stored");
			size_t n = 1;
			CHECK(crashdb_judge_run(db, 1, 0, &n, &e) == 0 && n == 0, "%s: nothing left to judge", name);
		}
		crashdb_close(db);
		expect_sound(p, name, "after judging");
		free(p);
	}
}

/* ---- the views, as processes ---- */

static void view(const char *name, const char *db, const char *args, int code, const char *const *want, size_t nwant)
{
	struct sbuf out = SBUF_INIT;
	char *a = xasprintf("%s --db '%s'", args, db);
	int rc = dbkit_run(a, &out);
	int ok = rc == code;
	const char *missing = NULL;
	for (size_t k = 0; ok && k < nwant; k++)
		if (!strstr(out.buf, want[k])) {
			missing = want[k];
			ok = 0;
		}
	CHECK(ok, "%s: crashlab %s exits %d (%d)%s%s%s", name, args, code, rc, missing ? ", but lacks \"" : "",
	      missing ? missing : "", missing ? "\"" : "");
	if (!ok) {
		char *l = out.buf, *nl;
		for (int k = 0; l && *l && k < 20; k++, l = nl ? nl + 1 : NULL) {
			nl = strchr(l, '\n');
			printf("#   %.*s\n", nl ? (int)(nl - l) : (int)strlen(l), l);
		}
	}
	free(a);
	sbuf_free(&out);
}

#define VIEW(name, db, args, code, ...)                                                         \
	do {                                                                                    \
		static const char *const want_[] = { __VA_ARGS__ };                            \
		view(name, db, args, code, want_, ARRAY_SIZE(want_));                           \
	} while (0)

TEST(views_on_the_migrated_copy)
{
	if (access(dbkit_crashlab(), X_OK) != 0)
		SKIP("%s is not built; the views need it", dbkit_crashlab());
	for (size_t i = 0; i < fixtures.n; i++) {
		const char *name = fixtures.v[i];
		char *p = unpack(i, "views");
		int64_t unjudged = dbkit_int(p, "SELECT count(*) FROM states WHERE judged = 0");
		if (unjudged == -999)
			unjudged = 9; /* no judge columns yet: nothing was judged */
		/* The first view migrates the file. */
		VIEW(name, p, "list", 0, "ext4,f2fs", "ext4,xfs", "ext4:data=journal", "failed", "6.12.9-crashlab");
		CHECK(dbkit_int(p, "PRAGMA user_version") == current, "%s: crashlab list migrated the copy to version %d",
		      name, current);
		VIEW(name, p, "show 1", 0, "crashlab run --fs ext4,f2fs seed.wl", "== ext4 (fs run 1)", "== f2fs (fs run 2)",
		     "rename A/foo A/bar", "-1 ENOENT", "7 entries (7 committed), 3 flushes, 4 writes");
		VIEW(name, p, "show 1 f2fs 2", 0, "spec      prefix=7", "A/bar  \"hello\"", "A/foo  \"world\"");
		VIEW(name, p, "show --format json 1 ext4 1", 0, "\"A/bar\"", "prefix=5");
		VIEW(name, p, "show last ext4 2", 0, "Structure needs cleaning", "Journal transaction 7 is corrupt");
		VIEW(name, p, "show 2 xfs 0", EXIT_NOINPUT, "it has no states");
		if (unjudged) {
			VIEW(name, p, "report 1", 0, "not judged yet", "have no verdicts yet");
			VIEW(name, p, "judge 1", 0, "run 1: 6 states judged");
			VIEW(name, p, "judge last", 0, "run 2: 3 states judged");
		} else {
			VIEW(name, p, "judge 1", 0, "run 1: 0 states judged");
		}
		VIEW(name, p, "report 1", 0, "== ext4: models posix, ext4", "0 LOST, 0 broken",
		     "state 1 (flush, ops up to 6 completed): explained");
		VIEW(name, p, "report 2 --all", 0, "mount options data=journal", "did not mount; 0 LOST, 1 broken",
		     "NOT FINISHED: outcome panic");
		VIEW(name, p, "report --format json 2", 0, "\"fs\"", "\"U1\"");
		VIEW(name, p, "list", 0, "ok                  0", "failed              1");
		expect_sound(p, name, "after the views and judge ran on it");
		free(p);
	}
}

__attribute__((constructor(101))) static void setup(void)
{
	dir = cmd_tmpdir("migrate");
	msg_configure(0, 1);
	dbkit_fixtures(&fixtures);
	current = crashdb_schema_version();
}

__attribute__((destructor)) static void teardown(void)
{
	strvec_free(&fixtures);
	if (dir)
		rm_rf(dir);
}

TEST_MAIN()
