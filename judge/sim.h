/*
 * sim.h - the reference simulator: a workload's ops applied to an
 * in-memory POSIX file system, on the host, no VM (docs/guarantees.md
 * "Vocabulary"). It gives S0 (the tree after [setup]) and, for every
 * [run] op, the list of changes that op made: each change sets one field
 * of the model to a new value, so S_i is S0 with the changes of ops 1..i
 * applied, and a crash state is explained by the subset of changes it
 * shows (judge/explain.h).
 *
 * Fields (struct sim_field), each with a 64-bit value:
 *   entry  (directory inode, name id)  -> the inode the name points to, or SIM_ABSENT
 *   mode   (inode)                     -> permission bits
 *   size   (inode)                     -> st_size
 *   block  (inode, block index)        -> the id of the 4 KiB block's bytes (0: zeros)
 *   xattr  (inode, name id)            -> value id, or SIM_ABSENT
 * A write is thus split into one change per 4 KiB block plus its size
 * change (and the entry of a file it creates); a rename into its two
 * halves (source entry removed, destination entry added).
 *
 * Inode identity: the simulator's inodes are numbered 0 (the root), 1, ...
 * in creation order, never reused; the guest's inode number of each is
 * learned from the op results (ino/ino2, record.h), so an observed node
 * can be matched by identity first and content second.
 *
 * Failed ops: the guest's outcome wins. An op that failed in the guest is
 * not applied (it changed nothing, and promises nothing); if the simulator
 * would have failed differently (or succeeded), that is a mismatch, kept in
 * sim_op.mismatch and reported. An op that succeeded in the guest but that
 * the simulator refuses is not applied either, and is a mismatch.
 */
#ifndef CRASHLAB_JUDGE_SIM_H
#define CRASHLAB_JUDGE_SIM_H

#include <stddef.h>
#include <stdint.h>

#include "core/hmap.h"
#include "core/workload.h"

#define SIM_ABSENT (-1)
#define SIM_ROOT 0
/* Largest file offset the simulator models (it keeps every block in memory). */
#define SIM_MAX_FILE (1LL << 30)

enum sim_field_kind { SF_ENTRY, SF_MODE, SF_SIZE, SF_BLOCK, SF_XATTR };

struct sim_field {
	enum sim_field_kind kind;
	int ino;                 /* the directory (entry) or the inode */
	int64_t key;             /* name id (entry, xattr), block index (block), else 0 */
};

struct sim_change {
	int op;                  /* op id (1..n) that made it */
	struct sim_field f;
	int64_t old, val;        /* the field's value before and after */
	int data;                /* 1: file data (a block, or the size a data write set); 0: metadata */
	int hpos;                /* its position in the field's history (1: the first change; 0 is the
				    value before the run) */
	size_t hist;             /* the field's history: sim.hist[hist] */
};

/* One op as the simulator saw it. */
struct sim_op {
	const struct wl_op *op;
	int applied;             /* its changes are in the change list */
	int sim_err;             /* the errno the simulator predicts (0: success) */
	int guest_err;           /* the guest's errno (0: success) */
	char mismatch[640];      /* non-empty when guest and simulator disagree */
	size_t first, n;         /* its changes: changes[first .. first + n) */
	int obj;                 /* the inode its path names after the op (following a symlink as the op
				    does), or -1 */
	int obj_dir;             /* the directory holding its path's last name, or -1 */
	int64_t obj_name;        /* that name's id, or -1 */
	int obj2, obj2_dir;      /* the same for path2 (rename, link NEW) */
	int64_t obj2_name;
};

struct sim_inode {
	char type;               /* 'f', 'd', 'l' */
	uint32_t mode;
	uint64_t size;
	int64_t *blocks;         /* block ids, nblocks of them (beyond: zeros) */
	size_t nblocks;
	int64_t *xnames, *xvals; /* xattrs: name id -> value id, nx of them */
	size_t nx;
	int64_t *enames;         /* directory entries: name id -> inode, ne of them */
	int *echild;
	size_t ne;
	int64_t *allnames;       /* every name this directory ever had (for S_k lookups) */
	size_t nall;
	int64_t *allx;           /* every xattr name this inode ever had */
	size_t nallx;
	char *target;            /* symlink target */
	int born;                /* op id that created it; 0: before the run (setup, root) */
	uint64_t ino;            /* the guest's inode number, 0 when never learned */
};

