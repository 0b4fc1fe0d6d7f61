/*
 * pool.c - a backend whose guests live across recordings (see pool.h).
 *
 * Method. Recording: the fs's recording guest boots with one test disk:
 * blklogwrites over a fresh qcow2 overlay of a disk of regions, each a copy
 * of the cached base image (img_regions_ensure), with one log file
 * (record_add_disk: the drive options of every recording), and a QMP
 * monitor. A recording takes the next unused region: the agent makes it
 * the disk's partition 1 (BLKPG: no partition table, no disk probed) and
 * mounts it, and record.c's pieces open the workload session there and run
 * the workload exactly as record_qemu does, op positions counted from the
 * log's entries before it. The power cut: QMP stop pauses the guest after
 * QEMU drained every in-flight request, so the log is whole; the
 * recording's part of it is cut out into the recording's log as a log of
 * its own (wlog_slice: sectors moved down to the region's start, any write
 * outside the region an error); cont; the agent closes the session's
 * files (SESSION end=1), unmounts the region and deletes the partition
 * (its dirty pages land in the log between two recordings, in no one's
 * part). So the next region's file system never meets the previous one
 * mounted (XFS refuses a second mount of one UUID, btrfs takes one fsid
 * for one file system). A region costs nothing at boot, so a guest serves
 * POOL_SLOTS_DEFAULT recordings; a disk per recording cost a probe of
 * about 30 ms each at boot, and a guest of 24 disks needed a boot per 24.
 *
 * Checking: the fs's checker guest has the base image as /dev/vda
 * (snapshot=on) and no log disk; checker_start sends it the recording's
 * log (LOG, in pieces), which the agent keeps in its tmpfs and checks
 * states against until the next log. A log too big for that gets a
 * classic checker of its own. A guest that failed is killed, never reused.
 */
#include "engine/pool.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "host/sys.h"
#include "images/basedisk.h"

#define POOL_SLOTS_DEFAULT 128     /* regions of a recording guest's disk */
#define POOL_SLOTS_MAX 1024
/* A recording guest whose disk's overlay holds more than this (the data its
 * recordings wrote) boots anew before the next one, with a fresh overlay:
 * the host's disk then holds no more than a few recordings' data per
 * guest. */
#define POOL_OVERLAY_MAX (1LL << 30)

/* One file system's guests. */
struct pool_fs {
	char *fs;
	/* the recording guest */
	struct vm vm;
	int up;                    /* vm runs and may take recordings */
	char *rkey;                /* what it was booted for (base image options, guest) */
	int next;                  /* its next unused region (1..slots) */
	int gen;                   /* its boots, for the disk's files' names */
	char *overlay, *log;       /* its disk: the overlay of the regions, the log */
	long long size;            /* a region's file system, bytes */
	struct wlog_follow from;   /* how far the log was complete after the last recording */
	/* the checker guest */
	struct checker *ck;        /* the live one, or NULL */
	char *ckey;
	unsigned long used;        /* when it was last used (the pool's clock) */
};

struct pool {
	struct backend b;
	const struct vm_config *guest;
	int slots;
	char *dir;
	struct pool_fs *fs;
	size_t nfs;
	int max_fs;
	unsigned long clock;
	struct pool_stats st;
};

/* The size at and above which a log is not sent: POOL_LOG_SEND_MAX, or for
 * the tests CRASHLAB_TEST_POOL_LOG_MAX bytes. */
static long long log_send_max(void)
{
	const char *env = getenv("CRASHLAB_TEST_POOL_LOG_MAX");
	return env && *env ? atoll(env) : POOL_LOG_SEND_MAX;
}

static void rguest_down(struct pool_fs *f);

/* Room for one more file system's guests: with max_fs of them up, the
 * least recently used one's stop (between two fs runs, so none is in use). */
