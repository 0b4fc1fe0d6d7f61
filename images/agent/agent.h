/*
 * agent.h - the pieces of the in-guest agent (static, libc only).
 *   agent.c    PID 1: pseudo file systems, the channel, EXEC/SHUTDOWN
 *   ops.c      carries out workload ops with the real system calls
 *   capture.c  walks a mounted tree into tree_node lines (core/tree.h)
 *   overlay.c  the overlay of an [overlay] workload, for both of them
 */
#ifndef CRASHLAB_IMAGES_AGENT_AGENT_H
#define CRASHLAB_IMAGES_AGENT_AGENT_H

#include <stdint.h>
#include <stdio.h>

#include "core/kv.h"
#include "core/util.h"
#include "core/workload.h"

struct agent_ops;
/* mountpoint: the directory paths are relative to. nr_fbarrier and
 * nr_fdatabarrier: syscall numbers from the built kernel's headers, or -1
 * when unknown (the op then fails with ENOSYS, as on a kernel without them). */
struct agent_ops *agent_ops_new(const char *mountpoint, long nr_fbarrier, long nr_fdatabarrier);
void agent_ops_exec(struct agent_ops *a, const struct wl_op *op, struct op_result *r);
/* Close every open file and free. */
void agent_ops_free(struct agent_ops *a);

/* Write one tree_node line per entry under dir (sorted by path, the root
 * itself excluded) to out. 0, or -1 with errno. */
int agent_capture_tree(const char *dir, FILE *out);

/* An [overlay] workload's layers: make the directories lower, upper and
 * work in dir (the mounted fs under test), and mount the overlay over those
 * of layers at merged (made when missing). 0, or -1 with errno. */
int agent_overlay_layers(const char *dir);
int agent_overlay_mount(const char *layers, const char *merged);

/* The checker: builds crash states as device-mapper snapshots of the
 * origin (the base image) with copy-on-write in RAM, applies a state's
 * writes from the write log, mounts, captures, unmounts and runs fsck.
 * request: the CHECK payload ("key=value\n": fs, spec, mount_opts, fsck,
 * overlay);
 * reply: the STATE payload (malloc'd). 0, or -1 with e. */
struct agent_checker;
struct agent_checker *agent_checker_new(const char *origin, const char *logdev, struct errbuf *e);
/* Let go of everything the checker holds (the log, the store and its loop
 * device, a snapshot left behind), so another can be made over a new log. */
void agent_checker_free(struct agent_checker *c);
/* The kernel's recent messages, one line each, joined with " | ". */
void agent_kernel_tail(char *out, size_t outlen);
int agent_checker_run(struct agent_checker *c, const char *request, size_t len, char **reply, size_t *reply_len,
		      struct errbuf *e);

/* main() when the agent binary is run by hand, not as PID 1:
 *   crashlab-agent run-ops MOUNTDIR FILE.wl [--fbarrier NR --fdatabarrier NR]
 *       runs every op of the workload, printing "op-line<TAB>ret<TAB>errno<TAB>ino<TAB>ino2"
 *   crashlab-agent tree DIR
 *       prints the observed tree of DIR */
int agent_tool_main(int argc, char **argv);

#endif
