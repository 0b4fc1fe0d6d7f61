/*
 * guest.h - everything a command needs before booting a guest: the kernel
 * (built or --kernel), the initramfs (built), and the accelerator.
 */
#ifndef CRASHLAB_GUEST_H
#define CRASHLAB_GUEST_H

#include "vm.h"

/* Fill cfg->kernel, cfg->initrd and cfg->accel, building what is missing. */
void lab_guest_prepare(struct lab_vm_config *cfg, const char *accel_request);

#endif
