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
 * setup_end. Each run op is then sent alone; when its RESULT arrives the
 * host re-reads the count, which is the op's log position: every entry
 * before it was flushed before the op returned. After the last op the host
 * SIGKILLs QEMU - the power cut; dirty pages in the guest are lost, as they
 * would be. Only the flushes on the path to the overlay and log files are
 * dropped on the host (cache.no-flush): they cost time and prove nothing,
 * since the crash is simulated from the log, not from the host's disk.
 */
#include "engine/record.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "images/basedisk.h"
#include "kbuild/kbuild.h"
#include "cmd/opt.h"
#include "core/wlog.h"

void lab_barrier_syscalls(long *nr_fbarrier, long *nr_fdatabarrier)
{
	*nr_fbarrier = *nr_fdatabarrier = -1;
	if (opt_kernel)
		return;
	char *tree = lab_kernel_tree();
	if (!tree)
		return;
	char *tbl = xasprintf("%s/arch/x86/entry/syscalls/syscall_64.tbl", tree);
	struct sbuf sb = SBUF_INIT;
	if (read_file(tbl, &sb) == 0) {
		char *save = NULL;
		for (char *line = strtok_r(sb.buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
			long nr;
			char abi[32], name[64];
			if (line[0] == '#' || sscanf(line, "%ld %31s %63s", &nr, abi, name) != 3)
				continue;
			if (!strcmp(name, "fbarrier"))
				*nr_fbarrier = nr;
			else if (!strcmp(name, "fdatabarrier"))
				*nr_fdatabarrier = nr;
		}
	}
	sbuf_free(&sb);
	free(tbl);
	free(tree);
}

static int read_committed(const char *log_path, int64_t *count)
{
	int fd = open(log_path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	uint64_t n = 0;
	int r = wlog_read_committed(fd, &n);
	close(fd);
	*count = r < 0 ? 0 : (int64_t)n;
	return 0;
}

/* Parse "ret=..\nerrno=..\n..." from the agent. */
static void parse_result(const char *text, struct lab_op_result *r)
{
	const char *p;
	if ((p = strstr(text, "ret=")))
		r->ret = strtol(p + 4, NULL, 10);
	if ((p = strstr(text, "errno=")))
		r->err = (int)strtol(p + 6, NULL, 10);
	if ((p = strstr(text, "\nino=")))
		r->ino = strtoull(p + 5, NULL, 10);
	if ((p = strstr(text, "ino2=")))
		r->ino2 = strtoull(p + 5, NULL, 10);
	if ((p = strstr(text, "ms=")))
		r->ms = strtod(p + 3, NULL);
}

static int fail(struct lab_recording *rec, struct lab_vm *vm, enum lab_outcome o, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int fail(struct lab_recording *rec, struct lab_vm *vm, enum lab_outcome o, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(rec->error, sizeof(rec->error), fmt, ap);
	va_end(ap);
	rec->outcome = o;
	if (vm) {
		lab_vm_kill(vm);
		if (o != LAB_OK)
			lab_vm_report(vm, o);
		lab_vm_free(vm);
	}
	return -1;
}

int lab_record(const struct lab_record_opts *o, struct lab_recording *rec)
{
	memset(rec, 0, sizeof(*rec));
	double t0 = now_s();
	const struct wl_workload *w = o->w;
	rec->size = o->size;
	rec->base = img_base_ensure(o->fs, o->size, o->mkfs_opts);
	rec->overlay = xasprintf("%s/%s.qcow2", o->workdir, o->fs);
	rec->log_path = xasprintf("%s/%s.log", o->workdir, o->fs);
	rec->res = xcalloc(w->n ? w->n : 1, sizeof(*rec->res));
	struct sbuf oerr = SBUF_INIT;
	if (lab_overlay_create(rec->base, rec->overlay, &oerr) < 0) {
		snprintf(rec->error, sizeof(rec->error), "%s", oerr.buf);
		sbuf_free(&oerr);
		rec->outcome = LAB_QEMU_FAILED;
		return -1;
	}
	int lfd = open(rec->log_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (lfd < 0)
		return fail(rec, NULL, LAB_QEMU_FAILED, "cannot create '%s': %s", rec->log_path, errno_advice(errno));
	close(lfd);

	struct lab_vm_config cfg = *o->guest;
	memset(&cfg.drives, 0, sizeof(cfg.drives));
	strvec_pushf(&cfg.drives,
		     "driver=blklogwrites,file.driver=qcow2,file.file.driver=file,file.file.filename=%s,"
		     "file.cache.no-flush=on,log.driver=file,log.filename=%s,log.cache.no-flush=on",
		     rec->overlay, rec->log_path);
	struct lab_vm vm;
	enum lab_outcome out = lab_vm_start(&vm, &cfg);
	rec->qemu_cmdline = strvec_join_quoted(&vm.argv);
	strvec_free(&cfg.drives);
	if (out != LAB_OK)
		return fail(rec, &vm, out, "the recording guest did not start");

	/* Mount the file system under test. */
	struct sbuf sb = SBUF_INIT;
	char *mount_cmd = xasprintf("mkdir -p /mnt/test && mount -t %s%s%s /dev/vda /mnt/test", o->fs,
				    o->mount_opts && *o->mount_opts ? " -o " : "",
				    o->mount_opts && *o->mount_opts ? o->mount_opts : "");
	char *argv[] = { "sh", "-c", mount_cmd, NULL };
	int status = -1;
	out = lab_vm_run(&vm, argv, &sb, 0, &status);
	free(mount_cmd);
	if (out != LAB_OK) {
		sbuf_free(&sb);
		return fail(rec, &vm, out, "the guest failed while mounting");
	}
	if (status != 0) {
		char msg[400];
		snprintf(msg, sizeof(msg), "%.*s", (int)strcspn(sb.buf, "\n"), sb.buf);
		sbuf_free(&sb);
		return fail(rec, &vm, LAB_OK, "cannot mount %s in the recording guest: %s", o->fs, msg);
	}

	/* The workload session. */
	char *sess = xasprintf("dir=/mnt/test\nfbarrier=%ld\nfdatabarrier=%ld\n", o->nr_fbarrier,
			       o->nr_fdatabarrier);
	uint8_t type = 0;
	out = lab_vm_request(&vm, LAB_MSG_SESSION, 0, 0, sess, (uint32_t)strlen(sess), 0, &type, &sb);
	free(sess);
	if (out != LAB_OK || type != LAB_MSG_RESULT) {
		sbuf_free(&sb);
		return fail(rec, &vm, out, "the agent refused the workload session");
	}

	for (size_t i = 0; i <= w->n; i++) {
		/* After the last setup op (i == nsetup) comes the setup's sync. */
		bool setup_sync = i == w->nsetup;
		char line[8192];
		struct wl_op sync_op = { .kind = WL_SYNC, .section = WL_SETUP, .off = -1, .len = -1 };
		const struct wl_op *op = setup_sync ? &sync_op : &w->ops[i < w->nsetup ? i : i - 1];
		wl_format(op, line, sizeof(line));
		if (o->progress)
			o->progress(o->ctx, i, w->n + 1, line);
		out = lab_vm_request(&vm, LAB_MSG_OP, (uint16_t)op->section, (uint32_t)op->id, line,
				     (uint32_t)strlen(line), 0, &type, &sb);
		if (out != LAB_OK) {
			sbuf_free(&sb);
			return fail(rec, &vm, out, "the guest failed during op '%s'", line);
		}
		if (type != LAB_MSG_RESULT) {
			char msg[600];
			snprintf(msg, sizeof(msg), "the agent could not run op '%s': %.*s", line, (int)sb.len, sb.buf);
			sbuf_free(&sb);
			return fail(rec, &vm, LAB_OK, "%s", msg);
		}
		int64_t pos = 0;
		read_committed(rec->log_path, &pos);
		if (setup_sync) {
			rec->setup_end = pos;
			continue;
		}
		struct lab_op_result *r = &rec->res[i < w->nsetup ? i : i - 1];
		parse_result(sb.buf, r);
		r->log_pos = pos;
	}
	sbuf_free(&sb);
	/* The power cut. */
	lab_vm_kill(&vm);
	lab_vm_free(&vm);
	rec->outcome = LAB_OK;
	rec->ms = (now_s() - t0) * 1000;
	return 0;
}

void lab_recording_free(struct lab_recording *rec)
{
	free(rec->overlay);
	free(rec->log_path);
	free(rec->base);
	free(rec->res);
	free(rec->qemu_cmdline);
	memset(rec, 0, sizeof(*rec));
}
