/*
 * wlog-priv.h - what the three files of the write log (wlog.c, wlog-spec.c,
 * wlog-apply.c) share. Not for use outside core/wlog*.c.
 */
#ifndef CRASHLAB_CORE_WLOG_PRIV_H
#define CRASHLAB_CORE_WLOG_PRIV_H

#include <stddef.h>
#include <stdint.h>

#include "core/err.h"

#define COPY_MAX (8u << 20)    /* largest single pread or pwrite of the data of one entry */

/* A log or spec that is not what it must be: the message, code 65. */
void wlog_seterr(struct errbuf *eb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* pread exactly n bytes (a short file is EIO); 0 or -1 with errno. (Writes:
 * core/util.h's pwrite_all.) */
int wlog_pread_full(int fd, void *buf, size_t n, uint64_t off);

struct wlog;
struct wlog_spec;
/* Is spec s one that can be applied to log l: indices in range and in
 * order, torn entries applied writes, torn sectors inside them? 0, or -1
 * with the message (wlog_apply's checks, shared with wlog_state_key). */
int wlog_check_spec(const struct wlog *l, const struct wlog_spec *s, struct errbuf *eb);

#endif
