/*
 * kernel_series.c - `crashlab kernel tree|export|check`: the patch series
 * kept as git commits, and checked the way a maintainer checks a series.
 *
 * tree    <cache>/git/linux-6.12: Debian's linux-source-6.12 as commit
 *         `base` (its packaging rule that ignores every top-level path
 *         dropped from .gitignore, so git sees the tree), and branch
 *         `series` with kernel/series applied by `git am`. The cover
 *         letter's text (kernel/0000-cover-letter.patch) becomes the
 *         branch description. Edit the series there with git.
 * export  `git format-patch` of that branch back into kernel/: the
 *         barrier series with its cover letter (0000-...), and every
 *         patch listed after the series file's "independent" comment
 *         on its own, numbered on.
 * check   on a worktree of that repository, the series of kernel/ applied
 *         one patch at a time; at each bisect point the kernel is built
 *         (all of it, or with --build touched only the objects the patch
 *         touches), the Documentation references are checked
 *         (scripts/documentation-file-ref-check) and the touched files'
 *         kernel-doc (scripts/kernel-doc -Wall); each patch goes through
 *         scripts/checkpatch.pl --strict, whose remaining findings must be
 *         named in the cover letter; then `crashlab kernel test`. A table
 *         shows it all; exit 1 when something failed.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "core/fs.h"
#include "host/msg.h"
#include "host/sys.h"
#include "kbuild/kbuild.h"

#define TREE_NAME "linux-" KBUILD_SOURCE_NAME
#define BRANCH "series"
#define COVER "0000-cover-letter.patch"

/* git and make runs whose output is only needed on failure */
static int run_quiet(const char *dir, struct sbuf *out, const char *prog, ...)
{
	struct strvec argv = STRVEC_INIT;
	va_list ap;
	va_start(ap, prog);
	strvec_push(&argv, prog);
	for (const char *a; (a = va_arg(ap, const char *));)
		strvec_push(&argv, a);
	va_end(ap);
	sbuf_reset(out);
	int rc = run_cmd_in(dir, &argv, out, -1);
	strvec_free(&argv);
	return rc;
}

static void git_identity(void)
{
	/* commits the tool makes carry a fixed identity and date, so the
	 * base commit is the same on every machine */
	setenv("GIT_COMMITTER_NAME", "crashlab developers", 1);
	setenv("GIT_COMMITTER_EMAIL", "dev@crashlab.invalid", 1);
	setenv("GIT_AUTHOR_NAME", "crashlab developers", 1);
	setenv("GIT_AUTHOR_EMAIL", "dev@crashlab.invalid", 1);
}

static char *git_root(void)
{
	struct errbuf e;
	char *dir = cache_subdir("git", &e);
	if (!dir)
		die_err(&e);
	return dir;
}

/* The patch names of kernel/series, and how many of them come before the
 * comment that starts the independent patches. */
static void series_names(const char *kdir, struct strvec *names, size_t *nseries)
{
	char *path = xasprintf("%s/series", kdir);
	struct sbuf sb = SBUF_INIT;
	struct errbuf e;
	if (read_file(path, &sb) < 0)
		die_code(EXIT_NOINPUT, "cannot read '%s': %s", path, errno_advice(errno));
	if (kbuild_series_parse(sb.buf, names, &e) < 0)
		die_code(EXIT_DATAERR, "%s: %s", path, e.msg);
	*nseries = names->n;
	/* count the names before the first comment line naming "independent" */
	size_t seen = 0;
	for (char *line = sb.buf; line && *line;) {
		char *nl = strchr(line, '\n');
		if (nl)
			*nl = '\0';
		if (line[0] == '#' && strstr(line, "independent")) {
			*nseries = seen;
			break;
		}
		if (line[0] && line[0] != '#')
			seen++;
		line = nl ? nl + 1 : NULL;
	}
	sbuf_free(&sb);
	free(path);
}

/* The cover letter's own text: its subject line and the body up to the
 * shortlog ("Name (N):"), as git's branch description wants it. NULL when
 * there is no cover letter. */
