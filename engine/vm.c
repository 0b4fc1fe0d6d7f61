/*
 * vm.c - QEMU guests: launch, channel, health.
 *
 * Method. QEMU runs with -nodefaults -no-reboot, no network device and
 * -sandbox on. The serial console is QEMU's stdout, read through a pipe
 * into a bounded buffer: it is only for logs and for spotting a kernel
 * panic. Results travel over a virtio-serial port whose host end is a unix
 * socket in a private temp dir; we connect as soon as QEMU has created it.
 * The guest kernel runs with panic=-1 oops=panic, so a panic reboots at once
 * and -no-reboot turns that into QEMU exiting: an exit with "Kernel panic"
 * on the console is a panic, an exit without it is a lost guest, and silence
 * past the deadline is a timeout. Deadlines are base seconds times the
 * slowdown factor of the accelerator.
 */
#include "engine/vm.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#define BOOT_TIMEOUT_S 15.0      /* QEMU start -> agent hello, at KVM speed */
#define CMD_TIMEOUT_S 300.0      /* default for one command, at KVM speed */
#define STOP_TIMEOUT_S 10.0      /* shutdown request -> QEMU exit */
#define KVM_PROBE_TIMEOUT_S 12.0 /* a real short boot under KVM, wall seconds */
#define CONSOLE_KEEP (256 * 1024)

static const char *const outcome_names[] = {
	[LAB_OK] = "ok",
	[LAB_PANIC] = "panic",
	[LAB_TIMEOUT] = "timeout",
	[LAB_NO_OUTPUT] = "no-output",
	[LAB_LOST] = "lost-connection",
	[LAB_QEMU_FAILED] = "qemu-failed",
};

const char *lab_outcome_name(enum lab_outcome o)
{
	return outcome_names[o];
}

int lab_outcome_exit(enum lab_outcome o)
{
	switch (o) {
	case LAB_OK:
		return EXIT_OK;
	case LAB_PANIC:
		return EXIT_PANIC;
	case LAB_TIMEOUT:
	case LAB_NO_OUTPUT:
		return EXIT_TIMEOUT;
	case LAB_LOST:
	case LAB_QEMU_FAILED:
		return EXIT_GUEST;
	}
	return EXIT_SOFTWARE;
}

const char *lab_qemu_binary(void)
{
	const char *env = getenv("CRASHLAB_QEMU");
	return env && *env ? env : "qemu-system-x86_64";
}

bool lab_qemu_has_sandbox(void)
{
	static int known = -1;
	if (known < 0) {
		struct strvec av = STRVEC_INIT;
		struct sbuf out = SBUF_INIT;
		strvec_push(&av, lab_qemu_binary());
		strvec_push(&av, "-help");
		int rc = run_cmd(&av, &out, -1);
		known = rc == 0 && strstr(out.buf, "-sandbox") != NULL;
		strvec_free(&av);
		sbuf_free(&out);
	}
	return known;
}

