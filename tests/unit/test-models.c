/*
 * test-models.c - every rule of judge/models.c on hand-made observed trees:
 * kept and LOST under the rule, and bonus and gone where the promise is
 * not made (by a model without the rule, or before the promising op
 * completed); the universal rules U1-U5; the known answers of
 * docs/guarantees.md as far as they can be stated without a guest.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>

#include "tests/unit/check.h"
#include "tests/unit/judgekit.h"

#define P2 "p2,p2"

/* fsync.file (POSIX), and unpromised data before the fsync completes. */
TEST(fsync_file)
{
	struct kit k;
	kit_init(&k, "[setup]\ncreat f\n[run]\nwrite f 8K\nfsync f\n");
	CHECK(kit_sim(&k) == 0, "fsync.file: simulate");
	kit_node(&k, "f", 'f', 0644, 8192, 1, 50, P2);
	kit_judge(&k, 3);
	CHECK(kit_find(&k, "posix", "fsync.file", "kept"), "fsync.file kept: the data is there after fsync");
	kit_clear(&k);
	kit_node(&k, "f", 'f', 0644, 0, 1, 50, "");
	kit_judge(&k, 3);
	const struct verdict *v = kit_find(&k, "posix", "fsync.file", "LOST");
	CHECK(v, "fsync.file LOST: fsync completed, the file is empty");
	CHECK(v && strstr(v->reason, "op 2 `write f 8K`") && strstr(v->reason, "op 3 `fsync f`") &&
		      strstr(v->reason, "'f'") && strstr(v->reason, "expected") && strstr(v->reason, "found"),
	      "the sentence names the op, the promising op, the object, expected and found: %s", v ? v->reason : "");
	CHECK(v && !strncmp(v->cite, "docs/guarantees.md#fsync-of-a-file", 34), "the verdict carries its citation: %s",
	      v ? v->cite : "");
	kit_clear(&k);
	kit_node(&k, "f", 'f', 0644, 8192, 1, 50, P2);
	kit_judge(&k, 2);
	CHECK(kit_find(&k, "posix", "unpromised", "bonus"), "bonus: written, not yet fsynced, yet there");
	CHECK(!kit_find(&k, "posix", NULL, "LOST"), "and nothing LOST");
	kit_clear(&k);
	kit_node(&k, "f", 'f', 0644, 0, 1, 50, "");
	kit_judge(&k, 2);
	CHECK(kit_find(&k, "posix", "unpromised", "gone"), "gone: written, not fsynced, missing");
	for (int m = 0; m < MODEL_COUNT; m++)
		if (m != MODEL_SEQUENTIAL)
			CHECK(k.j.count[m][V_LOST] == 0, "unsynced data missing is never LOST under %s", model_name(m));
	kit_free(&k);
}

TEST(fdatasync)
{
	struct kit k;
	kit_init(&k, "[setup]\ncreat f\n[run]\nwrite f 4K\nchmod f 0600\nfdatasync f\n");
	kit_sim(&k);
	kit_node(&k, "f", 'f', 0644, 4096, 1, 50, "p2");
	kit_judge(&k, 4);
	CHECK(kit_find(&k, "posix", "fdatasync.file", "kept"), "fdatasync.file kept");
	CHECK(kit_find(&k, "posix", "unpromised", "gone"), "fdatasync does not promise the mode: gone");
	kit_clear(&k);
	kit_node(&k, "f", 'f', 0600, 4096, 1, 50, "z");
	kit_judge(&k, 4);
	CHECK(kit_find(&k, "posix", "fdatasync.file", "LOST"), "fdatasync.file LOST: zeros where the data was");
	CHECK(kit_find(&k, "posix", "unpromised", "bonus"), "the new mode is there: bonus");
	kit_free(&k);
}

