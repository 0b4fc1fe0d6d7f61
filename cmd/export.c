/*
 * export.c - `crashlab export RUN FS STATE --format image|c|xfstests|wl
 * --out DIR`: a stored finding as files that leave the lab (engine/export.h
 * makes them; this file reads the store, checks the arguments and writes).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "cmd/render.h"
#include "crashdb/crashdb.h"
#include "engine/export.h"
#include "engine/guest.h"
#include "host/msg.h"
#include "host/sys.h"

static const char export_usage[] =
	"usage: crashlab export [--db FILE] RUN FS STATE --format image|c|xfstests|wl --out DIR\n"
	"                       [--image-format raw|qcow2 | --qcow2] [--verify] [--model M]\n"
	"                       [--number NNN] [--force]\n"
	"\n"
	"Take one crash state of a stored run out of the lab, to send upstream or to a\n"
	"colleague. RUN is a run id, 'last' or 'last~N'; FS and STATE as in\n"
	"'crashlab show RUN FS STATE' (a state index, or a mark's LABEL). DIR is created\n"
	"if needed; a file already there is not replaced without --force. Files are\n"
	"named runR-FS-stateN.*.\n"
	"\n"
	"formats:\n"
	"  image     the crash state's disk, rebuilt on this machine from the fs run's\n"
	"            base image, its write log and the state's recipe (plain file\n"
	"            writes: it is never mounted here), raw (.img) or qcow2 (.qcow2,\n"
	"            with qemu-img), ready to attach to any VM; beside it\n"
	"            IMAGE.notes.txt: the file system, mkfs and mount options, the ops,\n"
	"            what the state showed and what was promised and lost. --verify\n"
	"            boots a checker guest on the image (nothing replayed) and checks\n"
	"            that it shows the stored tree: exit 1 when it does not.\n"
	"  c         a standalone C program (.c) making the workload's system calls as\n"
	"            crashlab's in-guest agent makes them, on the directory given as its\n"
	"            argument, printing each op's result (op, ret, errno) as crashlab\n"
	"            stored it; .expected holds the stored lines. Builds with plain\n"
	"            'cc -Wall' on Linux.\n"
	"  xfstests  tests/generic/NNN and NNN.out in xfstests' conventions: the ops up\n"
	"            to the one that made the broken promise as shell and xfs_io\n"
	"            commands on a dm-flakey scratch device, the power cut\n"
	"            (_flakey_drop_and_remount), then what survived at the paths the\n"
	"            finding is about; the golden output is what the model promised, so\n"
	"            the test fails on the file system that lost it. The model is the\n"
	"            first with a LOST in the state (the fs's own, posix, somc, the\n"
	"            others, sequential last), or --model M. Ops xfs_io cannot\n"
	"            express (mmapwrite, the barrier calls, renameat2 flags,\n"
	"            fiemap_sync) are refused: use --format c.\n"
	"  wl        the workload as a .wl file, for 'crashlab run'.\n"
	"\n"
	"Exit codes: 0 written, 1 --verify found another tree, 2 usage, 65 the state\n"
	"cannot be exported so (no finding for xfstests, an op xfs_io cannot express),\n"
	"66 no such run, fs or state (or its base image or log is gone), 73 a file\n"
	"exists or cannot be written.\n"
	"\n"
	"examples:\n"
	"  crashlab export last f2fs 1 --format image --out bug/ --qcow2\n"
	"  crashlab export 3 xfs 0 --format image --out bug/ --verify\n"
	"  crashlab export last f2fs 1 --format c --out bug/ && cc -Wall -o t bug/run*-f2fs-state1.c\n"
	"  crashlab export last f2fs 1 --format xfstests --out xfstests/ --number 999\n";

/* Write data to path (refusing to replace it unless force). */
static void write_out(const char *path, const char *data, size_t len, int force, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | (force ? 0 : O_EXCL), mode);
	if (fd < 0 && errno == EEXIST)
		die_code(EXIT_CANTCREAT, "'%s' exists; --force replaces it", path);
	if (fd < 0)
		die_code(exit_for_errno(errno) == EXIT_NOINPUT ? EXIT_CANTCREAT : exit_for_errno(errno),
			 "cannot write '%s': %s", path, errno_advice(errno));
	if (write_all(fd, data, len) < 0 || fchmod(fd, mode) < 0 || close(fd) < 0)
		die_code(exit_for_errno(errno), "cannot write '%s': %s", path, errno_advice(errno));
}