void lab_vm_command(struct lab_vm *vm, const struct lab_vm_config *cfg, const char *sock)
{
	struct strvec *a = &vm->argv;
	strvec_push(a, lab_qemu_binary());
	strvec_push(a, "-nodefaults");
	strvec_push(a, "-no-reboot");
	strvec_push(a, "-display");
	strvec_push(a, "none");
	strvec_push(a, "-accel");
	strvec_push(a, cfg->accel);
	if (!strcmp(cfg->accel, "kvm")) {
		strvec_push(a, "-cpu");
		strvec_push(a, "host");
	}
	strvec_push(a, "-m");
	strvec_pushf(a, "%d", cfg->mem_mb > 0 ? cfg->mem_mb : 1024);
	strvec_push(a, "-smp");
	strvec_push(a, "1");
	strvec_push(a, "-kernel");
	strvec_push(a, cfg->kernel);
	strvec_push(a, "-initrd");
	strvec_push(a, cfg->initrd);
	strvec_push(a, "-append");
	strvec_pushf(a, "console=ttyS0 panic=-1 oops=panic reboot=t loglevel=4 crashlab.mode=%s%s%s",
		     cfg->shell ? "shell" : "agent", cfg->append ? " " : "", cfg->append ? cfg->append : "");
	strvec_push(a, "-chardev");
	strvec_push(a, "stdio,id=con,signal=off");
	strvec_push(a, "-serial");
	strvec_push(a, "chardev:con");
	if (sock) {
		strvec_push(a, "-device");
		strvec_push(a, "virtio-serial-pci");
		strvec_push(a, "-chardev");
		strvec_pushf(a, "socket,id=chan,path=%s,server=on,wait=off", sock);
		strvec_push(a, "-device");
		strvec_pushf(a, "virtserialport,chardev=chan,name=%s", LAB_PROTO_PORT);
	}
	for (size_t i = 0; i < cfg->drives.n; i++) {
		strvec_push(a, "-drive");
		strvec_pushf(a, "%s,if=none,id=disk%zu", cfg->drives.v[i], i);
		strvec_push(a, "-device");
		strvec_pushf(a, "virtio-blk-pci,drive=disk%zu", i);
	}
	if (lab_qemu_has_sandbox()) {
		strvec_push(a, "-sandbox");
		strvec_push(a, "on");
	}
}

static void console_add(struct lab_vm *vm, const char *buf, size_t n)
{
	sbuf_add(&vm->console_log, buf, n);
	if (vm->console_log.len > 2 * CONSOLE_KEEP) {
		size_t drop = vm->console_log.len - CONSOLE_KEEP;
		memmove(vm->console_log.buf, vm->console_log.buf + drop, vm->console_log.len - drop + 1);
		vm->console_log.len -= drop;
	}
}

static bool console_has_panic(struct lab_vm *vm)
{
	return vm->console_log.buf && strstr(vm->console_log.buf, "Kernel panic - not syncing");
}

/* Read what the console has; returns false at EOF. */
static bool console_drain(struct lab_vm *vm)
{
	if (vm->console < 0)
		return false;
	char buf[8192];
	for (;;) {
		ssize_t n = read(vm->console, buf, sizeof(buf));
		if (n > 0) {
			console_add(vm, buf, (size_t)n);
			if (verbose > 1)
				fwrite(buf, 1, (size_t)n, stderr);
			continue;
		}
		if (n < 0 && (errno == EINTR))
			continue;
		if (n < 0 && errno == EAGAIN)
			return true;
		close(vm->console);
		vm->console = -1;
		return false;
	}
}

/* Has QEMU exited? Reaps it and drains the console. */
static bool qemu_exited(struct lab_vm *vm)
{
	if (vm->pid <= 0)
		return true;
	int st;
	pid_t w = waitpid(vm->pid, &st, WNOHANG);
	if (w == 0)
		return false;
	vm->exit_status = w > 0 ? st : -1;
	vm->pid = 0;
	/* Whatever the console still holds is complete now. */
	if (vm->console >= 0) {
		int fl = fcntl(vm->console, F_GETFL);
		fcntl(vm->console, F_SETFL, fl & ~O_NONBLOCK);
		while (console_drain(vm))
			;
	}
	return true;
}

static enum lab_outcome exit_outcome(struct lab_vm *vm, bool had_hello)
{
	if (console_has_panic(vm))
		return LAB_PANIC;
	return had_hello ? LAB_LOST : LAB_QEMU_FAILED;
}

static int connect_sock(const char *path)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static void sleep_ms(int ms)
{
	poll(NULL, 0, ms);
}

