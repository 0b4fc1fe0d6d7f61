/*
 * test-export.c - the text exports of engine/export.h: the C program
 * compiles with plain cc -Wall (every kind of op), the xfstests test of a
 * judged LOST has the promised golden output, passes bash -n and calls
 * only helpers xfstests has, and what cannot be exported is refused.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/export.h"
#include "host/hash.h"
#include "tests/unit/check.h"
#include "tests/unit/judgekit.h"

static const char every_op[] =
	"[setup]\n"
	"mkdir A\nmkdir B 0700\ncreat A/f 0600\nwrite A/f 0 8K\nsync\n"
	"[run]\n"
	"append A/f \"tail\\n\"\n"
	"write A/t 4 \"quote \\\" and \\\\ and ?? and */\"\n"
	"dwrite A/d 0 4K\nmmapwrite A/m 0 100\nmmapwrite A/n \"text\"\n"
	"truncate A/f 100\nfalloc A/f keep_size 0 8K\nfalloc A/f punch_hole 0 4K\n"
	"link A/f A/g\nsymlink A/f A/s\nrename A/g A/h noreplace\nrename A/h A/i\n"
	"setxattr A/f user.x \"v\"\nremovexattr A/f user.x\nchmod A/f 0644\n"
	"fsync A/f\nfdatasync A/f\nfsync A\nsync_file_range A/f 0 4096 write,wait_after\n"
	"fbarrier A/f\nfdatabarrier A/f\nfiemap_sync A/f\nsyncfs\nsync\nclose A/f\nsleep 1\nmark done\n"
	"unlink A/i\nrmdir B\n";

struct ex {
	struct kit k;
	struct run_info run;
	struct fsrun fr;
	struct state_result st;
	struct export_src x;
};

static void ex_init(struct ex *x, const char *wl)
{
	memset(x, 0, sizeof(*x));
	kit_init(&x->k, wl);
	x->run.id = 7;
	x->run.workload_file = "t.wl";
	x->run.workload_text = (char *)wl;
	x->fr.fs = "ext4";
	x->fr.run_id = 7;
	x->fr.ops = x->k.w;
	x->fr.res = x->k.res;
	x->st.idx = 1;
	x->x = (struct export_src){ &x->run, &x->fr, &x->st };
}

static char *write_tmp(const char *name, const struct sbuf *sb)
{
	const char *tmp = getenv("TMPDIR");
	char *p = xasprintf("%s/crashlab-test-export-%d-%s", tmp && *tmp ? tmp : "/tmp", (int)getpid(), name);
	FILE *f = fopen(p, "w");
	if (!f)
		BUG("cannot write '%s'", p);
	fwrite(sb->buf, 1, sb->len, f);
	fclose(f);
	return p;
}

static int have(const char *prog)
{
	char *c = xasprintf("command -v %s >/dev/null 2>&1", prog);
	int r = system(c) == 0;
	free(c);
	return r;
}

TEST(c_program_compiles)
{
	struct ex x;
	ex_init(&x, every_op);
	struct sbuf c = SBUF_INIT, exp = SBUF_INIT;
	export_c(&c, &x.x, "every");
	export_c_expected(&exp, &x.fr);
	CHECK(strstr(c.buf, "do_rename(\"A/g\", \"A/h\", RENAME_NOREPLACE)") != NULL, "the rename keeps its flag");
	CHECK(strstr(c.buf, "do_fd_op(\"A/f\", FD_SFR, 0, 4096, SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER)"),
	      "sync_file_range with its flags");
	CHECK(strstr(c.buf, "return data ? 901 : 900;"), "the barrier calls' numbers of the series");
	CHECK(!strstr(c.buf, "463") && !strstr(c.buf, "464"), "no number upstream gives to other calls");
	CHECK(!strstr(c.buf, "#include \"core/"), "no crashlab header");
	CHECK(strstr(exp.buf, "1\t0\t0\t-\tmkdir A 0755\n") != NULL, "the expected lines: op, ret, errno, name, text");
	if (!have("cc")) {
		sbuf_free(&c);
		sbuf_free(&exp);
		SKIP("no cc");
	}
	char *src = write_tmp("every.c", &c);
	char *cmd = xasprintf("cc -Wall -Wextra -Werror -fsyntax-only %s", src);
	CHECK(system(cmd) == 0, "compiles with cc -Wall -Wextra -Werror: %s", cmd);
	unlink(src);
	free(src);
	free(cmd);
	sbuf_free(&c);
	sbuf_free(&exp);
	x.fr.ops = (struct wl_workload){ 0 };
	kit_free(&x.k);
}

