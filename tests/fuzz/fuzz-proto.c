/* fuzz-proto.c - the guest channel as the host reads it (core/proto.c):
 * whatever bytes a broken or hostile guest sends, in whatever pieces they
 * arrive, the frame reader returns whole frames or stops with a reason, and
 * every payload the host decodes (HELLO, EXIT, RESULT, STATE for each file
 * system, and EXEC on the agent's side) decodes or is refused without
 * reading outside it. The first input byte chooses the piece size. */
#include <math.h>

#include "core/fs.h"
#include "core/kv.h"
#include "core/proto.h"
#include "tests/fuzz/fuzz.h"

static void decode(const struct proto_msg *m)
{
	/* each decoder gets an exact-size copy, so reading past it is caught */
	char *p = malloc(m->len ? m->len : 1);
	memcpy(p, m->data, m->len);
	switch (m->type) {
	case PROTO_MSG_HELLO: {
		char *k = kv_get(p, m->len, "kernel");
		free(k);
		break;
	}
	case PROTO_MSG_RESULT: {
		struct op_result r, r2;
		if (proto_result_parse(p, m->len, &r) == 0) {
			char buf[256];
			int n = proto_result_format(&r, buf, sizeof(buf));
			FUZZ_ASSERT(n > 0 && (size_t)n < sizeof(buf), "result too long to format");
			FUZZ_ASSERT(proto_result_parse(buf, (size_t)n, &r2) == 0, "'%s' does not parse", buf);
			FUZZ_ASSERT(r.ret == r2.ret && r.err == r2.err && r.ino == r2.ino && r.ino2 == r2.ino2,
				    "'%s' reads back differently", buf);
			FUZZ_ASSERT(r.err >= 0 && r.err <= 4095 && isfinite(r.ms) && r.ms >= 0, "errno %d, ms %g accepted",
				    r.err, r.ms);
		}
		break;
	}
	case PROTO_MSG_STATE:
		for (int i = 0; i < FS_COUNT; i++) {
			struct check_report rep;
			struct errbuf e;
			if (proto_state_parse(&fs_types[i], p, m->len, &rep, &e) == 0) {
				for (size_t j = 0; j < rep.n_nodes; j++)
					FUZZ_ASSERT(rep.nodes[j].path && rep.nodes[j].path[0], "node %zu has no path", j);
				FUZZ_ASSERT(strlen(rep.tree_hash) == 16, "tree hash '%s'", rep.tree_hash);
				FUZZ_ASSERT(isfinite(rep.ms_mount) && rep.ms_mount >= 0, "ms_mount %g", rep.ms_mount);
				for (size_t j = 0; j < rep.n_nodes; j++)
					FUZZ_ASSERT(rep.nodes[j].path[0] != '/' && strncmp(rep.nodes[j].path, "../", 3) &&
							    strcmp(rep.nodes[j].path, ".."),
						    "node path '%s' leaves the tree", rep.nodes[j].path);
				check_report_free(&rep);
			}
		}
		break;
	case PROTO_MSG_EXEC: {
		char *argv[256];
		int n = proto_unpack_argv((unsigned char *)p, m->len, argv, 256);
		FUZZ_ASSERT(n < 256, "%d arguments", n);
		if (n >= 0)
			FUZZ_ASSERT(argv[n] == NULL, "argv not terminated");
		break;
	}
	default:
		break;
	}
	free(p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	size_t piece = (size_t)data[0] + 1;
	data++;
	size--;
	struct proto_reader r = { 0 };
	int broken = 0;
	size_t frames_bytes = 0;
	for (size_t off = 0; off < size && !broken;) {
		size_t n = size - off < piece ? size - off : piece;
		FUZZ_ASSERT(proto_feed(&r, data + off, n) == 0, "feed failed");
		off += n;
		struct proto_msg m;
		int k;
		while ((k = proto_next(&r, &m)) == 1) {
			FUZZ_ASSERT(m.len <= PROTO_MAX_PAYLOAD, "frame of %u bytes", m.len);
			frames_bytes += PROTO_HDR + m.len;
			FUZZ_ASSERT(frames_bytes <= off, "frames hold %zu bytes of %zu fed", frames_bytes, off);
			decode(&m);
		}
		if (k < 0) {
			FUZZ_ASSERT(r.err[0], "broken stream without a reason");
			broken = 1;
		}
	}
	proto_reader_free(&r);
	return 0;
}
