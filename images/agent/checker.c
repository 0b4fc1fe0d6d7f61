/*
 * checker.c - where a crash state is built and looked at, inside the guest.
 *
 * Method. The checker guest has two read-only inputs: /dev/vda, the cached
 * base image (the disk as it was before the recording), and /dev/vdb, the
 * write log of the recording. The log is scanned once (core/wlog.c). For
 * each state the host names a spec (which log entries to apply, which
 * sectors of a torn write). We then
 *   1. give the state device a device-mapper snapshot of the origin whose
 *      copy-on-write store is a loop device over a sparse file in tmpfs -
 *      RAM - or, for recordings that wrote more than RAM can hold, /dev/vdc,
 *      a sparse scratch disk the host gives the guest; so the origin is
 *      never written and a state costs only the blocks it changes
 *      (through the kernel's device-mapper ioctls directly: running dmsetup
 *      twice per state cost more under TCG than mounting the state; and by
 *      swapping a new table into the device that stays, over two tmpfs
 *      stores used in turn: see load_snapshot);
 *   2. apply the state's writes to the snapshot in log order;
 *   3. mount it (the file system's journal or log recovery runs here),
 *      capture the observed tree (capture.c), unmount; for an [overlay]
 *      workload (overlay=1), the overlay mounted over it in between and
 *      its merged view captured (overlay.c);
 *   4. run the file system's fsck read-only on the recovered device;
 *   5. empty the store for the state after next.
 * A state that does not mount, or that fsck flags, is a result, reported
 * with the kernel's messages - never an error of the checker. The other
 * way round too: a state the checker could not build whole (the store
 * full, so the snapshot went invalid; a write to it that failed) is the
 * checker's error, never reported as a state that does not mount. Each phase is
 * timed, so `crashlab bench check` can tell where the time goes.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/dm-ioctl.h>
#include <linux/fs.h>
#include <linux/loop.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/klog.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "images/agent/agent.h"
#include "core/wlog.h"

#define STATE_NAME "clstate"
#define STATE_DIR "/mnt/state"
#define MERGED_DIR "/mnt/merged"
#define COW_FILE "/tmp/cl-cow%d"
#define COW_DISK "/dev/vdc"
#define OUTPUT_MAX (64 * 1024)

struct agent_checker {
	char origin[64];
	int log_fd;
	struct wlog log;
	uint64_t origin_bytes;
};

/* Where states are built: the state device and its copy-on-write stores.
 * It outlives a checker (one write log): the next log of the guest - a
 * checker guest that lives across recordings gets one per fs run - builds
 * its states on the same device, over the same origin. */
