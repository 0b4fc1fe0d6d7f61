/* fuzz-jlang.c - the J-lang import (core/jlang.c): any text is imported or
 * refused with a "file:line: " message and exit code 65; what is imported
 * is a workload the workload parser accepts whole, with a [run] section. */
#include "core/jlang.h"
#include "core/workload.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 1 << 16)
		return 0;
	char *text = fuzz_cstr(data, size);
	struct sbuf out = SBUF_INIT;
	struct errbuf e = { 0 };
	if (jlang_import("fuzz.jlang", text, &out, &e) < 0) {
		FUZZ_ASSERT(strncmp(e.msg, "fuzz.jlang:", 11) == 0 && e.msg[11] >= '0' && e.msg[11] <= '9',
			    "message without file:line: '%s'", e.msg);
		FUZZ_ASSERT(e.code == 65, "import error with code %d", e.code);
		FUZZ_ASSERT(out.len == 0, "output left after an error");
	} else {
		struct wl_workload w;
		struct errbuf e2 = { 0 };
		FUZZ_ASSERT(out.buf && strstr(out.buf, "\n[run]\n"), "no [run] section in '%s'", out.buf);
		FUZZ_ASSERT(wl_parse("out.wl", out.buf, &w, &e2) == 0, "the import does not parse: %s\n%s", e2.msg,
			    out.buf);
		wl_free(&w);
	}
	sbuf_free(&out);
	free(text);
	return 0;
}
