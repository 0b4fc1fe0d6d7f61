/*
 * lab.c - a live lab session (see lab.h).
 *
 * Method. Each file system's recording guest is started with record.c's
 * pieces exactly as `crashlab run` starts one for a workload without
 * [setup]: fresh overlay and write log, mount, session, the setup's sync
 * (setup_end); then every op typed is sent to each guest in turn, and its
 * result and log position kept.
 *
 * A power cut now. blklogwrites appends each request to the log file and
 * rewrites the superblock's entry count at each flush; the guest keeps
 * running (its writeback may append more while we look). The snapshot
 * reads the superblock first, then the file's size, then copies the
 * entries up to that size, cut to whole log sectors: every entry the copied
 * superblock counts was in the file before its count was written, and an
 * entry still being appended at the end is incomplete, which the log
 * reader drops as a torn tail. The copy is the run's write log, kept with
 * the run, so every state it gives can be rebuilt later. Flush-mode
 * enumeration over it, cut to the states of a power cut at its end
 * (runner.h cut_now), gives the state at the last flush that reached the
 * device (nothing of the volatile cache kept) and the final state
 * (everything logged kept): what `crashlab run` gives when it cuts the
 * power after its last op.
 */
#include "engine/lab.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/wlog.h"
#include "host/sys.h"

static int start_fs(struct lab *L, struct lab_fs *f)
{
	struct record_opts ro = {
		.fs = f->fs, .size = L->p.size, .guest = L->p.guest, .nr_fbarrier = L->p.nr_fbarrier,
		.nr_fdatabarrier = L->p.nr_fdatabarrier, .workdir = L->dir,
	};
	f->down[0] = 0;
	f->code = 0;
	for (size_t i = 0; i < L->nsetup; i++) {
		memset(&f->res[i], 0, sizeof(f->res[i]));
		f->res[i].err = -1;
	}
	int r = record_start(&ro, &f->rec, &f->s);
	for (size_t i = 0; r == 0 && i < L->nsetup; i++)
		r = record_op(f->s, &L->ops[i], &f->res[i]);
	if (r < 0 || record_setup_sync(f->s) < 0) {
		snprintf(f->down, sizeof(f->down), "%s", f->rec.err.msg);
		f->code = f->rec.err.code ? f->rec.err.code : EXIT_GUEST;
		record_stop(f->s); /* after a failure the guest is gone already; this frees the session */
		f->s = NULL;
		return -1;
	}
	return 0;
}

static int start_all(struct lab *L, struct errbuf *e)
{
	double t0 = now_s();
	free(L->dir);
	L->dir = xasprintf("%s/%d", L->p.workdir, L->generation);
	if (mkdir_p(L->dir, 0755) < 0)
		return errbuf_errno(e, errno, "cannot create '%s'", L->dir);
	size_t up = 0;
	for (size_t k = 0; k < L->nfs; k++)
		up += start_fs(L, &L->fs[k]) == 0;
	L->boot_ms = (now_s() - t0) * 1000;
	if (!up) {
		errbuf_set(e, L->fs[0].code ? L->fs[0].code : EXIT_GUEST, "no recording guest started: %s: %s",
			   L->fs[0].fs, L->fs[0].down);
		return -1;
	}
	return 0;
}

int lab_start(struct lab *L, const struct lab_params *p, struct errbuf *e)
{
	memset(L, 0, sizeof(*L));
	L->p = *p;
	L->nfs = p->nfs;
	L->fs = xcalloc(p->nfs ? p->nfs : 1, sizeof(*L->fs));
	for (size_t k = 0; k < p->nfs; k++)
		L->fs[k].fs = p->fs[k];
	return start_all(L, e);
}

int lab_has_result(const struct lab *L, size_t k, size_t i)
{
	return i < L->nops && L->fs[k].res[i].err != -1;
}

/* Run the session's op i on every guest that is up. */
static int run_op(struct lab *L, size_t i)
{
	size_t up = 0;
	for (size_t k = 0; k < L->nfs; k++) {
		struct lab_fs *f = &L->fs[k];
		struct op_result *r = &f->res[i];
		memset(r, 0, sizeof(*r));
		r->err = -1;
		if (!f->s)
			continue;
		if (record_op(f->s, &L->ops[i], r) < 0) {
			memset(r, 0, sizeof(*r));
			r->err = -1;
			snprintf(f->down, sizeof(f->down), "%s", f->rec.err.msg);
			f->code = f->rec.err.code ? f->rec.err.code : EXIT_GUEST;
			record_stop(f->s);
			f->s = NULL;
			continue;
		}
		up++;
	}
	return up ? 0 : -1;
}

/* One more op in the session (its id and section set). */
static size_t add_op(struct lab *L, const struct wl_op *op, enum wl_section section)
{
	if (L->nops == L->cap) {
		L->cap = L->cap ? 2 * L->cap : 16;
		L->ops = xrealloc(L->ops, L->cap * sizeof(*L->ops));
		for (size_t k = 0; k < L->nfs; k++)
			L->fs[k].res = xrealloc(L->fs[k].res, L->cap * sizeof(*L->fs[k].res));
	}
	size_t i = L->nops++;
	wl_op_copy(&L->ops[i], op);
	L->ops[i].id = (int)(i + 1);
	L->ops[i].section = section;
	return i;
}

int lab_op(struct lab *L, const struct wl_op *op)
{
	return run_op(L, add_op(L, op, WL_RUN));
}

static void stop_all(struct lab *L)
{
	for (size_t k = 0; k < L->nfs; k++) {
		struct lab_fs *f = &L->fs[k];
		record_stop(f->s);
		f->s = NULL;
		/* the overlay is throw-away; the live log goes with its folder */
		if (f->rec.overlay)
			unlink(f->rec.overlay);
		recording_free(&f->rec);
	}
}

