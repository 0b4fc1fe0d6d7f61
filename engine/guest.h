/*
 * guest.h - everything a command needs before booting a guest: the kernel
 * (built, or the user's --kernel), the initramfs (built), the accelerator,
 * the barrier calls' syscall numbers, and fresh file-system disks.
 */
#ifndef CRASHLAB_ENGINE_GUEST_H
#define CRASHLAB_ENGINE_GUEST_H

#include "engine/vm.h"

/* Fill cfg->kernel, cfg->initrd and cfg->accel, building what is missing.
 * user_kernel: --kernel PATH, or NULL for the built one. 0, or -1 with e. */
int guest_prepare(struct vm_config *cfg, const char *user_kernel, const char *accel_request, struct errbuf *e);
void guest_config_free(struct vm_config *cfg);

/* Attach a fresh file system of type fs (a throw-away qcow2 overlay in dir
 * over the cached base image of that size) as the next disk. 0, or -1 with e. */
int guest_add_fs_disk(struct vm_config *cfg, const char *dir, const char *fs, long long size, struct errbuf *e);

/* The syscall numbers of fbarrier/fdatabarrier in the built kernel's
 * syscall table, or -1 each when the kernel has none (or is the user's). */
void guest_barrier_syscalls(const char *user_kernel, long *nr_fbarrier, long *nr_fdatabarrier);

#endif
