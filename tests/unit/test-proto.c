/* test-proto.c - the host <-> guest frame codec, byte by byte. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/proto.h"
#include "core/util.h"
#include "tests/unit/check.h"

static int read_all(int fd, struct proto_reader *r)
{
	char buf[7]; /* small on purpose: frames arrive in pieces */
	ssize_t n;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		if (proto_feed(r, buf, (size_t)n) < 0)
			return -1;
	return 0;
}

TEST(frames)
{
	int p[2];
	if (pipe(p) < 0)
		SKIP("no pipe: %s", strerror(errno));
	char *argv[] = { "sh", "-c", "echo hi", "", NULL };
	uint32_t len;
	unsigned char *packed = proto_pack_argv(argv, &len);
	CHECK(len == 3 + 3 + 8 + 1, "argv packs NUL-separated (%u bytes)", len);
	CHECK(proto_send(p[1], PROTO_MSG_EXEC, 0, 7, packed, len) == 0, "send EXEC");
	CHECK(proto_send(p[1], PROTO_MSG_OUT, 2, 7, "err", 3) == 0, "send OUT");
	CHECK(proto_send(p[1], PROTO_MSG_SHUTDOWN, 0, 0, NULL, 0) == 0, "send empty frame");
	close(p[1]);

	struct proto_reader r = { 0 };
	CHECK(read_all(p[0], &r) == 0, "read in 7-byte pieces");
	struct proto_msg m;
	CHECK(proto_next(&r, &m) == 1 && m.type == PROTO_MSG_EXEC && m.seq == 7 && m.len == len,
	      "EXEC frame decoded");
	char *out[8];
	unsigned char *copy = malloc(m.len);
	memcpy(copy, m.data, m.len);
	int n = proto_unpack_argv(copy, m.len, out, 8);
	CHECK(n == 4 && !strcmp(out[0], "sh") && !strcmp(out[2], "echo hi") && !strcmp(out[3], ""),
	      "argv round trip keeps empty arguments (%d)", n);
	free(copy);
	CHECK(proto_next(&r, &m) == 1 && m.type == PROTO_MSG_OUT && m.flags == 2 && m.len == 3 &&
	      !memcmp(m.data, "err", 3), "OUT frame with stderr flag");
	CHECK(proto_next(&r, &m) == 1 && m.type == PROTO_MSG_SHUTDOWN && m.len == 0, "empty frame");
	CHECK(proto_next(&r, &m) == 0, "no more frames");

	/* A partial frame waits for more bytes. */
	struct proto_reader r2 = { 0 };
	unsigned char hdr[PROTO_HDR] = { 0x43, 0x4c, 0x41, 0x42, PROTO_VERSION, PROTO_MSG_OUT, 1, 0,
					     1, 0, 0, 0, 5, 0, 0, 0 };
	proto_feed(&r2, hdr, sizeof(hdr));
	proto_feed(&r2, "abc", 3);
	CHECK(proto_next(&r2, &m) == 0, "incomplete payload is not a message");
	proto_feed(&r2, "de", 2);
	CHECK(proto_next(&r2, &m) == 1 && m.len == 5 && !memcmp(m.data, "abcde", 5), "completed payload");

	/* Corruption is detected, not resynced. */
	struct proto_reader r3 = { 0 };
	unsigned char bad[PROTO_HDR] = { 'X', 'L', 'A', 'B', 1 };
	proto_feed(&r3, bad, sizeof(bad));
	CHECK(proto_next(&r3, &m) == -1 && strstr(r3.err, "magic"), "bad magic: %s", r3.err);
	struct proto_reader r4 = { 0 };
	unsigned char v2[PROTO_HDR] = { 0x43, 0x4c, 0x41, 0x42, 99 };
	proto_feed(&r4, v2, sizeof(v2));
	CHECK(proto_next(&r4, &m) == -1 && strstr(r4.err, "version"), "wrong version: %s", r4.err);
	struct proto_reader r5 = { 0 };
	unsigned char big[PROTO_HDR] = { 0x43, 0x4c, 0x41, 0x42, PROTO_VERSION, 3, 0, 0, 0, 0, 0, 0,
					     0xff, 0xff, 0xff, 0x7f };
	proto_feed(&r5, big, sizeof(big));
	CHECK(proto_next(&r5, &m) == -1 && strstr(r5.err, "limit"), "oversized frame: %s", r5.err);
	unsigned char notnul[3] = { 'a', 'b', 'c' };
	CHECK(proto_unpack_argv(notnul, 3, out, 8) == -1, "argv without final NUL is rejected");

	proto_reader_free(&r);
	proto_reader_free(&r2);
	proto_reader_free(&r3);
	proto_reader_free(&r4);
	proto_reader_free(&r5);
	free(packed);
	}