/* An fsync'd write of 8 KiB that the state lost: LOST under posix. */
static void lost_state(struct ex *x)
{
	ex_init(x, "[setup]\ncreat f\n[run]\nwrite f 8K\nrename f g\nfsync g\n");
	CHECK(kit_sim(&x->k) == 0, "simulate");
	kit_node(&x->k, "f", 'f', 0644, 0, 1, 50, "");
	kit_judge(&x->k, 4);
	x->st.judge = x->k.j;
	x->st.judge.judged = 1;
	CHECK(kit_find(&x->k, "posix", NULL, "LOST") != NULL, "the state has a LOST under posix");
}

TEST(xfstests_golden_is_the_promise)
{
	struct ex x;
	lost_state(&x);
	struct sbuf sh = SBUF_INIT, out = SBUF_INIT;
	struct errbuf e;
	int model = -1;
	CHECK(export_xfstests(&sh, &out, &x.x, "999", -1, &model, &e) == 0, "exported: %s", e.msg);
	CHECK(model == MODEL_EXT4 || model == MODEL_POSIX, "the fs's own model or posix: %s", model_name(model));
	/* op 2 wrote 8 KiB: the test fills it with 0x02; the promise is g with those bytes */
	unsigned char buf[8192];
	memset(buf, 2, sizeof(buf));
	char sum[65];
	struct hasher *h = hasher_new();
	hasher_add(h, buf, sizeof(buf));
	hasher_done(h, sum);
	char *want = xasprintf("QA output created by 999\ng: file\ng: size 8192, sha256 %s\n", sum);
	CHECK(out.buf && strstr(out.buf, want) != NULL, "the golden output has g's promised size and digest");
	free(want);
	CHECK(strstr(sh.buf, "pwrite -S 0x02 0 8192") != NULL, "the write as xfs_io's fill of its op");
	CHECK(strstr(sh.buf, "mv -T \"$SCRATCH_MNT\"/'f' \"$SCRATCH_MNT\"/'g'") != NULL, "the rename as mv -T");
	CHECK(strstr(sh.buf, "_flakey_drop_and_remount\n") != NULL, "the power cut");
	CHECK(strstr(sh.buf, ". ./common/preamble\n_begin_fstest auto quick log\n") != NULL, "the preamble");
	CHECK(!strstr(sh.buf, "MOUNT_OPTIONS") && !strstr(sh.buf, "MKFS_OPTIONS"), "default options: none set");
	sbuf_reset(&sh);
	sbuf_reset(&out);
	x.fr.mount_opts = "data=journal,x=\"$(y)\"";
	x.fr.mkfs_opts = "-O ^has_journal";
	CHECK(export_xfstests(&sh, &out, &x.x, "999", -1, &model, &e) == 0, "exported with options");
	CHECK(strstr(sh.buf, "export MOUNT_OPTIONS=\"-o data=journal,x=\\\"\\$(y)\\\" $MOUNT_OPTIONS\"") != NULL,
	      "the run's mount options, quoted for the shell");
	CHECK(strstr(sh.buf, "export MKFS_OPTIONS=\"-O ^has_journal $MKFS_OPTIONS\"") != NULL, "and its mkfs options");

	/* only helpers xfstests has */
	int unknown = 0;
	for (const char *p = sh.buf; (p = strchr(p, '_'));) {
		if (p > sh.buf && (p[-1] == '$' || p[-1] == '.' || (p[-1] >= 'A' && p[-1] <= 'Z') ||
				   (p[-1] >= 'a' && p[-1] <= 'z') || (p[-1] >= '0' && p[-1] <= '9'))) {
			p++;
			continue;
		}
		size_t l = strspn(p, "abcdefghijklmnopqrstuvwxyz_");
		char *word = xstrndup(p, l);
		int known = 0;
		for (size_t i = 0; export_xfstests_helpers[i]; i++)
			known |= !strcmp(word, export_xfstests_helpers[i]);
		if (!known) {
			unknown++;
			CHECK(0, "'%s' is not in the list of xfstests helpers", word);
		}
		free(word);
		p += l;
	}
	CHECK(!unknown, "every _helper the script calls is a known xfstests helper");
	if (have("bash")) {
		char *p = write_tmp("999", &sh);
		char *cmd = xasprintf("bash -n %s", p);
		CHECK(system(cmd) == 0, "bash -n passes");
		unlink(p);
		free(p);
		free(cmd);
	}
	sbuf_free(&sh);
	sbuf_free(&out);
	x.fr.ops = (struct wl_workload){ 0 };
	kit_free(&x.k);
}