TEST(ext4_name)
{
	struct kit k;
	kit_init(&k, "[setup]\nmkdir d\n[run]\nwrite d/n \"x\"\nfsync d/n\n");
	kit_sim(&k);
	kit_node(&k, "d", 'd', 0755, 4096, 2, 10, NULL);
	kit_text(&k, "d/n", 0644, 11, "x");
	kit_judge(&k, 3);
	CHECK(kit_find(&k, "ext4", "ext4.fsync-name", "kept"), "ext4.fsync-name kept: the new name persists");
	CHECK(kit_find(&k, "posix", "unpromised", "bonus"), "POSIX does not promise the new name: bonus");
	CHECK(kit_find(&k, "f2fs-posix", "unpromised", "bonus"), "nor f2fs-posix: bonus");
	CHECK(kit_find(&k, "xfs", "somc.fsync-deps", "kept"), "xfs promises it too");
	CHECK(kit_find(&k, "btrfs", "btrfs.fsync-names", "kept"), "btrfs promises it too");
	kit_clear(&k);
	kit_node(&k, "d", 'd', 0755, 4096, 2, 10, NULL);
	kit_judge(&k, 3);
	CHECK(kit_find(&k, "ext4", "ext4.fsync-name", "LOST"), "ext4.fsync-name LOST: the new file is missing");
	CHECK(kit_find(&k, "posix", "unpromised", "gone"), "POSIX: gone, not LOST");
	CHECK(kit_count(&k, "posix", "LOST") == 0 && kit_count(&k, "f2fs-posix", "LOST") == 0,
	      "new file + fsync without the parent's fsync: nothing LOST under posix, f2fs-posix");
	CHECK(kit_count(&k, "xfs", "LOST") > 0 && kit_count(&k, "btrfs", "LOST") > 0, "LOST under xfs and btrfs");
	kit_free(&k);
}

TEST(btrfs_names)
{
	struct kit k;
	kit_init(&k, "[setup]\ncreat f\n[run]\nlink f l\nfsync f\n");
	kit_sim(&k);
	kit_node(&k, "f", 'f', 0644, 0, 2, 20, "");
	kit_node(&k, "l", 'f', 0644, 0, 2, 20, "");
	kit_judge(&k, 3);
	CHECK(k.j.explained, "a hard link is explained");
	CHECK(kit_find(&k, "btrfs", "btrfs.fsync-names", "kept"), "btrfs.fsync-names kept: the link persists");
	CHECK(kit_find(&k, "ext4", "unpromised", "bonus"), "ext4 does not promise extra links: bonus");
	kit_clear(&k);
	kit_node(&k, "f", 'f', 0644, 0, 1, 20, "");
	kit_judge(&k, 3);
	CHECK(kit_find(&k, "btrfs", "btrfs.fsync-names", "LOST"), "btrfs.fsync-names LOST: the link is missing");
	CHECK(kit_find(&k, "ext4", "unpromised", "gone"), "ext4: gone");
	kit_free(&k);
}

static const char seed[] = "[setup]\nmkdir A\nwrite A/foo \"hello\"\nsync\n[run]\nrename A/foo A/bar\n"
			   "write A/foo \"world\"\nfsync A/foo\n";

