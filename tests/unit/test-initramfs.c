/*
 * test-initramfs.c - the ELF dependency walker against ldd, and a guest
 * initramfs built into a temporary cache and read back with libarchive:
 * its layout, the cache key, cache hits, reproducible bytes, and the exit
 * codes for a missing agent and a cache that cannot be written. The agent
 * is a copy of /bin/busybox in a fake project root, so the test does not
 * depend on the real agent being built.
 */
#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "images/basedisk.h"
#include "images/elfdeps.h"
#include "images/initramfs.h"
#include "core/util.h"
#include "host/hash.h"
#include "host/msg.h"
#include "host/sys.h"
#include "tests/unit/check.h"

static struct errbuf eb;

/* One entry of the archive as read back. */
struct got {
	char *path;
	mode_t mode;       /* type and permissions */
	unsigned major, minor;
	char *link;        /* symlink target or NULL */
	long long uid, gid, mtime;
};

static struct got *entries;
static size_t nentries;

static int read_archive(const char *path)
{
	struct archive *a = archive_read_new();
	archive_read_support_filter_gzip(a);
	archive_read_support_format_cpio(a);
	if (archive_read_open_filename(a, path, 65536) != ARCHIVE_OK) {
		archive_read_free(a);
		return -1;
	}
	struct archive_entry *ae;
	int r;
	while ((r = archive_read_next_header(a, &ae)) == ARCHIVE_OK) {
		entries = xrealloc(entries, (nentries + 1) * sizeof(*entries));
		struct got *g = &entries[nentries++];
		g->path = xstrdup(archive_entry_pathname(ae));
		g->mode = archive_entry_mode(ae);
		g->major = archive_entry_rdevmajor(ae);
		g->minor = archive_entry_rdevminor(ae);
		g->link = archive_entry_symlink(ae) ? xstrdup(archive_entry_symlink(ae)) : NULL;
		g->uid = archive_entry_uid(ae);
		g->gid = archive_entry_gid(ae);
		g->mtime = archive_entry_mtime(ae);
	}
	archive_read_free(a);
	return r == ARCHIVE_EOF ? 0 : -1;
}

static const struct got *got(const char *path)
{
	while (*path == '/')
		path++;
	for (size_t i = 0; i < nentries; i++)
		if (!strcmp(entries[i].path, path))
			return &entries[i];
	return NULL;
}

static bool has(const struct strvec *sv, const char *s)
{
	for (size_t i = 0; i < sv->n; i++)
		if (!strcmp(sv->v[i], s))
			return true;
	return false;
}

