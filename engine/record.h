/*
 * record.h - run a workload in a guest on one file system and record every
 * block write and flush that reaches its disk (DESIGN.md data flow step 5);
 * check.h then turns the log into crash states and judges them.
 */
#ifndef CRASHLAB_RECORD_H
#define CRASHLAB_RECORD_H

#include "engine/vm.h"
#include "core/workload.h"

struct lab_op_result {
	long ret;
	int err;
	uint64_t ino, ino2;
	double ms;
	int64_t log_pos;       /* committed log entries when the op returned */
};

struct lab_recording {
	char *overlay;         /* throw-away qcow2 over the base image */
	char *log_path;        /* the write log (dm-log-writes format) */
	char *base;            /* the cached base image */
	long long size;
	struct lab_op_result *res; /* one per workload op, in order */
	int64_t setup_end;     /* committed entries after the setup's sync */
	char *qemu_cmdline;
	enum lab_outcome outcome;
	char error[512];       /* when outcome != LAB_OK or a step failed */
	double ms;
};

struct lab_record_opts {
	const char *fs;
	const char *mkfs_opts;   /* NULL = defaults */
	const char *mount_opts;  /* NULL = defaults */
	long long size;
	const struct wl_workload *w;
	const struct lab_vm_config *guest; /* kernel, initrd, accel */
	long nr_fbarrier, nr_fdatabarrier; /* -1 when the kernel has none */
	const char *workdir;     /* where the overlay and log go */
	void (*progress)(void *ctx, size_t done, size_t total, const char *what);
	void *ctx;
};

/* Record; returns 0 when the workload ran to the end and the power was cut
 * (op failures are results), -1 when the guest failed (rec->outcome says
 * how, rec->error why). */
int lab_record(const struct lab_record_opts *o, struct lab_recording *rec);
void lab_recording_free(struct lab_recording *rec);

/* The syscall numbers of fbarrier/fdatabarrier in the built kernel's
 * syscall table, or -1 each when the kernel (or --kernel) has none. */
void lab_barrier_syscalls(long *nr_fbarrier, long *nr_fdatabarrier);

#endif
