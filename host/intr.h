/*
 * intr.h - SIGINT, SIGTERM and SIGHUP as a request to stop.
 *
 * A long command (run) installs the handler once; the first signal only
 * records which one came, and every wait of the engine (the guest channel,
 * a child program, the loop over crash states) asks intr_pending() at
 * least every 200 ms, so the work stops within a fraction of a second with
 * everything stored so far intact. A second signal of the same kind means
 * "now": the default action runs (the database is never half-written,
 * since each group of rows is one transaction; a run left 'running' is
 * found stale by its lock and can be resumed).
 */
#ifndef CRASHLAB_HOST_INTR_H
#define CRASHLAB_HOST_INTR_H

/* Install the handlers for SIGINT, SIGTERM and SIGHUP (idempotent). */
void intr_install(void);
/* The signal that asked us to stop, or 0. */
int intr_pending(void);
/* The exit code of a command stopped by that signal: 128 + its number (130 for SIGINT). */
int intr_exit_code(void);
/* Forget a pending request (tests). */
void intr_clear(void);

#endif
