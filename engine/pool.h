/*
 * pool.h - a backend (engine/backend.h) whose guests live across many
 * recordings and checks: per file system one recording guest with a pool
 * of test disks (one recording each) and one checker guest that is sent
 * each recording's write log over the channel. It saves the two boots per
 * fs run that backend_qemu pays.
 *
 * One pool per thread: a pool is not thread-safe itself, but it keeps no
 * process-global mutable state, so pools can run in threads side by side.
 */
#ifndef CRASHLAB_ENGINE_POOL_H
#define CRASHLAB_ENGINE_POOL_H

#include <stddef.h>

#include "engine/backend.h"

struct pool_opts {
	const struct vm_config *guest; /* kernel, initrd, accel, mem */
	int slots;                     /* recordings per recording guest: the regions of its disk (0: 128) */
	const char *dir;               /* where its disk's overlay and log live (a private folder the pool may fill and empty) */
	int max_fs;                    /* file systems with live guests at once (0: no limit); the least recently
	                                * used one's guests stop to make room */
};

struct pool_stats {
	size_t record_boots, checker_boots, recordings, checks, guest_failures;
};

/* A backend whose guests live: per fs one recording guest and one checker
 * guest, reused across record / checker_start calls. The record call has
 * record_qemu's contract (rec->log_path is "<workdir>/<fs>.log", the
 * console kept beside it); a recording takes the next unused region of
 * the fs's recording guest's disk, the guest booted anew when its regions
 * are used up or the recording needs other options (size, mkfs or mount
 * options, guest). The power cut is QMP's stop (every in-flight request
 * drained), the recording's part of the log cut out, cont, and the guest
 * lets go of that region. checker_start
 * returns the fs's live checker guest with the recording's log sent to it
 * (a log bigger than POOL_LOG_SEND_MAX gets a checker of its own, with the
 * log as a disk, stopped at checker_stop); checker_stop keeps a live guest
 * unless failed, which kills it (a new one is booted on the next
 * checker_start). A guest that fails is never reused: it counts in
 * guest_failures. */
const struct backend *pool_backend_new(const struct pool_opts *o);
void pool_backend_stats(const struct backend *b, struct pool_stats *st);
/* Stop every guest, remove every slot file. */
void pool_backend_free(const struct backend *b);

/* Logs up to this size are sent to the live checker guest over the
 * channel. Under TCG the channel carries 70-90 MiB/s (16 to 120 MiB logs),
 * so 64 MiB costs under a second, less than the boot and power-off of a
 * checker guest of its own (about 2 s), and keeps the guest's tmpfs, which
 * also holds each state's copy-on-write store, well below its RAM. */
#define POOL_LOG_SEND_MAX (64LL << 20)

#endif
