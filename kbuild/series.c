/*
 * series.c - the patch series file (quilt style): which patches, in which order.
 */
#include "kbuild/kb.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

bool kb_has_dotdot(const char *p)
{
	for (const char *s = p; (s = strstr(s, "..")); s += 2)
		if ((s == p || s[-1] == '/') && (s[2] == '\0' || s[2] == '/'))
			return true;
	return false;
}

int kbuild_series_parse(const char *text, struct strvec *out, struct errbuf *e)
{
	int lineno = 0;
	const char *p = text;
	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		char *line = xmalloc(len + 1);
		memcpy(line, p, len);
		line[len] = '\0';
		p += len + (nl ? 1 : 0);
		lineno++;
		for (char *c = line; *c; c++) {
			if (*c == '#' && (c == line || isspace((unsigned char)c[-1]))) {
				*c = '\0';
				break;
			}
		}
		char *save = NULL;
		char *name = strtok_r(line, " \t\r", &save);
		if (!name) {
			free(line);
			continue;
		}
		int bad = 0;
		if (name[0] == '/' || kb_has_dotdot(name)) {
			errbuf_set(e, EXIT_DATAERR, "line %d: patch '%s' must be a path inside the series directory", lineno,
				   name);
			bad = 1;
		}
		for (char *t; !bad && (t = strtok_r(NULL, " \t\r", &save));) {
			if (!strcmp(t, "-p1"))
				continue;
			if (!strncmp(t, "-p", 2))
				errbuf_set(e, EXIT_DATAERR, "line %d: only -p1 patches are supported, not '%s'", lineno, t);
			else
				errbuf_set(e, EXIT_DATAERR, "line %d: unexpected '%s' after the patch name", lineno, t);
			bad = 1;
		}
		if (!bad)
			strvec_push(out, name);
		free(line);
		if (bad)
			return -1;
	}
	return 0;
}