TEST(seed)
{
	struct kit k;
	kit_init(&k, seed);
	kit_sim(&k);
	/* xfs, ext4, btrfs, f2fs strict: both names */
	kit_node(&k, "A", 'd', 0755, 4096, 2, 10, NULL);
	kit_text(&k, "A/bar", 0644, 11, "hello");
	kit_text(&k, "A/foo", 0644, 12, "world");
	kit_judge(&k, 6);
	CHECK(k.j.explained, "seed, both names: explained");
	CHECK(kit_find(&k, "somc", "somc.fsync-deps", "kept"), "SOMC promises A/bar and it is there: kept");
	CHECK(kit_find(&k, "posix", "unpromised", "bonus"), "POSIX: A/bar is a bonus");
	CHECK(!strcmp(k.j.marks + 3, "++."), "timeline: rename and write persisted: %s", k.j.marks);
	kit_clear(&k);
	/* f2fs default: A/bar lost, A/foo = world */
	kit_node(&k, "A", 'd', 0755, 4096, 2, 10, NULL);
	kit_text(&k, "A/foo", 0644, 12, "world");
	kit_judge(&k, 6);
	CHECK(k.j.explained, "seed, A/bar lost: a torn rename is explained, not rejected");
	CHECK(k.j.marks[3] == EX_MARK_PARTIAL, "the rename is marked partly persisted: %s", k.j.marks);
	CHECK(kit_count(&k, "posix", "LOST") == 0 && kit_count(&k, "f2fs-posix", "LOST") == 0,
	      "POSIX and f2fs-posix report nothing LOST");
	CHECK(kit_find(&k, "somc", "somc.fsync-deps", "LOST"), "SOMC reports A/bar LOST (fsync deps)");
	CHECK(kit_find(&k, "somc", "somc.order", "LOST"), "SOMC ordering: the new A/foo is visible without the rename");
	CHECK(kit_find(&k, "sequential", "sequential.prefix", "LOST"), "sequential reports LOST");
	CHECK(kit_count(&k, "universal", "broken") == 0, "no universal rule fires");
	CHECK(kit_find(&k, "posix", "unpromised", "gone"), "POSIX: A/bar gone");
	kit_free(&k);
}

TEST(fsync_dir)
{
	struct kit k;
	kit_init(&k, "[setup]\nmkdir d\n[run]\ncreat d/x\nfsync d\n");
	kit_sim(&k);
	kit_node(&k, "d", 'd', 0755, 4096, 2, 10, NULL);
	kit_node(&k, "d/x", 'f', 0644, 0, 1, 11, "");
	kit_judge(&k, 3);
	CHECK(kit_find(&k, "posix", "fsync.dir", "kept"), "fsync.dir kept");
	kit_clear(&k);
	kit_node(&k, "d", 'd', 0755, 4096, 2, 10, NULL);
	kit_judge(&k, 3);
	CHECK(kit_find(&k, "posix", "fsync.dir", "LOST"), "fsync.dir LOST: the name is missing");
	kit_clear(&k);
	kit_judge(&k, 2);
	kit_node(&k, "d", 'd', 0755, 4096, 2, 10, NULL);
	judgement_free(&k.j);
	kit_judge(&k, 2);
	CHECK(kit_find(&k, "posix", "unpromised", "gone"), "before the fsync completes: gone");
	kit_clear(&k);
	kit_node(&k, "d", 'd', 0755, 4096, 2, 10, NULL);
	kit_node(&k, "d/x", 'f', 0644, 0, 1, 11, "");
	kit_judge(&k, 2);
	CHECK(kit_find(&k, "posix", "unpromised", "bonus"), "before the fsync completes: bonus");
	kit_free(&k);
}

TEST(btrfs_dir)
{
	struct kit k;
	kit_init(&k, "[setup]\nmkdir d\ncreat d/x\n[run]\nunlink d/x\nfsync d\n");
	kit_sim(&k);
	kit_node(&k, "d", 'd', 0755, 4096, 2, 10, NULL);
	kit_judge(&k, 4);
	CHECK(kit_find(&k, "btrfs", "btrfs.fsync-dir", "kept"), "btrfs.fsync-dir kept: the unlink persists");
	CHECK(kit_find(&k, "posix", "unpromised", "bonus"), "POSIX does not promise the unlink: bonus");
	kit_clear(&k);
	kit_node(&k, "d", 'd', 0755, 4096, 2, 10, NULL);
	kit_node(&k, "d/x", 'f', 0644, 0, 1, 11, "");
	kit_judge(&k, 4);
	CHECK(kit_find(&k, "btrfs", "btrfs.fsync-dir", "LOST"), "btrfs.fsync-dir LOST: the unlinked name is back");
	CHECK(kit_find(&k, "posix", "unpromised", "gone"), "POSIX: gone");
	kit_free(&k);
}

