/*
 * vm-libvirt.c - the guests of engine/vm.c as transient libvirt domains
 * (vm_config.libvirt: --backend libvirt [--connect URI]).
 *
 * Method. The domain XML says what vm_command's QEMU command line says:
 * direct kernel boot (<os><kernel><initrd><cmdline>, the same cmdline), one
 * vCPU, no network, no USB, no balloon, <on_reboot>destroy</on_reboot> for
 * -no-reboot (a panic reboots at once and the domain goes away). The serial
 * console is a 'pipe' chardev over two FIFOs in the guest's private folder,
 * which vm.c reads like the direct QEMU's stdout; the channel to the agent
 * is a virtio 'unix' channel bound to the same socket path the direct guest
 * uses. Disks libvirt can describe (file, format, readonly, cache) are
 * <disk> elements; a guest with any other disk (the recording's
 * blklogwrites node, a snapshot=on base, virtio-blk request-merging=off)
 * passes all its -drive/-device pairs, and a QMP monitor, through the QEMU
 * namespace (<qemu:commandline>), so the guest sees its disks in the same
 * order either way. QEMU runs with our uid and gid and nothing relabelled
 * (a static DAC label, relabel='no'; every other security model the host
 * has, AppArmor or SELinux, is 'none'): it reaches the kernel, images and
 * logs this process can, where the domain runs. The domain is started with
 * VIR_DOMAIN_START_AUTODESTROY, so it dies with our connection; whether it
 * is still running is virDomainGetState's answer, and the power cut is
 * virDomainDestroy.
 */
#include "engine/vm.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>

#include "host/intr.h"
#include "host/msg.h"
#include "host/sys.h"

/* The first PCI slot of the disks passed through; libvirt places its own
 * devices (the channel's virtio-serial controller, its disks) from slot 2. */
#define PASSTHROUGH_SLOT 0x10
#define MAX_DISKS (32 - PASSTHROUGH_SLOT)

static void quiet_errors(void *data, virErrorPtr err)
{
	(void)data;
	(void)err;
}

static void lv_why(struct vm *vm, const char *what)
{
	const char *m = virGetLastErrorMessage();
	snprintf(vm->why, sizeof(vm->why), "%s: %s", what, m && *m ? m : "unknown libvirt error");
}

static void xml_esc(struct sbuf *sb, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&': sbuf_adds(sb, "&amp;"); break;
		case '<': sbuf_adds(sb, "&lt;"); break;
		case '>': sbuf_adds(sb, "&gt;"); break;
		case '\'': sbuf_adds(sb, "&apos;"); break;
		case '"': sbuf_adds(sb, "&quot;"); break;
		default: sbuf_add(sb, s, 1);
		}
	}
}

static void qemu_arg(struct sbuf *sb, const char *arg)
{
	sbuf_adds(sb, "    <qemu:arg value='");
	xml_esc(sb, arg);
	sbuf_adds(sb, "'/>\n");
}

/* A plain drive spec (file=, format=, readonly=on, cache=MODE) as a <disk>
 * element for /dev/vd<letter>: true, or false when libvirt has no words for it. */
static bool disk_element(struct sbuf *sb, const char *spec, char letter)
{
	char *copy = xstrdup(spec), *save = NULL;
	const char *file = NULL, *format = "raw", *cache = NULL;
	bool ro = false, ok = true;
	for (char *kv = strtok_r(copy, ",", &save); kv && ok; kv = strtok_r(NULL, ",", &save)) {
		if (!strncmp(kv, "file=", 5))
			file = kv + 5;
		else if (!strncmp(kv, "format=", 7))
			format = kv + 7;
		else if (!strcmp(kv, "readonly=on"))
			ro = true;
		else if (!strncmp(kv, "cache=", 6))
			cache = kv + 6;
		else
			ok = false;
	}
	if (ok && file) {
		sbuf_addf(sb, "    <disk type='file' device='disk'>\n      <driver name='qemu' type='%s'%s%s%s/>\n",
			  format, cache ? " cache='" : "", cache ? cache : "", cache ? "'" : "");
		sbuf_adds(sb, "      <source file='");
		xml_esc(sb, file);
		sbuf_addf(sb, "'/>\n      <target dev='vd%c' bus='virtio'/>\n%s    </disk>\n", letter,
			  ro ? "      <readonly/>\n" : "");
	}
	free(copy);
	return ok && file;
}

