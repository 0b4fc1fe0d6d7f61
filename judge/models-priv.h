/*
 * models-priv.h - the rule table (models.c) as the judge (verdicts.c)
 * reads it. Not for use outside judge/.
 */
#ifndef CRASHLAB_JUDGE_MODELS_PRIV_H
#define CRASHLAB_JUDGE_MODELS_PRIV_H

#include <stddef.h>

#include "judge/models.h"

/* What makes a rule judge something. */
enum trigger {
	T_FSYNC_FILE,      /* a completed fsync of a regular file */
	T_FSYNC_ANY,       /* a completed fsync of a regular file or a directory */
	T_FDATASYNC_FILE,  /* a completed fdatasync of a regular file */
	T_FSYNC_DIR,       /* a completed fsync or fdatasync of a directory */
	T_SYNC,            /* a completed sync or syncfs */
	T_EVERY_STATE,     /* ordering rules: judged in every state */
	T_FDATABARRIER,    /* a succeeded fdatabarrier */
	T_FBARRIER,        /* a succeeded fbarrier */
	T_RENAME_BARRIER,  /* a succeeded rename ... barrier */
	T_FIEMAP_SYNC,     /* a succeeded fiemap_sync */
};

/* What a rule promises, once triggered by op p on object f. */
enum {
	C_DATA = 1 << 0,        /* f's blocks and size as of S_p */
	C_META = 1 << 1,        /* f's mode and xattrs as of S_p */
	C_OWN_NAME = 1 << 2,    /* the name the op used, if it names f at p */
	C_BORN_NAME = 1 << 3,   /* the entry f was created under in the run, if it still names f at p */
	C_ALL_NAMES = 1 << 4,   /* every name of f at p */
	C_DEPS = 1 << 5,        /* every earlier op f depends on (its metadata pieces) */
	C_DIR_NAMES = 1 << 6,   /* a directory's names present at p */
	C_DIR_REMOVALS = 1 << 7,/* a directory's names absent at p (renamed or unlinked away) */
	C_EVERYTHING = 1 << 8,  /* every field as of S_p */
	C_ORDER = 1 << 9,       /* SOMC ordering: a visible op's dependencies */
	C_PREFIX = 1 << 10,     /* sequential: the state is some S_k */
	C_BAR_DATA = 1 << 11,   /* barrier: earlier data, once a witness is visible or durable */
	C_BAR_META = 1 << 12,   /* barrier: earlier metadata too */
};

struct rule {
	const char *id;
	unsigned models;          /* bit set of enum model; 0 for the universal rules */
	enum trigger trigger;
	unsigned covers;          /* C_* */
	const char *promise;      /* what it promises, completing "so <model> promises ..." */
	const char *cite;         /* the section of docs/guarantees.md and what the code does, one line */
};

/* snprintf for sentences: a long path makes the sentence shorter, never wrong. */
void judge_say(char *buf, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

extern const struct rule model_rule_table[];
extern const size_t model_nrules;

/* The universal rules, judged once per state. */
enum { U1, U2, U3, U4, U5, NU };
extern const struct rule model_universal[NU];

#endif
