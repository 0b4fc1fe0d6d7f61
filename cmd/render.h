/*
 * render.h - what the views (run, show, report) share to put results on a
 * terminal or into JSON: the run table, op results and errno names, bytes
 * made safe for a terminal, a tree node's mode string, runs of equal block
 * tokens, timeline marks, and JSON strings that are always valid UTF-8.
 * Renderers only read the types of engine/result.h; they never query.
 */
#ifndef CRASHLAB_CMD_RENDER_H
#define CRASHLAB_CMD_RENDER_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#include "core/tree.h"
#include "engine/result.h"
#include "engine/runner.h"

/* The table `crashlab run` ends with: per fs its states, mount and fsck
 * failures, distinct trees and time; then per fs and selected model the
 * LOST, broken, bonus, kept and gone counts. */
void render_run_table(FILE *f, const struct run_info *run, const struct fs_summary *sums, size_t n);

/* "ENOENT", or "errno N" for a number glibc does not name. */
const char *render_errno_name(int err, char buf[24]);
/* "ok", "ok (5)", or "-1 ENOENT". */
void render_op_result(const struct op_result *r, char *buf, size_t len);

/* Text from the store or a guest (a message, a reason, a line of fsck
 * output) on a terminal, escaped as prose (sbuf_add_escaped): one line, a
 * newline in it shown as \n. render_lines keeps the newlines and tabs of n
 * bytes of text (a workload, simulator notes, a line of fsck output). */
void render_puts(FILE *f, const char *s);
void render_put(FILE *f, const char *s, size_t n);
void render_lines(FILE *f, const char *s, size_t n);
/* Mostly text: at most one byte in eight is neither printable, whitespace nor UTF-8. */
bool render_printable_ish(const unsigned char *s, size_t n);
bool render_utf8_valid(const unsigned char *s, size_t n);
/* "drwxr-xr-x" for a node. */
void render_mode_string(const struct tree_node *t, char out[11]);
/* Call fn for each run of equal tokens in a blocks field ("p5,p5,z" -> p5 x2, z x1). */
void render_block_runs(const char *blocks, void (*fn)(void *ctx, const char *tok, size_t len, size_t count), void *ctx);
/* The words of a timeline mark (judge/explain.h EX_MARK_*). */
const char *render_mark_word(char m);
/* "%.0f ms"-like short time ("1.2s", "3m04s"). */
const char *render_time(double seconds, char *buf, unsigned size);

/* A JSON string of n bytes: valid UTF-8 as is, any other byte read as
 * Latin-1 (U+0080..U+00FF), so the document is always valid. NULL data: null. */
json_t *render_json_bytes(const void *data, size_t n);
json_t *render_json_str(const char *s);
/* A tree in path order, '/' below every other byte, so children follow
 * their directory ("A", "A/x", "A-b"). */
void render_tree_sort(struct tree_node *nodes, size_t n);
/* One line per node, columns aligned: mode, links, owner, size, path, the
 * link target, the content (inline text, or one token per 4 KiB block,
 * 'p5' the pattern op 5 wrote, 'z' zeros, 'p5×16' a run), xattrs. */
void render_tree_text(FILE *f, const char *indent, const struct tree_node *nodes, size_t n);
/* The same as a JSON array of objects (content as a string when valid UTF-8, else content_hex). */
json_t *render_json_tree(const struct tree_node *nodes, size_t n);
/* How a run was made, as a JSON object: id, times, status, exit code, command,
 * accelerator, kernel, crash mode, seed, limits, workload file and text. */
json_t *render_json_run(const struct run_info *r);
/* A verdict as a JSON object: model, rule, verdict, op, trigger, path, expected, observed, reason, cite. */
json_t *render_json_verdict(const struct verdict *v);

/* STATE as the user typed it: a state index ("2"), or the LABEL of a
 * `mark LABEL` op ("@LABEL" too), naming the first state (in index order)
 * in which the mark had completed. The position of that state in st, or
 * -1 with e (2: neither; 66: no such state, listing what there is). */
int render_state_arg(const struct fsrun *f, const struct state_result *st, size_t nst, const char *arg,
		     struct errbuf *e);

/* Print a JSON document (indented, keys in insertion order) and a newline. */
void render_json_print(json_t *doc);

#endif
