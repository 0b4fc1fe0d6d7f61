/*
 * report.h - what `crashlab report` reads and shares between its text,
 * markdown and JSON renderers (report.c) and the HTML page (report-html.c):
 * a fs run with its states and the models reported, and the findings of a
 * state folded into facts (one fact: the same op, object, expected and
 * observed value and kind, with every model and rule that judge it so).
 */
#ifndef CRASHLAB_CMD_REPORT_H
#define CRASHLAB_CMD_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "engine/result.h"

struct fsview {
	struct fsrun f;
	struct state_result *st;
	size_t nst;
	unsigned sel;              /* the models to report (bit set) */
};

struct fact {
	const struct verdict *first;
	unsigned models;
	const char *rules[8];
	const char *cites[8];
	size_t nrules;
};

/* model is reported (the universal rules always are). */
bool report_selected(const struct fsview *f, int model);
/* The facts of state s (findings first; with all, also kept, bonus, gone); *out malloc'd. */
size_t report_facts(const struct fsview *f, const struct state_result *s, bool all, struct fact **out);
/* The op as the workload language writes it (malloc'd). */
char *report_op_text(const struct wl_op *op);
/* The explain mark of op index o in state s (EX_MARK_*), or 0. */
char report_mark_of(const struct state_result *s, size_t o);

/* A crash state's class in the fs x state matrix (the HTML page's, the
 * browser's): its worst verdict under the selected models, as a word
 * ("broken", "lost", "naive", "bonus", "kept", "unjudged") and one
 * character (*ch: B, L, !, +, =, ?). */
const char *report_state_class(const struct fsview *f, const struct state_result *s, char *ch);
/* Every class, worst first, with its character and the legend's words. */
struct report_class {
	char ch;
	const char *cls;
	const char *words;
};
#define REPORT_NCLASS 6
extern const struct report_class report_classes[REPORT_NCLASS];

/* The self-contained HTML page of a run (fv: its states read with their
 * trees) to f; -1 when f failed. */
int report_html(FILE *f, const struct run_info *run, const struct fsview *fv, size_t nfs);

#endif
