/* fs.c - see fs.h. */
#include "core/fs.h"

#include <stdlib.h>
#include <string.h>

const struct fs_type fs_types[FS_COUNT] = {
	{ "ext4", "mkfs.ext4", "e2fsprogs", { "-F", "-q", NULL }, "-V", { "e2fsck", "-fn", NULL }, 0, "ext4" },
	{ "xfs", "mkfs.xfs", "xfsprogs", { "-f", "-q", NULL }, "-V", { "xfs_repair", "-n", NULL }, 300LL << 20, "xfs" },
	{ "btrfs", "mkfs.btrfs", "btrfs-progs", { "-f", "-q", NULL }, "--version", { "btrfs", "check", "--readonly", NULL },
	  0, "btrfs" },
	{ "f2fs", "mkfs.f2fs", "f2fs-tools", { "-f", NULL }, "-V", { "fsck.f2fs", "--dry-run", NULL }, 0, "f2fs-posix" },
};

const struct fs_type *fs_lookup(const char *name)
{
	for (size_t i = 0; name && i < FS_COUNT; i++)
		if (!strcmp(fs_types[i].name, name))
			return &fs_types[i];
	return NULL;
}

const char *fs_names_text(void)
{
	return "ext4, xfs, btrfs, f2fs";
}

static void push_once(struct strvec *out, const char *name)
{
	for (size_t i = 0; i < out->n; i++)
		if (!strcmp(out->v[i], name))
			return;
	strvec_push(out, name);
}

int fs_split(const char *list, struct strvec *out, struct errbuf *e)
{
	const char *names[FS_COUNT + 2];
	for (size_t i = 0; i < FS_COUNT; i++)
		names[i] = fs_types[i].name;
	names[FS_COUNT] = "all";
	names[FS_COUNT + 1] = NULL;
	if (!list || !*list)
		return errbuf_set(e, EXIT_USAGE, "--fs needs a list of file systems (%s, or all)", fs_names_text());
	char *copy = xstrdup(list), *save = NULL;
	int r = 0;
	for (char *t = strtok_r(copy, ",", &save); t && !r; t = strtok_r(NULL, ",", &save)) {
		if (!strcmp(t, "all")) {
			for (size_t i = 0; i < FS_COUNT; i++)
				push_once(out, fs_types[i].name);
		} else if (fs_lookup(t)) {
			push_once(out, t);
		} else {
			const char *near = nearest_word(t, names);
			if (near)
				r = errbuf_set(e, EXIT_USAGE, "unknown file system '%s'; did you mean '%s'? (choose from %s)", t,
					       near, fs_names_text());
			else
				r = errbuf_set(e, EXIT_USAGE, "unknown file system '%s' (choose from %s)", t, fs_names_text());
		}
	}
	free(copy);
	if (!r && !out->n)
		r = errbuf_set(e, EXIT_USAGE, "--fs names no file system (choose from %s)", fs_names_text());
	return r;
}

static bool starts(const char *p, size_t n, const char *prefix)
{
	size_t l = strlen(prefix);
	return n >= l && !memcmp(p, prefix, l);
}

/* A line of fsck output that names a kernel or a time, not the state. */
static bool noise_line(const char *p, size_t n)
{
	if (starts(p, n, "Info: MKFS version") || starts(p, n, "Info: FSCK version"))
		return true;
	while (n && (*p == ' ' || *p == '\t'))
		p++, n--;
	if (starts(p, n, "from ") || starts(p, n, "to "))
		while (n && *p != '"')
			p++, n--;
	if (starts(p, n, "\"Linux version "))
		return true;
	if (starts(p, n, "Done: ") && n > 5 && !memcmp(p + n - 5, " secs", 5))
		return true;
	return false;
}

char *fs_fsck_filter(char *text)
{
	if (!text)
		return text;
	char *w = text;
	const char *p = text;
	while (*p) {
		size_t n = strcspn(p, "\n");
		bool nl = p[n] == '\n';
		if (!noise_line(p, n)) {
			memmove(w, p, n + nl);
			w += n + nl;
		}
		p += n + nl;
	}
	*w = '\0';
	return text;
}

bool fs_fsck_clean(const struct fs_type *t, int status)
{
	return t && status == 0;
}

char *fs_fsck_line(const struct fs_type *t)
{
	struct sbuf sb = SBUF_INIT;
	for (int i = 0; t && t->fsck[i]; i++)
		sbuf_addf(&sb, "%s%s", i ? " " : "", t->fsck[i]);
	return sbuf_detach(&sb);
}
