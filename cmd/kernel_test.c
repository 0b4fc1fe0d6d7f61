/*
 * kernel_test.c - `crashlab kernel test`: the series' kselftests
 * (tools/testing/selftests/fbarrier) run in a booted guest on every file
 * system.
 *
 * Method: the test program is compiled on the host, statically, against the
 * uapi headers of the built tree (`make headers` there), so the syscall
 * numbers and RENAME_BARRIER come from the kernel being tested and nothing is
 * hard-coded twice. The binary travels into the guest as a raw disk of its
 * own (padded to whole sectors; the guest copies the first SIZE bytes out of
 * it), next to one throw-away qcow2 overlay per file system over the cached
 * base images. The guest mounts each, runs the program with the mount point
 * as its argument, then once more on a tmpfs; its TAP output is streamed
 * here. The exit status is the guest's: 0 when every test passed.
 *
 * For ext4 and xfs a second pass puts the same disk behind a loop device and
 * a device-mapper linear table and runs the program with `-e`, which swaps
 * the table for the error target for a moment to check that a write error
 * is reported once per open file description.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "core/fs.h"
#include "engine/guest.h"
#include "host/msg.h"
#include "host/sys.h"
#include "images/basedisk.h"
#include "kbuild/kbuild.h"

#define KTEST_SRC "tools/testing/selftests/fbarrier/fbarrier_test.c"

/* The built tree belonging to the kernel under test (malloc'd). */
static char *test_tree(const struct kbuild_opts *o, const char *user_kernel, char **bz)
{
	if (user_kernel) {
		char *dir = xstrdup(user_kernel);
		char *slash = strrchr(dir, '/');
		if (slash)
			*slash = '\0';
		char *tree = xasprintf("%s/linux", slash ? dir : ".");
		free(dir);
		if (!is_dir(tree))
			die_code(EXIT_NOINPUT, "no kernel tree next to '%s' (expected '%s'); "
				 "give a bzImage built by 'crashlab kernel build'", user_kernel, tree);
		*bz = xstrdup(user_kernel);
		return tree;
	}
	struct errbuf e;
	if (!(*bz = kbuild_run(o, &e)))
		die_err(&e);
	char *entry = NULL;
	free(kbuild_cached(o, &entry));
	char *tree = xasprintf("%s/linux", entry);
	free(entry);
	return tree;
}

/* Compile the selftest statically against the tree's uapi headers into out. */
static void build_test(const char *tree, const char *out)
{
	char *src = xasprintf("%s/" KTEST_SRC, tree);
	if (!file_exists(src))
		die_code(EXIT_NOINPUT, "'%s' is missing: this kernel does not carry the "
			 "fbarrier series (kernel/series)", src);

	struct strvec argv = STRVEC_INIT;
	struct sbuf log = SBUF_INIT;
	strvec_pushl(&argv, "make", "-s", "ARCH=x86_64", "headers", NULL);
	note("installing the uapi headers in '%s/usr/include'", tree);
	if (run_cmd_in(tree, &argv, &log, -1) != 0) {
		fputs(log.buf ? log.buf : "", stderr);
		die_code(EXIT_BUILD, "'make headers' failed in '%s'", tree);
	}
	strvec_free(&argv);
	sbuf_reset(&log);

	strvec_pushl(&argv, "gcc", "-static", "-O2", "-Wall", NULL);
	strvec_pushf(&argv, "-isystem%s/usr/include", tree);
	strvec_pushf(&argv, "-I%s/tools/testing/selftests", tree);
	strvec_pushl(&argv, "-o", out, src, NULL);
	if (run_cmd(&argv, &log, -1) != 0) {
		fputs(log.buf ? log.buf : "", stderr);
		die_code(EXIT_BUILD, "cannot compile '%s'", src);
	}
	strvec_free(&argv);
	sbuf_free(&log);
	free(src);
}

/* Pad path with zeros to a whole number of sectors; returns its old size. */
static long long pad_to_sector(const char *path)
{
	struct stat st;
	if (stat(path, &st) < 0)
		die_code(EXIT_SOFTWARE, "cannot stat '%s': %s", path, strerror(errno));
	long long padded = (st.st_size + 511) / 512 * 512;
	if (truncate(path, padded) < 0)
		die_code(exit_for_errno(errno), "cannot pad '%s': %s", path, errno_advice(errno));
	return st.st_size;
}

