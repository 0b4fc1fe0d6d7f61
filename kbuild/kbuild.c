/*
 * kbuild.c - build the guest kernel into the cache; see kbuild.h.
 *
 * Method. A kernel build is named by its inputs: the source tarball (by its
 * Debian package version when it is the packaged tarball, otherwise by its
 * path, size and mtime), the series file, the content of every patch the
 * series lists, the config fragment, and RECIPE, a constant bumped whenever
 * this file changes what a build produces. The SHA-256 of these, cut to 16
 * hex digits, names the cache entry <cache>/kernel/<key>/, which holds the
 * extracted and patched tree (linux/), the log of every step (build.log), a
 * copy of the result (bzImage) and, written last, the stamp file "complete".
 *
 * The stamp is the only thing a reader trusts. It is written with an atomic
 * rename after bzImage has been copied out and synced, so an interrupted,
 * crashed or failed build can only ever leave an entry without a stamp. A
 * stamped entry is returned at once, without locking and without touching
 * it. An entry without a stamp is garbage: the next build of the same key
 * removes it and starts again from an empty directory, so a half-extracted
 * tree or half-applied series is never built upon. Builders of one key
 * serialise on flock(<cache>/kernel/<key>.lock) and look for the stamp again
 * once they hold the lock, so the second of two concurrent builds picks up
 * the first one's result instead of building it twice.
 *
 * A build runs extract (libarchive; the tarball's top directory is replaced
 * by linux/), patch -p1 for each series entry in order, allnoconfig with the
 * fragment followed by olddefconfig and a check that every line of the
 * fragment survived, make bzImage (through ccache when present, with a fixed
 * build timestamp, user and host so rebuilds under another key hit ccache),
 * and the copy-out. Any failure moves the log to
 * <cache>/kernel/last-failed-build.log, removes the entry and exits with the
 * code of the step that failed. The number of kbuild steps of the last good
 * build is kept in <cache>/kernel/steps as the next progress bar's total.
 * Entries of keys no longer in use are left alone; deleting them is safe.
 */
#include "kbuild/kbuild.h"

#include <archive.h>
#include <archive_entry.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmd/opt.h"
#include "host/progress.h"

#define RECIPE "crashlab-kbuild-1"
#define STAMP "complete"
#define STEPS_GUESS 1750    /* kbuild steps of the default config on 6.12 */
#define BUILD_TIMESTAMP "Mon Jan  1 00:00:00 UTC 2024"
#define FAILED_LOG "last-failed-build.log"
#define MAX_ERR_LINES 40    /* error lines kept from a build's output */
#define TAIL_LINES 8        /* last lines kept from a build's output */

/* The resolved inputs of a build. */
struct inputs {
	char *source;      /* tarball, made absolute when it exists */
	char *patches;     /* directory of the series and patches */
	char *series;      /* patches/series */
	char *config;      /* config fragment, made absolute when it exists */
	int jobs;          /* make -j */
	bool packaged;     /* source is the Debian package's tarball */
};

/* One build in progress. */
struct kb {
	struct inputs in;
	struct strvec names;     /* patch names from the series, in order */
	char key[65];
	char *kdir;              /* <cache>/kernel */
	char *entry;             /* kdir/<key16> */
	char *tree;              /* entry/linux */
	char *log_path;          /* entry/build.log */
	char *failed_log;        /* kdir/last-failed-build.log */
	int log_fd;              /* -1 until the entry exists */
	int lock_fd;             /* flock held on kdir/<key16>.lock */
	struct progress *prog;   /* the progress line of the current step */
	bool ccache;             /* compile through ccache */
	struct strvec make_env;  /* NAME=value for every make run */
	/* while a child runs */
	bool count_steps;        /* kbuild step lines drive the progress line */
	uint64_t steps;          /* kbuild step lines seen */
	int disk_full;           /* ENOSPC/EDQUOT seen in the child's output */
	struct strvec err_lines; /* first error-looking lines of the output */
	char *tail[TAIL_LINES];  /* ring of the last lines of the output */
	size_t tail_n;           /* lines put into the ring so far */
};

/* A path inside the project shown relative to it ("kernel/series"). */
static const char *disp(const char *path)
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

static void inputs_resolve(const struct lab_kbuild_opts *o, struct inputs *in)
{
	const char *src = o && o->source ? o->source : LAB_KBUILD_SOURCE;
	in->source = absolute(src);
	in->packaged = !strcmp(src, LAB_KBUILD_SOURCE) || !strcmp(in->source, LAB_KBUILD_SOURCE);
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

static void inputs_free(struct inputs *in)
{
	free(in->source);
	free(in->patches);
	free(in->series);
	free(in->config);
}

/* ---- series ---- */

static bool has_dotdot(const char *p)
{
	for (const char *s = p; (s = strstr(s, "..")); s += 2)
		if ((s == p || s[-1] == '/') && (s[2] == '\0' || s[2] == '/'))
			return true;
	return false;
}

int lab_kbuild_series_parse(const char *text, struct strvec *out, struct sbuf *err)
{
	int lineno = 0;
	const char *p = text;
	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		char *line = xmalloc(len + 1);
		memcpy(line, p, len);
		line[len] = '\0';
		p += len + (nl ? 1 : 0);
		lineno++;
		for (char *c = line; *c; c++) {
			if (*c == '#' && (c == line || isspace((unsigned char)c[-1]))) {
				*c = '\0';
				break;
			}
		}
		char *save = NULL;
		char *name = strtok_r(line, " \t\r", &save);
		if (!name) {
			free(line);
			continue;
		}
		int bad = 0;
		if (name[0] == '/' || has_dotdot(name)) {
			sbuf_addf(err, "line %d: patch '%s' must be a path inside the series directory", lineno, name);
			bad = 1;
		}
		for (char *t; !bad && (t = strtok_r(NULL, " \t\r", &save));) {
			if (!strcmp(t, "-p1"))
				continue;
			if (!strncmp(t, "-p", 2))
				sbuf_addf(err, "line %d: only -p1 patches are supported, not '%s'", lineno, t);
			else
				sbuf_addf(err, "line %d: unexpected '%s' after the patch name", lineno, t);
			bad = 1;
		}
		if (!bad)
			strvec_push(out, name);
		free(line);
		if (bad)
			return -1;
	}
	return 0;
}

/* ---- config verification ---- */

