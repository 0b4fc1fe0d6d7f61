/*
 * runner.c - the run loop (see runner.h).
 *
 * Method. A fs run is stored in three steps, so that a reader always sees
 * something consistent: fsrun_begin when it starts (outcome "running"),
 * one state at a time as each is checked and judged, and fsrun_end when
 * it is over, with everything that is known only then (the recording, the
 * log summary, the op results, the models, the outcome). The judge
 * simulates the workload once, with the guest's op results, and then
 * judges each state right after it is checked; nothing here reaches the
 * store except through the sink.
 *
 * A state that takes the checker guest down (a panic or a hang while
 * mounting, capturing or unmounting it) is a finding about that state: it
 * is handed on as a state that did not mount, with the guest's last words
 * and its console log, judged as such (U1 broken), and checking goes on in
 * a fresh guest. Two such states in a row mean the guest itself is the
 * problem: the fs run ends with the guest's outcome.
 */
#include "engine/runner.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/hmap.h"
#include "core/wlog.h"
#include "host/hash.h"
#include "host/intr.h"
#include "host/msg.h"
#include "host/progress.h"
#include "judge/judge.h"

static char *dupz(const char *s)
{
	return s ? xstrdup(s) : NULL;
}

static void set_str(char **field, const char *value)
{
	free(*field);
	*field = dupz(value);
}

struct rec_progress {
	struct progress *bar;
};

static void rec_progress_cb(void *ctx, size_t done, size_t total, const char *what)
{
	struct rec_progress *rp = ctx;
	(void)total;
	if (rp->bar)
		progress_update(rp->bar, done, what);
}

/* The distinct observed trees of a fs run, by their hash. */
struct trees {
	struct strvec hashes;
	struct hmap map;
};

static int same_hash(const void *key, size_t idx, void *ctx)
{
	return !strcmp(key, ((const struct trees *)ctx)->hashes.v[idx]);
}

static void trees_add(struct trees *t, const char *hash)
{
	uint64_t h = fnv1a64(hash, strlen(hash));
	if (hmap_get(&t->map, h, same_hash, hash, t) != HMAP_NONE)
		return;
	hmap_put(&t->map, h, t->hashes.n);
	strvec_push(&t->hashes, hash);
}

/* Judge once (run_params.dedup): the judgement of each distinct input to
 * judge_state, by its key (judge_key). Bounded: past JCACHE_MAX bytes of
 * judgements new inputs are judged without being kept. */
#define JCACHE_MAX (32u << 20)
struct jcache {
	struct strvec keys;
	struct judgement *j;
	size_t n, cap, bytes;
	struct hmap map;
};

static int same_jkey(const void *key, size_t idx, void *ctx)
{
	return !strcmp(key, ((const struct jcache *)ctx)->keys.v[idx]);
}

static void jcache_free(struct jcache *c)
{
	for (size_t i = 0; i < c->n; i++)
		judgement_free(&c->j[i]);
	free(c->j);
	strvec_free(&c->keys);
	hmap_free(&c->map);
	memset(c, 0, sizeof(*c));
}

/* Everything one fs run's loop shares. */
struct fsloop {
	const struct run_params *p;
	const struct fs_params *f;
	const struct sink *sink;
	struct fsrun fr;
	struct fs_summary *sum;
	struct judge_run jr;
	struct trees trees;
	uint64_t last_flush;       /* the point of the last flush state: just after the log's last flush */
	struct wlog_key *keys;     /* per state its content key; NULL: every state is checked */
	struct jcache jc;          /* judge once */
};

static void fail_fs(struct fsloop *L, const char *outcome, int code, const char *msg)
{
	set_str(&L->fr.outcome, outcome);
	set_str(&L->fr.error, msg);
	snprintf(L->sum->outcome, sizeof(L->sum->outcome), "%s", outcome);
	snprintf(L->sum->error, sizeof(L->sum->error), "%s", msg);
	L->sum->exit_code = code;
}

