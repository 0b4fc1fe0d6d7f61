/*
 * export.c - a crash state's disk as a file of its own (export.h).
 *
 * Method. The base image is copied block by block, leaving the holes of a
 * block that reads as zeros, into a file created for the purpose; the
 * state's spec is then applied to it from the write log with wlog_apply,
 * the same replay the checker guest makes onto its snapshot. Nothing is
 * mounted: the file is only written. To check it again, a checker guest
 * takes the file as its base image (read through QEMU's snapshot=on, so
 * not even the guest changes it) and checks the spec "prefix=0", which
 * replays nothing.
 */
#include "engine/export.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/wlog.h"
#include "engine/backend.h"
#include "host/sys.h"

#define COPY_BLOCK (1u << 20)

/* Copy src (fd) into dst (fd), leaving holes; 0, or -1 with errno. */
static int copy_sparse(int src, int dst, uint64_t *size)
{
	struct stat st;
	if (fstat(src, &st) < 0)
		return -1;
	unsigned char *buf = xmalloc(COPY_BLOCK);
	uint64_t off = 0;
	while (off < (uint64_t)st.st_size) {
		ssize_t n = pread(src, buf, COPY_BLOCK, (off_t)off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n == 0)
				errno = EIO;
			free(buf);
			return -1;
		}
		if (!mem_is_zero(buf, (size_t)n) && pwrite_all(dst, buf, (size_t)n, off) < 0) {
			free(buf);
			return -1;
		}
		off += (uint64_t)n;
	}
	free(buf);
	*size = off;
	return ftruncate(dst, (off_t)off);
}

int export_image(const struct fsrun *fr, const struct state_result *st, const char *out, uint64_t *bytes,
		 struct errbuf *e)
{
	errbuf_clear(e);
	if (!fr->base_image || !*fr->base_image || !fr->log_path || !*fr->log_path)
		return errbuf_set(e, EXIT_NOINPUT, "%s of run %" PRId64 " has no base image or write log stored",
				  fr->fs, fr->run_id);
	if (!st->spec || !*st->spec)
		return errbuf_set(e, EXIT_NOINPUT, "state %d of %s has no spec stored", st->idx, fr->fs);
	struct wlog_spec spec;
	struct errbuf pe;
	if (wlog_spec_parse(st->spec, &spec, &pe) < 0)
		return errbuf_set(e, EXIT_DATAERR, "state %d of %s: spec '%s': %s", st->idx, fr->fs, st->spec, pe.msg);
	int base = -1, log = -1, dst = -1, ret = -1;
	struct wlog l;
	int have_log = 0;
	base = open(fr->base_image, O_RDONLY | O_CLOEXEC);
	if (base < 0) {
		errbuf_errno(e, errno, "cannot read the base image '%s' (the cache entry the run was recorded over; "
			     "it is rebuilt only for a new run)", fr->base_image);
		goto out;
	}
	log = open(fr->log_path, O_RDONLY | O_CLOEXEC);
	if (log < 0) {
		errbuf_errno(e, errno, "cannot read the write log '%s'", fr->log_path);
		goto out;
	}
	if (wlog_open(&l, log, &pe) < 0) {
		errbuf_set(e, EXIT_DATAERR, "write log '%s': %s", fr->log_path, pe.msg);
		goto out;
	}
	have_log = 1;
	dst = open(out, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (dst < 0) {
		errbuf_errno(e, errno, "cannot create '%s'", out);
		goto out;
	}
	uint64_t size = 0;
	if (copy_sparse(base, dst, &size) < 0) {
		errbuf_errno(e, errno, "cannot copy the base image '%s' to '%s'", fr->base_image, out);
		goto out;
	}
	if (wlog_apply(&l, &spec, dst, bytes, &pe) < 0) {
		errbuf_set(e, pe.code ? pe.code : EXIT_DATAERR, "cannot rebuild state %d of %s: %s", st->idx, fr->fs,
			   pe.msg);
		goto out;
	}
	if (fsync(dst) < 0) {
		errbuf_errno(e, errno, "cannot write '%s'", out);
		goto out;
	}
	ret = 0;
out:
	if (dst >= 0) {
		close(dst);
		if (ret < 0)
			unlink(out);
	}
	if (have_log)
		wlog_close(&l);
	if (log >= 0)
		close(log);
	if (base >= 0)
		close(base);
	wlog_spec_free(&spec);
	return ret;
}

int export_qcow2(const char *raw, const char *qcow2, struct errbuf *e)
{
	struct strvec argv = STRVEC_INIT;
	struct sbuf log = SBUF_INIT;
	strvec_pushl(&argv, "qemu-img", "convert", "-q", "-f", "raw", "-O", "qcow2", raw, qcow2, NULL);
	int r = run_cmd(&argv, &log, -1);
	if (r != 0) {
		if (r < 0 || r == 127)
			errbuf_set(e, EXIT_NOINPUT, "cannot run qemu-img (apt-get install qemu-utils)");
		else
			errbuf_set(e, EXIT_CANTCREAT, "qemu-img convert to '%s' failed: %.300s", qcow2,
				   log.buf ? log.buf : "");
		unlink(qcow2);
	}
	strvec_free(&argv);
	sbuf_free(&log);
	return r == 0 ? 0 : -1;
}

int export_verify(const struct vm_config *guest, const struct fsrun *fr, const char *image, struct check_report *rep,
		  struct errbuf *e)
{
	const struct backend *b = backend_qemu();
	struct checker_opts o = {
		.guest = guest, .fs = fr->fs, .base = image, .log_path = fr->log_path, .mount_opts = fr->mount_opts,
		.overlay = fr->ops.overlay,
	};
	struct checker *c = NULL;
	errbuf_clear(e);
	memset(rep, 0, sizeof(*rep));
	enum vm_outcome r = b->checker_start(b, &o, &c, e);
	if (r == VM_OK)
		r = b->check(c, "prefix=0", rep, e);
	int failed = r != VM_OK || e->code;
	b->checker_stop(c, r != VM_OK, NULL);
	if (failed && !e->code)
		errbuf_set(e, vm_outcome_exit(r), "the checker guest failed");
	return failed ? -1 : 0;
}
