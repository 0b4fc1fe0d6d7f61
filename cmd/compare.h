/*
 * compare.h - the comparison view: for chosen crash states of one or more
 * fs runs (the final state and the worst state of each file system, or the
 * same of two runs side by side), one row per object the ops touched, one
 * column per (run, fs), each cell what the state holds there in words
 * ("hello", "op 5's data, 64 KiB", "empty", "gone") and its mark under the
 * column's model: promised and kept, kept beyond the promise, gone without
 * a promise, LOST; plus where the program's naive assumption (the
 * `sequential` model) breaks. Built from the read API's types only
 * (compare-view.c), rendered as text, markdown or JSON (compare.c) or inside
 * the HTML report (report-html.c).
 */
#ifndef CRASHLAB_CMD_COMPARE_H
#define CRASHLAB_CMD_COMPARE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "engine/result.h"

/* One fs run with its states (CRASHDB_TREE | CRASHDB_VERDICTS), as read. */
struct cmp_source {
	const struct run_info *run;
	const struct fsrun *fr;
	const struct state_result *st;
	size_t nst;
};

enum cmp_mark {
	CM_NONE,       /* no verdict names the object (not changed by [run], or not judged) */
	CM_KEPT,       /* "=" promised, and kept */
	CM_BONUS,      /* "+" kept beyond the promise */
	CM_GONE,       /* "-" gone, and nothing promised it */
	CM_LOST,       /* "LOST" promised, and gone */
	CM_BROKEN,     /* "BROKEN" a universal rule failed on it */
};

struct cmp_cell {
	char text[96];         /* what the state holds, in words */
	enum cmp_mark mark;
	bool naive;            /* the sequential model has it LOST: the program's naive assumption breaks */
};

struct cmp_col {
	int64_t run_id;
	const char *fs;
	const char *mount_opts;
	int state;             /* state index, or -1 when the fs run has no state */
	const char *kind;      /* the state's kind */
	const char *label;     /* the `mark` label of the last op completed, or NULL */
	int after_op;          /* the last op completed (the program state it is judged against) */
	int model;             /* the model the marks are under */
	char head[48];         /* "ext4" or "run 3 ext4" */
	char sub[48];          /* "state 2" */
};

struct cmp_row {
	char *path;
	char program[96];      /* what the program had there (after op `program_k`), or "" */
	struct cmp_cell *cell; /* one per column */
	bool differs;          /* the columns do not all say the same */
};

struct cmp_table {
	const char *title;     /* "final crash state", "worst crash state" */
	struct cmp_col *col;
	size_t ncol;
	struct cmp_row *row;
	size_t nrow;
	int program_k;         /* the op after which `program` is taken; -1: no program column */
	bool same_as_final;    /* the worst table: every column's worst state is its final state */
};

struct cmp_view {
	struct cmp_table t[2];
	size_t nt;
	bool many_runs;        /* columns from more than one run */
};

/* Build the final and the worst tables for sources src[0..n). model: the
 * model every column is marked under, or -1 for each fs's own (its mount
 * options included). */
void cmp_build(struct cmp_view *v, const struct cmp_source *src, size_t n, int model);
void cmp_free(struct cmp_view *v);

/* What a node of an observed (or program) tree holds, in words; NULL: "gone". */
void cmp_describe(const struct tree_node *nodes, size_t n, const struct tree_node *t, char *buf, size_t len);
/* "=", "+", "-", "LOST", "BROKEN" or "". */
const char *cmp_mark_str(enum cmp_mark m);
/* The one-line legend. */
extern const char cmp_legend[];

/* Renderers (compare.c). color: ANSI colours for LOST and BROKEN. */
void cmp_print_text(FILE *f, const struct cmp_view *v, bool color);
void cmp_print_markdown(FILE *f, const struct cmp_view *v);
json_t *cmp_json(const struct cmp_view *v);

struct crashdb;
struct strvec;
struct errbuf;
/* Read runs ids[0..n) (only the file systems in fs, all when fs is empty),
 * build the view and print it to stdout in format (text, markdown, json). */
int cmp_show(struct crashdb *db, const int64_t *ids, size_t n, const struct strvec *fs, int model, const char *format,
	     struct errbuf *e);

#endif