static void make_room(struct pool *p, const struct pool_fs *keep)
{
	if (p->max_fs <= 0)
		return;
	for (;;) {
		int live = 0;
		struct pool_fs *lru = NULL;
		for (size_t i = 0; i < p->nfs; i++) {
			struct pool_fs *f = &p->fs[i];
			if (f == keep || (!f->up && !f->ck))
				continue;
			live++;
			if (!lru || f->used < lru->used)
				lru = f;
		}
		if (live < p->max_fs || !lru)
			return;
		rguest_down(lru);
		if (lru->ck)
			checker_qemu_stop(lru->ck, 0, NULL);
		lru->ck = NULL;
	}
}

static struct pool_fs *pool_fs_get(struct pool *p, const char *fs)
{
	for (size_t i = 0; i < p->nfs; i++)
		if (!strcmp(p->fs[i].fs, fs)) {
			p->fs[i].used = ++p->clock;
			if (!p->fs[i].up && !p->fs[i].ck)
				make_room(p, &p->fs[i]);
			return &p->fs[i];
		}
	make_room(p, NULL);
	p->fs = xrealloc(p->fs, (p->nfs + 1) * sizeof(*p->fs));
	struct pool_fs *f = &p->fs[p->nfs++];
	memset(f, 0, sizeof(*f));
	f->fs = xstrdup(fs);
	f->vm.chan = f->vm.console = f->vm.qmp = -1;
	f->used = ++p->clock;
	return f;
}

static char *guest_key(const struct vm_config *g)
{
	return xasprintf("%s\n%s\n%s\n%d\n%s", g->kernel, g->initrd, g->accel, g->mem_mb, g->append ? g->append : "");
}

/* The recording guest goes: killed (its disks are dead, nothing on them
 * is worth a clean shutdown), its slot files removed. */
static void rguest_down(struct pool_fs *f)
{
	vm_free(&f->vm);
	f->up = 0;
	if (f->overlay)
		unlink(f->overlay);
	if (f->log)
		unlink(f->log);
	free(f->overlay);
	free(f->log);
	f->overlay = f->log = NULL;
	free(f->rkey);
	f->rkey = NULL;
}

/* A recording that failed before it had a guest: rec as record_qemu fills it. */
static int rec_fail(const struct record_opts *o, struct recording *rec, enum vm_outcome out, const struct errbuf *e)
{
	if (!rec->log_path)
		rec->log_path = xasprintf("%s/%s.log", o->workdir, o->fs);
	if (!rec->res)
		rec->res = xcalloc(o->w && o->w->n ? o->w->n : 1, sizeof(*rec->res));
	rec->outcome = out;
	rec->err = *e;
	return -1;
}

/* Boot the fs's recording guest for o: a fresh overlay of the regions, a
 * fresh log. */
