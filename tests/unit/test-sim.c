/*
 * test-sim.c - the reference simulator (judge/sim.c): S0 and the changes of
 * each op (a write split into blocks and its size, a rename into its two
 * halves), failures applied as the guest reports them, inode identities,
 * and the ops it refuses to model.
 */
#include <errno.h>
#include <stdio.h>

#include "tests/unit/check.h"
#include "tests/unit/judgekit.h"

static size_t changes_of(const struct sim *s, int op, enum sim_field_kind kind)
{
	const struct sim_op *so = &s->ops[op - 1];
	size_t n = 0;
	for (size_t c = so->first; c < so->first + so->n; c++)
		n += s->ch[c].f.kind == kind;
	return n;
}

TEST(simulator)
{
	struct kit k;
	kit_init(&k, "[setup]\nmkdir A\nwrite A/foo \"hello\"\nsync\n[run]\nrename A/foo A/bar\nwrite A/foo \"world\"\n"
		     "fsync A/foo\n");
	k.res[0].ino = 100;
	k.res[1].ino = 101;
	k.res[3].ino2 = 101;
	k.res[4].ino = 102;
	CHECK(kit_sim(&k) == 0, "the seed example simulates");
	CHECK(k.s.ops[0].n == 0 && k.s.ops[1].n == 0, "setup ops make S0, not changes");
	CHECK(k.s.ops[3].n == 2 && changes_of(&k.s, 4, SF_ENTRY) == 2, "a rename is two halves: source and destination");
	CHECK(k.s.ch[k.s.ops[3].first].val == SIM_ABSENT, "the first half removes the source name");
	CHECK(changes_of(&k.s, 5, SF_ENTRY) == 1 && changes_of(&k.s, 5, SF_BLOCK) == 1 && changes_of(&k.s, 5, SF_SIZE) == 1,
	      "the write creates a name, one block and the size");
	CHECK(k.s.ops[5].n == 0 && k.s.ops[5].applied, "fsync changes nothing");
	int foo_new = k.s.ops[4].obj, bar = k.s.ops[3].obj2;
	CHECK(foo_new >= 0 && bar >= 0 && foo_new != bar, "the second A/foo is a new inode");
	CHECK(k.s.in[bar].ino == 101 && k.s.in[foo_new].ino == 102, "inode numbers are learned from the op results");
	char tok[24];
	struct sim_field bf = { SF_BLOCK, foo_new, 0 };
	sim_block_token(&k.s, sim_value_final(&k.s, &bf), 0, 5, tok);
	char want[24];
	tree_block_token((const unsigned char *)"world", 5, 0, want);
	CHECK(!strcmp(tok, want), "block tokens are those the checker computes");
	struct sim_field sz = { SF_SIZE, bar, 0 };
	CHECK(sim_value_at(&k.s, &sz, 0) == 5, "S0 value of a setup file");
	char *p = sim_path_at(&k.s, bar, 3);
	CHECK(p && !strcmp(p, "A/foo"), "paths as of S_k: before the rename, A/foo (%s)", p ? p : "null");
	free(p);
	p = sim_path_at(&k.s, bar, 6);
	CHECK(p && !strcmp(p, "A/bar"), "after it, A/bar");
	free(p);
	kit_free(&k);

	/* Data: patterns per block, sub-block writes, truncate zeroes, punch hole */
	kit_init(&k, "[run]\nwrite f 8K\nwrite f 100 \"ab\"\ntruncate f 5000\ntruncate f 8192\nfalloc f punch_hole 0 4096\n"
		     "append f 4K\n");
	CHECK(kit_sim(&k) == 0, "data ops simulate");
	int f = k.s.ops[0].obj;
	CHECK(changes_of(&k.s, 1, SF_BLOCK) == 2, "an 8 KiB write is two block pieces");
	CHECK(changes_of(&k.s, 2, SF_BLOCK) == 1 && changes_of(&k.s, 2, SF_SIZE) == 0, "a sub-block overwrite: one block, no size");
	struct sim_field b1 = { SF_BLOCK, f, 1 };
	sim_block_token(&k.s, sim_value_at(&k.s, &b1, 4), 4096, 4096, tok);
	const unsigned char *blk = sim_block(&k.s, sim_value_at(&k.s, &b1, 4));
	int zero_tail = 1;
	for (int i = 5000 - 4096; i < 4096; i++)
		zero_tail &= blk[i] == 0;
	CHECK(zero_tail && blk[0] != 0, "a shrinking truncate zeroes beyond the end, a re-extension reads zeros");
	struct sim_field b0 = { SF_BLOCK, f, 0 };
	CHECK(sim_value_at(&k.s, &b0, 5) == 0, "punch_hole zeroes the block");
	struct sim_field fs = { SF_SIZE, f, 0 };
	CHECK(sim_value_final(&k.s, &fs) == 12288, "append writes at the end");
	kit_free(&k);

	/* Failures: the guest's outcome is applied; disagreements are reported */
	kit_init(&k, "[run]\nunlink nosuch\nmkdir d\nrmdir d\nfdatabarrier d\nrename a b barrier\n");
	kit_fail(&k, 1, ENOENT);
	kit_fail(&k, 3, EBUSY);
	kit_fail(&k, 4, ENOSYS);
	CHECK(kit_sim(&k) == 0, "failed ops simulate");
	CHECK(!k.s.ops[0].applied && !k.s.ops[0].mismatch[0], "a failure the simulator predicts: no note");
	CHECK(!k.s.ops[2].applied && strstr(k.s.ops[2].mismatch, "op 3 `rmdir d` failed in the guest"),
	      "a guest failure the simulator did not expect is reported and applied: %s", k.s.ops[2].mismatch);
	CHECK(!k.s.ops[3].mismatch[0], "ENOSYS from a barrier call: the kernel lacks it, no note");
	CHECK(strstr(k.s.ops[4].mismatch, "succeeded in the guest"), "a success the simulator cannot reproduce is reported");
	kit_free(&k);

	/* link, symlink, exchange, xattrs, chmod */
	kit_init(&k, "[run]\nwrite a \"1\"\nwrite b \"2\"\nrename a b exchange\nlink a l\nsymlink a s\nsetxattr a user.k v\n"
		     "removexattr a user.k\nchmod s 0600\nclose a\nclose zz\n");
	kit_fail(&k, 10, EBADF);
	CHECK(kit_sim(&k) == 0, "name ops simulate");
	CHECK(k.s.ops[2].n == 2, "exchange swaps two entries");
	CHECK(k.s.in[k.s.ops[3].obj].type == 'f', "link names the file");
	int s_ino = -1;
	for (size_t i = 0; i < k.s.nin; i++)
		if (k.s.in[i].type == 'l')
			s_ino = (int)i;
	CHECK(s_ino >= 0 && !strcmp(k.s.in[s_ino].target, "a"), "symlink target kept");
	CHECK(changes_of(&k.s, 6, SF_XATTR) == 1 && changes_of(&k.s, 7, SF_XATTR) == 1, "setxattr and removexattr");
	CHECK(k.s.ops[7].obj != s_ino && k.s.in[k.s.ops[7].obj].mode == 0600, "chmod follows the symlink");
	CHECK(k.s.ops[8].applied && !k.s.ops[9].mismatch[0], "close of an opened file works; of another fails with EBADF");
	kit_free(&k);

	/* what it cannot model */
	struct wl_workload w;
	struct errbuf eb = { 0 };
	char *err = eb.msg;
	wl_parse("big.wl", "[run]\nwrite f 2G 4K\n", &w, &eb);
	CHECK(sim_check(&w, &eb) < 0 && strstr(err, "op 1 (line 2) `write f 2G 4K`"),
	      "an op it cannot model is refused, naming the op: %s", err);
	wl_free(&w);
	wl_parse("abs.wl", "[run]\nsymlink /etc/passwd s\nwrite s \"x\"\n", &w, &eb);
	CHECK(sim_check(&w, &eb) < 0 && strstr(err, "op 2"), "a symlink out of the file system: %s", err);
	wl_free(&w);
}

TEST_MAIN()
