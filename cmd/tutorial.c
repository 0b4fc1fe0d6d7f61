/*
 * tutorial.c - `crashlab tutorial`: the lessons in tutorials/, listed, or
 * one of them run and narrated. A lesson is a folder with a workload and a
 * README.md in a fixed shape (tutorials/README.md): "# Title", the question
 * it answers, "## Run it" (indented crashlab command lines), "## What to
 * notice" and "## Who promises what" (bullets). Running a lesson runs each
 * of its command lines as written, as a child crashlab (so what the lesson
 * shows is exactly what a user typing them sees), with the database and
 * guest options of this invocation added, then says what to look at in the
 * comparison view the runs printed and which document promises what.
 * `--check` parses every lesson and runs its workloads with `run --check`
 * (no guest): the suite's guard that the READMEs stay runnable.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "crashdb/crashdb.h"
#include "host/msg.h"
#include "host/sys.h"

static const char tutorial_usage[] =
	"usage: crashlab tutorial [NAME] [--check] [--db FILE]\n"
	"\n"
	"The lessons in tutorials/, each a small workload that shows one thing about\n"
	"what fsync, fdatasync, rename, links and barriers promise, and on which file\n"
	"systems the outcome differs.\n"
	"\n"
	"Without NAME: list the lessons. With NAME: print what the lesson is about,\n"
	"run each of its command lines (the README's 'Run it' section) one after the\n"
	"other as you would type them, then say what to notice in the comparison view\n"
	"they printed, and which document promises what. A run that ends with exit 1\n"
	"(a selected model reports a LOST) is part of a lesson, not a failure of it.\n"
	"\n"
	"--check parses the lesson (every lesson, without NAME) and its workloads\n"
	"without booting a guest.\n"
	"\n"
	"examples:\n"
	"  crashlab tutorial\n"
	"  crashlab tutorial seed\n"
	"  crashlab tutorial new-file --db lessons.db\n";

struct lesson {
	char *name, *dir, *readme;
	char *title;
	struct sbuf intro;
	struct strvec steps;      /* the command lines, as written */
	int *step_line;           /* their lines in the README */
	struct strvec notice, promises;
};

static void lesson_free(struct lesson *l)
{
	free(l->name);
	free(l->dir);
	free(l->readme);
	free(l->title);
	sbuf_free(&l->intro);
	strvec_free(&l->steps);
	free(l->step_line);
	strvec_free(&l->notice);
	strvec_free(&l->promises);
}

static char *tutorials_dir(void)
{
	return xasprintf("%s/tutorials", project_root());
}

/* A bullet list: "- " starts an item, indented lines continue it. */
static void add_bullet_line(struct strvec *v, const char *line)
{
	if (!strncmp(line, "- ", 2) || !strncmp(line, "* ", 2)) {
		strvec_push(v, line + 2);
		return;
	}
	const char *p = line;
	while (*p == ' ')
		p++;
	if (!*p || !v->n)
		return;
	char *joined = xasprintf("%s %s", v->v[v->n - 1], p);
	free(v->v[v->n - 1]);
	v->v[v->n - 1] = joined;
}