/* Count a judged state in the fs run's summary. */
static void account_state(struct fsloop *L, const struct state_result *st)
{
	struct fs_summary *sum = L->sum;
	if (st->judge.judged) {
		sum->judged++;
		sum->unexplained += st->check.mount_ok && !st->judge.explained;
		for (int m = 0; m <= MODEL_COUNT; m++)
			for (int k = 0; k < V_COUNT; k++)
				sum->verdicts[m][k] += st->judge.count[m][k];
	}
	sum->states++;
	sum->mount_fail += !st->check.mount_ok;
	sum->fsck_fail += !st->check.fsck_clean;
	if (st->check.mount_ok)
		trees_add(&L->trees, st->check.tree_hash);
}

/*
 * The key of everything judge_state reads of a state (judge/judge.c,
 * judge/verdicts.c, judge/universal.c, judge/expect.c): the fs run's
 * simulation and op results are the loop's own; of the check report the
 * mount outcome, fsck's status and verdict and the observed tree, every
 * field of every node (tree_node_format writes them all, in order); of the
 * point only which ops completed (res[k].log_pos <= point: the judge
 * compares it with nothing else). The set of completed ops is a prefix
 * when log_pos grows with the ops, which a recording makes, but not in
 * general (the lab leaves ops it never ran at log_pos 0), so the key holds
 * the set itself. Kind, spec, index and times are not read by the judge.
 * SHA-256 of all that, hex.
 */
static void judge_key(const struct fsloop *L, const struct state_result *st, char out[65])
{
	const struct check_report *c = &st->check;
	struct hasher *h = hasher_new();
	char head[96];
	snprintf(head, sizeof(head), "%d %d %d %zu\n", c->mount_ok, c->fsck_status, c->fsck_clean, c->n_nodes);
	hasher_adds(h, head);
	for (size_t i = 0; i < c->n_nodes; i++) {
		char *line = tree_node_format(&c->nodes[i]);
		hasher_adds(h, line);
		free(line);
	}
	size_t nops = L->fr.ops.n;
	char *done = xmalloc(nops + 1);
	for (size_t k = 0; k < nops; k++)
		done[k] = L->jr.res[k].log_pos <= st->point ? '1' : '0';
	done[nops] = '\0';
	hasher_adds(h, done);
	free(done);
	hasher_done(h, out);
}

/* Judge a state, or copy the judgement of a state judged with the same input. */
static void judge(struct fsloop *L, struct state_result *st)
{
	if (!L->p->dedup) {
		judge_state(&L->jr, &st->check, st->point, &st->judge);
		return;
	}
	struct jcache *c = &L->jc;
	char key[65];
	judge_key(L, st, key);
	uint64_t h = fnv1a64(key, 16);
	size_t i = hmap_get(&c->map, h, same_jkey, key, c);
	if (i != HMAP_NONE) {
		judgement_copy(&st->judge, &c->j[i]);
		L->sum->judged_once++;
		return;
	}
	judge_state(&L->jr, &st->check, st->point, &st->judge);
	size_t bytes = sizeof(*c->j) + st->judge.n * sizeof(*st->judge.v) + 65;
	if (c->bytes + bytes > JCACHE_MAX)
		return;
	ALLOC_GROW(c->j, c->n + 1, c->cap);
	judgement_copy(&c->j[c->n], &st->judge);
	strvec_push(&c->keys, key);
	hmap_put(&c->map, h, c->n);
	c->n++;
	c->bytes += bytes;
}

/* Judge a checked state, count it, and hand it to the sink. */
static int finish_state(struct fsloop *L, struct state_result *st, struct errbuf *e)
{
	judge(L, st);
	st->n_nodes = (int64_t)st->check.n_nodes;
	account_state(L, st);
	if (L->sink->state && L->sink->state(L->sink->ctx, &L->fr, st, e) < 0)
		return -1;
	return 0;
}

/* The state stored before a resumed run stopped with this index, or NULL. */
static const struct state_result *stored_state(const struct fsloop *L, int idx)
{
	const struct fs_resume *r = L->f->resume;
	for (size_t i = 0; r && i < r->ndone; i++)
		if (r->done[i].idx == idx)
			return &r->done[i];
	return NULL;
}