static struct stage {
	char origin[64];
	uint64_t origin_bytes;
	/* two loop devices over tmpfs files, used in turn, or one, COW_DISK,
	 * the host's scratch disk (fd -1); none before the first checker */
	struct {
		int fd;
		char dev[32];
	} store[2];
	int nstores;
	int cur;                /* the store the device's table uses */
	int live;               /* the device exists, with a snapshot table */
	char dev[32];           /* its node, /dev/dm-N (devtmpfs makes it) */
} stage;

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Run argv, collecting stdout+stderr (bounded) into *out; returns the exit status. */
static int run_capture(char *const argv[], char **out, size_t *outlen)
{
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		int nul = open("/dev/null", O_RDONLY);
		dup2(nul, 0);
		dup2(p[1], 1);
		dup2(p[1], 2);
		execvp(argv[0], argv);
		fprintf(stderr, "cannot run '%s': %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(p[1]);
	size_t cap = 4096, len = 0;
	char *buf = malloc(cap);
	for (;;) {
		char tmp[4096];
		ssize_t n = read(p[0], tmp, sizeof(tmp));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if (len + (size_t)n + 1 > cap && len < OUTPUT_MAX) {
			while (len + (size_t)n + 1 > cap)
				cap *= 2;
			buf = realloc(buf, cap);
		}
		if (len + (size_t)n + 1 <= cap) {
			memcpy(buf + len, tmp, (size_t)n);
			len += (size_t)n;
		}
	}
	close(p[0]);
	buf[len] = '\0';
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	if (out) {
		*out = buf;
		*outlen = len;
	} else {
		free(buf);
	}
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* Attach a free loop device to fd; its node goes to dev (32 bytes). */
static int attach_loop(int fd, char *dev, struct errbuf *e)
{
	int ctl = open("/dev/loop-control", O_RDWR | O_CLOEXEC);
	if (ctl < 0) {
		errbuf_set(e, EXIT_SOFTWARE, "cannot open /dev/loop-control: %s", strerror(errno));
		return -1;
	}
	int n = ioctl(ctl, LOOP_CTL_GET_FREE);
	close(ctl);
	if (n < 0) {
		errbuf_set(e, EXIT_SOFTWARE, "no free loop device: %s", strerror(errno));
		return -1;
	}
	snprintf(dev, 32, "/dev/loop%d", n);
	int lfd = open(dev, O_RDWR | O_CLOEXEC);
	if (lfd < 0 || ioctl(lfd, LOOP_SET_FD, fd) < 0) {
		errbuf_set(e, EXIT_SOFTWARE, "cannot attach '%s': %s", dev, strerror(errno));
		if (lfd >= 0)
			close(lfd);
		return -1;
	}
	close(lfd);
	return 0;
}

static void remove_snapshot(void);
static int dm_ioctl(unsigned long cmd, const char *name, const void *extra, size_t extra_len,
		    uint32_t target_count, uint32_t flags, struct dm_ioctl *out);

/* The stage goes: the device, the loop devices, their files. */
static void stage_free(void)
{
	remove_snapshot();
	for (int i = 0; i < stage.nstores; i++) {
		if (stage.store[i].fd < 0)
			continue;
		int lfd = open(stage.store[i].dev, O_RDWR | O_CLOEXEC);
		if (lfd >= 0) {
			ioctl(lfd, LOOP_CLR_FD, 0);
			close(lfd);
		}
		close(stage.store[i].fd);
		char path[32];
		snprintf(path, sizeof(path), COW_FILE, i);
		unlink(path);
	}
	memset(&stage, 0, sizeof(stage));
}

/* The stores for states of origin (bytes long): the host's scratch disk
 * when it has one as big, else two loop devices over tmpfs files. */
static int stage_setup(const char *origin, uint64_t bytes, struct errbuf *e)
{
	remove_snapshot();      /* one an earlier agent left */
	memset(&stage, 0, sizeof(stage));
	snprintf(stage.origin, sizeof(stage.origin), "%s", origin);
	stage.origin_bytes = bytes;
	uint64_t disk_bytes = 0;
	int dfd = open(COW_DISK, O_RDONLY | O_CLOEXEC);
	if (dfd >= 0 && ioctl(dfd, BLKGETSIZE64, &disk_bytes) == 0 && disk_bytes >= bytes) {
		/* the host's scratch disk: nothing to attach, nothing to empty */
		close(dfd);
		stage.store[0].fd = -1;
		snprintf(stage.store[0].dev, sizeof(stage.store[0].dev), "%s", COW_DISK);
		stage.nstores = 1;
		return 0;
	}
	if (dfd >= 0)
		close(dfd);
	for (int i = 0; i < 2; i++) {
		char path[32];
		snprintf(path, sizeof(path), COW_FILE, i);
		stage.store[i].fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (stage.store[i].fd < 0 || ftruncate(stage.store[i].fd, (off_t)bytes) < 0 ||
		    attach_loop(stage.store[i].fd, stage.store[i].dev, e) < 0) {
			if (!e->msg[0])
				errbuf_set(e, EXIT_SOFTWARE, "cannot make the copy-on-write store: %s", strerror(errno));
			if (stage.store[i].fd >= 0)
				close(stage.store[i].fd);
			stage.nstores = i;
			stage_free();
			return -1;
		}
		stage.nstores = i + 1;
	}
	return 0;
}

struct agent_checker *agent_checker_new(const char *origin, const char *logdev, struct errbuf *e)
{
	errbuf_clear(e);
	struct agent_checker *c = calloc(1, sizeof(*c));
	if (!c) {
		errbuf_set(e, EXIT_SOFTWARE, "out of memory");
		return NULL;
	}
	snprintf(c->origin, sizeof(c->origin), "%s", origin);
	c->log_fd = open(logdev, O_RDONLY | O_CLOEXEC);
	if (c->log_fd < 0) {
		errbuf_set(e, EXIT_SOFTWARE, "cannot open the write log '%s': %s", logdev, strerror(errno));
		free(c);
		return NULL;
	}
	struct errbuf werr;
	if (wlog_open(&c->log, c->log_fd, &werr) < 0) {
		errbuf_set(e, EXIT_SOFTWARE, "write log: %s", werr.msg);
		close(c->log_fd);
		free(c);
		return NULL;
	}
	int ofd = open(origin, O_RDONLY | O_CLOEXEC);
	if (ofd < 0 || ioctl(ofd, BLKGETSIZE64, &c->origin_bytes) < 0) {
		errbuf_set(e, EXIT_SOFTWARE, "cannot size the origin '%s': %s", origin, strerror(errno));
		if (ofd >= 0)
			close(ofd);
		close(c->log_fd);
		free(c);
		return NULL;
	}
	close(ofd);
	if (stage.nstores && (strcmp(stage.origin, c->origin) || stage.origin_bytes != c->origin_bytes))
		stage_free();
	if (!stage.nstores && stage_setup(c->origin, c->origin_bytes, e) < 0) {
		wlog_close(&c->log);
		close(c->log_fd);
		free(c);
		return NULL;
	}
	mkdir("/mnt", 0755);
	mkdir(STATE_DIR, 0755);
	return c;
}

/* The checker goes; the stage stays for the next one. */
void agent_checker_free(struct agent_checker *c)
{
	if (!c)
		return;
	wlog_close(&c->log);
	close(c->log_fd);
	free(c);
}

/* One device-mapper ioctl on name; extra (may be NULL) follows the header. */
static int dm_ioctl(unsigned long cmd, const char *name, const void *extra, size_t extra_len,
		    uint32_t target_count, uint32_t flags, struct dm_ioctl *out)
{
	union {
		struct dm_ioctl io;
		char buf[sizeof(struct dm_ioctl) + 1024];
	} u;
	if (extra_len > sizeof(u.buf) - sizeof(struct dm_ioctl)) {
		errno = E2BIG;
		return -1;
	}
	memset(&u, 0, sizeof(u));
	u.io.version[0] = DM_VERSION_MAJOR;
	u.io.version[1] = 0;
	u.io.version[2] = 0;
	u.io.data_size = (uint32_t)sizeof(u.buf);
	u.io.data_start = (uint32_t)sizeof(struct dm_ioctl);
	u.io.target_count = target_count;
	u.io.flags = flags;
	snprintf(u.io.name, sizeof(u.io.name), "%s", name);
	if (extra_len)
		memcpy(u.buf + sizeof(struct dm_ioctl), extra, extra_len);
	int fd = open("/dev/mapper/control", O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -1;
	int r = ioctl(fd, cmd, &u);
	int e = errno;
	close(fd);
	if (out)
		*out = u.io;
	errno = e;
	return r;
}

/* Give the state device a fresh snapshot table over store si; return 0.
 *
 * The first state creates the device (its node goes to stage.dev). Every later
 * one loads a new table into it and resumes, which swaps the tables: the
 * device is never removed between states, because removing it costs a
 * quarter of a state under TCG (del_gendisk freezes the queue: an RCU grace
 * period), and destroying the last snapshot table that holds the kernel's
 * bio slabs costs another (kmem_cache_destroy waits in rcu_barrier) - the
 * new table, constructed before the old one goes, keeps them. The two
 * tables use different stores, because a table loaded over the store of the
 * live one takes over its exceptions (dm-snapshot's handover). */
static int load_snapshot(struct agent_checker *c, int si, struct errbuf *e)
{
	struct dm_ioctl io;
	int created = 0;
	if (!stage.live) {
		if (dm_ioctl(DM_DEV_CREATE, STATE_NAME, NULL, 0, 0, 0, &io) < 0) {
			errbuf_set(e, EXIT_SOFTWARE, "cannot create device-mapper device: %s", strerror(errno));
			return -1;
		}
		created = 1;
	}
	struct {
		struct dm_target_spec t;
		char params[256];
	} tbl;
	memset(&tbl, 0, sizeof(tbl));
	tbl.t.sector_start = 0;
	tbl.t.length = c->origin_bytes / 512;
	snprintf(tbl.t.target_type, sizeof(tbl.t.target_type), "snapshot");
	int n = snprintf(tbl.params, sizeof(tbl.params), "%s %s N 8", c->origin, stage.store[si].dev);
	size_t len = sizeof(tbl.t) + (size_t)n + 1;
	len = (len + 7) & ~(size_t)7;
	tbl.t.next = 0;
	if (dm_ioctl(DM_TABLE_LOAD, STATE_NAME, &tbl, len, 1, 0, NULL) < 0 ||
	    dm_ioctl(DM_DEV_SUSPEND, STATE_NAME, NULL, 0, 0, 0, &io) < 0) {
		errbuf_set(e, EXIT_SOFTWARE, "cannot load the snapshot table: %s", strerror(errno));
		remove_snapshot();
		stage.live = 0;
		return -1;
	}
	stage.live = 1;
	stage.cur = si;
	if (!created) {
		/* the same block device as the last state's: drop its cache */
		int fd = open(stage.dev, O_RDWR | O_CLOEXEC);
		int r = fd < 0 ? -1 : ioctl(fd, BLKFLSBUF, 0);
		if (fd >= 0)
			close(fd);
		if (r < 0) {
			errbuf_set(e, EXIT_SOFTWARE, "cannot drop the cache of '%s': %s", stage.dev, strerror(errno));
			remove_snapshot();
			stage.live = 0;
			return -1;
		}
		return 0;
	}
	unsigned minor = (unsigned)((io.dev & 0xff) | ((io.dev >> 12) & 0xfff00));
	snprintf(stage.dev, sizeof(stage.dev), "/dev/dm-%u", minor);
	/* devtmpfs makes the node asynchronously; wait for it briefly. */
	for (int i = 0; i < 200 && access(stage.dev, F_OK) < 0; i++) {
		struct timespec ts = { 0, 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
	return 0;
}

/* Has the snapshot gone invalid (its store full or failing)? Its status
 * line says "Invalid" (or "Overflow" for a merging one) then. */
static int snapshot_invalid(void)
{
	union {
		struct dm_ioctl io;
		char buf[sizeof(struct dm_ioctl) + 1024];
	} u;
	memset(&u, 0, sizeof(u));
	u.io.version[0] = DM_VERSION_MAJOR;
	u.io.data_size = (uint32_t)sizeof(u.buf);
	u.io.data_start = (uint32_t)sizeof(struct dm_ioctl);
	snprintf(u.io.name, sizeof(u.io.name), "%s", STATE_NAME);
	int fd = open("/dev/mapper/control", O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return 0;
	int r = ioctl(fd, DM_TABLE_STATUS, &u);
	close(fd);
	if (r < 0 || u.io.target_count < 1 || u.io.data_start + sizeof(struct dm_target_spec) >= sizeof(u.buf))
		return 0;
	u.buf[sizeof(u.buf) - 1] = '\0';
	const char *status = u.buf + u.io.data_start + sizeof(struct dm_target_spec);
	return strstr(status, "Invalid") != NULL || strstr(status, "Overflow") != NULL;
}

static void remove_snapshot(void)
{
	for (int i = 0; i < 50; i++) {
		if (dm_ioctl(DM_DEV_REMOVE, STATE_NAME, NULL, 0, 0, 0, NULL) == 0 || errno == ENXIO)
			return;
		struct timespec ts = { 0, 20 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
}

void agent_kernel_tail(char *out, size_t outlen)
{
	char buf[16384];
	int n = klogctl(3 /* SYSLOG_ACTION_READ_ALL */, buf, sizeof(buf) - 1);
	out[0] = '\0';
	if (n <= 0)
		return;
	buf[n] = '\0';
	/* the last few lines */
	int lines = 0;
	char *p = buf + n;
	while (p > buf && lines < 6) {
		p--;
		if (*p == '\n' && p != buf + n - 1)
			lines++;
	}
	if (*p == '\n')
		p++;
	size_t o = 0;
	for (; *p && o + 4 < outlen; p++) {
		if (*p == '\n') {
			if (p[1] && o + 4 < outlen) {
				memcpy(out + o, " | ", 3);
				o += 3;
			}
		} else {
			out[o++] = *p;
		}
	}
	out[o] = '\0';
}

static void oneline(char *s)
{
	for (; *s; s++)
		if (*s == '\n' || *s == '\r')
			*s = ' ';
}

static int split_words(char *s, char **argv, int max)
{
	int n = 0;
	for (char *t = strtok(s, " "); t && n < max - 2; t = strtok(NULL, " "))
		argv[n++] = t;
	argv[n] = NULL;
	return n;
}

int agent_checker_run(struct agent_checker *c, const char *request, size_t len, char **reply,
		      size_t *reply_len, struct errbuf *e)
{
	char *fs = kv_get(request, len, "fs");
	char *spec_text = kv_get(request, len, "spec");
	char *mopts = kv_get(request, len, "mount_opts");
	char *fsck = kv_get(request, len, "fsck");
	char *overlay = kv_get(request, len, "overlay");
	char *fsck_out = NULL, *tree = NULL;
	size_t fsck_len = 0, tree_len = 0;
	int ret = -1;
	struct wlog_spec spec;
	int have_spec = 0;
	char msg[2048] = "";
	int mount_ok = 0, fsck_status = -1;
	uint64_t bytes = 0;
	double t0 = now_ms(), t_replay = 0, t_mount = 0, t_capture = 0, t_fsck = 0;

	if (!fs || !spec_text || !fsck) {
		errbuf_set(e, EXIT_SOFTWARE, "check request lacks fs, spec or fsck");
		goto out;
	}
	struct errbuf werr;
	if (wlog_spec_parse(spec_text, &spec, &werr) < 0) {
		errbuf_set(e, EXIT_SOFTWARE, "bad state spec '%s': %s", spec_text, werr.msg);
		goto out;
	}
	have_spec = 1;

	/* 1. the snapshot: a new table over the store the last state did not
	 * use (with one store the last state removed the device) */
	if (load_snapshot(c, stage.live ? 1 - stage.cur : 0, e) < 0)
		goto out;

	/* 2. the state's writes */
	int dev = open(stage.dev, O_RDWR | O_CLOEXEC);
	if (dev < 0) {
		errbuf_set(e, EXIT_SOFTWARE, "cannot open '%s': %s", stage.dev, strerror(errno));
		goto out_remove;
	}
	if (wlog_apply(&c->log, &spec, dev, &bytes, &werr) < 0) {
		errbuf_set(e, EXIT_SOFTWARE, "cannot apply state '%s': %s", spec_text, werr.msg);
		close(dev);
		goto out_remove;
	}
	if (fsync(dev) < 0 || snapshot_invalid()) {
		errbuf_set(e, EXIT_SOFTWARE, "cannot build state '%s': %s", spec_text,
			   snapshot_invalid() ? "its copy-on-write store is full (the snapshot went invalid)"
					      : strerror(errno));
		close(dev);
		goto out_remove;
	}
	close(dev);
	double t1 = now_ms();
	t_replay = t1 - t0;

	/* 3. mount (recovery runs), capture, unmount */
	klogctl(5 /* SYSLOG_ACTION_CLEAR */, NULL, 0);
	if (mount(stage.dev, STATE_DIR, fs, 0, mopts && *mopts ? mopts : NULL) == 0) {
		/* an [overlay] workload's program sees the overlay: mounted over
		 * the recovered fs as the recording mounted it; when it does not
		 * mount, the state does not */
		const char *seen = STATE_DIR;
		int merged = 0;
		mount_ok = 1;
		if (overlay && !strcmp(overlay, "1")) {
			if (agent_overlay_mount(STATE_DIR, MERGED_DIR) == 0) {
				seen = MERGED_DIR;
				merged = 1;
			} else {
				int e = errno;
				char kt[1500];
				agent_kernel_tail(kt, sizeof(kt));
				snprintf(msg, sizeof(msg), "mount of the overlay: %s%s%s", strerror(e), *kt ? " | " : "", kt);
				mount_ok = 0;
			}
		}
		double t2 = now_ms();
		t_mount = t2 - t1;
		FILE *f = mount_ok ? open_memstream(&tree, &tree_len) : NULL;
		if (mount_ok && (!f || agent_capture_tree(seen, f) < 0)) {
			snprintf(msg, sizeof(msg), "capture failed: %s", strerror(errno));
		}
		if (f)
			fclose(f);
		double t3 = now_ms();
		t_capture = t3 - t2;
		if (merged && umount2(MERGED_DIR, 0) < 0) {
			snprintf(msg, sizeof(msg), "umount of the overlay failed: %s", strerror(errno));
			umount2(MERGED_DIR, MNT_DETACH);
		}
		if (umount2(STATE_DIR, 0) < 0) {
			snprintf(msg, sizeof(msg), "umount failed: %s", strerror(errno));
			umount2(STATE_DIR, MNT_DETACH);
		}
		t_mount += now_ms() - t3;
	} else {
		int e = errno;
		char kt[1500];
		agent_kernel_tail(kt, sizeof(kt));
		snprintf(msg, sizeof(msg), "mount: %s%s%s", strerror(e), *kt ? " | " : "", kt);
		t_mount = now_ms() - t1;
	}

	/* 4. fsck, read-only, on the recovered device */
	double t4 = now_ms();
	char *fargv[32];
	split_words(fsck, fargv, 30);
	int fa = 0;
	while (fargv[fa])
		fa++;
	fargv[fa++] = stage.dev;
	fargv[fa] = NULL;
	fsck_status = run_capture(fargv, &fsck_out, &fsck_len);
	t_fsck = now_ms() - t4;
	/* recovery writes too: a store that filled up then makes the mount and
	 * fsck see I/O errors that are the checker's, not the state's */
	if (snapshot_invalid()) {
		errbuf_set(e, EXIT_SOFTWARE, "cannot check state '%s': its copy-on-write store filled up while it was "
			   "mounted (the snapshot went invalid)", spec_text);
		goto out_remove;
	}
	ret = 0;

out_remove:
	/* The device stays for the next state's table, unless this one failed
	 * or there is only one store. */
	if (ret < 0 || stage.nstores < 2) {
		remove_snapshot();
		stage.live = 0;
	}
	/* Empty the store this state used: its blocks are RAM. Its table, idle
	 * now, never reads it again: the next state swaps in the other store.
	 * (A scratch disk needs nothing: a transient store never reads what it
	 * held.) */
	int sfd = stage.store[stage.cur].fd;
	if (sfd >= 0 && (ftruncate(sfd, 0) < 0 || ftruncate(sfd, (off_t)c->origin_bytes) < 0))
		ret = -1;
	if (ret == 0) {
		double total = now_ms() - t0;
		double other = total - t_replay - t_mount - t_capture - t_fsck;
		oneline(msg);
		size_t hcap = 4096 + strlen(msg);
		char *hdr = malloc(hcap);
		int hn = snprintf(hdr, hcap,
				  "mount_ok=%d\nmount_msg=%s\nfsck_status=%d\nbytes=%llu\nms_replay=%.3f\n"
				  "ms_mount=%.3f\nms_capture=%.3f\nms_fsck=%.3f\nms_other=%.3f\nfsck_len=%zu\n"
				  "tree_len=%zu\n\n",
				  mount_ok, msg, fsck_status, (unsigned long long)bytes, t_replay, t_mount,
				  t_capture, t_fsck, other, fsck_len, tree_len);
		*reply_len = (size_t)hn + fsck_len + tree_len;
		*reply = malloc(*reply_len + 1);
		memcpy(*reply, hdr, (size_t)hn);
		if (fsck_len)
			memcpy(*reply + hn, fsck_out, fsck_len);
		if (tree_len)
			memcpy(*reply + hn + fsck_len, tree, tree_len);
		free(hdr);
	}
out:
	if (have_spec)
		wlog_spec_free(&spec);
	free(fs);
	free(spec_text);
	free(mopts);
	free(fsck);
	free(overlay);
	free(fsck_out);
	free(tree);
	return ret;
}
