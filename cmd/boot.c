/*
 * boot.c - `crashlab boot` runs one command in a fresh guest and exits with
 * its status; `crashlab shell` gives an interactive guest shell.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "engine/guest.h"
#include "host/sys.h"

static const char boot_usage[] =
	"usage: crashlab boot [--accel auto|kvm|tcg] [--backend qemu|libvirt] [--disk FILE]... [--timeout S] -- CMD [ARGS...]\n"
	"\n"
	"Boot the crashlab guest (the built kernel, or --kernel PATH, with the built\n"
	"initramfs), run CMD in it with busybox and the mkfs/fsck tools on PATH, stream\n"
	"its stdout and stderr here, and exit with its exit status. Disks appear in the\n"
	"guest as /dev/vda, /dev/vdb, ... in the order given; they are written in place.\n"
	"\n"
	"Guest failures have their own exit codes: 124 the guest did not answer in time,\n"
	"125 the guest kernel panicked, 69 QEMU died or could not start.\n"
	"\n"
	"--backend libvirt boots the guest as a transient libvirt domain (--connect URI\n"
	"picks the libvirt, default its own); the exit codes are the same.\n"
	"\n"
	"examples:\n"
	"  crashlab boot -- uname -a\n"
	"  crashlab boot --disk base.img -- sh -c 'mount /dev/vda /mnt && ls -l /mnt'\n";

static const char shell_usage[] =
	"usage: crashlab shell [--accel auto|kvm|tcg] [--backend qemu|libvirt] [--disk FILE]...\n"
	"\n"
	"Boot the guest with a shell on this terminal (the serial console). 'exit'\n"
	"powers the guest off. Disks appear as /dev/vda, /dev/vdb, ...\n"
	"With --backend libvirt the guest is a transient libvirt domain whose serial\n"
	"console is relayed to this terminal.\n";

static void add_disks(struct vm_config *cfg, const struct strvec *disks)
{
	for (size_t i = 0; i < disks->n; i++) {
		const char *d = disks->v[i];
		if (!file_exists(d))
			die_code(EXIT_NOINPUT, "disk '%s' does not exist", d);
		if (strchr(d, ','))
			die_code(EXIT_USAGE, "disk path '%s' contains a comma, which QEMU cannot take", d);
		size_t n = strlen(d);
		const char *fmt = n > 6 && !strcmp(d + n - 6, ".qcow2") ? "qcow2" : "raw";
		strvec_pushf(&cfg->drives, "file=%s,format=%s", d, fmt);
	}
}

int cmd_boot(int argc, char **argv, struct cmd_ctx *ctx)
{
	struct strvec disks = STRVEC_INIT;
	int timeout = 0, mem = 1024;
	const struct opt opts[] = {
		{ OPT_LIST, 'd', "disk", &disks, "FILE", "attach a raw (or .qcow2) disk image; repeatable" },
		{ OPT_INT, 't', "timeout", &timeout, "S", "wall-clock limit for CMD (default 300 s, x8 under TCG)" },
		{ OPT_INT, 'm', "mem", &mem, "MB", "guest memory (default 1024)" },
		{ OPT_END, 0, NULL, NULL, NULL, NULL },
	};
	int n = cmd_parse(ctx, argc, argv, opts, boot_usage, OPT_STOP_AT_NONOPT);
	if (n == 0)
		usage_error(ctx->name, "no command given; say what to run after '--'");

	struct vm_config cfg = { .mem_mb = mem };
	add_disks(&cfg, &disks);
	cmd_guest(ctx, &cfg);

	struct vm vm;
	enum vm_outcome o = vm_start(&vm, &cfg);
	int status = 0, rc;
	if (o == VM_OK)
		o = vm_exec(&vm, argv, 1, 2, timeout, &status);
	if (o == VM_OK) {
		vm_stop(&vm);
		rc = status;
	} else {
		rc = cmd_guest_failed(&vm, o);
	}
	vm_free(&vm);
	strvec_free(&disks);
	guest_config_free(&cfg);
	return rc;
}

int cmd_shell(int argc, char **argv, struct cmd_ctx *ctx)
{
	struct strvec disks = STRVEC_INIT;
	int mem = 1024;
	const struct opt opts[] = {
		{ OPT_LIST, 'd', "disk", &disks, "FILE", "attach a raw (or .qcow2) disk image; repeatable" },
		{ OPT_INT, 'm', "mem", &mem, "MB", "guest memory (default 1024)" },
		{ OPT_END, 0, NULL, NULL, NULL, NULL },
	};
	int n = cmd_parse(ctx, argc, argv, opts, shell_usage, 0);
	if (n)
		usage_error(ctx->name, "unexpected argument '%s'", argv[0]);
	struct vm_config cfg = { .mem_mb = mem, .shell = true };
	add_disks(&cfg, &disks);
	cmd_guest(ctx, &cfg);
	int rc = vm_interactive(&cfg);
	strvec_free(&disks);
	guest_config_free(&cfg);
	return rc;
}