static void interrupted_fs(struct fsloop *L, const char *during)
{
	char msg[160];
	snprintf(msg, sizeof(msg), "interrupted (%s) %s", strsignal(intr_pending() ? intr_pending() : SIGINT), during);
	fail_fs(L, "interrupted", intr_pending() ? intr_exit_code() : 130, msg);
}

/* The highest [run] op completed at point. */
static int last_completed(const struct fsrun *fr, uint64_t point)
{
	int last = 0;
	for (size_t k = 0; k < fr->ops.n; k++)
		if (fr->ops.ops[k].section == WL_RUN && fr->res[k].log_pos <= (int64_t)point)
			last = fr->ops.ops[k].id;
	return last;
}


/*
 * Deduplication before checking (run_params.dedup): the states with equal
 * content keys form a group, named by its first state; the first of a group
 * that gets a whole check report (a checked state, or one stored before a
 * resumed run stopped whose report was read whole) is its source, and every
 * later state of the group gets a copy of that report instead of a check.
 * A source is kept only while a later state of its group is to come.
 */
struct dedup {
	size_t *group;                  /* per state: the index of its group's first state */
	size_t *last;                   /* per group: the index of its last state */
	struct check_report **src;      /* per group: the report to copy, or NULL */
	char *owned;                    /* per group: src is a copy of ours to free */
	struct hmap map;
};

static int same_key(const void *key, size_t idx, void *ctx)
{
	return wlog_key_equal(key, &((const struct wlog_key *)ctx)[idx]);
}

static void dedup_init(struct dedup *d, const struct wlog_key *keys, size_t n)
{
	memset(d, 0, sizeof(*d));
	if (!keys)
		return;
	d->group = xcalloc(n ? n : 1, sizeof(*d->group));
	d->last = xcalloc(n ? n : 1, sizeof(*d->last));
	d->src = xcalloc(n ? n : 1, sizeof(*d->src));
	d->owned = xcalloc(n ? n : 1, 1);
	for (size_t i = 0; i < n; i++) {
		uint64_t h = keys[i].a;
		size_t g = hmap_get(&d->map, h, same_key, &keys[i], (void *)keys);
		if (g == HMAP_NONE) {
			hmap_put(&d->map, h, i);
			g = i;
		}
		d->group[i] = g;
		d->last[g] = i;
	}
}

/* State i is done: its group's source goes when no later state needs it. */
static void dedup_done(struct dedup *d, size_t i)
{
	if (!d->group)
		return;
	size_t g = d->group[i];
	if (d->last[g] == i && d->src[g]) {
		if (d->owned[g]) {
			check_report_free(d->src[g]);
			free(d->src[g]);
		}
		d->src[g] = NULL;
	}
}

static void dedup_free(struct dedup *d, size_t n)
{
	for (size_t g = 0; d->src && g < n; g++)
		if (d->src[g] && d->owned[g]) {
			check_report_free(d->src[g]);
			free(d->src[g]);
		}
	free(d->group);
	free(d->last);
	free(d->src);
	free(d->owned);
	hmap_free(&d->map);
	memset(d, 0, sizeof(*d));
}

/* Does a stored state have the whole report a copy needs: a real check
 * (not a checker guest that went down on it) with its tree read back? */
static int report_whole(const struct state_result *s)
{
	const struct check_report *c = &s->check;
	if (c->mount_msg && !strncmp(c->mount_msg, "checker guest: ", 15))
		return 0;
	return c->n_nodes == (size_t)s->n_nodes && (c->n_nodes == 0 || c->nodes) && c->fsck_output;
}

/*
 * Check every state in checker guests, judging and storing each. 0, or -1
 * when the sink failed (e set); a guest or checker failure ends the fs run
 * through fail_fs.
 */
