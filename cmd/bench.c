/*
 * bench.c - `crashlab bench`: measurements of the lab itself. A benchmark
 * measures and prints; it never passes or fails on a time.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <errno.h>
#include <sqlite3.h>

#include "cmd/cmds.h"
#include "crashdb/crashdb.h"
#include "images/basedisk.h"
#include "engine/guest.h"
#include "cmd/opt.h"
#include "engine/record.h"
#include "engine/runner.h"

static const char bench_usage[] =
	"usage: crashlab bench boot [-n N] [--accel auto|kvm|tcg]\n"
	"       crashlab bench check [--fs LIST] [--crash MODE] [WORKLOAD.wl]\n"
	"       crashlab bench barrier [-n N] [--delay MS]\n"
	"\n"
	"boot   boot the guest N times (default 5) and print the median time from\n"
	"       starting QEMU to the agent's hello, with min and max, and which\n"
	"       accelerator was used.\n"
	"check  run a workload (default: the seed example, --crash write, so there\n"
	"       are many states) and print per file system the median time per crash\n"
	"       state split into mount (with recovery and unmount), capture, fsck and\n"
	"       everything else (replay, snapshot, transport), and the ratio of\n"
	"       everything else to mount + fsck. Uses a throw-away database.\n"
	"barrier  on ext4 and xfs over dm-delay (every cache flush takes --delay ms,\n"
	"       default 20, as on a slow disk), N times (default 50) write 4 KiB, then\n"
	"       fdatasync | fdatabarrier | fsync | fbarrier, then rename; print the\n"
	"       milliseconds per iteration and the cost ratios durable / ordered.\n"
	"       Needs the kernel series (the barrier calls).\n";

/* Run sh -c script in the guest, collecting output; die on a guest failure. */
static int guest_script(struct lab_vm *vm, const char *script, struct sbuf *out)
{
	char *argv[] = { "sh", "-c", (char *)script, NULL };
	int status = -1;
	sbuf_reset(out);
	enum lab_outcome o = lab_vm_run(vm, argv, out, 0, &status);
	if (o != LAB_OK) {
		lab_vm_kill(vm);
		exit(lab_vm_report(vm, o));
	}
	return status;
}

