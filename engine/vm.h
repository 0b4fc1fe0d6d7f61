/*
 * vm.h - QEMU guests: launch, the channel to the agent, health.
 *
 * One struct lab_vm is one QEMU process running our kernel and initramfs.
 * Every wait is bounded by a timeout multiplied by the accelerator's
 * slowdown factor (1 under KVM, LAB_TCG_SLOWDOWN under TCG), and every way a
 * guest can fail is an outcome with its own exit code.
 */
#ifndef CRASHLAB_VM_H
#define CRASHLAB_VM_H

#include <stdbool.h>
#include <sys/types.h>

#include "core/proto.h"
#include "host/util.h"

#define LAB_TCG_SLOWDOWN 8.0

enum lab_outcome {
	LAB_OK = 0,
	LAB_PANIC,          /* the guest kernel panicked (console says so) */
	LAB_TIMEOUT,        /* the agent answered, then a command did not finish in time */
	LAB_NO_OUTPUT,      /* the agent never said hello within the boot timeout */
	LAB_LOST,           /* QEMU exited or the channel closed unexpectedly */
	LAB_QEMU_FAILED,    /* QEMU could not start, or exited at once */
};

const char *lab_outcome_name(enum lab_outcome o);
int lab_outcome_exit(enum lab_outcome o);

struct lab_vm_config {
	const char *kernel;      /* bzImage */
	const char *initrd;      /* initramfs */
	const char *accel;       /* "kvm" or "tcg" (resolved) */
	struct strvec drives;    /* full -drive specs (file=...,format=...) */
	const char *append;      /* extra kernel command line, or NULL */
	int mem_mb;
	bool shell;              /* console on the user's terminal, shell mode */
};

struct lab_vm {
	pid_t pid;
	int chan;                /* connected virtio-serial socket, or -1 */
	int console;             /* read end of QEMU's stdout (serial console), or -1 */
	char *dir;               /* private temp dir (socket) */
	struct strvec argv;      /* the QEMU command line */
	struct lab_proto_reader rd;
	struct sbuf console_log; /* bounded tail of the serial console */
	double slowdown;
	double t_start;          /* when QEMU was started */
	double t_ready;          /* when the agent said hello */
	char kernel_release[128];
	int exit_status;         /* QEMU's wait status once reaped, else -1 */
	uint32_t next_seq;
};

/* Resolve --accel auto|kvm|tcg into "kvm" or "tcg", probing KVM with a real
 * short boot when needed; the answer is cached per machine. */
const char *lab_vm_accel(const char *requested, const char *kernel, const char *initrd);

/* The cached accelerator answer for this machine ("kvm"/"tcg", with the
 * reason appended to why), or NULL when KVM was never probed here. */
const char *lab_vm_accel_cached(struct sbuf *why);

/* Build the QEMU command line for cfg into vm->argv (no side effects). */
void lab_vm_command(struct lab_vm *vm, const struct lab_vm_config *cfg, const char *sock);

/* Start QEMU and wait for the agent's hello (boot timeout scaled). */
enum lab_outcome lab_vm_start(struct lab_vm *vm, const struct lab_vm_config *cfg);

/* Run argv in the guest; stream its stdout/stderr to out_fd/err_fd; wait at
 * most timeout_s wall seconds (0 = the default command timeout, scaled).
 * On LAB_OK *status is the command's exit status. */
enum lab_outcome lab_vm_exec(struct lab_vm *vm, char *const *argv, int out_fd, int err_fd,
			     double timeout_s, int *status);

/* Same, collecting stdout+stderr into out. */
enum lab_outcome lab_vm_run(struct lab_vm *vm, char *const *argv, struct sbuf *out,
			    double timeout_s, int *status);

/* Send one request (SESSION, OP, CHECK) and wait for its answer: the
 * answer's type (RESULT, STATE or ERROR) and payload. Timeout as above. */
enum lab_outcome lab_vm_request(struct lab_vm *vm, uint8_t type, uint16_t flags, uint32_t seq,
				const void *payload, uint32_t len, double timeout_s, uint8_t *reply_type,
				struct sbuf *reply);

/* Ask the agent to power off; kill QEMU if it does not exit in time. */
void lab_vm_stop(struct lab_vm *vm);
/* Cut the power: SIGKILL QEMU at once. */
void lab_vm_kill(struct lab_vm *vm);
/* Free everything (kills QEMU if still running). */
void lab_vm_free(struct lab_vm *vm);

/* One line saying what went wrong (the panic message, a timeout...). */
void lab_vm_describe(struct lab_vm *vm, enum lab_outcome o, char *buf, size_t n);
/* Save the bounded console log to path. 0 or -1 + errno. */
int lab_vm_save_console(struct lab_vm *vm, const char *path);

/* Run an interactive guest with the console on this terminal (shell mode);
 * returns an exit code. */
int lab_vm_interactive(const struct lab_vm_config *cfg);

/* Explain a failed outcome in one line (plus a console excerpt) on stderr,
 * save the console log in the cache, and return the exit code. */
int lab_vm_report(struct lab_vm *vm, enum lab_outcome o);

/* A throw-away qcow2 overlay over a raw base image (qemu-img), so a guest
 * can write while the cached base stays pristine. 0, or -1 with err set. */
int lab_overlay_create(const char *base, const char *overlay, struct sbuf *err);

/* Is -sandbox supported by this QEMU? (cached) */
bool lab_qemu_has_sandbox(void);
/* The QEMU binary name. */
const char *lab_qemu_binary(void);

#endif