static int check_states(struct fsloop *L, const struct crash_state *states, size_t nstates, struct errbuf *e)
{
	const struct run_params *p = L->p;
	const struct backend *b = p->backend;
	const char *fs = L->f->fs;
	char title[64];
	snprintf(title, sizeof(title), "%s: checking", fs);
	struct progress *bar = p->quiet ? NULL : progress_start(title, nstates);
	struct checker_opts co = { p->guest, fs, L->fr.base_image, L->fr.log_path, L->f->mount_opts, p->w->overlay };
	struct checker *ck = NULL;
	struct errbuf ce;
	errbuf_clear(&ce);
	enum vm_outcome o = b->checker_start(b, &co, &ck, &ce);
	int guest_failures = 0; /* consecutive states that took the checker guest down */
	int r = 0, refused = 0;
	size_t checked = 0;
	struct dedup dd;
	dedup_init(&dd, L->keys, nstates);
	L->sum->built = nstates;
	for (size_t i = 0; i < nstates && o == VM_OK && r == 0; i++) {
		const struct crash_state *cs = &states[i];
		const struct state_result *old = stored_state(L, cs->idx);
		size_t g = dd.group ? dd.group[i] : 0;
		if (old) {
			/* checked before the run stopped: the log must give the same state */
			if (strcmp(old->spec, cs->text)) {
				char *msg = xasprintf("cannot resume: stored crash state %d is '%s', the write log now gives '%s'",
						      cs->idx, old->spec, cs->text);
				fail_fs(L, "error", EXIT_DATAERR, msg);
				free(msg);
				break;
			}
			account_state(L, old);
			L->sum->resumed++;
			if (dd.group && !dd.src[g] && report_whole(old))
				dd.src[g] = (struct check_report *)&old->check; /* borrowed from the resume */
			dedup_done(&dd, i);
			checked++;
			continue;
		}
		if (intr_pending()) {
			o = VM_INTERRUPTED;
			break;
		}
		char step[96];
		snprintf(step, sizeof(step), "state %d (%s), %zu of %zu", cs->idx, cs->kind, i + 1, nstates);
		if (bar)
			progress_update(bar, i, step);
		struct state_result st = { .idx = cs->idx, .kind = xstrdup(cs->kind), .spec = xstrdup(cs->text),
					   .point = (int64_t)cs->point,
					   .last_completed_op = last_completed(&L->fr, cs->point) };
		if (dd.group && dd.src[g]) {
			/* the same disk as a state checked before: its report, no time claimed twice */
			struct check_report *c = &st.check;
			check_report_copy(c, dd.src[g]);
			c->bytes = 0;
			c->ms_replay = c->ms_mount = c->ms_capture = c->ms_fsck = c->ms_other = c->ms_host = 0;
			L->sum->deduplicated++;
			r = finish_state(L, &st, e);
			state_result_free(&st);
			dedup_done(&dd, i);
			checked++;
			continue;
		}
		o = b->check(ck, cs->text, &st.check, &ce);
		if (o == VM_INTERRUPTED) {
			state_result_free(&st);
			break;
		}
		if (o != VM_OK && guest_failures < 2) {
			/* The state itself took the guest down: a finding about the
			 * state, stored as a failed mount; a fresh guest goes on. */
			char *log = xasprintf("%s/%s-state%d-console.log", p->workdir, fs, cs->idx);
			b->checker_stop(ck, 1, log);
			warning("%s: crash state %d: %s; console log '%s'", fs, cs->idx, ce.msg, log);
			check_report_free(&st.check);
			st.check.mount_msg = xasprintf("checker guest: %s (console log '%s')", ce.msg, log);
			st.check.fsck_status = -1;
			st.check.fsck_output = xstrdup("");
			free(log);
			L->sum->checked++;
			r = finish_state(L, &st, e);
			state_result_free(&st);
			dedup_done(&dd, i);
			checked++;
			guest_failures++;
			o = b->checker_start(b, &co, &ck, &ce);
			continue;
		}
		if (o != VM_OK) {
			state_result_free(&st);
			break;
		}
		guest_failures = 0;
		if (ce.code) {
			/* The checker refused the state, or answered what cannot be
			 * read: the fs run cannot go on, and that guest is not asked
			 * to power off. */
			char *msg = xasprintf("crash state %d: %s", cs->idx, ce.msg);
			state_result_free(&st);
			fail_fs(L, "error", EXIT_GUEST, msg);
			free(msg);
			refused = 1;
			break;
		}
		L->sum->checked++;
		if (dd.group && dd.last[g] > i && !dd.src[g]) {
			dd.src[g] = xmalloc(sizeof(*dd.src[g]));
			check_report_copy(dd.src[g], &st.check);
			dd.owned[g] = 1;
		}
		r = finish_state(L, &st, e);
		state_result_free(&st);
		dedup_done(&dd, i);
		checked++;
	}
	dedup_free(&dd, nstates);
	/* every checker guest's console stays with the fs run */
	char *console = xasprintf("%s/%s.check-console.log", p->workdir, fs);
	if (o == VM_INTERRUPTED) {
		progress_abort(bar);
		bar = NULL;
		b->checker_stop(ck, 1, console);
		char during[96];
		snprintf(during, sizeof(during), "after %zu of %zu crash states", checked, nstates);
		interrupted_fs(L, during);
	} else if (o != VM_OK) {
		progress_abort(bar);
		bar = NULL;
		b->checker_stop(ck, 1, console);
		char *msg = xasprintf("checker guest: %s", ce.msg);
		fail_fs(L, vm_outcome_name(o), vm_outcome_exit(o), msg);
		free(msg);
	} else {
		b->checker_stop(ck, refused, console);
	}
	free(console);
	if (bar)
		progress_done(bar, NULL);
	return r;
}