enum lab_outcome lab_vm_start(struct lab_vm *vm, const struct lab_vm_config *cfg)
{
	memset(vm, 0, sizeof(*vm));
	vm->chan = vm->console = -1;
	vm->exit_status = -1;
	vm->next_seq = 1;
	vm->slowdown = !strcmp(cfg->accel, "kvm") ? 1.0 : LAB_TCG_SLOWDOWN;
	char tmpl[] = "/tmp/crashlab-vm.XXXXXX";
	if (!mkdtemp(tmpl))
		die_code(exit_for_errno(errno), "cannot create a temp dir in '/tmp': %s", errno_advice(errno));
	vm->dir = xstrdup(tmpl);
	char *sock = xasprintf("%s/chan.sock", vm->dir);
	char *errlog = xasprintf("%s/qemu.err", vm->dir);
	lab_vm_command(vm, cfg, sock);
	if (verbose)
		fprintf(stderr, "crashlab: qemu: %s\n", strvec_join_quoted(&vm->argv));

	int pfd[2];
	if (pipe2(pfd, O_CLOEXEC) < 0)
		die("pipe: %s", strerror(errno));
	vm->t_start = now_s();
	pid_t pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid == 0) {
		int nul = open("/dev/null", O_RDONLY);
		int err = open(errlog, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		dup2(nul, 0);
		dup2(pfd[1], 1);
		if (err >= 0)
			dup2(err, 2);
		setpgid(0, 0);
		execvp(vm->argv.v[0], vm->argv.v);
		fprintf(stderr, "cannot run '%s': %s\n", vm->argv.v[0], strerror(errno));
		_exit(127);
	}
	close(pfd[1]);
	vm->pid = pid;
	vm->console = pfd[0];
	fcntl(vm->console, F_SETFL, fcntl(vm->console, F_GETFL) | O_NONBLOCK);

	double deadline = vm->t_start + BOOT_TIMEOUT_S * vm->slowdown;
	enum lab_outcome o = LAB_NO_OUTPUT;
	while (now_s() < deadline) {
		if (qemu_exited(vm)) {
			o = exit_outcome(vm, false);
			goto out;
		}
		console_drain(vm);
		if (vm->chan < 0) {
			vm->chan = connect_sock(sock);
			if (vm->chan < 0) {
				sleep_ms(5);
				continue;
			}
		}
		struct pollfd p[2] = { { vm->chan, POLLIN, 0 }, { vm->console, POLLIN, 0 } };
		poll(p, 2, 50);
		if (p[0].revents & (POLLIN | POLLHUP)) {
			char buf[4096];
			ssize_t n = read(vm->chan, buf, sizeof(buf));
			if (n <= 0) {
				/* QEMU closed the socket: it is going away. */
				close(vm->chan);
				vm->chan = -1;
				sleep_ms(20);
				continue;
			}
			lab_proto_feed(&vm->rd, buf, (size_t)n);
			struct lab_msg m;
			int k = lab_proto_next(&vm->rd, &m);
			if (k < 0) {
				error("guest channel: %s", vm->rd.err);
				o = LAB_LOST;
				goto out;
			}
			if (k == 1 && m.type == LAB_MSG_HELLO) {
				vm->t_ready = now_s();
				char *s = xmalloc(m.len + 1);
				memcpy(s, m.data, m.len);
				s[m.len] = '\0';
				char *k2 = strstr(s, "kernel=");
				if (k2)
					snprintf(vm->kernel_release, sizeof(vm->kernel_release), "%.*s",
						 (int)strcspn(k2 + 7, "\n"), k2 + 7);
				free(s);
				o = LAB_OK;
				goto out;
			}
		}
	}
	if (console_has_panic(vm))
		o = LAB_PANIC;
out:
	free(sock);
	free(errlog);
	return o;
}

struct sink {
	int out_fd, err_fd;
	struct sbuf *collect;
};

/*
 * Send one request and wait for its answer. OUT frames are streamed to the
 * sink; the final frame (EXIT, RESULT, STATE or ERROR) is returned in
 * *reply_type with its payload in reply (if non-NULL).
 */
