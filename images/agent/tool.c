/*
 * tool.c - the agent binary run by hand inside a guest (not as PID 1):
 *   crashlab-agent run-ops MOUNTDIR FILE.wl [--fbarrier NR] [--fdatabarrier NR]
 *   crashlab-agent tree DIR
 *   crashlab-agent bench-barrier DIR N CALL NR_FB NR_FDB
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
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "images/agent/agent.h"

static const char usage[] =
	"usage: crashlab-agent run-ops MOUNTDIR FILE.wl [--fbarrier NR] [--fdatabarrier NR]\n"
	"   or: crashlab-agent tree DIR\n"
	"   or: crashlab-agent bench-barrier DIR N CALL NR_FB NR_FDB\n"
	"\n"
	"run-ops  run every op of the workload against the file system mounted at\n"
	"         MOUNTDIR; print per op: op, ret, errno, ino, ino2 (tab-separated)\n"
	"tree     print the observed tree of DIR, one node per line\n"
	"bench-barrier  N times: create DIR/t, write 4 KiB, CALL (fdatasync, fdatabarrier,\n"
	"         fsync, fbarrier; rename-barrier: none), close, rename t over f (with\n"
	"         RENAME_BARRIER for rename-barrier); then syncfs; print CALL, the total\n"
	"         milliseconds and those of the syncfs\n"
	"\n"
	"--fbarrier NR, --fdatabarrier NR: the barrier calls' syscall numbers;\n"
	"without them those ops fail with ENOSYS\n";

static int tool_usage(const char *fmt, const char *arg)
{
	fprintf(stderr, "crashlab-agent: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\n%s", usage);
	return 2;
}

/* "ENOENT", or "E<n>" for an errno glibc has no name for. */
static const char *errno_name(int e)
{
	static char buf[16];
	const char *n = strerrorname_np(e);
	if (n)
		return n;
	snprintf(buf, sizeof(buf), "E%d", e);
	return buf;
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
				return tool_usage("%s needs a syscall number", argv[i]);
			if (parse_nr(argv[i + 1], dst) < 0)
				return tool_usage("bad syscall number '%s'", argv[i + 1]);
			i++;
		} else if (argv[i][0] == '-' && argv[i][1]) {
			return tool_usage("unknown option '%s'", argv[i]);
		} else if (!mnt) {
			mnt = argv[i];
		} else if (!file) {
			file = argv[i];
		} else {
			return tool_usage("unexpected argument '%s'", argv[i]);
		}
	}
	if (!mnt || !file)
		return tool_usage("%s", "run-ops needs MOUNTDIR and FILE.wl");
	struct sbuf text = SBUF_INIT;
	if (read_file(file, &text) < 0) {
		fprintf(stderr, "crashlab-agent: cannot read '%s': %s\n", file, strerror(errno));
		return 1;
	}
	struct wl_workload w;
	struct errbuf err;
	int rc = wl_parse(file, text.buf, &w, &err);
	sbuf_free(&text);
	if (rc < 0) {
		fprintf(stderr, "%s\n", err.msg);
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
		struct op_result r;
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
		printf("%s\t%" PRId64 "\t%s\t%" PRIu64 "\t%" PRIu64 "\n", line, r.ret, r.err ? errno_name(r.err) : "0",
		       r.ino, r.ino2);
		fflush(stdout);
	}
	free(line);
	agent_ops_free(a);
	wl_free(&w);
	return 0;
}

#define CL_RENAME_BARRIER (1 << 3) /* the series' renameat2 flag */

/* The pattern an application uses to replace a file atomically (a git
 * object, an editor's save, overlayfs' copy-up): create t, write 4 KiB,
 * make it durable or ordered with CALL, close, rename t over f - or, for
 * rename-barrier, no call and renameat2(RENAME_BARRIER). n iterations, then
 * syncfs(), timed together: a barrier that defers work to the next commit
 * pays for it there. Prints "CALL TOTAL_MS SYNCFS_MS". */