/* A power cut now (run_params.cut_now): keep the final state, the last
 * flush's and, with cut_since_op >= 0, those in which that op had completed;
 * renumber them. */
static void cut_now(struct fsloop *L, struct crash_state *st, size_t *n)
{
	size_t k = 0;
	for (size_t i = 0; i < *n; i++) {
		int keep = !strcmp(st[i].kind, "final") || st[i].point >= L->last_flush ||
			   (L->p->cut_since_op >= 0 && last_completed(&L->fr, st[i].point) >= L->p->cut_since_op);
		if (!keep) {
			wlog_spec_free(&st[i].spec);
			free(st[i].text);
			continue;
		}
		st[k] = st[i];
		st[k].idx = (int)k;
		k++;
	}
	*n = k;
}

/* The content key of every state (L->keys), or none when they cannot be
 * made (then every state is checked, as with dedup off). */
static void content_keys(struct fsloop *L, struct wlog *log, const struct crash_state *st, size_t n)
{
	double t0 = now_s();
	struct errbuf ke;
	struct wlog_keyer *k;
	if (wlog_keyer_new(log, &k, &ke) < 0) {
		warning("%s: every crash state is checked: no content keys: %s", L->f->fs, ke.msg);
		return;
	}
	L->keys = xcalloc(n ? n : 1, sizeof(*L->keys));
	for (size_t i = 0; i < n; i++)
		if (wlog_state_key(k, &st[i].spec, &L->keys[i], &ke) < 0) {
			warning("%s: every crash state is checked: no content key for state %d: %s", L->f->fs, st[i].idx,
				ke.msg);
			free(L->keys);
			L->keys = NULL;
			break;
		}
	wlog_keyer_free(k);
	L->sum->key_ms = (now_s() - t0) * 1000;
	if (msg_verbose())
		note("%s: content keys of %zu crash states in %.0f ms (%.0f MiB of write log read)", L->f->fs, n,
		     L->sum->key_ms, (double)log->file_size / (1 << 20));
}