/* QEMU with our uid and gid, nothing relabelled; the host's security
 * model besides DAC (AppArmor, SELinux), if any, off for the domain. (The
 * model is asked for, not read in the capabilities: building those takes
 * libvirt a second or two.) */
static void seclabels(virConnectPtr conn, struct sbuf *sb)
{
	sbuf_addf(sb, "  <seclabel type='static' model='dac' relabel='no'>\n"
		      "    <label>+%u:+%u</label>\n  </seclabel>\n",
		  (unsigned)getuid(), (unsigned)getgid());
	virSecurityModel m;
	memset(&m, 0, sizeof(m));
	if (virNodeGetSecurityModel(conn, &m) == 0 && m.model[0] && strcmp(m.model, "none") && strcmp(m.model, "dac"))
		sbuf_addf(sb, "  <seclabel type='none' model='%.*s'/>\n", (int)sizeof(m.model), m.model);
}

static void domain_xml(struct vm *vm, virConnectPtr conn, const struct vm_config *cfg, const char *sock,
		       const char *con, const char *name, const char *bind, struct sbuf *sb)
{
	bool kvm = !strcmp(cfg->accel, "kvm");
	sbuf_addf(sb, "<domain type='%s' xmlns:qemu='http://libvirt.org/schemas/domain/qemu/1.0'>\n"
		      "  <name>%s</name>\n  <memory unit='MiB'>%d</memory>\n  <vcpu>1</vcpu>\n"
		      "  <os>\n    <type arch='x86_64' machine='pc'>hvm</type>\n    <kernel>",
		  kvm ? "kvm" : "qemu", name, cfg->mem_mb > 0 ? cfg->mem_mb : 1024);
	xml_esc(sb, cfg->kernel);
	sbuf_adds(sb, "</kernel>\n    <initrd>");
	xml_esc(sb, cfg->initrd);
	sbuf_adds(sb, "</initrd>\n    <cmdline>");
	char *cmdline = vm_kernel_cmdline(cfg);
	xml_esc(sb, cmdline);
	free(cmdline);
	sbuf_adds(sb, "</cmdline>\n  </os>\n");
	if (kvm)
		sbuf_adds(sb, "  <cpu mode='host-passthrough'/>\n");
	sbuf_adds(sb, "  <on_poweroff>destroy</on_poweroff>\n  <on_reboot>destroy</on_reboot>\n"
		      "  <on_crash>destroy</on_crash>\n  <devices>\n");
	const char *emu = getenv("CRASHLAB_QEMU");
	if (emu && *emu == '/') {
		sbuf_adds(sb, "    <emulator>");
		xml_esc(sb, emu);
		sbuf_adds(sb, "</emulator>\n");
	}
	if (vm->tcp_host) {
		sbuf_addf(sb, "    <serial type='tcp'>\n      <source mode='bind' host='%s' service='%d'/>\n"
			      "      <protocol type='raw'/>\n      <target port='0'/>\n    </serial>\n",
			  bind, vm->con_port);
	} else {
		sbuf_adds(sb, "    <serial type='pipe'>\n      <source path='");
		xml_esc(sb, con);
		sbuf_adds(sb, "'/>\n      <target port='0'/>\n    </serial>\n");
	}
	if (sock && vm->tcp_host) {
		sbuf_addf(sb, "    <channel type='tcp'>\n      <source mode='bind' host='%s' service='%d'/>\n"
			      "      <protocol type='raw'/>\n      <target type='virtio' name='%s'/>\n    </channel>\n",
			  bind, vm->chan_port, PROTO_PORT);
	} else if (sock) {
		sbuf_adds(sb, "    <channel type='unix'>\n      <source mode='bind' path='");
		xml_esc(sb, sock);
		sbuf_addf(sb, "'/>\n      <target type='virtio' name='%s'/>\n    </channel>\n", PROTO_PORT);
	}
	/* the disks as elements when libvirt can say them all */
	struct sbuf disks = SBUF_INIT;
	bool elements = !cfg->blk_opts && !cfg->drive_opts;
	for (size_t i = 0; elements && i < cfg->drives.n; i++)
		elements = disk_element(&disks, cfg->drives.v[i], (char)('a' + i));
	if (elements && disks.len)
		sbuf_add(sb, disks.buf, disks.len);
	sbuf_free(&disks);
	sbuf_adds(sb, "    <controller type='usb' model='none'/>\n    <memballoon model='none'/>\n  </devices>\n");
	seclabels(conn, sb);
	struct strvec args = STRVEC_INIT;
	if (sock && cfg->qmp) {
		strvec_push(&args, "-qmp");
		if (vm->tcp_host)
			strvec_pushf(&args, "tcp:%s:%d,server=on,wait=off", bind, vm->qmp_port);
		else
			strvec_pushf(&args, "unix:%s/qmp.sock,server=on,wait=off", vm->dir);
	}
	for (size_t i = 0; !elements && i < cfg->drives.n; i++) {
		strvec_push(&args, "-drive");
		strvec_pushf(&args, "%s,if=none,id=crashlab-disk%zu%s%s", cfg->drives.v[i], i,
			     cfg->drive_opts ? "," : "", cfg->drive_opts ? cfg->drive_opts : "");
		strvec_push(&args, "-device");
		/* slots of their own above libvirt's, in order: /dev/vda, vdb, ... */
		strvec_pushf(&args, "virtio-blk-pci,drive=crashlab-disk%zu,addr=0x%zx%s%s", i, PASSTHROUGH_SLOT + i,
			     cfg->blk_opts ? "," : "", cfg->blk_opts ? cfg->blk_opts : "");
	}
	if (args.n) {
		sbuf_adds(sb, "  <qemu:commandline>\n");
		for (size_t i = 0; i < args.n; i++)
			qemu_arg(sb, args.v[i]);
		sbuf_adds(sb, "  </qemu:commandline>\n");
	}
	strvec_free(&args);
	sbuf_adds(sb, "</domain>\n");
}

