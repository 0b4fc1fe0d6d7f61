/*
 * check.h - host side of checking crash states (DESIGN.md step 7): one
 * checker guest per file system serves many states; each state's observed
 * tree, mount and fsck outcome come back for judging and storing.
 */
#ifndef CRASHLAB_CHECK_H
#define CRASHLAB_CHECK_H

#include "crashdb/crashdb.h"
#include "engine/vm.h"

/* What the checker guest reported for one state. */
struct lab_state_report {
	int mount_ok;
	char *mount_msg;
	int fsck_status;
	int fsck_clean;
	char *fsck_output;
	struct tree_node *nodes;
	size_t n_nodes;
	char tree_hash[17];   /* 64-bit FNV-1a of the tree lines, hex */
	uint64_t bytes;       /* bytes the state's writes applied */
	double ms_replay, ms_mount, ms_capture, ms_fsck, ms_other, ms_host;
};

struct lab_checker {
	struct lab_vm vm;
	const char *fs;
	char *fsck;           /* the fs's read-only fsck command, space-joined */
	const char *mount_opts;
	uint32_t seq;
};

/* Boot a checker guest with the base image and the log as read-only disks. */
enum lab_outcome lab_checker_start(struct lab_checker *c, const struct lab_vm_config *guest,
				   const char *fs, const char *base, const char *log_path,
				   const char *mount_opts);
/* Check one state given by its spec text. A guest failure is returned as
 * the outcome; a checker error (bad spec) as LAB_OK with rep->mount_msg set
 * and *error non-zero. */
enum lab_outcome lab_checker_state(struct lab_checker *c, const char *spec, struct lab_state_report *rep,
				   char *error, size_t errlen);
void lab_checker_stop(struct lab_checker *c);
void lab_state_report_free(struct lab_state_report *rep);

/* Parse a STATE payload (exposed for the unit tests). 0 or -1. */
int lab_state_report_parse(const char *fs, const char *payload, size_t len, struct lab_state_report *rep);

#endif
