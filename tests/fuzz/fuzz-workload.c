/* fuzz-workload.c - the workload language (core/workload.c): any text is
 * parsed or refused with a file:line:col message; what parses prints as
 * canonical op lines that the agent's line parser reads back to the same
 * line, and deep copies free cleanly. */
#include "core/workload.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 1 << 16)
		return 0;
	char *text = fuzz_cstr(data, size);
	struct wl_workload w;
	struct errbuf e = { 0 };
	if (wl_parse("fuzz.wl", text, &w, &e) < 0) {
		FUZZ_ASSERT(strncmp(e.msg, "fuzz.wl:", 8) == 0, "message without file:line: '%s'", e.msg);
		FUZZ_ASSERT(e.code == 65, "parse error with code %d", e.code);
		errbuf_clear(&e);
		free(text);
		return 0;
	}
	FUZZ_ASSERT(w.nsetup <= w.n, "%zu setup ops of %zu", w.nsetup, w.n);
	for (size_t i = 0; i < w.n; i++) {
		const struct wl_op *op = &w.ops[i];
		FUZZ_ASSERT(op->id == (int)i + 1, "op %zu has id %d", i, op->id);
		int need = wl_format(op, NULL, 0);
		FUZZ_ASSERT(need >= 0, "op %d cannot be formatted", op->id);
		char *line = malloc((size_t)need + 1), *again = NULL;
		wl_format(op, line, (size_t)need + 1);
		FUZZ_ASSERT(!memchr(line, '\n', (size_t)need), "op %d prints over two lines: '%s'", op->id, line);
		struct wl_op back;
		struct errbuf e2 = { 0 };
		int r = wl_parse_line(line, op->id, op->section, &back, &e2);
		FUZZ_ASSERT(r == 0, "canonical line '%s' does not parse: %s", line, e2.msg);
		int need2 = wl_format(&back, NULL, 0);
		again = malloc((size_t)need2 + 1);
		wl_format(&back, again, (size_t)need2 + 1);
		FUZZ_ASSERT(strcmp(line, again) == 0, "'%s' reads back as '%s'", line, again);
		FUZZ_ASSERT(back.kind == op->kind && back.data_len == op->data_len &&
				    back.value_len == op->value_len &&
				    (!op->data || memcmp(back.data, op->data, op->data_len) == 0),
			    "'%s' reads back as a different op", line);
		wl_op_free(&back);
		free(line);
		free(again);
	}
	wl_expect_point(&w);
	struct wl_workload c;
	wl_copy(&c, &w);
	wl_copy_expects(&c, &w);
	wl_expects_for(&c, "f2fs");
	FUZZ_ASSERT(c.n == w.n && c.nexpects <= w.nexpects, "copy differs");
	wl_free(&c);
	wl_free(&w);
	free(text);
	return 0;
}
