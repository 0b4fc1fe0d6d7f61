/*
 * record.c - where a workload runs and its writes are recorded.
 *
 * Method. The guest's test disk is QEMU's blklogwrites driver over a
 * throw-away qcow2 overlay of the cached base image, so the base stays
 * pristine and every write, discard and flush the guest sends reaches the
 * log file in dm-log-writes format. blklogwrites rewrites the log's
 * superblock entry count at each flush: that count is our clock. The
 * guest mounts the file system, the agent opens a workload session, the
 * setup ops run, then a global sync, and the count at that moment is
 * setup_end. (An [overlay] workload's setup runs in the lower layer, and
 * its overlay is mounted just before that sync: the run's ops go through
 * it, and what mounting it wrote is in every crash state.) Each run op is then sent alone; when its RESULT arrives the
 * host re-reads the count, which is the op's log position: every entry
 * before it was flushed before the op returned. After the last op the host
 * SIGKILLs QEMU - the power cut; dirty pages in the guest are lost, as they
 * would be. Only the flushes on the path to the overlay and log files are
 * dropped on the host (cache.no-flush): they cost time and prove nothing,
 * since the crash is simulated from the log, not from the host's disk.
 */
#include "engine/backend.h"

#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "core/wlog.h"
#include "images/basedisk.h"

/* Less free space than this under the write log: the host disk is full. */
#define HOST_FREE_MIN (4ULL << 20)

/* An op's log position: the entries committed when its reply came. The
 * superblock's count can be stale (an older superblock update landing
 * after a newer one: wlog_follow), so it is also counted from the entries
 * themselves, up to the last flush of the log's complete prefix; the
 * larger of the two is the position. */
