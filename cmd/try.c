/*
 * try.c - `crashlab try`: the lab's first light. One guest gets a throw-away
 * copy of each file system's cached base image (a qcow2 overlay, so the
 * base stays pristine); for each file system the guest mounts it, writes a
 * file, unmounts, mounts again and reads the file back, unmounts and runs
 * the file system's own fsck read-only. Every step is a separate command
 * over the guest channel, timed from the host, so a failure names its step.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "cmd/render.h"
#include "core/fs.h"
#include "engine/guest.h"
#include "host/msg.h"
#include "host/sys.h"

static const char try_usage[] =
	"usage: crashlab try [--fs ext4,xfs,btrfs,f2fs] [--size 512M] [--accel auto|kvm|tcg]\n"
	"\n"
	"Boot one guest and show each file system working in it: the base image is\n"
	"made on the host with the real mkfs (cached), mounted in the guest, written,\n"
	"unmounted, mounted again and read back, unmounted, and checked with the file\n"
	"system's own fsck, read-only. Nothing is ever mounted on this machine.\n"
	"Exit status 0 when every step worked on every file system, 1 otherwise.\n";

/* One step of the per-fs script; %1$s = device, %2$s = mount point, %3$s = fs. */
struct step {
	const char *name;
	const char *script;
};

static const struct step steps[] = {
	{ "mount", "mkdir -p %2$s && mount -t %3$s %1$s %2$s" },
	{ "write", "dd if=/dev/urandom of=%2$s/probe bs=64k count=16 2>/dev/null && "
		   "md5sum %2$s/probe > /tmp/%3$s.md5 && mkdir %2$s/dir && echo hello > %2$s/dir/f && sync" },
	{ "umount", "umount %2$s" },
	{ "remount", "mount -t %3$s %1$s %2$s && md5sum -c -s /tmp/%3$s.md5 && "
		     "test \"$(cat %2$s/dir/f)\" = hello && umount %2$s" },
};

struct result {
	const char *fs;
	const char *failed_step;  /* NULL when all passed */
	char detail[256];
	double ms[8];
	int fsck_status;
};

/* Run sh -c script in the guest; on a guest failure, report and exit. */
static int guest_sh(struct vm *vm, const char *script, struct sbuf *out, double *ms)
{
	char *argv[] = { "sh", "-c", (char *)script, NULL };
	int status = -1;
	double t0 = now_s();
	sbuf_reset(out);
	enum vm_outcome o = vm_run(vm, argv, out, 0, &status);
	*ms = (now_s() - t0) * 1000;
	if (o != VM_OK)
		exit(cmd_guest_failed(vm, o));
	return status;
}

int cmd_try(int argc, char **argv, struct cmd_ctx *ctx)
{
	const char *fs_list = "all", *size_s = "512M";
	const struct opt opts[] = {
		{ OPT_STRING, 0, "fs", &fs_list, "LIST", "file systems, comma-separated (default all)" },
		{ OPT_STRING, 0, "size", &size_s, "SIZE", "base image size (default 512M)" },
		{ OPT_END, 0, NULL, NULL, NULL, NULL },
	};
	const char *cmd = ctx->name;
	int n = cmd_parse(ctx, argc, argv, opts, try_usage, 0);
	if (n)
		usage_error(cmd, "unexpected argument '%s'", argv[0]);
	long long size = cmd_size(ctx, size_s);
	struct strvec fss = STRVEC_INIT;
	struct errbuf e;
	cmd_fs_list(ctx, fs_list, &fss);

	struct vm_config cfg = { .mem_mb = 1024 };
	cmd_guest(ctx, &cfg);
	char *tmpl = cmd_tmpdir("try");
	for (size_t i = 0; i < fss.n; i++)
		if (guest_add_fs_disk(&cfg, tmpl, fss.v[i], size, &e) < 0) {
			rm_rf(tmpl);
			die_err(&e);
		}

	struct vm vm;
	int rc = cmd_vm_start(&vm, &cfg);
	if (rc) {
		rm_rf(tmpl);
		return rc;
	}
	note("guest up in %.1f s (%s, kernel %s)", vm.t_ready - vm.t_start, cfg.accel, vm.kernel_release);

	struct result *res = xcalloc(fss.n, sizeof(*res));
	struct sbuf out = SBUF_INIT;
	int failures = 0;
	for (size_t i = 0; i < fss.n; i++) {
		struct result *r = &res[i];
		const char *fs = r->fs = fss.v[i];
		char dev[16], mnt[64];
		snprintf(dev, sizeof(dev), "/dev/vd%c", (char)('a' + i));
		snprintf(mnt, sizeof(mnt), "/mnt/%s", fs);
		size_t s;
		for (s = 0; s < sizeof(steps) / sizeof(steps[0]); s++) {
			char *script = xasprintf(steps[s].script, dev, mnt, fs);
			int st = guest_sh(&vm, script, &out, &r->ms[s]);
			free(script);
			if (st != 0) {
				r->failed_step = steps[s].name;
				snprintf(r->detail, sizeof(r->detail), "%.*s", (int)strcspn(out.buf, "\n"), out.buf);
				break;
			}
		}
		if (!r->failed_step) {
			const struct fs_type *t = fs_lookup(fs);
			char *fsck = fs_fsck_line(t);
			char *line = xasprintf("%s %s 2>&1", fsck, dev);
			r->fsck_status = guest_sh(&vm, line, &out, &r->ms[s]);
			free(line);
			free(fsck);
			if (!fs_fsck_clean(t, r->fsck_status)) {
				r->failed_step = "fsck";
				snprintf(r->detail, sizeof(r->detail), "exit %d: %.*s", r->fsck_status,
					 (int)strcspn(out.buf, "\n"), out.buf);
			}
		}
		if (r->failed_step)
			failures++;
		if (!msg_quiet())
			fprintf(stderr, "crashlab: %-6s %s\n", fs, r->failed_step ? "FAILED" : "ok");
	}
	vm_stop(&vm);
	vm_free(&vm);
	rm_rf(tmpl);
	free(tmpl);

	printf("%-7s %-9s %-9s %-9s %-9s %-9s %s\n", "fs", "mount", "write", "umount", "remount", "fsck", "result");
	for (size_t i = 0; i < fss.n; i++) {
		struct result *r = &res[i];
		printf("%-7s", r->fs);
		bool failed = false;
		for (size_t s = 0; s < 5; s++) {
			const char *name = s < 4 ? steps[s].name : "fsck";
			char cell[32];
			if (failed)
				snprintf(cell, sizeof(cell), "-");
			else if (r->failed_step && !strcmp(r->failed_step, name))
				snprintf(cell, sizeof(cell), "FAIL"), failed = true;
			else
				snprintf(cell, sizeof(cell), "%.0fms", r->ms[s]);
			printf(" %-9s", cell);
		}
		putchar(' ');
		render_puts(stdout, r->failed_step ? r->detail : "ok");
		putchar('\n');
	}
	printf("%zu file systems, %d failed (%s)\n", fss.n, failures, cfg.accel);
	free(res);
	sbuf_free(&out);
	strvec_free(&fss);
	guest_config_free(&cfg);
	return failures ? EXIT_FINDING : EXIT_OK;
}