/* One option line: name ("CONFIG_X"), value (NULL when "is not set"), line number. */
struct cfgopt {
	char *name;
	char *value;
	int line;
};

static void cfg_free(struct cfgopt *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].name);
		free(v[i].value);
	}
	free(v);
}

static bool valid_name(const char *s, size_t n)
{
	if (n <= 7 || strncmp(s, "CONFIG_", 7))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '_')
			return false;
	return true;
}

/*
 * Parse config text into option lines. Comments and blank lines are
 * skipped; any other line is reported through bad (when non-NULL) with its
 * number and text.
 */
static struct cfgopt *cfg_parse(const char *text, size_t *count, struct strvec *bad, const char *name)
{
	struct cfgopt *v = NULL;
	size_t n = 0, cap = 0;
	int lineno = 0;
	const char *p = text;
	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		const char *s = p;
		p += len + (nl ? 1 : 0);
		lineno++;
		while (len && isspace((unsigned char)*s)) {
			s++;
			len--;
		}
		while (len && isspace((unsigned char)s[len - 1]))
			len--;
		if (!len)
			continue;
		struct cfgopt o = { NULL, NULL, lineno };
		const char *suffix = " is not set";
		size_t sl = strlen(suffix);
		if (s[0] == '#') {
			const char *q = s + 1;
			size_t ql = len - 1;
			while (ql && *q == ' ') {
				q++;
				ql--;
			}
			if (ql > sl && !memcmp(q + ql - sl, suffix, sl) && valid_name(q, ql - sl)) {
				o.name = xasprintf("%.*s", (int)(ql - sl), q);
			} else {
				continue;   /* a comment */
			}
		} else {
			const char *eq = memchr(s, '=', len);
			if (!eq || !valid_name(s, (size_t)(eq - s))) {
				if (bad)
					strvec_pushf(bad, "line '%.*s' of '%s:%d' is not a config option "
						     "(CONFIG_NAME=value or '# CONFIG_NAME is not set')",
						     (int)len, s, name, lineno);
				continue;
			}
			o.name = xasprintf("%.*s", (int)(eq - s), s);
			size_t vl = len - (size_t)(eq - s) - 1;
			if (!(vl == 1 && eq[1] == 'n'))   /* =n means not set */
				o.value = xasprintf("%.*s", (int)vl, eq + 1);
		}
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			v = xrealloc(v, cap * sizeof(*v));
		}
		v[n++] = o;
	}
	*count = n;
	return v;
}

static const struct cfgopt *cfg_find(const struct cfgopt *v, size_t n, const char *name)
{
	const struct cfgopt *found = NULL;
	for (size_t i = 0; i < n; i++)
		if (!strcmp(v[i].name, name))
			found = &v[i];   /* the last one wins, as in Kconfig */
	return found;
}

int lab_kbuild_config_verify(const char *fragment, const char *frag_name, const char *dotconfig,
			     struct strvec *problems)
{
	size_t before = problems->n, nf, nc;
	struct cfgopt *want = cfg_parse(fragment, &nf, problems, frag_name);
	struct cfgopt *have = cfg_parse(dotconfig, &nc, NULL, ".config");
	for (size_t i = 0; i < nf; i++) {
		const struct cfgopt *w = &want[i];
		if (cfg_find(want, nf, w->name) != w)
			continue;   /* overridden by a later line of the fragment */
		const struct cfgopt *h = cfg_find(have, nc, w->name);
		const char *hv = h ? h->value : NULL;
		if (w->value && !h)
			strvec_pushf(problems, "config option '%s=%s' from '%s:%d' was dropped by olddefconfig "
				     "(it does not exist or its dependencies are off)",
				     w->name, w->value, frag_name, w->line);
		else if (w->value && !hv)
			strvec_pushf(problems, "config option '%s=%s' from '%s:%d' became '# %s is not set' "
				     "(a dependency is off or another option excludes it)",
				     w->name, w->value, frag_name, w->line, w->name);
		else if (w->value && strcmp(w->value, hv))
			strvec_pushf(problems, "config option '%s=%s' from '%s:%d' became '%s=%s'",
				     w->name, w->value, frag_name, w->line, w->name, hv);
		else if (!w->value && hv)
			strvec_pushf(problems, "config option '%s' from '%s:%d' should not be set but became "
				     "'%s=%s' (another option selects it)",
				     w->name, frag_name, w->line, w->name, hv);
	}
	cfg_free(want, nf);
	cfg_free(have, nc);
	return (int)(problems->n - before);
}

/* ---- bzImage header ---- */

int lab_kernel_check(const char *path)
{
	unsigned char hdr[0x210];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = pread(fd, hdr, sizeof(hdr), 0);
	int e = errno;
	close(fd);
	if (n < 0 && e != EISDIR) {
		errno = e;
		return -1;
	}
	if (n < (ssize_t)sizeof(hdr) || hdr[0x1FE] != 0x55 || hdr[0x1FF] != 0xAA ||
	    memcmp(hdr + 0x202, "HdrS", 4)) {
		errno = ENOEXEC;
		return -1;
	}
	return 0;
}