static int bench_barrier(int argc, char **argv)
{
	if (argc != 7)
		return tool_usage("%s", "bench-barrier needs DIR N CALL NR_FB NR_FDB");
	int n = atoi(argv[3]);
	const char *call = argv[4];
	long nr_fb = atol(argv[5]), nr_fdb = atol(argv[6]);
	if (n <= 0)
		return tool_usage("bad iteration count '%s'", argv[3]);
	static const char *const calls[] = { "fdatasync", "fdatabarrier", "fsync", "fbarrier", "rename-barrier", NULL };
	int known = 0;
	for (int i = 0; calls[i]; i++)
		known |= !strcmp(call, calls[i]);
	if (!known)
		return tool_usage("unknown call '%s'", call);
	int dir = open(argv[2], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0 || fchdir(dir) < 0) {
		fprintf(stderr, "crashlab-agent: cannot enter '%s': %s\n", argv[2], strerror(errno));
		return 1;
	}
	static char buf[4096];
	memset(buf, 'b', sizeof(buf));
	struct timespec t0, t1, t2;
	/* one untimed round first, then a clean start: f exists, nothing dirty */
	for (int i = -1; i < n; i++) {
		if (i == 0) {
			if (syncfs(dir) < 0) {
				fprintf(stderr, "crashlab-agent: syncfs: %s\n", strerror(errno));
				return 1;
			}
			clock_gettime(CLOCK_MONOTONIC, &t0);
		}
		int fd = open("t", O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0644);
		if (fd < 0 || pwrite(fd, buf, sizeof(buf), 0) != (ssize_t)sizeof(buf)) {
			fprintf(stderr, "crashlab-agent: write: %s\n", strerror(errno));
			return 1;
		}
		long r = 0;
		if (!strcmp(call, "fdatasync"))
			r = fdatasync(fd);
		else if (!strcmp(call, "fsync"))
			r = fsync(fd);
		else if (!strcmp(call, "fdatabarrier"))
			r = nr_fdb < 0 ? (errno = ENOSYS, -1) : syscall(nr_fdb, fd, 0);
		else if (!strcmp(call, "fbarrier"))
			r = nr_fb < 0 ? (errno = ENOSYS, -1) : syscall(nr_fb, fd, 0);
		if (r < 0) {
			fprintf(stderr, "crashlab-agent: %s: %s\n", call, strerror(errno));
			return 1;
		}
		close(fd);
		if (!strcmp(call, "rename-barrier"))
			r = syscall(SYS_renameat2, AT_FDCWD, "t", AT_FDCWD, "f", CL_RENAME_BARRIER);
		else
			r = rename("t", "f");
		if (r < 0) {
			fprintf(stderr, "crashlab-agent: rename: %s\n", strerror(errno));
			return 1;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (syncfs(dir) < 0) {
		fprintf(stderr, "crashlab-agent: syncfs: %s\n", strerror(errno));
		return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &t2);
	close(dir);
	double all = (double)(t2.tv_sec - t0.tv_sec) * 1e3 + (double)(t2.tv_nsec - t0.tv_nsec) / 1e6;
	double sfs = (double)(t2.tv_sec - t1.tv_sec) * 1e3 + (double)(t2.tv_nsec - t1.tv_nsec) / 1e6;
	printf("%s %.3f %.3f\n", call, all, sfs);
	return 0;
}

int agent_tool_main(int argc, char **argv)
{
	if (argc < 2)
		return tool_usage("%s", "which tool? run-ops or tree");
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		fputs(usage, stdout);
		return 0;
	}
	if (!strcmp(argv[1], "run-ops"))
		return run_ops(argc, argv);
	if (!strcmp(argv[1], "bench-barrier"))
		return bench_barrier(argc, argv);
	if (!strcmp(argv[1], "tree")) {
		if (argc != 3)
			return tool_usage("%s", "tree needs exactly one DIR");
		if (agent_capture_tree(argv[2], stdout) < 0) {
			fprintf(stderr, "crashlab-agent: tree '%s': %s\n", argv[2], strerror(errno));
			return 1;
		}
		return 0;
	}
	return tool_usage("unknown tool '%s'", argv[1]);
}