TEST(xfstests_refuses)
{
	struct ex x;
	struct sbuf sh = SBUF_INIT, out = SBUF_INIT;
	struct errbuf e;
	int model;
	ex_init(&x, "[setup]\ncreat f\n[run]\nwrite f 4K\nfsync f\n");
	CHECK(kit_sim(&x.k) == 0, "simulate");
	kit_node(&x.k, "f", 'f', 0644, 4096, 1, 50, "p2");
	kit_judge(&x.k, 3);
	x.st.judge = x.k.j;
	x.st.judge.judged = 1;
	CHECK(export_xfstests(&sh, &out, &x.x, "999", -1, &model, &e) < 0 && e.code == EXIT_DATAERR &&
		      strstr(e.msg, "no LOST"), "a state with no LOST and no model: refused (%s)", e.msg);
	sbuf_reset(&sh);
	sbuf_reset(&out);
	CHECK(export_xfstests(&sh, &out, &x.x, "999", MODEL_POSIX, &model, &e) == 0,
	      "with --model posix: a test of what posix promised and the state kept");
	CHECK(out.buf && strstr(out.buf, "f: size 4096, sha256 ") != NULL, "the kept data in the golden output");
	x.fr.ops = (struct wl_workload){ 0 };
	kit_free(&x.k);

	ex_init(&x, "[setup]\ncreat f\n[run]\nwrite f 4K\nfdatabarrier f\nfsync f\n");
	CHECK(kit_sim(&x.k) == 0, "simulate");
	kit_node(&x.k, "f", 'f', 0644, 0, 1, 50, "");
	kit_judge(&x.k, 4);
	x.st.judge = x.k.j;
	x.st.judge.judged = 1;
	sbuf_reset(&sh);
	sbuf_reset(&out);
	CHECK(export_xfstests(&sh, &out, &x.x, "999", -1, &model, &e) < 0 && e.code == EXIT_DATAERR &&
		      strstr(e.msg, "op 3") && strstr(e.msg, "--format c"),
	      "an op xfs_io cannot express is refused, naming it: %s", e.msg);
	sbuf_free(&sh);
	sbuf_free(&out);
	x.fr.ops = (struct wl_workload){ 0 };
	kit_free(&x.k);
}

TEST(wl_is_the_stored_workload)
{
	struct ex x;
	ex_init(&x, "[run]\ncreat f\nfsync f\n");
	x.fr.mount_opts = "data=journal";
	struct sbuf sb = SBUF_INIT;
	export_wl(&sb, &x.x);
	CHECK(strstr(sb.buf, "# exported from crashlab run 7 (t.wl), file system ext4, crash state 1\n") == sb.buf,
	      "a comment says where it comes from");
	CHECK(strstr(sb.buf, "--mount-opts ext4:data=journal") != NULL, "and how it was mounted");
	CHECK(strstr(sb.buf, "\n[run]\ncreat f\nfsync f\n") != NULL, "then the workload as stored");
	struct wl_workload w;
	struct errbuf e;
	CHECK(wl_parse("x.wl", sb.buf, &w, &e) == 0 && w.n == 2, "it parses back: %s", e.msg);
	wl_free(&w);
	sbuf_reset(&sb);
	x.run.workload_text = NULL;
	export_wl(&sb, &x.x);
	CHECK(strstr(sb.buf, "\n[run]\ncreat f 0644\nfsync f\n") != NULL,
	      "without a stored text: the ops as recorded");
	sbuf_free(&sb);
	x.fr.ops = (struct wl_workload){ 0 };
	kit_free(&x.k);
}

TEST_MAIN()
