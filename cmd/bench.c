/*
 * bench.c - `crashlab bench`: measurements of the lab itself. A benchmark
 * measures and prints; it never passes or fails on a time.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <errno.h>

#include "cmd/cmd.h"
#include "core/fs.h"
#include "engine/guest.h"
#include "engine/pool.h"
#include "engine/runner.h"
#include "host/msg.h"
#include "host/sys.h"
#include "images/basedisk.h"

int cmd_bench_suite(int argc, char **argv, struct cmd_ctx *ctx, const char *usage);

static const char bench_usage[] =
	"usage: crashlab bench boot [-n N] [--accel auto|kvm|tcg]\n"
	"       crashlab bench check [--fs LIST] [--crash MODE] [WORKLOAD.wl]\n"
	"       crashlab bench barrier [-n N] [--delay MS,...] [--fs LIST]\n"
	"       crashlab bench suite [--seq 1|2|3 | --from DIR] [--fs LIST] [-j N] [--sample N] [--classic N]\n"
	"       crashlab bench pool [--fs LIST] [--slots N] [--out DIR] [--no-classic]\n"
	"                           WORKLOAD.wl...\n"
	"\n"
	"boot   boot the guest N times (default 5) and print the median time from\n"
	"       starting QEMU to the agent's hello, with min and max, and which\n"
	"       accelerator was used.\n"
	"check  run a workload (default: the seed example, --crash write, so there\n"
	"       are many states) and print per file system the median time per crash\n"
	"       state split into mount (with recovery and unmount), capture, fsck and\n"
	"       everything else (replay, snapshot, transport), and the ratio of\n"
	"       everything else to mount + fsck. Uses a throw-away database.\n"
	"barrier  what a user pays for durability and what the barrier calls save:\n"
	"       the atomic replace applications do (git objects, an editor's save,\n"
	"       overlayfs' copy-up) - create a file, write 4 KiB, fsync | fbarrier |\n"
	"       fdatasync | fdatabarrier (or none, and rename with RENAME_BARRIER),\n"
	"       close, rename it over the old one - N times (default 50), then\n"
	"       syncfs, all timed, so a barrier that defers work to the next commit\n"
	"       pays for it. On each file system (--fs, default all four) over\n"
	"       dm-delay, whose cache flushes take each --delay (default 0,2,20 ms).\n"
	"       Prints operations per second and the barriers' speedups over the\n"
	"       durable calls. Needs the kernel series (the barrier calls).\n"
	"suite  the throughput of crashlab run on a generated suite (crashlab gen\n"
	"       --seq N, default 1; or the .wl files of --from DIR): the suite (or\n"
	"       --sample N of it, evenly spaced) as one batch with -j N workers, then\n"
	"       --classic N (default 4) of it run one at a time the way one workload\n"
	"       is run alone (a recording and a checker guest per fs, every state\n"
	"       checked: --no-dedup), side by side. Prints seconds per workload per\n"
	"       fs, crash states built and checked per second, the deduplication\n"
	"       ratio, the speedup over the old way, and the floor: mount with\n"
	"       recovery + fsck of every checked state.\n"
	"       --keep DIR keeps the suite, the databases and the run tables.\n"
	"pool   run each workload per file system (default ext4,xfs) through guests\n"
	"       that live across workloads (engine/pool.h), and through a guest per\n"
	"       recording and per check as a run does (unless --no-classic); print\n"
	"       the milliseconds per workload of each (recording, checking) and the\n"
	"       pool's boots. --out DIR writes per fs every state's spec, observed\n"
	"       tree hash, mount and fsck outcome and verdicts (classic-FS.txt,\n"
	"       pool-FS.txt) and the pool's counts (stats-FS.txt).\n";

/* Run sh -c script in the guest, collecting output; die on a guest failure. */
static int guest_script(struct vm *vm, const char *script, struct sbuf *out)
{
	char *argv[] = { "sh", "-c", (char *)script, NULL };
	int status = -1;
	sbuf_reset(out);
	enum vm_outcome o = vm_run(vm, argv, out, 0, &status);
	if (o != VM_OK)
		exit(cmd_guest_failed(vm, o));
	return status;
}

/* The calls bench barrier compares, in its columns' order: each durable
 * call beside the barrier that orders the same. */
static const char *const barrier_calls[] = { "fsync", "fbarrier", "fdatasync", "fdatabarrier", "rename-barrier" };
#define BARRIER_CALLS 5

