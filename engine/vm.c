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
 * slowdown factor of the accelerator. A guest that lives across
 * recordings (vm_config.qmp) also gets a QMP monitor socket beside the
 * channel's, for its power cuts (stop, cont).
 */
#include "engine/vm.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "host/hash.h"
#include "host/intr.h"
#include "host/msg.h"
#include "host/sys.h"

#define BOOT_TIMEOUT_S 15.0      /* QEMU start -> agent hello, at KVM speed */
#define CMD_TIMEOUT_S 300.0      /* default for one command, at KVM speed */
#define STOP_TIMEOUT_S 10.0      /* shutdown request -> QEMU exit */
#define KVM_PROBE_TIMEOUT_S 12.0 /* a real short boot under KVM, wall seconds */
#define CONSOLE_KEEP (256 * 1024)
#define COLLECT_KEEP (1024 * 1024)   /* output kept of a command run with vm_run */
#define CONSOLE_READS 64             /* reads of the console per drain, so a flood cannot starve a wait */

static const char *const outcome_names[] = {
	[VM_OK] = "ok",
	[VM_PANIC] = "panic",
	[VM_TIMEOUT] = "timeout",
	[VM_NO_OUTPUT] = "no-output",
	[VM_LOST] = "lost-connection",
	[VM_QEMU_FAILED] = "qemu-failed",
	[VM_INTERRUPTED] = "interrupted",
};

const char *vm_outcome_name(enum vm_outcome o)
{
	return outcome_names[o];
}

int vm_outcome_exit(enum vm_outcome o)
{
	switch (o) {
	case VM_OK:
		return EXIT_OK;
	case VM_PANIC:
		return EXIT_PANIC;
	case VM_TIMEOUT:
	case VM_NO_OUTPUT:
		return EXIT_TIMEOUT;
	case VM_LOST:
	case VM_QEMU_FAILED:
		return EXIT_GUEST;
	case VM_INTERRUPTED:
		return intr_pending() ? intr_exit_code() : 130;
	}
	return EXIT_SOFTWARE;
}

const char *vm_qemu_binary(void)
{
	const char *env = getenv("CRASHLAB_QEMU");
	return env && *env ? env : "qemu-system-x86_64";
}

bool vm_qemu_has_sandbox(void)
{
	static int known = -1;
	if (known < 0) {
		struct strvec av = STRVEC_INIT;
		struct sbuf out = SBUF_INIT;
		strvec_push(&av, vm_qemu_binary());
		strvec_push(&av, "-help");
		int rc = run_cmd(&av, &out, -1);
		known = rc == 0 && strstr(out.buf, "-sandbox") != NULL;
		strvec_free(&av);
		sbuf_free(&out);
	}
	return known;
}

#define QMP_TIMEOUT_S 10.0        /* one QMP command, at KVM speed */

/* The guest kernel's command line. acpi=noirq: under TCG, ACPI's interrupt
 * routing evaluates AML for every PCI device, about 80 ms each - a guest
 * with 20 disks boots in 1.4-1.7 s with it off, 3.4-3.7 s with it on. ACPI
 * itself stays: its tables are how the kernel finds the HPET and the PM
 * timer, the references that calibrate the TSC. With acpi=off a busy host
 * made the calibration fail, and the guest fell back to the jiffies clock
 * (10 ms steps), which broke timings taken in the guest. IRQs then come
 * from the MP table; the guest powers off by rebooting into -no-reboot.
 *
 * norandmaps: no address-space randomisation in the guest. TCG keeps the
 * code it translated keyed by virtual address, so a program mapped at new
 * addresses is translated again from scratch at every exec: a checker
 * execs an fsck for every crash state, a dynamically linked one with its
 * libraries. Measured in a guest under TCG, ten runs each on a fresh 512
 * MiB image: e2fsck -fn 87 -> 40 ms, xfs_repair -n 132 -> 50, btrfs check
 * 67 -> 17, fsck.f2fs 69 -> 34. What a file system does does not depend on
 * where its checker's code sits; under KVM it changes nothing but keeps the
 * guests alike. */
char *vm_kernel_cmdline(const struct vm_config *cfg)
{
	return xasprintf("console=ttyS0 panic=-1 oops=panic reboot=t acpi=noirq norandmaps loglevel=4 crashlab.mode=%s%s%s",
			 cfg->shell ? "shell" : "agent", cfg->append ? " " : "", cfg->append ? cfg->append : "");
}

bool vm_running(const struct vm *vm)
{
	return vm->libvirt ? vm->lv_dom != NULL : vm->pid > 0;
}

