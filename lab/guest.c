/* guest.c - see guest.h. */
#include "guest.h"

#include "images/initramfs.h"
#include "kbuild.h"

void lab_guest_prepare(struct lab_vm_config *cfg, const char *accel_request)
{
	cfg->kernel = lab_kernel_ensure();
	cfg->initrd = img_initramfs_ensure();
	cfg->accel = lab_vm_accel(accel_request, cfg->kernel, cfg->initrd);
}