const char *lab_kernel_version(const char *bzimage)
{
	static struct { char *path, *version; } seen[8];
	static unsigned next;
	for (unsigned i = 0; i < 8; i++)
		if (seen[i].path && !strcmp(seen[i].path, bzimage))
			return seen[i].version;
	if (lab_kernel_check(bzimage) < 0)
		return NULL;
	int fd = open(bzimage, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	unsigned char hdr[0x210];
	char buf[257];
	char *version = NULL;
	if (pread(fd, hdr, sizeof(hdr), 0) == (ssize_t)sizeof(hdr)) {
		unsigned proto = hdr[0x206] | (unsigned)hdr[0x207] << 8;
		unsigned off = hdr[0x20E] | (unsigned)hdr[0x20F] << 8;
		ssize_t n = off && proto >= 0x200 ? pread(fd, buf, sizeof(buf) - 1, (off_t)off + 0x200) : -1;
		if (n > 0) {
			buf[n] = '\0';
			size_t len = strlen(buf);
			bool printable = len > 0 && len < (size_t)n;
			for (size_t i = 0; i < len; i++)
				if (!isprint((unsigned char)buf[i]))
					printable = false;
			if (printable)
				version = xstrdup(buf);
		}
	}
	close(fd);
	if (!version)
		return NULL;
	unsigned slot = next++ % 8;
	free(seen[slot].path);
	seen[slot].path = xstrdup(bzimage);
	seen[slot].version = version;   /* the old one leaks: callers may still hold it */
	return version;
}

/* ---- cache key ---- */

static void hash_blob(struct hasher *h, const char *label, const void *data, size_t n)
{
	char len[32];
	snprintf(len, sizeof(len), "%zu", n);
	hasher_adds(h, label);
	hasher_adds(h, len);
	hasher_add(h, data, n);
}

/* What names the source: the package version, else path + size + mtime. */
static int source_id(const struct inputs *in, struct sbuf *id, struct sbuf *err, int *code)
{
	struct stat st;
	if (stat(in->source, &st) < 0) {
		int e = errno;
		if (in->packaged && e == ENOENT)
			sbuf_addf(err, "kernel source '%s' is missing; install it with 'apt-get install %s' "
				  "(or 'make deps'), or pass --source TARBALL", in->source, LAB_KBUILD_SOURCE_PKG);
		else if (e == ENOENT)
			sbuf_addf(err, "kernel source '%s' does not exist; give --source an existing tarball, "
				  "or omit it to use %s (apt-get install %s)", in->source, LAB_KBUILD_SOURCE,
				  LAB_KBUILD_SOURCE_PKG);
		else
			sbuf_addf(err, "cannot read kernel source '%s': %s", in->source, errno_advice(e));
		*code = EXIT_NOINPUT;
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		sbuf_addf(err, "kernel source '%s' is not a file", in->source);
		*code = EXIT_NOINPUT;
		return -1;
	}
	if (in->packaged) {
		struct strvec argv = STRVEC_INIT;
		struct sbuf out = SBUF_INIT;
		strvec_push(&argv, "dpkg-query");
		strvec_push(&argv, "-W");
		strvec_push(&argv, "-f=${Version}");
		strvec_push(&argv, LAB_KBUILD_SOURCE_PKG);
		int v = verbose;
		verbose = 0;   /* a lookup, not a step worth showing */
		int rc = run_cmd(&argv, &out, -1);
		verbose = v;
		strvec_free(&argv);
		if (rc == 0 && out.len && !strchr(out.buf, '\n') && !strchr(out.buf, ' ')) {
			sbuf_addf(id, "deb %s %s", LAB_KBUILD_SOURCE_PKG, out.buf);
			sbuf_free(&out);
			return 0;
		}
		sbuf_free(&out);
	}
	sbuf_addf(id, "file %s %lld %lld.%09ld", in->source, (long long)st.st_size,
		  (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
	return 0;
}

static int read_input(const char *what, const char *path, struct sbuf *out, struct sbuf *err, int *code)
{
	if (read_file(path, out) == 0)
		return 0;
	sbuf_addf(err, "cannot read %s '%s': %s", what, disp(path), errno_advice(errno));
	*code = EXIT_NOINPUT;
	return -1;
}

static int compute_key(const struct inputs *in, char key[65], struct strvec *names, struct sbuf *err, int *code)
{
	struct sbuf id = SBUF_INIT, text = SBUF_INIT, why = SBUF_INIT;
	struct hasher *h = NULL;
	int ret = -1;
	if (source_id(in, &id, err, code) < 0)
		goto out;
	h = hasher_new();
	hasher_adds(h, RECIPE);
	hash_blob(h, "source", id.buf, id.len);
	if (!is_dir(in->patches)) {
		sbuf_addf(err, "patch directory '%s' does not exist", disp(in->patches));
		*code = EXIT_NOINPUT;
		goto out;
	}
	if (read_input("patch series", in->series, &text, err, code) < 0)
		goto out;
	hash_blob(h, "series", text.buf, text.len);
	if (lab_kbuild_series_parse(text.buf, names, &why) < 0) {
		sbuf_addf(err, "malformed patch series '%s': %s", disp(in->series), why.buf);
		*code = EXIT_DATAERR;
		goto out;
	}
	for (size_t i = 0; i < names->n; i++) {
		char *path = xasprintf("%s/%s", in->patches, names->v[i]);
		sbuf_reset(&text);
		if (read_file(path, &text) < 0) {
			sbuf_addf(err, "patch '%s' listed in '%s' cannot be read: %s", disp(path),
				  disp(in->series), errno_advice(errno));
			*code = EXIT_NOINPUT;
			free(path);
			goto out;
		}
		free(path);
		hash_blob(h, names->v[i], text.buf, text.len);
	}
	sbuf_reset(&text);
	if (read_input("config fragment", in->config, &text, err, code) < 0)
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
	sbuf_free(&why);
	return ret;
}

int lab_kbuild_key(const struct lab_kbuild_opts *o, char key[65], struct sbuf *err, int *code)
{
	struct inputs in;
	struct strvec names = STRVEC_INIT;
	inputs_resolve(o, &in);
	int r = compute_key(&in, key, &names, err, code);
	strvec_free(&names);
	inputs_free(&in);
	return r;
}

/* ---- finding a built kernel ---- */

static char *entry_of(const char *key)
{
	return xasprintf("%s/kernel/%.16s", cache_dir(), key);
}

static bool entry_complete(const char *entry)
{
	char *stamp = xasprintf("%s/%s", entry, STAMP);
	char *bz = xasprintf("%s/bzImage", entry);
	bool ok = file_exists(stamp) && file_exists(bz);
	free(stamp);
	free(bz);
	return ok;
}

char *lab_kbuild_cached(const struct lab_kbuild_opts *o, char **entry)
{
	char key[65];
	struct sbuf err = SBUF_INIT;
	int code;
	if (entry)
		*entry = NULL;
	if (lab_kbuild_key(o, key, &err, &code) < 0) {
		sbuf_free(&err);
		return NULL;
	}
	char *e = entry_of(key);
	char *bz = entry_complete(e) ? xasprintf("%s/bzImage", e) : NULL;
	if (entry)
		*entry = e;
	else
		free(e);
	return bz;
}

char *lab_kernel_cached(void)
{
	return lab_kbuild_cached(NULL, NULL);
}

char *lab_kernel_tree(void)
{
	char *entry;
	char *bz = lab_kbuild_cached(NULL, &entry);
	char *tree = bz ? xasprintf("%s/linux", entry) : NULL;
	free(bz);
	free(entry);
	return tree;
}

char *lab_kernel_ensure(void)
{
	if (!opt_kernel)
		return lab_kbuild_run(NULL);
	if (lab_kernel_check(opt_kernel) < 0) {
		if (errno == ENOEXEC)
			die_code(EXIT_DATAERR, "'%s' is not a bzImage (no x86 boot header)", opt_kernel);
		die_code(EXIT_NOINPUT, "cannot read kernel '%s': %s", opt_kernel, errno_advice(errno));
	}
	return xstrdup(opt_kernel);
}

/* ---- failing ---- */

/* Remove the entry, keeping its log as last-failed-build.log. */
static void kb_cleanup(struct kb *kb)
{
	progress_abort(kb->prog);
	kb->prog = NULL;
	if (kb->log_fd >= 0) {
		close(kb->log_fd);
		kb->log_fd = -1;
		if (rename(kb->log_path, kb->failed_log) < 0)
			unlink(kb->failed_log);
	}
	if (rm_rf(kb->entry) < 0)
		warning("cannot remove the incomplete kernel build '%s': %s", kb->entry, errno_advice(errno));
}

__attribute__((format(printf, 3, 4)))
static _Noreturn void kb_die(struct kb *kb, int code, const char *fmt, ...)
{
	char msg[2048];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	kb_cleanup(kb);
	die_code(code, "%s", msg);
}

static _Noreturn void kb_die_errno(struct kb *kb, int err, const char *path)
{
	kb_die(kb, exit_for_errno(err), "cannot write '%s': %s", path, errno_advice(err));
}

/* ---- running make and patch ---- */

static bool is_disk_full_line(const char *line)
{
	return strstr(line, "No space left on device") || strstr(line, "Disk quota exceeded");
}

static bool is_error_line(const char *line)
{
	return strstr(line, "error:") || strstr(line, "Error ") || strstr(line, "*** ") ||
	       strstr(line, "undefined reference") || strstr(line, "No rule to make target");
}

/* A kbuild step line: two spaces, an upper-case tag, spaces, a target. */
static bool step_line(const char *line, char *step, size_t size)
{
	if (line[0] != ' ' || line[1] != ' ' || !isupper((unsigned char)line[2]))
		return false;
	const char *t = line + 2;
	size_t n = 0;
	while (isupper((unsigned char)t[n]) || isdigit((unsigned char)t[n]) || t[n] == '_')
		n++;
	if (n > 12 || t[n] != ' ')
		return false;
	const char *target = t + n;
	while (*target == ' ')
		target++;
	if (!*target)
		return false;
	snprintf(step, size, "%.*s %s", (int)n, t, target);
	return true;
}

static void log_write(struct kb *kb, const char *data, size_t n, int *log_err)
{
	while (n && !*log_err) {
		ssize_t w = write(kb->log_fd, data, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			*log_err = errno;
			return;
		}
		data += w;
		n -= (size_t)w;
	}
}

static void on_line(struct kb *kb, char *line, struct sbuf *capture)
{
	char step[512];
	if (capture) {
		sbuf_adds(capture, line);
		sbuf_adds(capture, "\n");
	}
	if (is_disk_full_line(line))
		kb->disk_full = 1;
	if (is_error_line(line) && kb->err_lines.n < MAX_ERR_LINES)
		strvec_push(&kb->err_lines, line);
	free(kb->tail[kb->tail_n % TAIL_LINES]);
	kb->tail[kb->tail_n++ % TAIL_LINES] = xstrdup(line);
	if (kb->count_steps && kb->prog && step_line(line, step, sizeof(step)))
		progress_update(kb->prog, ++kb->steps, step);
}

static void child_env(void)
{
	unsetenv("MAKEFLAGS");
	unsetenv("MFLAGS");
	unsetenv("MAKELEVEL");
	unsetenv("KBUILD_OUTPUT");
	unsetenv("CROSS_COMPILE");
	setenv("LC_ALL", "C", 1);
	setenv("ARCH", "x86_64", 1);
}

/*
 * Run argv in the tree, with env (NAME=value strings, may be NULL) added to
 * the environment, and stream its stdout and stderr into the build log and,
 * line by line, through on_line (which feeds the progress line and keeps the
 * error lines). capture, when non-NULL, also receives the output. Returns
 * the exit code like run_cmd; a failed write of the log kills the child and
 * dies with EXIT_CANTCREAT.
 */
static int kb_run(struct kb *kb, const struct strvec *argv, const struct strvec *env, struct sbuf *capture)
{
	char *cmdline = strvec_join_quoted(argv);
	int log_err = 0;
	if (verbose)
		fprintf(stderr, "\r\033[K+ %s\n", cmdline);
	char *hdr = xasprintf("\n$ %s\n", cmdline);
	log_write(kb, hdr, strlen(hdr), &log_err);
	free(hdr);
	free(cmdline);
	if (log_err)
		kb_die_errno(kb, log_err, kb->log_path);

	kb->steps = 0;
	kb->disk_full = 0;
	strvec_free(&kb->err_lines);
	for (size_t i = 0; i < TAIL_LINES; i++) {
		free(kb->tail[i]);
		kb->tail[i] = NULL;
	}
	kb->tail_n = 0;
	int pfd[2];
	if (pipe2(pfd, O_CLOEXEC) < 0)
		kb_die(kb, EXIT_SOFTWARE, "cannot create a pipe: %s", strerror(errno));
	pid_t pid = fork();
	if (pid < 0)
		kb_die(kb, EXIT_SOFTWARE, "cannot fork: %s", strerror(errno));
	if (pid == 0) {
		int nul = open("/dev/null", O_RDONLY);
		if (nul >= 0) {
			dup2(nul, 0);
			close(nul);
		}
		dup2(pfd[1], 1);
		dup2(pfd[1], 2);
		if (chdir(kb->tree) < 0) {
			fprintf(stderr, "cannot enter '%s': %s\n", kb->tree, strerror(errno));
			_exit(127);
		}
		child_env();
		for (size_t i = 0; env && i < env->n; i++)
			putenv(env->v[i]);
		execvp(argv->v[0], argv->v);
		fprintf(stderr, "cannot run '%s': %s\n", argv->v[0], strerror(errno));
		_exit(127);
	}
	close(pfd[1]);

	struct sbuf pending = SBUF_INIT;
	char buf[16384];
	for (;;) {
		struct pollfd pf = { pfd[0], POLLIN, 0 };
		int pr = poll(&pf, 1, 1000);
		if (pr < 0 && errno != EINTR)
			break;
		if (pr <= 0) {
			if (kb->prog)
				progress_tick(kb->prog);
			continue;
		}
		ssize_t n = read(pfd[0], buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		int had_err = log_err;
		log_write(kb, buf, (size_t)n, &log_err);
		if (log_err && !had_err)
			kill(pid, SIGTERM);   /* the log is the record of the build: stop */
		sbuf_add(&pending, buf, (size_t)n);
		char *start = pending.buf, *nl;
		while ((nl = memchr(start, '\n', pending.len - (size_t)(start - pending.buf)))) {
			*nl = '\0';
			on_line(kb, start, capture);
			start = nl + 1;
		}
		size_t rest = pending.len - (size_t)(start - pending.buf);
		memmove(pending.buf, start, rest);
		pending.len = rest;
		pending.buf[rest] = '\0';
	}
	close(pfd[0]);
	if (pending.len)
		on_line(kb, pending.buf, capture);
	sbuf_free(&pending);
	int st = 127 << 8;   /* as if it could not run, should waitpid fail */
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			break;
	if (log_err)
		kb_die_errno(kb, log_err, kb->log_path);
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	return 128 + WTERMSIG(st);
}

/* A step's child failed: report the lines that matter and the log, exit 71 (73 when the disk is full). */
static _Noreturn void kb_step_failed(struct kb *kb, const char *what, int rc, double seconds)
{
	char t[16];
	if (kb->disk_full)
		kb_die(kb, EXIT_CANTCREAT, "the disk filled up while %s in '%s': %s", what, kb->entry,
		       errno_advice(ENOSPC));
	progress_fmt_time(seconds, t, sizeof(t));
	struct strvec show = STRVEC_INIT;
	size_t compiler = 0;
	for (size_t i = 0; i < kb->err_lines.n && compiler < 4; i++) {
		const char *l = kb->err_lines.v[i];
		if (strstr(l, "error:") || strstr(l, "undefined reference") || strstr(l, "No rule to make target")) {
			strvec_push(&show, l);
			compiler++;
		}
	}
	for (size_t i = 0; i < kb->err_lines.n && show.n < 6; i++)
		if (strstr(kb->err_lines.v[i], "*** ")) {
			strvec_push(&show, kb->err_lines.v[i]);
			break;
		}
	if (!show.n) {
		size_t first = kb->tail_n > TAIL_LINES ? kb->tail_n - TAIL_LINES : 0;
		for (size_t i = first; i < kb->tail_n; i++)
			strvec_push(&show, kb->tail[i % TAIL_LINES]);
	}
	kb_cleanup(kb);
	error("%s failed (exit code %d after %s); the log says:", what, rc, t);
	for (size_t i = 0; i < show.n; i++)
		fprintf(stderr, "    %s\n", show.v[i]);
	fprintf(stderr, "crashlab: full log: '%s'\n", kb->failed_log);
	exit(EXIT_BUILD);
}

/* ---- the steps ---- */

/* Extraction failed: writing (disk), or reading the archive in or after member at. */
static _Noreturn void extract_failed(struct kb *kb, struct archive *rd, struct archive *wr,
				     const char *at, bool writing, const char *where)
{
	struct archive *a = writing ? wr : rd;
	int e = archive_errno(a);
	char msg[1024];
	snprintf(msg, sizeof(msg), "%s", archive_error_string(a) ? archive_error_string(a) : "unknown error");
	archive_read_free(rd);
	archive_write_free(wr);
	if (writing) {
		if (e > 0 && exit_for_errno(e) == EXIT_CANTCREAT)
			kb_die_errno(kb, e, at);
		kb_die(kb, e > 0 ? exit_for_errno(e) : EXIT_SOFTWARE, "cannot write '%s': %s", at, msg);
	}
	if (e == ENOENT || e == EACCES)
		kb_die(kb, EXIT_NOINPUT, "cannot read kernel source '%s': %s", kb->in.source, errno_advice(e));
	const char *hint = kb->in.packaged ? "; reinstall it with 'apt-get install --reinstall "
					     LAB_KBUILD_SOURCE_PKG "'" : "";
	if (at && *at)
		kb_die(kb, EXIT_DATAERR, "kernel source '%s' is damaged: %s (%s '%s')%s", kb->in.source, msg,
		       where, at, hint);
	kb_die(kb, EXIT_DATAERR, "kernel source '%s' is damaged: %s%s", kb->in.source, msg, hint);
}

/*
 * Did a write-side call fail? libarchive reports a failed write(2) of file
 * data as ARCHIVE_WARN, and uses ARCHIVE_WARN for harmless trouble (times
 * it could not restore) as well: a warning counts when its errno says the
 * disk refused the data.
 */
static bool write_failed(struct archive *wr, int r)
{
	if (r < ARCHIVE_WARN)
		return true;
	if (r == ARCHIVE_OK)
		return false;
	int e = archive_errno(wr);
	return e == ENOSPC || e == EDQUOT || e == EFBIG || e == EIO || e == EROFS;
}

static void extract(struct kb *kb)
{
	struct stat st;
	if (stat(kb->in.source, &st) < 0)
		kb_die(kb, EXIT_NOINPUT, "cannot read kernel source '%s': %s", kb->in.source, errno_advice(errno));
	if (mkdir(kb->tree, 0755) < 0)
		kb_die_errno(kb, errno, kb->tree);
	struct archive *rd = archive_read_new();
	struct archive *wr = archive_write_disk_new();
	archive_read_support_filter_all(rd);
	archive_read_support_format_tar(rd);
	/* Member names are rewritten to absolute paths under the tree, so
	 * SECURE_NOABSOLUTEPATHS cannot be used; ".." and links are refused. */
	archive_write_disk_set_options(wr, ARCHIVE_EXTRACT_TIME | ARCHIVE_EXTRACT_SECURE_NODOTDOT |
					   ARCHIVE_EXTRACT_SECURE_SYMLINKS);
	const char *base = strrchr(kb->in.source, '/');
	base = base ? base + 1 : kb->in.source;
	char *title = xasprintf("extracting %s", base);
	kb->prog = progress_start(title, (uint64_t)st.st_size);
	free(title);

	char at[PATH_MAX] = "";   /* the archive member being read, for messages */
	char dest[PATH_MAX + 64];
	long files = 0;
	if (archive_read_open_filename(rd, kb->in.source, 1 << 20) != ARCHIVE_OK)
		extract_failed(kb, rd, wr, at, false, "");
	for (;;) {
		struct archive_entry *ae;
		int r = archive_read_next_header(rd, &ae);
		if (r == ARCHIVE_EOF)
			break;
		if (r < ARCHIVE_WARN)
			extract_failed(kb, rd, wr, at, false, "after");
		snprintf(at, sizeof(at), "%s", archive_entry_pathname(ae));
		const char *rest = strchr(at, '/');
		rest = rest ? rest + 1 : "";
		if (!*rest)
			continue;   /* the top directory itself (or a stray top-level member) */
		const char *hl = archive_entry_hardlink(ae);
		if (has_dotdot(rest) || (hl && has_dotdot(hl)))
			kb_die(kb, EXIT_DATAERR, "kernel source '%s' is damaged: member '%s' points outside the tree",
			       kb->in.source, at);
		snprintf(dest, sizeof(dest), "%s/%s", kb->tree, rest);
		archive_entry_set_pathname(ae, dest);
		if (hl) {
			const char *hrest = strchr(hl, '/');
			char *hdest = xasprintf("%s/%s", kb->tree, hrest ? hrest + 1 : hl);
			archive_entry_set_hardlink(ae, hdest);
			free(hdest);
		}
		progress_update(kb->prog, (uint64_t)archive_filter_bytes(rd, -1), rest);
		if (write_failed(wr, archive_write_header(wr, ae)))
			extract_failed(kb, rd, wr, dest, true, "");
		for (;;) {
			const void *data;
			size_t size;
			la_int64_t off;
			r = archive_read_data_block(rd, &data, &size, &off);
			if (r == ARCHIVE_EOF)
				break;
			if (r < ARCHIVE_WARN)
				extract_failed(kb, rd, wr, at, false, "in");
			if (archive_write_data_block(wr, data, size, off) != ARCHIVE_OK)
				extract_failed(kb, rd, wr, dest, true, "");
		}
		if (write_failed(wr, archive_write_finish_entry(wr)))
			extract_failed(kb, rd, wr, dest, true, "");
		files++;
	}
	if (write_failed(wr, archive_write_close(wr)))
		extract_failed(kb, rd, wr, kb->tree, true, "");
	archive_read_free(rd);
	archive_write_free(wr);
	if (files == 0)
		kb_die(kb, EXIT_DATAERR, "kernel source '%s' holds no files", kb->in.source);
	char t[16], msg[512];
	snprintf(msg, sizeof(msg), "extracted '%s' (%ld files) in %s", base, files,
		 progress_fmt_time(progress_elapsed(kb->prog), t, sizeof(t)));
	progress_done(kb->prog, msg);
	kb->prog = NULL;
	char *line = xasprintf("== %s\n", msg);
	int log_err = 0;
	log_write(kb, line, strlen(line), &log_err);
	free(line);
	if (log_err)
		kb_die_errno(kb, log_err, kb->log_path);
}

/* Why patch failed, in a few words, from its output. */
static char *reject_reason(const char *out, int rc)
{
	char *file = NULL, *reason = NULL;
	const char *p = out;
	while (*p && !reason) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		char *line = xasprintf("%.*s", (int)len, p);
		p += len + (nl ? 1 : 0);
		int hunk, at;
		if (!strncmp(line, "patching file ", 14)) {
			free(file);
			const char *f = line + 14;
			size_t fl = strlen(f);
			if (fl >= 2 && f[0] == '\'' && f[fl - 1] == '\'')
				file = xasprintf("%.*s", (int)fl - 2, f + 1);
			else
				file = xstrdup(f);
		} else if (!strncmp(line, "|+++ ", 5) || !strncmp(line, "+++ ", 4)) {
			const char *f = line + (line[0] == '|' ? 5 : 4);
			size_t fl = strcspn(f, "\t");
			if (fl > 2 && f[1] == '/')
				f += 2, fl -= 2;
			free(file);
			file = xasprintf("%.*s", (int)fl, f);
		} else if (sscanf(line, "Hunk #%d FAILED at %d", &hunk, &at) == 2) {
			reason = xasprintf("hunk #%d FAILED at line %d of '%s'", hunk, at, file ? file : "?");
		} else if (strstr(line, "Reversed (or previously applied) patch detected")) {
			reason = xasprintf("'%s' already has this change (reversed or previously applied patch)",
					   file ? file : "?");
		} else if (strstr(line, "can't find file to patch")) {
			reason = file ? xasprintf("'%s' does not exist in the tree", file)
				      : xstrdup("a file it changes does not exist in the tree");
		} else if (strstr(line, "Only garbage was found")) {
			reason = xstrdup("it is not a patch (only garbage was found)");
		} else if (strstr(line, "malformed patch") || strstr(line, "unexpected end of file") ||
			   strstr(line, "cannot") || strstr(line, "Can't")) {
			reason = xstrdup(line);
		}
		free(line);
	}
	free(file);
	if (!reason) {
		const char *q = out;
		while (*q == '\n')
			q++;
		size_t len = strcspn(q, "\n");
		reason = len ? xasprintf("%.*s", (int)len, q) : xasprintf("patch exited %d", rc);
	}
	return reason;
}

static void apply_patches(struct kb *kb)
{
	if (!kb->names.n)
		return;
	if (!find_program("patch"))
		kb_die(kb, EXIT_CONFIG, "cannot apply '%s': 'patch' is missing; run 'make deps' "
		       "(or apt-get install patch)", disp(kb->in.series));
	kb->prog = progress_start("applying patches", kb->names.n);
	for (size_t i = 0; i < kb->names.n; i++) {
		char *path = xasprintf("%s/%s", kb->in.patches, kb->names.v[i]);
		struct strvec argv = STRVEC_INIT;
		struct sbuf out = SBUF_INIT;
		progress_update(kb->prog, i, kb->names.v[i]);
		strvec_push(&argv, "patch");
		strvec_push(&argv, "-p1");
		strvec_push(&argv, "--forward");
		strvec_push(&argv, "--batch");
		strvec_push(&argv, "--fuzz=0");
		strvec_push(&argv, "--no-backup-if-mismatch");
		strvec_push(&argv, "-i");
		strvec_push(&argv, path);
		int rc = kb_run(kb, &argv, NULL, &out);
		strvec_free(&argv);
		if (rc != 0) {
			if (kb->disk_full)
				kb_die(kb, EXIT_CANTCREAT, "the disk filled up while applying '%s' in '%s': %s",
				       disp(path), kb->tree, errno_advice(ENOSPC));
			char *why = reject_reason(out.buf ? out.buf : "", rc);
			kb_die(kb, EXIT_PATCH, "patch '%s' from '%s' does not apply: %s", disp(path),
			       disp(kb->in.series), why);
		}
		sbuf_free(&out);
		free(path);
	}
	char msg[512];
	snprintf(msg, sizeof(msg), "applied %zu patch%s from '%s'", kb->names.n,
		 kb->names.n == 1 ? "" : "es", disp(kb->in.series));
	progress_done(kb->prog, msg);
	kb->prog = NULL;
}

/* The same variables for every make run, so Kconfig sees the compiler the build uses. */
static void make_setup(struct kb *kb)
{
	char *ccache = find_program("ccache");
	kb->ccache = ccache != NULL;
	free(ccache);
	strvec_push(&kb->make_env, "KBUILD_BUILD_TIMESTAMP=" BUILD_TIMESTAMP);
	strvec_push(&kb->make_env, "KBUILD_BUILD_USER=crashlab");
	strvec_push(&kb->make_env, "KBUILD_BUILD_HOST=crashlab");
	strvec_push(&kb->make_env, "KBUILD_BUILD_VERSION=1");
	if (kb->ccache) {
		char *dir = cache_subdir("ccache");
		strvec_pushf(&kb->make_env, "CCACHE_DIR=%s", dir);
		strvec_pushf(&kb->make_env, "CCACHE_BASEDIR=%s", kb->tree);
		strvec_push(&kb->make_env, "CCACHE_NOHASHDIR=1");
		free(dir);
	}
}

static void make_argv(struct kb *kb, struct strvec *argv, const char *target)
{
	strvec_push(argv, "make");
	if (!strcmp(target, "bzImage"))
		strvec_pushf(argv, "-j%d", kb->in.jobs);
	strvec_push(argv, "ARCH=x86_64");
	if (kb->ccache)
		strvec_push(argv, "CC=ccache gcc");
	strvec_push(argv, target);
}

static void configure(struct kb *kb)
{
	kb->prog = progress_start("configuring", 2);
	double start = now_s();
	struct strvec argv = STRVEC_INIT;
	make_argv(kb, &argv, "allnoconfig");
	strvec_pushf(&argv, "KCONFIG_ALLCONFIG=%s", kb->in.config);
	progress_update(kb->prog, 0, "allnoconfig");
	int rc = kb_run(kb, &argv, &kb->make_env, NULL);
	strvec_free(&argv);
	if (rc != 0)
		kb_step_failed(kb, "configuring the kernel ('make allnoconfig')", rc, now_s() - start);
	make_argv(kb, &argv, "olddefconfig");
	progress_update(kb->prog, 1, "olddefconfig");
	rc = kb_run(kb, &argv, &kb->make_env, NULL);
	strvec_free(&argv);
	if (rc != 0)
		kb_step_failed(kb, "configuring the kernel ('make olddefconfig')", rc, now_s() - start);

	struct sbuf frag = SBUF_INIT, dot = SBUF_INIT;
	char *dotpath = xasprintf("%s/.config", kb->tree);
	if (read_file(kb->in.config, &frag) < 0)
		kb_die(kb, EXIT_NOINPUT, "cannot read config fragment '%s': %s", disp(kb->in.config),
		       errno_advice(errno));
	if (read_file(dotpath, &dot) < 0)
		kb_die(kb, EXIT_BUILD, "configuring the kernel wrote no '%s': %s", dotpath, errno_advice(errno));
	struct strvec problems = STRVEC_INIT;
	int n = lab_kbuild_config_verify(frag.buf, disp(kb->in.config), dot.buf, &problems);
	if (n > 0) {
		kb_cleanup(kb);
		for (size_t i = 0; i + 1 < problems.n; i++)
			error("%s", problems.v[i]);
		die_code(EXIT_CONFIG, "%s", problems.v[problems.n - 1]);
	}
	size_t nopts;
	struct cfgopt *opts = cfg_parse(frag.buf, &nopts, NULL, "");
	cfg_free(opts, nopts);
	char msg[512];
	snprintf(msg, sizeof(msg), "configured: %s %zu option%s of '%s' kept", nopts == 1 ? "the" : "all",
		 nopts, nopts == 1 ? "" : "s", disp(kb->in.config));
	progress_done(kb->prog, msg);
	kb->prog = NULL;
	strvec_free(&problems);
	sbuf_free(&frag);
	sbuf_free(&dot);
	free(dotpath);
}

static uint64_t steps_guess(struct kb *kb)
{
	struct sbuf sb = SBUF_INIT;
	char *path = xasprintf("%s/steps", kb->kdir);
	long long n = 0;
	if (read_file(path, &sb) == 0)
		n = atoll(sb.buf);
	sbuf_free(&sb);
	free(path);
	return n >= 100 && n < 1000000 ? (uint64_t)n : STEPS_GUESS;
}

static void build(struct kb *kb)
{
	struct strvec argv = STRVEC_INIT;
	make_argv(kb, &argv, "bzImage");
	kb->prog = progress_start("building kernel", steps_guess(kb));
	kb->count_steps = true;
	int rc = kb_run(kb, &argv, &kb->make_env, NULL);
	kb->count_steps = false;
	double secs = progress_elapsed(kb->prog);
	strvec_free(&argv);
	if (rc != 0)
		kb_step_failed(kb, "building the kernel", rc, secs);
	char t[16], msg[256];
	snprintf(msg, sizeof(msg), "built bzImage in %s (%llu steps%s)", progress_fmt_time(secs, t, sizeof(t)),
		 (unsigned long long)kb->steps, kb->ccache ? ", ccache" : "");
	progress_done(kb->prog, msg);
	kb->prog = NULL;
}

static void copy_file(struct kb *kb, const char *from, const char *to)
{
	char *tmp = xasprintf("%s.tmp", to);
	int in = open(from, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		kb_die(kb, EXIT_BUILD, "the build made no '%s': %s", from, errno_advice(errno));
	int out = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (out < 0)
		kb_die_errno(kb, errno, tmp);
	char buf[1 << 16];
	ssize_t n;
	while ((n = read(in, buf, sizeof(buf))) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			kb_die(kb, EXIT_BUILD, "cannot read '%s': %s", from, errno_advice(errno));
		}
		for (ssize_t off = 0; off < n;) {
			ssize_t w = write(out, buf + off, (size_t)(n - off));
			if (w < 0) {
				if (errno == EINTR)
					continue;
				kb_die_errno(kb, errno, tmp);
			}
			off += w;
		}
	}
	close(in);
	if (fsync(out) < 0 || close(out) < 0)
		kb_die_errno(kb, errno, tmp);
	if (rename(tmp, to) < 0)
		kb_die_errno(kb, errno, to);
	free(tmp);
}

static void finish(struct kb *kb)
{
	char *built = xasprintf("%s/arch/x86/boot/bzImage", kb->tree);
	char *bz = xasprintf("%s/bzImage", kb->entry);
	copy_file(kb, built, bz);
	if (lab_kernel_check(bz) < 0)
		kb_die(kb, EXIT_BUILD, "the build made '%s' but it is not a bzImage", built);

	char steps[32];
	int n = snprintf(steps, sizeof(steps), "%llu\n", (unsigned long long)kb->steps);
	char *steps_path = xasprintf("%s/steps", kb->kdir);
	if (write_file_atomic(steps_path, steps, (size_t)n) < 0)
		kb_die_errno(kb, errno, steps_path);

	const char *version = lab_kernel_version(bz);
	char *stamp_text = xasprintf("key %s\nversion %s\n", kb->key, version ? version : "?");
	char *stamp = xasprintf("%s/%s", kb->entry, STAMP);
	if (write_file_atomic(stamp, stamp_text, strlen(stamp_text)) < 0)
		kb_die_errno(kb, errno, stamp);
	int dfd = open(kb->entry, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0) {
		fsync(dfd);
		close(dfd);
	}
	close(kb->log_fd);
	kb->log_fd = -1;
	free(stamp);
	free(stamp_text);
	free(steps_path);
	free(bz);
	free(built);
}

static void check_tools(struct kb *kb)
{
	static const char *const tools[][2] = {
		{ "make", "make" }, { "gcc", "gcc" }, { "flex", "flex" }, { "bison", "bison" },
		{ "bc", "bc" },
	};
	for (size_t i = 0; i < sizeof(tools) / sizeof(tools[0]); i++) {
		char *p = find_program(tools[i][0]);
		if (!p)
			die_code(EXIT_CONFIG, "cannot build the kernel: '%s' is missing; run 'make deps' "
				 "(or apt-get install %s)", tools[i][0], tools[i][1]);
		free(p);
	}
	(void)kb;
}

static void take_lock(struct kb *kb)
{
	char *path = xasprintf("%s/%.16s.lock", kb->kdir, kb->key);
	kb->lock_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (kb->lock_fd < 0)
		die_code(exit_for_errno(errno), "cannot create '%s': %s", path, errno_advice(errno));
	if (flock(kb->lock_fd, LOCK_EX | LOCK_NB) < 0) {
		if (errno != EWOULDBLOCK)
			die_code(EXIT_SOFTWARE, "cannot lock '%s': %s", path, strerror(errno));
		note("another crashlab is building this kernel; waiting for it (lock '%s')", path);
		while (flock(kb->lock_fd, LOCK_EX) < 0)
			if (errno != EINTR)
				die_code(EXIT_SOFTWARE, "cannot lock '%s': %s", path, strerror(errno));
	}
	free(path);
}

char *lab_kbuild_run(const struct lab_kbuild_opts *o)
{
	struct kb kb;
	struct sbuf err = SBUF_INIT;
	int code = EXIT_SOFTWARE;
	memset(&kb, 0, sizeof(kb));
	kb.log_fd = -1;
	kb.lock_fd = -1;
	inputs_resolve(o, &kb.in);
	if (compute_key(&kb.in, kb.key, &kb.names, &err, &code) < 0)
		die_code(code, "%s", err.buf);
	kb.kdir = cache_subdir("kernel");
	kb.entry = xasprintf("%s/%.16s", kb.kdir, kb.key);
	kb.tree = xasprintf("%s/linux", kb.entry);
	kb.log_path = xasprintf("%s/build.log", kb.entry);
	kb.failed_log = xasprintf("%s/%s", kb.kdir, FAILED_LOG);
	char *bz = xasprintf("%s/bzImage", kb.entry);
	if (entry_complete(kb.entry))
		return bz;

	take_lock(&kb);
	if (entry_complete(kb.entry)) {
		close(kb.lock_fd);
		return bz;
	}
	check_tools(&kb);
	make_setup(&kb);
	if (file_exists(kb.entry)) {
		note("removing the incomplete kernel build '%s'", kb.entry);
		if (rm_rf(kb.entry) < 0)
			die_code(exit_for_errno(errno), "cannot remove '%s': %s", kb.entry, errno_advice(errno));
	}
	if (mkdir(kb.entry, 0755) < 0)
		die_code(exit_for_errno(errno), "cannot create '%s': %s", kb.entry, errno_advice(errno));
	kb.log_fd = open(kb.log_path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
	if (kb.log_fd < 0) {
		int e = errno;
		rm_rf(kb.entry);
		die_code(exit_for_errno(e), "cannot create '%s': %s", kb.log_path, errno_advice(e));
	}
	note("building the guest kernel in '%s' (once; later runs reuse it)", kb.entry);

	double start = now_s();
	extract(&kb);
	apply_patches(&kb);
	configure(&kb);
	build(&kb);
	finish(&kb);
	char t[16];
	note("kernel ready in %s: '%s'", progress_fmt_time(now_s() - start, t, sizeof(t)), bz);

	close(kb.lock_fd);
	for (size_t i = 0; i < TAIL_LINES; i++)
		free(kb.tail[i]);
	strvec_free(&kb.err_lines);
	strvec_free(&kb.names);
	strvec_free(&kb.make_env);
	inputs_free(&kb.in);
	free(kb.kdir);
	free(kb.entry);
	free(kb.tree);
	free(kb.log_path);
	free(kb.failed_log);
	sbuf_free(&err);
	return bz;
}
