/*
 * export.h - a stored finding taken out of the lab, so it can go upstream
 * or to a colleague (crashlab export, cmd/export.c):
 *
 *   image     the crash state's disk, rebuilt on the host from the fs run's
 *             base image, its write log and the state's spec (wlog_apply:
 *             plain file writes, never a mount), raw or converted to qcow2;
 *             and checked again in a checker guest on request
 *   c         a standalone C program making the workload's system calls as
 *             the in-guest agent makes them (images/agent/ops.c), printing
 *             each op's result in the stored form
 *   xfstests  a tests/generic/NNN script and its golden NNN.out: the ops as
 *             shell and xfs_io commands over dm-flakey, a power cut, then
 *             what a model promised at the paths the finding is about
 *   wl        the workload as a .wl file
 *
 * The generators only fill buffers; cmd/export.c writes the files.
 */
#ifndef CRASHLAB_ENGINE_EXPORT_H
#define CRASHLAB_ENGINE_EXPORT_H

#include <stdint.h>

#include "core/util.h"
#include "engine/result.h"
#include "engine/vm.h"

/* What is exported: a run, one of its fs runs (ops and results read) and
 * one of its states (with its tree and verdicts). */
struct export_src {
	const struct run_info *run;
	const struct fsrun *fr;
	const struct state_result *st;
};

/* Rebuild the state's disk into the new file out (refused if it exists):
 * the base image copied (its holes kept), the state's spec applied from
 * the write log. *bytes (may be NULL) gets the bytes the spec wrote. 0, or
 * -1 with e (66: the base image or the log is gone from the cache; 65: the
 * log or the spec is malformed; 73: out cannot be written). */
int export_image(const struct fsrun *fr, const struct state_result *st, const char *out, uint64_t *bytes,
		 struct errbuf *e);
/* Convert a raw image to qcow2 with qemu-img. 0, or -1 with e. */
int export_qcow2(const char *raw, const char *qcow2, struct errbuf *e);
/* Check a rebuilt raw image again in a checker guest of guest's kernel:
 * the image as the base, the fs run's write log with nothing replayed
 * (spec "prefix=0"), mounted with the fs run's options. rep gets the
 * report. 0, or -1 with e (the guest's failure). */
int export_verify(const struct vm_config *guest, const struct fsrun *fr, const char *image, struct check_report *rep,
		  struct errbuf *e);

/* The notes beside an export: run, fs, mkfs and mount options, the state,
 * what it showed and what the judge found there (text). */
void export_notes(struct sbuf *out, const struct export_src *x, const char *what);

/* The standalone C program of the fs run's workload (every op, [setup]
 * then its sync then [run]), and the stored results in the lines it
 * prints. */
void export_c(struct sbuf *out, const struct export_src *x, const char *name);
void export_c_expected(struct sbuf *out, const struct fsrun *fr);

/* The xfstests test: the ops up to the one that made the promises of
 * model (or, model < 0, of the first model with a LOST in the state: the
 * fs's own, posix, somc, the others, sequential last), a power cut, then
 * what the model promised at each path it judged. 0, or -1 with e (65: no LOST and no
 * model given; an op xfs_io and the shell cannot express). *used_model
 * gets the model. */
int export_xfstests(struct sbuf *script, struct sbuf *golden, const struct export_src *x, const char *number,
		    int model, int *used_model, struct errbuf *e);
/* The helpers of xfstests the generated test may call, NULL-terminated
 * (each checked against xfstests' common/ files). */
extern const char *const export_xfstests_helpers[];

/* The workload as a .wl file: a comment saying where it comes from, then
 * the stored text. */
void export_wl(struct sbuf *out, const struct export_src *x);

#endif