TEST(results)
{
	struct op_result r = { .ret = -1, .err = 2, .ino = UINT64_C(18446744073709551615), .ino2 = 7, .ms = 1.5 }, b;
	char buf[256];
	int n = proto_result_format(&r, buf, sizeof(buf));
	CHECK(proto_result_parse(buf, (size_t)n, &b) == 0 && b.ret == -1 && b.err == 2 && b.ino == r.ino && b.ino2 == 7 &&
	      b.ms == 1.5, "a RESULT round-trips, 64-bit inode numbers exactly");
	CHECK(proto_result_parse("ino=5\n", 6, &b) < 0, "a RESULT without ret and errno is refused");
	static const char *const junk[] = {
		"ret=12abc\nerrno=0\n",                       /* trailing junk */
		"ret=0\nerrno=99999999999\n",                 /* errno out of range */
		"ret=0\nerrno=-5\n",                          /* negative errno */
		"ret=0\nerrno=4096\n",                        /* past Linux's errnos */
		"ret=99999999999999999999\nerrno=0\n",        /* ret overflows */
		"ret=0\nerrno=0\nino=-1\n",                  /* negative inode */
		"ret=0\nerrno=0\nino2=0x10\n",               /* not decimal */
		"ret=0\nerrno=0\nino=18446744073709551616\n", /* inode overflows */
		"ret=0\nerrno=0\nms=nan\n",                  /* not a time */
		"ret=0\nerrno=0\nms=1e999\n",
		"ret=0\nerrno=0\nms=-1\n",
		"ret=0\nerrno=0\nms=inf\n",
	};
	for (size_t i = 0; i < ARRAY_SIZE(junk); i++)
		CHECK(proto_result_parse(junk[i], strlen(junk[i]), &b) < 0, "RESULT %zu with a junk number is refused", i);
	static const char edge[] = "ret=-9223372036854775808\nerrno=4095\nino=18446744073709551615\nms=0\n";
	CHECK(proto_result_parse(edge, sizeof(edge) - 1, &b) == 0 && b.ret == INT64_MIN && b.err == 4095 &&
		      b.ino == UINT64_MAX && b.ino2 == 0,
	      "the extremes of each range are numbers like any other");
}

/* A STATE's numbers come from the guest: each is checked, none trusted
 * (fuzz-proto found a negative fsck_len converted to a size). */
TEST(state_numbers)
{
	const struct fs_type *t = fs_lookup("ext4");
	struct check_report rep;
	static const char ok[] = "mount_ok=1\nfsck_status=0\nbytes=4096\nfsck_len=3\ntree_len=0\n\nok\n";
	struct errbuf e;
	CHECK(proto_state_parse(t, ok, sizeof(ok) - 1, &rep, &e) == 0 && rep.mount_ok == 1 && rep.fsck_clean &&
		      rep.bytes == 4096 && !strcmp(rep.fsck_output, "ok\n"),
	      "a well-formed STATE parses");
	check_report_free(&rep);
	static const char *const bad[] = {
		"mount_ok=1\nfsck_len=-96\ntree_len=99\n\nok\n",   /* negative length */
		"mount_ok=1\nfsck_len=1e300\ntree_len=0\n\nok\n",  /* not an integer */
		"mount_ok=1\nfsck_len=3x\ntree_len=0\n\nok\n",     /* trailing junk */
		"mount_ok=1\nfsck_status=99999999999\n\n",           /* out of range */
		"mount_ok=2\n\n",                                      /* not a boolean */
		"mount_ok=1\nfsck_len=18446744073709551613\ntree_len=3\n\nok\n", /* sum wraps */
		"fsck_len=0\n\n",                                      /* no mount_ok */
		"mount_ok=1\nms_mount=nan\nfsck_len=0\ntree_len=0\n\n", /* a time that is none */
		"mount_ok=1\nms_fsck=-3\nfsck_len=0\ntree_len=0\n\n",
		"mount_ok=1\nms_other=1e400\nfsck_len=0\ntree_len=0\n\n",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CHECK(proto_state_parse(t, bad[i], strlen(bad[i]), &rep, &e) < 0 && e.code == EXIT_GUEST && e.msg[0],
		      "malformed STATE %zu is refused: %s", i, e.msg);
		CHECK(rep.nodes == NULL && rep.fsck_output == NULL && rep.mount_msg == NULL,
		      "nothing is left allocated for %zu", i);
	}
}

