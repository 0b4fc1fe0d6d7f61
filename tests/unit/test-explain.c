/*
 * test-explain.c - explanations of hand-made crash states (judge/explain.c):
 * the persisted pieces per op, identity before content, torn renames and
 * torn blocks explained, and the first difference named (path, field,
 * expected, found) when no set of ops explains a state.
 */
#include <stdio.h>
#include <time.h>

#include "tests/unit/check.h"
#include "tests/unit/judgekit.h"

static void explain(struct kit *k, int last, struct explain *e)
{
	explain_state(e, &k->s, k->nodes, k->n, last);
}

TEST(explanations)
{
	struct kit k;
	struct explain e;
	kit_init(&k, "[setup]\nmkdir A\nwrite A/foo \"hello\"\nsync\n[run]\nrename A/foo A/bar\nwrite A/foo \"world\"\n"
		     "fsync A/foo\n");
	k.res[1].ino = 11;
	k.res[3].ino2 = 11;
	k.res[4].ino = 12;
	kit_sim(&k);

	kit_node(&k, "A", 'd', 0755, 4096, 2, 10, NULL);
	kit_text(&k, "A/foo", 0644, 11, "hello");
	explain(&k, 6, &e);
	CHECK(e.explained && !strcmp(e.marks, "sss--."), "nothing after setup persisted: %s", e.marks);
	explain_free(&e);
	kit_clear(&k);

	kit_node(&k, "A", 'd', 0755, 4096, 2, 10, NULL);
	kit_text(&k, "A/foo", 0644, 12, "world");
	explain(&k, 6, &e);
	CHECK(e.explained && e.marks[3] == EX_MARK_PARTIAL && e.marks[4] == EX_MARK_PERSISTED,
	      "a torn rename is explained: source gone, destination not there (%s)", e.marks);
	explain_free(&e);
	kit_clear(&k);

	/* identity first: the old inode's bytes under the new name's inode number is not the old file */
	kit_node(&k, "A", 'd', 0755, 4096, 2, 10, NULL);
	kit_text(&k, "A/foo", 0644, 12, "hello");
	explain(&k, 6, &e);
	CHECK(!e.explained && strstr(e.diff, "'A/foo' block 0") && strstr(e.diff, "expected"),
	      "identity first: inode 12 holding \"hello\" is a difference: %s", e.diff);
	explain_free(&e);
	kit_clear(&k);

	/* a file that never existed */
	kit_node(&k, "A", 'd', 0755, 4096, 2, 10, NULL);
	kit_text(&k, "A/foo", 0644, 11, "hello");
	kit_node(&k, "A/baz", 'f', 0644, 0, 1, 40, "");
	explain(&k, 6, &e);
	CHECK(!e.explained && strstr(e.diff, "'A/baz'") && strstr(e.diff, "no op"), "a file no op created: %s", e.diff);
	explain_free(&e);
	kit_clear(&k);

	/* a name missing that no op removed */
	explain(&k, 6, &e);
	CHECK(!e.explained && strstr(e.diff, "'A' is missing"), "a setup directory missing: %s", e.diff);
	explain_free(&e);
	kit_clear(&k);

	/* wrong size and mode: path, field, expected, found */
	kit_node(&k, "A", 'd', 0700, 4096, 2, 10, NULL);
	kit_text(&k, "A/foo", 0644, 11, "hello");
	explain(&k, 6, &e);
	CHECK(!e.explained && strstr(e.diff, "'A' has mode 0700") && strstr(e.diff, "expected: mode 0755"),
	      "a mode no op gave: %s", e.diff);
	explain_free(&e);
	kit_free(&k);

	/* torn block: sectors of two versions */
	kit_init(&k, "[setup]\nwrite f 4K\n[run]\nwrite f 4K\n");
	kit_sim(&k);
	unsigned char blk[4096];
	wl_pattern(1, 0, blk, 4096);
	wl_pattern(2, 0, blk, 1024);
	char tok[24];
	tree_block_token(blk, 4096, 0, tok);
	kit_node(&k, "f", 'f', 0644, 4096, 1, 30, tok);
	explain(&k, 2, &e);
	CHECK(e.explained && e.ntorn == 1 && e.marks[1] == EX_MARK_PARTIAL, "a block torn between two writes is explained (%s)",
	      e.marks);
	explain_free(&e);
	kit_free(&k);

	/* a growing write seen with part of its size (ext4 writes i_disksize back as it goes) */
	kit_init(&k, "[run]\nwrite f 12K\n");
	kit_sim(&k);
	kit_node(&k, "f", 'f', 0644, 8192, 1, 30, "p1,p1");
	explain(&k, 1, &e);
	CHECK(e.explained && e.marks[0] == EX_MARK_PARTIAL, "a write whose size reached the disk in part is explained (%s)",
	      e.diff);
	explain_free(&e);
	kit_clear(&k);
	kit_node(&k, "f", 'f', 0644, 5000, 1, 30, "p1,p1");
	explain(&k, 1, &e);
	CHECK(!e.explained && strstr(e.diff, "'f' has size 5000"), "but not any size: %s", e.diff);
	explain_free(&e);
	kit_free(&k);

	/* cost: linear in the number of ops */
	struct sbuf wl = SBUF_INIT;
	sbuf_adds(&wl, "[run]\n");
	for (int i = 0; i < 400; i++)
		sbuf_addf(&wl, "write f%d 8K\n", i);
	kit_init(&k, wl.buf);
	kit_sim(&k);
	for (int i = 0; i < 30; i++) {
		char path[16];
		snprintf(path, sizeof(path), "f%d", i);
		char b[32];
		snprintf(b, sizeof(b), "p%d,p%d", i + 1, i + 1);
		kit_node(&k, path, 'f', 0644, 8192, 1, 0, b);
	}
	explain(&k, 400, &e);
	CHECK(e.explained && e.marks[0] == EX_MARK_PERSISTED && e.marks[399] == EX_MARK_LOST,
	      "400 ops explained per field (%s)", e.diff);
	explain_free(&e);
	kit_free(&k);
	sbuf_free(&wl);
}

TEST_MAIN()
