/* fuzz-spec.c - crash-state spec text (core/wlog-spec.c): any line parses
 * or is refused with a message and nothing allocated; what parses formats
 * to a canonical text that parses back to itself, and normalizing it again
 * changes nothing. */
#include "core/wlog.h"
#include "tests/fuzz/fuzz.h"

static char *format(const struct wlog_spec *s)
{
	int need = wlog_spec_format(s, NULL, 0);
	FUZZ_ASSERT(need >= 0, "spec cannot be formatted");
	char *buf = malloc((size_t)need + 1);
	FUZZ_ASSERT(wlog_spec_format(s, buf, (size_t)need + 1) == need, "format length changed");
	return buf;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 1 << 14)
		return 0;
	char *text = fuzz_cstr(data, size);
	struct wlog_spec s, t;
	struct errbuf e = { 0 };
	if (wlog_spec_parse(text, &s, &e) < 0) {
		FUZZ_ASSERT(e.msg[0] && e.code == 65, "refused without a message");
		free(text);
		return 0;
	}
	for (size_t i = 0; i < s.nadd; i++)
		FUZZ_ASSERT(s.add[i] >= s.prefix && (i == 0 || s.add[i] > s.add[i - 1]), "add[%zu] out of order", i);
	for (size_t i = 0; i < s.ntorn; i++) {
		FUZZ_ASSERT(wlog_spec_applies(&s, s.torn[i].entry), "torn entry %llu is not applied",
			    (unsigned long long)s.torn[i].entry);
		FUZZ_ASSERT(s.torn[i].count > 0, "empty torn piece");
	}
	char *canon = format(&s);
	struct errbuf e2 = { 0 };
	FUZZ_ASSERT(wlog_spec_parse(canon, &t, &e2) == 0, "canonical '%s' does not parse: %s", canon, e2.msg);
	char *again = format(&t);
	FUZZ_ASSERT(strcmp(canon, again) == 0, "'%s' reads back as '%s'", canon, again);
	FUZZ_ASSERT(wlog_spec_normalize(&t, &e2) == 0, "canonical spec does not normalize: %s", e2.msg);
	free(again);
	again = format(&t);
	FUZZ_ASSERT(strcmp(canon, again) == 0, "normalizing '%s' gives '%s'", canon, again);
	for (uint64_t i = 0; i < 64; i++)
		FUZZ_ASSERT(wlog_spec_applies(&s, i) == wlog_spec_applies(&t, i), "entry %llu differs",
			    (unsigned long long)i);
	free(canon);
	free(again);
	wlog_spec_free(&s);
	wlog_spec_free(&t);
	free(text);
	return 0;
}
