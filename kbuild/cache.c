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

static const char *selected_source;

void kbuild_select(const char *source)
{
	selected_source = source;
}

const char *kbuild_selected(void)
{
	return selected_source ? selected_source : KBUILD_SOURCE_NAME;
}

bool kbuild_source_is_name(const char *s)
{
	size_t a = strspn(s, "0123456789");
	if (a == 0 || a > 4 || s[a] != '.')
		return false;
	size_t b = strspn(s + a + 1, "0123456789");
	return b > 0 && b <= 4 && s[a + 1 + b] == '\0';
}

/* The X.Y of a packaged tarball path (/usr/src/linux-source-X.Y.tar.xz), or NULL. malloc'd. */
static char *packaged_name(const char *path)
{
	const char *pre = "/usr/src/linux-source-", *suf = ".tar.xz";
	size_t pl = strlen(pre), sl = strlen(suf), n = strlen(path);
	if (n <= pl + sl || strncmp(path, pre, pl) || strcmp(path + n - sl, suf))
		return NULL;
	char *name = xasprintf("%.*s", (int)(n - pl - sl), path + pl);
	if (!kbuild_source_is_name(name)) {
		free(name);
		return NULL;
	}
	return name;
}

char *kbuild_series_path(const struct kbuild_opts *o)
{
	if (o && o->no_patches)
		return NULL;
	char *dir = o && o->patches ? absolute(o->patches) : xasprintf("%s/kernel", project_root());
	const char *src = o && o->source ? o->source : kbuild_selected();
	char *name = kbuild_source_is_name(src) ? xstrdup(src) : packaged_name(src);
	char *path = NULL;
	if (name && strcmp(name, KBUILD_SOURCE_NAME)) {
		path = xasprintf("%s/series-%s", dir, name);
		if (!file_exists(path)) {
			free(path);
			path = NULL;
		}
	}
	if (!path)
		path = xasprintf("%s/series", dir);
	free(name);
	free(dir);
	return path;
}

void kb_inputs_resolve(const struct kbuild_opts *o, struct kb_inputs *in)
{
	const char *src = o && o->source ? o->source : selected_source ? selected_source : KBUILD_SOURCE;
	char *name = NULL;
	memset(in, 0, sizeof(*in));
	if (kbuild_source_is_name(src)) {
		in->source = xasprintf(KBUILD_PKG_TARBALL, src);
		name = xstrdup(src);
	} else {
		in->source = absolute(src);
		name = packaged_name(in->source);
	}
	if (name) {
		in->packaged = true;
		in->pkg = xasprintf("linux-source-%s", name);
	}
	free(name);
	in->tree = is_dir(in->source);
	if (o && o->patches)
		in->patches = absolute(o->patches);
	else
		in->patches = xasprintf("%s/kernel", project_root());
	struct kbuild_opts so = { 0 };
	if (o)
		so = *o;
	so.source = src;
	in->series = kbuild_series_path(&so);
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
	free(in->pkg);
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

/* A tree is named by its path, its git commit and state when it is a git
 * checkout, and the size and mtime of its top Makefile. */
static void tree_id(const struct kb_inputs *in, struct sbuf *id)
{
	sbuf_addf(id, "tree %s", in->source);
	const char *const git[][6] = {
		{ "git", "-C", in->source, "rev-parse", "HEAD", NULL },
		{ "git", "-C", in->source, "status", "--porcelain", NULL },
	};
	int v = msg_verbose(), q = msg_quiet();
	msg_configure(0, q);
	for (size_t i = 0; i < 2; i++) {
		struct strvec argv = STRVEC_INIT;
		struct sbuf out = SBUF_INIT;
		for (size_t j = 0; git[i][j]; j++)
			strvec_push(&argv, git[i][j]);
		if (run_cmd(&argv, &out, -1) == 0)
			sbuf_addf(id, " git%zu %zu:%s", i, out.len, out.buf ? out.buf : "");
		strvec_free(&argv);
		sbuf_free(&out);
	}
	msg_configure(v, q);
	char *mk = xasprintf("%s/Makefile", in->source);
	struct stat st;
	if (stat(mk, &st) == 0)
		sbuf_addf(id, " Makefile %lld %lld.%09ld", (long long)st.st_size, (long long)st.st_mtim.tv_sec,
			  st.st_mtim.tv_nsec);
	free(mk);
}

/* What names the source: the package version, else path + size + mtime. */
static int source_id(const struct kb_inputs *in, struct sbuf *id, struct errbuf *e)
{
	struct stat st;
	if (stat(in->source, &st) < 0) {
		int err = errno;
		if (in->packaged && err == ENOENT)
			return errbuf_set(e, EXIT_NOINPUT, "kernel source '%s' is missing; install it with 'apt-get "
				       "install %s' (or 'make deps'), or name another source (a tarball or tree)", in->source,
				       in->pkg);
		if (err == ENOENT)
			return errbuf_set(e, EXIT_NOINPUT, "kernel source '%s' does not exist; give --source X.Y (Debian's "
				       "linux-source-X.Y), an existing tarball or tree, or omit it to use %s (apt-get install %s)",
				       in->source, KBUILD_SOURCE, KBUILD_SOURCE_PKG);
		return errbuf_set(e, EXIT_NOINPUT, "cannot read kernel source '%s': %s", in->source, errno_advice(err));
	}
	if (S_ISDIR(st.st_mode)) {
		char *mk = xasprintf("%s/Makefile", in->source);
		bool ok = file_exists(mk);
		free(mk);
		if (!ok)
			return errbuf_set(e, EXIT_NOINPUT, "kernel source '%s' is a directory without a Makefile; give "
				       "the top of a kernel tree", in->source);
		tree_id(in, id);
		return 0;
	}
	if (!S_ISREG(st.st_mode))
		return errbuf_set(e, EXIT_NOINPUT, "kernel source '%s' is not a file", in->source);
	if (in->packaged) {
		struct strvec argv = STRVEC_INIT;
		struct sbuf out = SBUF_INIT;
		strvec_push(&argv, "dpkg-query");
		strvec_push(&argv, "-W");
		strvec_push(&argv, "-f=${Version}");
		strvec_push(&argv, in->pkg);
		int v = msg_verbose(), q = msg_quiet();
		msg_configure(0, q);   /* a lookup, not a step worth showing */
		int rc = run_cmd(&argv, &out, -1);
		msg_configure(v, q);
		strvec_free(&argv);
		if (rc == 0 && out.len && !strchr(out.buf, '\n') && !strchr(out.buf, ' ')) {
			sbuf_addf(id, "deb %s %s", in->pkg, out.buf);
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
	if (!in->series) {
		hash_blob(h, "series", "", 0);   /* no patches: the same as an empty series */
		goto config;
	}
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
config:
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
