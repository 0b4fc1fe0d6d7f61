/* guest.c - see guest.h. */
#include "engine/guest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "images/basedisk.h"
#include "images/initramfs.h"
#include "kbuild/kbuild.h"

int guest_prepare(struct vm_config *cfg, const char *user_kernel, const char *accel_request, struct errbuf *e)
{
	char *kernel = kernel_ensure(user_kernel, e);
	if (!kernel)
		return -1;
	char *initrd = img_initramfs_ensure(e);
	if (!initrd) {
		free(kernel);
		return -1;
	}
	const char *accel = vm_accel(accel_request, kernel, initrd, e);
	if (!accel) {
		free(kernel);
		free(initrd);
		return -1;
	}
	cfg->kernel = kernel;
	cfg->initrd = initrd;
	cfg->accel = accel;
	return 0;
}

void guest_config_free(struct vm_config *cfg)
{
	free((char *)cfg->kernel);
	free((char *)cfg->initrd);
	strvec_free(&cfg->drives);
	cfg->kernel = cfg->initrd = NULL;
}

int guest_add_fs_disk(struct vm_config *cfg, const char *dir, const char *fs, long long size, struct errbuf *e)
{
	char *base = img_base_ensure(fs, size, NULL, e);
	if (!base)
		return -1;
	char *ov = xasprintf("%s/%s.qcow2", dir, fs);
	int r = vm_overlay_create(base, ov, e);
	if (r == 0)
		strvec_pushf(&cfg->drives, "file=%s,format=qcow2", ov);
	free(ov);
	free(base);
	return r;
}

void guest_barrier_syscalls(const char *user_kernel, long *nr_fbarrier, long *nr_fdatabarrier)
{
	*nr_fbarrier = *nr_fdatabarrier = -1;
	if (user_kernel)
		return;
	char *tree = kernel_tree();
	if (!tree)
		return;
	char *tbl = xasprintf("%s/arch/x86/entry/syscalls/syscall_64.tbl", tree);
	struct sbuf sb = SBUF_INIT;
	if (read_file(tbl, &sb) == 0) {
		char *save = NULL;
		for (char *line = strtok_r(sb.buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
			long nr;
			char abi[32], name[64];
			if (line[0] == '#' || sscanf(line, "%ld %31s %63s", &nr, abi, name) != 3)
				continue;
			if (!strcmp(name, "fbarrier"))
				*nr_fbarrier = nr;
			else if (!strcmp(name, "fdatabarrier"))
				*nr_fdatabarrier = nr;
		}
	}
	sbuf_free(&sb);
	free(tbl);
	free(tree);
}