static const char *base(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

/* Every library ldd names for prog (the loader too) is among the walker's, by name. */
static void against_ldd(const char *prog)
{
	struct strvec libs = STRVEC_INIT, names = STRVEC_INIT;
	CHECK(img_elf_deps(prog, &libs, &eb) == 0, "dependencies of '%s' found (%zu)", prog, libs.n);
	for (size_t i = 0; i < libs.n; i++)
		strvec_push(&names, base(libs.v[i]));
	char *cmd = xasprintf("ldd %s 2>/dev/null", prog);
	FILE *f = popen(cmd, "r");
	char line[512];
	int missing = 0, seen = 0;
	while (f && fgets(line, sizeof(line), f)) {
		char name[256];
		if (sscanf(line, " %255s", name) != 1 || strstr(name, "vdso"))
			continue;
		seen++;
		if (!has(&names, base(name))) {
			missing++;
			printf("# ldd names '%s', the walker does not\n", name);
		}
	}
	if (f)
		pclose(f);
	CHECK(seen > 0 && missing == 0, "the walker finds all %d libraries ldd names for '%s'", seen, prog);
	free(cmd);
	strvec_free(&libs);
	strvec_free(&names);
}

/* Run fn in a child with XDG_CACHE_HOME=cache; return its exit status (or -1). */
static int in_child(const char *cache, bool limit_size, char *(*fn)(struct errbuf *))
{
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);
		dup2(null, 2);
		setenv("XDG_CACHE_HOME", cache, 1);
		if (limit_size) {
			struct rlimit rl = { 1 << 20, 1 << 20 };
			signal(SIGXFSZ, SIG_IGN);
			setrlimit(RLIMIT_FSIZE, &rl);
		}
		msg_configure(0, 1);
		struct errbuf e;
		if (!fn(&e))
			_exit(e.code);
		_exit(0);
	}
	int st;
	if (pid < 0 || waitpid(pid, &st, 0) < 0 || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

static size_t count_files(const char *dir)
{
	char *cmd = xasprintf("ls -A %s 2>/dev/null | wc -l", dir);
	FILE *f = popen(cmd, "r");
	size_t n = 0;
	if (f) {
		if (fscanf(f, "%zu", &n) != 1)
			n = 999;
		pclose(f);
	}
	free(cmd);
	return n;
}

static int copy_file(const char *from, const char *to)
{
	struct sbuf sb = SBUF_INIT;
	int r = read_file(from, &sb);
	if (r == 0)
		r = write_file_atomic(to, sb.buf, sb.len);
	if (r == 0)
		r = chmod(to, 0755);
	sbuf_free(&sb);
	return r;
}

static char *file_hash(const char *path)
{
	struct hasher *h = hasher_new();
	char hex[65];
	hasher_add_file(h, path);
	hasher_done(h, hex);
	return xstrdup(hex);
}

TEST(image)
{
	/* The ELF walker on real host binaries. */
	char *xfs = find_program("mkfs.xfs");
	char *btrfs = find_program("mkfs.btrfs");
	char *dmsetup = find_program("dmsetup");
	if (!xfs || !btrfs || !dmsetup || access("/bin/busybox", X_OK) != 0) {
		free(xfs);
		free(btrfs);
		free(dmsetup);
		SKIP("needs mkfs.xfs, mkfs.btrfs, dmsetup and /bin/busybox ('make deps')");
	}
	struct strvec libs = STRVEC_INIT;
	CHECK(img_elf_deps(xfs, &libs, &eb) == 0, "mkfs.xfs: walker succeeds");
	bool libc = false, loader = false;
	for (size_t i = 0; i < libs.n; i++) {
		libc |= !strcmp(base(libs.v[i]), "libc.so.6");
		loader |= !strcmp(libs.v[i], "/lib64/ld-linux-x86-64.so.2");
	}
	CHECK(libc, "mkfs.xfs needs libc.so.6");
	CHECK(loader, "mkfs.xfs needs the loader /lib64/ld-linux-x86-64.so.2 (PT_INTERP)");
	strvec_free(&libs);
	against_ldd(xfs);
	against_ldd(dmsetup); /* libpcre2 comes only through libselinux: recursion */
	CHECK(img_elf_deps("/bin/busybox", &libs, &eb) == 0 && libs.n == 0, "a static binary needs nothing");
	CHECK(img_elf_deps("/etc/passwd", &libs, &eb) == 0 && libs.n == 0, "a file that is not ELF needs nothing");
	CHECK(img_elf_deps("/nonexistent/x", &libs, &eb) < 0, "a missing file is an error");

	/* A fake project root whose agent is busybox, and a temporary cache. */
	char tmp[] = "/tmp/crashlab-test-initramfs.XXXXXX";
	if (!mkdtemp(tmp)) {
		CHECK(0, "temp dir: %s", strerror(errno));
	
	}
	char *root = xasprintf("%s/root", tmp);
	char *agent_dir = xasprintf("%s/images/agent", root);
	mkdir_p(agent_dir, 0755);
	setenv("CRASHLAB_ROOT", root, 1);
	char *agent = img_agent_path();
	CHECK(!strncmp(agent, root, strlen(root)), "the agent is looked up under the project root");

	/* Before cache_dir() is fixed in this process: the failure paths, in children. */
	char *nocache = xasprintf("%s/nocache", tmp);
	CHECK(in_child(nocache, false, img_initramfs_ensure) == EXIT_NOINPUT, "a missing agent exits %d",
	      EXIT_NOINPUT);
	/* An agent needing a library that does not exist: mkfs.xfs with one DT_NEEDED renamed. */
	struct sbuf elf = SBUF_INIT;
	char *hit = NULL;
	if (read_file(xfs, &elf) == 0)
		hit = memmem(elf.buf, elf.len, "libuuid.so.1", 12);
	if (hit) {
		memcpy(hit, "libzzzz.so.1", 12);
		CHECK(write_file_atomic(agent, elf.buf, elf.len) == 0 && chmod(agent, 0755) == 0, "patched agent");
		CHECK(img_elf_deps(agent, &libs, &eb) < 0, "a library that cannot be found is an error");
		CHECK(in_child(nocache, false, img_initramfs_ensure) == EXIT_NOINPUT,
		      "and the image build exits %d", EXIT_NOINPUT);
	}
	sbuf_free(&elf);
	CHECK(copy_file("/bin/busybox", agent) == 0, "fake agent in place");
	char *full = xasprintf("%s/full", tmp);
	char *full_images = xasprintf("%s/crashlab/images", full);
	CHECK(in_child(full, true, img_initramfs_ensure) == EXIT_CANTCREAT,
	      "a cache that cannot take the image (file size limit) exits %d", EXIT_CANTCREAT);
	CHECK(count_files(full_images) == 0, "and leaves nothing in the images directory");

	/* A real build. */
	char *cache = xasprintf("%s/cache", tmp);
	setenv("XDG_CACHE_HOME", cache, 1);
	msg_configure(0, 1);
	char *images = xasprintf("%s/crashlab/images", cache);
	mkdir_p(images, 0755);
	char *stale = xasprintf("%s/initramfs-0000000000000000.cpio.gz.tmp.999999999", images);
	write_file_atomic(stale, "x", 1);
	CHECK(img_initramfs_cached() == NULL, "nothing cached before the first build");
	double t0 = now_s();
	char *path = img_initramfs_ensure(&eb);
	double t1 = now_s();
	printf("# built %s in %.2f s\n", path, t1 - t0);
	CHECK(file_exists(path), "image exists");
	CHECK(!file_exists(stale), "a dead process's temporary file is swept");
	size_t plen = strlen(path);
	CHECK(plen > 24 && !strcmp(path + plen - 8, ".cpio.gz") &&
	      strspn(strrchr(path, '-') + 1, "0123456789abcdef") == 16,
	      "named initramfs-<16 hex>.cpio.gz");
	CHECK(count_files(images) == 1, "one file in the images directory");

	CHECK(read_archive(path) == 0, "archive reads back as gzip newc cpio (%zu entries)", nentries);
	const struct got *g = got("init");
	CHECK(g && S_ISREG(g->mode) && (g->mode & 0111), "/init is an executable file");
	g = got("dev/console");
	CHECK(g && S_ISCHR(g->mode) && g->major == 5 && g->minor == 1, "/dev/console is char 5:1");
	g = got("dev/null");
	CHECK(g && S_ISCHR(g->mode) && g->major == 1 && g->minor == 3, "/dev/null is char 1:3");
	static const char *const dirs[] = { "dev", "proc", "sys", "tmp", "mnt", "run", "etc", "root", NULL };
	bool all_dirs = true;
	for (size_t i = 0; dirs[i]; i++)
		all_dirs &= got(dirs[i]) && S_ISDIR(got(dirs[i])->mode);
	CHECK(all_dirs, "the base directories are there");
	g = got("bin/busybox");
	CHECK(g && S_ISREG(g->mode), "/bin/busybox is a file");
	g = got("bin/sh");
	CHECK(g && S_ISLNK(g->mode) && !strcmp(g->link, "/bin/busybox"), "/bin/sh is an applet link");
	g = got("sbin/mke2fs");
	CHECK(g && S_ISREG(g->mode), "/sbin/mke2fs is the real tool, not busybox's applet");
	g = got("sbin/mkfs.ext4");
	CHECK(g && S_ISLNK(g->mode) && !strcmp(g->link, "mke2fs"), "/sbin/mkfs.ext4 -> mke2fs");
	g = got("lib64/ld-linux-x86-64.so.2");
	CHECK(g && (S_ISREG(g->mode) || (S_ISLNK(g->mode) && got(g->link) && S_ISREG(got(g->link)->mode))),
	      "the loader resolves inside the image");
	size_t n;
	const struct img_tool *tools = img_tools(&n);
	bool tools_ok = true;
	for (size_t i = 0; i < n; i++) {
		if (!strcmp(tools[i].name, "busybox"))
			continue;
		char *p = xasprintf("sbin/%s", tools[i].name);
		if (!got(p) && !tools[i].optional) {
			tools_ok = false;
			printf("# missing %s\n", p);
		}
		free(p);
	}
	CHECK(tools_ok, "every required tool is in /sbin");

	CHECK(img_elf_deps(btrfs, &libs, &eb) == 0, "mkfs.btrfs dependencies");
	bool libs_ok = libs.n > 0;
	for (size_t i = 0; i < libs.n; i++) {
		char *real = realpath(libs.v[i], NULL);
		const struct got *as_named = got(libs.v[i]);
		const struct got *as_file = real ? got(real) : NULL;
		if (!as_named || !as_file || !S_ISREG(as_file->mode)) {
			libs_ok = false;
			printf("# '%s' (real '%s') is not in the image\n", libs.v[i], real ? real : "?");
		}
		free(real);
	}
	CHECK(libs_ok, "every library mkfs.btrfs loads (%zu) is in the image, as named and as a file", libs.n);
	strvec_free(&libs);

	bool owners = true;
	for (size_t i = 0; i < nentries; i++)
		owners &= entries[i].uid == 0 && entries[i].gid == 0 && entries[i].mtime == 0;
	CHECK(owners, "every entry is owned by root with mtime 0");
	bool sorted = true;
	for (size_t i = 1; i < nentries; i++)
		sorted &= strcmp(entries[i - 1].path, entries[i].path) < 0;
	CHECK(sorted, "entries are sorted and unique (parents first)");

	/* Cache hits and reproducibility. */
	struct stat st1, st2;
	stat(path, &st1);
	t0 = now_s();
	char *again = img_initramfs_ensure(&eb);
	t1 = now_s();
	stat(again, &st2);
	printf("# cache hit in %.3f s\n", t1 - t0);
	CHECK(!strcmp(path, again), "same inputs, same path");
	CHECK(st1.st_ino == st2.st_ino && st1.st_mtime == st2.st_mtime, "and the file was not rewritten");
	char *cached = img_initramfs_cached();
	CHECK(cached && !strcmp(cached, path), "img_initramfs_cached finds it");
	char *h1 = file_hash(path);
	unlink(path);
	CHECK(img_initramfs_cached() == NULL, "a removed image is not cached");
	char *rebuilt = img_initramfs_ensure(&eb);
	char *h2 = file_hash(rebuilt);
	CHECK(!strcmp(path, rebuilt) && !strcmp(h1, h2), "a rebuild gives the same bytes");

	/* A changed input gives another image. */
	int fd = open(agent, O_WRONLY | O_APPEND);
	CHECK(fd >= 0 && write(fd, "!", 1) == 1, "agent changed");
	if (fd >= 0)
		close(fd);
	CHECK(img_initramfs_cached() == NULL, "a changed agent is not a cache hit");
	char *other = img_initramfs_ensure(&eb);
	CHECK(strcmp(other, path) != 0 && file_exists(other), "and builds a new image");

	rm_rf(tmp);
	char *owned[] = { xfs, btrfs, dmsetup, root, agent_dir, agent, nocache, full, full_images, cache, images, stale,
			  path, again, cached, h1, h2, rebuilt, other };
	for (size_t i = 0; i < ARRAY_SIZE(owned); i++)
		free(owned[i]);
}

TEST_MAIN()
