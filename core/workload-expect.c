/*
 * workload-expect.c - the [expect] sections of the workload language
 * (core/workload.h): each line parsed into a struct wl_expect, copies, the
 * selection per file system and the op after which they hold. The judge
 * checks them (judge/expect.c).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "core/workload-priv.h"

static char *dup_bytes(const char *p, size_t n)
{
	return p ? xmemdup(p, n) : NULL;
}

void wl_expect_free(struct wl_expect *x)
{
	free(x->text);
	free(x->fs);
	free(x->path);
	free(x->str);
	free(x->value);
	for (size_t i = 0; i < x->nnames; i++)
		free(x->names[i]);
	free(x->names);
	memset(x, 0, sizeof(*x));
}

void wl_expect_copy(struct wl_expect *d, const struct wl_expect *x)
{
	*d = *x;
	d->text = x->text ? xstrdup(x->text) : NULL;
	d->fs = x->fs ? xstrdup(x->fs) : NULL;
	d->path = x->path ? xstrdup(x->path) : NULL;
	d->str = dup_bytes(x->str, x->str_len);
	d->value = dup_bytes(x->value, x->value_len);
	d->names = x->nnames ? xcalloc(x->nnames, sizeof(char *)) : NULL;
	for (size_t i = 0; i < x->nnames; i++)
		d->names[i] = xstrdup(x->names[i]);
}

void wl_copy_expects(struct wl_workload *dst, const struct wl_workload *src)
{
	for (size_t i = 0; i < dst->nexpects; i++)
		wl_expect_free(&dst->expects[i]);
	free(dst->expects);
	dst->nexpects = src->nexpects;
	dst->expects = src->nexpects ? xcalloc(src->nexpects, sizeof(*dst->expects)) : NULL;
	for (size_t i = 0; i < src->nexpects; i++)
		wl_expect_copy(&dst->expects[i], &src->expects[i]);
}

static int fs_listed(const char *list, const char *fs)
{
	size_t n = strlen(fs);
	for (const char *p = list; p && *p;) {
		p += strspn(p, " ");
		size_t l = strcspn(p, " ");
		if (l == n && !strncmp(p, fs, n))
			return 1;
		p += l;
	}
	return 0;
}

void wl_expects_for(struct wl_workload *w, const char *fs)
{
	size_t k = 0;
	for (size_t i = 0; i < w->nexpects; i++) {
		if (!w->expects[i].fs || fs_listed(w->expects[i].fs, fs))
			w->expects[k++] = w->expects[i];
		else
			wl_expect_free(&w->expects[i]);
	}
	w->nexpects = k;
}

int wl_expect_point(const struct wl_workload *w)
{
	int last = 0, pers = 0;
	for (size_t i = w->nsetup; i < w->n; i++) {
		last = w->ops[i].id;
		if (wl_is_persistence(&w->ops[i]))
			pers = w->ops[i].id;
	}
	return pers ? pers : last;
}

static const char *const expect_names[WX_NKINDS] = {
	"exists", "absent", "size", "nlink", "mode", "type", "data", "text", "lists", "xattr", "noxattr", "target",
};

static const struct opdef expect_def = {
	"expect", WL_NKINDS,
	"PATH exists|absent, PATH size|nlink N, PATH mode MODE, PATH type file|dir|symlink, PATH data OP, "
	"PATH text \"TEXT\", PATH lists NAME..., PATH xattr NAME \"VALUE\", PATH noxattr NAME, PATH target \"T\"",
};

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* One line of an [expect] section. */
int wl_parse_expect(const struct pctx *c, const struct toks *t, const char *fs, const char *line, size_t len,
			const struct wl_workload *w, struct wl_expect *x)
{
	memset(x, 0, sizeof(*x));
	char sb[64];
	x->line = c->line;
	while (len && (line[len - 1] == ' ' || line[len - 1] == '\t' || line[len - 1] == '\r'))
		len--;
	size_t lead = strspn(line, " \t");
	x->text = dup_bytes(line + lead, len - lead);
	x->fs = fs ? xstrdup(fs) : NULL;
	x->path = xstrdup(t->v[0].s);
	if (t->n < 2) {
		wl_perr(c, t->v[0].end, "expect: missing what to expect of '%s' (usage: %s)", wl_shown(&t->v[0], sb, sizeof(sb)),
		     expect_def.usage);
		goto fail;
	}
	const struct tok *kw = &t->v[1];
	int kind = -1;
	for (int k = 0; k < WX_NKINDS; k++)
		if (!kw->quoted && !strcmp(kw->s, expect_names[k]))
			kind = k;
	if (kind < 0) {
		const char *names[WX_NKINDS + 1];
		for (int k = 0; k < WX_NKINDS; k++)
			names[k] = expect_names[k];
		names[WX_NKINDS] = NULL;
		const char *near = kw->quoted ? NULL : nearest_word(kw->s, names);
		wl_perr(c, kw->col, "expect: unknown expectation '%s'%s%s%s (one of: exists, absent, size, nlink, mode, type, "
		     "data, text, lists, xattr, noxattr, target)", wl_shown(kw, sb, sizeof(sb)), near ? "; did you mean '" : "",
		     near ? near : "", near ? "'?" : "");
		goto fail;
	}
	x->kind = (enum wl_expect_kind)kind;
	struct args a = { c, &expect_def, (struct tok *)t->v + 2, t->n - 2, t->v[t->n - 1].end };
	size_t used = 0;
	switch (x->kind) {
	case WX_EXISTS:
	case WX_ABSENT:
		break;
	case WX_SIZE:
	case WX_NLINK:
	case WX_DATA:
		if (wl_parse_num(&a, 0, x->kind == WX_DATA ? "OP" : "N", &x->num) < 0)
			goto fail;
		used = 1;
		if (x->kind == WX_DATA && (x->num < 1 || x->num > (int64_t)w->n)) {
			wl_perr(c, a.v[0].col, "expect: data names op %" PRId64 ", but the workload has ops 1..%zu so far", x->num,
			     w->n);
			goto fail;
		}
		break;
	case WX_MODE: {
		uint32_t m;
		if (wl_parse_mode(&a, 0, &m) < 0)
			goto fail;
		x->num = m;
		used = 1;
		break;
	}
	case WX_TYPE:
		if (wl_missing(&a, 0, "file, dir or symlink"))
			goto fail;
		if (!strcmp(a.v[0].s, "file") || !strcmp(a.v[0].s, "dir") || !strcmp(a.v[0].s, "symlink")) {
			x->num = a.v[0].s[0] == 's' ? 'l' : a.v[0].s[0];
		} else {
			wl_perr(c, a.v[0].col, "expect: type is file, dir or symlink, not '%s'", wl_shown(&a.v[0], sb, sizeof(sb)));
			goto fail;
		}
		used = 1;
		break;
	case WX_TEXT:
	case WX_TARGET:
	case WX_NOXATTR:
		if (wl_missing(&a, 0, x->kind == WX_NOXATTR ? "NAME" : "\"TEXT\""))
			goto fail;
		x->str = dup_bytes(a.v[0].s, a.v[0].len);
		x->str_len = a.v[0].len;
		used = 1;
		break;
	case WX_XATTR:
		if (wl_missing(&a, 0, "NAME") || wl_missing(&a, 1, "\"VALUE\""))
			goto fail;
		x->str = dup_bytes(a.v[0].s, a.v[0].len);
		x->str_len = a.v[0].len;
		x->value = dup_bytes(a.v[1].s, a.v[1].len);
		x->value_len = a.v[1].len;
		used = 2;
		break;
	case WX_LISTS:
		x->nnames = a.n;
		x->names = a.n ? xcalloc(a.n, sizeof(char *)) : NULL;
		for (size_t i = 0; i < a.n; i++)
			x->names[i] = xstrdup(a.v[i].s);
		if (a.n)
			qsort(x->names, x->nnames, sizeof(char *), name_cmp);
		used = a.n;
		break;
	case WX_NKINDS:
		break;
	}
	if (used < a.n) {
		wl_perr(c, a.v[used].col, "expect: unexpected '%s' after '%s %s'", wl_shown(&a.v[used], sb, sizeof(sb)), x->path,
		     expect_names[x->kind]);
		goto fail;
	}
	return 0;
fail:
	wl_expect_free(x);
	return -1;
}
