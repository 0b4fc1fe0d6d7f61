/*
 * workload-priv.h - what the workload parser (workload.c) shares with the
 * [expect] parser (workload-expect.c): tokens, the parse context, argument
 * readers and their messages. Not for use outside core/workload*.c.
 */
#ifndef CRASHLAB_CORE_WORKLOAD_PRIV_H
#define CRASHLAB_CORE_WORKLOAD_PRIV_H

#include <stddef.h>
#include <stdint.h>

#include "core/err.h"
#include "core/workload.h"

struct tok {
	char *s;          /* decoded text, NUL-terminated (may hold NULs if quoted) */
	size_t len;
	int col;          /* 1-based column of the first character */
	int end;          /* column just past the token */
	int quoted;
	const char *raw;  /* the token as written in the line */
	size_t rawlen;
};

struct toks {
	struct tok *v;
	size_t n, cap;
};

struct pctx {
	const char *file;
	int line;
	struct errbuf *e;
};

struct opdef {
	const char *name;
	enum wl_kind kind;
	const char *usage;
};

struct args {
	const struct pctx *c;
	const struct opdef *def;
	struct tok *v;    /* the arguments (the op keyword excluded) */
	size_t n;
	int endcol;       /* where a missing argument would have been */
};

/* "file:line:col: what" into the context's errbuf (code 65). */
void wl_perr(const struct pctx *c, int col, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* A token for a message, shortened and without control bytes. */
const char *wl_shown(const struct tok *k, char *buf, size_t size);
/* 1 (with a message) when argument i is missing. */
int wl_missing(const struct args *a, size_t i, const char *what);
int wl_parse_num(const struct args *a, size_t i, const char *what, int64_t *out);
int wl_parse_mode(const struct args *a, size_t i, uint32_t *out);

/* workload-expect.c */
int wl_parse_expect(const struct pctx *c, const struct toks *t, const char *fs, const char *line, size_t len,
		    const struct wl_workload *w, struct wl_expect *x);
void wl_expect_free(struct wl_expect *x);
void wl_expect_copy(struct wl_expect *d, const struct wl_expect *x);

#endif
