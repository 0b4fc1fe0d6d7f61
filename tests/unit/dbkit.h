/*
 * dbkit.h - what the database tests share: plain sqlite on a file, beside
 * crashdb (never through it), so a test looks at the file as any other
 * reader would; the soundness check every test that hurts a database ends
 * with; fixture unpacking; and running the crashlab binary.
 */
#ifndef CRASHLAB_TESTS_UNIT_DBKIT_H
#define CRASHLAB_TESTS_UNIT_DBKIT_H

#include <dirent.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "core/util.h"
#include "host/sys.h"

/* Run sql on the file at path (which must exist). 0, or -1. */
static inline int dbkit_exec(const char *path, const char *sql)
{
	sqlite3 *s;
	int rc = sqlite3_open_v2(path, &s, SQLITE_OPEN_READWRITE, NULL);
	if (rc == SQLITE_OK) {
		sqlite3_busy_timeout(s, 30000);
		rc = sqlite3_exec(s, sql, NULL, NULL, NULL);
	}
	sqlite3_close(s);
	return rc == SQLITE_OK ? 0 : -1;
}

/* The first column of the first row of sql on the file at path; -999 when it fails or has no row. */
static inline int64_t dbkit_int(const char *path, const char *sql)
{
	sqlite3 *s;
	sqlite3_stmt *st = NULL;
	int64_t v = -999;
	if (sqlite3_open_v2(path, &s, SQLITE_OPEN_READWRITE, NULL) == SQLITE_OK) {
		sqlite3_busy_timeout(s, 30000);
		if (sqlite3_prepare_v2(s, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
			v = sqlite3_column_int64(st, 0);
		sqlite3_finalize(st);
	}
	sqlite3_close(s);
	return v;
}

/* Is the file sound: PRAGMA integrity_check says "ok" and PRAGMA
 * foreign_key_check finds no orphan row? 1, or 0 with the first complaint
 * in why. */
static inline int dbkit_sound(const char *path, char *why, size_t n)
{
	sqlite3 *s;
	sqlite3_stmt *st = NULL;
	snprintf(why, n, "sound");
	if (sqlite3_open_v2(path, &s, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) {
		snprintf(why, n, "cannot open: %s", sqlite3_errmsg(s));
		sqlite3_close(s);
		return 0;
	}
	sqlite3_busy_timeout(s, 30000);
	int ok = sqlite3_prepare_v2(s, "PRAGMA integrity_check", -1, &st, NULL) == SQLITE_OK &&
		 sqlite3_step(st) == SQLITE_ROW;
	const unsigned char *r = ok ? sqlite3_column_text(st, 0) : NULL;
	if (!ok || !r || strcmp((const char *)r, "ok")) {
		snprintf(why, n, "integrity_check: %s", r ? (const char *)r : sqlite3_errmsg(s));
		ok = 0;
	}
	sqlite3_finalize(st);
	st = NULL;
	if (ok && sqlite3_prepare_v2(s, "PRAGMA foreign_key_check", -1, &st, NULL) == SQLITE_OK) {
		int rc = sqlite3_step(st);
		if (rc == SQLITE_ROW) {
			snprintf(why, n, "foreign_key_check: a row of '%s' (rowid %lld) lacks its parent in '%s'",
				 (const char *)sqlite3_column_text(st, 0), (long long)sqlite3_column_int64(st, 1),
				 (const char *)sqlite3_column_text(st, 2));
			ok = 0;
		} else if (rc != SQLITE_DONE) {
			snprintf(why, n, "foreign_key_check: %s", sqlite3_errmsg(s));
			ok = 0;
		}
	} else if (ok) {
		snprintf(why, n, "foreign_key_check: %s", sqlite3_errmsg(s));
		ok = 0;
	}
	sqlite3_finalize(st);
	sqlite3_close(s);
	return ok;
}

/* A fixture into a file of its own: NAME.gz is unpacked with gzip, anything else copied. 0, or -1. */
static inline int dbkit_unpack(const char *src, const char *dst)
{
	size_t l = strlen(src);
	if (l > 3 && !strcmp(src + l - 3, ".gz")) {
		char *cmd = xasprintf("gzip -dc '%s' >'%s'", src, dst);
		int r = system(cmd);
		free(cmd);
		return r == 0 ? 0 : -1;
	}
	struct sbuf b = SBUF_INIT;
	int r = read_file(src, &b) == 0 && write_file_atomic(dst, b.buf, b.len) == 0 ? 0 : -1;
	sbuf_free(&b);
	return r;
}

/* The database fixtures, one per schema version (tests/fixtures/db/README.md). */
#define DBKIT_FIXTURES "tests/fixtures/db"

static inline int dbkit_cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names of every fixture (NAME.db or NAME.db.gz) of DBKIT_FIXTURES into out, sorted. */
static inline void dbkit_fixtures(struct strvec *out)
{
	DIR *d = opendir(DBKIT_FIXTURES);
	struct dirent *de;
	while (d && (de = readdir(d))) {
		size_t l = strlen(de->d_name);
		if ((l > 3 && !strcmp(de->d_name + l - 3, ".db")) || (l > 6 && !strcmp(de->d_name + l - 6, ".db.gz")))
			strvec_push(out, de->d_name);
	}
	if (d)
		closedir(d);
	if (out->n)
		qsort(out->v, out->n, sizeof(out->v[0]), dbkit_cmp_names);
}

/* The crashlab binary the tests run: $CRASHLAB, or ./crashlab. */
static inline const char *dbkit_crashlab(void)
{
	return getenv("CRASHLAB") ? getenv("CRASHLAB") : "./crashlab";
}

/* Run the shell command cmd, its output into out (terminated); its exit status, or -1. */
static inline int dbkit_popen(const char *cmd, struct sbuf *out)
{
	sbuf_reset(out);
	FILE *p = popen(cmd, "r");
	char buf[4096];
	size_t n;
	while (p && (n = fread(buf, 1, sizeof(buf), p)) > 0)
		sbuf_add(out, buf, n);
	int st = p ? pclose(p) : -1;
	sbuf_add(out, "", 0); /* terminated, even when empty */
	return st >= 0 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Run `crashlab ARGS` with stdout and stderr into out (terminated); its exit status, or -1. */
static inline int dbkit_run(const char *args, struct sbuf *out)
{
	char *cmd = xasprintf("'%s' %s 2>&1", dbkit_crashlab(), args);
	int st = dbkit_popen(cmd, out);
	free(cmd);
	return st;
}

#endif
