/*
 * test-truth.c - the judge's semantics on the cases that once went wrong:
 * a state that is exactly a program state is never LOST or broken, a piece
 * seen in part never counts against an earlier promise, each rule that was
 * fixed says what docs/guarantees.md says, and impossible states are
 * broken. Exact states are rendered from the simulator (simtree.h), so each
 * case is the state a correct file system leaves; the property suite
 * (tests/props) draws thousands more of the same kinds.
 */
#include <stdio.h>

#include "tests/unit/check.h"
#include "tests/unit/judgekit.h"
#include "tests/unit/simtree.h"

static void judge_nodes(struct kit *k, struct tree_node *v, size_t n, int point)
{
	struct check_report st = { .mount_ok = 1, .fsck_status = 0, .fsck_clean = 1, .nodes = v, .n_nodes = n };
	judgement_free(&k->j);
	model_judge(&k->s, k->res, &st, point, &k->j);
}

/* The first LOST or broken verdict, or NULL. */
static const struct verdict *finding(const struct kit *k)
{
	for (size_t i = 0; i < k->j.n; i++)
		if (k->j.v[i].kind == V_LOST || k->j.v[i].kind == V_BROKEN)
			return &k->j.v[i];
	return NULL;
}

/* S_at judged with ops 1..point completed, for every point from..to: no
 * LOST, no broken. */
static void exact_is_clean(struct kit *k, int at, int from, int to, const char *what)
{
	struct st_tree t;
	st_render_at(&k->s, at, &t);
	for (int p = from; p <= to; p++) {
		judge_nodes(k, t.v, t.n, p);
		const struct verdict *v = finding(k);
		CHECK(!v, "%s: S_%d judged at point %d has no LOST or broken%s%s", what, at, p, v ? ": " : "",
		      v ? v->reason : "");
	}
	st_free(&t);
}

static void start(struct kit *k, const char *text)
{
	kit_init(k, text);
	if (kit_sim(k) < 0)
		BUG("the simulator cannot model: %s", text);
}

/* An op that restores an earlier value is not "persisted" by the state
 * showing that value. */
TEST(restored_values)
{
	struct kit k;
	start(&k, "[setup]\ncreat f\n[run]\nsetxattr f user.t x\nremovexattr f user.t\ncreat g\nfsync g\n");
	exact_is_clean(&k, 1, 1, 4, "setxattr then removexattr");
	kit_free(&k);
	start(&k, "[setup]\ncreat a\n[run]\ncreat x\nrename a b\nrename b a\n");
	exact_is_clean(&k, 1, 1, 4, "rename a b; rename b a");
	kit_free(&k);
	start(&k, "[setup]\ncreat f\n[run]\nwrite f 8K\nfdatabarrier f\nchmod f 0600\nchmod f 0644\n");
	exact_is_clean(&k, 1, 1, 5, "fdatabarrier, then chmod and back");
	kit_free(&k);
	/* a size equal to the one after setup, set again by a later truncate */
	start(&k, "[setup]\nwrite f 8K\n[run]\ntruncate f 4K\ntruncate f 8K\n");
	exact_is_clean(&k, 1, 1, 3, "truncate back to the setup size");
	struct st_tree t;
	st_render_at(&k.s, 1, &t);
	judge_nodes(&k, t.v, t.n, 3);
	CHECK(kit_find(&k, "sequential", "sequential.prefix", "kept"), "sequential: the setup state is a program state");
	CHECK(k.j.setup_state, "and it is the setup state: nothing of the run persisted");
	st_free(&t);
	kit_free(&k);
}

/* Inode numbers are reused: the file made by `write a "world"` after
 * `unlink a` may carry the old file's number. */
