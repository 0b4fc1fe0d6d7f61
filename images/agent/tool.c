/*
 * tool.c - the agent binary run by hand inside a guest (not as PID 1):
 *   crashlab-agent run-ops MOUNTDIR FILE.wl [--fbarrier NR] [--fdatabarrier NR]
 *   crashlab-agent tree DIR
 *
 * Method. run-ops parses the whole workload first (a parse error is
 * printed and nothing runs: exit 2), then runs every op, [setup] and
 * [run] alike, in file order and prints one line per op as it returns,
 * flushed, so a reader sees progress: the canonical op text, ret, the
 * errno name (or 0), ino and ino2, tab-separated. A failing op is a line
 * like any other; exit status 0 means every op ran, 1 that the tool itself
 * could not work (the mount point or the file cannot be opened). tree
 * prints the observed tree (capture.c); exit 1 if any part of it could
 * not be read, after printing the rest.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"

static const char usage[] =
	"usage: crashlab-agent run-ops MOUNTDIR FILE.wl [--fbarrier NR] [--fdatabarrier NR]\n"
	"   or: crashlab-agent tree DIR\n"
	"\n"
	"run-ops  run every op of the workload against the file system mounted at\n"
	"         MOUNTDIR; print per op: op, ret, errno, ino, ino2 (tab-separated)\n"
	"tree     print the observed tree of DIR, one node per line\n"
	"\n"
	"--fbarrier NR, --fdatabarrier NR: the barrier calls' syscall numbers;\n"
	"without them those ops fail with ENOSYS\n";

static int usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, "crashlab-agent: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\n%s", usage);
	return 2;
}

static const char *errno_name(int e)
{
	static const struct { int e; const char *name; } names[] = {
		{ EPERM, "EPERM" }, { ENOENT, "ENOENT" }, { ESRCH, "ESRCH" }, { EINTR, "EINTR" },
		{ EIO, "EIO" }, { ENXIO, "ENXIO" }, { E2BIG, "E2BIG" }, { ENOEXEC, "ENOEXEC" },
		{ EBADF, "EBADF" }, { ECHILD, "ECHILD" }, { EAGAIN, "EAGAIN" }, { ENOMEM, "ENOMEM" },
		{ EACCES, "EACCES" }, { EFAULT, "EFAULT" }, { EBUSY, "EBUSY" }, { EEXIST, "EEXIST" },
		{ EXDEV, "EXDEV" }, { ENODEV, "ENODEV" }, { ENOTDIR, "ENOTDIR" }, { EISDIR, "EISDIR" },
		{ EINVAL, "EINVAL" }, { ENFILE, "ENFILE" }, { EMFILE, "EMFILE" }, { ENOTTY, "ENOTTY" },
		{ ETXTBSY, "ETXTBSY" }, { EFBIG, "EFBIG" }, { ENOSPC, "ENOSPC" }, { ESPIPE, "ESPIPE" },
		{ EROFS, "EROFS" }, { EMLINK, "EMLINK" }, { EPIPE, "EPIPE" }, { ERANGE, "ERANGE" },
		{ ENAMETOOLONG, "ENAMETOOLONG" }, { ENOSYS, "ENOSYS" }, { ENOTEMPTY, "ENOTEMPTY" },
		{ ELOOP, "ELOOP" }, { ENODATA, "ENODATA" }, { EOVERFLOW, "EOVERFLOW" },
		{ EOPNOTSUPP, "EOPNOTSUPP" }, { EDQUOT, "EDQUOT" }, { ESTALE, "ESTALE" },
		{ EUCLEAN, "EUCLEAN" },
	};
	static char buf[16];
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].e == e && e)
			return names[i].name;
	snprintf(buf, sizeof(buf), "E%d", e);
	return buf;
}

static char *read_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	size_t cap = 4096, len = 0;
	char *s = malloc(cap);
	while (s) {
		size_t n = fread(s + len, 1, cap - len - 1, f);
		len += n;
		if (n == 0)
			break;
		if (len + 1 == cap) {
			char *t = realloc(s, cap * 2);
			if (!t) {
				free(s);
				s = NULL;
				break;
			}
			s = t;
			cap *= 2;
		}
	}
	int bad = ferror(f);
	fclose(f);
	if (!s || bad) {
		free(s);
		errno = bad ? EIO : ENOMEM;
		return NULL;
	}
	s[len] = '\0';
	if (strlen(s) != len) {
		free(s);
		errno = EINVAL;
		return NULL;
	}
	return s;
}

static int parse_nr(const char *s, long *out)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < 0)
		return -1;
	*out = v;
	return 0;
}

static int run_ops(int argc, char **argv)
{
	const char *mnt = NULL, *file = NULL;
	long nr_fb = -1, nr_fdb = -1;
	for (int i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--fbarrier") || !strcmp(argv[i], "--fdatabarrier")) {
			long *dst = !strcmp(argv[i], "--fbarrier") ? &nr_fb : &nr_fdb;
			if (i + 1 >= argc)
				return usage_error("%s needs a syscall number", argv[i]);
			if (parse_nr(argv[i + 1], dst) < 0)
				return usage_error("bad syscall number '%s'", argv[i + 1]);
			i++;
		} else if (argv[i][0] == '-' && argv[i][1]) {
			return usage_error("unknown option '%s'", argv[i]);
		} else if (!mnt) {
			mnt = argv[i];
		} else if (!file) {
			file = argv[i];
		} else {
			return usage_error("unexpected argument '%s'", argv[i]);
		}
	}
	if (!mnt || !file)
		return usage_error("%s", "run-ops needs MOUNTDIR and FILE.wl");
	char *text = read_file(file);
	if (!text) {
		fprintf(stderr, "crashlab-agent: cannot read '%s': %s\n", file, strerror(errno));
		return 1;
	}
	struct wl_workload w;
	char err[512];
	int rc = wl_parse(file, text, &w, err, sizeof(err));
	free(text);
	if (rc < 0) {
		fprintf(stderr, "%s\n", err);
		return 2;
	}
	struct agent_ops *a = agent_ops_new(mnt, nr_fb, nr_fdb);
	if (!a) {
		fprintf(stderr, "crashlab-agent: cannot open mount point '%s': %s\n", mnt, strerror(errno));
		wl_free(&w);
		return 1;
	}
	size_t cap = 256;
	char *line = malloc(cap);
	for (size_t i = 0; i < w.n && line; i++) {
		struct agent_result r;
		agent_ops_exec(a, &w.ops[i], &r);
		int need = wl_format(&w.ops[i], line, cap);
		if ((size_t)need >= cap) {
			char *t = realloc(line, (size_t)need + 1);
			if (!t)
				break;
			line = t;
			cap = (size_t)need + 1;
			wl_format(&w.ops[i], line, cap);
		}
		printf("%s\t%ld\t%s\t%" PRIu64 "\t%" PRIu64 "\n", line, r.ret, r.err ? errno_name(r.err) : "0",
		       r.ino, r.ino2);
		fflush(stdout);
	}
	free(line);
	agent_ops_free(a);
	wl_free(&w);
	return 0;
}

int agent_tool_main(int argc, char **argv)
{
	if (argc < 2)
		return usage_error("%s", "which tool? run-ops or tree");
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		fputs(usage, stdout);
		return 0;
	}
	if (!strcmp(argv[1], "run-ops"))
		return run_ops(argc, argv);
	if (!strcmp(argv[1], "tree")) {
		if (argc != 3)
			return usage_error("%s", "tree needs exactly one DIR");
		if (agent_capture_tree(argv[2], stdout) < 0) {
			fprintf(stderr, "crashlab-agent: tree '%s': %s\n", argv[2], strerror(errno));
			return 1;
		}
		return 0;
	}
	return usage_error("unknown tool '%s'", argv[1]);
}
