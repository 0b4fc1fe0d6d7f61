/*
 * gen.h - the workload generator of `crashlab gen`: every workload of a
 * bounded space, in the spirit of bounded black-box crash testing (B3).
 *
 * A workload of sequence length N is N core ops (the vocabulary of --ops),
 * each followed by a persistence op or none, the last always by one (the
 * kinds of --persist). The bounds: the core ops and their argument
 * variants, a fixed file set (foo, A/foo, bar, A/bar, B/foo, B/bar, the
 * first N of them with --files; directories A and B), and the persistence
 * targets: the paths an op used, their siblings and parent directories
 * (sequence 1 and 2), only the paths it used (sequence 3). The test file
 * system's root cannot be named in the language, so it is never a target.
 *
 * Every workload is valid: what an op needs (a file before link, rename or
 * write of it, a directory before a file in it, a name that does not exist
 * before creat, mkdir, link or symlink to it) is made in [setup] when no
 * earlier op touched the path, else by a dependency op in [run] just
 * before; every workload is replayed on a small model of the tree and
 * dropped when an op would fail. Workloads that are the same up to
 * renaming (foo <-> bar, A <-> B) are generated once.
 *
 * libc only.
 */
#ifndef CRASHLAB_CORE_GEN_H
#define CRASHLAB_CORE_GEN_H

#include <stddef.h>

#include "core/err.h"

/* The core ops, in the order of the vocabulary (and of the output). */
enum gen_op {
	GEN_CREAT, GEN_MKDIR, GEN_RMDIR, GEN_WRITE, GEN_APPEND, GEN_DWRITE, GEN_MMAPWRITE, GEN_TRUNCATE,
	GEN_FALLOC, GEN_LINK, GEN_SYMLINK, GEN_RENAME, GEN_UNLINK, GEN_SETXATTR, GEN_REMOVEXATTR, GEN_CHMOD,
	GEN_NOPS
};

/* The persistence ops. */
enum gen_persist {
	GEN_FSYNC, GEN_FDATASYNC, GEN_SYNC, GEN_SYNCFS, GEN_FBARRIER, GEN_FDATABARRIER,
	GEN_NPERSIST
};

#define GEN_MAX_FILES 6
#define GEN_DEFAULT_FILES 4
#define GEN_DEFAULT_PERSIST ((1u << GEN_FSYNC) | (1u << GEN_FDATASYNC) | (1u << GEN_SYNC))
#define GEN_ALL_OPS ((1u << GEN_NOPS) - 1)

struct gen_params {
	int seq;               /* sequence length: 1, 2 or 3 */
	unsigned ops;          /* bit set of 1u << enum gen_op */
	unsigned persist;      /* bit set of 1u << enum gen_persist */
	int files;             /* the first N of the file set, 1..GEN_MAX_FILES */
	size_t max;            /* fail when the space holds more workloads (0: no bound) */
};

struct gen_workload {
	char *name;            /* its file name: "0001-creat.wl" */
	char *shape;           /* its core ops: "creat", "write+rename" */
	char *text;            /* the whole .wl file */
};

struct gen_shape {
	char *shape;
	size_t n;              /* workloads of this shape */
};

struct gen_result {
	struct gen_workload *w;
	size_t n, cap;
	struct gen_shape *shapes;  /* in the order they first appear */
	size_t nshapes, shapes_cap;
	size_t same;           /* dropped: the same as an earlier workload up to renaming */
	size_t invalid;        /* dropped: an op could not be made valid */
};

/* The name of a core op or a persistence op ("creat", "fsync"). */
const char *gen_op_name(enum gen_op op);
const char *gen_persist_name(enum gen_persist p);
/* Parse a comma-separated list of names into a bit set: -1 with a usage
 * error (EXIT_USAGE) naming the first unknown one. */
int gen_ops_parse(const char *list, unsigned *out, struct errbuf *e);
int gen_persist_parse(const char *list, unsigned *out, struct errbuf *e);
/* The file set's first n paths ("foo", "A/foo", ...). */
const char *gen_file(int i);

/* Generate the space: 0, or -1 with e (EXIT_USAGE for bad bounds or a
 * space larger than p->max). Same params, same result, byte for byte. */
int gen_run(const struct gen_params *p, struct gen_result *r, struct errbuf *e);
void gen_result_free(struct gen_result *r);

#endif
