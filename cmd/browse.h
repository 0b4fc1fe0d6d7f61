/*
 * browse.h - what the two halves of `crashlab browse` share: the pages of
 * text a screen shows (browse-page.c builds them from the read API's types,
 * in the words and verdict characters `report` uses) and the curses side
 * that draws them, moves through them and searches them (browse.c).
 */
#ifndef CRASHLAB_CMD_BROWSE_H
#define CRASHLAB_CMD_BROWSE_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "cmd/report.h"
#include "engine/result.h"

/* How a piece of text is shown; browse.c maps each to colours (or, with
 * colours off, to bold and plain). */
enum bstyle {
	BS_PLAIN,
	BS_HEAD,      /* titles and column headers */
	BS_DIM,       /* what says little: unjudged, not completed */
	BS_KEPT,      /* = kept, as promised; persisted */
	BS_BONUS,     /* + kept beyond the promise */
	BS_NAIVE,     /* ! only a program assuming in-order persistence loses; partly persisted */
	BS_LOST,      /* L / LOST */
	BS_BROKEN,    /* B / broken */
	BS_DIFF,      /* a difference between two trees or columns */
	BS_COUNT
};

/* One line of a page: UTF-8 text, one style per byte. */
struct bline {
	char *text;
	unsigned char *style;
	size_t len, cap;
};

struct bpage {
	struct bline *l;
	size_t n, cap;
};

/* A new empty line at the end of p (valid until the next one). */
struct bline *bpage_line(struct bpage *p);
void bpage_free(struct bpage *p);
/* Append n bytes (or a C string) in style to l, as they are. */
void bline_put(struct bline *l, int style, const char *s, size_t n);
void bline_puts(struct bline *l, int style, const char *s);
void bline_printf(struct bline *l, int style, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Text from the store (a reason, a path, fsck output): escaped as prose, so
 * no byte of it can move the cursor or change the terminal. */
void bline_safe(struct bline *l, int style, const char *s);
/* Pad l with spaces to display width w. */
void bline_pad(struct bline *l, int w);
/* Display width of UTF-8 text (a byte that is not UTF-8 counts one). */
int bstr_width(const char *s, size_t n);
/* Prose made safe, wrapped at width into lines that start with indent
 * (the first line's indent is first, when not NULL). */
void bpage_wrap(struct bpage *p, int style, const char *first, const char *indent, const char *text, int width);

/* A legend ("= promised, kept   + kept, ...", items three spaces or a
 * newline apart) as lines of at most width columns, each after indent. */
void browse_legend_lines(struct bpage *p, const char *legend, const char *indent, int width);

/* A run as the browser reads it: its fs runs, each with every state's tree
 * and verdicts and the models reported (as `report` selects them). */
struct brun {
	struct run_info run;
	struct fsview *fv;
	size_t nfs;
};
struct crashdb;
int browse_read_run(struct crashdb *db, int64_t id, struct brun *out, struct errbuf *e);
void browse_run_free(struct brun *r);

/* The verdict style of a state's class in the matrix (report_state_class). */
int browse_class_style(char ch);
/* Below the matrix: the state under the cursor in a few lines. */
void browse_page_cell(struct bpage *p, const struct brun *r, size_t fs, size_t st, int width);
/* A state: observed tree beside the program's, verdicts per model, the op
 * timeline, mount and fsck output. */
void browse_page_state(struct bpage *p, const struct brun *r, size_t fs, size_t st, int width);
/* The state of fs2 at the same crash point as state st of fs1: the first
 * with the same last completed op, else the last one before it, else 0. */
size_t browse_same_point(const struct brun *r, size_t fs1, size_t st, size_t fs2);
/* Two file systems side by side at that crash point (the comparison view). */
void browse_page_compare(struct bpage *p, const struct brun *r, size_t fs1, size_t st1, size_t fs2, size_t st2,
			 int width);

#endif
