/*
 * fake-qemu.c - a stand-in for qemu-system-x86_64 that plays a guest, well
 * behaved or not, for the host-only tests of tests/host/.
 *
 * Method. crashlab runs it as CRASHLAB_QEMU with the command line of
 * engine/vm.c (vm_command). It answers "-help" and "--version" as the
 * probes ask, then reads what a guest would see: the virtio-serial
 * chardev (socket,path=P,server=on,wait=off: it binds and listens on P as
 * QEMU does, and accepts the tool's connection) and the drives (a
 * recording guest's blklogwrites drive gets a small valid write log at its
 * log.filename when a session mounts the disk or a region of it, so a run
 * goes on to check crash states). It prints a boot
 * console on stdout (lines ending in CR LF, as a serial console's do),
 * says HELLO, and answers like the agent (images/agent/agent.c): EXEC with
 * output and exit status 0, SESSION and OP with RESULT, CHECK with a STATE
 * whose tree is the final state of tests/workloads/newfile-fsync.wl,
 * SHUTDOWN by exiting.
 *
 * CRASHLAB_FAKE_GUEST names a misbehaviour and CRASHLAB_FAKE_ON the
 * request that triggers it (exec, session, op or check; the first request
 * of any kind when unset). "panic", "no-hello" and "hello-after-noise" act
 * at boot; the others are the branches of misbehave(), each with a line
 * saying what it sends. A behaviour that never ends goes on until the tool
 * kills the process, as a wedged guest would; the process dies with the
 * tool in any case.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "core/kv.h"
#include "core/proto.h"
#include "core/util.h"
#include "core/wlog.h"

static int chan = -1;

static void say(const char *s)
{
	write_all(1, s, strlen(s));
}

static void forever(void)
{
	for (;;)
		pause();
}

static void send_frame(uint8_t type, uint32_t seq, const void *data, size_t len)
{
	if (proto_send(chan, type, 0, seq, data, (uint32_t)len) < 0)
		exit(1);
}

static void send_text(uint8_t type, uint32_t seq, const char *text)
{
	send_frame(type, seq, text, strlen(text));
}

static void raw(const void *data, size_t len)
{
	if (write_all(chan, data, len) < 0)
		exit(1);
}

/* A frame header promising len bytes of payload. */
static void header(uint8_t type, uint32_t seq, uint32_t len)
{
	unsigned char h[PROTO_HDR] = { 'C', 'L', 'A', 'B', PROTO_VERSION, type, 0, 0 };
	for (int i = 0; i < 4; i++) {
		h[8 + i] = (unsigned char)(seq >> (8 * i));
		h[12 + i] = (unsigned char)(len >> (8 * i));
	}
	raw(h, sizeof(h));
}

/* ---- the write log of a recording guest ---- */

