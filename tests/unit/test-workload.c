/* test-workload.c - the workload language: every op, the canonical round
 * trip, the error messages, sections, and the write pattern. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "core/workload.h"
#include "tests/unit/check.h"

static struct wl_op op;
static struct errbuf eb;
#define err (eb.msg)

static int parse(const char *line)
{
	wl_op_free(&op);
	return wl_parse_line(line, 7, WL_RUN, &op, &eb);
}

static int streq(const char *a, const char *b)
{
	return a && b && !strcmp(a, b);
}

static int same_op(const struct wl_op *a, const struct wl_op *b)
{
	return a->kind == b->kind && a->section == b->section && a->id == b->id &&
	       ((!a->path && !b->path) || streq(a->path, b->path)) &&
	       ((!a->path2 && !b->path2) || streq(a->path2, b->path2)) && a->off == b->off &&
	       a->len == b->len && a->data_len == b->data_len && (!a->data) == (!b->data) &&
	       (!a->data || !memcmp(a->data, b->data, a->data_len)) && a->mode == b->mode &&
	       a->flags == b->flags && ((!a->name && !b->name) || streq(a->name, b->name)) &&
	       a->value_len == b->value_len && (!a->value) == (!b->value) &&
	       (!a->value || !memcmp(a->value, b->value, a->value_len));
}

TEST(ops)
{
	CHECK(parse("mkdir A") == 0 && op.kind == WL_MKDIR && streq(op.path, "A") && op.mode == 0755 &&
	      op.id == 7 && op.section == WL_RUN && op.off == -1 && op.len == -1, "mkdir P: default mode 0755");
	CHECK(parse("mkdir A/b 700") == 0 && op.mode == 0700, "mkdir P MODE without the leading 0");
	CHECK(parse("rmdir A") == 0 && op.kind == WL_RMDIR && streq(op.path, "A"), "rmdir");
	CHECK(parse("creat f") == 0 && op.kind == WL_CREAT && op.mode == 0644, "creat: default mode 0644");
	CHECK(parse("creat f 0600") == 0 && op.mode == 0600, "creat P MODE");
	CHECK(parse("write A/foo \"hello\"") == 0 && op.kind == WL_WRITE && op.off == 0 && op.data_len == 5 &&
	      op.len == 5 && !memcmp(op.data, "hello", 5), "write P TEXT: offset 0, len = text length");
	CHECK(parse("write f 4K") == 0 && !op.data && op.off == 0 && op.len == 4096, "write P LEN (K suffix)");
	CHECK(parse("write f 1M 8k") == 0 && op.off == 1048576 && op.len == 8192, "write P OFF LEN (lower-case suffix)");
	CHECK(parse("write f 10 \"a\\tb\\nc\\\\d\\\"e\\x00\\xfF\"") == 0 && op.off == 10 && op.data_len == 11 &&
	      !memcmp(op.data, "a\tb\nc\\d\"e\0\xff", 11), "write P OFF TEXT with every escape");
	CHECK(parse("write f \"4K\"") == 0 && op.data && op.data_len == 2, "a quoted number is text");
	CHECK(parse("append log 100") == 0 && op.kind == WL_APPEND && op.len == 100 && op.off == -1 && !op.data,
	      "append P LEN has no offset");
	CHECK(parse("append log \"line\\n\"") == 0 && op.data_len == 5, "append P TEXT");
	CHECK(parse("dwrite d 8K") == 0 && op.kind == WL_DWRITE && op.off == 0 && op.len == 8192, "dwrite P LEN");
	CHECK(parse("dwrite d 4096 1M") == 0 && op.off == 4096 && op.len == 1048576, "dwrite P OFF LEN");
	CHECK(parse("mmapwrite m 100 \"x\"") == 0 && op.kind == WL_MMAPWRITE && op.off == 100 && op.data_len == 1,
	      "mmapwrite P OFF TEXT");
	CHECK(parse("mmapwrite m 2G") == 0 && op.off == 0 && op.len == 2147483648LL, "mmapwrite P LEN (G)");
	CHECK(parse("truncate f 0") == 0 && op.kind == WL_TRUNCATE && op.len == 0, "truncate P SIZE");
	CHECK(parse("falloc f 0 0 64K") == 0 && op.kind == WL_FALLOC && op.flags == WL_FALLOC_DEFAULT && op.off == 0 &&
	      op.len == 65536, "falloc P 0 OFF LEN");
	CHECK(parse("falloc f keep_size 4K 4K") == 0 && op.flags == WL_FALLOC_KEEP_SIZE, "falloc keep_size");
	CHECK(parse("falloc f punch_hole 0 4K") == 0 && op.flags == WL_FALLOC_PUNCH_HOLE, "falloc punch_hole");
	CHECK(parse("falloc f zero_range 0 4K") == 0 && op.flags == WL_FALLOC_ZERO_RANGE, "falloc zero_range");
	CHECK(parse("falloc f zero_range_keep_size 0 4K") == 0 && op.flags == WL_FALLOC_ZERO_RANGE_KEEP_SIZE,
	      "falloc zero_range_keep_size");
	CHECK(parse("link a b") == 0 && op.kind == WL_LINK && streq(op.path, "a") && streq(op.path2, "b"), "link OLD NEW");
	CHECK(parse("symlink ../../etc/x l") == 0 && op.kind == WL_SYMLINK && streq(op.path, "l") &&
	      streq(op.path2, "../../etc/x"), "symlink TARGET P: the target is free text");
	CHECK(parse("symlink /abs l") == 0 && streq(op.path2, "/abs"), "symlink to an absolute target");
	CHECK(parse("rename a b") == 0 && op.kind == WL_RENAME && op.flags == WL_RENAME_PLAIN, "rename OLD NEW");
	CHECK(parse("rename a b noreplace") == 0 && op.flags == WL_RENAME_NOREPLACE, "rename noreplace");
	CHECK(parse("rename a b exchange") == 0 && op.flags == WL_RENAME_EXCHANGE, "rename exchange");
	CHECK(parse("rename a b barrier") == 0 && op.flags == WL_RENAME_BARRIER, "rename barrier");
	CHECK(parse("unlink a") == 0 && op.kind == WL_UNLINK, "unlink");
	CHECK(parse("setxattr f user.k v1") == 0 && op.kind == WL_SETXATTR && streq(op.name, "user.k") &&
	      op.value_len == 2 && !memcmp(op.value, "v1", 2), "setxattr P NAME VALUE (bare value)");
	CHECK(parse("setxattr f user.k \"a b\\x00\"") == 0 && op.value_len == 4 && !memcmp(op.value, "a b\0", 4),
	      "setxattr with a quoted binary value");
	CHECK(parse("setxattr f user.k \"\"") == 0 && op.value && op.value_len == 0, "setxattr with an empty value");
	CHECK(parse("removexattr f user.k") == 0 && op.kind == WL_REMOVEXATTR && streq(op.name, "user.k"), "removexattr");
	CHECK(parse("chmod f 4755") == 0 && op.kind == WL_CHMOD && op.mode == 04755, "chmod P MODE");
	CHECK(parse("fsync A/foo") == 0 && op.kind == WL_FSYNC, "fsync");
	CHECK(parse("fsync .") == 0 && streq(op.path, "."), "fsync of the mount root");
	CHECK(parse("fdatasync f") == 0 && op.kind == WL_FDATASYNC, "fdatasync");
	CHECK(parse("sync") == 0 && op.kind == WL_SYNC && !op.path, "sync");
	CHECK(parse("syncfs") == 0 && op.kind == WL_SYNCFS, "syncfs");
	CHECK(parse("sync_file_range f 0 4K write") == 0 && op.kind == WL_SYNC_FILE_RANGE && op.off == 0 &&
	      op.len == 4096 && op.flags == WL_SFR_WRITE, "sync_file_range one flag");
	CHECK(parse("sync_file_range f 4K 0 wait_after,write|wait_before") == 0 &&
	      op.flags == (WL_SFR_WAIT_BEFORE | WL_SFR_WRITE | WL_SFR_WAIT_AFTER), "sync_file_range flags by , and |");
	CHECK(parse("fbarrier t") == 0 && op.kind == WL_FBARRIER, "fbarrier");
	CHECK(parse("fdatabarrier t") == 0 && op.kind == WL_FDATABARRIER, "fdatabarrier");
	CHECK(parse("fiemap_sync t") == 0 && op.kind == WL_FIEMAP_SYNC, "fiemap_sync");
	CHECK(parse("close t") == 0 && op.kind == WL_CLOSE, "close");
	CHECK(parse("sleep 5000") == 0 && op.kind == WL_SLEEP && op.len == 5000, "sleep MS");
	CHECK(parse("mark \"after rename\"") == 0 && op.kind == WL_MARK && streq(op.name, "after rename"), "mark LABEL");
	CHECK(parse("  write\t\"a b#c\"  1  # a comment") == 0 && streq(op.path, "a b#c") && op.len == 1 && op.col == 3,
	      "quoted path with blank and '#', tabs, trailing comment; col of the keyword");
	CHECK(parse("write a#comment") < 0, "'#' ends a bare word (then LEN is missing)");

	int kinds = 0;
	for (int k = 0; k < WL_NKINDS; k++)
		kinds += wl_kind_name((enum wl_kind)k)[0] != '?';
	CHECK(kinds == WL_NKINDS && streq(wl_kind_name(WL_SYNC_FILE_RANGE), "sync_file_range") &&
	      streq(wl_kind_name(WL_NKINDS), "?"), "every kind has its keyword");
}

static const char *round_trip_lines[] = {
	"mkdir A", "mkdir \"sp ace\" 0700", "rmdir A", "creat f", "creat f 0600",
	"write A/foo \"hello\"", "write f 4K", "write f 4097 8K", "write f 12 \"\\x01\\x7f\\xff\\\"#\\\\\"",
	"write f 0 \"\"", "append l 100", "append l \"x\\n\"", "dwrite d 8K", "dwrite d 1M 4K",
	"mmapwrite m 100 \"mapped\"", "mmapwrite m 3", "truncate f 0", "truncate f 1G",
	"falloc f 0 0 64K", "falloc f keep_size 1 2", "falloc f punch_hole 4K 4K", "falloc f zero_range 0 1",
	"falloc f zero_range_keep_size 0 1", "link a b", "symlink \"target with space\" l", "symlink .. l2",
	"rename a b", "rename a b noreplace", "rename a b exchange", "rename a b barrier", "unlink a",
	"setxattr f user.a \"v;=\\x00\"", "setxattr f user.a bare", "removexattr f user.a", "chmod f 0", "chmod f 7777",
	"fsync f", "fdatasync f", "sync", "syncfs", "sync_file_range f 0 0 wait_before",
	"sync_file_range f 1K 2K write|wait_after|wait_before", "fbarrier f", "fdatabarrier f", "fiemap_sync f",
	"close f", "sleep 1024", "mark label", "mark \"\\ttab\"", "write \"\\xc3\\xa9t\\xc3\\xa9\" 1",
	"write f 9223372036854775807 1", "mkdir \"#x\"", "unlink \"a\\\\b\"",
};

TEST(round_trip)
{
	size_t n = sizeof(round_trip_lines) / sizeof(round_trip_lines[0]);
	int good = 0;
	for (size_t i = 0; i < n; i++) {
		struct wl_op a, b;
		char buf[512];
		struct errbuf e1 = { 0 }, e2 = { 0 };
		int ok = wl_parse_line(round_trip_lines[i], 3, WL_SETUP, &a, &e1) == 0;
		int need = ok ? wl_format(&a, buf, sizeof(buf)) : 0;
		ok = ok && need > 0 && (size_t)need < sizeof(buf) && (int)strlen(buf) == need;
		ok = ok && wl_parse_line(buf, 3, WL_SETUP, &b, &e2) == 0;
		if (ok) {
			ok = same_op(&a, &b);
			char buf2[512];
			wl_format(&b, buf2, sizeof(buf2));
			ok = ok && !strcmp(buf, buf2);
			wl_op_free(&b);
		}
		if (!ok)
			CHECK(0, "round trip of '%s': got '%s' %s %s", round_trip_lines[i], buf, e1.msg, e2.msg);
		good += ok;
		wl_op_free(&a);
	}
	CHECK(good == (int)n, "format -> parse gives the same op for %d/%zu lines", good, n);

	char buf[128];
	CHECK(parse("mkdir A") == 0 && wl_format(&op, buf, sizeof(buf)) == 12 && streq(buf, "mkdir A 0755"),
	      "canonical mkdir shows the mode: '%s'", buf);
	CHECK(parse("write  f  0  4096") == 0 && wl_format(&op, buf, sizeof(buf)) > 0 && streq(buf, "write f 4K"),
	      "canonical write: zero offset left out, sizes with a suffix: '%s'", buf);
	CHECK(parse("write f 5000 \"tab\\there\"") == 0 && wl_format(&op, buf, sizeof(buf)) > 0 &&
	      streq(buf, "write f 5000 \"tab\\there\""), "canonical text keeps escapes: '%s'", buf);
	CHECK(parse("sync_file_range f 0 0 wait_after|write") == 0 && wl_format(&op, buf, sizeof(buf)) > 0 &&
	      streq(buf, "sync_file_range f 0 0 write,wait_after"), "canonical flags: '%s'", buf);
	CHECK(parse("setxattr f user.a bare") == 0 && wl_format(&op, buf, sizeof(buf)) > 0 &&
	      streq(buf, "setxattr f user.a \"bare\""), "canonical xattr value is quoted: '%s'", buf);
	char small[6];
	CHECK(parse("mkdir A") == 0 && wl_format(&op, small, sizeof(small)) == 12 && streq(small, "mkdir"),
	      "wl_format truncates like snprintf and returns the needed length");
}

struct bad {
	const char *text;
	const char *msg;
};

static const struct bad bad_inputs[] = {
	{ "frobnicate x\n", "t.wl:1:1: unknown op 'frobnicate'" },
	{ "# c\n\n   wrte f 1\n", "t.wl:3:4: unknown op 'wrte'; did you mean 'write'?" },
	{ "mkdir\n", "t.wl:1:6: mkdir: missing P (usage: mkdir P [MODE])" },
	{ "mkdir a 0755 x\n", "t.wl:1:14: mkdir: unexpected argument 'x' (usage: mkdir P [MODE])" },
	{ "write f\n", "t.wl:1:8: write: missing LEN or \"TEXT\" (usage: write P [OFF] (LEN|\"TEXT\"))" },
	{ "write f hello\n", "t.wl:1:9: write: bad LEN 'hello'; a TEXT must be quoted" },
	{ "write f 1 2 3\n", "t.wl:1:13: write: unexpected argument '3' (usage: write P [OFF] (LEN|\"TEXT\"))" },
	{ "write f 4X\n", "t.wl:1:9: bad number '4X' for LEN (digits with an optional K, M or G suffix)" },
	{ "write f \"x\" 4\n", "t.wl:1:9: write: expected a number for OFF, not a quoted string" },
	{ "truncate f 99999999999999999999\n", "t.wl:1:12: number '99999999999999999999' is too large" },
	{ "truncate f 9999999999G\n", "t.wl:1:12: number '9999999999G' is too large" },
	{ "chmod f 0855\n", "t.wl:1:9: bad mode '0855' (octal, e.g. 0644; at most 07777)" },
	{ "chmod f 17777\n", "t.wl:1:9: bad mode '17777' (octal, e.g. 0644; at most 07777)" },
	{ "chmod f\n", "t.wl:1:8: chmod: missing MODE (usage: chmod P MODE)" },
	{ "falloc f shrink 0 1\n",
	  "t.wl:1:10: bad falloc mode 'shrink' (0, keep_size, punch_hole, zero_range or zero_range_keep_size)" },
	{ "falloc f 0 0\n",
	  "t.wl:1:13: falloc: missing LEN (usage: falloc P (0|keep_size|punch_hole|zero_range|zero_range_keep_size) OFF LEN)" },
	{ "rename a b sideways\n", "t.wl:1:12: bad rename flag 'sideways' (noreplace, exchange or barrier)" },
	{ "sync_file_range f 0 0 write,flush\n",
	  "t.wl:1:23: bad sync_file_range flag 'flush' in 'write,flush' (wait_before, write, wait_after, joined by ',' or '|')" },
	{ "write f \"abc\n", "t.wl:1:9: unterminated string" },
	{ "write f \"a\\qb\"\n", "t.wl:1:11: bad escape '\\q' (use \\n \\t \\\\ \\\" or \\xHH)" },
	{ "write f \"\\x4g\"\n", "t.wl:1:10: bad escape '\\x': two hex digits must follow" },
	{ "write f \"ab\"c\n", "t.wl:1:13: text right after a closing quote; separate the tokens with a space" },
	{ "write f ab\"c\"\n", "t.wl:1:11: a quote inside a word; quote the whole token" },
	{ "mkdir /etc\n", "t.wl:1:7: absolute path '/etc'; paths are relative to the test file system" },
	{ "unlink \"\"\n", "t.wl:1:8: empty path" },
	{ "rename a b/../../c\n", "t.wl:1:10: path 'b/../../c' has a '..' component" },
	{ "unlink ..\n", "t.wl:1:8: path '..' has a '..' component" },
	{ "unlink \"a\\x00b\"\n", "t.wl:1:8: path \"a\\x00b\" contains a NUL byte" },
	{ "dwrite f 100 4K\n", "t.wl:1:10: dwrite: OFF 100 is not a multiple of 4096 (O_DIRECT needs aligned I/O)" },
	{ "dwrite f 6000\n", "t.wl:1:10: dwrite: LEN 6000 is not a multiple of 4096 (O_DIRECT needs aligned I/O)" },
	{ "dwrite f \"text\"\n", "t.wl:1:10: dwrite: takes a LEN, not a TEXT (O_DIRECT writes whole 4096-byte blocks)" },
	{ "setxattr f \"\" v\n", "t.wl:1:12: empty NAME" },
	{ "sync now\n", "t.wl:1:6: sync: unexpected argument 'now' (usage: sync)" },
	{ "sleep\n", "t.wl:1:6: sleep: missing MS (usage: sleep MS)" },
	{ "[run]\nsync\n[setup]\nsync\n", "t.wl:3:1: section [setup] must come before [run]" },
	{ "[setup]\nsync\n[setup]\n", "t.wl:3:1: duplicate section [setup]" },
	{ "[teardown]\n", "t.wl:1:1: unknown section '[teardown]' (expected [overlay], [setup], [run] or [expect])" },
	{ "[setup]\n[overlay]\n[run]\nsync\n", "t.wl:2:1: [overlay] must come first, before [setup], [run] and any op" },
	{ "sync\n[overlay]\n", "t.wl:2:1: [overlay] must come first, before [setup], [run] and any op" },
	{ "[overlay]\n[overlay]\n[run]\nsync\n", "t.wl:2:1: duplicate [overlay] (the first is on line 1)" },
	{ "[overlay] index=on\n[run]\nsync\n", "t.wl:1:11: [overlay] takes no options (the overlay is mounted with "
	  "index=off,redirect_dir=off,metacopy=off,xino=off)" },
	{ "[overlay index=on]\n[run]\nsync\n", "t.wl:1:10: [overlay] takes no options (the overlay is mounted with "
	  "index=off,redirect_dir=off,metacopy=off,xino=off)" },
	{ "[expect]\nf exists\n[run]\nsync\n", "t.wl:1:1: section [expect] must come after [run]" },
	{ "[run]\nsync\n[expect]\nf\n", "t.wl:4:2: expect: missing what to expect of 'f' (usage: PATH exists|absent, PATH "
	  "size|nlink N, PATH mode MODE, PATH type file|dir|symlink, PATH data OP, PATH text \"TEXT\", PATH lists NAME..., "
	  "PATH xattr NAME \"VALUE\", PATH noxattr NAME, PATH target \"T\")" },
	{ "[run]\nsync\n[expect]\nf exist\n", "t.wl:4:3: expect: unknown expectation 'exist'; did you mean 'exists'? (one "
	  "of: exists, absent, size, nlink, mode, type, data, text, lists, xattr, noxattr, target)" },
	{ "[run]\nsync\n[expect]\nf data 3\n", "t.wl:4:8: expect: data names op 3, but the workload has ops 1..1 so far" },
	{ "[run]\nsync\n[expect]\nf size 4 5\n", "t.wl:4:10: expect: unexpected '5' after 'f size'" },
	{ "[run]\nsync\n[expect]\nf type fifo\n", "t.wl:4:8: expect: type is file, dir or symlink, not 'fifo'" },
	{ "[run]\nsync\n[expect ext5]\n", "t.wl:3:9: [expect]: unknown file system 'ext5' (ext4, xfs, btrfs or f2fs)" },
	{ "[run]\nsync\n[expect] ext4\n", "t.wl:3:10: [expect FS...] names file systems and ends with ']'" },
	{ "[run]\nsync\n[expect]\nf exists\n[run]\n", "t.wl:5:1: duplicate section [run]" },
	{ "[run]\nsync\n[expect]\nf exists\n[setup]\n", "t.wl:5:1: section [setup] must come before [run]" },
	{ "[run] sync\n", "t.wl:1:7: unexpected 'sync' after the section header" },
	{ "sync\n[run]\nsync\n",
	  "t.wl:2:1: section [run] after ops outside any section; a file with sections starts with one" },
	{ "[setup]\nmkdir a\n[run]\n# nothing\n", "t.wl:3:1: section [run] has no ops" },
	{ "[setup]\nmkdir a\n", "t.wl:2:8: the workload has no [run] ops" },
	{ "", "t.wl:1:1: the workload has no [run] ops" },
	{ "# only a comment\n", "t.wl:1:17: the workload has no [run] ops" },
	{ "sync\nsync\nmkdir a 0778\n", "t.wl:3:9: bad mode '0778' (octal, e.g. 0644; at most 07777)" },
};

TEST(expect)
{
	struct wl_workload w;
	const char *text = "[run]\nwrite f \"hi\"\nfsync f\nsync\n[expect]\nf text \"hi\"\n  f size 2  \n"
			   "[expect xfs btrfs]\n. lists f g\nf xattr user.a \"1\"\n";
	CHECK(wl_parse("t.wl", text, &w, &eb) == 0, "a workload with expectations parses: %s", err);
	CHECK(w.nexpects == 4 && w.expects[0].kind == WX_TEXT && w.expects[0].str_len == 2 && !w.expects[0].fs,
	      "four expectations, the first for every fs");
	CHECK(w.expects[1].line == 7 && !strcmp(w.expects[1].text, "f size 2") && w.expects[1].num == 2,
	      "each keeps its line and its text for the citation");
	CHECK(w.expects[2].kind == WX_LISTS && w.expects[2].nnames == 2 && !strcmp(w.expects[2].fs, "xfs btrfs"),
	      "[expect xfs btrfs] names its file systems");
	CHECK(wl_expect_point(&w) == 3, "they hold after the last persistence op (op 3)");
	struct wl_workload c;
	wl_copy(&c, &w);
	wl_expects_for(&c, "ext4");
	CHECK(c.nexpects == 2, "ext4 keeps the two for every fs");
	wl_free(&c);
	wl_copy(&c, &w);
	wl_expects_for(&c, "btrfs");
	CHECK(c.nexpects == 4 && !strcmp(c.expects[3].value, "1"), "btrfs keeps all four");
	wl_free(&c);
	wl_free(&w);
}

TEST(errors)
{
	size_t n = sizeof(bad_inputs) / sizeof(bad_inputs[0]);
	for (size_t i = 0; i < n; i++) {
		struct wl_workload w;
		memset(&w, 0x5a, sizeof(w));
		err[0] = '\0';
		int rc = wl_parse("t.wl", bad_inputs[i].text, &w, &eb);
		CHECK(rc == -1 && !strcmp(err, bad_inputs[i].msg) && w.ops == NULL && w.n == 0 && w.file == NULL,
		      "error %zu: %s%s%s", i + 1, bad_inputs[i].msg, strcmp(err, bad_inputs[i].msg) ? "  GOT: " : "",
		      strcmp(err, bad_inputs[i].msg) ? err : "");
	}
	wl_op_free(&op);
	CHECK(wl_parse_line("", 1, WL_RUN, &op, &eb) == -1 && streq(err, "<line>:1:1: no op on the line"),
	      "wl_parse_line: an empty line (%s)", err);
	CHECK(wl_parse_line("[run]", 1, WL_RUN, &op, &eb) == -1 &&
	      streq(err, "<line>:1:1: a section header where an op was expected"), "wl_parse_line: a header (%s)", err);
	CHECK(wl_parse_line("write f 1 2 3", 1, WL_RUN, &op, NULL) == -1 && !op.path,
	      "no error buffer is fine, and nothing is left in op");
}

TEST(sections)
{
	struct wl_workload w;
	const char *seed = "# the seed document's example (xfstests generic/342)\n"
			   "[setup]\nmkdir A\nwrite A/foo \"hello\"\nsync\n"
			   "[run]\nrename A/foo A/bar\nwrite A/foo \"world\"\nfsync A/foo\n";
	CHECK(wl_parse("seed.wl", seed, &w, &eb) == 0, "the seed example parses (%s)", err);
	CHECK(w.n == 6 && w.nsetup == 3 && streq(w.file, "seed.wl"), "6 ops, 3 of them setup");
	int ids = 1;
	for (size_t i = 0; i < w.n; i++)
		ids &= w.ops[i].id == (int)i + 1 && w.ops[i].section == (i < 3 ? WL_SETUP : WL_RUN);
	CHECK(ids, "ids 1..n across both sections, sections set");
	CHECK(w.ops[3].kind == WL_RENAME && w.ops[3].line == 7 && w.ops[3].col == 1, "line and column of an op");
	wl_free(&w);
	CHECK(w.ops == NULL && w.n == 0, "wl_free empties");

	CHECK(wl_parse("x", "mkdir a\r\nsync", &w, &eb) == 0 && w.n == 2 && w.nsetup == 0 &&
	      w.ops[1].section == WL_RUN, "no headers: all [run]; CRLF and no final newline are fine");
	wl_free(&w);
	CHECK(wl_parse("x", "\n[run]  # the ops\n\n  sync\n", &w, &eb) == 0 && w.n == 1 && w.nsetup == 0 &&
	      w.ops[0].line == 4, "[run] alone, comments after a header");
	wl_free(&w);
	CHECK(wl_parse("x", "[setup]\n[run]\nsync\n", &w, &eb) == 0 && w.n == 1, "an empty [setup] is fine");
	CHECK(w.overlay == 0, "no [overlay]: overlay 0");
	wl_free(&w);
	CHECK(wl_parse("x", "# on an overlay\n[overlay]\n[setup]\nwrite f 4K\n[run]\nsetxattr f user.x 1\n", &w, &eb) == 0 &&
	      w.overlay == 2 && w.n == 2 && w.nsetup == 1, "[overlay] first: its line kept, the sections as usual");
	struct wl_workload c;
	wl_copy(&c, &w);
	CHECK(c.overlay == 2, "wl_copy keeps [overlay]");
	wl_free(&c);
	wl_free(&w);
	CHECK(wl_parse("x", "[overlay]\nsync\n", &w, &eb) == 0 && w.overlay == 1 && w.n == 1 && w.nsetup == 0,
	      "[overlay] then ops without a header: all [run]");
	wl_free(&w);
}

TEST(pattern)
{
	unsigned char b[8192];
	wl_pattern(0x01020304, 0, b, sizeof(b));
	CHECK(!memcmp(b, "CLWL\x04\x03\x02\x01\0\0\0\0\0\0\0\0", 16), "record of block 0: magic, le32 op, le64 block");
	CHECK(!memcmp(b + 4096, "CLWL\x04\x03\x02\x01\x01\0\0\0\0\0\0\0", 16), "record of block 1");
	CHECK(!memcmp(b + 16, b, 16) && !memcmp(b + 4080, b, 16), "every record of a block is the same");
	unsigned char c[40];
	wl_pattern(9, 4096 * 5 + 7, c, sizeof(c));
	unsigned char whole[4096];
	wl_pattern(9, 4096 * 5, whole, sizeof(whole));
	CHECK(!memcmp(c, whole + 7, sizeof(c)), "an unaligned range is the same bytes as the aligned one");
	CHECK(wl_pattern_op(whole + 32, 4096 * 5 + 32) == 9, "wl_pattern_op names the op");
	CHECK(wl_pattern_op(whole + 32, 4096 * 6 + 32) == 0, "wrong block number: 0");
	uint64_t big = (uint64_t)1 << 40;
	unsigned char d[16];
	wl_pattern(3, big, d, 16);
	CHECK(wl_pattern_op(d, big) == 3 && d[8 + 4] == (big / 4096) >> 32, "64-bit block numbers");
	memcpy(d, "CLWX", 4);
	CHECK(wl_pattern_op(d, big) == 0, "bad magic: 0");
	memset(d, 0, 16);
	CHECK(wl_pattern_op(d, 0) == 0, "zeros: 0");
}

TEST(classes)
{
	CHECK(parse("fsync f") == 0 && wl_is_persistence(&op), "fsync is persistence");
	CHECK(parse("fdatasync f") == 0 && wl_is_persistence(&op), "fdatasync is persistence");
	CHECK(parse("sync") == 0 && wl_is_persistence(&op), "sync is persistence");
	CHECK(parse("syncfs") == 0 && wl_is_persistence(&op), "syncfs is persistence");
	CHECK(parse("sync_file_range f 0 0 write,wait_after") == 0 && wl_is_persistence(&op),
	      "sync_file_range with wait_after is persistence");
	CHECK(parse("sync_file_range f 0 0 write") == 0 && !wl_is_persistence(&op),
	      "sync_file_range without wait_after is not");
	CHECK(parse("fdatabarrier f") == 0 && !wl_is_persistence(&op), "a barrier is not persistence");
	CHECK(parse("fiemap_sync f") == 0 && !wl_is_persistence(&op), "fiemap_sync is not persistence");
	const char *data[] = { "write f 1", "append f \"x\"", "dwrite f 4K", "mmapwrite f 1", "falloc f punch_hole 0 1",
			       "falloc f zero_range 0 1", "falloc f zero_range_keep_size 0 1" };
	const char *nodata[] = { "truncate f 0", "falloc f 0 0 1", "falloc f keep_size 0 1", "creat f", "chmod f 0",
				 "setxattr f user.a b", "fsync f" };
	int ok = 1;
	for (size_t i = 0; i < 7; i++) {
		ok &= parse(data[i]) == 0 && wl_writes_data(&op);
		ok &= parse(nodata[i]) == 0 && !wl_writes_data(&op);
	}
	CHECK(ok, "wl_writes_data: writes and zeroing/punching falloc; not truncate, size-only falloc, metadata");
}

TEST_MAIN()