static int lesson_load(const char *name, struct lesson *l, struct errbuf *e)
{
	memset(l, 0, sizeof(*l));
	char *root = tutorials_dir();
	l->name = xstrdup(name);
	l->dir = xasprintf("%s/%s", root, name);
	l->readme = xasprintf("%s/README.md", l->dir);
	free(root);
	struct sbuf text = SBUF_INIT;
	if (read_file(l->readme, &text) < 0) {
		int err = errno;
		sbuf_free(&text);
		return errbuf_set(e, EXIT_NOINPUT, "no lesson '%s': cannot read %s: %s",
				  name, l->readme, strerror(err));
	}
	enum { S_INTRO, S_RUN, S_NOTICE, S_PROMISES, S_OTHER } sec = S_INTRO;
	int lineno = 0;
	bool blank_before = false;
	for (char *line = text.buf, *next; line && *line; line = next, lineno++) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		if (!*line) {
			blank_before = true;
			continue;
		}
		bool para = blank_before;
		blank_before = false;
		if (!strncmp(line, "# ", 2) && !l->title) {
			l->title = xstrdup(line + 2);
			continue;
		}
		if (!strncmp(line, "## ", 3)) {
			const char *h = line + 3;
			sec = !strcmp(h, "Run it")		 ? S_RUN
			      : !strcmp(h, "What to notice")	 ? S_NOTICE
			      : !strcmp(h, "Who promises what") ? S_PROMISES
								 : S_OTHER;
			continue;
		}
		switch (sec) {
		case S_INTRO:
			if (l->title) {
				/* a paragraph break where the README had an empty line */
				if (l->intro.len && para)
					sbuf_adds(&l->intro, "\n");
				sbuf_addf(&l->intro, "%s\n", line);
			}
			break;
		case S_RUN: {
			const char *p = line;
			while (*p == ' ')
				p++;
			if (p - line < 4 || !*p)
				break;
			if (strncmp(p, "./crashlab ", 11) && strncmp(p, "crashlab ", 9)) {
				sbuf_free(&text);
				return errbuf_set(e, EXIT_DATAERR, "%s:%d: a 'Run it' line must be a crashlab command, not '%s'",
						  l->readme, lineno + 1, p);
			}
			strvec_push(&l->steps, p);
			l->step_line = xrealloc(l->step_line, l->steps.n * sizeof(*l->step_line));
			l->step_line[l->steps.n - 1] = lineno + 1;
			break;
		}
		case S_NOTICE:
			add_bullet_line(&l->notice, line);
			break;
		case S_PROMISES:
			add_bullet_line(&l->promises, line);
			break;
		case S_OTHER:
			break;
		}
	}
	sbuf_free(&text);
	if (!l->title)
		return errbuf_set(e, EXIT_DATAERR, "%s:1: a lesson starts with a '# Title' line", l->readme);
	if (!l->steps.n)
		return errbuf_set(e, EXIT_DATAERR, "%s: no '## Run it' section with indented crashlab command lines",
				  l->readme);
	if (!l->notice.n)
		return errbuf_set(e, EXIT_DATAERR, "%s: no '## What to notice' bullets", l->readme);
	if (!l->promises.n)
		return errbuf_set(e, EXIT_DATAERR, "%s: no '## Who promises what' bullets", l->readme);
	return 0;
}

/* The lessons' names, sorted: every folder of tutorials/ with a README.md
 * that starts with a title line (a litmus collection such as barrier/ is a
 * reference, not a lesson: its README has no 'Run it' section). */
static void lesson_names(struct strvec *out)
{
	char *root = tutorials_dir();
	DIR *d = opendir(root);
	if (!d)
		die_code(EXIT_NOINPUT, "cannot list the lessons in %s: %s", root, strerror(errno));
	struct dirent *de;
	while ((de = readdir(d)))
		if (de->d_name[0] != '.') {
			char *readme = xasprintf("%s/%s/README.md", root, de->d_name);
			struct sbuf t = SBUF_INIT;
			if (read_file(readme, &t) == 0 && t.buf && strstr(t.buf, "\n## Run it\n"))
				strvec_push(out, de->d_name);
			sbuf_free(&t);
			free(readme);
		}
	closedir(d);
	free(root);
	strvec_sort(out);
}

/* The database path as the child must see it: it runs in the project root. */
static char *absolute_db(const struct cmd_ctx *ctx)
{
	const char *db = ctx->db_path ? ctx->db_path : CRASHDB_DEFAULT;
	if (db[0] == '/')
		return xstrdup(db);
	char cwd[PATH_MAX];
	if (!getcwd(cwd, sizeof(cwd)))
		die_code(EXIT_SOFTWARE, "cannot tell the current directory: %s", strerror(errno));
	return xasprintf("%s/%s", cwd, db);
}