TEST(inode_reuse)
{
	struct kit k;
	kit_init(&k, "[setup]\nwrite a \"hello\"\n[run]\nunlink a\nwrite a \"world\"\n");
	k.res[0].ino = 12;
	k.res[2].ino = 12;
	CHECK(kit_sim(&k) == 0, "simulate");
	for (int at = 1; at <= 3; at++)
		exact_is_clean(&k, at, at, 3, "a number reused after unlink");
	kit_text(&k, "a", 0644, 12, "hello");
	kit_judge(&k, 3);
	CHECK(kit_find(&k, "universal", "U3", "kept"), "S0 with the reused number is explained: %s", k.j.n ? "" : "");
	kit_free(&k);
}

/* Links in directories no path reaches any more do not count. */
TEST(unreachable_directories)
{
	struct kit k;
	start(&k, "[setup]\nmkdir A\nmkdir C\nwrite A/bar \"x\"\nmkdir B\n[run]\nrename A/bar B/bar\nrename C A\n");
	exact_is_clean(&k, 6, 6, 6, "a file moved out of a directory replaced by an empty one");
	kit_free(&k);
	start(&k, "[setup]\nmkdir A\nwrite A/bar \"x\"\nmkdir B\n[run]\nrename A/bar B/bar\nrmdir A\n");
	exact_is_clean(&k, 5, 5, 5, "a file moved out of a directory then removed");
	kit_free(&k);
}

/* A later write seen in part: earlier promises stand. */
TEST(partial_pieces)
{
	struct kit k;
	start(&k, "[run]\nwrite f 8K\nfsync f\nappend f 64K\n");
	kit_node(&k, "f", 'f', 0644, 12288, 1, 20, "p1,p1,p3");
	kit_judge(&k, 2);
	for (int m = 0; m < MODEL_COUNT; m++)
		CHECK(k.j.count[m][V_LOST] == 0 || m == MODEL_SEQUENTIAL,
		      "size 12K after fsync f; append 64K: nothing LOST under %s", model_name(m));
	CHECK(kit_find(&k, "posix", "fsync.file", "kept"), "fsync.file kept");
	CHECK(kit_count(&k, "universal", "broken") == 0, "and nothing broken");
	kit_free(&k);
	start(&k, "[run]\nwrite f 8K\nsync\nappend f 64K\n");
	kit_node(&k, "f", 'f', 0644, 12288, 1, 20, "p1,p1,p3");
	kit_judge(&k, 2);
	CHECK(!kit_find(&k, "universal", "U5", "broken"), "with sync: U5 holds");
	CHECK(kit_find(&k, "posix", "sync", "kept"), "and posix's sync rule is kept");
	kit_free(&k);
}

/* ext4 promises the entry a file was created under, not names added by
 * link or rename. */
TEST(ext4_names)
{
	struct kit k;
	start(&k, "[setup]\ncreat f\n[run]\nlink f h\nfsync h\n");
	kit_node(&k, "f", 'f', 0644, 0, 1, 30, "");
	kit_judge(&k, 2);
	CHECK(!kit_find(&k, "ext4", NULL, "LOST"), "link f h; fsync h with only f: nothing LOST under ext4");
	kit_free(&k);
	start(&k, "[setup]\nwrite f \"old\"\n[run]\nrename f g\nfsync g\n");
	kit_text(&k, "f", 0644, 31, "old");
	kit_judge(&k, 2);
	CHECK(!kit_find(&k, "ext4", NULL, "LOST"), "rename f g; fsync g of an old file: nothing LOST under ext4");
	kit_free(&k);
	start(&k, "[run]\nwrite n \"new\"\nfsync n\n");
	kit_judge(&k, 2);
	CHECK(kit_find(&k, "ext4", "ext4.fsync-name", "LOST"), "a new file fsynced and missing: ext4 LOST");
	kit_free(&k);
}

/* Every model has the sync rule. */
TEST(sync_rule)
{
	struct kit k;
	start(&k, "[run]\nwrite f 4K\nsync\n");
	kit_node(&k, "f", 'f', 0644, 4096, 1, 40, "p1");
	kit_judge(&k, 2);
	CHECK(kit_find(&k, "posix", "sync", "kept"), "posix: sync kept");
	CHECK(!kit_find(&k, "posix", NULL, "bonus") && !kit_find(&k, "posix", NULL, "gone"),
	      "no bonus or gone after a completed sync");
	kit_clear(&k);
	kit_judge(&k, 2);
	CHECK(kit_find(&k, "posix", "sync", "LOST"), "posix: sync LOST when the file is missing");
	CHECK(kit_find(&k, "universal", "U5", "broken"), "and U5 broken");
	kit_free(&k);
}

