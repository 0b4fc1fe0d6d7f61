/*
 * common.c - what every command shares (cmd.h): the common options, the
 * one place a guest and a database are set up, and dying.
 */
#include "cmd/cmd.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/fs.h"
#include "crashdb/crashdb.h"
#include "engine/guest.h"
#include "host/msg.h"
#include "engine/result.h"
#include "kbuild/kbuild.h"
#include "host/sys.h"
#include "cmd/render.h"

_Noreturn void die_err(const struct errbuf *e)
{
	fflush(stdout);
	error_print(e);
	exit(e->code ? e->code : EXIT_SOFTWARE);
}

_Noreturn void die_code(int code, const char *fmt, ...)
{
	struct errbuf e;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(e.msg, sizeof(e.msg), fmt, ap);
	va_end(ap);
	e.code = code;
	die_err(&e);
}

_Noreturn void die(const char *fmt, ...)
{
	struct errbuf e;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(e.msg, sizeof(e.msg), fmt, ap);
	va_end(ap);
	e.code = EXIT_SOFTWARE;
	die_err(&e);
}

int cmd_parse(struct cmd_ctx *ctx, int argc, char **argv, const struct opt *opts, const char *usage, int flags)
{
	struct opt common[11];
	size_t n = 0;
	common[n++] = (struct opt){ OPT_COUNT, 'v', "verbose", &ctx->verbose, NULL,
				    "show full command lines (QEMU, mkfs, make); twice: the guest console too" };
	common[n++] = (struct opt){ OPT_BOOL, 'q', "quiet", &ctx->quiet, NULL, "no progress output" };
	if (ctx->flags & CMD_GUEST) {
		common[n++] = (struct opt){ OPT_STRING, 0, "kernel", &ctx->kernel, "PATH",
					    "use this bzImage instead of the built one" };
		common[n++] = (struct opt){ OPT_STRING, 0, "kernel-source", &ctx->kernel_source, "X.Y|PATH",
					    "use the kernel built from this source: 6.12 (default), 6.1, or a "
					    "tarball or tree (crashlab kernel build --source)" };
		common[n++] = (struct opt){ OPT_STRING, 0, "accel", &ctx->accel, "auto|kvm|tcg",
					    "accelerator (auto: KVM when a test boot works, probed once per machine)" };
		common[n++] = (struct opt){ OPT_STRING, 0, "backend", &ctx->backend, "qemu|libvirt",
					    "who starts the guests: qemu (default) runs QEMU directly; libvirt makes each "
					    "guest a transient libvirt domain" };
		common[n++] = (struct opt){ OPT_STRING, 0, "connect", &ctx->connect, "URI",
					    "with --backend libvirt: the libvirt connection (default: libvirt's own, "
					    "qemu:///system for root; qemu+ssh://HOST/system for a remote host)" };
	}
	if (ctx->flags & CMD_DB)
		common[n++] = (struct opt){ OPT_STRING, 0, "db", &ctx->db_path, "FILE",
					    "the database (default " CRASHDB_DEFAULT " here)" };
	common[n++] = (struct opt){ OPT_BOOL, 'h', "help", NULL, NULL, "show this help" };
	common[n] = (struct opt){ OPT_END, 0, NULL, NULL, NULL, NULL };
	argv[0] = (char *)ctx->name;
	int r = opt_parse(argc, argv, opts, common, usage, flags);
	msg_configure(ctx->verbose, ctx->quiet);
	if (ctx->kernel_source) {
		if (ctx->kernel)
			usage_error(ctx->name, "--kernel and --kernel-source both name the kernel; give one");
		if (!*ctx->kernel_source)
			usage_error(ctx->name, "--kernel-source wants X.Y (6.12, 6.1) or the path of a tarball or tree");
		kbuild_select(ctx->kernel_source);
	}
	return r;
}

void cmd_name_sub(struct cmd_ctx *ctx, const char *sub)
{
	char *old = (char *)ctx->name;
	ctx->name = xasprintf("%s %s", old, sub);
	free(old);
}

void cmd_guest(struct cmd_ctx *ctx, struct vm_config *cfg)
{
	struct errbuf e;
	if (guest_prepare(cfg, ctx->kernel, ctx->accel ? ctx->accel : "auto", &e) < 0)
		die_err(&e);
	cmd_backend(ctx, cfg);
}

void cmd_backend(struct cmd_ctx *ctx, struct vm_config *cfg)
{
	const char *b = ctx->backend ? ctx->backend : "qemu";
	if (strcmp(b, "qemu") && strcmp(b, "libvirt"))
		usage_error(ctx->name, "unknown backend '%s' (use qemu or libvirt)", b);
	if (ctx->connect && strcmp(b, "libvirt"))
		usage_error(ctx->name, "--connect is for --backend libvirt");
	cfg->libvirt = !strcmp(b, "libvirt");
	cfg->connect = ctx->connect;
}