TEST(somc_dir_deps)
{
	struct kit k;
	kit_init(&k, "[setup]\nmkdir d\n[run]\nmkdir d/e\ncreat d/e/x\nfsync d/e\n");
	kit_sim(&k);
	kit_node(&k, "d", 'd', 0755, 4096, 3, 10, NULL);
	kit_node(&k, "d/e", 'd', 0755, 4096, 2, 11, NULL);
	kit_node(&k, "d/e/x", 'f', 0644, 0, 1, 12, "");
	kit_judge(&k, 4);
	CHECK(kit_find(&k, "somc", "somc.fsync-dir-deps", "kept"), "somc.fsync-dir-deps kept: the mkdir persisted");
	CHECK(kit_find(&k, "posix", "unpromised", "bonus"), "POSIX does not promise d/e's own name: bonus");
	kit_clear(&k);
	kit_node(&k, "d", 'd', 0755, 4096, 2, 10, NULL);
	kit_judge(&k, 4);
	CHECK(kit_find(&k, "somc", "somc.fsync-dir-deps", "LOST"), "somc.fsync-dir-deps LOST: d/e is missing");
	CHECK(kit_find(&k, "posix", "unpromised", "gone"), "POSIX: gone");
	kit_free(&k);
}

TEST(order_and_prefix)
{
	struct kit k;
	kit_init(&k, "[run]\ncreat a\ncreat b\n");
	kit_sim(&k);
	kit_node(&k, "b", 'f', 0644, 0, 1, 11, "");
	kit_judge(&k, 0);
	CHECK(kit_find(&k, "somc", "somc.order", "LOST"), "somc.order LOST: b visible without a (same directory)");
	CHECK(kit_find(&k, "sequential", "sequential.prefix", "LOST"), "sequential.prefix LOST: not a prefix");
	CHECK(kit_count(&k, "posix", "LOST") == 0, "POSIX: nothing LOST");
	kit_clear(&k);
	kit_node(&k, "a", 'f', 0644, 0, 1, 10, "");
	kit_node(&k, "b", 'f', 0644, 0, 1, 11, "");
	kit_judge(&k, 0);
	CHECK(kit_find(&k, "somc", "somc.order", "kept"), "somc.order kept");
	CHECK(kit_find(&k, "sequential", "sequential.prefix", "kept"), "sequential.prefix kept");
	kit_clear(&k);
	kit_node(&k, "a", 'f', 0644, 0, 1, 10, "");
	kit_judge(&k, 2);
	CHECK(kit_find(&k, "sequential", "sequential.prefix", "LOST") == NULL,
	      "sequential: completed ops after the shown prefix, with no fsync, are not LOST");
	CHECK(kit_find(&k, "somc", "unpromised", "gone"), "SOMC: b is gone");
	CHECK(kit_find(&k, "somc", "unpromised", "bonus") || kit_find(&k, "somc", "somc.order", "kept") == NULL,
	      "SOMC: a is not required by anything visible");
	kit_free(&k);
}

/* sequential: a completed fsync makes the prefix reach at least that far. */
TEST(prefix_fsync)
{
	struct kit k;
	kit_init(&k, "[run]\ncreat a\ncreat b\nfsync b\n");
	kit_sim(&k);
	kit_node(&k, "a", 'f', 0644, 0, 1, 10, "");
	kit_judge(&k, 3);
	CHECK(kit_find(&k, "sequential", "sequential.prefix", "LOST"),
	      "sequential: b missing after its fsync completed is LOST");
	kit_clear(&k);
	kit_node(&k, "a", 'f', 0644, 0, 1, 10, "");
	kit_node(&k, "b", 'f', 0644, 0, 1, 11, "");
	kit_judge(&k, 3);
	CHECK(kit_find(&k, "sequential", "sequential.prefix", "LOST") == NULL &&
	      kit_find(&k, "sequential", "sequential.prefix", "kept"), "sequential: the whole prefix is kept");
	kit_free(&k);
}