static char *cover_text(const char *kdir)
{
	char *path = xasprintf("%s/" COVER, kdir);
	struct sbuf sb = SBUF_INIT, out = SBUF_INIT;
	if (read_file(path, &sb) < 0) {
		free(path);
		return NULL;
	}
	free(path);
	const char *subj = strstr(sb.buf, "\nSubject: ");
	const char *body = strstr(sb.buf, "\n\n");
	if (!subj || !body) {
		sbuf_free(&sb);
		return NULL;
	}
	subj += strlen("\nSubject: ");
	if (*subj == '[')
		subj = strchr(subj, ']') ? strchr(subj, ']') + 2 : subj;
	/* the subject may be folded over several lines */
	for (const char *p = subj; p < body; p++)
		if (*p != '\n')
			sbuf_add(&out, p, 1);
		else if (p[1] == ' ')
			p++, sbuf_adds(&out, " ");
	sbuf_adds(&out, "\n\n");
	for (const char *line = body + 2; *line;) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		if (len > 4 && line[len - 1] == ':' && line[len - 2] == ')' && memchr(line, '(', len))
			break; /* the shortlog */
		sbuf_add(&out, line, len);
		sbuf_adds(&out, "\n");
		line = nl ? nl + 1 : line + len;
	}
	while (out.len && out.buf[out.len - 1] == '\n')
		out.buf[--out.len] = '\0';
	sbuf_free(&sb);
	return sbuf_detach(&out);
}

/* Drop Debian's packaging rule (a line "/\*" and a line "!/debian/") from the
 * tree's top .gitignore. */
static void unignore(const char *tree)
{
	char *path = xasprintf("%s/.gitignore", tree);
	struct sbuf sb = SBUF_INIT, out = SBUF_INIT;
	if (read_file(path, &sb) == 0) {
		for (char *line = sb.buf; line && *line;) {
			char *nl = strchr(line, '\n');
			size_t len = nl ? (size_t)(nl - line) : strlen(line);
			if (!(len == 2 && !strncmp(line, "/*", 2)) && !(len == 9 && !strncmp(line, "!/debian/", 9))) {
				sbuf_add(&out, line, len);
				sbuf_adds(&out, "\n");
			}
			line = nl ? nl + 1 : NULL;
		}
		if (write_file_atomic(path, out.buf, out.len) < 0)
			die_code(exit_for_errno(errno), "cannot write '%s': %s", path, errno_advice(errno));
	}
	sbuf_free(&sb);
	sbuf_free(&out);
	free(path);
}

/* Make <cache>/git/linux-6.12 with commit `base` when it is missing. */
static char *tree_base(void)
{
	char *root = git_root();
	char *tree = xasprintf("%s/" TREE_NAME, root);
	char *probe = xasprintf("%s/.git", tree);
	struct sbuf out = SBUF_INIT;
	if (is_dir(probe)) {
		free(probe);
		free(root);
		return tree;
	}
	free(probe);
	if (!file_exists(KBUILD_SOURCE))
		die_code(EXIT_NOINPUT, "'%s' is missing: apt-get install " KBUILD_SOURCE_PKG, KBUILD_SOURCE);
	char *tmp = xasprintf("%s.tmp", tree);
	rm_rf(tmp);
	if (mkdir_p(tmp, 0755) < 0)
		die_code(exit_for_errno(errno), "cannot create '%s': %s", tmp, errno_advice(errno));
	note("unpacking '%s' into '%s'", KBUILD_SOURCE, tree);
	if (run_quiet(NULL, &out, "tar", "-xf", KBUILD_SOURCE, "-C", tmp, "--strip-components=1", NULL))
		die_code(EXIT_DATAERR, "cannot unpack '%s': %s", KBUILD_SOURCE, out.buf);
	unignore(tmp);
	char *msg = xasprintf("Debian's " KBUILD_SOURCE_PKG "\n\n"
			      "Unpacked from " KBUILD_SOURCE ", with the packaging rule that\n"
			      "makes git ignore every top-level path removed from .gitignore.\n");
	setenv("GIT_AUTHOR_DATE", "2026-01-01T00:00:00Z", 1);
	setenv("GIT_COMMITTER_DATE", "2026-01-01T00:00:00Z", 1);
	if (run_quiet(tmp, &out, "git", "init", "-q", NULL) || run_quiet(tmp, &out, "git", "add", "-A", NULL) ||
	    run_quiet(tmp, &out, "git", "commit", "-q", "--no-verify", "-m", msg, NULL) ||
	    run_quiet(tmp, &out, "git", "tag", "base", NULL))
		die_code(EXIT_BUILD, "git failed in '%s': %s", tmp, out.buf);
	unsetenv("GIT_AUTHOR_DATE");
	unsetenv("GIT_COMMITTER_DATE");
	if (rename(tmp, tree) < 0)
		die_code(exit_for_errno(errno), "cannot rename '%s': %s", tmp, errno_advice(errno));
	free(msg);
	free(tmp);
	free(root);
	sbuf_free(&out);
	return tree;
}