void vm_command(struct vm *vm, const struct vm_config *cfg, const char *sock)
{
	struct strvec *a = &vm->argv;
	strvec_pushl(a, vm_qemu_binary(), "-nodefaults", "-no-reboot", "-display", "none", "-accel",
		cfg->accel, NULL);
	if (!strcmp(cfg->accel, "kvm")) {
		strvec_push(a, "-cpu");
		strvec_push(a, "host");
	}
	strvec_push(a, "-m");
	strvec_pushf(a, "%d", cfg->mem_mb > 0 ? cfg->mem_mb : 1024);
	strvec_pushl(a, "-smp", "1", "-kernel", cfg->kernel, "-initrd", cfg->initrd, "-append", NULL);
	char *cmdline = vm_kernel_cmdline(cfg);
	strvec_push(a, cmdline);
	free(cmdline);
	strvec_pushl(a, "-chardev", "stdio,id=con,signal=off", "-serial", "chardev:con", NULL);
	if (sock) {
		strvec_pushl(a, "-device", "virtio-serial-pci", "-chardev", NULL);
		strvec_pushf(a, "socket,id=chan,path=%s,server=on,wait=off", sock);
		strvec_push(a, "-device");
		strvec_pushf(a, "virtserialport,chardev=chan,name=%s", PROTO_PORT);
		if (cfg->qmp) {
			/* beside the channel's socket, in the same private folder */
			strvec_push(a, "-qmp");
			strvec_pushf(a, "unix:%.*sqmp.sock,server=on,wait=off", (int)(strrchr(sock, '/') + 1 - sock), sock);
		}
	}
	for (size_t i = 0; i < cfg->drives.n; i++) {
		strvec_push(a, "-drive");
		strvec_pushf(a, "%s,if=none,id=disk%zu%s%s", cfg->drives.v[i], i, cfg->drive_opts ? "," : "",
			     cfg->drive_opts ? cfg->drive_opts : "");
		strvec_push(a, "-device");
		strvec_pushf(a, "virtio-blk-pci,drive=disk%zu%s%s", i, cfg->blk_opts ? "," : "",
			     cfg->blk_opts ? cfg->blk_opts : "");
	}
	if (vm_qemu_has_sandbox()) {
		strvec_push(a, "-sandbox");
		strvec_push(a, "on");
	}
}

static void console_add(struct vm *vm, const char *buf, size_t n)
{
	sbuf_add(&vm->console_log, buf, n);
	if (vm->console_log.len > 2 * CONSOLE_KEEP) {
		size_t drop = vm->console_log.len - CONSOLE_KEEP;
		memmove(vm->console_log.buf, vm->console_log.buf + drop, vm->console_log.len - drop + 1);
		vm->console_log.len -= drop;
	}
}

static bool console_has_panic(struct vm *vm)
{
	return vm->console_log.buf && strstr(vm->console_log.buf, "Kernel panic - not syncing");
}