int lab_reset(struct lab *L, int keep_ops, struct errbuf *e)
{
	stop_all(L);
	L->generation++;
	if (!keep_ops) {
		for (size_t i = 0; i < L->nops; i++)
			wl_op_free(&L->ops[i]);
		L->nops = L->nsetup = 0;
	}
	if (start_all(L, e) < 0)
		return -1;
	for (size_t i = L->nsetup; i < L->nops; i++)
		if (run_op(L, i) < 0)
			return errbuf_set(e, EXIT_GUEST, "every guest failed while the session's ops ran again (op %zu)", i + 1);
	return 0;
}

int lab_setup(struct lab *L, const struct wl_op *ops, size_t n, struct errbuf *e)
{
	stop_all(L);
	L->generation++;
	for (size_t i = 0; i < L->nops; i++)
		wl_op_free(&L->ops[i]);
	L->nops = L->nsetup = 0;
	for (size_t i = 0; i < n; i++)
		add_op(L, &ops[i], WL_SETUP);
	L->nsetup = n;
	return start_all(L, e);
}

void lab_stop(struct lab *L)
{
	stop_all(L);
	for (size_t i = 0; i < L->nops; i++)
		wl_op_free(&L->ops[i]);
	free(L->ops);
	for (size_t k = 0; k < L->nfs; k++)
		free(L->fs[k].res);
	free(L->fs);
	free(L->dir);
	memset(L, 0, sizeof(*L));
}

char *lab_workload_text(const struct lab *L, const char *comment)
{
	struct sbuf sb = SBUF_INIT;
	if (comment && *comment)
		sbuf_addf(&sb, "# %s\n", comment);
	for (size_t i = 0; i < L->nops; i++) {
		if (i == 0 && L->nsetup)
			sbuf_addf(&sb, "[setup]\n");
		if (i == L->nsetup)
			sbuf_addf(&sb, "[run]\n");
		int n = wl_format(&L->ops[i], NULL, 0);
		char *line = xmalloc((size_t)n + 1);
		wl_format(&L->ops[i], line, (size_t)n + 1);
		sbuf_addf(&sb, "%s\n", line);
		free(line);
	}
	if (L->nops == L->nsetup)
		sbuf_addf(&sb, "[run]\n");
	return sbuf_detach(&sb);
}

/* Copy the live log src to dst as far as it is whole (see the top). */
static int snapshot_log(const char *src, const char *dst, struct errbuf *e)
{
	int in = open(src, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return errbuf_errno(e, errno, "cannot open the write log '%s'", src);
	unsigned char sb[512];
	struct stat st;
	uint64_t counted;
	uint32_t ssz;
	ssize_t got = pread(in, sb, sizeof(sb), 0);
	if (got != (ssize_t)sizeof(sb) || wlog_read_super(in, &counted, &ssz) < 0 || fstat(in, &st) < 0) {
		close(in);
		return errbuf_set(e, EXIT_DATAERR, "the write log '%s' has no superblock yet", src);
	}
	if (ssz < 512 || ssz > WLOG_MAX_SECTORSIZE || (ssz & (ssz - 1)))
		ssz = 512;
	off_t size = st.st_size - st.st_size % ssz;
	int out = open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (out < 0) {
		close(in);
		return errbuf_errno(e, errno, "cannot create '%s'", dst);
	}
	int rc = 0;
	if (write_all(out, sb, sizeof(sb)) < 0)
		rc = -1;
	static char buf[1 << 16];
	for (off_t off = sizeof(sb); rc == 0 && off < size;) {
		size_t want = size - off < (off_t)sizeof(buf) ? (size_t)(size - off) : sizeof(buf);
		ssize_t n = pread(in, buf, want, off);
		if (n <= 0)
			break; /* shorter than it said: the copy ends here */
		if (write_all(out, buf, (size_t)n) < 0)
			rc = -1;
		off += n;
	}
	if (rc < 0)
		errbuf_errno(e, errno, "cannot write '%s'", dst);
	if (close(out) < 0 && rc == 0)
		rc = errbuf_errno(e, errno, "cannot write '%s'", dst);
	close(in);
	return rc;
}

static int record_snapshot(const struct backend *b, const struct record_opts *o, struct recording *rec)
{
	struct lab *L = b->ctx;
	memset(rec, 0, sizeof(*rec));
	rec->outcome = VM_OK;
	const struct lab_fs *f = NULL;
	for (size_t k = 0; k < L->nfs; k++)
		if (!strcmp(L->fs[k].fs, o->fs))
			f = &L->fs[k];
	size_t n = o->w->n;
	if (!f || !f->s || n > L->nops) {
		errbuf_set(&rec->err, EXIT_GUEST, "%s: %s", o->fs, f && *f->down ? f->down : "no recording guest is up");
		return -1;
	}
	double t0 = now_s();
	rec->log_path = xasprintf("%s/%s.log", o->workdir, o->fs);
	rec->base = xstrdup(f->rec.base);
	rec->qemu_cmdline = xstrdup(f->rec.qemu_cmdline ? f->rec.qemu_cmdline : "");
	rec->setup_end = f->rec.setup_end;
	rec->res = xcalloc(n ? n : 1, sizeof(*rec->res));
	if (n)
		memcpy(rec->res, f->res, n * sizeof(*rec->res));
	if (snapshot_log(f->rec.log_path, rec->log_path, &rec->err) < 0)
		return -1;
	rec->ms = (now_s() - t0) * 1000;
	return 0;
}

void lab_backend(struct lab *L, struct backend *out)
{
	*out = *backend_qemu();
	out->name = "lab";
	out->ctx = L;
	out->record = record_snapshot;
}