static void put64(unsigned char *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

/* The recording drive's log (the last -drive with a log.filename), and
 * the entries written to it so far. */
static char *log_path;
static uint64_t log_entries;

/* What a session's mount and ops write to the log: two writes, each
 * followed by a flush, every entry committed; at sectors 4096 and 4104 of
 * the disk, or of the region at byte start (SESSION part=START+LEN), as the
 * file system in that partition would. Appended: a guest that lives
 * across recordings has one log for all of them. */
static void write_log(uint64_t start)
{
	unsigned char sec[WLOG_SECTOR];
	if (!log_path)
		return;
	int fd = open(log_path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	off_t end = lseek(fd, 0, SEEK_END);
	if (end < (off_t)WLOG_SECTOR)
		end = WLOG_SECTOR;
	for (int i = 0; i < 2; i++) {
		memset(sec, 0, sizeof(sec));
		put64(sec, start / WLOG_SECTOR + 4096 + 8 * (uint64_t)i);
		put64(sec + 8, 1);
		if (pwrite(fd, sec, sizeof(sec), end) != (ssize_t)sizeof(sec))
			break;
		memset(sec, 0x5a, sizeof(sec));
		if (pwrite(fd, sec, sizeof(sec), end + WLOG_SECTOR) != (ssize_t)sizeof(sec))
			break;
		memset(sec, 0, sizeof(sec));
		put64(sec + 16, WLOG_FLUSH);
		if (pwrite(fd, sec, sizeof(sec), end + 2 * WLOG_SECTOR) != (ssize_t)sizeof(sec))
			break;
		end += 3 * WLOG_SECTOR;
		log_entries += 2;
	}
	memset(sec, 0, sizeof(sec));
	put64(sec, WLOG_MAGIC);
	put64(sec + 8, WLOG_VERSION);
	put64(sec + 16, log_entries);
	sec[24] = WLOG_SECTOR & 0xff;
	sec[25] = WLOG_SECTOR >> 8;
	if (pwrite(fd, sec, sizeof(sec), 0) != (ssize_t)sizeof(sec))
		log_entries = 0;
	close(fd);
}

/* ---- replies ---- */

static const char good_tree[] = "d\td\t0755\t0\t0\t4096\t2\t100\t-\t-\t-\t-\n"
				"d/n\tf\t0644\t0\t0\t4096\t1\t101\t-\t-\tp2\t\n";

/* Names a file system may really hold, each hard on a terminal. */
static const char hostile_names_tree[] =
	"%1B[31mred%1B[0m\tf\t0644\t0\t0\t3\t1\t20\t-\t-\th0000000000000001\tabc\n"
	"%1B]0;owned%07title\tf\t0644\t0\t0\t0\t1\t21\t-\t-\t\t\n"
	"line%0Abreak\td\t0755\t0\t0\t4096\t2\t22\t-\t-\t-\t-\n"
	"tab%09cr%0Dbell%07del%7F\tf\t0644\t0\t0\t0\t1\t23\t-\t-\t\t\n"
	"bidi%E2%80%AEtxt.exe\tf\t0644\t0\t0\t0\t1\t24\t-\t-\t\t\n"
	"c1%C2%9B2Jcsi\tf\t0644\t0\t0\t0\t1\t25\t-\t-\t\t\n"
	"bad%FFutf8%5Cback%22quote\tf\t0644\t0\t0\t0\t1\t26\t-\t-\t\t\n"
	"link\tl\t0777\t0\t0\t20\t1\t27\t-\t../../../escape-canary\t-\t-\n"
	"huge\tf\t7777\t4294967295\t4294967295\t18446744073709551615\t4294967295\t18446744073709551615\t"
	"user.%1B[2J=%1B]0%3Bx%07\t-\t\t\n";

/* The STATE payload: header, fsck output, tree. */
static char *state(const char *header_extra, const char *fsck, const char *tree, size_t tree_len, size_t *len)
{
	struct sbuf sb = SBUF_INIT;
	sbuf_addf(&sb, "mount_ok=1\nmount_msg=\nfsck_status=0\nbytes=1024\nms_replay=1.0\nms_mount=2.0\n"
		       "ms_capture=1.0\nms_fsck=3.0\nms_other=0.5\n%sfsck_len=%zu\ntree_len=%zu\n\n",
		  header_extra, strlen(fsck), tree_len);
	sbuf_adds(&sb, fsck);
	sbuf_add(&sb, tree, tree_len);
	*len = sb.len;
	return sbuf_detach(&sb);
}

static void send_state(uint32_t seq, const char *extra, const char *tree, size_t tree_len)
{
	size_t len;
	char *p = state(extra, "fsck: clean\n", tree, tree_len, &len);
	send_frame(PROTO_MSG_STATE, seq, p, len);
	free(p);
}

static void send_tree_line(uint32_t seq, const char *bad_line)
{
	struct sbuf t = SBUF_INIT;
	sbuf_adds(&t, good_tree);
	sbuf_adds(&t, bad_line);
	send_state(seq, "", t.buf, t.len);
	sbuf_free(&t);
}

/* The inode number of the path an op line names (its second word): 100 +
 * the order in which paths were first seen, so the tree above matches. */
static unsigned long long ino_of(const struct proto_msg *m)
{
	static struct strvec seen;
	char *line = xmemdup(m->data, m->len);
	char *p = strchr(line, ' ');
	unsigned long long ino = 0;
	if (p) {
		p++;
		p[strcspn(p, " ")] = '\0';
		size_t i = 0;
		while (i < seen.n && strcmp(seen.v[i], p))
			i++;
		if (i == seen.n)
			strvec_push(&seen, p);
		ino = 100 + i;
	}
	free(line);
	return ino;
}

static void answer(const struct proto_msg *m)
{
	char res[128];
	switch (m->type) {
	case PROTO_MSG_EXEC:
		send_frame(PROTO_MSG_OUT, m->seq, "fake guest\n", 11);
		send_frame(PROTO_MSG_EXIT, m->seq, "\0\0\0\0", 4);
		break;
	case PROTO_MSG_SESSION: {
		char *mnt = kv_get((const char *)m->data, m->len, "mount");
		char *part = kv_get((const char *)m->data, m->len, "part");
		unsigned long long start = 0, len = 0;
		if (mnt)
			write_log(part && sscanf(part, "%llu+%llu", &start, &len) == 2 ? start : 0);
		free(mnt);
		free(part);
		send_text(PROTO_MSG_RESULT, m->seq, "ret=0\nerrno=0\n");
		break;
	}
	case PROTO_MSG_OP:
		snprintf(res, sizeof(res), "ret=0\nerrno=0\nino=%llu\nino2=0\nms=0.100\n", ino_of(m));
		send_text(PROTO_MSG_RESULT, m->seq, res);
		break;
	case PROTO_MSG_CHECK:
		send_state(m->seq, "", good_tree, strlen(good_tree));
		break;
	case PROTO_MSG_LOG:
		/* a log for the checker: only its last piece is answered */
		if (m->flags & PROTO_LOG_LAST)
			send_text(PROTO_MSG_RESULT, m->seq, "ret=0\nerrno=0\n");
		break;
	case PROTO_MSG_SHUTDOWN:
		say("reboot: Power down\r\n");
		exit(0);
	default:
		break;
	}
}

/* What a request of the triggering kind gets. */
static void misbehave(const char *how, const struct proto_msg *m)
{
	uint32_t seq = m->seq;
	if (!strcmp(how, "truncated")) {
		/* half a frame, then the channel closes while QEMU lives on */
		header(PROTO_MSG_RESULT, seq, 64);
		raw("ret=0\nerr", 9);
		close(chan);
		forever();
	} else if (!strcmp(how, "off-region")) {
		/* a session on a region of the disk whose writes land outside it */
		write_log(0);
		send_text(PROTO_MSG_RESULT, seq, "ret=0\nerrno=0\n");
	} else if (!strcmp(how, "exit-mid")) {
		/* half a frame, then the whole guest is gone */
		header(PROTO_MSG_RESULT, seq, 64);
		raw("ret=0\nerr", 9);
		_exit(0);
	} else if (!strcmp(how, "oversized")) {
		/* a header announcing 4 GiB */
		header(PROTO_MSG_STATE, seq, 0xffffffffu);
		forever();
	} else if (!strcmp(how, "garbage")) {
		/* bytes that are no frame, then nothing */
		unsigned char g[256];
		for (size_t i = 0; i < sizeof(g); i++)
			g[i] = (unsigned char)(i * 151 + 7);
		raw(g, sizeof(g));
		forever();
	} else if (!strcmp(how, "silent")) {
		/* no answer at all */
		forever();
	} else if (!strcmp(how, "trickle")) {
		/* a reply that never ends: one byte of a 1 MiB frame every 20 ms */
		header(PROTO_MSG_STATE, seq, 1u << 20);
		for (;;) {
			raw("x", 1);
			usleep(20000);
		}
	} else if (!strcmp(how, "out-forever")) {
		/* valid output frames, never an end */
		for (;;) {
			send_frame(PROTO_MSG_OUT, seq, "tick\n", 5);
			usleep(5000);
		}
	} else if (!strcmp(how, "out-flood")) {
		/* 256 MiB of output, then a normal end */
		static char chunk[1 << 16];
		memset(chunk, 'o', sizeof(chunk));
		for (int i = 0; i < 4096; i++) {
			header(PROTO_MSG_OUT, seq, sizeof(chunk));
			raw(chunk, sizeof(chunk));
		}
		answer(m);
	} else if (!strcmp(how, "console-flood")) {
		/* the console never stops; the channel stays silent */
		static char line[4096];
		memset(line, 'c', sizeof(line) - 1);
		line[sizeof(line) - 2] = '\r';
		line[sizeof(line) - 1] = '\n';
		while (write_all(1, line, sizeof(line)) == 0)
			;
		exit(1);
	} else if (!strcmp(how, "exit-status")) {
		/* an EXIT whose status no process has */
		send_frame(PROTO_MSG_EXIT, seq, "\xff\xff\xff\x7f", 4);
	} else if (!strcmp(how, "error-reply")) {
		/* a refusal full of escape sequences */
		send_text(PROTO_MSG_ERROR, seq, "no \x1b[31mway\x1b[0m\x1b]0;owned\x07 \x1b[2J");
	} else if (!strcmp(how, "junk-result")) {
		/* a RESULT whose numbers are none */
		send_text(PROTO_MSG_RESULT, seq, "ret=12abc\nerrno=99999999999\nino=-1\nino2=0x10\nms=1e999\n");
	} else if (!strcmp(how, "nan-result")) {
		/* a RESULT that took "nan" ms */
		send_text(PROTO_MSG_RESULT, seq, "ret=0\nerrno=0\nino=13\nino2=0\nms=nan\n");
	} else if (!strcmp(how, "state-names")) {
		/* a well-formed STATE with hostile names, numbers and fsck output */
		struct sbuf t = SBUF_INIT;
		sbuf_adds(&t, good_tree);
		sbuf_adds(&t, hostile_names_tree);
		size_t len;
		char *p = state("", "fsck \x1b[2J\x1b]0;owned\x07 clean\n", t.buf, t.len, &len);
		send_frame(PROTO_MSG_STATE, seq, p, len);
		free(p);
		sbuf_free(&t);
	} else if (!strcmp(how, "state-dotdot")) {
		/* tree paths that leave the tree, or are no path */
		send_tree_line(seq, "../../escape-canary\tf\t0644\t0\t0\t0\t1\t30\t-\t-\t\t\n");
	} else if (!strcmp(how, "state-inner-dotdot")) {
		send_tree_line(seq, "d/../../escape-canary\tf\t0644\t0\t0\t0\t1\t30\t-\t-\t\t\n");
	} else if (!strcmp(how, "state-absolute")) {
		send_tree_line(seq, "/tmp/escape-canary\tf\t0644\t0\t0\t0\t1\t30\t-\t-\t\t\n");
	} else if (!strcmp(how, "state-nul")) {
		send_tree_line(seq, "d/a%00b\tf\t0644\t0\t0\t0\t1\t30\t-\t-\t\t\n");
	} else if (!strcmp(how, "state-empty-component")) {
		send_tree_line(seq, "d//n2\tf\t0644\t0\t0\t0\t1\t30\t-\t-\t\t\n");
	} else if (!strcmp(how, "state-duplicate")) {
		send_tree_line(seq, "d/n\tf\t0644\t0\t0\t4096\t1\t101\t-\t-\tp2\t\n");
	} else if (!strcmp(how, "state-raw-nul")) {
		/* a NUL byte inside the tree lines themselves */
		static const char t[] = "d\td\t0755\t0\t0\t4096\t2\t12\t-\t-\t-\t-\nd/n\0x\tf\t0644\t0\t0\t0\t1\t13\t-\t-\t\t\n";
		send_state(seq, "", t, sizeof(t) - 1);
	} else if (!strcmp(how, "state-numbers") || !strcmp(how, "state-nan")) {
		/* a header value replaced by one of the same length */
		size_t len;
		char *p = state("", "", good_tree, strlen(good_tree), &len);
		if (!strcmp(how, "state-numbers"))
			memcpy(strstr(p, "bytes=1024"), "bytes=-999", 10);
		else
			memcpy(strstr(p, "ms_mount=2.0"), "ms_mount=nan", 12);
		send_frame(PROTO_MSG_STATE, seq, p, len);
		free(p);
	} else {
		fprintf(stderr, "fake-qemu: unknown CRASHLAB_FAKE_GUEST '%s'\n", how);
		exit(2);
	}
}

static int kind_of(const char *on)
{
	if (!on || !*on)
		return 0;
	static const struct { const char *name; int type; } kinds[] = {
		{ "exec", PROTO_MSG_EXEC }, { "session", PROTO_MSG_SESSION },
		{ "op", PROTO_MSG_OP },     { "check", PROTO_MSG_CHECK },
	};
	for (size_t i = 0; i < ARRAY_SIZE(kinds); i++)
		if (!strcmp(on, kinds[i].name))
			return kinds[i].type;
	fprintf(stderr, "fake-qemu: unknown CRASHLAB_FAKE_ON '%s'\n", on);
	exit(2);
}

/* -qmp unix:PATH,...: a monitor that greets and answers every command
 * with an empty return, served by a child process. */
static void serve_qmp(const char *spec)
{
	if (strncmp(spec, "unix:", 5))
		return;
	char *path = xstrndup(spec + 5, strcspn(spec + 5, ","));
	int ls = socket(AF_UNIX, SOCK_STREAM, 0);
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	free(path);
	if (ls < 0 || bind(ls, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(ls, 1) < 0)
		return;
	if (fork() != 0) {
		close(ls);
		return;
	}
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	int fd = accept(ls, NULL, NULL);
	if (fd < 0)
		_exit(0);
	const char *hello = "{\"QMP\": {\"version\": {}, \"capabilities\": []}}\r\n";
	write_all(fd, hello, strlen(hello));
	char c;
	while (read(fd, &c, 1) == 1)
		if (c == '\n')
			write_all(fd, "{\"return\": {}}\r\n", 16);
	_exit(0);
}

/* The value of key=... in a comma-separated QEMU option string, malloc'd, or NULL. */
static char *opt_value(const char *opts, const char *key)
{
	size_t kl = strlen(key);
	for (const char *p = opts; p && *p;) {
		size_t l = strcspn(p, ",");
		if (l > kl && !strncmp(p, key, kl) && p[kl] == '=')
			return xstrndup(p + kl + 1, l - kl - 1);
		p += l;
		if (*p)
			p++;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	char *sock = NULL;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-help")) {
			say("usage: fake-qemu [options]\n-sandbox on|off\n");
			return 0;
		}
		if (!strcmp(argv[i], "--version")) {
			say("QEMU emulator version 0.0 (fake)\n");
			return 0;
		}
		if (i + 1 >= argc)
			continue;
		if (!strcmp(argv[i], "-chardev") && !strncmp(argv[i + 1], "socket,", 7)) {
			free(sock);
			sock = opt_value(argv[i + 1], "path");
		}
		if (!strcmp(argv[i], "-qmp"))
			serve_qmp(argv[i + 1]);
		if (!strcmp(argv[i], "-drive")) {
			char *log = opt_value(argv[i + 1], "log.filename");
			if (log) {
				free(log_path);
				log_path = log;
			}
		}
	}
	const char *how = getenv("CRASHLAB_FAKE_GUEST");
	how = how && *how ? how : "ok";
	int on = kind_of(getenv("CRASHLAB_FAKE_ON"));
	signal(SIGPIPE, SIG_IGN);
	/* a guest outlives no tool, even one killed as hung */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() == 1)
		return 1;

	say("Linux version 6.12.0-fake (fake-qemu)\r\nRun /init as init process\r\n");
	if (!sock) {
		fprintf(stderr, "fake-qemu: no socket chardev\n");
		return 1;
	}
	int ls = socket(AF_UNIX, SOCK_STREAM, 0);
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock);
	if (ls < 0 || bind(ls, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(ls, 1) < 0) {
		fprintf(stderr, "fake-qemu: cannot listen on '%s': %s\n", sock, strerror(errno));
		return 1;
	}
	free(sock);
	chan = accept(ls, NULL, NULL);
	close(ls);
	if (chan < 0)
		return 1;

	if (!strcmp(how, "panic")) {
		say("Kernel panic - not syncing: Attempted to kill init! exitcode=0x00000009\r\n");
		return 0;
	}
	if (!strcmp(how, "no-hello"))
		forever();
	if (!strcmp(how, "hello-after-noise")) {
		/* an OUT frame and the HELLO in one write */
		struct sbuf two = SBUF_INIT;
		unsigned char h[PROTO_HDR] = { 'C', 'L', 'A', 'B', PROTO_VERSION, PROTO_MSG_OUT, 1, 0, 0, 0, 0, 0, 3 };
		sbuf_add(&two, h, sizeof(h));
		sbuf_add(&two, "hi\n", 3);
		unsigned char hh[PROTO_HDR] = { 'C', 'L', 'A', 'B', PROTO_VERSION, PROTO_MSG_HELLO, 0, 0, 0, 0, 0, 0, 18 };
		sbuf_add(&two, hh, sizeof(hh));
		sbuf_add(&two, "kernel=6.12-fake\n\n", 18);
		raw(two.buf, two.len);
		sbuf_free(&two);
		how = "ok";
	} else {
		send_text(PROTO_MSG_HELLO, 0, "proto=1\nagent=fake\nkernel=6.12.0-fake\nversion=#1\n");
	}

	struct proto_reader rd = { 0 };
	int triggered = 0;
	for (;;) {
		char buf[65536];
		ssize_t n = read(chan, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return 0;
		proto_feed(&rd, buf, (size_t)n);
		struct proto_msg m;
		int k;
		while ((k = proto_next(&rd, &m)) == 1) {
			int request = m.type == PROTO_MSG_EXEC || m.type == PROTO_MSG_SESSION || m.type == PROTO_MSG_OP ||
				      m.type == PROTO_MSG_CHECK;
			if (request && !triggered && strcmp(how, "ok") && (!on || m.type == on)) {
				triggered = 1;
				misbehave(how, &m);
				continue;
			}
			answer(&m);
		}
		if (k < 0) {
			fprintf(stderr, "fake-qemu: %s\n", rd.err);
			return 1;
		}
	}
}
