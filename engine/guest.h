/*
 * guest.h - everything a command needs before booting a guest: the kernel
 * (built or --kernel), the initramfs (built), and the accelerator.
 */
#ifndef CRASHLAB_GUEST_H
#define CRASHLAB_GUEST_H

#include "engine/vm.h"

/* Fill cfg->kernel, cfg->initrd and cfg->accel, building what is missing. */
void lab_guest_prepare(struct lab_vm_config *cfg, const char *accel_request);

/* Attach a fresh file system of type fs (a throw-away qcow2 overlay in dir
 * over the cached base image of that size) as the next disk. */
void lab_guest_add_fs_disk(struct lab_vm_config *cfg, const char *dir, const char *fs, long long size);

#endif