static void refuse_existing(const char *path, int force)
{
	if (access(path, F_OK) == 0) {
		if (!force)
			die_code(EXIT_CANTCREAT, "'%s' exists; --force replaces it", path);
		if (unlink(path) < 0)
			die_code(exit_for_errno(errno), "cannot remove '%s': %s", path, errno_advice(errno));
	}
}

static void make_dir(const char *dir)
{
	if (file_exists(dir) && !is_dir(dir))
		die_code(EXIT_CANTCREAT, "'%s' exists and is not a directory", dir);
	if (mkdir_p(dir, 0755) < 0)
		die_code(exit_for_errno(errno) == EXIT_NOINPUT ? EXIT_CANTCREAT : exit_for_errno(errno),
			 "cannot create '%s': %s", dir, errno_advice(errno));
	if (!is_dir(dir))
		die_code(EXIT_CANTCREAT, "'%s' exists and is not a directory", dir);
}

static int export_image_cmd(struct cmd_ctx *ctx, const struct export_src *x, const char *dir, const char *base,
			    const char *image_format, int verify, int force)
{
	int qcow = !strcmp(image_format, "qcow2");
	char *raw = xasprintf("%s/%s.img", dir, base);
	char *qc = xasprintf("%s/%s.qcow2", dir, base);
	char *notes = xasprintf("%s/%s.%s.notes.txt", dir, base, qcow ? "qcow2" : "img");
	char *tmp_raw = qcow ? xasprintf("%s/.%s.img.tmp", dir, base) : NULL;
	refuse_existing(qcow ? qc : raw, force);
	refuse_existing(notes, force);
	if (tmp_raw)
		unlink(tmp_raw);

	struct errbuf e;
	uint64_t bytes = 0;
	double t0 = now_s();
	const char *built = qcow ? tmp_raw : raw;
	if (export_image(x->fr, x->st, built, &bytes, &e) < 0)
		die_err(&e);
	double t_build = now_s() - t0;
	int rc = 0;
	if (verify) {
		struct vm_config cfg = { .mem_mb = 1024 };
		cmd_guest(ctx, &cfg);
		struct check_report rep;
		t0 = now_s();
		if (export_verify(&cfg, x->fr, built, &rep, &e) < 0) {
			if (tmp_raw)
				unlink(tmp_raw);
			die_err(&e);
		}
		const struct check_report *was = &x->st->check;
		int same = rep.mount_ok == was->mount_ok && !strcmp(rep.tree_hash, was->tree_hash) &&
			   rep.n_nodes == was->n_nodes;
		if (same) {
			printf("verified: the image mounts in a guest to the stored tree (hash %s, %zu nodes) in %.1f s\n",
			       rep.tree_hash[0] ? rep.tree_hash : "-", rep.n_nodes, now_s() - t0);
		} else {
			printf("NOT verified: in a guest the image shows tree %s (%zu nodes, %s), the store has %s "
			       "(%zu nodes, %s)\n", rep.tree_hash[0] ? rep.tree_hash : "-", rep.n_nodes,
			       rep.mount_ok ? "mounted" : "did not mount", was->tree_hash[0] ? was->tree_hash : "-",
			       was->n_nodes, was->mount_ok ? "mounted" : "did not mount");
			rc = EXIT_FINDING;
		}
		check_report_free(&rep);
		guest_config_free(&cfg);
	}
	if (qcow) {
		if (export_qcow2(tmp_raw, qc, &e) < 0) {
			unlink(tmp_raw);
			die_err(&e);
		}
		unlink(tmp_raw);
	}
	struct sbuf sb = SBUF_INIT;
	char *what = xasprintf("%s: the disk of this crash state, %s, %s, as the checker built it (never\n"
			       "mounted on the machine that made it). Attach it to a VM as a %s disk; mounting\n"
			       "it runs the file system's recovery, as after the power cut.",
			       qcow ? qc : raw, qcow ? "qcow2" : "raw", x->fr->fs, qcow ? "qcow2" : "raw");
	export_notes(&sb, x, what);
	write_out(notes, sb.buf, sb.len, force, 0644);
	printf("%s  (%s image of %s state %d: %" PRIu64 " bytes replayed onto the base in %.2f s)\n", qcow ? qc : raw,
	       qcow ? "qcow2" : "raw", x->fr->fs, x->st->idx, bytes, t_build);
	printf("%s\n", notes);
	sbuf_free(&sb);
	free(what);
	free(raw);
	free(qc);
	free(notes);
	free(tmp_raw);
	return rc;
}