int cmd_guest_failed(struct vm *vm, enum vm_outcome o)
{
	struct errbuf e;
	vm_kill(vm);
	int code = vm_failure(vm, o, &e);
	fflush(stdout);
	error_print(&e);
	return code;
}

int cmd_vm_start(struct vm *vm, const struct vm_config *cfg)
{
	enum vm_outcome o = vm_start(vm, cfg);
	if (o == VM_OK)
		return 0;
	int rc = cmd_guest_failed(vm, o);
	vm_free(vm);
	return rc;
}

struct crashdb *cmd_db_open(struct cmd_ctx *ctx)
{
	struct crashdb *db;
	struct errbuf e;
	if (crashdb_open(ctx->db_path ? ctx->db_path : CRASHDB_DEFAULT, &db, &e) < 0)
		die_err(&e);
	return db;
}

struct crashdb *cmd_db_existing(struct cmd_ctx *ctx)
{
	struct crashdb *db;
	struct errbuf e;
	if (crashdb_open_existing(ctx->db_path ? ctx->db_path : CRASHDB_DEFAULT, &db, &e) < 0)
		die_err(&e);
	return db;
}

const char *cmd_db_arg(struct cmd_ctx *ctx)
{
	static char buf[4200];
	if (!ctx->db_path || !strcmp(ctx->db_path, CRASHDB_DEFAULT))
		return "";
	snprintf(buf, sizeof(buf), " --db %s", ctx->db_path);
	return buf;
}

long long cmd_size(struct cmd_ctx *ctx, const char *arg)
{
	long long size = parse_size(arg);
	if (size <= 0)
		usage_error(ctx->name, "bad size '%s' (use e.g. 512M or 1G)", arg);
	return size;
}

void cmd_fs_list(struct cmd_ctx *ctx, const char *list, struct strvec *out)
{
	struct errbuf e;
	if (fs_split(list, out, &e) < 0)
		usage_error(ctx->name, "%s", e.msg);
}

char *cmd_tmpdir(const char *what)
{
	const char *tmp = getenv("TMPDIR");
	char *dir = xasprintf("%s/crashlab-%s.XXXXXX", tmp && *tmp ? tmp : "/tmp", what);
	if (!mkdtemp(dir))
		die_code(exit_for_errno(errno), "cannot create a directory like '%s': %s", dir, errno_advice(errno));
	return dir;
}

char *cmd_utc_now(void)
{
	char buf[32];
	time_t t = time(NULL);
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
	return xstrdup(buf);
}

char *cmd_kernel_key(const char *user_kernel)
{
	if (user_kernel)
		return xasprintf("user:%s", user_kernel);
	struct kbuild_opts ko = { 0 };
	char key[65];
	struct errbuf e;
	return xstrdup(kbuild_key(&ko, key, &e) == 0 ? key : "");
}

int cmd_run_folder(struct run_info *run, const char *suffix, struct errbuf *e)
{
	/* unique even across databases: the start time and the process */
	char *runs = cache_subdir("runs", e);
	if (!runs)
		return -1;
	run->workdir = xasprintf("%s/%s-%d%s", runs, run->started_at, (int)getpid(), suffix ? suffix : "");
	free(runs);
	if (mkdir_p(run->workdir, 0755) < 0)
		return errbuf_errno(e, errno, "cannot create '%s'", run->workdir);
	char *lock = xasprintf("%s/" CRASHDB_RUN_LOCK, run->workdir);
	int fd = lock_take(lock);
	if (fd < 0)
		errbuf_errno(e, errno, "cannot lock '%s'", lock);
	free(lock);
	return fd;
}

void cmd_read_state(const char *cmd, struct crashdb *db, const struct fsrun *f, const char *arg,
		    struct state_result *s)
{
	struct errbuf e;
	struct state_result *all;
	size_t nall;
	if (crashdb_read_states(db, f->id, 0, &all, &nall, &e) < 0)
		die_err(&e);
	int at = render_state_arg(f, all, nall, arg, &e);
	if (at < 0) {
		if (e.code == EXIT_USAGE)
			usage_error(cmd, "%s", e.msg);
		die_err(&e);
	}
	int idx = all[at].idx;
	crashdb_states_free(all, nall);
	if (crashdb_read_state(db, f, idx, CRASHDB_TREE | CRASHDB_VERDICTS, s, &e) < 0)
		die_err(&e);
}