static int64_t log_position(const char *log_path, struct wlog_follow *f)
{
	int fd = open(log_path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	uint64_t n = 0;
	if (wlog_read_committed(fd, &n) < 0)
		n = 0;
	if (wlog_follow(fd, f) == 0 && f->flushed > n)
		n = f->flushed;
	close(fd);
	return (int64_t)n;
}

/* Is the disk under the write log full? A log QEMU could not write is not
 * a recording: the guest saw I/O errors that the file system under test
 * never caused. 1 (with why) when less than a few MiB are left. */
static int host_disk_full(const char *log_path, char *why, size_t n)
{
	struct statvfs sv;
	if (statvfs(log_path, &sv) < 0)
		return 0;
	unsigned long long left = (unsigned long long)sv.f_bavail * sv.f_frsize;
	if (left >= HOST_FREE_MIN)
		return 0;
	snprintf(why, n, "the disk that holds the write log '%s' is full (%llu KiB left): the recording cannot go on; "
		 "free some space, or point XDG_CACHE_HOME at a larger disk", log_path, left >> 10);
	return 1;
}

/* The recording guest's console stays with the fs run, whatever happened:
 * the guest kernel's own words about an I/O error are there. */
static void keep_console(const struct recording *rec, struct vm *vm)
{
	char *path = xasprintf("%.*s.record-console.log", (int)(strlen(rec->log_path) - 4), rec->log_path);
	vm_save_console(vm, path);
	free(path);
}

/* The recording failed: what (fmt), and for a guest failure how (vm_failure). */
static int fail(struct recording *rec, struct vm *vm, int free_vm, enum vm_outcome o, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
static int fail(struct recording *rec, struct vm *vm, int free_vm, enum vm_outcome o, const char *fmt, ...)
{
	char what[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	rec->outcome = o;
	if (vm) {
		vm_kill(vm);
		keep_console(rec, vm);
		if (o != VM_OK) {
			struct errbuf how;
			vm_failure(vm, o, &how);
			errbuf_set(&rec->err, how.code, "%s: %s", what, how.msg);
		}
		if (free_vm)
			vm_free(vm); /* a guest someone else started is theirs to free */
	}
	if (o == VM_OK || !vm)
		errbuf_set(&rec->err, o == VM_OK ? EXIT_GUEST : vm_outcome_exit(o), "%s", what);
	return -1;
}

/* A reply that is not the RESULT asked for, or a RESULT that does not
 * parse, in words for a message: the text of an ERROR or of the RESULT as
 * one escaped line of at most 200 bytes, else the reply's type. */
static void reply_words(uint8_t type, const struct sbuf *sb, char *out, size_t n)
{
	if (type != PROTO_MSG_ERROR && type != PROTO_MSG_RESULT) {
		snprintf(out, n, "a reply of type %u", type);
		return;
	}
	struct sbuf e = SBUF_INIT;
	sbuf_add_escaped(&e, sb->buf ? sb->buf : "", sb->len > 200 ? 200 : sb->len, SBUF_ESC_PROSE);
	snprintf(out, n, "%s", e.buf);
	sbuf_free(&e);
}

/* A recording guest that is up: its VM (its own, or a slot's guest that
 * someone else started), the recording it fills, the write log QEMU writes. */
struct record_session {
	struct vm own;
	struct vm *vm;           /* &own, or the slot's guest */
	int borrowed;            /* vm is a slot's: never freed here, its power never cut here */
	struct recording *rec;
	char *live_log;          /* where QEMU writes this disk's log: rec->log_path, or the slot's */
	int up;                  /* the guest runs */
	struct wlog_follow follow; /* how far live_log is complete (log positions) */
	uint64_t log_base;       /* entries of live_log before this recording's first */
	char *overlay;           /* an [overlay] workload: the SESSION that mounts its overlay
				  * before the setup's sync, or NULL (done, or none) */
	char *overlay_at;        /* its "file:line", for messages */
};

#define FAIL(s, o, ...) fail((s)->rec, (s)->vm, !(s)->borrowed, o, __VA_ARGS__)

/* What every recording starts with: rec's op results, its log's path and
 * the base image. 0, or -1 with rec->err. */
static int record_prepare(const struct record_opts *o, struct recording *rec)
{
	memset(rec, 0, sizeof(*rec));
	const struct wl_workload *w = o->w;
	rec->res = xcalloc(w && w->n ? w->n : 1, sizeof(*rec->res));
	rec->log_path = xasprintf("%s/%s.log", o->workdir, o->fs);
	rec->base = img_base_ensure(o->fs, o->size, o->mkfs_opts, &rec->err);
	if (!rec->base) {
		rec->outcome = VM_OK;
		return -1;
	}
	return 0;
}

/* Mount dev at mnt in the guest and open the workload session there (the
 * agent mounts it, with mount(2) as the checker does). 0, or -1 with the
 * guest killed (fail). */
static int session_open(struct record_session *s, const struct record_opts *o, const char *dev, const char *mnt,
			long long part_start, long long part_len)
{
	struct sbuf sb = SBUF_INIT;
	int ovl = o->w && o->w->overlay;
	char part[64] = "";
	if (part_len > 0)
		snprintf(part, sizeof(part), "part=%lld+%lld\n", part_start, part_len);
	char *sess = xasprintf("dir=%s\nmount=%s\n%sfstype=%s\nmopts=%s\nfbarrier=%ld\nfdatabarrier=%ld\n%s", mnt, dev,
			       part, o->fs, o->mount_opts ? o->mount_opts : "", o->nr_fbarrier, o->nr_fdatabarrier,
			       ovl ? "layers=1\n" : "");
	/* [overlay]: [setup] runs in the lower layer, [run] through the overlay,
	 * mounted beside the fs before the setup's sync */
	if (ovl && !s->overlay) {
		s->overlay = xasprintf("dir=%s.ovl\noverlay=%s\nfbarrier=%ld\nfdatabarrier=%ld\n", mnt, mnt,
				       o->nr_fbarrier, o->nr_fdatabarrier);
		s->overlay_at = xasprintf("%s:%d", o->w->file ? o->w->file : "workload", o->w->overlay);
	}
	uint8_t type = 0;
	enum vm_outcome out = vm_request(s->vm, PROTO_MSG_SESSION, 0, 0, sess, (uint32_t)strlen(sess), 0, &type, &sb);
	free(sess);
	if (out != VM_OK) {
		sbuf_free(&sb);
		return FAIL(s, out, "the guest failed while mounting %s and opening the workload session", o->fs);
	}
	if (type != PROTO_MSG_RESULT) {
		char words[1000] = "";
		reply_words(type, &sb, words, sizeof(words));
		sbuf_free(&sb);
		if (!strncmp(words, "mounting ", 9))
			return FAIL(s, VM_OK, "cannot mount %s in the recording guest: %s", o->fs, words);
		return FAIL(s, VM_OK, "the agent refused the workload session%s%s", *words ? ": " : "", words);
	}
	sbuf_free(&sb);
	s->up = 1;
	return 0;
}

int record_start_slot(const struct record_opts *o, const struct record_slot *slot, struct recording *rec,
		      struct record_session **sp)
{
	*sp = NULL;
	if (record_prepare(o, rec) < 0)
		return -1;
	rec->qemu_cmdline = strvec_join_quoted(&slot->vm->argv);
	struct record_session *s = xcalloc(1, sizeof(*s));
	s->rec = rec;
	s->vm = slot->vm;
	s->borrowed = 1;
	s->live_log = xstrdup(slot->log);
	if (slot->log_from) {
		s->follow = *slot->log_from;
		s->log_base = slot->log_from->entries;
	}
	if (session_open(s, o, slot->dev, slot->mnt, slot->part_start, slot->part_len) < 0) {
		free(s->overlay);
		free(s->overlay_at);
		free(s->live_log);
		free(s);
		return -1;
	}
	*sp = s;
	return 0;
}

void record_add_disk(struct vm_config *cfg, const char *overlay, const char *log)
{
	strvec_pushf(&cfg->drives,
		     "driver=blklogwrites,file.driver=qcow2,file.file.driver=file,file.file.filename=%s,"
		     "file.cache.no-flush=on,log.driver=file,log.filename=%s,log.cache.no-flush=on",
		     overlay, log);
	/* Each request the guest sends is one log entry: virtio-blk does not
	 * merge neighbours. (A merged request may carry up to IOV_MAX buffers,
	 * and blklogwrites adds two for the entry header, so QEMU's write of it
	 * to the log fails with EINVAL and the guest gets EIO: large sequential
	 * writes broke recording that way.) */
	cfg->blk_opts = "request-merging=off";
	/* An error writing the log (the host's disk full) reaches the guest as
	 * an I/O error instead of pausing it; host_disk_full() says why. */
	cfg->drive_opts = "werror=report,rerror=report";
}

int record_start(const struct record_opts *o, struct recording *rec, struct record_session **sp)
{
	*sp = NULL;
	if (record_prepare(o, rec) < 0)
		return -1;
	rec->overlay = xasprintf("%s/%s.qcow2", o->workdir, o->fs);
	if (vm_overlay_create(rec->base, rec->overlay, &rec->err) < 0) {
		rec->outcome = VM_QEMU_FAILED;
		return -1;
	}
	int lfd = open(rec->log_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (lfd < 0) {
		rec->outcome = VM_OK;
		return errbuf_errno(&rec->err, errno, "cannot create '%s'", rec->log_path);
	}
	close(lfd);

	struct record_session *s = xcalloc(1, sizeof(*s));
	s->rec = rec;
	s->vm = &s->own;
	s->live_log = xstrdup(rec->log_path);
	struct vm_config cfg = *o->guest;
	memset(&cfg.drives, 0, sizeof(cfg.drives));
	record_add_disk(&cfg, rec->overlay, rec->log_path);
	enum vm_outcome out = vm_start(s->vm, &cfg);
	rec->qemu_cmdline = strvec_join_quoted(&s->vm->argv);
	strvec_free(&cfg.drives);
	if (out != VM_OK || session_open(s, o, "/dev/vda", "/mnt/test", 0, 0) < 0) {
		if (out != VM_OK)
			FAIL(s, out, "the recording guest did not start");
		free(s->overlay);
		free(s->overlay_at);
		free(s->live_log);
		free(s);
		return -1;
	}
	*sp = s;
	return 0;
}

int record_op(struct record_session *s, const struct wl_op *op, struct op_result *r)
{
	struct recording *rec = s->rec;
	char line[8192];
	struct sbuf sb = SBUF_INIT;
	uint8_t type = 0;
	if (!s->up)
		return errbuf_set(&rec->err, EXIT_GUEST, "the recording guest is not running");
	wl_format(op, line, sizeof(line));
	enum vm_outcome out = vm_request(s->vm, PROTO_MSG_OP, (uint16_t)op->section, (uint32_t)op->id, line,
					 (uint32_t)strlen(line), 0, &type, &sb);
	if (out != VM_OK) {
		sbuf_free(&sb);
		s->up = 0;
		return FAIL(s, out, "the guest failed during op '%s'", line);
	}
	char words[1000];
	if (type != PROTO_MSG_RESULT) {
		reply_words(type, &sb, words, sizeof(words));
		sbuf_free(&sb);
		s->up = 0;
		return FAIL(s, VM_OK, "the agent could not run op '%s': %s", line, words);
	}
	char full[600];
	if (host_disk_full(s->live_log, full, sizeof(full))) {
		sbuf_free(&sb);
		s->up = 0;
		FAIL(s, VM_OK, "%s", full);
		rec->err.code = EXIT_CANTCREAT;
		return -1;
	}
	int64_t pos = log_position(s->live_log, &s->follow) - (int64_t)s->log_base;
	if (pos < 0)
		pos = 0; /* a superblock count older than the recording */
	struct op_result tmp;
	if (!r)
		r = &tmp;
	if (proto_result_parse(sb.buf, sb.len, r) < 0) {
		reply_words(type, &sb, words, sizeof(words));
		sbuf_free(&sb);
		s->up = 0;
		return FAIL(s, VM_OK, "the agent's result of op '%s' is malformed: %s", line, words);
	}
	sbuf_free(&sb);
	r->log_pos = pos;
	return 0;
}

/* An [overlay] workload's overlay mounted, the session moved there. 0, or
 * -1 with the guest killed (fail). */
static int overlay_open(struct record_session *s)
{
	struct sbuf sb = SBUF_INIT;
	uint8_t type = 0;
	enum vm_outcome out = vm_request(s->vm, PROTO_MSG_SESSION, 0, 0, s->overlay, (uint32_t)strlen(s->overlay), 0,
					 &type, &sb);
	free(s->overlay);
	s->overlay = NULL;
	if (out != VM_OK) {
		sbuf_free(&sb);
		s->up = 0;
		return FAIL(s, out, "%s: [overlay]: the guest failed while mounting the overlay", s->overlay_at);
	}
	if (type != PROTO_MSG_RESULT) {
		char words[1000] = "";
		reply_words(type, &sb, words, sizeof(words));
		sbuf_free(&sb);
		s->up = 0;
		return FAIL(s, VM_OK, "%s: [overlay]: cannot mount the overlay in the recording guest%s: %s", s->overlay_at,
			    strstr(words, "No such device") ? " (the guest kernel has no overlayfs: CONFIG_OVERLAY_FS)" : "",
			    words);
	}
	sbuf_free(&sb);
	return 0;
}

/* The sync that ends the setup: setup_end is the committed count after it.
 * An [overlay] workload's overlay is mounted first, so what mounting it
 * wrote is on disk before the first crash state. */
int record_setup_sync(struct record_session *s)
{
	if (s->up && s->overlay && overlay_open(s) < 0)
		return -1;
	struct wl_op sync_op = { .kind = WL_SYNC, .section = WL_SETUP, .off = -1, .len = -1 };
	struct op_result r;
	if (record_op(s, &sync_op, &r) < 0)
		return -1;
	s->rec->setup_end = r.log_pos;
	return 0;
}

void record_stop(struct record_session *s)
{
	if (!s)
		return;
	if (s->up && !s->borrowed) {
		/* The power cut. */
		vm_kill(s->vm);
		keep_console(s->rec, s->vm);
		vm_free(s->vm);
	}
	free(s->overlay);
	free(s->overlay_at);
	free(s->live_log);
	free(s);
}

int record_session_up(const struct record_session *s)
{
	return s && s->up;
}

void record_keep_console(const struct recording *rec, struct vm *vm)
{
	keep_console(rec, vm);
}

int record_run(struct record_session *s, const struct record_opts *o)
{
	const struct wl_workload *w = o->w;
	for (size_t i = 0; i <= w->n; i++) {
		/* After the last setup op (i == nsetup) comes the setup's sync. */
		bool setup_sync = i == w->nsetup;
		const struct wl_op *op = setup_sync ? NULL : &w->ops[i < w->nsetup ? i : i - 1];
		if (o->progress) {
			/* numbered as show numbers ops: the setup's sync is not one of them */
			char step[8300];
			if (setup_sync) {
				snprintf(step, sizeof(step), "the setup's sync");
			} else {
				char line[8192];
				wl_format(op, line, sizeof(line));
				snprintf(step, sizeof(step), "op %d/%zu: %s", op->id, w->n, line);
			}
			o->progress(o->ctx, i, w->n + 1, step);
		}
		int r = setup_sync ? record_setup_sync(s) : record_op(s, op, &s->rec->res[i < w->nsetup ? i : i - 1]);
		if (r < 0)
			return -1;
	}
	return 0;
}

int record_qemu(const struct backend *b, const struct record_opts *o, struct recording *rec)
{
	(void)b;
	double t0 = now_s();
	struct record_session *s;
	if (record_start(o, rec, &s) < 0)
		return -1;
	if (record_run(s, o) < 0) {
		record_stop(s);
		return -1;
	}
	record_stop(s);
	rec->outcome = VM_OK;
	rec->ms = (now_s() - t0) * 1000;
	return 0;
}

void recording_free(struct recording *rec)
{
	free(rec->overlay);
	free(rec->log_path);
	free(rec->base);
	free(rec->res);
	free(rec->qemu_cmdline);
	memset(rec, 0, sizeof(*rec));
}