/* A rename of a file created in the run, nothing of which persisted: the
 * absent source name is no evidence that the rename happened. */
TEST(rename_of_unpersisted)
{
	struct kit k;
	kit_init(&k, "[run]\nwrite t 8K\nrename t f\nwrite u \"x\"\nrename u v\n");
	kit_sim(&k);
	kit_judge(&k, 4);
	CHECK(k.j.explained, "an empty state after two renames of new files is explained");
	CHECK(kit_count(&k, "somc", "LOST") == 0 && kit_count(&k, "xfs", "LOST") == 0,
	      "SOMC: no LOST when nothing of the run is visible");
	CHECK(kit_count(&k, "sequential", "LOST") == 0, "sequential: the empty prefix is a prefix");
	kit_free(&k);
}

/* The negative control N1: f renamed but empty. */
TEST(n1)
{
	struct kit k;
	kit_init(&k, "[run]\nwrite t 64K\nrename t f\ncreat g\nfsync g\n");
	kit_sim(&k);
	kit_node(&k, "f", 'f', 0644, 0, 1, 12, "");
	kit_node(&k, "g", 'f', 0644, 0, 1, 13, "");
	kit_judge(&k, 4);
	CHECK(k.j.explained, "N1: f renamed but empty is explained");
	const struct verdict *v = kit_find(&k, "sequential", "sequential.prefix", "LOST");
	CHECK(v && v->op == 1, "sequential reports op 1's data LOST: %s", v ? v->reason : "none");
	CHECK(kit_count(&k, "posix", "LOST") == 0 && kit_count(&k, "ext4", "LOST") == 0, "POSIX and ext4: nothing LOST");
	kit_free(&k);
}

static const char l1[] = "[run]\nwrite t 8K\nfdatabarrier t\nrename t f\ncreat g\nfsync g\n";

static void barrier_case(const char *wl, const char *model, const char *rule, int meta)
{
	struct kit k;
	kit_init(&k, wl);
	kit_sim(&k);
	/* witness visible, data there */
	kit_node(&k, "f", 'f', 0644, meta ? 0 : 8192, 1, 12, meta ? "" : "p1,p1");
	if (meta)
		kit_xattr(&k, "user.a", "v");
	kit_judge(&k, 5);
	CHECK(kit_find(&k, model, rule, "kept"), "%s kept: the witness and the covered change are there", rule);
	kit_clear(&k);
	/* witness visible, covered change missing */
	kit_node(&k, "f", 'f', 0644, 0, 1, 12, "");
	kit_judge(&k, 5);
	const struct verdict *v = kit_find(&k, model, rule, "LOST");
	CHECK(v, "%s LOST: the rename is visible, the covered change is not", rule);
	kit_clear(&k);
	/* no witness visible: nothing promised */
	kit_node(&k, "t", 'f', 0644, meta ? 0 : 8192, 1, 12, meta ? "" : "p1,p1");
	if (meta)
		kit_xattr(&k, "user.a", "v");
	kit_judge(&k, 1);
	CHECK(kit_find(&k, model, rule, "bonus"), "%s bonus: no witness visible, the change is there", rule);
	kit_clear(&k);
	kit_node(&k, "t", 'f', 0644, 0, 1, 12, "");
	kit_judge(&k, 1);
	CHECK(kit_find(&k, model, rule, "gone"), "%s gone: no witness visible, the change is missing", rule);
	CHECK(kit_count(&k, model, "LOST") == 0, "%s: a barrier alone makes nothing required", rule);
	kit_free(&k);
}