/* The recording's write log: its summary and its crash states. 0, or the exit code of a failure (fail_fs done). */
static int read_log(struct fsloop *L, struct crash_state **states, size_t *nstates)
{
	const struct run_params *p = L->p;
	struct errbuf le;
	int lfd = open(L->fr.log_path, O_RDONLY | O_CLOEXEC);
	struct wlog log;
	if (lfd < 0) {
		errbuf_errno(&le, errno, "cannot open the write log '%s'", L->fr.log_path);
		fail_fs(L, "error", EXIT_DATAERR, le.msg);
		return EXIT_DATAERR;
	}
	if (wlog_open(&log, lfd, &le) < 0) {
		close(lfd);
		errbuf_prefix(&le, "write log '%s'", L->fr.log_path);
		fail_fs(L, "error", EXIT_DATAERR, le.msg);
		return EXIT_DATAERR;
	}
	struct wlog_counts ls;
	wlog_count(&log, 0, log.n, &ls);
	L->last_flush = (uint64_t)L->fr.setup_end;
	for (size_t i = log.n; p->cut_now && i > 0; i--)
		if (log.e[i - 1].flags & WLOG_FLUSH) {
			if (i > L->last_flush)
				L->last_flush = i;
			break;
		}
	L->fr.log = (struct log_summary){ (int64_t)log.n, (int64_t)log.committed, (int64_t)ls.flushes,
					  (int64_t)ls.writes, (int64_t)ls.discards, (int64_t)ls.bytes_written,
					  log.dropped };
	int rc = 0;
	if (states_enumerate(&log, (uint64_t)L->fr.setup_end, p->mode, p->seed, p->max_states, p->torn, states, nstates,
			     &le) < 0) {
		errbuf_prefix(&le, "crash states");
		fail_fs(L, "error", EXIT_DATAERR, le.msg);
		rc = EXIT_DATAERR;
	}
	if (!rc && p->cut_now)
		cut_now(L, *states, nstates);
	if (!rc && p->dedup)
		content_keys(L, &log, *states, *nstates);
	wlog_close(&log);
	close(lfd);
	return rc;
}

/* The exit code a stored fs run's outcome stands for (a finished fs run
 * counted again by a resumed run). */
static int outcome_exit(const char *outcome)
{
	static const enum vm_outcome vo[] = { VM_PANIC, VM_TIMEOUT, VM_NO_OUTPUT, VM_LOST, VM_QEMU_FAILED };
	if (!outcome || !strcmp(outcome, "ok"))
		return 0;
	for (size_t i = 0; i < sizeof(vo) / sizeof(vo[0]); i++)
		if (!strcmp(outcome, vm_outcome_name(vo[i])))
			return vm_outcome_exit(vo[i]);
	return EXIT_GUEST;
}

/* A fs run that had ended before the run was resumed: count what it stored. */
static int count_finished(struct fsloop *L)
{
	const struct fs_resume *r = L->f->resume;
	struct errbuf me;
	if (r->fr->models && models_select(r->fr->models, NULL, NULL, NULL, &L->sum->models, &me) < 0)
		L->sum->models = 0;
	for (size_t i = 0; i < r->ndone; i++)
		account_state(L, &r->done[i]);
	L->sum->built = L->sum->resumed = r->ndone;
	snprintf(L->sum->outcome, sizeof(L->sum->outcome), "%s", r->fr->outcome ? r->fr->outcome : "ok");
	snprintf(L->sum->error, sizeof(L->sum->error), "%s", r->fr->error ? r->fr->error : "");
	L->sum->exit_code = outcome_exit(r->fr->outcome);
	L->sum->ms = r->fr->record_ms + r->fr->check_ms;
	L->sum->distinct = L->trees.hashes.n;
	strvec_free(&L->trees.hashes);
	hmap_free(&L->trees.map);
	return L->sum->exit_code;
}