/* One step: its words after "crashlab", this invocation's options added. */
static int step_argv(const struct lesson *l, size_t i, const struct cmd_ctx *ctx, bool check, const char *db,
		     struct strvec *av, struct errbuf *e)
{
	struct strvec words = STRVEC_INIT;
	strvec_split(&words, l->steps.v[i]);
	if (words.n < 2) {
		strvec_free(&words);
		return errbuf_set(e, EXIT_DATAERR, "%s:%d: '%s' names no crashlab command", l->readme, l->step_line[i],
				  l->steps.v[i]);
	}
	const struct command *c = command_find(words.v[1]);
	if (!c || !strcmp(words.v[1], "tutorial")) {
		int r = errbuf_set(e, EXIT_DATAERR, "%s:%d: '%s' is not a crashlab command a lesson can run", l->readme,
				   l->step_line[i], words.v[1]);
		strvec_free(&words);
		return r;
	}
	strvec_push(av, "/proc/self/exe");
	for (size_t k = 1; k < words.n; k++)
		strvec_push(av, words.v[k]);
	if (c->flags & CMD_DB) {
		strvec_push(av, "--db");
		strvec_push(av, db);
	}
	if (c->flags & CMD_GUEST) {
		if (ctx->kernel) {
			char *k = ctx->kernel[0] == '/' ? xstrdup(ctx->kernel) : realpath(ctx->kernel, NULL);
			strvec_push(av, "--kernel");
			strvec_push(av, k ? k : ctx->kernel);
			free(k);
		}
		if (ctx->accel) {
			strvec_push(av, "--accel");
			strvec_push(av, ctx->accel);
		}
	}
	for (int q = 0; q < ctx->quiet; q++)
		strvec_push(av, "-q");
	for (int v = 0; v < ctx->verbose; v++)
		strvec_push(av, "-v");
	if (check)
		strvec_push(av, "--check");
	strvec_free(&words);
	return 0;
}

