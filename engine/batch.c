/*
 * batch.c - many workloads as one batch (see batch.h).
 *
 * Method. The jobs, one per (workload, file system), are laid out in the
 * order they will be stored: the workloads in chunks of up to `chunk`, and
 * per chunk one unit of work per file system, in the order the file systems
 * were given. A worker takes a whole unit, so its guests of that file
 * system serve every workload of the chunk in a row, and its next unit is
 * one of the same file system when there is one within reach. The chunking depends
 * only on the batch (how many workloads and file systems), never on the
 * number of workers, so the order - and with it every id the store hands
 * out - is the same for -j 1 and -j N.
 *
 * A worker runs each job through runner_fs with a sink that only keeps
 * the calls in memory (the job's events). The caller's thread takes the
 * finished jobs strictly in order and replays their events into the real
 * sink, beginning a workload's run before its first job and ending it after
 * its last. Workers never run more than a few units ahead of what is
 * stored, which bounds what is held in memory.
 */
#include "engine/batch.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "host/intr.h"
#include "host/sys.h"

#define CHUNK_DEFAULT 16

enum ev_kind { EV_BEGIN, EV_RECORDED, EV_STATE, EV_END };

/* One sink call of a job, with its own copy of what it was given. */
struct event {
	enum ev_kind kind;
	struct fsrun fr;             /* EV_BEGIN, EV_RECORDED, EV_END */
	struct state_result st;      /* EV_STATE */
};

struct job {
	size_t item, fs;
	int done;                    /* the worker finished it: events and sum are final */
	struct event *ev;
	size_t nev, cap;
	struct fs_summary sum;
};

struct batch {
	const struct batch_params *bp;
	struct job *jobs;            /* in storing order */
	size_t njobs, chunk, nchunks, nunits;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	char *taken;                 /* per unit: a worker has taken it */
	size_t first_free;           /* no unit before it is free */
	size_t stored;               /* jobs stored, in order */
	size_t workers_left;
	size_t window;               /* units a worker may be ahead of the store */
	int stop;                    /* the store failed: take no more work */
	struct batch_stats st;
	double t0;
};

/* ---- the layout: chunks, units, jobs ---- */

static size_t chunk_items(const struct batch *B, size_t c)
{
	size_t first = c * B->chunk, n = B->bp->n;
	return first + B->chunk <= n ? B->chunk : n - first;
}

/* The first job of unit u (chunk u / nfs, fs u % nfs), and how many it has. */
static size_t unit_first(const struct batch *B, size_t u, size_t *count)
{
	size_t nfs = B->bp->nfs, c = u / nfs, f = u % nfs, m = chunk_items(B, c);
	if (count)
		*count = m;
	return c * B->chunk * nfs + f * m;
}

/* The unit of job j. */
static size_t job_unit(const struct batch *B, size_t j)
{
	size_t nfs = B->bp->nfs, per = B->chunk * nfs, c = j / per, m = chunk_items(B, c);
	return c * nfs + (j % per) / m;
}

size_t batch_chunk(size_t n, size_t nfs)
{
	size_t chunk = CHUNK_DEFAULT;
	/* Small batches in smaller chunks, so there is work to share: but
	 * never by the number of workers, or the order would depend on it. */
	while (chunk > 1 && ((n + chunk - 1) / chunk) * nfs < 8)
		chunk = (chunk + 1) / 2;
	return chunk;
}

static void layout(struct batch *B)
{
	const struct batch_params *bp = B->bp;
	B->chunk = bp->chunk ? bp->chunk : batch_chunk(bp->n, bp->nfs);
	B->nchunks = (bp->n + B->chunk - 1) / B->chunk;
	B->nunits = B->nchunks * bp->nfs;
	B->njobs = bp->n * bp->nfs;
	B->jobs = xcalloc(B->njobs ? B->njobs : 1, sizeof(*B->jobs));
	for (size_t u = 0; u < B->nunits; u++) {
		size_t m, first = unit_first(B, u, &m), c = u / bp->nfs;
		for (size_t k = 0; k < m; k++) {
			struct job *j = &B->jobs[first + k];
			j->item = c * B->chunk + k;
			j->fs = u % bp->nfs;
		}
	}
}

/* ---- the in-memory sink a worker's job stores into ---- */

static struct event *push(struct job *j, enum ev_kind kind)
{
	if (j->nev == j->cap) {
		j->cap = j->cap ? 2 * j->cap : 16;
		j->ev = xrealloc(j->ev, j->cap * sizeof(*j->ev));
	}
	struct event *ev = &j->ev[j->nev++];
	memset(ev, 0, sizeof(*ev));
	ev->kind = kind;
	return ev;
}