static enum lab_outcome request(struct lab_vm *vm, uint8_t type, uint16_t flags, uint32_t seq,
				const void *payload, uint32_t len, struct sink *sink, double timeout_s,
				uint8_t *reply_type, struct sbuf *reply)
{
	if (vm->chan < 0 || lab_proto_send(vm->chan, type, flags, seq, payload, len) < 0) {
		qemu_exited(vm);
		return exit_outcome(vm, true);
	}
	double deadline = now_s() + (timeout_s > 0 ? timeout_s : CMD_TIMEOUT_S * vm->slowdown);
	for (;;) {
		double left = deadline - now_s();
		if (left <= 0)
			return console_has_panic(vm) ? LAB_PANIC : LAB_TIMEOUT;
		struct pollfd p[2] = { { vm->chan, POLLIN, 0 }, { vm->console, POLLIN, 0 } };
		int ms = left > 0.2 ? 200 : (int)(left * 1000) + 1;
		poll(p, 2, ms);
		if (p[1].revents)
			console_drain(vm);
		if (!(p[0].revents & (POLLIN | POLLHUP | POLLERR))) {
			if (qemu_exited(vm))
				return exit_outcome(vm, true);
			continue;
		}
		char buf[65536];
		ssize_t n = read(vm->chan, buf, sizeof(buf));
		if (n <= 0) {
			/* Channel closed: QEMU is exiting; give it a moment to be reaped. */
			close(vm->chan);
			vm->chan = -1;
			for (int i = 0; i < 200 && !qemu_exited(vm); i++)
				sleep_ms(10);
			return exit_outcome(vm, true);
		}
		lab_proto_feed(&vm->rd, buf, (size_t)n);
		struct lab_msg m;
		int k;
		while ((k = lab_proto_next(&vm->rd, &m)) == 1) {
			if (m.seq != seq)
				continue;
			if (m.type == LAB_MSG_OUT) {
				if (sink && sink->collect)
					sbuf_add(sink->collect, m.data, m.len);
				else if (sink)
					write_all(m.flags == 2 ? sink->err_fd : sink->out_fd, m.data, m.len);
				continue;
			}
			if (m.type == LAB_MSG_EXIT || m.type == LAB_MSG_RESULT || m.type == LAB_MSG_STATE ||
			    m.type == LAB_MSG_ERROR) {
				*reply_type = m.type;
				if (reply) {
					sbuf_reset(reply);
					sbuf_add(reply, m.data, m.len);
				}
				return LAB_OK;
			}
		}
		if (k < 0) {
			error("guest channel: %s", vm->rd.err);
			return LAB_LOST;
		}
	}
}

static enum lab_outcome exec_common(struct lab_vm *vm, char *const *argv, struct sink *sink,
				    double timeout_s, int *status)
{
	uint32_t len;
	unsigned char *payload = lab_proto_pack_argv(argv, &len);
	if (!payload)
		die("out of memory");
	uint8_t type = 0;
	struct sbuf reply = SBUF_INIT;
	enum lab_outcome o = request(vm, LAB_MSG_EXEC, 0, vm->next_seq++, payload, len, sink, timeout_s,
				     &type, &reply);
	free(payload);
	if (o == LAB_OK) {
		if (type == LAB_MSG_EXIT && reply.len >= 4) {
			const unsigned char *d = (const unsigned char *)reply.buf;
			*status = (int)(d[0] | d[1] << 8 | d[2] << 16 | (uint32_t)d[3] << 24);
		} else {
			fprintf(stderr, "crashlab: guest: %.*s\n", (int)reply.len, reply.buf ? reply.buf : "");
			*status = 127;
		}
	}
	sbuf_free(&reply);
	return o;
}

enum lab_outcome lab_vm_request(struct lab_vm *vm, uint8_t type, uint16_t flags, uint32_t seq,
				const void *payload, uint32_t len, double timeout_s, uint8_t *reply_type,
				struct sbuf *reply)
{
	return request(vm, type, flags, seq, payload, len, NULL, timeout_s, reply_type, reply);
}

enum lab_outcome lab_vm_exec(struct lab_vm *vm, char *const *argv, int out_fd, int err_fd,
			     double timeout_s, int *status)
{
	struct sink s = { out_fd, err_fd, NULL };
	return exec_common(vm, argv, &s, timeout_s, status);
}

