/*
 * cache.c - a kernel build's name and place in the cache: the inputs it is
 * built from, the key they hash to, a finished entry, and the lock that
 * serialises builders of one key (the method is in build.c).
 */
#include "kbuild/kb.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "host/hash.h"
#include "host/msg.h"
#include "host/sys.h"

const char *kb_disp(const char *path)
{
	const char *root = project_root();
	size_t n = strlen(root);
	if (!strncmp(path, root, n) && path[n] == '/')
		return path + n + 1;
	return path;
}

static char *absolute(const char *path)
{
	char *r = realpath(path, NULL);
	return r ? r : xstrdup(path);
}

void kb_inputs_resolve(const struct kbuild_opts *o, struct kb_inputs *in)
{
	const char *src = o && o->source ? o->source : KBUILD_SOURCE;
	in->source = absolute(src);
	in->packaged = !strcmp(src, KBUILD_SOURCE) || !strcmp(in->source, KBUILD_SOURCE);
	if (o && o->patches)
		in->patches = absolute(o->patches);
	else
		in->patches = xasprintf("%s/kernel", project_root());
	in->series = xasprintf("%s/series", in->patches);
	if (o && o->config)
		in->config = absolute(o->config);
	else
		in->config = xasprintf("%s/kernel/crashlab.config", project_root());
	in->jobs = o && o->jobs > 0 ? o->jobs : (int)sysconf(_SC_NPROCESSORS_ONLN);
	if (in->jobs < 1)
		in->jobs = 1;
}

void kb_inputs_free(struct kb_inputs *in)
{
	free(in->source);
	free(in->patches);
	free(in->series);
	free(in->config);
}

/* ---- series ---- */

static void hash_blob(struct hasher *h, const char *label, const void *data, size_t n)
{
	char len[32];
	snprintf(len, sizeof(len), "%zu", n);
	hasher_adds(h, label);
	hasher_adds(h, len);
	hasher_add(h, data, n);
}