TEST(barriers)
{
	barrier_case(l1, "barrier", "barrier.fdatabarrier", 0);
	barrier_case("[run]\ncreat t\nsetxattr t user.a v\nfbarrier t\nrename t f\nfsync g\n", "barrier",
		     "barrier.fbarrier", 1);
	barrier_case("[run]\nwrite t 8K\nfiemap_sync t\nrename t f\ncreat g\nfsync g\n", "fiemap_sync",
		     "fiemap_sync.order", 0);
	/* rename ... barrier: the rename itself is the witness */
	struct kit k;
	kit_init(&k, "[run]\nwrite t 8K\nrename t f barrier\ncreat g\nfsync g\n");
	kit_sim(&k);
	kit_node(&k, "f", 'f', 0644, 8192, 1, 12, "p1,p1");
	kit_judge(&k, 4);
	CHECK(kit_find(&k, "barrier", "barrier.rename", "kept"), "barrier.rename kept");
	kit_clear(&k);
	kit_node(&k, "f", 'f', 0644, 0, 1, 12, "");
	kit_judge(&k, 4);
	CHECK(kit_find(&k, "barrier", "barrier.rename", "LOST"), "barrier.rename LOST: f renamed but empty");
	kit_clear(&k);
	kit_node(&k, "t", 'f', 0644, 8192, 1, 12, "p1,p1");
	kit_judge(&k, 1);
	CHECK(kit_find(&k, "barrier", "barrier.rename", "bonus"), "barrier.rename bonus: rename not visible, data there");
	kit_clear(&k);
	kit_node(&k, "t", 'f', 0644, 0, 1, 12, "");
	kit_judge(&k, 1);
	CHECK(kit_find(&k, "barrier", "barrier.rename", "gone"), "barrier.rename gone");
	kit_free(&k);
	/* G3: a failed barrier (a kernel without the series) promises nothing */
	kit_init(&k, l1);
	kit_fail(&k, 2, ENOSYS);
	kit_sim(&k);
	CHECK(!k.s.ops[1].mismatch[0], "ENOSYS from fdatabarrier is not a simulator mismatch");
	kit_node(&k, "f", 'f', 0644, 0, 1, 12, "");
	kit_judge(&k, 5);
	CHECK(kit_count(&k, "barrier", "LOST") == 0 && kit_count(&k, "barrier", "kept") == 0,
	      "a failed fdatabarrier makes no promise (G3)");
	kit_free(&k);
	/* G2: a later sync makes the witness durable, so the data is required even if the rename is not seen */
	kit_init(&k, "[run]\nwrite t 8K\nfdatabarrier t\nrename t f\nsync\n");
	kit_sim(&k);
	kit_node(&k, "t", 'f', 0644, 0, 1, 12, "");
	kit_judge(&k, 4);
	CHECK(kit_find(&k, "barrier", "barrier.fdatabarrier", "LOST"), "G2: after a completed sync the data is required");
	kit_free(&k);
}

