/*
 * backend.h - how the run loop gets a workload recorded and its crash
 * states checked, whatever runs the guests. A backend is a table of four
 * calls; the QEMU backend (backend_qemu: engine/record.c records,
 * engine/checker.c checks) boots our kernel directly, a test's fake
 * backend returns a fixture write log and canned trees.
 */
#ifndef CRASHLAB_ENGINE_BACKEND_H
#define CRASHLAB_ENGINE_BACKEND_H

#include "core/proto.h"
#include "core/workload.h"
#include "core/wlog.h"
#include "engine/vm.h"

/* What to record: a workload on a fresh disk of one file system. */
struct record_opts {
	const char *fs;
	const char *mkfs_opts;   /* NULL = defaults */
	const char *mount_opts;  /* NULL = defaults */
	long long size;          /* the test disk */
	const struct wl_workload *w;
	const struct vm_config *guest; /* kernel, initrd, accel */
	long nr_fbarrier, nr_fdatabarrier; /* -1 when the kernel has none */
	const char *workdir;     /* where the overlay and the log go */
	void (*progress)(void *ctx, size_t done, size_t total, const char *what);
	void *ctx;
};

/* A recording: the write log and every op's result. */
struct recording {
	char *overlay;           /* throw-away disk over the base image (removed by the runner), or NULL */
	char *log_path;          /* the write log (dm-log-writes format) */
	char *base;              /* the cached base image */
	struct op_result *res;   /* one per workload op, in order */
	int64_t setup_end;       /* committed entries after the setup's sync */
	char *qemu_cmdline;
	enum vm_outcome outcome; /* VM_OK, or how the guest failed */
	struct errbuf err;       /* when recording failed: why (code set) */
	double ms;
};
void recording_free(struct recording *rec);

/* What a checker needs: the guest, and the disks of one recording. */
struct checker_opts {
	const struct vm_config *guest;
	const char *fs;
	const char *base;        /* the base image the log was recorded over */
	const char *log_path;
	const char *mount_opts;
	int overlay;             /* an [overlay] workload: the overlay's merged view is checked */
};

struct checker;

struct backend {
	const char *name;
	void *ctx;
	/* 0 when the workload ran to the end and the power was cut (op
	 * failures are results), -1 with rec->outcome and rec->err otherwise. */
	int (*record)(const struct backend *b, const struct record_opts *o, struct recording *rec);
	/* A checker serving many states: VM_OK, or the failure with e. *out is
	 * set either way and is stopped with checker_stop. */
	enum vm_outcome (*checker_start)(const struct backend *b, const struct checker_opts *o, struct checker **out,
					 struct errbuf *e);
	/* Check one state given by its spec: VM_OK with rep filled; VM_OK with
	 * e->code set when the checker refused the state (a bad spec, a reply it
	 * cannot read); any other outcome is the guest failing (e says how). */
	enum vm_outcome (*check)(struct checker *c, const char *spec, struct check_report *rep, struct errbuf *e);
	/* Stop the checker (killing it after a failure); console_path, when not
	 * NULL, receives its console log. */
	void (*checker_stop)(struct checker *c, int failed, const char *console_path);
};

/* Guests in QEMU, started directly. */
const struct backend *backend_qemu(void);
/* Its recording call (engine/record.c). */
int record_qemu(const struct backend *b, const struct record_opts *o, struct recording *rec);

/* The pieces record_qemu is made of, for a recording that goes on while
 * someone decides what to run next (crashlab lab): start a recording guest
 * (fresh overlay and write log in o->workdir, the fs mounted, the workload
 * session open; o->w may be NULL: rec->res is then one slot, unused), send
 * it ops one at a time, and cut its power. Each returns 0, or -1 with
 * rec->outcome and rec->err set; after a failure the guest is gone. */
struct record_session;
int record_start(const struct record_opts *o, struct recording *rec, struct record_session **out);
/* Run op; r (may be NULL) gets its result, with log_pos the committed log
 * entries when it returned. */
int record_op(struct record_session *s, const struct wl_op *op, struct op_result *r);
/* The sync that ends the setup: rec->setup_end is the committed count after it.
 * An [overlay] workload (o->w->overlay) ran [setup] in the overlay's lower
 * layer; its overlay is mounted first and the session moves there. */
int record_setup_sync(struct record_session *s);
/* The workload of o (setup, the setup's sync, ops), progress reported as
 * record_qemu reports it. 0, or -1 as record_op. */
int record_run(struct record_session *s, const struct record_opts *o);
/* The power cut (SIGKILL), the console kept beside the log; NULL is fine.
 * A slot's session (record_start_slot) is only freed: the guest's owner
 * cuts that disk's power. */
void record_stop(struct record_session *s);

/* Add a recording disk to cfg: blklogwrites over the qcow2 overlay, its
 * log in log, with the drive options every recording disk has. */
void record_add_disk(struct vm_config *cfg, const char *overlay, const char *log);

/* A test disk in a guest that is already up (engine/pool.c: one guest,
 * many disks, one recording each): the guest, the disk's device in it,
 * where to mount it, the host file its write log goes to. */
struct record_slot {
	struct vm *vm;
	const char *dev;
	const char *mnt;
	const char *log;
	/* a region of dev, which the agent makes its partition 1 for the
	 * recording (part_len 0: the whole of dev) */
	long long part_start, part_len;
	/* how far the log was complete when the recording began (a log that
	 * serves many recordings; NULL: a fresh log). Op positions count from
	 * there. */
	const struct wlog_follow *log_from;
};
/* record_start on a slot: the disk (or its region) mounted at slot->mnt, a
 * workload session opened there. The write log stays the slot's until its
 * owner copies it (or its part) to rec->log_path; rec->overlay is NULL. A
 * guest that fails is killed (vm_kill), not freed. */
int record_start_slot(const struct record_opts *o, const struct record_slot *slot, struct recording *rec,
		      struct record_session **out);
/* Is the session's guest still up (no failure)? */
int record_session_up(const struct record_session *s);
/* The console so far beside rec's log, as a recording keeps it. */
void record_keep_console(const struct recording *rec, struct vm *vm);

/* The QEMU checker's pieces (engine/checker.c), for a backend whose
 * checker guests live (engine/pool.c). checker_qemu_boot starts a checker
 * guest for o: with log_disk, o->log_path is its /dev/vdb (backend_qemu's
 * checker_start); without, it has no log until checker_qemu_load_log sends
 * one over the channel (LOG, core/proto.h), which the agent then checks
 * states against; a log the agent refuses makes every check refused (VM_OK
 * with e set). check and stop are backend_qemu's. */
enum vm_outcome checker_qemu_boot(const struct checker_opts *o, int log_disk, struct checker **out, struct errbuf *e);
enum vm_outcome checker_qemu_load_log(struct checker *c, const char *log_path, const char *mount_opts,
				      int overlay, struct errbuf *e);
enum vm_outcome checker_qemu_check(struct checker *c, const char *spec, struct check_report *rep, struct errbuf *e);
void checker_qemu_stop(struct checker *c, int failed, const char *console_path);
/* Whose the checker is (NULL for backend_qemu's own). */
void checker_qemu_set_owner(struct checker *c, void *owner);
void *checker_qemu_owner(const struct checker *c);
/* The console so far into path. 0 or -1 + errno. */
int checker_qemu_save_console(struct checker *c, const char *path);

#endif