/* git am every patch of names onto the current HEAD of dir; returns how
 * many applied, the failure's output in fail. */
static size_t am_series(const char *dir, const char *kdir, const struct strvec *names, size_t n, struct sbuf *fail)
{
	for (size_t i = 0; i < n; i++) {
		char *p = xasprintf("%s/%s", kdir, names->v[i]);
		int rc = run_quiet(dir, fail, "git", "am", "-q", "--committer-date-is-author-date", p, NULL);
		free(p);
		if (rc) {
			struct sbuf ignore = SBUF_INIT;
			run_quiet(dir, &ignore, "git", "am", "--abort", NULL);
			sbuf_free(&ignore);
			return i;
		}
	}
	return n;
}

static const char *kernel_dir(const struct kbuild_opts *o)
{
	static char *dir;
	if (!dir)
		dir = o->patches ? xstrdup(o->patches) : xasprintf("%s/kernel", project_root());
	return dir;
}

int kernel_tree_cmd(const struct kbuild_opts *o, bool reset)
{
	git_identity();
	const char *kdir = kernel_dir(o);
	char *tree = tree_base();
	struct sbuf out = SBUF_INIT;
	bool exists = run_quiet(tree, &out, "git", "rev-parse", "-q", "--verify", "refs/heads/" BRANCH, NULL) == 0;
	if (!exists || reset) {
		struct strvec names = STRVEC_INIT;
		size_t nseries;
		series_names(kdir, &names, &nseries);
		if (run_quiet(tree, &out, "git", "checkout", "-q", "-f", "-B", BRANCH, "base", NULL) ||
		    run_quiet(tree, &out, "git", "clean", "-qfdx", NULL))
			die_code(EXIT_BUILD, "git checkout failed in '%s': %s", tree, out.buf);
		size_t applied = am_series(tree, kdir, &names, names.n, &out);
		if (applied < names.n)
			die_code(EXIT_PATCH, "%s/%s does not apply with 'git am': %s", kdir, names.v[applied], out.buf);
		char *cover = cover_text(kdir);
		if (cover && run_quiet(tree, &out, "git", "config", "branch." BRANCH ".description", cover, NULL))
			die_code(EXIT_BUILD, "git config failed: %s", out.buf);
		note("branch '" BRANCH "': %zu patches of '%s/series' on 'base'%s", names.n, kdir,
		     cover ? ", the cover letter as its description" : "");
		free(cover);
		strvec_free(&names);
	}
	printf("%s\n", tree);
	sbuf_free(&out);
	free(tree);
	return 0;
}

/* Replace the cover letter's Date with that of the last patch, so an
 * export of an unchanged series changes nothing. */
static void cover_date(const char *cover, const char *last)
{
	struct sbuf c = SBUF_INIT, l = SBUF_INIT;
	if (read_file(cover, &c) < 0 || read_file(last, &l) < 0)
		goto out;
	char *cd = strstr(c.buf, "\nDate: "), *ld = strstr(l.buf, "\nDate: ");
	if (!cd || !ld)
		goto out;
	size_t cl = strcspn(cd + 1, "\n"), ll = strcspn(ld + 1, "\n");
	struct sbuf n = SBUF_INIT;
	sbuf_add(&n, c.buf, (size_t)(cd + 1 - c.buf));
	sbuf_add(&n, ld + 1, ll);
	sbuf_adds(&n, cd + 1 + cl);
	write_file_atomic(cover, n.buf, n.len);
	sbuf_free(&n);
out:
	sbuf_free(&c);
	sbuf_free(&l);
}