enum lab_outcome lab_vm_run(struct lab_vm *vm, char *const *argv, struct sbuf *out,
			    double timeout_s, int *status)
{
	struct sink s = { -1, -1, out };
	if (!out->buf)
		sbuf_add(out, "", 0);
	return exec_common(vm, argv, &s, timeout_s, status);
}

void lab_vm_kill(struct lab_vm *vm)
{
	if (vm->pid > 0) {
		kill(vm->pid, SIGKILL);
		int st;
		waitpid(vm->pid, &st, 0);
		vm->exit_status = st;
		vm->pid = 0;
	}
}

void lab_vm_stop(struct lab_vm *vm)
{
	if (vm->pid <= 0)
		return;
	if (vm->chan >= 0)
		lab_proto_send(vm->chan, LAB_MSG_SHUTDOWN, 0, 0, NULL, 0);
	double deadline = now_s() + STOP_TIMEOUT_S * vm->slowdown;
	while (now_s() < deadline) {
		console_drain(vm);
		if (qemu_exited(vm))
			return;
		sleep_ms(10);
	}
	lab_vm_kill(vm);
}

void lab_vm_free(struct lab_vm *vm)
{
	lab_vm_kill(vm);
	if (vm->chan >= 0)
		close(vm->chan);
	if (vm->console >= 0)
		close(vm->console);
	vm->chan = vm->console = -1;
	if (vm->dir) {
		rm_rf(vm->dir);
		free(vm->dir);
		vm->dir = NULL;
	}
	strvec_free(&vm->argv);
	sbuf_free(&vm->console_log);
	lab_proto_reader_free(&vm->rd);
}

void lab_vm_describe(struct lab_vm *vm, enum lab_outcome o, char *buf, size_t n)
{
	const char *p = vm->console_log.buf ? strstr(vm->console_log.buf, "Kernel panic - not syncing") : NULL;
	switch (o) {
	case LAB_PANIC:
		snprintf(buf, n, "guest kernel panic: %.*s", p ? (int)strcspn(p, "\r\n") : 0, p ? p : "");
		break;
	case LAB_TIMEOUT:
	case LAB_NO_OUTPUT:
		snprintf(buf, n, "the guest did not answer in time");
		break;
	default:
		snprintf(buf, n, "the guest was lost (%s)", lab_outcome_name(o));
		break;
	}
}

int lab_vm_save_console(struct lab_vm *vm, const char *path)
{
	return write_file_atomic(path, vm->console_log.buf ? vm->console_log.buf : "", vm->console_log.len);
}

int lab_vm_report(struct lab_vm *vm, enum lab_outcome o)
{
	if (o == LAB_OK)
		return EXIT_OK;
	char *logdir = cache_subdir("logs");
	char *path = xasprintf("%s/last-console.log", logdir);
	if (vm->console_log.buf)
		write_file_atomic(path, vm->console_log.buf, vm->console_log.len);
	struct sbuf qerr = SBUF_INIT;
	if (vm->dir) {
		char *ep = xasprintf("%s/qemu.err", vm->dir);
		read_file(ep, &qerr);
		free(ep);
	}
	switch (o) {
	case LAB_PANIC: {
		const char *p = strstr(vm->console_log.buf, "Kernel panic - not syncing");
		error("guest kernel panic: %.*s", p ? (int)strcspn(p, "\r\n") : 0, p ? p : "");
		break;
	}
	case LAB_TIMEOUT:
		error("guest timeout: the command did not finish in time (accelerator slowdown x%.0f)",
		      vm->slowdown);
		break;
	case LAB_NO_OUTPUT:
		error("guest timeout: the agent did not answer within %.0f s of boot", BOOT_TIMEOUT_S * vm->slowdown);
		break;
	case LAB_LOST:
		error("guest lost: QEMU exited or closed the channel unexpectedly");
		break;
	case LAB_QEMU_FAILED:
		error("qemu failed before the guest was up%s%.*s", qerr.len ? ": " : "",
		      (int)strcspn(qerr.buf ? qerr.buf : "", "\n"), qerr.buf ? qerr.buf : "");
		break;
	case LAB_OK:
		break;
	}
	/* The last console lines usually say why. */
	if (vm->console_log.len && o != LAB_QEMU_FAILED) {
		const char *end = vm->console_log.buf + vm->console_log.len;
		const char *p = end;
		for (int lines = 0; p > vm->console_log.buf && lines < 12; p--)
			if (p[-1] == '\n')
				lines++;
		fprintf(stderr, "--- last console lines\n%.*s", (int)(end - p), p);
		if (end[-1] != '\n')
			fputc('\n', stderr);
	}
	fprintf(stderr, "console log: %s\n", path);
	if (!verbose)
		fprintf(stderr, "rerun with --verbose to see the QEMU command line\n");
	sbuf_free(&qerr);
	free(path);
	free(logdir);
	return lab_outcome_exit(o);
}