/* The console's two FIFOs (QEMU's pipe chardev opens PATH.in and PATH.out);
 * we hold both ends of each, so reading never sees an end of file and a
 * write never blocks on a missing reader. */
static int console_fifos(struct vm *vm, const char *con, int *in_fd)
{
	char *in = xasprintf("%s.in", con), *out = xasprintf("%s.out", con);
	int r = -1;
	if (mkfifo(in, 0600) < 0 || mkfifo(out, 0600) < 0) {
		snprintf(vm->why, sizeof(vm->why), "cannot make the console FIFOs in '%s': %s", vm->dir, strerror(errno));
		goto out;
	}
	vm->console = open(out, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	*in_fd = open(in, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (vm->console < 0 || *in_fd < 0) {
		snprintf(vm->why, sizeof(vm->why), "cannot open the console FIFOs in '%s': %s", vm->dir, strerror(errno));
		goto out;
	}
	r = 0;
out:
	free(in);
	free(out);
	return r;
}

char *vm_libvirt_uri_host(const char *uri)
{
	const char *p = uri ? strstr(uri, "://") : NULL;
	if (!p)
		return NULL;
	p += 3;
	size_t n = strcspn(p, "/?");
	const char *at = memchr(p, '@', n);
	if (at) {
		n -= (size_t)(at + 1 - p);
		p = at + 1;
	}
	if (*p == '[') { /* [v6 address] */
		const char *close = memchr(p, ']', n);
		if (!close)
			return NULL;
		return xasprintf("%.*s", (int)(close - p - 1), p + 1);
	}
	n = strcspn(p, ":/?");
	if (n == 0 || (n == 9 && !strncmp(p, "localhost", 9)))
		return NULL;
	return xasprintf("%.*s", (int)n, p);
}

/* The console's TCP port, connected as soon as QEMU listens (it does
 * before the vCPUs start, but libvirt returns when they have). */
static int console_tcp(struct vm *vm)
{
	double deadline = now_s() + 10.0;
	while ((vm->console = vm_connect_tcp(vm->tcp_host, vm->con_port)) < 0 && now_s() < deadline)
		poll(NULL, 0, 20);
	if (vm->console < 0) {
		snprintf(vm->why, sizeof(vm->why), "cannot connect to the console at %s:%d: %s", vm->tcp_host,
			 vm->con_port, strerror(errno));
		return -1;
	}
	fcntl(vm->console, F_SETFL, fcntl(vm->console, F_GETFL) | O_NONBLOCK);
	return 0;
}

int vm_libvirt_create(struct vm *vm, const struct vm_config *cfg, const char *sock, int *con_in)
{
	static unsigned serial;
	virSetErrorFunc(NULL, quiet_errors);
	*con_in = -1;
	char *con = xasprintf("%s/console", vm->dir);
	/* unique on a host that guests from many machines share */
	char host[64] = "";
	gethostname(host, sizeof(host) - 1);
	host[strcspn(host, ".")] = '\0';
	for (char *c = host; *c; c++)
		if (!(*c >= 'a' && *c <= 'z') && !(*c >= 'A' && *c <= 'Z') && !(*c >= '0' && *c <= '9') && *c != '-')
			*c = '_';
	char *name = xasprintf("crashlab-%s%s%ld-%u", host, *host ? "-" : "", (long)getpid(), serial++);
	struct sbuf xml = SBUF_INIT;
	int r = -1;
	virConnectPtr conn = NULL;
	virDomainPtr dom = NULL;
	if (cfg->drives.n > MAX_DISKS) {
		snprintf(vm->why, sizeof(vm->why), "a libvirt guest takes at most %d disks, not %zu", MAX_DISKS,
			 cfg->drives.n);
		goto out;
	}
	double t_open = now_s();
	conn = virConnectOpen(cfg->connect);
	if (!conn) {
		lv_why(vm, "cannot connect to libvirt");
		goto out;
	}
	/* A remote libvirt's guest cannot share a unix socket or a FIFO with
	 * us: its console, channel and monitor are TCP ports of that host.
	 * (The tests reach this path on the local libvirt with
	 * CRASHLAB_TEST_LIBVIRT_TCP=1, over 127.0.0.1.) */
	char *uri = virConnectGetURI(conn);
	vm->tcp_host = vm_libvirt_uri_host(uri);
	free(uri);
	const char *bind = "0.0.0.0";
	if (!vm->tcp_host && getenv("CRASHLAB_TEST_LIBVIRT_TCP")) {
		vm->tcp_host = xstrdup("127.0.0.1");
		bind = "127.0.0.1";
	}
	if (!vm->tcp_host && console_fifos(vm, con, con_in) < 0)
		goto out;
	for (int attempt = 0; attempt < 4 && !dom; attempt++) {
		if (vm->tcp_host) {
			/* three ports at random; taken ones fail the start, and we try others */
			unsigned x = (unsigned)getpid() * 2654435761u ^ (unsigned)(now_s() * 1e6) ^ serial * 40503u;
			vm->con_port = 20000 + (int)(x % 13333) * 3;
			vm->chan_port = vm->con_port + 1;
			vm->qmp_port = vm->con_port + 2;
		}
		sbuf_reset(&xml);
		domain_xml(vm, conn, cfg, sock, con, name, bind, &xml);
		char *path = xasprintf("%s/domain.xml", vm->dir);
		write_file_atomic(path, xml.buf, xml.len);
		free(path);
		if (msg_verbose())
			fprintf(stderr, "crashlab: libvirt %s domain:\n%s", cfg->connect ? cfg->connect : "(default URI)",
				xml.buf);
		double t0 = now_s();
		dom = virDomainCreateXML(conn, xml.buf, VIR_DOMAIN_START_AUTODESTROY);
		if (dom && msg_verbose())
			fprintf(stderr, "crashlab: libvirt: connected and the XML made in %.2f s, domain %s created in %.2f s\n",
				t0 - t_open, name, now_s() - t0);
		if (!dom) {
			lv_why(vm, "libvirt cannot start the domain");
			const char *m = virGetLastErrorMessage();
			if (!vm->tcp_host || !m || !strstr(m, "Address already in use"))
				break;
		}
	}
	if (!dom)
		goto out;
	vm->lv_conn = conn;
	vm->lv_dom = dom;
	conn = NULL;
	if (vm->tcp_host && console_tcp(vm) < 0) {
		vm_libvirt_destroy(vm);
		goto out;
	}
	r = 0;
out:
	if (conn)
		virConnectClose(conn);
	sbuf_free(&xml);
	free(con);
	free(name);
	return r;
}

bool vm_libvirt_gone(struct vm *vm)
{
	if (!vm->lv_dom)
		return true;
	int state = 0, reason = 0;
	if (virDomainGetState(vm->lv_dom, &state, &reason, 0) < 0 || state == VIR_DOMAIN_SHUTOFF ||
	    state == VIR_DOMAIN_CRASHED) {
		/* a transient domain that shut off is undefined: no state at all */
		vm_libvirt_release(vm);
		return true;
	}
	/* The guest powered off and QEMU waits (libvirt runs it with
	 * -no-shutdown) for libvirt to take it down: that is a power-off
	 * already, and taking it down ourselves saves most of a second. */
	if (state == VIR_DOMAIN_SHUTDOWN || (state == VIR_DOMAIN_PAUSED && reason == VIR_DOMAIN_PAUSED_SHUTTING_DOWN)) {
		vm_libvirt_destroy(vm);
		return true;
	}
	return false;
}

void vm_libvirt_destroy(struct vm *vm)
{
	if (!vm->lv_dom)
		return;
	/* The power cut: the vCPUs stop now (QMP stop, as the pool's cuts;
	 * requests QEMU already has complete). Taking QEMU down takes libvirt
	 * a second or two, which nobody needs to wait for: closing the
	 * connection leaves it to libvirt (the domain autodestroys). */
	int state = 0, reason = 0;
	if (virDomainGetState(vm->lv_dom, &state, &reason, 0) == 0 && state == VIR_DOMAIN_RUNNING &&
	    virDomainSuspend(vm->lv_dom) < 0)
		virDomainDestroy(vm->lv_dom);
	vm_libvirt_release(vm);
}

void vm_libvirt_release(struct vm *vm)
{
	if (vm->lv_dom)
		virDomainFree(vm->lv_dom);
	if (vm->lv_conn)
		virConnectClose(vm->lv_conn);
	vm->lv_dom = vm->lv_conn = NULL;
}

/* Both ways between this terminal and the console FIFOs until the domain
 * is gone. */
int vm_libvirt_interactive(const struct vm_config *cfg)
{
	struct vm vm;
	memset(&vm, 0, sizeof(vm));
	vm.console = vm.chan = vm.qmp = -1;
	char tmpl[] = "/tmp/crashlab-vm.XXXXXX";
	if (!mkdtemp(tmpl)) {
		error("cannot create a temp dir in '/tmp': %s", errno_advice(errno));
		return EXIT_GUEST;
	}
	vm.dir = xstrdup(tmpl);
	int in = -1, rc = EXIT_OK;
	if (vm_libvirt_create(&vm, cfg, NULL, &in) < 0) {
		error("cannot start the guest: %s", vm.why);
		rc = EXIT_GUEST;
		goto out;
	}
	if (in < 0)
		in = dup(vm.console); /* a remote console's socket goes both ways */
	struct termios saved, raw;
	bool tty = isatty(0) && tcgetattr(0, &saved) == 0;
	if (tty) {
		raw = saved;
		cfmakeraw(&raw);
		tcsetattr(0, TCSANOW, &raw);
	}
	signal(SIGINT, SIG_IGN);
	bool stdin_open = true;
	double next_check = 0;
	for (;;) {
		struct pollfd p[2] = { { stdin_open ? 0 : -1, POLLIN, 0 }, { vm.console, POLLIN, 0 } };
		poll(p, 2, 200);
		char buf[4096];
		if (p[1].revents & (POLLIN | POLLHUP)) {
			ssize_t n = read(vm.console, buf, sizeof(buf));
			if (n > 0)
				write_all(1, buf, (size_t)n);
			else if (n == 0)
				break; /* a remote console closed: QEMU is gone */
		}
		if (p[0].revents & (POLLIN | POLLHUP)) {
			ssize_t n = read(0, buf, sizeof(buf));
			if (n > 0)
				write_all(in, buf, (size_t)n);
			else
				stdin_open = false;
		}
		if (now_s() >= next_check) {
			if (vm_libvirt_gone(&vm))
				break;
			next_check = now_s() + 0.2;
		}
	}
	/* what the console still holds */
	ssize_t n;
	char buf[4096];
	while ((n = read(vm.console, buf, sizeof(buf))) > 0)
		write_all(1, buf, (size_t)n);
	if (tty)
		tcsetattr(0, TCSANOW, &saved);
out:
	vm_libvirt_destroy(&vm);
	if (in >= 0)
		close(in);
	if (vm.console >= 0)
		close(vm.console);
	rm_rf(vm.dir);
	free(vm.dir);
	free(vm.tcp_host);
	return rc;
}