static int bench_barrier(int iterations, int delay_ms, const char *accel)
{
	long nr_fb, nr_fdb;
	struct lab_vm_config cfg = { .mem_mb = 1024 };
	lab_guest_prepare(&cfg, accel);
	lab_barrier_syscalls(&nr_fb, &nr_fdb);
	if (nr_fb < 0 || nr_fdb < 0)
		die_code(EXIT_CONFIG, "this kernel has no fbarrier/fdatabarrier; build it with the series in kernel/");
	static const char *const fss[] = { "ext4", "xfs" };
	static const char *const calls[] = { "fdatasync", "fdatabarrier", "fsync", "fbarrier" };
	char dir[] = "/tmp/crashlab-bench.XXXXXX";
	if (!mkdtemp(dir))
		die_code(exit_for_errno(errno), "cannot create a temp dir: %s", errno_advice(errno));
	for (int i = 0; i < 2; i++)
		lab_guest_add_fs_disk(&cfg, dir, fss[i], IMG_BASE_DEFAULT_SIZE);
	struct lab_vm vm;
	enum lab_outcome o = lab_vm_start(&vm, &cfg);
	if (o != LAB_OK) {
		lab_vm_kill(&vm);
		return lab_vm_report(&vm, o);
	}
	struct sbuf out = SBUF_INIT;
	printf("%-5s %12s %12s %12s %12s   %s\n", "fs", "fdatasync", "fdatabarrier", "fsync", "fbarrier",
	       "fdatasync/fdatabarrier  fsync/fbarrier");
	int rc = 0;
	for (int i = 0; i < 2 && !rc; i++) {
		double ms[4] = { 0 };
		/* A slow disk: dm-delay holds every flush for delay_ms. */
		char *setup = xasprintf(
			"export DM_DISABLE_UDEV=1; d=/dev/vd%c; n=$(blockdev --getsz $d) && "
			"dmsetup create --noudevsync slow --table \"0 $n delay $d 0 0 $d 0 0 $d 0 %d\" && "
			"mkdir -p /mnt/b && mount -t %s /dev/mapper/slow /mnt/b",
			'a' + i, delay_ms, fss[i]);
		if (guest_script(&vm, setup, &out) != 0) {
			error("%s: cannot set up the delayed disk: %.*s", fss[i], (int)strcspn(out.buf, "\n"), out.buf);
			rc = EXIT_GUEST;
		}
		free(setup);
		for (int c = 0; c < 4 && !rc; c++) {
			char *cmd = xasprintf("/init bench-barrier /mnt/b %d %s %ld %ld", iterations, calls[c], nr_fb,
					      nr_fdb);
			if (!quiet)
				fprintf(stderr, "crashlab: %s: %d x write, %s, rename\n", fss[i], iterations, calls[c]);
			if (guest_script(&vm, cmd, &out) != 0 || sscanf(out.buf, "%*s %lf", &ms[c]) != 1) {
				error("%s: %s: %.*s", fss[i], calls[c], (int)strcspn(out.buf, "\n"), out.buf);
				rc = EXIT_GUEST;
			}
			free(cmd);
		}
		guest_script(&vm, "umount /mnt/b; DM_DISABLE_UDEV=1 dmsetup remove --noudevsync slow", &out);
		if (!rc)
			printf("%-5s %10.2fms %10.2fms %10.2fms %10.2fms   %22.1fx %14.1fx\n", fss[i], ms[0], ms[1], ms[2],
			       ms[3], ms[1] > 0 ? ms[0] / ms[1] : 0, ms[3] > 0 ? ms[2] / ms[3] : 0);
	}
	printf("per iteration (write 4 KiB; call; rename), %d iterations, flush delay %d ms, accelerator %s\n",
	       iterations, delay_ms, cfg.accel);
	lab_vm_stop(&vm);
	lab_vm_free(&vm);
	rm_rf(dir);
	sbuf_free(&out);
	strvec_free(&cfg.drives);
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

static int bench_check(const char *fs_list, const char *crash, const char *file, const char *accel)
{
	enum lab_crash_mode mode;
	if (lab_crash_mode_parse(crash, &mode) < 0)
		usage_error("crashlab bench", "unknown crash mode '%s'", crash);
	struct sbuf text = SBUF_INIT;
	struct wl_workload w;
	char err[512];
	lab_workload_load(file, &text, &w);
	char dir[] = "/tmp/crashlab-bench.XXXXXX";
	if (!mkdtemp(dir))
		die_code(exit_for_errno(errno), "cannot create a temp dir: %s", errno_advice(errno));
	char *dbp = xasprintf("%s/bench.db", dir);
	struct crashdb *db;
	if (crashdb_open(dbp, &db, err, sizeof(err)) < 0)
		die_code(EXIT_CANTCREAT, "%s", err);
	struct lab_vm_config guest = { .mem_mb = 1024 };
	lab_guest_prepare(&guest, accel);
	struct crashdb_run run = { .started_at = "", .cmdline = "crashlab bench check", .accel = guest.accel,
				   .kernel_version = "", .kernel_key = "", .workload_file = file,
				   .workload_text = text.buf, .crash_mode = crash };
	if (crashdb_run_insert(db, &run) < 0)
		die("%s", crashdb_error(db));
	struct lab_run_params params = { .w = &w, .guest = &guest, .size = IMG_BASE_DEFAULT_SIZE,
					 .mode = mode, .seed = 1, .workdir = dir };
	printf("%-7s %6s %9s %9s %9s %9s %9s  %s\n", "fs", "states", "mount", "capture", "fsck", "else",
	       "total", "else / (mount + fsck)");
	char *copy = xstrdup(fs_list);
	char *save = NULL;
	int rc = 0;
	for (char *fs = strtok_r(copy, ",", &save); fs; fs = strtok_r(NULL, ",", &save)) {
		if (!img_fs_valid(fs))
			usage_error("crashlab bench", "unknown file system '%s' (choose from %s)", fs, img_fs_list());
		struct lab_fs_summary sum = { 0 };
		int r = lab_run_fs(db, run.id, fs, NULL, NULL, &params, &sum);
		if (r) {
			rc = r;
			continue;
		}
		sqlite3_stmt *st;
		sqlite3_prepare_v2(crashdb_sqlite(db),
				   "SELECT s.ms_mount, s.ms_capture, s.ms_fsck, s.ms_replay + s.ms_other "
				   "FROM states s JOIN fsruns f ON f.id = s.fsrun_id WHERE f.run_id = ? AND f.fs = ?",
				   -1, &st, NULL);
		sqlite3_bind_int64(st, 1, run.id);
		sqlite3_bind_text(st, 2, fs, -1, SQLITE_STATIC);
		size_t n = 0, cap = 16;
		double *col[5];
		for (int k = 0; k < 5; k++)
			col[k] = xcalloc(cap, sizeof(double));
		while (sqlite3_step(st) == SQLITE_ROW) {
			if (n == cap) {
				cap *= 2;
				for (int k = 0; k < 5; k++)
					col[k] = xrealloc(col[k], cap * sizeof(double));
			}
			double tot = 0;
			for (int k = 0; k < 4; k++)
				tot += col[k][n] = sqlite3_column_double(st, k);
			col[4][n++] = tot;
		}
		sqlite3_finalize(st);
		double m[5];
		for (int k = 0; k < 5; k++)
			m[k] = median(col[k], n);
		printf("%-7s %6zu %7.1fms %7.1fms %7.1fms %7.1fms %7.1fms  %.2f\n", fs, n, m[0], m[1], m[2], m[3],
		       m[4], m[0] + m[2] > 0 ? m[3] / (m[0] + m[2]) : 0);
		for (int k = 0; k < 5; k++)
			free(col[k]);
	}
	printf("medians per crash state, accelerator %s\n", guest.accel);
	free(copy);
	crashdb_close(db);
	rm_rf(dir);
	free(dbp);
	wl_free(&w);
	sbuf_free(&text);
	return rc;
}

static int bench_boot(int count, const char *accel)
{
	struct lab_vm_config cfg = { .mem_mb = 1024 };
	lab_guest_prepare(&cfg, accel);
	double *t = xcalloc((size_t)count, sizeof(double));
	for (int i = 0; i < count; i++) {
		struct lab_vm vm;
		enum lab_outcome o = lab_vm_start(&vm, &cfg);
		if (o != LAB_OK) {
			lab_vm_kill(&vm);
			return lab_vm_report(&vm, o);
		}
		t[i] = vm.t_ready - vm.t_start;
		lab_vm_stop(&vm);
		lab_vm_free(&vm);
		if (!quiet)
			fprintf(stderr, "crashlab: boot %d/%d: %.3f s\n", i + 1, count, t[i]);
	}
	double med = median(t, (size_t)count);
	printf("boot to agent-ready: median %.3f s over %d boots (min %.3f, max %.3f), accelerator %s\n",
	       med, count, t[0], t[count - 1], cfg.accel);
	free(t);
	return 0;
}

int cmd_bench(int argc, char **argv)
{
	int count = 0; /* 0: the benchmark's default */
	const char *accel = "auto", *fs = "ext4,xfs,btrfs,f2fs", *crash = "write";
	int delay = 20;
	const struct opt opts[] = {
		{ OPT_INT, 'n', "count", &count, "N", "boot: boots (default 5); barrier: iterations (default 50)" },
		{ OPT_INT, 0, "delay", &delay, "MS", "barrier: flush delay of the slow disk (default 20)" },
		{ OPT_STRING, 0, "fs", &fs, "LIST", "check: file systems (default all four)" },
		{ OPT_STRING, 0, "crash", &crash, "MODE", "check: crash mode (default write)" },
		{ OPT_STRING, 0, "accel", &accel, "auto|kvm|tcg", "accelerator" },
		{ OPT_END, 0, NULL, NULL, NULL, NULL },
	};
	int n = opt_parse(argc, argv, opts, bench_usage, 0);
	if (n < 1)
		usage_error("crashlab bench", "say what to measure: boot, check or barrier");
	if (count < 0)
		usage_error("crashlab bench", "-n must be at least 1");
	if (!strcmp(argv[0], "barrier")) {
		if (n != 1)
			usage_error("crashlab bench", "barrier takes no arguments");
		return bench_barrier(count ? count : 50, delay, accel);
	}
	if (!strcmp(argv[0], "check")) {
		if (n > 2)
			usage_error("crashlab bench", "check takes at most one workload");
		char *def = xasprintf("%s/tutorials/seed/seed.wl", project_root());
		int rc = bench_check(fs, crash, n == 2 ? argv[1] : def, accel);
		free(def);
		return rc;
	}
	if (n != 1)
		usage_error("crashlab bench", "boot takes no arguments");
	if (!strcmp(argv[0], "boot"))
		return bench_boot(count ? count : 5, accel);
	usage_error("crashlab bench", "unknown benchmark '%s'", argv[0]);
}