/* Run argv in the project root; its exit status (128+N when killed by signal N). */
static int run_child(const struct strvec *av)
{
	fflush(stdout);
	fflush(stderr);
	pid_t pid = fork();
	if (pid < 0)
		die_code(EXIT_SOFTWARE, "cannot start a step: %s", strerror(errno));
	if (pid == 0) {
		if (chdir(project_root()) < 0) {
			fprintf(stderr, "crashlab: error: cannot enter %s: %s\n", project_root(), strerror(errno));
			_exit(EXIT_SOFTWARE);
		}
		char **argv = xcalloc(av->n + 1, sizeof(*argv));
		for (size_t i = 0; i < av->n; i++)
			argv[i] = av->v[i];
		execv(argv[0], argv);
		fprintf(stderr, "crashlab: error: cannot run myself again: %s\n", strerror(errno));
		_exit(EXIT_SOFTWARE);
	}
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			die_code(EXIT_SOFTWARE, "cannot wait for a step: %s", strerror(errno));
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void print_bullets(const struct strvec *v)
{
	for (size_t i = 0; i < v->n; i++)
		printf("  - %s\n", v->v[i]);
}

static void list_lessons(void)
{
	struct strvec names = STRVEC_INIT;
	lesson_names(&names);
	printf("%zu lessons in tutorials/:\n\n", names.n);
	for (size_t i = 0; i < names.n; i++) {
		struct lesson l;
		struct errbuf e = { 0 };
		if (lesson_load(names.v[i], &l, &e) < 0)
			printf("  %-18s (cannot be read: %s)\n", names.v[i], e.msg);
		else
			printf("  %-18s %s\n", names.v[i], l.title);
		lesson_free(&l);
	}
	printf("\nrun one, with what to look at in its output: crashlab tutorial NAME\n");
	strvec_free(&names);
}

/* --check: the lesson parses and every run line's workload passes `run --check`. */
static int check_lesson(const char *name, const struct cmd_ctx *ctx, const char *db)
{
	struct lesson l;
	struct errbuf e = { 0 };
	int rc = 0;
	if (lesson_load(name, &l, &e) < 0) {
		error("%s", e.msg);
		lesson_free(&l);
		return e.code ? e.code : EXIT_DATAERR;
	}
	for (size_t i = 0; i < l.steps.n && !rc; i++) {
		struct strvec av = STRVEC_INIT;
		if (step_argv(&l, i, ctx, true, db, &av, &e) < 0) {
			error("%s", e.msg);
			rc = e.code;
		} else if (!strcmp(av.v[1], "run")) {
			int r = run_child(&av);
			if (r) {
				error("%s:%d: '%s' does not pass 'run --check' (exit %d)", l.readme, l.step_line[i],
				      l.steps.v[i], r);
				rc = r;
			}
		}
		strvec_free(&av);
	}
	if (!rc)
		printf("ok  %-18s %zu steps, %zu things to notice\n", name, l.steps.n, l.notice.n);
	lesson_free(&l);
	return rc;
}

static int run_lesson(const char *name, const struct cmd_ctx *ctx, const char *db)
{
	struct lesson l;
	struct errbuf e = { 0 };
	if (lesson_load(name, &l, &e) < 0) {
		if (e.code == EXIT_NOINPUT) {
			struct strvec names = STRVEC_INIT;
			lesson_names(&names);
			const char **v = xcalloc(names.n + 1, sizeof(*v));
			for (size_t i = 0; i < names.n; i++)
				v[i] = names.v[i];
			const char *near = nearest_word(name, v);
			if (near)
				errbuf_set(&e, EXIT_NOINPUT, "no lesson '%s'; did you mean '%s'? ('crashlab tutorial' lists them)",
					   name, near);
			else
				errbuf_set(&e, EXIT_NOINPUT, "no lesson '%s' ('crashlab tutorial' lists them)", name);
			free(v);
			strvec_free(&names);
		}
		lesson_free(&l);
		die_err(&e);
	}
	printf("Lesson %s: %s\n\n%s\n", l.name, l.title, l.intro.buf ? l.intro.buf : "");
	int rc = 0;
	for (size_t i = 0; i < l.steps.n; i++) {
		struct strvec av = STRVEC_INIT;
		if (step_argv(&l, i, ctx, false, db, &av, &e) < 0) {
			strvec_free(&av);
			lesson_free(&l);
			die_err(&e);
		}
		printf("-- step %zu of %zu: %s\n\n", i + 1, l.steps.n, l.steps.v[i]);
		int r = run_child(&av);
		bool finding = r == EXIT_FINDING && !strcmp(av.v[1], "run");
		strvec_free(&av);
		if (finding)
			printf("\n(exit 1: a model the run judged by reports a LOST; that is part of this lesson)\n");
		else if (r) {
			error("step %zu of lesson %s failed (exit %d): %s", i + 1, l.name, r, l.steps.v[i]);
			rc = r;
			break;
		}
		printf("\n");
	}
	if (!rc) {
		printf("-- what to notice\n\n");
		print_bullets(&l.notice);
		printf("\n-- who promises what\n\n");
		print_bullets(&l.promises);
		printf("\nthe lesson, with its workload: tutorials/%s/\n", l.name);
	}
	lesson_free(&l);
	return rc;
}

int cmd_tutorial(int argc, char **argv, struct cmd_ctx *ctx)
{
	int check = 0;
	const struct opt opts[] = {
		{ OPT_BOOL, 0, "check", &check, NULL, "parse the lesson(s) and their workloads; run no guest" },
		{ OPT_END, 0, NULL, NULL, NULL, NULL },
	};
	int n = cmd_parse(ctx, argc, argv, opts, tutorial_usage, 0);
	if (n > 1)
		usage_error(ctx->name, "one lesson at a time, not %d ('crashlab tutorial' lists them)", n);
	char *db = absolute_db(ctx);
	int rc = 0;
	if (check) {
		struct strvec names = STRVEC_INIT;
		if (n)
			strvec_push(&names, argv[0]);
		else
			lesson_names(&names);
		if (!names.n)
			rc = error("no lessons in %s/tutorials", project_root()) ? EXIT_NOINPUT : 0;
		for (size_t i = 0; i < names.n; i++) {
			int r = check_lesson(names.v[i], ctx, db);
			if (r && !rc)
				rc = r;
		}
		strvec_free(&names);
	} else if (n)
		rc = run_lesson(argv[0], ctx, db);
	else
		list_lessons();
	free(db);
	return rc;
}
