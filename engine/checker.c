/*
 * checker.c - checking crash states in a QEMU guest, and the QEMU backend
 * (engine/backend.h) that this and record.c make together.
 *
 * Method. One checker guest per file system: its /dev/vda is the cached
 * base image (QEMU snapshot=on, so even a stray write never reaches the
 * cache) and its /dev/vdb the recording's write log, read-only. For each
 * state the host sends the state's spec; the agent's checker (see
 * images/agent/checker.c) builds it as a device-mapper snapshot with the
 * copy-on-write store in RAM, mounts, captures, unmounts and runs fsck, and
 * answers with the outcome, fsck's output and the observed tree. The guest
 * is reused across states; only a guest failure (panic, hang) ends it, and
 * the run loop may start a new one for the remaining states.
 */
#include "engine/backend.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/fs.h"
#include "host/msg.h"
#include "host/sys.h"

/* One state (replay, mount with recovery, capture, unmount, fsck) at KVM
 * speed; a state that takes longer hangs the guest, which is a finding. */
#define CHECK_TIMEOUT_S 90.0
/* Write logs up to this size are checked with the store in guest RAM. */
#define COW_IN_RAM_MAX (384LL << 20)

struct checker {
	struct vm vm;
	const struct fs_type *fs;
	char *fsck;           /* the fs's read-only fsck command, space-joined */
	char *mount_opts;
	int overlay;          /* check the [overlay] workload's merged view */
	char *scratch;        /* the copy-on-write scratch disk (removed at the end), or NULL */
	uint32_t seq;
	uint32_t seq_log;     /* LOG requests sent */
	void *owner;          /* who keeps this guest (engine/pool.c), or NULL */
	char *refused;        /* the agent refused the log it was sent: why, or NULL */
};

static enum vm_outcome start_qemu(const struct backend *b, const struct checker_opts *o, struct checker **out,
				  struct errbuf *e)
{
	(void)b;
	return checker_qemu_boot(o, 1, out, e);
}