int kernel_export_cmd(const struct kbuild_opts *o)
{
	git_identity();
	const char *kdir = kernel_dir(o);
	char *root = git_root();
	char *tree = xasprintf("%s/" TREE_NAME, root);
	struct sbuf out = SBUF_INIT;
	if (run_quiet(tree, &out, "git", "rev-parse", "-q", "--verify", "refs/heads/" BRANCH, NULL))
		die_code(EXIT_NOINPUT, "no branch '" BRANCH "' in '%s': run 'crashlab kernel tree' first", tree);
	struct strvec names = STRVEC_INIT, commits = STRVEC_INIT;
	size_t nseries;
	series_names(kdir, &names, &nseries);
	if (run_quiet(tree, &out, "git", "rev-list", "--reverse", "base.." BRANCH, NULL))
		die_code(EXIT_BUILD, "git rev-list failed: %s", out.buf);
	for (char *s = out.buf, *save = NULL, *t; (t = strtok_r(s, "\n", &save)); s = NULL)
		strvec_push(&commits, t);
	size_t nindep = names.n - nseries;
	if (commits.n < nindep + 1)
		die_code(EXIT_DATAERR, "branch '" BRANCH "' has %zu commits, kernel/series lists %zu independent patches after the series",
			 commits.n, nindep);
	size_t nbarrier = commits.n - nindep;
	char *tmp = cmd_tmpdir("export");
	/* format-patch takes the cover letter from the description of the
	 * branch it exports: a branch at the series' last patch, carrying the
	 * description of 'series' */
	char *desc = NULL;
	if (run_quiet(tree, &out, "git", "config", "branch." BRANCH ".description", NULL) == 0)
		desc = xstrdup(out.buf);
	else
		warning("branch '" BRANCH "' has no description: the cover letter says SUBJECT HERE "
			"('git branch --edit-description " BRANCH "' in '%s')", tree);
	if (run_quiet(tree, &out, "git", "branch", "-f", "crashlab-export", commits.v[nbarrier - 1], NULL) ||
	    (desc && run_quiet(tree, &out, "git", "config", "branch.crashlab-export.description", desc, NULL)))
		die_code(EXIT_BUILD, "git branch failed in '%s': %s", tree, out.buf);
	int rc = run_quiet(tree, &out, "git", "-c", "core.abbrev=12", "format-patch", "-q", "--no-signature", "--zero-commit", "--cover-letter",
			   "--cover-from-description=subject", "-o", tmp, "base..crashlab-export", NULL);
	struct sbuf ignore = SBUF_INIT;
	run_quiet(tree, &ignore, "git", "branch", "-D", "crashlab-export", NULL);
	sbuf_free(&ignore);
	free(desc);
	if (rc)
		die_code(EXIT_BUILD, "git format-patch failed: %s", out.buf);
	for (size_t i = nbarrier; i < commits.n; i++) {
		char *one = xasprintf("%s^..%s", commits.v[i], commits.v[i]);
		char *num = xasprintf("%zu", i + 1);
		if (run_quiet(tree, &out, "git", "-c", "core.abbrev=12", "format-patch", "-q", "--no-signature", "--zero-commit",
			      "--start-number", num, "-o", tmp, one, NULL))
			die_code(EXIT_BUILD, "git format-patch failed: %s", out.buf);
		free(one);
		free(num);
	}
	/* the new names, in order, and into kernel/ */
	struct strvec made = STRVEC_INIT;
	if (run_quiet(tmp, &out, "sh", "-c", "ls -1 [0-9][0-9][0-9][0-9]-*.patch", NULL))
		die_code(EXIT_SOFTWARE, "format-patch wrote nothing into '%s'", tmp);
	for (char *s = out.buf, *save = NULL, *t; (t = strtok_r(s, "\n", &save)); s = NULL)
		strvec_push(&made, t);
	if (made.n >= 2) {
		char *c = xasprintf("%s/%s", tmp, made.v[0]);
		char *l = xasprintf("%s/%s", tmp, made.v[nbarrier]);
		cover_date(c, l);
		free(c);
		free(l);
	}
	int renamed = 0;
	for (size_t i = 0; i < made.n; i++) {
		char *from = xasprintf("%s/%s", tmp, made.v[i]);
		char *to = xasprintf("%s/%s", kdir, made.v[i]);
		struct sbuf data = SBUF_INIT;
		if (read_file(from, &data) < 0 || write_file_atomic(to, data.buf, data.len) < 0)
			die_code(exit_for_errno(errno), "cannot write '%s': %s", to, errno_advice(errno));
		if (i > 0 && (i - 1 >= names.n || strcmp(names.v[i - 1], made.v[i])))
			renamed++;
		sbuf_free(&data);
		free(from);
		free(to);
	}
	note("wrote %zu patches and the cover letter into '%s'", made.n - 1, kdir);
	if (renamed || made.n - 1 != names.n)
		warning("the exported names differ from '%s/series' (%zu listed, %zu exported): "
			"update the series file and remove the old files", kdir, names.n, made.n - 1);
	rm_rf(tmp);
	free(tmp);
	strvec_free(&made);
	strvec_free(&names);
	strvec_free(&commits);
	sbuf_free(&out);
	free(tree);
	free(root);
	return renamed ? EXIT_FINDING : 0;
}

/* --- check --- */