static void guest_script(struct sbuf *sb, const struct strvec *fs, long long size)
{
	sbuf_addf(sb, "head -c %lld /dev/vd%c > /tmp/fbarrier_test || exit 3\n", size,
		  (char)('a' + fs->n));
	sbuf_adds(sb, "chmod +x /tmp/fbarrier_test\nrc=0\n");
	for (size_t i = 0; i < fs->n; i++) {
		const char *f = fs->v[i];
		sbuf_addf(sb, "echo '# === %s ==='\n", f);
		sbuf_addf(sb, "mkdir -p /mnt/%s\n", f);
		sbuf_addf(sb, "if mount -t %s /dev/vd%c /mnt/%s; then\n", f, (char)('a' + i), f);
		sbuf_addf(sb, "  /tmp/fbarrier_test /mnt/%s || { echo 'not ok - %s'; rc=1; }\n", f, f);
		sbuf_addf(sb, "  umount /mnt/%s || rc=1\n", f);
		sbuf_addf(sb, "else echo 'not ok - %s: mount failed'; rc=1; fi\n", f);
		if (strcmp(f, "ext4") && strcmp(f, "xfs"))
			continue;
		/* commit=600: ext4 writes no journal commit of its own meanwhile */
		sbuf_addf(sb, "echo '# === %s on a loop device through device-mapper ==='\n", f);
		sbuf_addf(sb, "loop=$(losetup -f) && losetup \"$loop\" /dev/vd%c &&\n", (char)('a' + i));
		sbuf_adds(sb, "DM_DISABLE_UDEV=1 dmsetup create --noudevsync fbeio "
			  "--table \"0 $(blockdev --getsz \"$loop\") linear $loop 0\" &&\n");
		sbuf_addf(sb, "mkdir -p /mnt/eio && mount -t %s%s /dev/mapper/fbeio /mnt/eio || "
			  "{ echo 'not ok - %s: device-mapper set-up failed'; exit 3; }\n",
			  f, strcmp(f, "ext4") ? "" : " -o commit=600", f);
		sbuf_addf(sb, "/tmp/fbarrier_test -e fbeio /mnt/eio || { echo 'not ok - %s -e'; rc=1; }\n", f);
		sbuf_adds(sb, "umount /mnt/eio || rc=1\n"
			  "DM_DISABLE_UDEV=1 dmsetup remove --noudevsync fbeio || rc=1\n"
			  "losetup -d \"$loop\" || rc=1\n");
	}
	sbuf_adds(sb, "echo '# === tmpfs ==='\n"
		  "mkdir -p /mnt/tmpfs && mount -t tmpfs none /mnt/tmpfs || exit 3\n"
		  "/tmp/fbarrier_test /mnt/tmpfs || { echo 'not ok - tmpfs'; rc=1; }\n"
		  "umount /mnt/tmpfs\n"
		  "exit $rc\n");
}

int kernel_test(const struct kbuild_opts *o, const char *fs_list, struct cmd_ctx *ctx)
{
	struct strvec fs = STRVEC_INIT;
	struct errbuf e;
	cmd_fs_list(ctx, fs_list ? fs_list : "all", &fs);

	char *bz;
	char *tree = test_tree(o, ctx->kernel, &bz);
	char *dir = cmd_tmpdir("ktest");

	char *bin = xasprintf("%s/fbarrier_test", dir);
	build_test(tree, bin);
	long long size = pad_to_sector(bin);

	struct vm_config cfg = { .mem_mb = 1024 };
	for (size_t i = 0; i < fs.n; i++)
		if (guest_add_fs_disk(&cfg, dir, fs.v[i], IMG_BASE_DEFAULT_SIZE, &e) < 0)
			die_err(&e);
	strvec_pushf(&cfg.drives, "file=%s,format=raw,readonly=on", bin);

	if (guest_prepare(&cfg, bz, ctx->accel, &e) < 0)
		die_err(&e);
	cmd_backend(ctx, &cfg);

	struct sbuf script = SBUF_INIT;
	guest_script(&script, &fs, size);
	char *argv[] = { "sh", "-c", script.buf, NULL };

	struct vm vm;
	enum vm_outcome out = vm_start(&vm, &cfg);
	int status = 0, rc;
	if (out == VM_OK)
		out = vm_exec(&vm, argv, 1, 2, 0, &status);
	if (out == VM_OK) {
		vm_stop(&vm);
		rc = status ? EXIT_FINDING : EXIT_OK;
		printf("# kernel test: %s\n", rc ? "FAILED" : "all passed");
	} else {
		rc = cmd_guest_failed(&vm, out);
	}
	vm_free(&vm);
	rm_rf(dir);
	sbuf_free(&script);
	guest_config_free(&cfg);
	strvec_free(&fs);
	free(bin);
	free(dir);
	free(tree);
	free(bz);
	return rc;
}