int cmd_export(int argc, char **argv, struct cmd_ctx *ctx)
{
	const char *format = NULL, *out = NULL, *image_format = NULL, *model_arg = NULL, *number = "999";
	int qcow2 = 0, verify = 0, force = 0;
	const struct opt opts[] = {
		{ OPT_STRING, 'f', "format", &format, "image|c|xfstests|wl", "what to write" },
		{ OPT_STRING, 'o', "out", &out, "DIR", "the folder to write into (created if needed)" },
		{ OPT_STRING, 0, "image-format", &image_format, "raw|qcow2", "image: the disk's format (default raw)" },
		{ OPT_BOOL, 0, "qcow2", &qcow2, NULL, "image: the same as --image-format qcow2" },
		{ OPT_BOOL, 0, "verify", &verify, NULL, "image: check the image again in a guest (boots one)" },
		{ OPT_STRING, 'm', "model", &model_arg, "M", "xfstests: the model whose promises the test checks" },
		{ OPT_STRING, 0, "number", &number, "NNN", "xfstests: the test's number (default 999)" },
		{ OPT_BOOL, 0, "force", &force, NULL, "replace files an earlier export wrote" },
		{ OPT_END, 0, NULL, NULL, NULL, NULL },
	};
	const char *cmd = ctx->name;
	int n = cmd_parse(ctx, argc, argv, opts, export_usage, 0);
	if (n < 3)
		usage_error(cmd, "%s; say RUN FS STATE (e.g. 'crashlab export last ext4 0 --format wl --out DIR')",
			    n == 0 ? "no run given" : n == 1 ? "no file system given" : "no state given");
	if (n > 3)
		usage_error(cmd, "unexpected argument '%s'", argv[3]);
	if (!format)
		usage_error(cmd, "which format? give --format image, c, xfstests or wl");
	static const char *const formats[] = { "image", "c", "xfstests", "wl", NULL };
	int fi = -1;
	for (int i = 0; formats[i]; i++)
		if (!strcmp(format, formats[i]))
			fi = i;
	if (fi < 0) {
		const char *near = nearest_word(format, formats);
		usage_error(cmd, "unknown --format '%s'%s%s%s; use image, c, xfstests or wl", format,
			    near ? " (did you mean '" : "", near ? near : "", near ? "'?)" : "");
	}
	if (!out)
		usage_error(cmd, "where to? give --out DIR");
	if (qcow2 && image_format && strcmp(image_format, "qcow2"))
		usage_error(cmd, "--qcow2 and --image-format %s disagree", image_format);
	if (qcow2)
		image_format = "qcow2";
	if (image_format && strcmp(image_format, "raw") && strcmp(image_format, "qcow2"))
		usage_error(cmd, "--image-format wants raw or qcow2, not '%s'", image_format);
	if ((image_format || verify) && fi != 0)
		usage_error(cmd, "%s is for --format image", verify ? "--verify" : "--image-format/--qcow2");
	if (model_arg && fi != 2)
		usage_error(cmd, "--model is for --format xfstests");
	int model = -1;
	if (model_arg && (model = model_parse(model_arg)) < 0)
		usage_error(cmd, "unknown model '%s'", model_arg);
	if (fi == 2 && (!*number || strspn(number, "0123456789") != strlen(number) || strlen(number) > 6))
		usage_error(cmd, "--number wants the test's number (digits), not '%s'", number);

	struct crashdb *db = cmd_db_existing(ctx);
	struct errbuf e;
	int64_t run_id;
	struct run_info run;
	struct fsrun *fv;
	size_t nfs;
	if (crashdb_resolve_run(db, argv[0], &run_id, &e) < 0) {
		if (e.code == EXIT_USAGE)
			usage_error(cmd, "%s", e.msg);
		die_err(&e);
	}
	if (crashdb_read_run(db, run_id, &run, &e) < 0 || crashdb_read_fsruns(db, run.id, argv[1], &fv, &nfs, &e) < 0)
		die_err(&e);
	if ((fi == 1 || fi == 2) && fv[0].ops.overlay)
		die_code(EXIT_DATAERR, "%s:%d: run %" PRId64 " ran an [overlay] workload, which the C program and the "
			 "xfstests test do not mount; export --format image (its disk holds the layers) or wl",
			 run.workload_file ? run.workload_file : "workload", fv[0].ops.overlay, run.id);
	struct state_result s;
	cmd_read_state(cmd, db, &fv[0], argv[2], &s);
	crashdb_close(db);

	struct export_src x = { &run, &fv[0], &s };
	char *base = xasprintf("run%" PRId64 "-%s-state%d", run.id, fv[0].fs, s.idx);
	int rc = 0;
	struct sbuf sb = SBUF_INIT, sb2 = SBUF_INIT;
	if (fi == 0) {
		make_dir(out);
		rc = export_image_cmd(ctx, &x, out, base, image_format ? image_format : "raw", verify, force);
	} else if (fi == 1) {
		if (!fv[0].res || !fv[0].ops.n)
			die_code(EXIT_DATAERR, "%s of run %" PRId64 " has no recorded ops to make a program of", fv[0].fs,
				 run.id);
		make_dir(out);
		char *c = xasprintf("%s/%s.c", out, base), *exp = xasprintf("%s/%s.expected", out, base);
		refuse_existing(exp, force);
		export_c(&sb, &x, base);
		export_c_expected(&sb2, &fv[0]);
		write_out(c, sb.buf, sb.len, force, 0644);
		write_out(exp, sb2.buf, sb2.len, force, 0644);
		printf("%s\n%s\n", c, exp);
		free(c);
		free(exp);
	} else if (fi == 2) {
		int used;
		if (export_xfstests(&sb, &sb2, &x, number, model, &used, &e) < 0)
			die_err(&e);
		char *dir = xasprintf("%s/tests/generic", out);
		make_dir(dir);
		char *t = xasprintf("%s/%s", dir, number), *o = xasprintf("%s/%s.out", dir, number);
		refuse_existing(o, force);
		write_out(t, sb.buf, sb.len, force, 0755);
		write_out(o, sb2.buf, sb2.len, force, 0644);
		printf("%s\n%s  (the promises of model %s)\n", t, o, model_name(used));
		free(dir);
		free(t);
		free(o);
	} else {
		make_dir(out);
		char *w = xasprintf("%s/%s.wl", out, base);
		export_wl(&sb, &x);
		write_out(w, sb.buf, sb.len, force, 0644);
		printf("%s\n", w);
		free(w);
	}
	sbuf_free(&sb);
	sbuf_free(&sb2);
	free(base);
	state_result_free(&s);
	crashdb_fsruns_free(fv, nfs);
	run_info_free(&run);
	return rc;
}
