/*
 * sim-priv.h - what sim.c (the op semantics) and sim-store.c (the store)
 * share. Not for use outside judge/sim*.c.
 */
#ifndef CRASHLAB_JUDGE_SIM_PRIV_H
#define CRASHLAB_JUDGE_SIM_PRIV_H

#include "judge/sim.h"

/* The id of these bytes (a name, an xattr value), interned on first use. */
int64_t sim_str_intern(struct sim *s, const char *str, size_t len);
/* The id of a 4 KiB block's bytes, interned on first use (id 0: zeros). */
int64_t sim_blk_intern(struct sim *s, const unsigned char *b);
/* A field's value on the current (final) inode table, and setting it there. */
int64_t sim_field_get(const struct sim *s, const struct sim_field *f);
void sim_field_put(struct sim *s, const struct sim_field *f, int64_t val);
/* Record that change index `change` set field f. */
void sim_hist_add(struct sim *s, const struct sim_field *f, size_t change);

#endif