/* Read what the console has; returns false at EOF. */
static bool console_drain(struct vm *vm)
{
	if (vm->console < 0)
		return false;
	char buf[8192];
	for (int reads = 0; reads < CONSOLE_READS; reads++) {
		ssize_t n = read(vm->console, buf, sizeof(buf));
		if (n > 0) {
			console_add(vm, buf, (size_t)n);
			if (msg_verbose() > 1)
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
	return true;
}

/* Has QEMU exited? Reaps it and drains the console. */
static bool qemu_exited(struct vm *vm)
{
	if (vm->libvirt) {
		if (!vm_libvirt_gone(vm))
			return false;
		/* the console FIFO has no end of file: what it holds now is all */
		char buf[8192];
		ssize_t n;
		while (vm->console >= 0 && ((n = read(vm->console, buf, sizeof(buf))) > 0 || (n < 0 && errno == EINTR)))
			if (n > 0)
				console_add(vm, buf, (size_t)n);
		vm->exit_status = 0;
		return true;
	}
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

static enum vm_outcome exit_outcome(struct vm *vm, bool had_hello)
{
	if (console_has_panic(vm))
		return VM_PANIC;
	return had_hello ? VM_LOST : VM_QEMU_FAILED;
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

int vm_connect_tcp(const char *host, int port)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM }, *res = NULL;
	char serv[16];
	snprintf(serv, sizeof(serv), "%d", port);
	if (getaddrinfo(host, serv, &hints, &res) != 0) {
		errno = EHOSTUNREACH;
		return -1;
	}
	int fd = -1;
	for (struct addrinfo *ai = res; ai && fd < 0; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
		if (fd >= 0 && connect(fd, ai->ai_addr, ai->ai_addrlen) < 0) {
			int saved = errno;
			close(fd);
			fd = -1;
			errno = saved;
		}
	}
	freeaddrinfo(res);
	return fd;
}

/* The guest's channel (or monitor): its unix socket, or its TCP port on a
 * remote libvirt's host. */
static int connect_guest(struct vm *vm, const char *path, int port)
{
	return vm->tcp_host ? vm_connect_tcp(vm->tcp_host, port) : connect_sock(path);
}

static void sleep_ms(int ms)
{
	poll(NULL, 0, ms);
}

/* ---- the QMP monitor --------------------------------------------------- */

/* The next whole line from the monitor into line (without its end): 0, or
 * -1 with vm->why (the monitor closed, or nothing whole before deadline). */
static int qmp_line(struct vm *vm, double deadline, struct sbuf *line)
{
	for (;;) {
		char *nl = vm->qmp_in.buf ? memchr(vm->qmp_in.buf, '\n', vm->qmp_in.len) : NULL;
		if (nl) {
			size_t n = (size_t)(nl - vm->qmp_in.buf);
			sbuf_reset(line);
			sbuf_add(line, vm->qmp_in.buf, n && nl[-1] == '\r' ? n - 1 : n);
			memmove(vm->qmp_in.buf, nl + 1, vm->qmp_in.len - n - 1);
			vm->qmp_in.len -= n + 1;
			vm->qmp_in.buf[vm->qmp_in.len] = '\0';
			return 0;
		}
		double left = deadline - now_s();
		if (left <= 0) {
			snprintf(vm->why, sizeof(vm->why), "the QMP monitor did not answer in time");
			return -1;
		}
		struct pollfd p[2] = { { vm->qmp, POLLIN, 0 }, { vm->console, POLLIN, 0 } };
		poll(p, 2, left > 0.2 ? 200 : (int)(left * 1000) + 1);
		if (p[1].revents)
			console_drain(vm);
		if (!(p[0].revents & (POLLIN | POLLHUP | POLLERR)))
			continue;
		char buf[4096];
		ssize_t n = read(vm->qmp, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			snprintf(vm->why, sizeof(vm->why), "the QMP monitor closed");
			return -1;
		}
		sbuf_add(&vm->qmp_in, buf, (size_t)n);
	}
}

/* Send cmd and read up to its answer (events are skipped). */
static int qmp_command(struct vm *vm, const char *cmd, struct sbuf *reply)
{
	double deadline = now_s() + QMP_TIMEOUT_S * vm->slowdown;
	struct sbuf line = SBUF_INIT;
	int r = -1;
	if (vm->qmp < 0) {
		snprintf(vm->why, sizeof(vm->why), "the guest has no QMP monitor");
		goto out;
	}
	sigset_t pipe_set, old;
	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	sigprocmask(SIG_BLOCK, &pipe_set, &old);
	int w = write_all(vm->qmp, cmd, strlen(cmd)) < 0 || write_all(vm->qmp, "\n", 1) < 0 ? -1 : 0;
	int saved = errno;
	if (w < 0 && saved == EPIPE) {
		struct timespec zero = { 0, 0 };
		sigtimedwait(&pipe_set, NULL, &zero);
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (w < 0) {
		snprintf(vm->why, sizeof(vm->why), "cannot write to the QMP monitor: %s", strerror(saved));
		goto out;
	}
	while (qmp_line(vm, deadline, &line) == 0) {
		if (!strncmp(line.buf, "{\"return\"", 9)) {
			r = 0;
			break;
		}
		if (!strncmp(line.buf, "{\"error\"", 8)) {
			snprintf(vm->why, sizeof(vm->why), "QMP: %.200s", line.buf);
			break;
		}
	}
out:
	if (reply) {
		sbuf_reset(reply);
		sbuf_adds(reply, r == 0 ? line.buf : vm->why);
	}
	sbuf_free(&line);
	return r;
}

/* Connect to the monitor QEMU made beside the channel, read its greeting,
 * leave capabilities negotiation. 0, or -1 with vm->why. */
static int qmp_open(struct vm *vm)
{
	char *path = xasprintf("%s/qmp.sock", vm->dir);
	double deadline = now_s() + QMP_TIMEOUT_S * vm->slowdown;
	while ((vm->qmp = connect_guest(vm, path, vm->qmp_port)) < 0 && now_s() < deadline)
		sleep_ms(5);
	free(path);
	if (vm->qmp < 0) {
		snprintf(vm->why, sizeof(vm->why), "cannot connect to the QMP monitor: %s", strerror(errno));
		return -1;
	}
	struct sbuf line = SBUF_INIT;
	int r = qmp_line(vm, deadline, &line);
	if (r == 0 && strncmp(line.buf, "{\"QMP\"", 6)) {
		snprintf(vm->why, sizeof(vm->why), "the QMP monitor greeted with '%.100s'", line.buf);
		r = -1;
	}
	sbuf_free(&line);
	if (r == 0)
		r = qmp_command(vm, "{\"execute\":\"qmp_capabilities\"}", NULL);
	return r;
}

int vm_qmp(struct vm *vm, const char *cmd, struct sbuf *reply)
{
	return qmp_command(vm, cmd, reply);
}

enum vm_outcome vm_start(struct vm *vm, const struct vm_config *cfg)
{
	memset(vm, 0, sizeof(*vm));
	vm->chan = vm->console = vm->qmp = -1;
	vm->exit_status = -1;
	vm->next_seq = 1;
	vm->slowdown = !strcmp(cfg->accel, "kvm") ? 1.0 : VM_TCG_SLOWDOWN;
	/* Test hook: CRASHLAB_TEST_SLOWDOWN=F replaces the factor, so tests of a
	 * guest that never answers reach every deadline in seconds. */
	const char *test_slowdown = getenv("CRASHLAB_TEST_SLOWDOWN");
	double f = test_slowdown ? atof(test_slowdown) : 0;
	if (f > 0 && f <= 100)
		vm->slowdown = f;
	char tmpl[] = "/tmp/crashlab-vm.XXXXXX";
	if (!mkdtemp(tmpl)) {
		snprintf(vm->why, sizeof(vm->why), "cannot create a temp dir in '/tmp': %s", errno_advice(errno));
		return VM_QEMU_FAILED;
	}
	vm->dir = xstrdup(tmpl);
	char *sock = xasprintf("%s/chan.sock", vm->dir);
	char *errlog = xasprintf("%s/qemu.err", vm->dir);
	vm_command(vm, cfg, sock);
	if (msg_verbose() && !cfg->libvirt) {
		char *line = strvec_join_quoted(&vm->argv);
		fprintf(stderr, "crashlab: qemu: %s\n", line);
		free(line);
	}
	int pfd[2] = { -1, -1 };
	pid_t pid = -1;
	vm->t_start = now_s();
	vm->libvirt = cfg->libvirt;
	if (cfg->libvirt) {
		int con_in = -1;
		int r = vm_libvirt_create(vm, cfg, sock, &con_in);
		if (con_in >= 0)
			close(con_in); /* QEMU holds its own ends */
		if (r < 0) {
			free(sock);
			free(errlog);
			return VM_QEMU_FAILED;
		}
		goto started;
	}
	pid_t parent = getpid();
	if (pipe2(pfd, O_CLOEXEC) < 0 || (pid = fork()) < 0) {
		snprintf(vm->why, sizeof(vm->why), "cannot start QEMU: %s", strerror(errno));
		if (pfd[0] >= 0) {
			close(pfd[0]);
			close(pfd[1]);
		}
		free(sock);
		free(errlog);
		return VM_QEMU_FAILED;
	}
	if (pid == 0) {
		int nul = open("/dev/null", O_RDONLY);
		int err = open(errlog, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		dup2(nul, 0);
		dup2(pfd[1], 1);
		if (err >= 0)
			dup2(err, 2);
		/* Its own process group, so a Ctrl-C reaches only crashlab, which
		 * decides; and killed with us, however we die. */
		setpgid(0, 0);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(127);
		execvp(vm->argv.v[0], vm->argv.v);
		fprintf(stderr, "cannot run '%s': %s\n", vm->argv.v[0], strerror(errno));
		_exit(127);
	}
	close(pfd[1]);
	vm->pid = pid;
	vm->console = pfd[0];
	fcntl(vm->console, F_SETFL, fcntl(vm->console, F_GETFL) | O_NONBLOCK);
started:;
	double deadline = vm->t_start + BOOT_TIMEOUT_S * vm->slowdown;
	enum vm_outcome o = VM_NO_OUTPUT;
	while (now_s() < deadline) {
		if (intr_pending()) {
			vm_kill(vm);
			o = VM_INTERRUPTED;
			goto out;
		}
		if (qemu_exited(vm)) {
			o = exit_outcome(vm, false);
			goto out;
		}
		console_drain(vm);
		if (vm->chan < 0) {
			vm->chan = connect_guest(vm, sock, vm->chan_port);
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
				if (vm->libvirt)
					vm_libvirt_release(vm); /* see vm_stop */
				sleep_ms(20);
				continue;
			}
			proto_feed(&vm->rd, buf, (size_t)n);
			struct proto_msg m;
			int k;
			while ((k = proto_next(&vm->rd, &m)) == 1 && m.type != PROTO_MSG_HELLO)
				;
			if (k < 0) {
				snprintf(vm->why, sizeof(vm->why), "guest channel: %s", vm->rd.err);
				o = VM_LOST;
				goto out;
			}
			if (k == 1) {
				vm->t_ready = now_s();
				char *s = xmalloc(m.len + 1);
				memcpy(s, m.data, m.len);
				s[m.len] = '\0';
				char *k2 = strstr(s, "kernel=");
				if (k2)
					snprintf(vm->kernel_release, sizeof(vm->kernel_release), "%.*s",
						 (int)strcspn(k2 + 7, "\n"), k2 + 7);
				free(s);
				o = VM_OK;
				goto out;
			}
		}
	}
	if (console_has_panic(vm))
		o = VM_PANIC;
out:
	if (o == VM_OK && cfg->qmp && qmp_open(vm) < 0)
		o = VM_QEMU_FAILED;
	free(sock);
	free(errlog);
	return o;
}

struct sink {
	int out_fd, err_fd;
	struct sbuf *collect;
};

/* proto_send to a guest that may have died: the write then fails with
 * EPIPE instead of the SIGPIPE killing crashlab (the live lab goes on
 * when one of its guests dies; a run reports the guest's outcome). */
static int send_frame(int fd, uint8_t type, uint16_t flags, uint32_t seq, const void *data, uint32_t len)
{
	sigset_t pipe_set, old;
	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	sigprocmask(SIG_BLOCK, &pipe_set, &old);
	int r = proto_send(fd, type, flags, seq, data, len);
	int saved = errno;
	if (r < 0 && saved == EPIPE) {
		struct timespec zero = { 0, 0 };
		sigtimedwait(&pipe_set, NULL, &zero); /* the SIGPIPE that write raised */
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	errno = saved;
	return r;
}

/*
 * Send one request and wait for its answer. OUT frames are streamed to the
 * sink; the final frame (EXIT, RESULT, STATE or ERROR) is returned in
 * *reply_type with its payload in reply (if non-NULL).
 */
static enum vm_outcome request(struct vm *vm, uint8_t type, uint16_t flags, uint32_t seq,
				const void *payload, uint32_t len, struct sink *sink, double timeout_s,
				uint8_t *reply_type, struct sbuf *reply)
{
	if (vm->chan < 0 || send_frame(vm->chan, type, flags, seq, payload, len) < 0) {
		qemu_exited(vm);
		return exit_outcome(vm, true);
	}
	double deadline = now_s() + (timeout_s > 0 ? timeout_s : CMD_TIMEOUT_S * vm->slowdown);
	for (;;) {
		if (intr_pending()) {
			vm_kill(vm);
			return VM_INTERRUPTED;
		}
		double left = deadline - now_s();
		if (left <= 0)
			return console_has_panic(vm) ? VM_PANIC : VM_TIMEOUT;
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
			if (vm->libvirt)
				vm_libvirt_release(vm); /* see vm_stop */
			for (int i = 0; i < 200 && !qemu_exited(vm); i++)
				sleep_ms(10);
			return exit_outcome(vm, true);
		}
		proto_feed(&vm->rd, buf, (size_t)n);
		struct proto_msg m;
		int k;
		while ((k = proto_next(&vm->rd, &m)) == 1) {
			if (m.seq != seq)
				continue;
			if (m.type == PROTO_MSG_OUT) {
				if (sink && sink->collect) {
					size_t room = COLLECT_KEEP - (sink->collect->len < COLLECT_KEEP ? sink->collect->len : COLLECT_KEEP);
					sbuf_add(sink->collect, m.data, m.len < room ? m.len : room);
				} else if (sink)
					write_all(m.flags == 2 ? sink->err_fd : sink->out_fd, m.data, m.len);
				continue;
			}
			if (m.type == PROTO_MSG_EXIT || m.type == PROTO_MSG_RESULT || m.type == PROTO_MSG_STATE ||
			    m.type == PROTO_MSG_ERROR) {
				*reply_type = m.type;
				if (reply) {
					sbuf_reset(reply);
					sbuf_add(reply, m.data, m.len);
				}
				return VM_OK;
			}
		}
		if (k < 0) {
			snprintf(vm->why, sizeof(vm->why), "guest channel: %s", vm->rd.err);
			return VM_LOST;
		}
	}
}

static enum vm_outcome exec_common(struct vm *vm, char *const *argv, struct sink *sink,
				    double timeout_s, int *status)
{
	uint32_t len;
	unsigned char *payload = proto_pack_argv(argv, &len);
	if (!payload)
		BUG("out of memory");
	uint8_t type = 0;
	struct sbuf reply = SBUF_INIT;
	enum vm_outcome o = request(vm, PROTO_MSG_EXEC, 0, vm->next_seq++, payload, len, sink, timeout_s,
				     &type, &reply);
	free(payload);
	if (o == VM_OK && type == PROTO_MSG_EXIT && reply.len == 4) {
		const unsigned char *d = (const unsigned char *)reply.buf;
		uint32_t st = d[0] | d[1] << 8 | d[2] << 16 | (uint32_t)d[3] << 24;
		*status = (int)st;
		/* an exit code, or 128 + a signal */
		if (st > 255) {
			snprintf(vm->why, sizeof(vm->why), "guest channel: exit status %u out of range", st);
			o = VM_LOST;
		}
	} else if (o == VM_OK && type == PROTO_MSG_ERROR) {
		/* the agent could not run the command: said where its output goes */
		if (sink->collect)
			sbuf_add(sink->collect, reply.buf ? reply.buf : "", reply.len);
		else
			error("guest: %.*s", (int)reply.len, reply.buf ? reply.buf : "");
		*status = 127;
	} else if (o == VM_OK) {
		snprintf(vm->why, sizeof(vm->why), "guest channel: a reply of type %u (%u bytes) to a command", type,
			 (unsigned)reply.len);
		o = VM_LOST;
	}
	sbuf_free(&reply);
	return o;
}

enum vm_outcome vm_request(struct vm *vm, uint8_t type, uint16_t flags, uint32_t seq,
				const void *payload, uint32_t len, double timeout_s, uint8_t *reply_type,
				struct sbuf *reply)
{
	return request(vm, type, flags, seq, payload, len, NULL, timeout_s, reply_type, reply);
}

enum vm_outcome vm_send(struct vm *vm, uint8_t type, uint16_t flags, uint32_t seq, const void *payload,
			uint32_t len, double timeout_s)
{
	if (intr_pending()) {
		vm_kill(vm);
		return VM_INTERRUPTED;
	}
	if (vm->chan < 0) {
		qemu_exited(vm);
		return exit_outcome(vm, true);
	}
	/* a guest that stopped reading must not block us for ever */
	double t = timeout_s > 0 ? timeout_s : CMD_TIMEOUT_S * vm->slowdown;
	struct timeval tv = { (time_t)t, (suseconds_t)((t - (double)(time_t)t) * 1e6) };
	setsockopt(vm->chan, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	int r = send_frame(vm->chan, type, flags, seq, payload, len);
	int saved = errno;
	struct timeval none = { 0, 0 };
	setsockopt(vm->chan, SOL_SOCKET, SO_SNDTIMEO, &none, sizeof(none));
	if (r == 0)
		return VM_OK;
	if (saved == EAGAIN || saved == EWOULDBLOCK)
		return console_has_panic(vm) ? VM_PANIC : VM_TIMEOUT;
	qemu_exited(vm);
	return exit_outcome(vm, true);
}

enum vm_outcome vm_exec(struct vm *vm, char *const *argv, int out_fd, int err_fd,
			     double timeout_s, int *status)
{
	struct sink s = { out_fd, err_fd, NULL };
	return exec_common(vm, argv, &s, timeout_s, status);
}

enum vm_outcome vm_run(struct vm *vm, char *const *argv, struct sbuf *out,
			    double timeout_s, int *status)
{
	struct sink s = { -1, -1, out };
	if (!out->buf)
		sbuf_add(out, "", 0);
	return exec_common(vm, argv, &s, timeout_s, status);
}

void vm_kill(struct vm *vm)
{
	if (vm->libvirt) {
		vm_libvirt_destroy(vm);
		return;
	}
	if (vm->pid > 0) {
		kill(vm->pid, SIGKILL);
		int st;
		waitpid(vm->pid, &st, 0);
		vm->exit_status = st;
		vm->pid = 0;
	}
}

void vm_stop(struct vm *vm)
{
	if (!vm_running(vm))
		return;
	if (vm->chan >= 0)
		send_frame(vm->chan, PROTO_MSG_SHUTDOWN, 0, 0, NULL, 0);
	double t0 = now_s(), deadline = t0 + STOP_TIMEOUT_S * vm->slowdown;
	while (now_s() < deadline && !intr_pending()) {
		console_drain(vm);
		/* A libvirt guest: libvirt takes the domain down once it powered
		 * off, and asking it the domain's state meanwhile waits until it
		 * is done with QEMU's process (seconds where the process is reaped
		 * slowly); the channel closing says QEMU has exited. */
		if (vm->libvirt && vm->chan >= 0) {
			struct pollfd p = { vm->chan, POLLIN, 0 };
			char buf[4096];
			if (poll(&p, 1, 100) > 0 && read(vm->chan, buf, sizeof(buf)) <= 0) {
				close(vm->chan);
				vm->chan = -1;
				vm_libvirt_release(vm); /* the domain autodestroys, if it is not gone already */
			}
		}
		if (qemu_exited(vm)) {
			if (msg_verbose())
				fprintf(stderr, "crashlab: the guest%s shut off %.2f s after the power-off request\n",
					vm->libvirt ? " (libvirt domain)" : "", now_s() - t0);
			return;
		}
		sleep_ms(10);
	}
	vm_kill(vm);
}

void vm_free(struct vm *vm)
{
	vm_kill(vm);
	if (vm->chan >= 0)
		close(vm->chan);
	if (vm->console >= 0)
		close(vm->console);
	if (vm->qmp >= 0)
		close(vm->qmp);
	vm->chan = vm->console = vm->qmp = -1;
	sbuf_free(&vm->qmp_in);
	if (vm->dir) {
		rm_rf(vm->dir);
		free(vm->dir);
		vm->dir = NULL;
	}
	strvec_free(&vm->argv);
	free(vm->tcp_host);
	vm->tcp_host = NULL;
	sbuf_free(&vm->console_log);
	proto_reader_free(&vm->rd);
}

void vm_describe(struct vm *vm, enum vm_outcome o, char *buf, size_t n)
{
	const char *p = vm->console_log.buf ? strstr(vm->console_log.buf, "Kernel panic - not syncing") : NULL;
	switch (o) {
	case VM_PANIC:
		snprintf(buf, n, "guest kernel panic: %.*s", p ? (int)strcspn(p, "\r\n") : 0, p ? p : "");
		break;
	case VM_TIMEOUT:
	case VM_NO_OUTPUT:
		snprintf(buf, n, "the guest did not answer in time");
		break;
	default:
		snprintf(buf, n, "the guest was lost (%s)", vm_outcome_name(o));
		break;
	}
}

int vm_save_console(struct vm *vm, const char *path)
{
	return write_file_atomic(path, vm->console_log.buf ? vm->console_log.buf : "", vm->console_log.len);
}

int vm_failure(struct vm *vm, enum vm_outcome o, struct errbuf *e)
{
	if (o == VM_OK)
		return EXIT_OK;
	struct sbuf msg = SBUF_INIT, qerr = SBUF_INIT;
	if (vm->dir) {
		char *ep = xasprintf("%s/qemu.err", vm->dir);
		read_file(ep, &qerr);
		free(ep);
	}
	switch (o) {
	case VM_PANIC: {
		const char *p = vm->console_log.buf ? strstr(vm->console_log.buf, "Kernel panic - not syncing") : NULL;
		sbuf_addf(&msg, "guest kernel panic: %.*s", p ? (int)strcspn(p, "\r\n") : 0, p ? p : "");
		break;
	}
	case VM_TIMEOUT:
		sbuf_addf(&msg, "guest timeout: the command did not finish in time (accelerator slowdown x%g)",
			  vm->slowdown);
		break;
	case VM_NO_OUTPUT:
		sbuf_addf(&msg, "guest timeout: the agent did not answer within %.0f s of boot", BOOT_TIMEOUT_S * vm->slowdown);
		break;
	case VM_LOST:
		sbuf_addf(&msg, "guest lost: %s", vm->why[0] ? vm->why : "QEMU exited or closed the channel unexpectedly");
		break;
	case VM_QEMU_FAILED:
		if (vm->why[0])
			sbuf_addf(&msg, "qemu failed before the guest was up: %s", vm->why);
		else
			sbuf_addf(&msg, "qemu failed before the guest was up%s%.*s", qerr.len ? ": " : "",
				  (int)strcspn(qerr.buf ? qerr.buf : "", "\n"), qerr.buf ? qerr.buf : "");
		break;
	case VM_INTERRUPTED:
		sbuf_addf(&msg, "interrupted (%s): the guest was stopped", strsignal(intr_pending() ? intr_pending() : SIGINT));
		break;
	case VM_OK:
		break;
	}
	/* Under KVM, a QEMU that fails to start the guest or a guest that never
	 * answers usually means KVM does not work on this host. */
	if (vm->slowdown == 1.0 && (o == VM_QEMU_FAILED || o == VM_NO_OUTPUT))
		sbuf_adds(&msg, "\nthe guest ran under KVM (--accel kvm), which does not seem to work on this host "
				"(nested virtualisation, a CPU feature the hypervisor hides): use --accel auto, which "
				"probes KVM once and falls back to TCG, or --accel tcg; 'crashlab doctor' says what it found");
	/* The last console lines usually say why. */
	if (vm->console_log.len && o != VM_QEMU_FAILED) {
		const char *end = vm->console_log.buf + vm->console_log.len;
		const char *p = end;
		for (int lines = 0; p > vm->console_log.buf && lines < 12; p--)
			if (p[-1] == '\n')
				lines++;
		sbuf_addf(&msg, "\n--- last console lines\n%.*s", (int)(end - p), p);
		if (end[-1] == '\n')
			msg.buf[--msg.len] = '\0';
	}
	struct errbuf ignore;
	char *logdir = cache_subdir("logs", &ignore);
	if (logdir) {
		char *path = xasprintf("%s/last-console.log", logdir);
		if (vm->console_log.buf && write_file_atomic(path, vm->console_log.buf, vm->console_log.len) == 0)
			sbuf_addf(&msg, "\nconsole log: %s", path);
		free(path);
		free(logdir);
	}
	if (!msg_verbose())
		sbuf_adds(&msg, vm->libvirt ? "\nrerun with --verbose to see the libvirt domain XML"
					     : "\nrerun with --verbose to see the QEMU command line");
	errbuf_set(e, vm_outcome_exit(o), "%s", msg.buf);
	sbuf_free(&msg);
	sbuf_free(&qerr);
	return vm_outcome_exit(o);
}

int vm_interactive(const struct vm_config *cfg)
{
	if (cfg->libvirt)
		return vm_libvirt_interactive(cfg);
	struct vm vm;
	memset(&vm, 0, sizeof(vm));
	vm_command(&vm, cfg, NULL);
	if (msg_verbose()) {
		char *line = strvec_join_quoted(&vm.argv);
		fprintf(stderr, "crashlab: qemu: %s\n", line);
		free(line);
	}
	pid_t pid = fork();
	if (pid < 0) {
		error("cannot start QEMU: %s", strerror(errno));
		strvec_free(&vm.argv);
		return EXIT_GUEST;
	}
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

int vm_overlay_create(const char *base, const char *overlay, struct errbuf *e)
{
	struct strvec av = STRVEC_INIT;
	struct sbuf out = SBUF_INIT;
	strvec_pushl(&av, "qemu-img", "create", "-q", "-f", "qcow2", "-F", "raw", "-b", base, overlay, NULL);
	int rc = run_cmd(&av, &out, -1);
	if (rc)
		errbuf_set(e, EXIT_GUEST, "cannot create overlay '%s': %.*s", overlay,
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
	strvec_push(&av, vm_qemu_binary());
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
	struct vm_config cfg = { .kernel = kernel, .initrd = initrd, .accel = "kvm", .mem_mb = 512 };
	struct vm vm;
	enum vm_outcome o = vm_start(&vm, &cfg);
	bool ok = false;
	if (o == VM_OK && now_s() - vm.t_start < KVM_PROBE_TIMEOUT_S) {
		char *argv[] = { "true", NULL };
		int st = -1;
		o = vm_exec(&vm, argv, 1, 2, KVM_PROBE_TIMEOUT_S, &st);
		ok = o == VM_OK && st == 0;
	}
	if (!ok)
		snprintf(why, whylen, "a test boot under KVM %s",
			 o == VM_NO_OUTPUT ? "did not answer in time"
			 : o == VM_QEMU_FAILED ? "failed to start"
			 : "did not complete");
	if (ok)
		vm_stop(&vm);
	vm_free(&vm);
	return ok;
}

/* Where this machine's answer is kept, or NULL when the cache cannot be made. */
static char *accel_cache_path(void)
{
	struct errbuf ignore;
	char *dir = cache_subdir("accel", &ignore);
	if (!dir)
		return NULL;
	char *key = machine_key();
	char *path = xasprintf("%s/%s", dir, key);
	free(dir);
	free(key);
	return path;
}

const char *vm_accel_cached(struct sbuf *why)
{
	char *path = accel_cache_path();
	struct sbuf cached = SBUF_INIT;
	const char *res = NULL;
	if (path && read_file(path, &cached) == 0 && cached.len >= 3) {
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

const char *vm_accel(const char *requested, const char *kernel, const char *initrd, struct errbuf *e)
{
	if (requested && !strcmp(requested, "auto"))
		requested = NULL;
	if (!requested) {
		/* probe below */
	} else if (!strcmp(requested, "tcg")) {
		return "tcg";
	} else if (!strcmp(requested, "kvm")) {
		int fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);
		if (fd < 0) {
			errbuf_set(e, EXIT_GUEST, "cannot open '/dev/kvm': %s; add yourself to the kvm group or use --accel tcg",
				   errno_advice(errno));
			return NULL;
		}
		close(fd);
		return "kvm";
	} else {
		errbuf_set(e, EXIT_USAGE, "unknown accelerator '%s' (use auto, kvm or tcg)", requested);
		return NULL;
	}

	char *path = accel_cache_path();
	struct sbuf cached = SBUF_INIT;
	const char *res;
	if (path && read_file(path, &cached) == 0 && (!strncmp(cached.buf, "kvm", 3) || !strncmp(cached.buf, "tcg", 3))) {
		/* Said once, when the probe ran; 'crashlab doctor' repeats it. */
		res = !strncmp(cached.buf, "kvm", 3) ? "kvm" : "tcg";
		if (!strcmp(res, "tcg") && msg_verbose())
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
		if (path && write_file_atomic(path, line, strlen(line)) < 0)
			warning("cannot cache the accelerator answer in '%s': %s", path, errno_advice(errno));
		free(line);
		if (!strcmp(res, "tcg"))
			note("KVM unusable here (%s); using TCG software emulation, which is slower", why);
	}
	sbuf_free(&cached);
	free(path);
	return res;
}
