/*
 * cmd.h - the CLI: the command table (cmd/main.c), one handler per
 * subcommand in cmd/<name>.c, and what they all share. Only cmd/ exits:
 * library code returns a struct errbuf, which die_err() turns into the
 * message and the documented exit code.
 */
#ifndef CRASHLAB_CMD_CMD_H
#define CRASHLAB_CMD_CMD_H

#include "cmd/opt.h"
#include "core/util.h"
#include "engine/vm.h"

/* What a command needs; main.c and cmd_parse() provide it. */
enum {
	CMD_GUEST = 1 << 0,   /* boots guests: takes --kernel PATH, --kernel-source and --accel (cmd_guest prepares them) */
	CMD_DB = 1 << 1,      /* uses a database: takes --db FILE (cmd_db_open / cmd_db_existing) */
	CMD_STDOUT = 1 << 2,  /* prints results: main checks that stdout took all of it */
};

/* One invocation's setup, filled by main.c and cmd_parse(). */
struct cmd_ctx {
	const char *name;     /* "crashlab run": how messages name the command */
	unsigned flags;       /* CMD_*, of the command or the subcommand being parsed */
	const char *kernel;   /* --kernel PATH, or NULL for the built kernel */
	const char *kernel_source; /* --kernel-source X.Y|PATH: the built kernel of that source */
	const char *accel;    /* --accel auto|kvm|tcg */
	const char *backend;  /* --backend qemu|libvirt, or NULL (qemu) */
	const char *connect;  /* --connect URI (libvirt), or NULL */
	const char *db_path;  /* --db FILE */
	int verbose, quiet;
};

struct command {
	const char *name;
	int (*fn)(int argc, char **argv, struct cmd_ctx *ctx);
	const char *summary;
	unsigned flags;
};

/* The command table, for `crashlab --help` and the tests. */
const struct command *commands(size_t *n);
/* The command of that name, or NULL. */
const struct command *command_find(const char *name);

/* Parse argv with the command's options and the common ones ctx->flags
 * allow; --help prints usage and exits 0. Returns the positionals' count
 * (argv[0..n)). */
int cmd_parse(struct cmd_ctx *ctx, int argc, char **argv, const struct opt *opts, const char *usage, int flags);

/* A command with subcommands names the one it runs: ctx->name "crashlab
 * kernel" becomes "crashlab kernel build" (the old name freed; main frees
 * the new one). */
void cmd_name_sub(struct cmd_ctx *ctx, const char *sub);

/* The guest's kernel, initramfs and accelerator (built or probed when
 * needed), from --kernel and --accel; dies on failure. */
void cmd_guest(struct cmd_ctx *ctx, struct vm_config *cfg);
/* The backend of --backend and --connect into cfg (cmd_guest does it); a bad one is a usage error. */
void cmd_backend(struct cmd_ctx *ctx, struct vm_config *cfg);
/* A guest that failed: killed, the failure printed (what happened, the last
 * console lines, where the console log is); returns the exit code. */
int cmd_guest_failed(struct vm *vm, enum vm_outcome o);
/* Start a guest: 0, or (the failure printed, vm freed) its exit code. */
int cmd_vm_start(struct vm *vm, const struct vm_config *cfg);
/* The database of --db: created if needed, or one that must exist; dies on failure. */
struct crashdb *cmd_db_open(struct cmd_ctx *ctx);
struct fsrun;
struct state_result;
/* The crash state of fs run f that arg names (its index, or a mark's label),
 * read with its tree and verdicts into s; a bad arg is cmd's usage error. */
void cmd_read_state(const char *cmd, struct crashdb *db, const struct fsrun *f, const char *arg,
		    struct state_result *s);
struct crashdb *cmd_db_existing(struct cmd_ctx *ctx);
/* " --db FILE" when the database is not the default, for the commands a run suggests. */
const char *cmd_db_arg(struct cmd_ctx *ctx);

/* Arguments every command reads the same way; a bad one is a usage error of ctx's command. */
long long cmd_size(struct cmd_ctx *ctx, const char *arg);
void cmd_fs_list(struct cmd_ctx *ctx, const char *list, struct strvec *out);
/* A fresh private directory under $TMPDIR (or /tmp) named crashlab-WHAT.XXXXXX (malloc'd); dies when impossible. */
char *cmd_tmpdir(const char *what);
/* Now in UTC as the database stores times (2026-01-31T12:00:00Z); free it. */
char *cmd_utc_now(void);
/* The kernel's cache key, or "user:<path>" for --kernel (malloc'd). */
char *cmd_kernel_key(const char *user_kernel);
/* A new run's folder in the cache (runs/<started_at>-<pid><suffix>: its write
 * logs, consoles and lock), set as run->workdir and created; returns the fd
 * of its lock, held while the run goes on, or -1 with e. */
struct run_info;
int cmd_run_folder(struct run_info *run, const char *suffix, struct errbuf *e);

_Noreturn void die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
_Noreturn void die_code(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
_Noreturn void die_err(const struct errbuf *e);

int cmd_run(int argc, char **argv, struct cmd_ctx *ctx);
int cmd_kernel(int argc, char **argv, struct cmd_ctx *ctx);
int cmd_image(int argc, char **argv, struct cmd_ctx *ctx);
int cmd_boot(int argc, char **argv, struct cmd_ctx *ctx);
int cmd_shell(int argc, char **argv, struct cmd_ctx *ctx);
int cmd_try(int argc, char **argv, struct cmd_ctx *ctx);
int cmd_bench(int argc, char **argv, struct cmd_ctx *ctx);
int cmd_doctor(int argc, char **argv, struct cmd_ctx *ctx);
int cmd_list(int argc, char **argv, struct cmd_ctx *ctx);
int cmd_show(int argc, char **argv, struct cmd_ctx *ctx);
int cmd_report(int argc, char **argv, struct cmd_ctx *ctx);
int cmd_judge(int argc, char **argv, struct cmd_ctx *ctx);
int cmd_compare(int argc, char **argv, struct cmd_ctx *ctx);
int cmd_tutorial(int argc, char **argv, struct cmd_ctx *ctx);
int cmd_lab(int argc, char **argv, struct cmd_ctx *ctx);
int cmd_gen(int argc, char **argv, struct cmd_ctx *ctx);
int cmd_import(int argc, char **argv, struct cmd_ctx *ctx);
int cmd_browse(int argc, char **argv, struct cmd_ctx *ctx);
int cmd_db(int argc, char **argv, struct cmd_ctx *ctx);
int cmd_export(int argc, char **argv, struct cmd_ctx *ctx);

#endif