TEST(universal)
{
	struct kit k;
	kit_init(&k, "[setup]\nwrite a \"1\"\nwrite b \"2\"\n[run]\nrename a b\nwrite f 4K\nsync\n");
	kit_sim(&k);
	/* U1 */
	struct check_report st = { .mount_ok = 0, .fsck_status = -1 };
	model_judge(&k.s, k.res, &st, 5, &k.j);
	CHECK(kit_find(&k, "universal", "U1", "broken") && k.j.n == 1, "U1 broken: the state did not mount, nothing else judged");
	judgement_free(&k.j);
	/* U2 */
	kit_text(&k, "b", 0644, 20, "1");
	kit_node(&k, "f", 'f', 0644, 4096, 1, 21, "p4");
	struct check_report st2 = { .mount_ok = 1, .fsck_status = 4, .fsck_clean = 0, .nodes = k.nodes, .n_nodes = k.n };
	model_judge(&k.s, k.res, &st2, 5, &k.j);
	CHECK(kit_find(&k, "universal", "U2", "broken"), "U2 broken: fsck complains");
	CHECK(kit_find(&k, "universal", "U3", "kept"), "U3 kept: explained");
	CHECK(kit_find(&k, "universal", "U4", "kept"), "U4 kept: b names the renamed file");
	CHECK(kit_find(&k, "universal", "U5", "kept"), "U5 kept: everything before the sync is there");
	kit_clear(&k);
	/* U4: b missing */
	kit_node(&k, "f", 'f', 0644, 4096, 1, 21, "p4");
	kit_judge(&k, 2);
	CHECK(kit_find(&k, "universal", "U4", "broken"), "U4 broken: rename over b left neither a nor b");
	kit_clear(&k);
	/* U4: both names */
	kit_text(&k, "a", 0644, 20, "1");
	k.nodes[0].nlink = 2;
	kit_text(&k, "b", 0644, 20, "1");
	k.nodes[1].nlink = 2;
	kit_judge(&k, 2);
	const struct verdict *v = kit_find(&k, "universal", "U4", "broken");
	CHECK(v && strstr(v->reason, "both"), "U4 broken: the renamed file under both names: %s", v ? v->reason : "");
	kit_clear(&k);
	/* U5 */
	kit_text(&k, "b", 0644, 20, "1");
	kit_node(&k, "f", 'f', 0644, 4096, 1, 21, "z");
	kit_judge(&k, 5);
	CHECK(kit_find(&k, "universal", "U5", "broken"), "U5 broken: data written before a completed sync is missing");
	kit_clear(&k);
	/* U3 */
	kit_text(&k, "b", 0644, 20, "1");
	kit_node(&k, "f", 'f', 0644, 4096, 1, 21, "p4");
	kit_node(&k, "ghost", 'f', 0644, 0, 1, 22, "");
	kit_judge(&k, 5);
	v = kit_find(&k, "universal", "U3", "broken");
	CHECK(v && strstr(v->reason, "'ghost'") && !k.j.explained, "U3 broken: a file that never existed: %s",
	      v ? v->reason : "");
	kit_free(&k);
}

TEST(inapplicable)
{
	struct wl_workload w;
	struct errbuf eb = { 0 };
	char why[256];
	unsigned all = (1u << MODEL_POSIX) | (1u << MODEL_BARRIER);
	if (wl_parse("t.wl", "[run]\nwrite t 8K\nfdatabarrier t\nrename t f barrier\nfbarrier f\n", &w, &eb) < 0) {
		CHECK(0, "the workload parses: %s", eb.msg);
		return;
	}
	struct op_result res[4];
	memset(res, 0, sizeof(res));
	CHECK(models_inapplicable(&w, res, all, why, sizeof(why)) == 0 && !why[0],
	      "barrier calls that returned 0: the barrier model applies");
	for (int i = 1; i < 4; i++) {
		res[i].ret = -1;
		res[i].err = ENOSYS;
	}
	CHECK(models_inapplicable(&w, res, all, why, sizeof(why)) == 0,
	      "a rename ... barrier that failed with ENOSYS is not the kernel lacking the flag");
	res[2].err = EINVAL;
	CHECK(models_inapplicable(&w, res, all, why, sizeof(why)) == (1u << MODEL_BARRIER) &&
		      strstr(why, "not applicable") && strstr(why, "op 2") && strstr(why, "ENOSYS"),
	      "all barrier calls failed as on a kernel without them: not applicable (%s)", why);
	CHECK(models_inapplicable(&w, res, 1u << MODEL_POSIX, why, sizeof(why)) == 0,
	      "nothing to say when the barrier model is not selected");
	res[3].ret = 0;
	res[3].err = 0;
	CHECK(models_inapplicable(&w, res, all, why, sizeof(why)) == 0,
	      "one barrier call that worked: the kernel has them");
	res[3].ret = -1;
	res[3].err = EBADF;
	CHECK(models_inapplicable(&w, res, all, why, sizeof(why)) == 0,
	      "a barrier call that failed for another reason: the model still applies");
	char *n = models_notes("a", "b");
	CHECK(n && !strcmp(n, "a\nb"), "notes are joined one per line");
	free(n);
	n = models_notes(NULL, "b");
	CHECK(n && !strcmp(n, "b"), "a lone note");
	free(n);
	CHECK(models_notes(NULL, NULL) == NULL, "no notes, NULL");
	wl_free(&w);
}

