/* guest.c - see guest.h. */
#include "engine/guest.h"

#include <stdlib.h>

#include "images/basedisk.h"
#include "images/initramfs.h"
#include "kbuild/kbuild.h"

void lab_guest_prepare(struct lab_vm_config *cfg, const char *accel_request)
{
	cfg->kernel = lab_kernel_ensure();
	cfg->initrd = img_initramfs_ensure();
	cfg->accel = lab_vm_accel(accel_request, cfg->kernel, cfg->initrd);
}

void lab_guest_add_fs_disk(struct lab_vm_config *cfg, const char *dir, const char *fs, long long size)
{
	char *base = img_base_ensure(fs, size, NULL);
	char *ov = xasprintf("%s/%s.qcow2", dir, fs);
	struct sbuf err = SBUF_INIT;
	if (lab_overlay_create(base, ov, &err) < 0)
		die_code(EXIT_GUEST, "%s", err.buf);
	strvec_pushf(&cfg->drives, "file=%s,format=qcow2", ov);
	free(ov);
	free(base);
}
