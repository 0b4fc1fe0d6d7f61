/*
 * agent.c - the in-guest agent: PID 1 of every crashlab guest.
 *
 * Method. The kernel starts us from the initramfs with /dev/console as
 * stdio. We mount the pseudo file systems, read our mode from the kernel
 * command line (crashlab.mode=agent|shell) and then either
 *   - shell: run busybox sh on the serial line as a session leader with a
 *     controlling tty, and power off when it exits; or
 *   - agent: open the virtio-serial port named "crashlab.0", say HELLO, and
 *     serve requests: EXEC runs a program with its stdout/stderr streamed
 *     back in OUT frames and its status in an EXIT frame; SESSION and OP run
 *     a workload (ops.c); CHECK checks a crash state (checker.c) against the
 *     log disk, or against the last log sent in LOG pieces (kept in tmpfs);
 *     SHUTDOWN syncs and powers off. The host never waits on us without a timeout, so a bug
 *     here shows up as a guest timeout, not a hang.
 * Powering off is reboot(RB_AUTOBOOT): QEMU runs with -no-reboot and exits.
 * As PID 1 we reap every orphan.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/blkpg.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/klog.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "core/proto.h"
#include "images/agent/agent.h"

#define AGENT_VERSION "1"

static void logmsg(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "crashlab-agent: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
}

static _Noreturn void power_off(void)
{
	sync();
	reboot(RB_AUTOBOOT);
	/* Not reached unless reboot failed; PID 1 must not exit. */
	for (;;)
		pause();
}

static void mount_pseudo(void)
{
	mkdir("/proc", 0755);
	mkdir("/sys", 0755);
	mkdir("/dev", 0755);
	mkdir("/tmp", 01777);
	mkdir("/run", 0755);
	mkdir("/mnt", 0755);
	if (mount("proc", "/proc", "proc", 0, NULL) < 0)
		logmsg("mount /proc: %s", strerror(errno));
	if (mount("sysfs", "/sys", "sysfs", 0, NULL) < 0)
		logmsg("mount /sys: %s", strerror(errno));
	if (mount("devtmpfs", "/dev", "devtmpfs", 0, NULL) < 0)
		logmsg("mount /dev: %s", strerror(errno));
	mount("tmpfs", "/tmp", "tmpfs", 0, "mode=1777");
	mount("tmpfs", "/run", "tmpfs", 0, "mode=0755");
	mkdir("/dev/pts", 0755);
	mount("devpts", "/dev/pts", "devpts", 0, NULL);
	setenv("PATH", "/sbin:/usr/sbin:/bin:/usr/bin", 1);
	setenv("HOME", "/root", 1);
	setenv("TERM", "linux", 0);
}

static char *cmdline_value(const char *key)
{
	static char buf[4096];
	int fd = open("/proc/cmdline", O_RDONLY);
	if (fd < 0)
		return NULL;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return NULL;
	buf[n] = '\0';
	size_t klen = strlen(key);
	for (char *tok = strtok(buf, " \n"); tok; tok = strtok(NULL, " \n"))
		if (!strncmp(tok, key, klen) && tok[klen] == '=')
			return tok + klen + 1;
	return NULL;
}

static void reap_all(void)
{
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
}

static _Noreturn void run_shell(void)
{
	pid_t pid = fork();
	if (pid == 0) {
		setsid();
		int fd = open("/dev/ttyS0", O_RDWR);
		if (fd >= 0) {
			ioctl(fd, TIOCSCTTY, 1);
			dup2(fd, 0);
			dup2(fd, 1);
			dup2(fd, 2);
			if (fd > 2)
				close(fd);
		}
		printf("crashlab guest shell; 'exit' powers the guest off\n");
		fflush(stdout);
		execl("/bin/sh", "sh", "-l", (char *)NULL);
		_exit(127);
	}
	for (;;) {
		int st;
		pid_t w = wait(&st);
		if (w == pid || (w < 0 && errno == ECHILD))
			break;
	}
	power_off();
}