int lab_vm_interactive(const struct lab_vm_config *cfg)
{
	struct lab_vm vm;
	memset(&vm, 0, sizeof(vm));
	lab_vm_command(&vm, cfg, NULL);
	if (verbose)
		fprintf(stderr, "crashlab: qemu: %s\n", strvec_join_quoted(&vm.argv));
	pid_t pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid == 0) {
		execvp(vm.argv.v[0], vm.argv.v);
		fprintf(stderr, "crashlab: error: cannot run '%s': %s\n", vm.argv.v[0], strerror(errno));
		_exit(127);
	}
	signal(SIGINT, SIG_IGN);
	int st;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	strvec_free(&vm.argv);
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return EXIT_OK;
	return EXIT_GUEST;
}

int lab_overlay_create(const char *base, const char *overlay, struct sbuf *err)
{
	struct strvec av = STRVEC_INIT;
	struct sbuf out = SBUF_INIT;
	strvec_push(&av, "qemu-img");
	strvec_push(&av, "create");
	strvec_push(&av, "-q");
	strvec_push(&av, "-f");
	strvec_push(&av, "qcow2");
	strvec_push(&av, "-F");
	strvec_push(&av, "raw");
	strvec_push(&av, "-b");
	strvec_push(&av, base);
	strvec_push(&av, overlay);
	int rc = run_cmd(&av, &out, -1);
	if (rc)
		sbuf_addf(err, "cannot create overlay '%s': %.*s", overlay,
			  (int)strcspn(out.buf && *out.buf ? out.buf : "qemu-img failed (install qemu-utils)", "\n"),
			  out.buf && *out.buf ? out.buf : "qemu-img failed (install qemu-utils)");
	strvec_free(&av);
	sbuf_free(&out);
	return rc ? -1 : 0;
}

/* ---- accelerator choice ------------------------------------------------ */

static char *machine_key(void)
{
	struct hasher *h = hasher_new();
	struct utsname u;
	uname(&u);
	hasher_adds(h, u.nodename);
	hasher_adds(h, u.release);
	hasher_adds(h, u.version);
	hasher_adds(h, u.machine);
	struct strvec av = STRVEC_INIT;
	struct sbuf out = SBUF_INIT;
	strvec_push(&av, lab_qemu_binary());
	strvec_push(&av, "--version");
	run_cmd(&av, &out, -1);
	hasher_adds(h, out.buf ? out.buf : "");
	struct sbuf cpu = SBUF_INIT;
	if (read_file("/proc/cpuinfo", &cpu) == 0) {
		const char *m = strstr(cpu.buf, "model name");
		if (m)
			hasher_add(h, m, strcspn(m, "\n"));
	}
	char hex[65];
	hasher_done(h, hex);
	strvec_free(&av);
	sbuf_free(&out);
	sbuf_free(&cpu);
	return xasprintf("%.16s", hex);
}