struct sim {
	const struct wl_workload *w;
	struct sim_inode *in;    /* the inodes as they are after the last op */
	size_t nin, in_cap;
	struct sim_op *ops;      /* one per workload op */
	struct sim_change *ch;   /* the run ops' changes, in op order */
	size_t nch, ch_cap;
	struct sim_strs {        /* interned names and xattr values: id -> bytes */
		char **s;        /* NUL-terminated copies */
		size_t *len;     /* their lengths (values may hold NULs) */
		size_t n, cap;
		struct hmap map; /* bytes -> id */
	} strs;
	struct sim_blocks {      /* interned 4 KiB blocks: id -> bytes; id 0 is zeros */
		unsigned char **b;
		size_t n, cap;
		struct hmap map; /* bytes -> id */
	} blks;
	char **opened;           /* paths with an open fd (for close's EBADF) */
	size_t nopened;
	struct sim_hist *hist;   /* every field a run op changed, with its changes */
	size_t nhist, hist_cap;
	struct hmap hist_map;    /* field -> index into hist */
};

/* The changes of one field, in op order. */
struct sim_hist {
	struct sim_field f;      /* the field */
	size_t *idx;             /* indices into sim.ch */
	size_t n, cap;
};

/*
 * Can the simulator model every op of w? 0, or -1 with a message naming
 * the op ("op 5 (line 9) `write f 2G 4K`: ...") in e (65). Checked before a
 * run starts, so a workload it cannot judge is refused up front.
 */
int sim_check(const struct wl_workload *w, struct errbuf *e);

/* Simulate w with the guest's results (one per op; NULL: assume the
 * simulator's own outcome). 0, or -1 with a message in e when an op
 * cannot be modelled. */
int sim_run(struct sim *s, const struct wl_workload *w, const struct op_result *res, struct errbuf *e);
void sim_free(struct sim *s);

/* The history of a field, or NULL when no run op changed it. */
const struct sim_hist *sim_history(const struct sim *s, const struct sim_field *f);
/* The value of field f in S_k (after ops 1..k; k = 0: S0). */
int64_t sim_value_at(const struct sim *s, const struct sim_field *f, int k);
/* The value of f after the last op. */
int64_t sim_value_final(const struct sim *s, const struct sim_field *f);

/* Interned strings and blocks. */
const char *sim_str(const struct sim *s, int64_t id, size_t *len);
int64_t sim_str_find(const struct sim *s, const char *str, size_t len);   /* -1 when unknown */
const unsigned char *sim_block(const struct sim *s, int64_t id);          /* 4096 bytes */
/* The tree token (tree.h) of block id at file offset off read with len bytes. */
void sim_block_token(const struct sim *s, int64_t id, uint64_t off, size_t len, char out[24]);

/* A path to inode ino in S_k (names resolved with the values of S_k), or
 * NULL; malloc'd. dir/name: also for an entry field ("A/foo"). */
char *sim_path_at(const struct sim *s, int ino, int k);
char *sim_entry_path_at(const struct sim *s, int dir, int64_t name, int k);
/* The program's tree in S_k as the checker reports one (core/tree.h nodes,
 * sorted by path, the root not included; sim-tree.c). Free each node with
 * tree_node_free and the array with free. */
struct tree_node;
void sim_tree_at(const struct sim *s, int k, struct tree_node **out, size_t *n);

/* Is the op a [run] op (its changes are pieces), and its index in w? */
static inline int sim_is_run(const struct sim *s, int op_id)
{
	return op_id >= 1 && (size_t)op_id <= s->w->n && s->w->ops[op_id - 1].section == WL_RUN;
}

#endif
