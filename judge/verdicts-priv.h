/*
 * verdicts-priv.h - what the judge of one state (verdicts.c) shares with
 * its universal rules (universal.c). Not for use outside judge/.
 */
#ifndef CRASHLAB_JUDGE_VERDICTS_PRIV_H
#define CRASHLAB_JUDGE_VERDICTS_PRIV_H

#include "judge/explain.h"
#include "judge/models-priv.h"

struct group;

/* One state being judged. */
struct judge {
	const struct sim *s;
	const struct op_result *res;
	const struct check_report *st;
	struct explain ex;
	int64_t point;
	int last_completed;
	int last_persisted;        /* last completed persistence op (fsync, sync...) that succeeded */
	struct group *g;
	size_t ng, gcap;
	unsigned char *covered;    /* per change, for the current model */
	struct judgement *out;
};

/* Did op complete before the state's crash point? */
int judge_completed(const struct judge *j, int op);
/* "op 5 `write f 8K`" ("the empty file system" for op 0). */
void judge_op_text(const struct sim *s, int op, char *buf, size_t n);
struct verdict *judge_new_verdict(struct judge *j);
/* A new verdict of universal rule u (U1..U5), kept or broken. */
struct verdict *judge_universal_verdict(struct judge *j, int u, int broken);
/* U1 is judged by model_judge; U2-U5 here (universal.c). */
void judge_universal(struct judge *j);

#endif