/* U4: exchange, destinations created in the run, directories twice. */
TEST(renames)
{
	struct kit k;
	start(&k, "[setup]\nwrite a \"A\"\nwrite b \"B\"\n[run]\nrename a b exchange\n");
	exact_is_clean(&k, 2, 2, 3, "exchange, before");
	exact_is_clean(&k, 3, 3, 3, "exchange, after");
	kit_text(&k, "a", 0644, 0, "A");
	kit_text(&k, "b", 0644, 0, "A");
	kit_judge(&k, 3);
	CHECK(kit_find(&k, "universal", "U4", "broken") || kit_find(&k, "universal", "U3", "broken"),
	      "half an exchange (one inode under both names, the other gone) is broken");
	kit_free(&k);
	/* the destination was created in the run */
	kit_init(&k, "[setup]\nwrite a \"new\"\n[run]\ncreat b\nrename a b\n");
	k.res[0].ino = 50;
	k.res[1].ino = 51;
	k.res[2].ino = 50;
	k.res[2].ino2 = 50;
	CHECK(kit_sim(&k) == 0, "simulate");
	kit_text(&k, "a", 0644, 50, "new");
	kit_text(&k, "b", 0644, 50, "new");
	kit_judge(&k, 3);
	CHECK(kit_find(&k, "universal", "U4", "broken") || kit_find(&k, "universal", "U3", "broken"),
	      "a renamed file under both names, over a destination made in the run, is broken");
	kit_free(&k);
	/* a directory under two names */
	kit_init(&k, "[setup]\nmkdir A\nmkdir B\n[run]\nrename A B/A\n");
	k.res[0].ino = 60;
	k.res[1].ino = 61;
	k.res[2].ino = 60;
	CHECK(kit_sim(&k) == 0, "simulate");
	kit_node(&k, "A", 'd', 0755, 4096, 2, 60, NULL);
	kit_node(&k, "B", 'd', 0755, 4096, 3, 61, NULL);
	kit_node(&k, "B/A", 'd', 0755, 4096, 2, 60, NULL);
	kit_judge(&k, 3);
	CHECK(kit_find(&k, "universal", "U4", "broken") || kit_find(&k, "universal", "U3", "broken"),
	      "a directory visible under two names is broken");
	kit_free(&k);
}

/* SOMC orders size changes like other metadata. */
TEST(somc_sizes)
{
	struct kit k;
	kit_init(&k, "[setup]\nwrite f 8K\n[run]\ntruncate f 4K\nchmod f 0600\n");
	k.res[0].ino = 70;
	CHECK(kit_sim(&k) == 0, "simulate");
	kit_node(&k, "f", 'f', 0600, 8192, 1, 70, "p1,p1");
	kit_judge(&k, 3);
	CHECK(kit_find(&k, "somc", "somc.order", "LOST"), "chmod visible without the earlier truncate: somc LOST");
	CHECK(!kit_find(&k, "posix", NULL, "LOST"), "posix promises no order");
	kit_free(&k);
}

/* A witness seen in part still counts. */
TEST(partial_witness)
{
	struct kit k;
	kit_init(&k, "[setup]\ncreat f\n[run]\nwrite f 8K\nfdatabarrier f\nappend f 8K\n");
	k.res[0].ino = 80;
	CHECK(kit_sim(&k) == 0, "simulate");
	kit_node(&k, "f", 'f', 0644, 12288, 1, 80, "z,z,p4");
	kit_judge(&k, 4);
	CHECK(kit_find(&k, "barrier", "barrier.fdatabarrier", "LOST"),
	      "the append's size seen in part is a witness: the data before the barrier is LOST");
	kit_clear(&k);
	kit_node(&k, "f", 'f', 0644, 12288, 1, 80, "p2,p2,p4");
	kit_judge(&k, 4);
	CHECK(kit_find(&k, "barrier", "barrier.fdatabarrier", "kept"), "and kept when the data is there");
	kit_free(&k);
}