/* The tree of a STATE: every line a node under the mount point, each path once. */
TEST(state_trees)
{
	const struct fs_type *t = fs_lookup("ext4");
	struct check_report rep;
	struct errbuf e;
	static const char node[] = "\tf\t0644\t0\t0\t0\t1\t12\t-\t-\t\t\n";
	static const struct { const char *paths[2]; const char *why; } cases[] = {
		{ { "a", "a" }, "path 'a' is in the tree twice" },
		{ { "../../x", NULL }, "tree line 1 is malformed" },
		{ { "a", "/etc/x" }, "tree line 2 is malformed" },
		{ { "a/./b", NULL }, "tree line 1 is malformed" },
		{ { "%1B[2J", "%1B[2J" }, "path '\\x1b[2J' is in the tree twice" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct sbuf tree = SBUF_INIT, st = SBUF_INIT;
		for (int k = 0; k < 2 && cases[i].paths[k]; k++) {
			sbuf_adds(&tree, cases[i].paths[k]);
			sbuf_adds(&tree, node);
		}
		sbuf_addf(&st, "mount_ok=1\nfsck_len=0\ntree_len=%zu\n\n%s", tree.len, tree.buf);
		CHECK(proto_state_parse(t, st.buf, st.len, &rep, &e) < 0 && !strcmp(e.msg, cases[i].why) && !rep.nodes,
		      "a tree with %s %s is refused: %s", cases[i].paths[0], cases[i].paths[1] ? cases[i].paths[1] : "",
		      e.msg);
		sbuf_free(&tree);
		sbuf_free(&st);
	}
	static const char raw_nul[] = "a\0b\tf\t0644\t0\t0\t0\t1\t1\t-\t-\t\t\n";
	struct sbuf st = SBUF_INIT;
	sbuf_addf(&st, "mount_ok=1\nfsck_len=0\ntree_len=%zu\n\n", sizeof(raw_nul) - 1);
	sbuf_add(&st, raw_nul, sizeof(raw_nul) - 1);
	CHECK(proto_state_parse(t, st.buf, st.len, &rep, &e) < 0 && strstr(e.msg, "line 1"),
	      "a NUL byte inside a tree line is refused: %s", e.msg);
	static const char names[] = "%1B[31m\tf\t0644\t0\t0\t0\t1\t1\t-\t-\t\t\n"
				    "a%0Ab\tf\t0644\t0\t0\t0\t1\t2\t-\t-\t\t\n";
	sbuf_reset(&st);
	sbuf_addf(&st, "mount_ok=1\nfsck_len=0\ntree_len=%zu\n\n%s", sizeof(names) - 1, names);
	CHECK(proto_state_parse(t, st.buf, st.len, &rep, &e) == 0 && rep.n_nodes == 2 &&
		      !strcmp(rep.nodes[0].path, "\x1b[31m") && !strcmp(rep.nodes[1].path, "a\nb"),
	      "names with control bytes are names");
	sbuf_free(&st);
	check_report_free(&rep);
}

/* fsck.f2fs names the kernels mkfs and fsck ran under and its run time: none of it is about the state. */
TEST(fsck_filter)
{
	char *out = xstrdup("Info: Dry run\n"
			    "Info: MKFS version\n"
			    "  \"Linux version 6.1.0-28-amd64 (debian-kernel@lists.debian.org) #1 SMP\"\n"
			    "Info: FSCK version\n"
			    "  from \"Linux version 6.1.0-28-amd64 (debian-kernel@lists.debian.org) #1 SMP\"\n"
			    "    to \"Linux version 6.12.118-crashlab #1\"\n"
			    "Info: superblock features = 0 : \n"
			    "[FSCK] other corrupted bugs                           [Ok..]\n"
			    "\n"
			    "Done: 0.000000 secs\n");
	fs_fsck_filter(out);
	CHECK(!strcmp(out, "Info: Dry run\nInfo: superblock features = 0 : \n"
			   "[FSCK] other corrupted bugs                           [Ok..]\n\n"),
	      "kernel strings and the run time are filtered out: [%s]", out);
	free(out);
	char *e2 = xstrdup("Pass 1: Checking inodes\nInode 14 has a bad extent\nto be done: nothing");
	fs_fsck_filter(e2);
	CHECK(!strcmp(e2, "Pass 1: Checking inodes\nInode 14 has a bad extent\nto be done: nothing"),
	      "other output is kept as it is, also without a final newline");
	free(e2);
	CHECK(fs_fsck_filter(NULL) == NULL, "no output stays none");
}

/* A log sent as LOG pieces (the host cuts it, the agent stores it): the
 * pieces travel as frames and come out as the same bytes; a second log
 * replaces the first; a piece of no log, and an empty log, are handled. */
TEST(log_pieces)
{
	CHECK(proto_log_flags(0, 10, 10) == (PROTO_LOG_FIRST | PROTO_LOG_LAST), "one piece is first and last");
	CHECK(proto_log_flags(0, 0, 0) == (PROTO_LOG_FIRST | PROTO_LOG_LAST), "an empty log is one piece");
	CHECK(proto_log_flags(0, 4, 10) == PROTO_LOG_FIRST, "the first of three");
	CHECK(proto_log_flags(4, 4, 10) == 0, "a middle piece");
	CHECK(proto_log_flags(8, 2, 10) == PROTO_LOG_LAST, "the last piece");

	char dir[4096];
	snprintf(dir, sizeof(dir), "%s/test-proto.XXXXXX", getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(dir))
		SKIP("no temp dir: %s", strerror(errno));
	char *path = xasprintf("%s/log", dir);
	/* a log of 10000 bytes in pieces of 3000, through a pipe as frames */
	size_t total = 10000, piece = 3000;
	unsigned char *log = malloc(total);
	for (size_t i = 0; i < total; i++)
		log[i] = (unsigned char)(i * 7 + 3);
	int p[2];
	if (pipe(p) < 0)
		SKIP("no pipe: %s", strerror(errno));
	for (size_t off = 0; off < total; off += piece) {
		size_t n = total - off < piece ? total - off : piece;
		proto_send(p[1], PROTO_MSG_LOG, proto_log_flags(off, n, total), 5, log + off, (uint32_t)n);
	}
	close(p[1]);
	struct proto_reader r = { 0 };
	CHECK(read_all(p[0], &r) == 0, "the pieces read back in 7-byte bits");
	close(p[0]);
	struct proto_log_rx rx = PROTO_LOG_RX_INIT;
	struct proto_msg m;
	int pieces = 0, done = 0;
	while (proto_next(&r, &m) == 1) {
		CHECK(m.type == PROTO_MSG_LOG, "piece %d is a LOG", pieces);
		pieces++;
		CHECK(!done, "nothing after the last piece");
		done = proto_log_take(&rx, path, &m);
	}
	CHECK(pieces == 4 && done == 1 && rx.err == 0 && rx.bytes == total && rx.fd < 0,
	      "four pieces, the last says so (%d pieces, err %d, %llu bytes)", pieces, rx.err,
	      (unsigned long long)rx.bytes);
	struct sbuf got = SBUF_INIT;
	CHECK((sbuf_reset(&got), read_file(path, &got)) == 0 && got.len == total && !memcmp(got.buf, log, total),
	      "the file holds the log byte for byte (%zu bytes)", got.len);

	/* A second, shorter log replaces it whole. */
	struct proto_msg one = { PROTO_MSG_LOG, PROTO_LOG_FIRST | PROTO_LOG_LAST, 6, 3, (unsigned char *)"abc" };
	CHECK(proto_log_take(&rx, path, &one) == 1 && rx.err == 0, "a log of one piece");
	CHECK((sbuf_reset(&got), read_file(path, &got)) == 0 && got.len == 3 && !memcmp(got.buf, "abc", 3),
	      "the new log replaced the old one (%zu bytes)", got.len);

	/* A middle piece with no first one is refused, up to its last piece;
	 * the next log is fine again. */
	struct proto_msg mid = { PROTO_MSG_LOG, 0, 7, 3, (unsigned char *)"xyz" };
	struct proto_msg last = { PROTO_MSG_LOG, PROTO_LOG_LAST, 7, 3, (unsigned char *)"xyz" };
	CHECK(proto_log_take(&rx, path, &mid) == 0 && rx.err == EPROTO, "a piece of no log: EPROTO");
	CHECK(proto_log_take(&rx, path, &last) == 1 && rx.err == EPROTO, "its last piece ends it, failed");
	CHECK((sbuf_reset(&got), read_file(path, &got)) == 0 && got.len == 3 && !memcmp(got.buf, "abc", 3),
	      "the stray pieces wrote nothing");
	struct proto_msg empty = { PROTO_MSG_LOG, PROTO_LOG_FIRST | PROTO_LOG_LAST, 8, 0, NULL };
	CHECK(proto_log_take(&rx, path, &empty) == 1 && rx.err == 0 && rx.bytes == 0, "an empty log after it");
	CHECK((sbuf_reset(&got), read_file(path, &got)) == 0 && got.len == 0, "the file is empty");

	/* A log whose file cannot be made fails, and says why. */
	char *bad = xasprintf("%s/no/such/dir", dir);
	struct proto_msg f1 = { PROTO_MSG_LOG, PROTO_LOG_FIRST, 9, 3, (unsigned char *)"abc" };
	struct proto_msg f2 = { PROTO_MSG_LOG, PROTO_LOG_LAST, 9, 3, (unsigned char *)"def" };
	CHECK(proto_log_take(&rx, bad, &f1) == 0 && proto_log_take(&rx, bad, &f2) == 1 && rx.err == ENOENT,
	      "a file that cannot be created: ENOENT (%d)", rx.err);
	sbuf_free(&got);
	proto_reader_free(&r);
	unlink(path);
	rmdir(dir);
	free(bad);
	free(path);
	free(log);
}

TEST_MAIN()