static int q_begin(void *ctx, struct fsrun *fr, struct errbuf *e)
{
	(void)e;
	fsrun_dup(&push(ctx, EV_BEGIN)->fr, fr);
	return 0;
}

static int q_recorded(void *ctx, const struct fsrun *fr, struct errbuf *e)
{
	(void)e;
	fsrun_dup(&push(ctx, EV_RECORDED)->fr, fr);
	return 0;
}

static int q_state(void *ctx, const struct fsrun *fr, struct state_result *st, struct errbuf *e)
{
	(void)fr;
	(void)e;
	/* The run loop frees the state once the sink has it: take it whole. */
	push(ctx, EV_STATE)->st = *st;
	memset(st, 0, sizeof(*st));
	return 0;
}

static int q_end(void *ctx, const struct fsrun *fr, struct errbuf *e)
{
	(void)e;
	fsrun_dup(&push(ctx, EV_END)->fr, fr);
	return 0;
}

static void job_clear(struct job *j)
{
	for (size_t i = 0; i < j->nev; i++) {
		fsrun_free(&j->ev[i].fr);
		state_result_free(&j->ev[i].st);
	}
	free(j->ev);
	j->ev = NULL;
	j->nev = j->cap = 0;
}

/* ---- workers ---- */

/* Did the job's guest fail (so that another guest should try it again)? */
static int guest_failed(const struct fs_summary *sum)
{
	static const enum vm_outcome vo[] = { VM_PANIC, VM_TIMEOUT, VM_NO_OUTPUT, VM_LOST, VM_QEMU_FAILED };
	for (size_t i = 0; i < sizeof(vo) / sizeof(vo[0]); i++)
		if (!strcmp(sum->outcome, vm_outcome_name(vo[i])))
			return 1;
	return 0;
}

static void run_job(struct batch *B, const struct backend *b, struct job *j)
{
	const struct batch_params *bp = B->bp;
	struct batch_item *it = &bp->items[j->item];
	mkdir_p(it->run->workdir, 0755);
	for (int attempt = 0;; attempt++) {
		struct run_params p = bp->p;
		p.w = it->w;
		p.workdir = it->run->workdir;
		p.backend = b;
		p.quiet = 1;
		struct sink q = { .ctx = j, .fsrun_begin = q_begin, .fsrun_recorded = q_recorded, .state = q_state,
				  .fsrun_end = q_end };
		size_t before = bp->guest_failures ? bp->guest_failures(bp->ctx, b) : 0;
		struct errbuf e;
		errbuf_clear(&e);
		runner_fs(&p, &bp->fss[j->fs], NULL, &q, &j->sum, &e); /* this sink never fails */
		size_t after = bp->guest_failures ? bp->guest_failures(bp->ctx, b) : 0;
		int failed = after > before || guest_failed(&j->sum);
		if (!failed || attempt > 0 || intr_pending())
			break;
		/* A guest failed: nothing it did is kept; a fresh one tries again. */
		job_clear(j);
		pthread_mutex_lock(&B->mu);
		B->st.retries++;
		pthread_mutex_unlock(&B->mu);
	}
}

static size_t stored_unit(const struct batch *B)
{
	return B->stored < B->njobs ? job_unit(B, B->stored) : B->nunits;
}

#define LIVE_MAX 8

/* The unit a worker takes next. Its guests are up for the file systems
 * recent[0..nrecent) (most recently used first; none yet: nrecent 0): the
 * first free unit within the window of recent[0], else of the others in
 * that order, else the first free one; B->nunits when there is none (yet).
 * A unit of a file system whose guests are down costs a boot of two guests,
 * and with more file systems than the backend keeps up, of another fs's
 * guests next time. Under B->mu. */
static size_t pick_unit(struct batch *B, const size_t *recent, size_t nrecent)
{
	size_t nfs = B->bp->nfs, hi = stored_unit(B) + B->window;
	if (hi > B->nunits)
		hi = B->nunits;
	for (size_t r = 0; r < nrecent; r++)
		for (size_t u = B->first_free; u < hi; u++)
			if (!B->taken[u] && u % nfs == recent[r])
				return u;
	for (size_t u = B->first_free; u < hi; u++)
		if (!B->taken[u])
			return u;
	return B->nunits;
}

/* fs used now: first in recent, which holds at most max. */
static void recent_use(size_t *recent, size_t *nrecent, size_t max, size_t fs)
{
	size_t i = 0;
	while (i < *nrecent && recent[i] != fs)
		i++;
	if (i == *nrecent && *nrecent < max)
		(*nrecent)++;
	if (i == *nrecent)
		i = *nrecent - 1;
	memmove(recent + 1, recent, i * sizeof(*recent));
	recent[0] = fs;
}