/* Find /dev/vportNpM whose name is crashlab.0; the port may appear late. */
static int open_port(void)
{
	for (int tries = 0; tries < 500; tries++) {
		DIR *d = opendir("/sys/class/virtio-ports");
		struct dirent *de;
		while (d && (de = readdir(d))) {
			if (de->d_name[0] == '.')
				continue;
			char path[300], name[64] = "";
			snprintf(path, sizeof(path), "/sys/class/virtio-ports/%s/name", de->d_name);
			int fd = open(path, O_RDONLY);
			if (fd < 0)
				continue;
			ssize_t n = read(fd, name, sizeof(name) - 1);
			close(fd);
			if (n <= 0)
				continue;
			name[n] = '\0';
			name[strcspn(name, "\n")] = '\0';
			if (strcmp(name, PROTO_PORT))
				continue;
			snprintf(path, sizeof(path), "/dev/%s", de->d_name);
			closedir(d);
			int pfd = open(path, O_RDWR | O_CLOEXEC);
			if (pfd < 0)
				logmsg("open %s: %s", path, strerror(errno));
			return pfd;
		}
		if (d)
			closedir(d);
		struct timespec ts = { 0, 10 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
	return -1;
}

struct job {
	pid_t pid;
	uint32_t seq;
	int out[2];     /* read ends: stdout, stderr; -1 when closed */
	int status;
	int exited;
};

static int chan = -1;

static void send_or_die(uint8_t type, uint16_t flags, uint32_t seq, const void *d, uint32_t n)
{
	if (proto_send(chan, type, flags, seq, d, n) < 0) {
		logmsg("channel write failed: %s", strerror(errno));
		power_off();
	}
}

static void start_job(struct job *j, uint32_t seq, unsigned char *data, uint32_t len)
{
	char *argv[256];
	if (proto_unpack_argv(data, len, argv, 256) < 1) {
		const char *m = "malformed EXEC request";
		send_or_die(PROTO_MSG_ERROR, 0, seq, m, (uint32_t)strlen(m));
		return;
	}
	int po[2], pe[2];
	if (pipe2(po, O_CLOEXEC) < 0 || pipe2(pe, O_CLOEXEC) < 0) {
		const char *m = "pipe failed";
		send_or_die(PROTO_MSG_ERROR, 0, seq, m, (uint32_t)strlen(m));
		return;
	}
	pid_t pid = fork();
	if (pid == 0) {
		setsid();
		int nul = open("/dev/null", O_RDONLY);
		dup2(nul, 0);
		dup2(po[1], 1);
		dup2(pe[1], 2);
		signal(SIGPIPE, SIG_DFL);
		chdir("/");
		execvp(argv[0], argv);
		fprintf(stderr, "crashlab-agent: cannot run '%s': %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(po[1]);
	close(pe[1]);
	j->pid = pid;
	j->seq = seq;
	j->out[0] = po[0];
	j->out[1] = pe[0];
	j->exited = 0;
	j->status = 0;
}

static struct agent_ops *ops;
static struct agent_checker *checker;

static void send_result(uint32_t seq, const struct op_result *r)
{
	char buf[256];
	int n = proto_result_format(r, buf, sizeof(buf));
	send_or_die(PROTO_MSG_RESULT, 0, seq, buf, (uint32_t)n);
}

static void send_error(uint32_t seq, const char *msg)
{
	send_or_die(PROTO_MSG_ERROR, 0, seq, msg, (uint32_t)strlen(msg));
}

/* The overlay a session mounted (overlay=), unmounted when it ends. */
static char ovl_merged[256];

static int umount_now_or_lazily(const char *dir)
{
	return umount2(dir, 0) < 0 && umount2(dir, MNT_DETACH) < 0 ? -1 : 0;
}

/* The error of a mount that failed, with the kernel's last words. */
static void send_mount_error(uint32_t seq, const char *what, const char *at, int e)
{
	char kt[1500], msg[2048];
	agent_kernel_tail(kt, sizeof(kt));
	snprintf(msg, sizeof(msg), "mounting %s on %s failed: %s%s%s", what, at, strerror(e), *kt ? " | " : "", kt);
	send_error(seq, msg);
}

/* Partition 1 of the disk dev added at bytes [start, start + len) (BLKPG,
 * no partition table: the kernel is told), or deleted (len 0). 0, or -1
 * with errno. A guest that lives across recordings has one disk holding a
 * copy of the base image in each region; a recording's disk is the region's
 * partition, so no disk is probed per recording. */
static int set_part(const char *dev, long long start, long long len)
{
	int fd = open(dev, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	struct blkpg_partition part = { .start = start, .length = len, .pno = 1 };
	struct blkpg_ioctl_arg arg = { .op = len ? BLKPG_ADD_PARTITION : BLKPG_DEL_PARTITION, .datalen = sizeof(part),
				       .data = &part };
	int r = ioctl(fd, BLKPG, &arg);
	int e = errno;
	close(fd);
	errno = e;
	return r;
}

/* SESSION: the previous session's open files all closed, a new one opened
 * at dir - with mount=DEV (fstype, mopts) after mounting DEV there, as
 * mount(2) does: the checker mounts crash states the same way; with
 * layers=1 also, the directories of an [overlay] workload's layers made
 * there (overlay.c) and the session opened in its lower layer, where
 * [setup] runs. With overlay=LAYERS, the overlay over LAYERS' layers
 * mounted at dir first (for [run]: the host sends this before the setup's
 * sync). With end=1 only the closing (and the unmounting of the session's
 * overlay), and with umount=DIR the unmounting of DIR (lazily if it is
 * busy): a guest that lives across recordings lets go of a disk. With
 * part=START+LEN, DEV is a whole disk: its partition 1 is added at those
 * bytes and mounted; end=1 with delpart=DEV deletes it after the unmount
 * (set_part). All
 * without a shell: under TCG the three programs `mkdir -p && mount` and
 * `umount` ran cost a recording as much as its ops. */
static void handle_session(const struct proto_msg *m)
{
	char *end = kv_get((const char *)m->data, m->len, "end");
	if (end && !strcmp(end, "1")) {
		free(end);
		agent_ops_free(ops);
		ops = NULL;
		if (ovl_merged[0] && umount_now_or_lazily(ovl_merged) < 0) {
			char msg[400];
			snprintf(msg, sizeof(msg), "cannot unmount the overlay %s: %s", ovl_merged, strerror(errno));
			ovl_merged[0] = '\0';
			send_error(m->seq, msg);
			return;
		}
		ovl_merged[0] = '\0';
		char *um = kv_get((const char *)m->data, m->len, "umount");
		char *dp = kv_get((const char *)m->data, m->len, "delpart");
		char msg[400];
		if (um && umount_now_or_lazily(um) < 0) {
			snprintf(msg, sizeof(msg), "cannot unmount %s: %s", um, strerror(errno));
			send_error(m->seq, msg);
		} else if (dp && set_part(dp, 0, 0) < 0) {
			/* busy: a lazy unmount left it in use */
			snprintf(msg, sizeof(msg), "cannot delete the partition of %s: %s", dp, strerror(errno));
			send_error(m->seq, msg);
		} else {
			struct op_result r = { 0 };
			send_result(m->seq, &r);
		}
		free(um);
		free(dp);
		return;
	}
	free(end);
	char *dir = kv_get((const char *)m->data, m->len, "dir");
	char *dev = kv_get((const char *)m->data, m->len, "mount");
	char *layers = kv_get((const char *)m->data, m->len, "layers");
	char *ovl = kv_get((const char *)m->data, m->len, "overlay");
	const char *at = dir ? dir : "/mnt";
	char opsdir[300];
	snprintf(opsdir, sizeof(opsdir), "%s", at);
	int r = 0;
	if (dev) {
		char *fstype = kv_get((const char *)m->data, m->len, "fstype");
		char *mopts = kv_get((const char *)m->data, m->len, "mopts");
		char *part = kv_get((const char *)m->data, m->len, "part");
		char what[300];
		snprintf(what, sizeof(what), "%s%s", dev, part ? "1" : "");
		long long pstart = -1, plen = -1;
		klogctl(5 /* SYSLOG_ACTION_CLEAR */, NULL, 0);
		r = mkdir_p(at, 0755);
		if (r == 0 && part) {
			if (sscanf(part, "%lld+%lld", &pstart, &plen) != 2 || pstart < 0 || plen <= 0) {
				errno = EINVAL;
				r = -1;
			} else {
				r = set_part(dev, pstart, plen);
			}
			if (r < 0) {
				char msg[400];
				snprintf(msg, sizeof(msg), "cannot add the partition %s of %s: %s", part, dev, strerror(errno));
				send_error(m->seq, msg);
			}
		} else if (r < 0) {
			send_mount_error(m->seq, dev, at, errno);
		}
		if (r == 0) {
			r = mount(what, at, fstype ? fstype : "", 0, mopts && *mopts ? mopts : NULL);
			if (r < 0) {
				int e = errno;
				if (part)
					set_part(dev, 0, 0);
				send_mount_error(m->seq, what, at, e);
			}
		}
		free(part);
		free(fstype);
		free(mopts);
	}
	if (r == 0 && layers && !strcmp(layers, "1")) {
		r = agent_overlay_layers(at);
		if (r < 0) {
			char msg[400];
			snprintf(msg, sizeof(msg), "cannot make the overlay's layers in %s: %s", at, strerror(errno));
			send_error(m->seq, msg);
		}
		snprintf(opsdir, sizeof(opsdir), "%s/%s", at, WL_OVERLAY_LOWER);
	}
	if (r == 0 && ovl) {
		/* the lower layer's files are closed before it is a layer */
		agent_ops_free(ops);
		ops = NULL;
		klogctl(5 /* SYSLOG_ACTION_CLEAR */, NULL, 0);
		r = agent_overlay_mount(ovl, at);
		if (r < 0)
			send_mount_error(m->seq, "the overlay", at, errno);
		else
			snprintf(ovl_merged, sizeof(ovl_merged), "%s", at);
	}
	free(dev);
	free(layers);
	free(ovl);
	if (r < 0) {
		free(dir);
		return;
	}
	char *fb = kv_get((const char *)m->data, m->len, "fbarrier");
	char *fdb = kv_get((const char *)m->data, m->len, "fdatabarrier");
	if (ops)
		agent_ops_free(ops);
	ops = NULL;
	ops = agent_ops_new(opsdir, fb ? atol(fb) : -1, fdb ? atol(fdb) : -1);
	struct op_result res = { .ret = ops ? 0 : -1, .err = ops ? 0 : errno };
	send_result(m->seq, &res);
	free(dir);
	free(fb);
	free(fdb);
}

static void handle_op(const struct proto_msg *m)
{
	char line[8192];
	struct errbuf err = { 0 };
	if (!ops) {
		send_error(m->seq, "no workload session");
		return;
	}
	if (m->len >= sizeof(line)) {
		send_error(m->seq, "op line too long");
		return;
	}
	memcpy(line, m->data, m->len);
	line[m->len] = '\0';
	struct wl_op op;
	if (wl_parse_line(line, (int)m->seq, m->flags ? WL_RUN : WL_SETUP, &op, &err) < 0) {
		send_error(m->seq, err.msg);
		return;
	}
	struct op_result r = { 0 };
	agent_ops_exec(ops, &op, &r);
	wl_op_free(&op);
	send_result(m->seq, &r);
}

static void handle_check(const struct proto_msg *m)
{
	struct errbuf err = { 0 };
	if (!checker) {
		checker = agent_checker_new("/dev/vda", "/dev/vdb", &err);
		if (!checker) {
			send_error(m->seq, err.msg);
			return;
		}
	}
	char *reply = NULL;
	size_t rlen = 0;
	if (agent_checker_run(checker, (const char *)m->data, m->len, &reply, &rlen, &err) < 0) {
		send_error(m->seq, err.msg);
		return;
	}
	send_or_die(PROTO_MSG_STATE, 0, m->seq, reply, (uint32_t)rlen);
	free(reply);
}

/* LOG: a new write log for the checker, in pieces; the old checker and
 * its log go at the first piece, the new one is opened at the last. */
#define LOG_FILE "/tmp/cl-log"
static struct proto_log_rx log_rx = PROTO_LOG_RX_INIT;

static void handle_log(const struct proto_msg *m)
{
	if (m->flags & PROTO_LOG_FIRST) {
		agent_checker_free(checker);
		checker = NULL;
	}
	if (!proto_log_take(&log_rx, LOG_FILE, m))
		return;
	char msg[300];
	if (log_rx.err) {
		snprintf(msg, sizeof(msg), "cannot store the write log: %s", strerror(log_rx.err));
		unlink(LOG_FILE);
		send_error(m->seq, msg);
		return;
	}
	agent_checker_free(checker);
	struct errbuf err = { 0 };
	checker = agent_checker_new("/dev/vda", LOG_FILE, &err);
	if (!checker) {
		send_error(m->seq, err.msg);
		return;
	}
	struct op_result r = { .ret = (int64_t)log_rx.bytes };
	send_result(m->seq, &r);
}

static void serve(void)
{
	struct proto_reader rd = { 0 };
	struct job job = { .pid = 0, .out = { -1, -1 } };
	struct utsname u;
	uname(&u);
	char hello[512];
	int n = snprintf(hello, sizeof(hello), "proto=%d\nagent=%s\nkernel=%s\nversion=%s\n",
			 PROTO_VERSION, AGENT_VERSION, u.release, u.version);
	send_or_die(PROTO_MSG_HELLO, 0, 0, hello, (uint32_t)n);

	for (;;) {
		struct pollfd p[3] = {
			{ chan, POLLIN, 0 },
			{ job.out[0], POLLIN, 0 },
			{ job.out[1], POLLIN, 0 },
		};
		int r = poll(p, 3, job.pid ? 50 : 1000);
		if (r < 0 && errno != EINTR)
			power_off();
		if (p[0].revents & POLLIN) {
			char buf[65536];
			ssize_t got = read(chan, buf, sizeof(buf));
			if (got > 0 && proto_feed(&rd, buf, (size_t)got) < 0)
				power_off();
			struct proto_msg m;
			int k;
			while ((k = proto_next(&rd, &m)) == 1) {
				switch (m.type) {
				case PROTO_MSG_EXEC:
					if (job.pid) {
						const char *e = "a job is already running";
						send_or_die(PROTO_MSG_ERROR, 0, m.seq, e, (uint32_t)strlen(e));
					} else {
						start_job(&job, m.seq, m.data, m.len);
					}
					break;
				case PROTO_MSG_KILL:
					if (job.pid && !job.exited)
						kill(-job.pid, SIGKILL);
					break;
				case PROTO_MSG_SESSION:
					handle_session(&m);
					break;
				case PROTO_MSG_OP:
					handle_op(&m);
					break;
				case PROTO_MSG_CHECK:
					handle_check(&m);
					break;
				case PROTO_MSG_LOG:
					handle_log(&m);
					break;
				case PROTO_MSG_SHUTDOWN:
					power_off();
				default:
					break;
				}
			}
			if (k < 0) {
				logmsg("broken channel: %s", rd.err);
				power_off();
			}
		} else if (p[0].revents & (POLLHUP | POLLERR)) {
			/* The host side is not connected (yet, or any more): wait. */
			struct timespec ts = { 0, 20 * 1000 * 1000 };
			nanosleep(&ts, NULL);
		}
		for (int i = 0; i < 2; i++) {
			if (job.out[i] < 0 || !(p[i + 1].revents & (POLLIN | POLLHUP)))
				continue;
			char buf[32768];
			ssize_t got = read(job.out[i], buf, sizeof(buf));
			if (got > 0) {
				send_or_die(PROTO_MSG_OUT, (uint16_t)(i + 1), job.seq, buf, (uint32_t)got);
			} else if (got == 0 || (errno != EINTR && errno != EAGAIN)) {
				close(job.out[i]);
				job.out[i] = -1;
			}
		}
		/* Reap: our job, and any orphan re-parented to PID 1. */
		int st;
		pid_t w;
		while ((w = waitpid(-1, &st, WNOHANG)) > 0) {
			if (w == job.pid && !job.exited) {
				job.exited = 1;
				job.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
			}
		}
		if (job.pid && job.exited && job.out[0] < 0 && job.out[1] < 0) {
			unsigned char s[4];
			uint32_t v = (uint32_t)job.status;
			s[0] = (unsigned char)v;
			s[1] = (unsigned char)(v >> 8);
			s[2] = (unsigned char)(v >> 16);
			s[3] = (unsigned char)(v >> 24);
			send_or_die(PROTO_MSG_EXIT, 0, job.seq, s, 4);
			job.pid = 0;
		}
	}
}

int main(int argc, char **argv)
{
	if (getpid() != 1) {
		/* Run by hand inside a guest: the agent's tools (run-ops, tree). */
		return agent_tool_main(argc, argv);
	}
	signal(SIGPIPE, SIG_IGN);
	mount_pseudo();
	reap_all();
	const char *mode = cmdline_value("crashlab.mode");
	if (mode && !strcmp(mode, "shell"))
		run_shell();
	chan = open_port();
	if (chan < 0) {
		logmsg("no virtio-serial port named '%s'", PROTO_PORT);
		power_off();
	}
	serve();
	power_off();
}
