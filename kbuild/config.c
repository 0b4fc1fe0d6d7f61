/*
 * config.c - checking that every option of the config fragment survived Kconfig (allnoconfig + olddefconfig).
 */
#include "kbuild/kb.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* One option line: name ("CONFIG_X"), value (NULL when "is not set"), line number. */
struct cfgopt {
	char *name;
	char *value;
	int line;
};

static void cfg_free(struct cfgopt *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].name);
		free(v[i].value);
	}
	free(v);
}

static bool valid_name(const char *s, size_t n)
{
	if (n <= 7 || strncmp(s, "CONFIG_", 7))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '_')
			return false;
	return true;
}

/*
 * Parse config text into option lines. Comments and blank lines are
 * skipped; any other line is reported through bad (when non-NULL) with its
 * number and text.
 */
static struct cfgopt *cfg_parse(const char *text, size_t *count, struct strvec *bad, const char *name)
{
	struct cfgopt *v = NULL;
	size_t n = 0, cap = 0;
	int lineno = 0;
	const char *p = text;
	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		const char *s = p;
		p += len + (nl ? 1 : 0);
		lineno++;
		while (len && isspace((unsigned char)*s)) {
			s++;
			len--;
		}
		while (len && isspace((unsigned char)s[len - 1]))
			len--;
		if (!len)
			continue;
		struct cfgopt o = { NULL, NULL, lineno };
		const char *suffix = " is not set";
		size_t sl = strlen(suffix);
		if (s[0] == '#') {
			const char *q = s + 1;
			size_t ql = len - 1;
			while (ql && *q == ' ') {
				q++;
				ql--;
			}
			if (ql > sl && !memcmp(q + ql - sl, suffix, sl) && valid_name(q, ql - sl)) {
				o.name = xasprintf("%.*s", (int)(ql - sl), q);
			} else {
				continue;   /* a comment */
			}
		} else {
			const char *eq = memchr(s, '=', len);
			if (!eq || !valid_name(s, (size_t)(eq - s))) {
				if (bad)
					strvec_pushf(bad, "line '%.*s' of '%s:%d' is not a config option "
						     "(CONFIG_NAME=value or '# CONFIG_NAME is not set')",
						     (int)len, s, name, lineno);
				continue;
			}
			o.name = xasprintf("%.*s", (int)(eq - s), s);
			size_t vl = len - (size_t)(eq - s) - 1;
			if (!(vl == 1 && eq[1] == 'n'))   /* =n means not set */
				o.value = xasprintf("%.*s", (int)vl, eq + 1);
		}
		ARRAY_PUSH(v, n, cap, o);
	}
	*count = n;
	return v;
}

static const struct cfgopt *cfg_find(const struct cfgopt *v, size_t n, const char *name)
{
	const struct cfgopt *found = NULL;
	for (size_t i = 0; i < n; i++)
		if (!strcmp(v[i].name, name))
			found = &v[i];   /* the last one wins, as in Kconfig */
	return found;
}

int kbuild_config_verify(const char *fragment, const char *frag_name, const char *dotconfig,
			 struct strvec *problems)
{
	size_t before = problems->n, nf, nc;
	struct cfgopt *want = cfg_parse(fragment, &nf, problems, frag_name);
	struct cfgopt *have = cfg_parse(dotconfig, &nc, NULL, ".config");
	for (size_t i = 0; i < nf; i++) {
		const struct cfgopt *w = &want[i];
		if (cfg_find(want, nf, w->name) != w)
			continue;   /* overridden by a later line of the fragment */
		const struct cfgopt *h = cfg_find(have, nc, w->name);
		const char *hv = h ? h->value : NULL;
		if (w->value && !h)
			strvec_pushf(problems, "config option '%s=%s' from '%s:%d' was dropped by olddefconfig "
				     "(it does not exist or its dependencies are off)",
				     w->name, w->value, frag_name, w->line);
		else if (w->value && !hv)
			strvec_pushf(problems, "config option '%s=%s' from '%s:%d' became '# %s is not set' "
				     "(a dependency is off or another option excludes it)",
				     w->name, w->value, frag_name, w->line, w->name);
		else if (w->value && strcmp(w->value, hv))
			strvec_pushf(problems, "config option '%s=%s' from '%s:%d' became '%s=%s'",
				     w->name, w->value, frag_name, w->line, w->name, hv);
		else if (!w->value && hv)
			strvec_pushf(problems, "config option '%s' from '%s:%d' should not be set but became "
				     "'%s=%s' (another option selects it)",
				     w->name, frag_name, w->line, w->name, hv);
	}
	cfg_free(want, nf);
	cfg_free(have, nc);
	return (int)(problems->n - before);
}

size_t kbuild_config_count(const char *fragment)
{
	size_t n;
	struct cfgopt *opts = cfg_parse(fragment, &n, NULL, "");
	cfg_free(opts, n);
	return n;
}