static void *worker(void *arg)
{
	struct batch *B = arg;
	const struct batch_params *bp = B->bp;
	const struct backend *b = bp->backend_new(bp->ctx);
	size_t recent[LIVE_MAX], nrecent = 0;
	size_t live = bp->live_fs > 0 ? (size_t)bp->live_fs : 1;
	if (live > LIVE_MAX)
		live = LIVE_MAX;
	for (;;) {
		pthread_mutex_lock(&B->mu);
		size_t u = B->nunits;
		while (B->first_free < B->nunits && !B->stop && !intr_pending() &&
		       (u = pick_unit(B, recent, nrecent)) == B->nunits)
			pthread_cond_wait(&B->cv, &B->mu);
		if (u == B->nunits || B->stop || intr_pending()) {
			pthread_mutex_unlock(&B->mu);
			break;
		}
		/* A worker keeps to one file system while there is work of it in
		 * the window, so its guests serve many workloads in a row, and
		 * else to those whose guests it keeps up. */
		B->taken[u] = 1;
		while (B->first_free < B->nunits && B->taken[B->first_free])
			B->first_free++;
		recent_use(recent, &nrecent, live, u % bp->nfs);
		size_t m, first = unit_first(B, u, &m);
		pthread_mutex_unlock(&B->mu);
		for (size_t k = 0; k < m && !intr_pending() && !B->stop; k++) {
			struct job *j = &B->jobs[first + k];
			run_job(B, b, j);
			pthread_mutex_lock(&B->mu);
			j->done = 1;
			B->st.jobs_done++;
			pthread_cond_broadcast(&B->cv);
			pthread_mutex_unlock(&B->mu);
		}
	}
	bp->backend_free(bp->ctx, b);
	pthread_mutex_lock(&B->mu);
	B->workers_left--;
	pthread_cond_broadcast(&B->cv);
	pthread_mutex_unlock(&B->mu);
	return NULL;
}

/* ---- the store, in the caller's thread ---- */

static int end_run(struct batch *B, const struct sink *sink, struct batch_item *it, struct errbuf *e)
{
	const struct batch_params *bp = B->bp;
	int rc = 0;
	for (size_t f = 0; f < bp->nfs; f++)
		if (it->sums[f].exit_code && !rc)
			rc = it->sums[f].exit_code;
	it->rc = runner_run_status(it->sums, bp->nfs, rc, it->run);
	it->ended = 1;
	if (sink->run_end && sink->run_end(sink->ctx, it->run, e) < 0)
		return -1;
	B->st.runs_done++;
	if (bp->run_done)
		bp->run_done(bp->ctx, it);
	return 0;
}

/* Replay a finished job's calls into the real sink. */
static int store_job(struct batch *B, const struct sink *sink, struct job *j, struct errbuf *e)
{
	const struct batch_params *bp = B->bp;
	struct batch_item *it = &bp->items[j->item];
	if (!it->begun) {
		if (sink->run_begin && sink->run_begin(sink->ctx, it->run, e) < 0)
			return -1;
		it->begun = 1;
	}
	int64_t fsrun_id = 0;
	struct fsrun *cur = NULL;
	int r = 0;
	for (size_t i = 0; i < j->nev && r == 0; i++) {
		struct event *ev = &j->ev[i];
		if (ev->kind != EV_STATE) {
			ev->fr.run_id = it->run->id;
			ev->fr.id = fsrun_id;
			cur = &ev->fr;
		}
		switch (ev->kind) {
		case EV_BEGIN:
			if (sink->fsrun_begin)
				r = sink->fsrun_begin(sink->ctx, &ev->fr, e);
			fsrun_id = ev->fr.id;
			break;
		case EV_RECORDED:
			if (sink->fsrun_recorded)
				r = sink->fsrun_recorded(sink->ctx, &ev->fr, e);
			break;
		case EV_STATE:
			if (cur && sink->state)
				r = sink->state(sink->ctx, cur, &ev->st, e);
			B->st.states++;
			break;
		case EV_END:
			if (sink->fsrun_end)
				r = sink->fsrun_end(sink->ctx, &ev->fr, e);
			break;
		}
	}
	it->sums[j->fs] = j->sum;
	job_clear(j);
	if (r < 0)
		return -1;
	/* the run ends with its last job: the last fs of its chunk's units */
	size_t c = j->item / B->chunk;
	size_t last_job = unit_first(B, c * bp->nfs + bp->nfs - 1, NULL) + (j->item - c * B->chunk);
	if (&B->jobs[last_job] == j)
		return end_run(B, sink, it, e);
	return 0;
}