enum vm_outcome checker_qemu_boot(const struct checker_opts *o, int log_disk, struct checker **out, struct errbuf *e)
{
	struct checker *c = xcalloc(1, sizeof(*c));
	c->fs = fs_lookup(o->fs);
	c->fsck = fs_fsck_line(c->fs);
	c->mount_opts = xstrdup(o->mount_opts ? o->mount_opts : "");
	c->overlay = o->overlay;
	struct vm_config cfg = *o->guest;
	memset(&cfg.drives, 0, sizeof(cfg.drives));
	strvec_pushf(&cfg.drives, "file=%s,format=raw,snapshot=on", o->base);
	if (log_disk)
		strvec_pushf(&cfg.drives, "file=%s,format=raw,readonly=on", o->log_path);
	/* A state's copy-on-write store lives in guest RAM; a recording that
	 * wrote more than RAM can hold gets a sparse scratch disk instead. */
	struct stat lst;
	if (log_disk && stat(o->log_path, &lst) == 0 && lst.st_size > COW_IN_RAM_MAX) {
		c->scratch = xasprintf("%.*s.cow", (int)(strlen(o->log_path) - 4), o->log_path);
		struct stat bst;
		int fd = open(c->scratch, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (fd < 0 || stat(o->base, &bst) < 0 || ftruncate(fd, bst.st_size) < 0) {
			errbuf_errno(e, errno, "cannot make the scratch disk '%s'", c->scratch);
			if (fd >= 0)
				close(fd);
			strvec_free(&cfg.drives);
			*out = c;
			return VM_QEMU_FAILED;
		}
		close(fd);
		strvec_pushf(&cfg.drives, "file=%s,format=raw,cache=unsafe", c->scratch);
	}
	if (cfg.mem_mb < 1536)
		cfg.mem_mb = 1536; /* the copy-on-write store lives in guest RAM */
	enum vm_outcome r = vm_start(&c->vm, &cfg);
	strvec_free(&cfg.drives);
	if (r != VM_OK)
		vm_failure(&c->vm, r, e);
	*out = c;
	return r;
}

enum vm_outcome checker_qemu_load_log(struct checker *c, const char *log_path, const char *mount_opts,
				      int overlay, struct errbuf *e)
{
	errbuf_clear(e);
	free(c->mount_opts);
	c->mount_opts = xstrdup(mount_opts ? mount_opts : "");
	c->overlay = overlay;
	free(c->refused);
	c->refused = NULL;
	int fd = open(log_path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0) {
		errbuf_errno(e, errno, "cannot read the write log '%s'", log_path);
		if (fd >= 0)
			close(fd);
		c->refused = xstrdup(e->msg);
		errbuf_clear(e);
		return VM_OK;
	}
	uint64_t total = (uint64_t)st.st_size, off = 0;
	double t0 = now_s();
	unsigned char *buf = xmalloc(PROTO_LOG_PIECE);
	uint32_t seq = ++c->seq_log;
	enum vm_outcome o = VM_OK;
	uint8_t type = 0;
	struct sbuf reply = SBUF_INIT;
	for (;;) {
		uint64_t want = total - off < PROTO_LOG_PIECE ? total - off : PROTO_LOG_PIECE;
		size_t got = 0;
		while (got < want) {
			ssize_t n = pread(fd, buf + got, want - got, (off_t)(off + got));
			if (n <= 0) {
				/* the file shrank under us: send what there is */
				want = got;
				break;
			}
			got += (size_t)n;
		}
		uint16_t flags = proto_log_flags(off, want, off + want < total ? total : off + want);
		if (flags & PROTO_LOG_LAST) {
			o = vm_request(&c->vm, PROTO_MSG_LOG, flags, seq, buf, (uint32_t)want, 0, &type, &reply);
			break;
		}
		o = vm_send(&c->vm, PROTO_MSG_LOG, flags, seq, buf, (uint32_t)want, 0);
		if (o != VM_OK)
			break;
		off += want;
	}
	close(fd);
	free(buf);
	if (msg_verbose() && o == VM_OK) {
		double s = now_s() - t0;
		note("write log '%s' sent to the checker guest: %.1f MiB in %.3f s (%.1f MiB/s)", log_path,
		     (double)total / (1 << 20), s, s > 0 ? (double)total / (1 << 20) / s : 0);
	}
	if (o != VM_OK) {
		char why[300];
		vm_describe(&c->vm, o, why, sizeof(why));
		errbuf_set(e, vm_outcome_exit(o), "sending the write log: %s", why);
	} else if (type != PROTO_MSG_RESULT) {
		/* a log the agent cannot use is refused at the first state, as a
		 * classic checker refuses a log disk it cannot read */
		struct sbuf why = SBUF_INIT;
		if (type == PROTO_MSG_ERROR)
			sbuf_add_escaped(&why, reply.buf ? reply.buf : "", reply.len > 1000 ? 1000 : reply.len, SBUF_ESC_PROSE);
		else
			sbuf_addf(&why, "a reply of type %u to the write log", type);
		c->refused = xasprintf("checker: %s", why.buf);
		sbuf_free(&why);
	}
	sbuf_free(&reply);
	return o;
}

void checker_qemu_set_owner(struct checker *c, void *owner)
{
	c->owner = owner;
}

void *checker_qemu_owner(const struct checker *c)
{
	return c->owner;
}

int checker_qemu_save_console(struct checker *c, const char *path)
{
	return vm_save_console(&c->vm, path);
}

enum vm_outcome checker_qemu_check(struct checker *c, const char *spec, struct check_report *rep, struct errbuf *e)
{
	double t0 = now_s();
	memset(rep, 0, sizeof(*rep));
	errbuf_clear(e);
	if (c->refused) {
		errbuf_set(e, EXIT_GUEST, "%s", c->refused);
		rep->ms_host = (now_s() - t0) * 1000;
		return VM_OK;
	}
	/* Test hook: CRASHLAB_TEST_CRASH_STATE=N makes the checker guest's
	 * kernel crash (sysrq) instead of checking the N-th state it is sent,
	 * so the tests can prove a state that takes the guest down is stored
	 * as a finding and checking goes on in a fresh guest.
	 * CRASHLAB_TEST_CRASH_ONCE=FILE does it once for whoever removes FILE
	 * first: a guest that fails once, as a batch's retry must survive. */
	const char *crash_at = getenv("CRASHLAB_TEST_CRASH_STATE");
	const char *once = getenv("CRASHLAB_TEST_CRASH_ONCE");
	enum vm_outcome o;
	if ((crash_at && *crash_at && (uint32_t)atoi(crash_at) == c->seq + 1) || (once && *once && unlink(once) == 0)) {
		c->seq++;
		char *argv[] = { "sh", "-c", "echo c > /proc/sysrq-trigger; sleep 60", NULL };
		int st;
		o = vm_exec(&c->vm, argv, 1, 2, 0, &st);
	} else {
		char *req = xasprintf("fs=%s\nspec=%s\nmount_opts=%s\nfsck=%s\n%s", c->fs->name, spec, c->mount_opts,
				      c->fsck, c->overlay ? "overlay=1\n" : "");
		uint8_t type = 0;
		struct sbuf reply = SBUF_INIT;
		o = vm_request(&c->vm, PROTO_MSG_CHECK, 0, ++c->seq, req, (uint32_t)strlen(req),
			       CHECK_TIMEOUT_S * c->vm.slowdown, &type, &reply);
		free(req);
		struct errbuf pe;
		if (o == VM_OK && type == PROTO_MSG_ERROR) {
			struct sbuf why = SBUF_INIT;
			sbuf_add_escaped(&why, reply.buf ? reply.buf : "", reply.len > 1000 ? 1000 : reply.len, SBUF_ESC_PROSE);
			errbuf_set(e, EXIT_GUEST, "checker: %s", why.buf);
			sbuf_free(&why);
		} else if (o == VM_OK && type != PROTO_MSG_STATE)
			errbuf_set(e, EXIT_GUEST, "checker: a reply of type %u instead of a STATE", type);
		else if (o == VM_OK && proto_state_parse(c->fs, reply.buf, reply.len, rep, &pe) < 0)
			errbuf_set(e, EXIT_GUEST, "checker: malformed state report: %s", pe.msg);
		else if (o == VM_LOST && c->vm.why[0]) {
			/* The channel itself broke (a bad frame): a reply the host cannot
			 * read, not something the state did to the guest. */
			errbuf_set(e, EXIT_GUEST, "checker: %s", c->vm.why);
			o = VM_OK;
		}
		sbuf_free(&reply);
	}
	if (o != VM_OK) {
		char why[300];
		vm_describe(&c->vm, o, why, sizeof(why));
		errbuf_set(e, vm_outcome_exit(o), "%s", why);
	}
	rep->ms_host = (now_s() - t0) * 1000;
	return o;
}

void checker_qemu_stop(struct checker *c, int failed, const char *console_path)
{
	if (failed)
		vm_kill(&c->vm);
	else
		vm_stop(&c->vm);
	if (console_path)
		vm_save_console(&c->vm, console_path);
	vm_free(&c->vm);
	if (c->scratch)
		unlink(c->scratch);
	free(c->scratch);
	free(c->fsck);
	free(c->mount_opts);
	free(c->refused);
	free(c);
}

const struct backend *backend_qemu(void)
{
	static const struct backend qemu = { "qemu", NULL, record_qemu, start_qemu, checker_qemu_check,
					     checker_qemu_stop };
	return &qemu;
}
