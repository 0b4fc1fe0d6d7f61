/*
 * vm.h - QEMU guests: launch, the channel to the agent, health.
 *
 * One struct vm is one QEMU process running our kernel and initramfs.
 * Every wait is bounded by a timeout multiplied by the accelerator's
 * slowdown factor (1 under KVM, VM_TCG_SLOWDOWN under TCG), and every way a
 * guest can fail is an outcome with its own exit code. The tests (and only
 * they) set the factor with CRASHLAB_TEST_SLOWDOWN=F, 0 < F <= 100, to reach
 * the deadlines of a guest that never answers in seconds.
 */
#ifndef CRASHLAB_ENGINE_VM_H
#define CRASHLAB_ENGINE_VM_H

#include <stdbool.h>
#include <sys/types.h>

#include "core/proto.h"
#include "core/util.h"

#define VM_TCG_SLOWDOWN 8.0

enum vm_outcome {
	VM_OK = 0,
	VM_PANIC,          /* the guest kernel panicked (console says so) */
	VM_TIMEOUT,        /* the agent answered, then a command did not finish in time */
	VM_NO_OUTPUT,      /* the agent never said hello within the boot timeout */
	VM_LOST,           /* QEMU exited or the channel closed unexpectedly */
	VM_QEMU_FAILED,    /* QEMU could not start, or exited at once */
	VM_INTERRUPTED,    /* we were asked to stop (SIGINT, SIGTERM: host/intr.h); QEMU is killed */
};

const char *vm_outcome_name(enum vm_outcome o);
int vm_outcome_exit(enum vm_outcome o);

struct vm_config {
	const char *kernel;      /* bzImage */
	const char *initrd;      /* initramfs */
	const char *accel;       /* "kvm" or "tcg" (resolved) */
	struct strvec drives;    /* full -drive specs (file=...,format=...) */
	const char *blk_opts;    /* extra virtio-blk-pci properties of every drive ("request-merging=off"), or NULL */
	const char *drive_opts;  /* extra -drive options of every drive ("werror=report"), or NULL */
	const char *append;      /* extra kernel command line, or NULL */
	int mem_mb;
	bool shell;              /* console on the user's terminal, shell mode */
	bool qmp;                /* a QMP monitor socket too (vm_qmp), for a guest that lives (engine/pool.c) */
	bool libvirt;            /* a transient libvirt domain instead of a QEMU we start (engine/vm-libvirt.c) */
	const char *connect;     /* with libvirt: the connection URI, or NULL for libvirt's default */
};

struct vm {
	pid_t pid;
	int chan;                /* connected virtio-serial socket, or -1 */
	int console;             /* read end of QEMU's stdout (serial console), or -1 */
	int qmp;                 /* the QMP monitor, capabilities negotiated, or -1 (vm_config.qmp) */
	struct sbuf qmp_in;      /* what the monitor sent that is not a whole line yet */
	char *dir;               /* private temp dir (socket) */
	struct strvec argv;      /* the QEMU command line */
	struct proto_reader rd;
	struct sbuf console_log; /* bounded tail of the serial console */
	double slowdown;
	double t_start;          /* when QEMU was started */
	double t_ready;          /* when the agent said hello */
	char kernel_release[128];
	int exit_status;         /* QEMU's wait status once reaped, else -1 */
	uint32_t next_seq;
	char why[256];           /* a host-side reason for the last failure (channel, fork), or "" */
	bool libvirt;            /* a libvirt domain (vm_config.libvirt), not a child process */
	void *lv_conn, *lv_dom;  /* with libvirt: the connection and the running domain, or NULL */
	char *tcp_host;          /* a remote libvirt's host: channel, console and QMP are TCP ports there; or NULL */
	int chan_port, con_port, qmp_port;
};

/* A TCP connection to host:port (CLOEXEC), or -1 with errno. */
int vm_connect_tcp(const char *host, int port);

/* Is the guest's QEMU (or domain) still there, as far as we know? */
bool vm_running(const struct vm *vm);

/* Resolve --accel auto|kvm|tcg into "kvm" or "tcg", probing KVM with a real
 * short boot when needed; the answer is cached per machine. */
const char *vm_accel(const char *requested, const char *kernel, const char *initrd, struct errbuf *e);

/* The cached accelerator answer for this machine ("kvm"/"tcg", with the
 * reason appended to why), or NULL when KVM was never probed here. */
const char *vm_accel_cached(struct sbuf *why);

/* Build the QEMU command line for cfg into vm->argv (no side effects). */
void vm_command(struct vm *vm, const struct vm_config *cfg, const char *sock);