struct row {
	const char *name;
	const char *applies;   /* "ok", "FAIL", "-" */
	char build[48];
	char refs[32];
	char kdoc[32];
	char rst[32];
	char cp[48];
	bool failed;
};

static int count_lines(const char *text, const char *needle)
{
	int n = 0;
	for (const char *p = text; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

/* scripts/kernel-doc -none -Wall over files (in dir); its warning count. */
static int kdoc_warnings(const char *dir, const struct strvec *files)
{
	if (!files->n)
		return 0;
	struct strvec argv = STRVEC_INIT;
	struct sbuf out = SBUF_INIT;
	strvec_pushl(&argv, "perl", "scripts/kernel-doc", "-none", "-Wall", NULL);
	for (size_t i = 0; i < files->n; i++)
		strvec_push(&argv, files->v[i]);
	run_cmd_in(dir, &argv, &out, -1);
	int n = count_lines(out.buf ? out.buf : "", "warning:");
	strvec_free(&argv);
	sbuf_free(&out);
	return n;
}

/* docutils' warnings and errors (level 2 and up) over .rst files (in dir):
 * what Sphinx would also report, short of its own directives. */
static int rst_warnings(const char *dir, const struct strvec *files)
{
	int n = 0;
	struct sbuf out = SBUF_INIT;
	for (size_t i = 0; i < files->n; i++) {
		run_quiet(dir, &out, "rst2pseudoxml", "--report=2", "--halt=5", "--no-file-insertion",
			  files->v[i], "/dev/null", NULL);
		n += count_lines(out.buf ? out.buf : "", "/2) ") + count_lines(out.buf ? out.buf : "", "/3) ") +
		     count_lines(out.buf ? out.buf : "", "/4) ");
	}
	sbuf_free(&out);
	return n;
}

/* The files HEAD changed in dir that kernel-doc, docutils and the build look at. */
static void touched(const char *dir, struct strvec *kdoc, struct strvec *objs, struct strvec *rst)
{
	struct sbuf out = SBUF_INIT;
	run_quiet(dir, &out, "git", "diff", "--name-only", "--diff-filter=AM", "HEAD~1", "HEAD", NULL);
	for (char *s = out.buf, *save = NULL, *t; (t = strtok_r(s, "\n", &save)); s = NULL) {
		size_t len = strlen(t);
		if (!strncmp(t, "Documentation/", 14) && len > 4 && !strcmp(t + len - 4, ".rst"))
			strvec_push(rst, t);
		if (!strncmp(t, "tools/", 6) || !strncmp(t, "Documentation/", 14) || !strncmp(t, "scripts/", 8))
			continue;
		if (len > 2 && (!strcmp(t + len - 2, ".c") || !strcmp(t + len - 2, ".h")))
			strvec_push(kdoc, t);
		if (len > 2 && !strcmp(t + len - 2, ".c"))
			strvec_pushf(objs, "%.*so", (int)(len - 1), t);
	}
	sbuf_free(&out);
}

/* Lines of documentation-file-ref-check's output, sorted, for a diff with the base's. */
static void ref_check(const char *dir, struct sbuf *out)
{
	run_quiet(dir, out, "sh", "-c", "perl scripts/documentation-file-ref-check 2>&1 | sort", NULL);
}

static int new_lines(const char *base, const char *now, struct sbuf *first)
{
	int n = 0;
	for (const char *line = now; line && *line;) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		char *l = xstrndup(line, len);
		bool found = false;
		for (const char *p = base; p && (p = strstr(p, l)); p += len)
			if ((p == base || p[-1] == '\n') && (p[len] == '\n' || p[len] == '\0')) {
				found = true;
				break;
			}
		if (!found && len) {
			if (!n && first)
				sbuf_add(first, line, len);
			n++;
		}
		free(l);
		line = nl ? nl + 1 : NULL;
	}
	return n;
}

/* checkpatch --strict of one patch: "E/W/C" counts, and how many of its
 * findings' types the cover letter does not name. */
static void checkpatch(const char *dir, const char *patch, const char *cover, struct row *r, struct sbuf *detail)
{
	struct sbuf out = SBUF_INIT;
	run_quiet(dir, &out, "perl", "scripts/checkpatch.pl", "--strict", "--terse", "--show-types", "--no-summary",
		  patch, NULL);
	int ne = 0, nw = 0, nc = 0, unexplained = 0;
	for (char *s = out.buf, *save = NULL, *t; (t = strtok_r(s, "\n", &save)); s = NULL) {
		char *kind = strstr(t, ": ERROR:");
		int *counter = &ne;
		if (!kind && (kind = strstr(t, ": WARNING:")))
			counter = &nw;
		else if (!kind && (kind = strstr(t, ": CHECK:")))
			counter = &nc;
		if (!kind)
			continue;
		(*counter)++;
		char *type = strchr(kind + 2, ':') + 1;
		size_t tl = strcspn(type, ":");
		char *name = xstrndup(type, tl);
		if (counter == &ne || !cover || !strstr(cover, name)) {
			unexplained++;
			sbuf_addf(detail, "    %s\n", t);
		}
		free(name);
	}
	snprintf(r->cp, sizeof(r->cp), "%dE %dW %dC%s", ne, nw, nc, unexplained ? " (unexplained)" : "");
	if (unexplained)
		r->failed = true;
	sbuf_free(&out);
}

/* A column that compares a warning count with the same files' at base:
 * "N new" (and true) when there are more now, else "ok", or "-" when the
 * patch touches no such file. */
static bool versus_base(char *cell, size_t size, int now, int base, bool any)
{
	if (now > base) {
		snprintf(cell, size, "%d new", now - base);
		return true;
	}
	snprintf(cell, size, "%s", any ? "ok" : "-");
	return false;
}

/* Copies of files as they are at base, under bt; their paths into out. */
static void at_base(const char *check, const char *bt, const struct strvec *files, struct strvec *out)
{
	struct sbuf data = SBUF_INIT;
	for (size_t k = 0; k < files->n; k++) {
		char *spec = xasprintf("base:%s", files->v[k]);
		if (run_quiet(check, &data, "git", "show", spec, NULL) == 0) {
			char *dst = xasprintf("%s/%s", bt, files->v[k]);
			char *slash = strrchr(dst, '/');
			*slash = '\0';
			mkdir_p(dst, 0755);
			*slash = '/';
			write_file_atomic(dst, data.buf, data.len);
			strvec_push(out, dst);
			free(dst);
		}
		free(spec);
	}
	sbuf_free(&data);
}

static int make_in(const char *check, const char *build, int jobs, const struct strvec *targets, struct sbuf *out,
		   const char *config)
{
	struct strvec argv = STRVEC_INIT;
	strvec_pushl(&argv, "make", "-s", NULL);
	strvec_pushf(&argv, "-j%d", jobs);
	strvec_pushf(&argv, "O=%s", build);
	strvec_push(&argv, "ARCH=x86_64");
	char *cc = find_program("ccache");
	if (cc) {
		/* the cache the guest kernel's builds use; the tree's paths
		 * hashed relative, so the next check of the same worktree hits */
		struct errbuf ignore;
		char *dir = cache_subdir("ccache", &ignore);
		if (dir)
			setenv("CCACHE_DIR", dir, 1);
		setenv("CCACHE_BASEDIR", check, 1);
		setenv("CCACHE_NOHASHDIR", "1", 1);
		free(dir);
		strvec_push(&argv, "CC=ccache gcc");
	}
	free(cc);
	if (config)
		strvec_pushf(&argv, "KCONFIG_ALLCONFIG=%s", config);
	for (size_t i = 0; i < targets->n; i++)
		strvec_push(&argv, targets->v[i]);
	sbuf_reset(out);
	int rc = run_cmd_in(check, &argv, out, -1);
	strvec_free(&argv);
	return rc;
}

int kernel_check_cmd(const struct kbuild_opts *o, const char *build_mode, bool selftests, struct cmd_ctx *ctx)
{
	git_identity();
	/* checkpatch's SPDX check runs "python3" from PATH and needs Debian's
	 * python3-ply: let the system's interpreter come first */
	const char *path = getenv("PATH");
	char *syspath = xasprintf("/usr/bin:%s", path ? path : "/bin");
	setenv("PATH", syspath, 1);
	free(syspath);
	bool full = !strcmp(build_mode, "full"), none = !strcmp(build_mode, "none");
	if (!full && !none && strcmp(build_mode, "touched"))
		usage_error(ctx->name, "--build takes full, touched or none, not '%s'", build_mode);
	const char *kdir = kernel_dir(o);
	char *config = o->config ? xstrdup(o->config) : xasprintf("%s/crashlab.config", kdir);
	int jobs = o->jobs > 0 ? o->jobs : (int)sysconf(_SC_NPROCESSORS_ONLN);
	char *tree = tree_base();
	char *root = git_root();
	char *check = xasprintf("%s/check", root);
	char *build = xasprintf("%s/check-build", root);
	struct sbuf out = SBUF_INIT, base_refs = SBUF_INIT, now_refs = SBUF_INIT, details = SBUF_INIT;
	struct strvec names = STRVEC_INIT;
	size_t nseries;
	series_names(kdir, &names, &nseries);
	char *cover = NULL;
	{
		struct sbuf c = SBUF_INIT;
		char *p = xasprintf("%s/" COVER, kdir);
		if (read_file(p, &c) == 0)
			cover = sbuf_detach(&c);
		sbuf_free(&c);
		free(p);
	}

	/* a worktree at base, clean */
	if (!is_dir(check)) {
		run_quiet(tree, &out, "git", "worktree", "prune", NULL);
		if (run_quiet(tree, &out, "git", "worktree", "add", "-q", "--detach", check, "base", NULL))
			die_code(EXIT_BUILD, "git worktree add failed: %s", out.buf);
	} else {
		run_quiet(check, &out, "git", "am", "--abort", NULL); /* a check that was interrupted */
	}
	if (run_quiet(check, &out, "git", "checkout", "-q", "-f", "--detach", "base", NULL) ||
	    run_quiet(check, &out, "git", "clean", "-qfdx", NULL))
		die_code(EXIT_BUILD, "cannot reset '%s' to base: %s", check, out.buf);
	if (mkdir_p(build, 0755) < 0)
		die_code(exit_for_errno(errno), "cannot create '%s': %s", build, errno_advice(errno));
	ref_check(check, &base_refs);
	if (!none) {
		struct strvec t = STRVEC_INIT;
		strvec_push(&t, "allnoconfig");
		note("configuring '%s' from '%s'", build, config);
		if (make_in(check, build, jobs, &t, &out, config))
			die_code(EXIT_BUILD, "make allnoconfig failed: %s", out.buf);
		strvec_free(&t);
	}

	struct row *rows = xcalloc(names.n, sizeof(*rows));
	bool stop = false;
	int bad = 0;
	for (size_t i = 0; i < names.n; i++) {
		struct row *r = &rows[i];
		r->name = names.v[i];
		r->applies = "-";
		strcpy(r->build, "-");
		strcpy(r->refs, "-");
		strcpy(r->kdoc, "-");
		strcpy(r->rst, "-");
		strcpy(r->cp, "-");
		char *patch = xasprintf("%s/%s", kdir, names.v[i]);
		checkpatch(check, patch, cover, r, &details);
		if (stop) {
			free(patch);
			bad += r->failed;
			continue;
		}
		note("[%zu/%zu] %s", i + 1, names.n, names.v[i]);
		if (run_quiet(check, &out, "git", "am", "-q", "--committer-date-is-author-date", patch, NULL)) {
			r->applies = "FAIL";
			r->failed = stop = true;
			sbuf_addf(&details, "  %s does not apply: %.*s\n", names.v[i], (int)strcspn(out.buf, "\n"), out.buf);
			run_quiet(check, &out, "git", "am", "--abort", NULL);
			free(patch);
			bad++;
			continue;
		}
		free(patch);
		r->applies = "ok";
		struct strvec kdoc = STRVEC_INIT, objs = STRVEC_INIT, rst = STRVEC_INIT;
		touched(check, &kdoc, &objs, &rst);
		if (!none) {
			struct strvec t = STRVEC_INIT;
			strvec_push(&t, "olddefconfig");
			int rc = make_in(check, build, jobs, &t, &out, NULL);
			strvec_free(&t);
			double t0 = now_s();
			if (!rc) {
				if (full)
					strvec_push(&t, "bzImage");
				else
					for (size_t k = 0; k < objs.n; k++)
						strvec_push(&t, objs.v[k]);
				rc = t.n ? make_in(check, build, jobs, &t, &out, NULL) : 0;
			}
			int warns = count_lines(out.buf ? out.buf : "", "warning:");
			if (!full && !t.n)
				snprintf(r->build, sizeof(r->build), "nothing");
			else
				snprintf(r->build, sizeof(r->build), "%s %.0fs %dW", rc ? "FAIL" : "ok", now_s() - t0, warns);
			if (rc || warns) {
				r->failed = true;
				sbuf_addf(&details, "  %s, build:\n%s\n", names.v[i], out.buf ? out.buf : "");
			}
			strvec_free(&t);
		}
		ref_check(check, &now_refs);
		struct sbuf first = SBUF_INIT;
		int nr = new_lines(base_refs.buf ? base_refs.buf : "", now_refs.buf ? now_refs.buf : "", &first);
		snprintf(r->refs, sizeof(r->refs), nr ? "%d new" : "ok", nr);
		if (nr) {
			r->failed = true;
			sbuf_addf(&details, "  %s, broken reference: %s\n", names.v[i], first.buf);
		}
		sbuf_free(&first);
		/* kernel-doc and docutils: warnings on the touched files now,
		 * against the same files at base */
		char *bt = xasprintf("%s/check-base", root);
		struct strvec bk = STRVEC_INIT, br = STRVEC_INIT;
		at_base(check, bt, &kdoc, &bk);
		at_base(check, bt, &rst, &br);
		int now_w = kdoc_warnings(check, &kdoc), base_w = kdoc_warnings(check, &bk);
		int now_r = rst_warnings(check, &rst), base_r = rst_warnings(check, &br);
		strvec_free(&bk);
		strvec_free(&br);
		rm_rf(bt);
		free(bt);
		if (versus_base(r->rst, sizeof(r->rst), now_r, base_r, rst.n > 0))
			sbuf_addf(&details, "  %s: docutils reports %d problems in its .rst files, %d at base\n", names.v[i],
				  now_r, base_r);
		if (versus_base(r->kdoc, sizeof(r->kdoc), now_w, base_w, kdoc.n > 0))
			sbuf_addf(&details, "  %s: kernel-doc -Wall gives %d warnings on its files, %d at base\n", names.v[i],
				  now_w, base_w);
		if (now_r > base_r || now_w > base_w)
			r->failed = true;
		strvec_free(&rst);
		strvec_free(&kdoc);
		strvec_free(&objs);
		bad += r->failed;
	}

	/* the selftests, on the kernel of the whole series */
	char st[256] = "not run";
	int st_failed = 0;
	if (selftests && !stop) {
		note("the selftests ('crashlab kernel test')");
		struct strvec argv = STRVEC_INIT;
		char self[4096];
		ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
		self[len > 0 ? len : 0] = '\0';
		strvec_pushl(&argv, self, "kernel", "test", NULL);
		if (o->patches)
			strvec_pushl(&argv, "--patches", o->patches, NULL);
		if (ctx->accel)
			strvec_pushl(&argv, "--accel", ctx->accel, NULL);
		int rc = run_cmd(&argv, &out, -1);
		strvec_free(&argv);
		int pass = 0, fail = 0, skip = 0, runs = 0;
		for (const char *p = out.buf ? out.buf : ""; (p = strstr(p, "# Totals: pass:")); p++) {
			int a, b, c;
			if (sscanf(p, "# Totals: pass:%d fail:%d xfail:%*d xpass:%*d skip:%d", &a, &b, &c) == 3)
				pass += a, fail += b, skip += c, runs++;
		}
		snprintf(st, sizeof(st), "%s: %d passed, %d failed, %d skipped in %d runs", rc ? "FAIL" : "ok", pass, fail,
			 skip, runs);
		if (rc || fail || !runs) {
			st_failed = 1;
			sbuf_addf(&details, "  selftests:\n%s\n", out.buf ? out.buf : "");
		}
	}

	printf("%-62s %-7s %-16s %-8s %-10s %-8s %s\n", "patch", "applies", "build", "refs", "kernel-doc", "rst",
	       "checkpatch --strict");
	for (size_t i = 0; i < names.n; i++)
		printf("%-62.62s %-7s %-16s %-8s %-10s %-8s %s\n", rows[i].name, rows[i].applies, rows[i].build,
		       rows[i].refs, rows[i].kdoc, rows[i].rst, rows[i].cp);
	printf("selftests: %s\n", st);
	printf("build: %s (%s); refs: new broken Documentation references "
	       "(documentation-file-ref-check) against base; kernel-doc: new -Wall warnings in the touched files; "
	       "rst: new docutils warnings in the touched .rst files; "
	       "checkpatch: errors, warnings, checks, each warning or check type to be named in " COVER "\n",
	       full ? "bzImage at every patch" : none ? "not built" : "the objects of the touched .c files",
	       "ccache");
	if (details.len)
		fprintf(stderr, "details:\n%s", details.buf);
	free(rows);
	free(cover);
	free(config);
	free(tree);
	free(root);
	free(check);
	free(build);
	strvec_free(&names);
	sbuf_free(&out);
	sbuf_free(&base_refs);
	sbuf_free(&now_refs);
	sbuf_free(&details);
	return bad || st_failed ? EXIT_FINDING : 0;
}