static int rguest_boot(struct pool *p, struct pool_fs *f, const struct record_opts *o, const char *key,
		       struct recording *rec)
{
	struct errbuf e;
	errbuf_clear(&e);
	char *base = img_base_ensure(o->fs, o->size, o->mkfs_opts, &e);
	if (!base)
		return rec_fail(o, rec, VM_OK, &e);
	char *regions = img_regions_ensure(base, o->size, p->slots, &e);
	free(base);
	if (!regions)
		return rec_fail(o, rec, VM_OK, &e);
	f->gen++;
	f->overlay = xasprintf("%s/%s-g%d.qcow2", p->dir, f->fs, f->gen);
	f->log = xasprintf("%s/%s-g%d.log", p->dir, f->fs, f->gen);
	int fd = -1;
	if (vm_overlay_create(regions, f->overlay, &e) < 0 ||
	    (fd = open(f->log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) < 0) {
		if (!e.code)
			errbuf_errno(&e, errno, "cannot create '%s'", f->log);
		free(regions);
		rguest_down(f);
		return rec_fail(o, rec, e.code == EXIT_GUEST ? VM_QEMU_FAILED : VM_OK, &e);
	}
	close(fd);
	free(regions);
	struct vm_config cfg = *o->guest;
	memset(&cfg.drives, 0, sizeof(cfg.drives));
	record_add_disk(&cfg, f->overlay, f->log);
	cfg.qmp = true;
	p->st.record_boots++;
	enum vm_outcome out = vm_start(&f->vm, &cfg);
	strvec_free(&cfg.drives);
	if (out != VM_OK) {
		p->st.guest_failures++;
		vm_kill(&f->vm);
		vm_failure(&f->vm, out, &e);
		errbuf_prefix(&e, "the recording guest did not start");
		rguest_down(f);
		return rec_fail(o, rec, out, &e);
	}
	f->up = 1;
	f->next = 1;
	f->size = o->size;
	memset(&f->from, 0, sizeof(f->from));
	f->rkey = xstrdup(key);
	return 0;
}

/* The log of f's guest (fd, or -1: opened here) followed to its end: *to
 * from f->from. 0, or -1 with e. */
static int log_follow_from(const struct pool_fs *f, int fd, struct wlog_follow *to, struct errbuf *e)
{
	*to = f->from;
	int own = fd < 0 ? (fd = open(f->log, O_RDONLY | O_CLOEXEC)) : -1;
	int r = fd < 0 ? -1 : wlog_follow(fd, to);
	int err = errno;
	if (own >= 0)
		close(own);
	if (r < 0)
		return errbuf_errno(e, err, "cannot read the write log '%s'", f->log);
	return 0;
}

/* Bytes the file at path takes on the host's disk (0 when it cannot say). */
static long long disk_bytes(const char *path)
{
	struct stat st;
	return path && stat(path, &st) == 0 ? (long long)st.st_blocks * 512 : 0;
}

/* The log's entries from f->from to now are cut out or between two
 * recordings: their space is given back (the file keeps its size, QEMU
 * appends after it, and nobody reads there again), so a guest's log holds
 * one recording, as a disk's did. Where holes cannot be punched, the space
 * is freed with the guest. */
static void log_drop(const struct pool_fs *f, const struct wlog_follow *now)
{
	long long lo = f->from.sectorsize ? (long long)f->from.pos : (long long)now->sectorsize;
	lo = (lo + 4095) / 4096 * 4096;                  /* sector 0, the superblock, stays */
	long long hi = (long long)now->pos / 4096 * 4096;
	if (!now->sectorsize || hi <= lo)
		return;
	int fd = open(f->log, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	/* not every file system punches holes: then the space goes with the guest */
	int r = fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, lo, hi - lo);
	(void)r;
	close(fd);
}

/* The recording's part of the guest's log - from f->from to its end now -
 * as a log of its own at dst, its sectors those of the region at shift
 * bytes. 0, or -1 with e. */
static int cut_log(const struct pool_fs *f, long long shift, const char *dst, struct errbuf *e)
{
	int in = open(f->log, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return errbuf_errno(e, errno, "cannot read the write log '%s'", f->log);
	struct wlog_follow to;
	if (log_follow_from(f, in, &to, e) < 0) {
		close(in);
		return -1;
	}
	uint64_t committed = 0;
	if (wlog_read_committed(in, &committed) < 0)
		committed = 0;
	committed = committed > f->from.entries ? committed - f->from.entries : 0;
	int out = open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (out < 0) {
		close(in);
		return errbuf_errno(e, errno, "cannot create '%s'", dst);
	}
	uint32_t S = to.sectorsize;
	int r = 0;
	if (!S) {
		/* nothing flushed since the guest booted: an empty log (no
		 * superblock yet), as a fresh disk's log would be */
		if (to.entries)
			r = errbuf_set(e, EXIT_SOFTWARE, "the write log '%s' has entries but no superblock", f->log);
	} else {
		r = wlog_slice(in, &f->from, &to, committed, (uint64_t)shift / S, (uint64_t)f->size / S, out, e);
	}
	close(in);
	if (close(out) < 0 && !r)
		r = errbuf_errno(e, errno, "cannot write '%s'", dst);
	return r;
}

/* The guest failed around a recording that is over (its log is copied):
 * it is killed and not reused; the recording stands. */
static void rguest_lost(struct pool *p, struct pool_fs *f, const struct recording *rec)
{
	p->st.guest_failures++;
	vm_kill(&f->vm);
	record_keep_console(rec, &f->vm);
	rguest_down(f);
}

static int pool_record(const struct backend *b, const struct record_opts *o, struct recording *rec)
{
	struct pool *p = b->ctx;
	double t0 = now_s();
	memset(rec, 0, sizeof(*rec));
	struct pool_fs *f = pool_fs_get(p, o->fs);
	char *gk = guest_key(o->guest);
	char *key = xasprintf("%lld\n%s\n%s", o->size, o->mkfs_opts ? o->mkfs_opts : "", gk);
	free(gk);
	if (f->up && (strcmp(f->rkey, key) || f->next > p->slots || disk_bytes(f->overlay) > POOL_OVERLAY_MAX))
		rguest_down(f);
	if (!f->up && rguest_boot(p, f, o, key, rec) < 0) {
		free(key);
		return -1;
	}
	free(key);

	int region = f->next++;
	long long shift = (long long)region * img_region_stride(f->size);
	char mnt[32];
	snprintf(mnt, sizeof(mnt), "/mnt/r%d", region);
	struct record_slot rs = { &f->vm, "/dev/vda", mnt, f->log, shift, f->size, &f->from };
	struct record_session *s = NULL;
	p->st.recordings++;
	if (record_start_slot(o, &rs, rec, &s) < 0 || record_run(s, o) < 0) {
		/* record.c killed the guest that failed (the base image failing
		 * leaves it up, and its disk unused) */
		record_stop(s);
		if (!vm_running(&f->vm)) {
			p->st.guest_failures++;
			rguest_down(f);
		}
		return -1;
	}
	record_stop(s);

	/* The power cut: the guest paused with every request drained, so the
	 * disk's log is whole; its copy is the recording's. */
	struct sbuf reply = SBUF_INIT;
	struct errbuf e;
	errbuf_clear(&e);
	if (vm_qmp(&f->vm, "{\"execute\":\"stop\"}", &reply) < 0) {
		struct errbuf how;
		errbuf_set(&e, EXIT_GUEST, "the power cut (QMP stop) failed: %s", reply.buf);
		vm_failure(&f->vm, VM_LOST, &how);
		errbuf_set(&rec->err, EXIT_GUEST, "%s: %s", e.msg, how.msg);
		rec->outcome = VM_LOST;
		sbuf_free(&reply);
		rguest_lost(p, f, rec);
		return -1;
	}
	if (cut_log(f, shift, rec->log_path, &e) < 0) {
		rec->outcome = VM_OK;
		rec->err = e;
		sbuf_free(&reply);
		rguest_lost(p, f, rec);
		return -1;
	}
	record_keep_console(rec, &f->vm);
	rec->outcome = VM_OK;
	/* The guest lets go of the region: the session's files closed, the
	 * region unmounted, its partition deleted; what that wrote is the log's
	 * up to the next recording's start. A guest that cannot is not reused;
	 * the recording stands. */
	uint8_t type = 0;
	char *end = xasprintf("end=1\numount=%s\ndelpart=/dev/vda\n", mnt);
	if (vm_qmp(&f->vm, "{\"execute\":\"cont\"}", &reply) < 0 ||
	    vm_request(&f->vm, PROTO_MSG_SESSION, 0, 0, end, (uint32_t)strlen(end), 0, &type, &reply) != VM_OK ||
	    type != PROTO_MSG_RESULT) {
		rguest_lost(p, f, rec);
	} else {
		struct wlog_follow now;
		if (log_follow_from(f, -1, &now, &e) < 0) {
			rguest_lost(p, f, rec);
		} else {
			log_drop(f, &now);
			f->from = now;
		}
	}
	free(end);
	sbuf_free(&reply);
	rec->ms = (now_s() - t0) * 1000; /* letting go of the disk included */
	return 0;
}

/* ---- checking ---------------------------------------------------------- */

static enum vm_outcome pool_checker_start(const struct backend *b, const struct checker_opts *co,
					  struct checker **out, struct errbuf *e)
{
	struct pool *p = b->ctx;
	errbuf_clear(e);
	*out = NULL;
	struct pool_fs *f = pool_fs_get(p, co->fs);
	struct stat st;
	if (stat(co->log_path, &st) == 0 && (long long)st.st_size > log_send_max()) {
		/* too big to send: a checker of its own with the log as a disk */
		p->st.checker_boots++;
		enum vm_outcome o = checker_qemu_boot(co, 1, out, e);
		checker_qemu_set_owner(*out, p);
		return o;
	}
	char *gk = guest_key(co->guest);
	char *key = xasprintf("%s\n%s", co->base, gk);
	free(gk);
	if (f->ck && strcmp(f->ckey, key)) {
		checker_qemu_stop(f->ck, 0, NULL);
		f->ck = NULL;
	}
	if (!f->ck) {
		p->st.checker_boots++;
		struct checker *c = NULL;
		enum vm_outcome o = checker_qemu_boot(co, 0, &c, e);
		checker_qemu_set_owner(c, p);
		*out = c;
		if (o != VM_OK) {
			/* the run loop stops it (failed) */
			free(key);
			return o;
		}
		f->ck = c;
		free(f->ckey);
		f->ckey = key;
	} else {
		free(key);
	}
	*out = f->ck;
	return checker_qemu_load_log(f->ck, co->log_path, co->mount_opts, co->overlay, e);
}

static enum vm_outcome pool_check(struct checker *c, const char *spec, struct check_report *rep, struct errbuf *e)
{
	struct pool *p = checker_qemu_owner(c);
	p->st.checks++;
	return checker_qemu_check(c, spec, rep, e);
}

static void pool_checker_stop(struct checker *c, int failed, const char *console_path)
{
	if (!c)
		return;
	struct pool *p = checker_qemu_owner(c);
	if (failed)
		p->st.guest_failures++;
	for (size_t i = 0; i < p->nfs; i++) {
		struct pool_fs *f = &p->fs[i];
		if (f->ck != c)
			continue;
		if (failed) {
			checker_qemu_stop(c, 1, console_path);
			f->ck = NULL;
		} else if (console_path) {
			checker_qemu_save_console(c, console_path);
		}
		return;
	}
	/* a checker of its own (a big log), or one that never came up */
	checker_qemu_stop(c, failed, console_path);
}

const struct backend *pool_backend_new(const struct pool_opts *o)
{
	struct pool *p = xcalloc(1, sizeof(*p));
	p->guest = o->guest;
	p->slots = o->slots > 0 ? o->slots : POOL_SLOTS_DEFAULT;
	if (p->slots > POOL_SLOTS_MAX)
		p->slots = POOL_SLOTS_MAX;
	p->dir = xstrdup(o->dir);
	p->max_fs = o->max_fs;
	p->b = (struct backend){ "pool", p, pool_record, pool_checker_start, pool_check, pool_checker_stop };
	return &p->b;
}

void pool_backend_stats(const struct backend *b, struct pool_stats *st)
{
	const struct pool *p = b->ctx;
	*st = p->st;
}

void pool_backend_free(const struct backend *b)
{
	if (!b)
		return;
	struct pool *p = b->ctx;
	for (size_t i = 0; i < p->nfs; i++) {
		struct pool_fs *f = &p->fs[i];
		rguest_down(f);
		if (f->ck)
			checker_qemu_stop(f->ck, 0, NULL);
		free(f->ckey);
		free(f->fs);
	}
	free(p->fs);
	free(p->dir);
	free(p);
}