/* Start QEMU and wait for the agent's hello (boot timeout scaled). */
enum vm_outcome vm_start(struct vm *vm, const struct vm_config *cfg);

/* Run argv in the guest; stream its stdout/stderr to out_fd/err_fd; wait at
 * most timeout_s wall seconds (0 = the default command timeout, scaled).
 * On VM_OK *status is the command's exit status. */
enum vm_outcome vm_exec(struct vm *vm, char *const *argv, int out_fd, int err_fd,
			     double timeout_s, int *status);

/* Same, collecting stdout+stderr into out. */
enum vm_outcome vm_run(struct vm *vm, char *const *argv, struct sbuf *out,
			    double timeout_s, int *status);

/* Send one request (SESSION, OP, CHECK) and wait for its answer: the
 * answer's type (RESULT, STATE or ERROR) and payload. Timeout as above. */
enum vm_outcome vm_request(struct vm *vm, uint8_t type, uint16_t flags, uint32_t seq,
				const void *payload, uint32_t len, double timeout_s, uint8_t *reply_type,
				struct sbuf *reply);

/* Send one frame that is not answered (a chunk of a LOG): VM_OK, or how
 * the guest failed (a send blocked past timeout_s wall seconds, 0 = the
 * default command timeout, is a timeout). */
enum vm_outcome vm_send(struct vm *vm, uint8_t type, uint16_t flags, uint32_t seq, const void *payload,
			uint32_t len, double timeout_s);

/* One QMP command (a JSON object, e.g. {"execute":"stop"}) to a guest
 * started with vm_config.qmp; reply (may be NULL) gets QEMU's answer line.
 * 0 when QEMU answered "return", -1 (reply says why, vm->why too) when it
 * answered an error, the monitor is gone or it did not answer in time.
 * QEMU's stop drains every in-flight request before it answers. */
int vm_qmp(struct vm *vm, const char *cmd, struct sbuf *reply);

/* Ask the agent to power off; kill QEMU if it does not exit in time. */
void vm_stop(struct vm *vm);
/* Cut the power: SIGKILL QEMU at once. */
void vm_kill(struct vm *vm);
/* Free everything (kills QEMU if still running). */
void vm_free(struct vm *vm);

/* One line saying what went wrong (the panic message, a timeout...). */
void vm_describe(struct vm *vm, enum vm_outcome o, char *buf, size_t n);
/* Save the bounded console log to path. 0 or -1 + errno. */
int vm_save_console(struct vm *vm, const char *path);

/* Run an interactive guest with the console on this terminal (shell mode);
 * returns an exit code. */
int vm_interactive(const struct vm_config *cfg);

/* A failed outcome as an error: one line saying what happened, the last
 * console lines, where the whole console log was saved (the cache's
 * logs/last-console.log). Returns the exit code, which e also carries. */
int vm_failure(struct vm *vm, enum vm_outcome o, struct errbuf *e);

/* A throw-away qcow2 overlay over a raw base image (qemu-img), so a guest
 * can write while the cached base stays pristine. 0, or -1 with err set. */
int vm_overlay_create(const char *base, const char *overlay, struct errbuf *e);

/* The guest kernel's command line for cfg (malloc'd). */
char *vm_kernel_cmdline(const struct vm_config *cfg);

/* The libvirt backend (engine/vm-libvirt.c), for vm.c. Create and start the
 * transient domain equivalent to vm_command's command line, its console the
 * FIFOs vm->dir/console.{in,out} (vm->console reads, *con_in writes) and
 * its channel bound to sock (NULL: none); 0, or -1 with vm->why. */
int vm_libvirt_create(struct vm *vm, const struct vm_config *cfg, const char *sock, int *con_in);
/* Has the domain shut off (or vanished)? Releases it when so. */
bool vm_libvirt_gone(struct vm *vm);
/* Destroy the domain (the power cut) and release it. */
void vm_libvirt_destroy(struct vm *vm);
/* Drop the handles without touching the domain. */
void vm_libvirt_release(struct vm *vm);
/* The host a libvirt URI names ("qemu+ssh://user@host:22/system": "host";
 * malloc'd), or NULL for this machine (no host, or localhost). */
char *vm_libvirt_uri_host(const char *uri);
/* vm_interactive through libvirt. */
int vm_libvirt_interactive(const struct vm_config *cfg);

/* Is -sandbox supported by this QEMU? (cached) */
bool vm_qemu_has_sandbox(void);
/* The QEMU binary name. */
const char *vm_qemu_binary(void);

#endif
