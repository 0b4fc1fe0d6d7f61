/*
 * doctor.c - `crashlab doctor`: check every prerequisite of a run and say
 * how to fix what is missing. Exit 0 only when a run can work.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "engine/vm.h"
#include "host/sys.h"
#include "images/initramfs.h"
#include "kbuild/kbuild.h"

static const char doctor_usage[] =
	"usage: crashlab doctor\n"
	"\n"
	"Check the host for everything a crashlab run needs: the Debian packages\n"
	"(QEMU with blklogwrites, the kernel source, mkfs and fsck tools, busybox,\n"
	"dmsetup, ccache), whether KVM works here, whether the kernel and the guest\n"
	"image are built, and the free space in the cache. Each failure comes with\n"
	"advice. Exit 0 when a run can work, 78 otherwise.\n";

static int failures;

static void report(const char *state, const char *what, const char *advice)
{
	printf("%-5s %s%s%s\n", state, what, advice ? " — " : "", advice ? advice : "");
	if (!strcmp(state, "FAIL"))
		failures++;
}

static void check_program(const char *name, const char *package)
{
	char *p = find_program(name);
	char what[256];
	if (p) {
		snprintf(what, sizeof(what), "%s (%s)", name, p);
		report("ok", what, NULL);
		free(p);
		return;
	}
	char advice[256];
	snprintf(what, sizeof(what), "%s not found", name);
	snprintf(advice, sizeof(advice), "install Debian's %s ('make deps' as root)", package);
	report("FAIL", what, advice);
}

static void check_qemu(void)
{
	struct strvec av = STRVEC_INIT;
	struct sbuf out = SBUF_INIT;
	strvec_push(&av, vm_qemu_binary());
	strvec_push(&av, "--version");
	if (run_cmd(&av, &out, -1) != 0) {
		report("FAIL", "qemu-system-x86_64 does not run", "install Debian's qemu-system-x86 ('make deps' as root)");
		goto out;
	}
	int major = 0, minor = 0;
	const char *v = strstr(out.buf, "version ");
	if (v)
		sscanf(v + 8, "%d.%d", &major, &minor);
	char what[160];
	snprintf(what, sizeof(what), "QEMU %d.%d", major, minor);
	if (major < 7 || (major == 7 && minor < 2))
		report("FAIL", what, "crashlab needs QEMU 7.2 or later (Debian 12 ships it)");
	else
		report("ok", what, NULL);
	report(vm_qemu_has_sandbox() ? "ok" : "warn", "QEMU -sandbox (seccomp)",
	       vm_qemu_has_sandbox() ? NULL : "this QEMU has no seccomp sandbox; guests run without it");

	strvec_free(&av);
	sbuf_reset(&out);
	strvec_push(&av, "qemu-img");
	strvec_push(&av, "--help");
	run_cmd(&av, &out, -1);
	if (strstr(out.buf, "blklogwrites"))
		report("ok", "QEMU blklogwrites driver (records writes and flushes)", NULL);
	else
		report("FAIL", "QEMU has no blklogwrites driver", "install Debian's qemu-utils and qemu-system-x86 7.2 or later");
out:
	strvec_free(&av);
	sbuf_free(&out);
}

static void check_kvm(void)
{
	struct sbuf why = SBUF_INIT;
	const char *cached = vm_accel_cached(&why);
	int fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	int err = errno;
	if (fd >= 0)
		close(fd);
	char what[512];
	if (cached && !strcmp(cached, "kvm")) {
		report("ok", "KVM works here (a test boot answered)", NULL);
	} else if (cached) {
		snprintf(what, sizeof(what), "KVM unusable here (%s); guests use TCG, about 8x slower",
			 why.len ? why.buf : "probed");
		report("warn", what, "delete the 'accel' folder of the cache to probe again");
	} else if (fd < 0) {
		snprintf(what, sizeof(what), "cannot open /dev/kvm (%s); guests will use TCG", errno_advice(err));
		report("warn", what, err == EACCES ? "add yourself to the kvm group" : NULL);
	} else {
		report("ok", "/dev/kvm opens; the first boot probes whether guests really run under it", NULL);
	}
	sbuf_free(&why);
}

static void check_builds(void)
{
	char *k = kernel_cached();
	bool source = file_exists(KBUILD_SOURCE);
	char what[512];
	if (k) {
		snprintf(what, sizeof(what), "kernel built: %s (%s)", k, kernel_version(k) ? kernel_version(k) : "?");
		report("ok", what, NULL);
	} else if (source) {
		report("warn", "kernel not built yet", "the first run builds it (about 5 minutes), or run 'crashlab kernel build'");
	} else {
		snprintf(what, sizeof(what), "kernel not built and '%s' missing", KBUILD_SOURCE);
		report("FAIL", what, "install Debian's " KBUILD_SOURCE_PKG " ('make deps' as root)");
	}
	free(k);

	char *agent = img_agent_path();
	if (!file_exists(agent))
		report("FAIL", "guest agent not built", "run 'make'");
	else {
		char *img = img_initramfs_cached();
		if (img) {
			snprintf(what, sizeof(what), "guest image built: %s", img);
			report("ok", what, NULL);
		} else {
			report("warn", "guest image not built yet", "the first run builds it, or run 'crashlab image build'");
		}
		free(img);
	}
	free(agent);
}

static void check_space(void)
{
	const char *dir = cache_dir();
	struct statvfs sv;
	char what[512];
	if (!dir) {
		report("FAIL", "neither XDG_CACHE_HOME nor HOME is set: there is no place for the cache", NULL);
		return;
	}
	struct errbuf e;
	char *made = cache_subdir(".", &e);
	free(made);
	if (statvfs(dir, &sv) < 0) {
		snprintf(what, sizeof(what), "cannot check free space of '%s': %s", dir, errno_advice(errno));
		report("FAIL", what, NULL);
		return;
	}
	double gib = (double)sv.f_bavail * (double)sv.f_frsize / (1024.0 * 1024 * 1024);
	char *k = kernel_cached();
	double need = k ? 1.0 : 4.0;  /* the extracted and built tree takes about 2.5 GiB */
	free(k);
	snprintf(what, sizeof(what), "cache '%s': %.1f GiB free", dir, gib);
	if (gib < need) {
		char advice[128];
		snprintf(advice, sizeof(advice), "need at least %.0f GiB; free space or set XDG_CACHE_HOME", need);
		report("FAIL", what, advice);
	} else {
		report("ok", what, NULL);
	}
}

int cmd_doctor(int argc, char **argv, struct cmd_ctx *ctx)
{
	int n = cmd_parse(ctx, argc, argv, NULL, doctor_usage, 0);
	if (n)
		usage_error(ctx->name, "unexpected argument '%s'", argv[0]);
	check_qemu();
	check_program("qemu-img", "qemu-utils");
	check_program("make", "make");
	check_program("gcc", "gcc");
	check_program("patch", "patch");
	check_program("flex", "flex");
	check_program("bison", "bison");
	check_program("bc", "bc");
	check_program("ccache", "ccache");
	size_t nt;
	const struct img_tool *tools = img_tools(&nt);
	for (size_t i = 0; i < nt; i++)
		if (!tools[i].optional)
			check_program(tools[i].name, tools[i].package);
	check_kvm();
	check_builds();
	check_space();
	printf("%s\n", failures ? "crashlab cannot run here yet; fix the FAIL lines above"
				: "crashlab can run here");
	return failures ? EXIT_CONFIG : EXIT_OK;
}