static void report(struct batch *B)
{
	const struct batch_params *bp = B->bp;
	B->st.elapsed = now_s() - B->t0;
	if (bp->progress)
		bp->progress(bp->ctx, &B->st);
}

int batch_run(const struct batch_params *bp, const struct sink *sink, struct batch_stats *st, struct errbuf *e)
{
	struct batch B = { .bp = bp, .t0 = now_s() };
	layout(&B);
	B.st.jobs = B.njobs;
	B.st.runs = bp->n;
	int workers = bp->workers > 0 ? bp->workers : 1;
	if ((size_t)workers > B.nunits)
		workers = B.nunits ? (int)B.nunits : 1;
	/* how far ahead of the store a worker may be: enough for each worker
	 * to find its file system's next unit */
	B.window = 2 * (size_t)workers + bp->nfs;
	B.taken = xcalloc(B.nunits ? B.nunits : 1, 1);
	for (size_t i = 0; i < bp->n; i++)
		for (size_t f = 0; f < bp->nfs; f++) {
			memset(&bp->items[i].sums[f], 0, sizeof(bp->items[i].sums[f]));
			snprintf(bp->items[i].sums[f].fs, sizeof(bp->items[i].sums[f].fs), "%s", bp->fss[f].fs);
			snprintf(bp->items[i].sums[f].outcome, sizeof(bp->items[i].sums[f].outcome), "not started");
		}
	pthread_mutex_init(&B.mu, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&B.cv, &ca);
	pthread_condattr_destroy(&ca);
	pthread_t *tids = xcalloc((size_t)workers, sizeof(*tids));
	int started = 0;
	for (int w = 0; w < workers; w++)
		if (pthread_create(&tids[w], NULL, worker, &B) == 0)
			started++;
	B.workers_left = (size_t)started;
	int r = 0;
	if (!started)
		r = errbuf_set(e, EXIT_SOFTWARE, "cannot start a worker thread");

	pthread_mutex_lock(&B.mu);
	while (r == 0 && B.stored < B.njobs) {
		if (B.jobs[B.stored].done) {
			struct job *j = &B.jobs[B.stored];
			pthread_mutex_unlock(&B.mu);
			r = store_job(&B, sink, j, e);
			report(&B);
			pthread_mutex_lock(&B.mu);
			B.stored++;
			B.st.jobs_stored = B.stored;
			pthread_cond_broadcast(&B.cv);
			continue;
		}
		if (!B.workers_left)
			break; /* stopped: nothing more will come */
		size_t held = B.st.jobs_done - B.stored;
		if (held > B.st.peak_held)
			B.st.peak_held = held;
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_sec += 1;
		pthread_cond_timedwait(&B.cv, &B.mu, &ts);
		pthread_mutex_unlock(&B.mu);
		report(&B);
		pthread_mutex_lock(&B.mu);
	}
	if (r < 0)
		B.stop = 1;
	pthread_cond_broadcast(&B.cv);
	pthread_mutex_unlock(&B.mu);
	for (int w = 0; w < started; w++)
		pthread_join(tids[w], NULL);
	free(tids);
	/* Stopped early: what was done after a job that never ran is still
	 * stored, and every run that was begun is ended. */
	for (size_t k = B.stored; r == 0 && k < B.njobs; k++)
		if (B.jobs[k].done)
			r = store_job(&B, sink, &B.jobs[k], e);
	for (size_t i = 0; r == 0 && i < bp->n; i++)
		if (bp->items[i].begun && !bp->items[i].ended)
			r = end_run(&B, sink, &bp->items[i], e);
	report(&B);
	for (size_t k = 0; k < B.njobs; k++)
		job_clear(&B.jobs[k]);
	free(B.jobs);
	free(B.taken);
	pthread_mutex_destroy(&B.mu);
	pthread_cond_destroy(&B.cv);
	if (st)
		*st = B.st;
	if (r < 0)
		return -1;
	int rc = 0, finding = 0;
	for (size_t i = 0; i < bp->n; i++) {
		const struct batch_item *it = &bp->items[i];
		if (!it->ended)
			continue;
		if (it->rc == EXIT_FINDING)
			finding = 1;
		else if (it->rc && !rc)
			rc = it->rc;
	}
	if (!rc && finding)
		rc = EXIT_FINDING;
	if (intr_pending())
		rc = intr_exit_code();
	return rc;
}
