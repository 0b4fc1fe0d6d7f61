/*
 * msg.h - messages on stderr, git's way: `error` (returns -1), `warning`,
 * `note` (progress and hints, silent with --quiet), each one line written at
 * once so it never interleaves with a progress line. Lowercase, subject
 * quoted, no trailing period. How chatty to be is set once by cmd/ from
 * --verbose / --quiet (msg_configure) and read with msg_verbose() and
 * msg_quiet(): a setting of this module, not a CLI global.
 */
#ifndef CRASHLAB_HOST_MSG_H
#define CRASHLAB_HOST_MSG_H

#include "core/util.h"

int error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void warning(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* An errbuf as "crashlab: error: <first line>", the further lines as they are. */
void error_print(const struct errbuf *e);

/* verbose: 0 quiet-ish default, 1 show command lines, 2 also the guest console. */
void msg_configure(int verbose, int quiet);
int msg_verbose(void);
int msg_quiet(void);

#endif