static bool kvm_boots(const char *kernel, const char *initrd, char *why, size_t whylen)
{
	struct lab_vm_config cfg = { .kernel = kernel, .initrd = initrd, .accel = "kvm", .mem_mb = 512 };
	struct lab_vm vm;
	enum lab_outcome o = lab_vm_start(&vm, &cfg);
	bool ok = false;
	if (o == LAB_OK && now_s() - vm.t_start < KVM_PROBE_TIMEOUT_S) {
		char *argv[] = { "true", NULL };
		int st = -1;
		o = lab_vm_exec(&vm, argv, 1, 2, KVM_PROBE_TIMEOUT_S, &st);
		ok = o == LAB_OK && st == 0;
	}
	if (!ok)
		snprintf(why, whylen, "a test boot under KVM %s",
			 o == LAB_NO_OUTPUT ? "did not answer in time"
			 : o == LAB_QEMU_FAILED ? "failed to start"
			 : "did not complete");
	if (ok)
		lab_vm_stop(&vm);
	lab_vm_free(&vm);
	return ok;
}

static char *accel_cache_path(void)
{
	char *dir = cache_subdir("accel");
	char *key = machine_key();
	char *path = xasprintf("%s/%s", dir, key);
	free(dir);
	free(key);
	return path;
}

const char *lab_vm_accel_cached(struct sbuf *why)
{
	char *path = accel_cache_path();
	struct sbuf cached = SBUF_INIT;
	const char *res = NULL;
	if (read_file(path, &cached) == 0 && cached.len >= 3) {
		if (!strncmp(cached.buf, "kvm", 3))
			res = "kvm";
		else if (!strncmp(cached.buf, "tcg", 3))
			res = "tcg";
		if (res && why && cached.len > 4)
			sbuf_add(why, cached.buf + 4, strcspn(cached.buf + 4, "\n"));
	}
	sbuf_free(&cached);
	free(path);
	return res;
}

const char *lab_vm_accel(const char *requested, const char *kernel, const char *initrd)
{
	if (requested && !strcmp(requested, "auto"))
		requested = NULL;
	if (!requested) {
		/* probe below */
	} else if (!strcmp(requested, "tcg")) {
		return "tcg";
	} else if (!strcmp(requested, "kvm")) {
		int fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);
		if (fd < 0)
			die_code(EXIT_GUEST, "cannot open '/dev/kvm': %s; add yourself to the kvm group or use --accel tcg",
				 errno_advice(errno));
		close(fd);
		return "kvm";
	} else {
		die_code(EXIT_USAGE, "unknown accelerator '%s' (use auto, kvm or tcg)", requested);
	}

	char *path = accel_cache_path();
	struct sbuf cached = SBUF_INIT;
	const char *res;
	if (read_file(path, &cached) == 0 && (!strncmp(cached.buf, "kvm", 3) || !strncmp(cached.buf, "tcg", 3))) {
		res = !strncmp(cached.buf, "kvm", 3) ? "kvm" : "tcg";
		if (!strcmp(res, "tcg"))
			note("using TCG software emulation (%.*s; cached answer, delete '%s' to probe again)",
			     (int)strcspn(cached.buf + 4, "\n"), cached.buf + 4, path);
	} else {
		char why[256] = "";
		int fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);
		if (fd < 0) {
			snprintf(why, sizeof(why), "cannot open /dev/kvm: %s", errno_advice(errno));
			res = "tcg";
		} else {
			close(fd);
			note("probing KVM with a short test boot...");
			res = kvm_boots(kernel, initrd, why, sizeof(why)) ? "kvm" : "tcg";
		}
		char *line = xasprintf("%s %s\n", res, why);
		if (write_file_atomic(path, line, strlen(line)) < 0)
			warning("cannot cache the accelerator answer in '%s': %s", path, errno_advice(errno));
		free(line);
		if (!strcmp(res, "tcg"))
			note("KVM unusable here (%s); using TCG software emulation, which is slower", why);
	}
	sbuf_free(&cached);
	free(path);
	return res;
}