/* The workload's own expectations: judged once the last persistence op
 * completed, kept on the program's state, LOST where the state differs. */
TEST(expectations)
{
	struct kit k;
	start(&k, "[setup]\nmkdir A\nwrite A/foo \"hello\"\n[run]\nrename A/foo A/bar\nwrite A/foo 8K\n"
		  "setxattr A/foo user.k v\nfsync A/foo\n[expect]\nA/bar text \"hello\"\nA/foo data 4\nA/foo size 8192\n"
		  "A lists bar foo\nA/foo xattr user.k \"v\"\nA/baz absent\nA type dir\nA/foo nlink 1\n");
	struct st_tree t;
	st_render_at(&k.s, 6, &t);
	judge_nodes(&k, t.v, t.n, 5);
	CHECK(kit_count(&k, "expect", "kept") + kit_count(&k, "expect", "LOST") == 0,
	      "nothing is judged before the fsync completed");
	judge_nodes(&k, t.v, t.n, 6);
	CHECK(kit_count(&k, "expect", "kept") == 8 && kit_count(&k, "expect", "LOST") == 0,
	      "the program's state keeps all eight (%zu kept)", kit_count(&k, "expect", "kept"));
	const struct verdict *v = kit_find(&k, "expect", "expect", "kept");
	CHECK(v && strstr(v->cite, "test.wl:10: A/bar text \"hello\""), "the citation is the line: %s", v ? v->cite : "");
	st_free(&t);
	/* the seed outcome without SOMC: A/bar lost, A/foo there */
	st_render_at(&k.s, 2, &t);
	for (size_t i = 0; i < t.n; i++)
		if (!strcmp(t.v[i].path, "A/foo")) {
			struct st_tree u;
			st_render_at(&k.s, 6, &u);
			for (size_t q = 0; q < u.n; q++)
				if (!strcmp(u.v[q].path, "A/foo")) {
					tree_node_free(&t.v[i]);
					t.v[i] = u.v[q];
					u.v[q] = (struct tree_node){ .path = xstrdup("x") };
				}
			st_free(&u);
		}
	judge_nodes(&k, t.v, t.n, 6);
	CHECK(kit_count(&k, "expect", "LOST") == 2, "A/bar missing: its text and A's listing are LOST (%zu)",
	      kit_count(&k, "expect", "LOST"));
	v = kit_find(&k, "expect", "expect", "LOST");
	CHECK(v && strstr(v->reason, "found absent"), "in words: %s", v ? v->reason : "");
	st_free(&t);
	kit_free(&k);
}

/* A file's data in words, not block by block. */
TEST(data_in_words)
{
	struct kit k;
	start(&k, "[run]\nwrite f 64K\nfsync f\n");
	kit_node(&k, "f", 'f', 0644, 65536, 1, 5, "p1,p1,z,z,z,z,z,z,z,z,z,z,z,z,z,z");
	kit_judge(&k, 2);
	const struct verdict *v = kit_find(&k, "posix", "fsync.file", "LOST");
	CHECK(v && strstr(v->reason, "expected op 1's data, 64 KiB, found op 1's data (8 KiB), then zeros (56 KiB) in 64 KiB"),
	      "partly there: %s", v ? v->reason : "");
	kit_clear(&k);
	kit_node(&k, "f", 'f', 0644, 0, 1, 5, "");
	kit_judge(&k, 2);
	v = kit_find(&k, "posix", "fsync.file", "LOST");
	CHECK(v && strstr(v->reason, "found an empty file"), "empty: %s", v ? v->reason : "");
	kit_free(&k);
}

TEST_MAIN()