TEST(select)
{
	unsigned set;
	struct errbuf eb = { 0 };
	char *err = eb.msg;
	CHECK(models_select(NULL, "f2fs", "fsync_mode=strict", NULL, &set, &eb) == 0 &&
		      set == ((1u << MODEL_POSIX) | (1u << MODEL_F2FS_STRICT)),
	      "f2fs mounted with fsync_mode=strict: posix and f2fs-strict");
	CHECK(models_select(NULL, "f2fs", "noatime,fsync_mode=strict,fsync_mode=posix", NULL, &set, &eb) == 0 &&
		      set == ((1u << MODEL_POSIX) | (1u << MODEL_F2FS_POSIX)),
	      "the last fsync_mode wins");
	CHECK(models_select(NULL, "ext4", "fsync_mode=strict", NULL, &set, &eb) == 0 &&
		      set == ((1u << MODEL_POSIX) | (1u << MODEL_EXT4)),
	      "an option of another fs changes nothing");
	CHECK(models_select(NULL, "f2fs", NULL, NULL, &set, &eb) == 0 &&
		      set == ((1u << MODEL_POSIX) | (1u << MODEL_F2FS_POSIX)),
	      "default for f2fs: posix and f2fs-posix");
	CHECK(models_select("all", "ext4", NULL, NULL, &set, &eb) == 0 && set == (1u << MODEL_COUNT) - 1,
	      "--model all");
	CHECK(models_select("posix,nosuch", "ext4", NULL, NULL, &set, &eb) < 0 && strstr(err, "'nosuch'"),
	      "an unknown model is named: %s", err);
	const struct rule_info *r;
	size_t n = model_rules(&r);
	/* every citation names a section docs/guarantees.md has */
	char *doc = NULL;
	size_t len = 0;
	FILE *fp = fopen("docs/guarantees.md", "r");
	CHECK(fp != NULL, "docs/guarantees.md is there");
	if (fp) {
		doc = xcalloc(1, 1 << 20);
		len = fread(doc, 1, (1 << 20) - 1, fp);
		fclose(fp);
	}
	size_t bad = 0;
	for (size_t i = 0; i < n; i++) {
		const char *c = r[i].cite;
		size_t pre = strlen("docs/guarantees.md#");
		if (!c || strncmp(c, "docs/guarantees.md#", pre)) {
			bad++;
			continue;
		}
		char anchor[96];
		size_t a = 0;
		for (const char *q = c + pre; *q && *q != ':' && a + 1 < sizeof(anchor); q++)
			anchor[a++] = *q;
		anchor[a] = 0;
		int found = 0;
		for (char *line = doc; doc && line && *line && !found; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
			if (*line != '#')
				continue;
			const char *t = line;
			while (*t == '#')
				t++;
			while (*t == ' ')
				t++;
			char slug[160];
			size_t sl = 0;
			for (; *t && *t != '\n' && sl + 1 < sizeof(slug); t++) {
				unsigned char ch = (unsigned char)*t;
				if (isalnum(ch) || ch == '_' || ch == '-')
					slug[sl++] = (char)tolower(ch);
				else if (ch == ' ')
					slug[sl++] = '-';
			}
			slug[sl] = 0;
			found = !strcmp(slug, anchor);
		}
		if (!found) {
			bad++;
			printf("# rule %s cites '%s', which is no heading of docs/guarantees.md\n", r[i].id, anchor);
		}
	}
	(void)len;
	free(doc);
	CHECK(n >= 19 && bad == 0, "every rule (%zu) cites a section of docs/guarantees.md (%zu do not)", n, bad);
}

TEST_MAIN()