/* Record the workload, or take the stored recording of a resumed fs run. 1 when there is one. */
static int recording_get(struct fsloop *L, struct recording *rec)
{
	const struct run_params *p = L->p;
	const struct fs_params *f = L->f;
	struct fsrun *fr = &L->fr;
	const struct wl_workload *w = p->w;
	if (f->resume) {
		const struct fsrun *old = f->resume->fr;
		memset(rec, 0, sizeof(*rec));
		rec->log_path = xstrdup(old->log_path);
		rec->base = xstrdup(old->base_image);
		rec->qemu_cmdline = old->qemu_cmdline ? xstrdup(old->qemu_cmdline) : NULL;
		rec->setup_end = old->setup_end;
		rec->ms = old->record_ms;
		rec->res = xcalloc(w->n ? w->n : 1, sizeof(*rec->res));
		if (old->res && old->ops.n == w->n)
			memcpy(rec->res, old->res, w->n * sizeof(*rec->res));
		fr->id = old->id;
		fr->error = xstrdup(""); /* the stop that ended it before is over */
		return 1;
	}
	char title[64];
	snprintf(title, sizeof(title), "%s: recording", f->fs);
	struct rec_progress rp = { p->quiet ? NULL : progress_start(title, w->n + 1) };
	struct record_opts ro = {
		.fs = f->fs, .mkfs_opts = f->mkfs_opts, .mount_opts = f->mount_opts, .size = p->size, .w = w,
		.guest = p->guest, .nr_fbarrier = p->nr_fbarrier, .nr_fdatabarrier = p->nr_fdatabarrier,
		.workdir = p->workdir, .progress = rec_progress_cb, .ctx = &rp,
	};
	int recorded = p->backend->record(p->backend, &ro, rec) == 0;
	if (recorded)
		progress_done(rp.bar, NULL);
	else
		progress_abort(rp.bar);
	return recorded;
}

int runner_fs(const struct run_params *p, const struct fs_params *f, const struct run_info *run,
	      const struct sink *sink, struct fs_summary *sum, struct errbuf *e)
{
	double t0 = now_s();
	const struct wl_workload *w = p->w;
	struct fsloop L = { .p = p, .f = f, .sink = sink, .sum = sum };
	memset(sum, 0, sizeof(*sum));
	snprintf(sum->fs, sizeof(sum->fs), "%s", f->fs);
	if (f->resume && f->resume->finished)
		return count_finished(&L);
	struct fsrun *fr = &L.fr;
	fr->run_id = run ? run->id : 0;
	fr->fs = xstrdup(f->fs);
	fr->mkfs_opts = xstrdup(f->mkfs_opts ? f->mkfs_opts : "");
	fr->mount_opts = xstrdup(f->mount_opts ? f->mount_opts : "");
	fr->image_size = p->size;
	fr->outcome = xstrdup("running");
	wl_copy(&fr->ops, w);
	wl_expects_for(&fr->ops, f->fs); /* [expect FS...] sections for other file systems go */
	if (!f->resume && sink->fsrun_begin && sink->fsrun_begin(sink->ctx, fr, e) < 0) {
		fsrun_free(fr);
		return -1;
	}

	struct recording rec;
	int recorded = recording_get(&L, &rec);
	set_str(&fr->base_image, rec.base);
	set_str(&fr->log_path, rec.log_path);
	set_str(&fr->qemu_cmdline, rec.qemu_cmdline);
	fr->record_ms = rec.ms;
	fr->setup_end = rec.setup_end;

	int rc = 0, judging = 0, r = 0;
	struct crash_state *states = NULL;
	size_t nstates = 0;
	if (!recorded) {
		if (rec.outcome == VM_INTERRUPTED) {
			interrupted_fs(&L, "while recording");
			rc = sum->exit_code;
			goto end;
		}
		int code = rec.err.code ? rec.err.code : EXIT_GUEST;
		fail_fs(&L, rec.outcome == VM_OK ? "error" : vm_outcome_name(rec.outcome), code, rec.err.msg);
		rc = code;
		goto end;
	}
	fr->res = xcalloc(w->n ? w->n : 1, sizeof(*fr->res));
	if (w->n)
		memcpy(fr->res, rec.res, w->n * sizeof(*rec.res));

	/* The judge: simulate once with the guest's results. */
	judge_run_init(&L.jr, &fr->ops, fr->res);
	judging = 1;
	struct errbuf me;
	if (models_select(p->models, f->fs, f->mount_opts, &fr->ops, &sum->models, &me) < 0)
		sum->models = 0;
	char na_why[256];
	unsigned na = models_inapplicable(&fr->ops, fr->res, sum->models, na_why, sizeof(na_why));
	sum->models &= ~na;
	fr->models = models_join(sum->models);
	if (!L.jr.ok)
		warning("%s: the judge cannot simulate the workload: %s", f->fs, L.jr.err.msg);
	if (L.jr.notes)
		warning("%s: the simulator and the guest disagree: %s", f->fs, L.jr.notes);
	if (na)
		note("%s: %s", f->fs, na_why);
	fr->sim_notes = models_notes(L.jr.notes, na ? na_why : NULL);

	rc = read_log(&L, &states, &nstates);
	if (rc)
		goto end;
	/* From here the run can be resumed: the recording is stored. */
	if (!f->resume && sink->fsrun_recorded && sink->fsrun_recorded(sink->ctx, fr, e) < 0) {
		r = -1;
		goto end;
	}
	r = check_states(&L, states, nstates, e);
	rc = sum->exit_code;
	if (!rc)
		set_str(&fr->outcome, "ok");
	snprintf(sum->outcome, sizeof(sum->outcome), "%s", fr->outcome);
	fr->check_ms = (now_s() - t0) * 1000 - (f->resume ? 0 : rec.ms);
end:
	sum->distinct = L.trees.hashes.n;
	if (r == 0 && sink->fsrun_end && sink->fsrun_end(sink->ctx, fr, e) < 0)
		r = -1;
	states_free(states, nstates);
	free(L.keys);
	jcache_free(&L.jc);
	if (judging)
		judge_run_free(&L.jr);
	/* The overlay is throw-away; the log stays with the run so any state can be rebuilt. */
	if (rec.overlay)
		unlink(rec.overlay);
	recording_free(&rec);
	strvec_free(&L.trees.hashes);
	hmap_free(&L.trees.map);
	fsrun_free(fr);
	sum->ms = (now_s() - t0) * 1000;
	return r < 0 ? -1 : rc;
}