/* "0,2,20" into at most max delays; the count, or -1. */
static int parse_delays(const char *list, int *out, int max)
{
	int n = 0;
	const char *p = list;
	while (*p) {
		char *end;
		long v = strtol(p, &end, 10);
		if (end == p || v < 0 || v > 10000 || (*end && *end != ',') || n == max)
			return -1;
		out[n++] = (int)v;
		p = *end ? end + 1 : end;
	}
	return n ? n : -1;
}

static int bench_barrier(int iterations, const char *delay_list, const char *fs_list, struct cmd_ctx *ctx)
{
	int delays[8];
	int nd = parse_delays(delay_list, delays, 8);
	if (nd < 0)
		usage_error(ctx->name, "--delay takes up to 8 comma-separated milliseconds (0-10000), not '%s'",
			    delay_list);
	struct strvec fss = STRVEC_INIT;
	cmd_fs_list(ctx, fs_list, &fss);
	long nr_fb, nr_fdb;
	struct vm_config cfg = { .mem_mb = 1024 };
	cmd_guest(ctx, &cfg);
	guest_barrier_syscalls(ctx->kernel, &nr_fb, &nr_fdb);
	if (nr_fb < 0 || nr_fdb < 0)
		die_code(EXIT_CONFIG, "this kernel has no fbarrier/fdatabarrier; build it with the series in kernel/");
	char *dir = cmd_tmpdir("bench");
	struct errbuf e;
	for (size_t i = 0; i < fss.n; i++)
		if (guest_add_fs_disk(&cfg, dir, fss.v[i], IMG_BASE_DEFAULT_SIZE, &e) < 0)
			die_err(&e);
	struct vm vm;
	int rc = cmd_vm_start(&vm, &cfg);
	if (rc)
		return rc;
	struct sbuf out = SBUF_INIT;
	printf("%-6s %6s %9s %9s %9s %9s %9s  %10s %10s\n", "fs", "flush", "fsync", "fbarrier", "fdatasync",
	       "fdatabarr", "rename-b", "fbarrier/", "fdatabarr/");
	printf("%-6s %6s %9s %9s %9s %9s %9s  %10s %10s\n", "", "delay", "ops/s", "ops/s", "ops/s", "ops/s", "ops/s",
	       "fsync", "fdatasync");
	for (size_t i = 0; i < fss.n && !rc; i++) {
		for (int d = 0; d < nd && !rc; d++) {
			double ops[BARRIER_CALLS] = { 0 };
			/* A disk whose cache flushes take delays[d] ms (dm-delay: reads
			 * and writes undelayed, flushes delayed). */
			char *setup = xasprintf(
				"export DM_DISABLE_UDEV=1; d=/dev/vd%c; n=$(blockdev --getsz $d) && "
				"dmsetup create --noudevsync slow --table \"0 $n delay $d 0 0 $d 0 0 $d 0 %d\" && "
				"mkdir -p /mnt/b && mount -t %s /dev/mapper/slow /mnt/b",
				(char)('a' + i), delays[d], fss.v[i]);
			if (guest_script(&vm, setup, &out) != 0) {
				error("%s: cannot set up the delayed disk: %.*s", fss.v[i], (int)strcspn(out.buf, "\n"),
				      out.buf);
				rc = EXIT_GUEST;
			}
			free(setup);
			for (int c = 0; c < BARRIER_CALLS && !rc; c++) {
				char *cmd = xasprintf("/init bench-barrier /mnt/b %d %s %ld %ld", iterations,
						      barrier_calls[c], nr_fb, nr_fdb);
				if (!msg_quiet())
					fprintf(stderr, "crashlab: %s, flush delay %d ms: %d x create, write, %s, rename; syncfs\n",
						fss.v[i], delays[d], iterations, barrier_calls[c]);
				double total = 0, sfs = 0;
				if (guest_script(&vm, cmd, &out) != 0 || sscanf(out.buf, "%*s %lf %lf", &total, &sfs) != 2 ||
				    total <= 0) {
					error("%s: %s: %.*s", fss.v[i], barrier_calls[c], (int)strcspn(out.buf, "\n"), out.buf);
					rc = EXIT_GUEST;
				} else {
					ops[c] = iterations / (total / 1000.0);
				}
				free(cmd);
			}
			guest_script(&vm, "umount /mnt/b; DM_DISABLE_UDEV=1 dmsetup remove --noudevsync slow", &out);
			if (!rc) {
				char dl[16];
				snprintf(dl, sizeof(dl), "%dms", delays[d]);
				printf("%-6s %6s %9.0f %9.0f %9.0f %9.0f %9.0f  %9.2fx %9.2fx\n", fss.v[i], dl, ops[0], ops[1],
				       ops[2], ops[3], ops[4], ops[1] / ops[0], ops[3] / ops[2]);
				fflush(stdout);
			}
		}
	}
	printf("operations per second of the atomic replace: create t, write 4 KiB, the call, close, rename t\n"
	       "over f (rename-b: no call, renameat2 with RENAME_BARRIER); %d of them, then syncfs, timed together;\n"
	       "the flush delay is dm-delay's on every cache flush; accelerator %s\n",
	       iterations, cfg.accel);
	vm_stop(&vm);
	vm_free(&vm);
	rm_rf(dir);
	free(dir);
	sbuf_free(&out);
	strvec_free(&fss);
	guest_config_free(&cfg);
	return rc;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double median(double *v, size_t n)
{
	if (!n)
		return 0;
	qsort(v, n, sizeof(double), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* A sink that keeps each state's times, per fs. */
struct times {
	double *v[5];          /* mount, capture, fsck, everything else, total */
	size_t n, cap;
};

static int keep_times(void *ctx, const struct fsrun *fr, struct state_result *st, struct errbuf *e)
{
	struct times *t = ctx;
	const struct check_report *c = &st->check;
	if (t->n == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 16;
		for (int k = 0; k < 5; k++)
			t->v[k] = xrealloc(t->v[k], t->cap * sizeof(double));
	}
	double other = c->ms_host - c->ms_mount - c->ms_capture - c->ms_fsck;
	t->v[0][t->n] = c->ms_mount;
	t->v[1][t->n] = c->ms_capture;
	t->v[2][t->n] = c->ms_fsck;
	t->v[3][t->n] = other;
	t->v[4][t->n] = c->ms_host;
	t->n++;
	(void)fr;
	(void)e;
	return 0;
}

static int bench_check(const char *fs_list, const char *crash, const char *file, struct cmd_ctx *ctx)
{
	enum crash_mode mode;
	if (crash_mode_parse(crash, &mode) < 0)
		usage_error(ctx->name, "unknown crash mode '%s'", crash);
	struct strvec fss = STRVEC_INIT;
	struct errbuf e;
	cmd_fs_list(ctx, fs_list, &fss);
	struct sbuf text = SBUF_INIT;
	struct wl_workload w;
	if (wl_load(file, &text, &w, &e) < 0)
		die_err(&e);
	char *dir = cmd_tmpdir("bench");
	struct vm_config guest = { .mem_mb = 1024 };
	cmd_guest(ctx, &guest);
	struct run_params params = { .w = &w, .guest = &guest, .backend = backend_qemu(), .size = IMG_BASE_DEFAULT_SIZE,
				     .mode = mode, .seed = 1, .workdir = dir, .dedup = 0 /* every state's own times */ };
	guest_barrier_syscalls(ctx->kernel, &params.nr_fbarrier, &params.nr_fdatabarrier);
	printf("%-7s %6s %9s %9s %9s %9s %9s  %s\n", "fs", "states", "mount", "capture", "fsck", "else",
	       "total", "else / (mount + fsck)");
	int rc = 0;
	for (size_t i = 0; i < fss.n; i++) {
		const char *fs = fss.v[i];
		struct times t = { 0 };
		struct sink sink = { .ctx = &t, .state = keep_times };
		struct fs_params fp = { .fs = fs };
		struct fs_summary sum;
		int r = runner_fs(&params, &fp, NULL, &sink, &sum, &e);
		if (r) {
			if (r > 0)
				error("%s: %s", fs, sum.error);
			rc = r < 0 ? e.code : r;
		} else {
			double m[5];
			for (int k = 0; k < 5; k++)
				m[k] = median(t.v[k], t.n);
			printf("%-7s %6zu %7.1fms %7.1fms %7.1fms %7.1fms %7.1fms  %.2f\n", fs, t.n, m[0], m[1], m[2], m[3],
			       m[4], m[0] + m[2] > 0 ? m[3] / (m[0] + m[2]) : 0);
		}
		for (int k = 0; k < 5; k++)
			free(t.v[k]);
	}
	printf("medians per crash state, accelerator %s\n", guest.accel);
	rm_rf(dir);
	free(dir);
	guest_config_free(&guest);
	strvec_free(&fss);
	wl_free(&w);
	sbuf_free(&text);
	return rc;
}

/* A sink that keeps, per workload, every state as one line and the times. */
struct pool_run {
	const char *name;      /* the workload, as it heads each line */
	struct sbuf *lines;
	double record_ms, check_ms;
};

static int pool_state(void *ctx, const struct fsrun *fr, struct state_result *st, struct errbuf *e)
{
	struct pool_run *pr = ctx;
	const struct check_report *c = &st->check;
	const struct judgement *j = &st->judge;
	sbuf_addf(pr->lines, "%s %d %s %s mount=%d fsck=%d/%d tree=%s judged=%d explained=%d setup=%d verdicts=",
		  pr->name, st->idx, st->kind, st->spec, c->mount_ok, c->fsck_status, c->fsck_clean,
		  c->mount_ok ? c->tree_hash : "-", j->judged, j->explained, j->setup_state);
	for (int m = 0; m <= MODEL_COUNT; m++)
		for (int k = 0; k < V_COUNT; k++)
			sbuf_addf(pr->lines, "%s%zu", m || k ? "," : "", j->count[m][k]);
	sbuf_adds(pr->lines, "\n");
	(void)fr;
	(void)e;
	return 0;
}

static int pool_fsrun_end(void *ctx, const struct fsrun *fr, struct errbuf *e)
{
	struct pool_run *pr = ctx;
	pr->record_ms = fr->record_ms;
	pr->check_ms = fr->check_ms;
	sbuf_addf(pr->lines, "%s outcome=%s log_entries=%lld setup_end=%lld\n", pr->name, fr->outcome,
		  (long long)fr->log.entries, (long long)fr->setup_end);
	(void)e;
	return 0;
}

/* Every workload on fs through backend b: the states into lines, the
 * times into ms[workload][0 recording, 1 checking]. 0, or an exit code. */
static int pool_pass(const struct backend *b, const char *fs, struct wl_workload *ws, char *const *files, int nw,
		     const struct vm_config *guest, struct cmd_ctx *ctx, const char *dir, struct sbuf *lines,
		     double (*ms)[2])
{
	int rc = 0;
	for (int i = 0; i < nw; i++) {
		char *wd = xasprintf("%s/%s-%s-%d", dir, b->name, fs, i);
		mkdir_p(wd, 0755);
		const char *name = strrchr(files[i], '/') ? strrchr(files[i], '/') + 1 : files[i];
		struct run_params params = { .w = &ws[i], .guest = guest, .backend = b, .size = IMG_BASE_DEFAULT_SIZE,
					     .mode = CRASH_FLUSH, .seed = 1, .workdir = wd };
		guest_barrier_syscalls(ctx->kernel, &params.nr_fbarrier, &params.nr_fdatabarrier);
		struct pool_run pr = { name, lines, 0, 0 };
		struct sink sink = { .ctx = &pr, .state = pool_state, .fsrun_end = pool_fsrun_end };
		struct fs_params fp = { .fs = fs };
		struct fs_summary sum;
		struct errbuf e;
		int r = runner_fs(&params, &fp, NULL, &sink, &sum, &e);
		if (r) {
			error("%s: %s: %s: %s", b->name, fs, name, r < 0 ? e.msg : sum.error);
			if (!rc)
				rc = r < 0 ? e.code : r;
		}
		ms[i][0] = pr.record_ms;
		ms[i][1] = pr.check_ms;
		rm_rf(wd);
		free(wd);
	}
	return rc;
}

static int bench_pool(const char *fs_list, int slots, const char *out_dir, int no_classic, char *const *files,
		      int nw, struct cmd_ctx *ctx)
{
	struct strvec fss = STRVEC_INIT;
	cmd_fs_list(ctx, fs_list, &fss);
	struct sbuf *texts = xcalloc((size_t)nw, sizeof(*texts));
	struct wl_workload *ws = xcalloc((size_t)nw, sizeof(*ws));
	struct errbuf e;
	for (int i = 0; i < nw; i++)
		if (wl_load(files[i], &texts[i], &ws[i], &e) < 0)
			die_err(&e);
	if (out_dir && mkdir_p(out_dir, 0755) < 0)
		die_code(EXIT_CANTCREAT, "cannot create '%s': %s", out_dir, strerror(errno));
	char *dir = cmd_tmpdir("bench");
	struct vm_config guest = { .mem_mb = 1024 };
	cmd_guest(ctx, &guest);
	double (*classic)[2] = xcalloc((size_t)nw, sizeof(*classic));
	double (*pooled)[2] = xcalloc((size_t)nw, sizeof(*pooled));
	int rc = 0;
	printf("%-7s %-28s %13s %13s %13s %13s\n", "fs", "workload", "classic rec", "classic check", "pool rec",
	       "pool check");
	for (size_t f = 0; f < fss.n; f++) {
		const char *fs = fss.v[f];
		struct sbuf lc = SBUF_INIT, lp = SBUF_INIT;
		int r = 0;
		if (!no_classic)
			r = pool_pass(backend_qemu(), fs, ws, files, nw, &guest, ctx, dir, &lc, classic);
		if (r && !rc)
			rc = r;
		char *pdir = xasprintf("%s/pool-%s", dir, fs);
		mkdir_p(pdir, 0755);
		struct pool_opts po = { .guest = &guest, .slots = slots, .dir = pdir };
		const struct backend *pb = pool_backend_new(&po);
		r = pool_pass(pb, fs, ws, files, nw, &guest, ctx, dir, &lp, pooled);
		if (r && !rc)
			rc = r;
		struct pool_stats st;
		pool_backend_stats(pb, &st);
		pool_backend_free(pb);
		rm_rf(pdir);
		free(pdir);
		for (int i = 0; i < nw; i++) {
			const char *name = strrchr(files[i], '/') ? strrchr(files[i], '/') + 1 : files[i];
			if (no_classic)
				printf("%-7s %-28s %13s %13s %11.0fms %11.0fms\n", fs, name, "-", "-", pooled[i][0],
				       pooled[i][1]);
			else
				printf("%-7s %-28s %11.0fms %11.0fms %11.0fms %11.0fms\n", fs, name, classic[i][0],
				       classic[i][1], pooled[i][0], pooled[i][1]);
		}
		char *stats = xasprintf("record_boots=%zu checker_boots=%zu recordings=%zu checks=%zu guest_failures=%zu\n",
					st.record_boots, st.checker_boots, st.recordings, st.checks, st.guest_failures);
		printf("%-7s pool: %s", fs, stats);
		if (out_dir) {
			const char *names[3] = { "classic", "pool", "stats" };
			const char *data[3] = { lc.buf ? lc.buf : "", lp.buf ? lp.buf : "", stats };
			for (int k = no_classic ? 1 : 0; k < 3; k++) {
				char *path = xasprintf("%s/%s-%s.txt", out_dir, names[k], fs);
				if (write_file_atomic(path, data[k], strlen(data[k])) < 0)
					die_code(EXIT_CANTCREAT, "cannot write '%s': %s", path, strerror(errno));
				free(path);
			}
		}
		free(stats);
		sbuf_free(&lc);
		sbuf_free(&lp);
	}
	printf("milliseconds per workload (crash mode flush), accelerator %s\n", guest.accel);
	rm_rf(dir);
	free(dir);
	free(classic);
	free(pooled);
	for (int i = 0; i < nw; i++) {
		wl_free(&ws[i]);
		sbuf_free(&texts[i]);
	}
	free(ws);
	free(texts);
	guest_config_free(&guest);
	strvec_free(&fss);
	return rc;
}

static int bench_boot(int count, struct cmd_ctx *ctx)
{
	struct vm_config cfg = { .mem_mb = 1024 };
	cmd_guest(ctx, &cfg);
	double *t = xcalloc((size_t)count, sizeof(double));
	for (int i = 0; i < count; i++) {
		struct vm vm;
		int rc = cmd_vm_start(&vm, &cfg);
		if (rc) {
			free(t);
			guest_config_free(&cfg);
			return rc;
		}
		t[i] = vm.t_ready - vm.t_start;
		vm_stop(&vm);
		vm_free(&vm);
		if (!msg_quiet())
			fprintf(stderr, "crashlab: boot %d/%d: %.3f s\n", i + 1, count, t[i]);
	}
	double med = median(t, (size_t)count);
	printf("boot to agent-ready: median %.3f s over %d boots (min %.3f, max %.3f), accelerator %s\n",
	       med, count, t[0], t[count - 1], cfg.accel);
	free(t);
	guest_config_free(&cfg);
	return 0;
}

int cmd_bench(int argc, char **argv, struct cmd_ctx *ctx)
{
	int count = 0; /* 0: the benchmark's default */
	const char *fs = "ext4,xfs,btrfs,f2fs", *crash = "write";
	const char *delay = "0,2,20", *barrier_fs = "ext4,xfs,btrfs,f2fs";
	const struct opt none[] = { { OPT_END, 0, NULL, NULL, NULL, NULL } };
	const struct opt boot_opts[] = {
		{ OPT_INT, 'n', "count", &count, "N", "boots (default 5)" },
		{ OPT_END, 0, NULL, NULL, NULL, NULL },
	};
	const struct opt check_opts[] = {
		{ OPT_STRING, 0, "fs", &fs, "LIST", "file systems (default all four)" },
		{ OPT_STRING, 0, "crash", &crash, "MODE", "crash mode (default write)" },
		{ OPT_END, 0, NULL, NULL, NULL, NULL },
	};
	const char *pool_fs = "ext4,xfs", *out_dir = NULL;
	int slots = 0, no_classic = 0;
	const struct opt pool_opts[] = {
		{ OPT_STRING, 0, "fs", &pool_fs, "LIST", "file systems (default ext4,xfs)" },
		{ OPT_INT, 0, "slots", &slots, "N", "recordings per recording guest: the regions of its disk (default 128)" },
		{ OPT_STRING, 0, "out", &out_dir, "DIR", "where the states and counts are written" },
		{ OPT_BOOL, 0, "no-classic", &no_classic, NULL, "only the pool" },
		{ OPT_END, 0, NULL, NULL, NULL, NULL },
	};
	const struct opt barrier_opts[] = {
		{ OPT_INT, 'n', "count", &count, "N", "iterations (default 50)" },
		{ OPT_STRING, 0, "delay", &delay, "MS,...", "flush delays of the slow disk (default 0,2,20)" },
		{ OPT_STRING, 0, "fs", &barrier_fs, "LIST", "file systems (default all four)" },
		{ OPT_END, 0, NULL, NULL, NULL, NULL },
	};
	int n = cmd_parse(ctx, argc, argv, none, bench_usage, OPT_STOP_AT_NONOPT);
	if (n < 1)
		usage_error(ctx->name, "say what to measure: boot, check, barrier, pool or suite");
	const char *sub = argv[0];
	cmd_name_sub(ctx, sub);
	if (!strcmp(sub, "barrier")) {
		if (cmd_parse(ctx, n, argv, barrier_opts, bench_usage, 0))
			usage_error(ctx->name, "barrier takes no arguments");
		if (count < 0)
			usage_error(ctx->name, "-n must be at least 1");
		return bench_barrier(count ? count : 50, delay, barrier_fs, ctx);
	}
	if (!strcmp(sub, "check")) {
		int k = cmd_parse(ctx, n, argv, check_opts, bench_usage, 0);
		if (k > 1)
			usage_error(ctx->name, "check takes at most one workload");
		char *def = xasprintf("%s/tutorials/seed/seed.wl", project_root());
		int rc = bench_check(fs, crash, k == 1 ? argv[0] : def, ctx);
		free(def);
		return rc;
	}
	if (!strcmp(sub, "suite"))
		return cmd_bench_suite(n, argv, ctx, bench_usage);
	if (!strcmp(sub, "pool")) {
		int k = cmd_parse(ctx, n, argv, pool_opts, bench_usage, 0);
		if (k < 1)
			usage_error(ctx->name, "pool takes one or more workloads");
		return bench_pool(pool_fs, slots, out_dir, no_classic, argv, k, ctx);
	}
	if (!strcmp(sub, "boot")) {
		if (cmd_parse(ctx, n, argv, boot_opts, bench_usage, 0))
			usage_error(ctx->name, "boot takes no arguments");
		return bench_boot(count ? count : 5, ctx);
	}
	const char *subs[] = { "boot", "check", "barrier", "pool", "suite", NULL };
	const char *near = nearest_word(sub, subs);
	if (near)
		usage_error("crashlab bench", "unknown benchmark '%s'; did you mean '%s'?", sub, near);
	usage_error("crashlab bench", "unknown benchmark '%s' (boot, check, barrier, pool or suite)", sub);
}
