/*
 * bench.c - `crashlab bench`: measurements of the lab itself. A benchmark
 * measures and prints; it never passes or fails on a time.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmds.h"
#include "lab/guest.h"
#include "lab/opt.h"

static const char bench_usage[] =
	"usage: crashlab bench boot [-n N] [--accel auto|kvm|tcg]\n"
	"\n"
	"boot   boot the guest N times (default 5) and print the median time from\n"
	"       starting QEMU to the agent's hello, with min and max, and which\n"
	"       accelerator was used.\n";

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
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
	qsort(t, (size_t)count, sizeof(double), cmp_double);
	double median = count % 2 ? t[count / 2] : (t[count / 2 - 1] + t[count / 2]) / 2;
	printf("boot to agent-ready: median %.3f s over %d boots (min %.3f, max %.3f), accelerator %s\n",
	       median, count, t[0], t[count - 1], cfg.accel);
	free(t);
	return 0;
}

int cmd_bench(int argc, char **argv)
{
	int count = 5;
	const char *accel = "auto";
	const struct opt opts[] = {
		{ OPT_INT, 'n', "count", &count, "N", "number of boots (default 5)" },
		{ OPT_STRING, 0, "accel", &accel, "auto|kvm|tcg", "accelerator" },
		{ OPT_END, 0, NULL, NULL, NULL, NULL },
	};
	int n = opt_parse(argc, argv, opts, bench_usage, 0);
	if (n != 1)
		usage_error("crashlab bench", "say what to measure: boot");
	if (count < 1)
		usage_error("crashlab bench", "-n must be at least 1");
	if (!strcmp(argv[0], "boot"))
		return bench_boot(count, accel);
	usage_error("crashlab bench", "unknown benchmark '%s'", argv[0]);
}
