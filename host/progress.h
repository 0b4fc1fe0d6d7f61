/*
 * progress.h - one progress line for long steps (kernel build, extraction,
 * image builds).
 *
 * On a terminal the line is redrawn in place on stderr:
 *     building kernel [#######.....]  58%  2m10s  CC fs/ext4/inode.o
 * When stderr is not a terminal (CI logs) a plain line is printed each time
 * another tenth of the work is done. With --quiet nothing is printed. The
 * percentage stays at 99% or below until progress_done(), so a too small
 * estimate of the total never shows a finished bar for unfinished work.
 * Messages from error()/note() clear the line before they print, so they
 * never interleave with it.
 */
#ifndef CRASHLAB_HOST_PROGRESS_H
#define CRASHLAB_HOST_PROGRESS_H

#include <stdint.h>

struct progress;

/* Start a progress line; total is the expected amount of work (any unit), 0 when unknown. */
struct progress *progress_start(const char *title, uint64_t total);
/* done units of work are finished; step names what is happening now (may be NULL). */
void progress_update(struct progress *p, uint64_t done, const char *step);
/* Redraw only to advance the elapsed time (call about once a second while waiting). */
void progress_tick(struct progress *p);
/* Seconds since progress_start(). */
double progress_elapsed(const struct progress *p);
/* Clear the line, print final_msg (if not NULL) as a note, and free p. */
void progress_done(struct progress *p, const char *final_msg);
/* Clear the line without a message and free p (before an error is printed). */
void progress_abort(struct progress *p);
/* "9s", "2m10s", "1h02m" into buf (at least 16 bytes). */
const char *progress_fmt_time(double seconds, char *buf, unsigned size);

#endif