/* What names the source: the package version, else path + size + mtime. */
static int source_id(const struct kb_inputs *in, struct sbuf *id, struct errbuf *e)
{
	struct stat st;
	if (stat(in->source, &st) < 0) {
		int err = errno;
		if (in->packaged && err == ENOENT)
			return errbuf_set(e, EXIT_NOINPUT, "kernel source '%s' is missing; install it with 'apt-get "
				       "install %s' (or 'make deps'), or pass --source TARBALL", in->source,
				       KBUILD_SOURCE_PKG);
		if (err == ENOENT)
			return errbuf_set(e, EXIT_NOINPUT, "kernel source '%s' does not exist; give --source an existing "
				       "tarball, or omit it to use %s (apt-get install %s)", in->source, KBUILD_SOURCE,
				       KBUILD_SOURCE_PKG);
		return errbuf_set(e, EXIT_NOINPUT, "cannot read kernel source '%s': %s", in->source, errno_advice(err));
	}
	if (!S_ISREG(st.st_mode))
		return errbuf_set(e, EXIT_NOINPUT, "kernel source '%s' is not a file", in->source);
	if (in->packaged) {
		struct strvec argv = STRVEC_INIT;
		struct sbuf out = SBUF_INIT;
		strvec_push(&argv, "dpkg-query");
		strvec_push(&argv, "-W");
		strvec_push(&argv, "-f=${Version}");
		strvec_push(&argv, KBUILD_SOURCE_PKG);
		int v = msg_verbose(), q = msg_quiet();
		msg_configure(0, q);   /* a lookup, not a step worth showing */
		int rc = run_cmd(&argv, &out, -1);
		msg_configure(v, q);
		strvec_free(&argv);
		if (rc == 0 && out.len && !strchr(out.buf, '\n') && !strchr(out.buf, ' ')) {
			sbuf_addf(id, "deb %s %s", KBUILD_SOURCE_PKG, out.buf);
			sbuf_free(&out);
			return 0;
		}
		sbuf_free(&out);
	}
	sbuf_addf(id, "file %s %lld %lld.%09ld", in->source, (long long)st.st_size,
		  (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
	return 0;
}

static int read_input(const char *what, const char *path, struct sbuf *out, struct errbuf *e)
{
	if (read_file(path, out) == 0)
		return 0;
	return errbuf_set(e, EXIT_NOINPUT, "cannot read %s '%s': %s", what, kb_disp(path), errno_advice(errno));
}

int kb_compute_key(const struct kb_inputs *in, char key[65], struct strvec *names, struct errbuf *e)
{
	struct sbuf id = SBUF_INIT, text = SBUF_INIT;
	struct hasher *h = NULL;
	int ret = -1;
	if (source_id(in, &id, e) < 0)
		goto out;
	h = hasher_new();
	hasher_adds(h, KB_RECIPE);
	hash_blob(h, "source", id.buf, id.len);
	if (!is_dir(in->patches)) {
		errbuf_set(e, EXIT_NOINPUT, "patch directory '%s' does not exist", kb_disp(in->patches));
		goto out;
	}
	if (read_input("patch series", in->series, &text, e) < 0)
		goto out;
	hash_blob(h, "series", text.buf, text.len);
	struct errbuf why;
	if (kbuild_series_parse(text.buf, names, &why) < 0) {
		errbuf_set(e, EXIT_DATAERR, "malformed patch series '%s': %s", kb_disp(in->series), why.msg);
		goto out;
	}
	for (size_t i = 0; i < names->n; i++) {
		char *path = xasprintf("%s/%s", in->patches, names->v[i]);
		sbuf_reset(&text);
		if (read_file(path, &text) < 0) {
			errbuf_set(e, EXIT_NOINPUT, "patch '%s' listed in '%s' cannot be read: %s", kb_disp(path),
				   kb_disp(in->series), errno_advice(errno));
			free(path);
			goto out;
		}
		free(path);
		hash_blob(h, names->v[i], text.buf, text.len);
	}
	sbuf_reset(&text);
	if (read_input("config fragment", in->config, &text, e) < 0)
		goto out;
	hash_blob(h, "config", text.buf, text.len);
	hasher_done(h, key);
	h = NULL;
	ret = 0;
out:
	if (h) {
		char dummy[65];
		hasher_done(h, dummy);
	}
	sbuf_free(&id);
	sbuf_free(&text);
	return ret;
}

int kbuild_key(const struct kbuild_opts *o, char key[65], struct errbuf *e)
{
	struct kb_inputs in;
	struct strvec names = STRVEC_INIT;
	kb_inputs_resolve(o, &in);
	int r = kb_compute_key(&in, key, &names, e);
	strvec_free(&names);
	kb_inputs_free(&in);
	return r;
}

/* ---- finding a built kernel ---- */

char *kb_entry_of(const char *key)
{
	const char *root = cache_dir();
	return root ? xasprintf("%s/kernel/%.16s", root, key) : NULL;
}

bool kb_entry_complete(const char *entry)
{
	char *stamp = xasprintf("%s/%s", entry, KB_STAMP);
	char *bz = xasprintf("%s/bzImage", entry);
	bool ok = file_exists(stamp) && file_exists(bz);
	free(stamp);
	free(bz);
	return ok;
}

char *kbuild_cached(const struct kbuild_opts *o, char **entry)
{
	char key[65];
	struct errbuf err;
	if (entry)
		*entry = NULL;
	if (kbuild_key(o, key, &err) < 0)
		return NULL;
	char *dir = kb_entry_of(key);
	char *bz = dir && kb_entry_complete(dir) ? xasprintf("%s/bzImage", dir) : NULL;
	if (entry)
		*entry = dir;
	else
		free(dir);
	return bz;
}

char *kernel_cached(void)
{
	return kbuild_cached(NULL, NULL);
}

char *kernel_tree(void)
{
	char *entry;
	char *bz = kbuild_cached(NULL, &entry);
	char *tree = bz ? xasprintf("%s/linux", entry) : NULL;
	free(bz);
	free(entry);
	return tree;
}

char *kernel_ensure(const char *user_kernel, struct errbuf *e)
{
	if (!user_kernel)
		return kbuild_run(NULL, e);
	if (kernel_check(user_kernel) < 0) {
		if (errno == ENOEXEC)
			errbuf_set(e, EXIT_DATAERR, "'%s' is not a bzImage (no x86 boot header)", user_kernel);
		else
			errbuf_set(e, EXIT_NOINPUT, "cannot read kernel '%s': %s", user_kernel, errno_advice(errno));
		return NULL;
	}
	return xstrdup(user_kernel);
}

/* ---- serialising builders of one key ---- */

int kb_take_lock(struct kb *kb)
{
	char *path = xasprintf("%s/%.16s.lock", kb->kdir, kb->key);
	int r = 0;
	kb->lock_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (kb->lock_fd < 0) {
		r = errbuf_errno(kb->e, errno, "cannot create '%s'", path);
	} else if (flock(kb->lock_fd, LOCK_EX | LOCK_NB) < 0) {
		if (errno != EWOULDBLOCK) {
			r = errbuf_set(kb->e, EXIT_SOFTWARE, "cannot lock '%s': %s", path, strerror(errno));
		} else {
			note("another crashlab is building this kernel; waiting for it (lock '%s')", path);
			while (r == 0 && flock(kb->lock_fd, LOCK_EX) < 0)
				if (errno != EINTR)
					r = errbuf_set(kb->e, EXIT_SOFTWARE, "cannot lock '%s': %s", path, strerror(errno));
		}
	}
	free(path);
	return r;
}