int runner_run_status(const struct fs_summary *sums, size_t n, int rc, struct run_info *run)
{
	/* A promise broken under a selected model, or a universal rule broken: exit 1. */
	int finding = 0;
	for (size_t i = 0; i < n; i++) {
		finding |= sums[i].verdicts[MODEL_UNIVERSAL][V_BROKEN] > 0;
		for (int m = 0; m < MODEL_COUNT; m++)
			if (sums[i].models & (1u << m))
				finding |= sums[i].verdicts[m][V_LOST] > 0;
	}
	if (!rc && finding)
		rc = EXIT_FINDING;
	if (intr_pending())
		rc = intr_exit_code();
	set_str(&run->status, intr_pending() ? "interrupted" : rc == EXIT_FINDING ? "findings" : rc ? "failed" : "ok");
	run->has_exit = 1;
	run->exit_code = rc;
	return rc;
}

int runner_run(const struct run_params *p, const struct fs_params *fss, size_t n, struct run_info *run,
	       const struct sink *sink, struct fs_summary *sums, struct errbuf *e)
{
	if (!run->id && sink->run_begin && sink->run_begin(sink->ctx, run, e) < 0)
		return -1;
	int rc = 0;
	for (size_t i = 0; i < n; i++) {
		if (intr_pending() && !(fss[i].resume && fss[i].resume->finished)) {
			/* not started: a resumed run starts it */
			memset(&sums[i], 0, sizeof(sums[i]));
			snprintf(sums[i].fs, sizeof(sums[i].fs), "%s", fss[i].fs);
			snprintf(sums[i].outcome, sizeof(sums[i].outcome), "not started");
			continue;
		}
		int r = runner_fs(p, &fss[i], run, sink, &sums[i], e);
		if (r < 0)
			return -1;
		if (r && !rc)
			rc = r;
	}
	rc = runner_run_status(sums, n, rc, run);
	if (sink->run_end && sink->run_end(sink->ctx, run, e) < 0)
		return -1;
	return rc;
}
