/*
 * import.c - `crashlab import jlang FILE [--out FILE.wl]`: a CrashMonkey
 * J-lang workload as a .wl file (core/jlang.c), checked by the workload
 * parser before it is written.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "core/jlang.h"
#include "core/workload.h"

static const char import_usage[] =
	"usage: crashlab import jlang FILE [--out FILE.wl]\n"
	"\n"
	"Turn a workload of CrashMonkey's J-lang (what its Ace generator writes: the\n"
	"sections # define, # declare, # setup and # run) into a crashlab workload,\n"
	"printed, or written to --out. J-lang names a path by its # define line with\n"
	"the slashes taken out (Afoo is A/foo; test is the root); ops CrashMonkey runs\n"
	"on a descriptor (write, fsync, fdatasync, falloc, mmapwrite, fsetxattr) act\n"
	"on the path their file has now, so an fsync after a rename of the file\n"
	"fsyncs its new name.\n"
	"\n"
	"Every op crashlab's language can express is imported:\n"
	"  mkdir, rmdir, creat, write, truncate, falloc, link, symlink, rename, unlink,\n"
	"  fsync, fdatasync, sync    as the op of the same name (remove: unlink, or\n"
	"                            rmdir for a directory)\n"
	"  open X FLAGS MODE         creat when X does not exist (with O_CREAT), or\n"
	"                            truncate X 0 for O_TRUNC; else nothing, since a\n"
	"                            workload opens a file at its first use\n"
	"  opendir, none             nothing; close: close when the file is open\n"
	"  dwrite                    dwrite, then fsync (CrashMonkey opens the file\n"
	"                            O_DIRECT|O_SYNC for it)\n"
	"  mmapwrite                 falloc 0, mmapwrite, fdatasync (it preallocates,\n"
	"                            writes through a shared mapping, msyncs MS_SYNC)\n"
	"  fsetxattr, removexattr    setxattr / removexattr of user.xattr1 (\"val1\")\n"
	"  checkpoint N              mark checkpoint-N\n"
	"What it cannot express stops the import with 'FILE:LINE: cannot import 'OP':\n"
	"why' and exit 65: mknod, O_APPEND/O_SYNC/O_DSYNC/O_DIRECT opens, an op on the\n"
	"root directory (a workload cannot name it), an fsync of a file unlinked while\n"
	"open, a path not in # define, a descriptor never opened, an op that would\n"
	"fail, an unknown op or flag, and a malformed line.\n"
	"\n"
	"exit codes: 2 usage, 65 the file cannot be imported, 66 it does not exist,\n"
	"73 --out cannot be written\n"
	"\n"
	"examples:\n"
	"  crashlab import jlang j-lang1 --out j-lang1.wl && crashlab run j-lang1.wl\n"
	"  crashlab import jlang j-lang1 | less\n";

int cmd_import(int argc, char **argv, struct cmd_ctx *ctx)
{
	const char *out = NULL;
	const struct opt none[] = { { OPT_END, 0, NULL, NULL, NULL, NULL } };
	const struct opt opts[] = {
		{ OPT_STRING, 'o', "out", &out, "FILE.wl", "write the workload here (default: print it)" },
		{ OPT_END, 0, NULL, NULL, NULL, NULL },
	};
	int n = cmd_parse(ctx, argc, argv, none, import_usage, OPT_STOP_AT_NONOPT);
	if (n == 0)
		usage_error(ctx->name, "import from what: 'crashlab import jlang FILE'");
	if (strcmp(argv[0], "jlang")) {
		const char *subs[] = { "jlang", NULL };
		const char *near = nearest_word(argv[0], subs);
		usage_error(ctx->name, "unknown format '%s'%s (crashlab imports jlang)", argv[0],
			    near ? "; did you mean 'jlang'?" : "");
	}
	cmd_name_sub(ctx, "jlang");
	n = cmd_parse(ctx, n, argv, opts, import_usage, 0);
	if (n != 1)
		usage_error(ctx->name, n ? "one J-lang file at a time, not %d" : "which J-lang file?", n);
	const char *file = argv[0];
	struct sbuf text = SBUF_INIT, wl = SBUF_INIT;
	struct errbuf e;
	if (read_file(file, &text) < 0)
		die_code(errno == ENOENT ? EXIT_NOINPUT : EXIT_DATAERR, "cannot read '%s': %s", file,
			 errno_advice(errno));
	if (jlang_import(file, text.buf ? text.buf : "", &wl, &e) < 0)
		die_err(&e);
	/* what is written must parse as a whole, too */
	struct wl_workload w;
	if (wl_parse(out ? out : "<stdout>", wl.buf, &w, &e) < 0)
		die_code(EXIT_SOFTWARE, "the imported workload does not parse (a bug): %s", e.msg);
	wl_free(&w);
	if (out) {
		FILE *f = fopen(out, "w");
		if (!f || fputs(wl.buf, f) == EOF || fclose(f) == EOF)
			die_code(EXIT_CANTCREAT, "cannot write '%s': %s", out, errno_advice(errno));
	} else {
		fputs(wl.buf, stdout);
	}
	sbuf_free(&text);
	sbuf_free(&wl);
	return 0;
}
