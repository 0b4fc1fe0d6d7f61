/*
 * export-gen.c - the text exports of export.h: the C program, the
 * xfstests test and its golden output, the .wl file and the notes.
 *
 * The C program is made of pieces of a runtime (below, one piece per kind
 * of op, each included only when the workload uses it) and a main() with
 * one call per op, in op order, each followed by the line that prints its
 * result. The runtime follows images/agent/ops.c call for call: the same
 * open flags, the table of open files, the 1 MiB pieces of a large write,
 * the write pattern, umask 0.
 *
 * The xfstests test writes a pattern write's bytes as xfs_io's fill of one
 * byte per op (op id modulo 256, never 0) and a TEXT through a file of its
 * own, so the golden output's digests are computed from the simulator's
 * tree at the promise (judge/sim.h): a block the program wrote with a
 * pattern is that op's fill byte, zeros are zeros, and a file of text only
 * is its inline content; a file where neither holds is printed by size.
 */
#include "engine/export.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/hash.h"
#include "judge/judge.h"

/* The barrier calls' numbers in the kernel series (kernel/0002), which no
 * upstream kernel uses; tests/host/t0150-barrier-numbers.sh checks that the
 * series and the document agree. */
#define SERIES_NR_FBARRIER "900"
#define SERIES_NR_FDATABARRIER "901"

static const struct chunk {
	const char *name;
	const char *text;
} chunks[] = {
	{ "base",
	  "#define _GNU_SOURCE\n"
	  "#include <errno.h>\n"
	  "#include <fcntl.h>\n"
	  "#include <stdio.h>\n"
	  "#include <stdlib.h>\n"
	  "#include <string.h>\n"
	  "#include <sys/stat.h>\n"
	  "#include <sys/syscall.h>\n"
	  "#include <sys/types.h>\n"
	  "#include <unistd.h>\n"
	  "\n"
	  "/* The directory the ops run in (argv[1]), as an O_DIRECTORY descriptor:\n"
	  " * every path is relative to it, through the *at() calls. */\n"
	  "static int mnt = -1;\n"
	  "static const char *mntpath;\n"
	  "/* A write that wrote part of its bytes, then failed (the disk full): why. */\n"
	  "static int short_err;\n"
	  "\n"
	  "/* Open files: every descriptor ever opened under a name, newest last, and\n"
	  " * what it was opened for. A workload's files stay open from their first\n"
	  " * use until `close P` or the end, as an application's would. */\n"
	  "enum fkind { F_RW, F_RO, F_DIR, F_DIRECT };\n"
	  "enum want { W_CREATE, W_RW, W_ANY, W_DIRECT };\n"
	  "static struct ofile {\n"
	  "\tchar *path;\n"
	  "\tint fd;\n"
	  "\tenum fkind kind;\n"
	  "} files[4096];\n"
	  "static size_t nfiles;\n"
	  "\n"
	  "static const char *errno_name(int e)\n"
	  "{\n"
	  "\tstatic const struct { int e; const char *n; } names[] = {\n"
	  "\t\t{ EPERM, \"EPERM\" }, { ENOENT, \"ENOENT\" }, { EIO, \"EIO\" }, { ENXIO, \"ENXIO\" },\n"
	  "\t\t{ E2BIG, \"E2BIG\" }, { EBADF, \"EBADF\" }, { EAGAIN, \"EAGAIN\" }, { ENOMEM, \"ENOMEM\" },\n"
	  "\t\t{ EACCES, \"EACCES\" }, { EFAULT, \"EFAULT\" }, { EBUSY, \"EBUSY\" }, { EEXIST, \"EEXIST\" },\n"
	  "\t\t{ EXDEV, \"EXDEV\" }, { ENODEV, \"ENODEV\" }, { ENOTDIR, \"ENOTDIR\" }, { EISDIR, \"EISDIR\" },\n"
	  "\t\t{ EINVAL, \"EINVAL\" }, { ENFILE, \"ENFILE\" }, { EMFILE, \"EMFILE\" }, { ETXTBSY, \"ETXTBSY\" },\n"
	  "\t\t{ EFBIG, \"EFBIG\" }, { ENOSPC, \"ENOSPC\" }, { ESPIPE, \"ESPIPE\" }, { EROFS, \"EROFS\" },\n"
	  "\t\t{ EMLINK, \"EMLINK\" }, { ERANGE, \"ERANGE\" }, { ENAMETOOLONG, \"ENAMETOOLONG\" },\n"
	  "\t\t{ ENOSYS, \"ENOSYS\" }, { ENOTEMPTY, \"ENOTEMPTY\" }, { ELOOP, \"ELOOP\" }, { ENODATA, \"ENODATA\" },\n"
	  "\t\t{ EOVERFLOW, \"EOVERFLOW\" }, { EOPNOTSUPP, \"EOPNOTSUPP\" }, { EDQUOT, \"EDQUOT\" },\n"
	  "\t\t{ EINTR, \"EINTR\" }, { EUCLEAN, \"EUCLEAN\" },\n"
	  "\t};\n"
	  "\tstatic char buf[24];\n"
	  "\tfor (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)\n"
	  "\t\tif (names[i].e == e)\n"
	  "\t\t\treturn names[i].n;\n"
	  "\tsnprintf(buf, sizeof(buf), \"errno %d\", e);\n"
	  "\treturn buf;\n"
	  "}\n"
	  "\n"
	  "/* One line per op, as crashlab stores an op's result: op id, the return\n"
	  " * value, errno (0 when none), its name, the op. */\n"
	  "static void report(int id, long ret, const char *text)\n"
	  "{\n"
	  "\tint e = errno;\n"
	  "\tint err = ret < 0 ? (e ? e : EIO) : short_err;\n"
	  "\tprintf(\"%d\\t%ld\\t%d\\t%s\\t%s\\n\", id, ret, err, err ? errno_name(err) : \"-\", text);\n"
	  "\tfflush(stdout);\n"
	  "\tshort_err = 0;\n"
	  "\terrno = 0;\n"
	  "}\n"
	  "\n"
	  "static int add_file(const char *path, int fd, enum fkind kind)\n"
	  "{\n"
	  "\tif (nfiles == sizeof(files) / sizeof(files[0])) {\n"
	  "\t\terrno = EMFILE;\n"
	  "\t\treturn -1;\n"
	  "\t}\n"
	  "\tfiles[nfiles].path = strdup(path);\n"
	  "\tfiles[nfiles].fd = fd;\n"
	  "\tfiles[nfiles].kind = kind;\n"
	  "\tnfiles++;\n"
	  "\treturn 0;\n"
	  "}\n"
	  "\n"
	  "static int fits(enum fkind k, enum want w)\n"
	  "{\n"
	  "\tif (w == W_CREATE || w == W_RW)\n"
	  "\t\treturn k == F_RW;\n"
	  "\tif (w == W_ANY)\n"
	  "\t\treturn k != F_DIRECT;\n"
	  "\treturn k == F_DIRECT;\n"
	  "}\n"
	  "\n"
	  "/* The newest descriptor opened as path that fits w, if path still names\n"
	  " * its inode; else -1. */\n"
	  "static int cached_fd(const char *path, enum want w)\n"
	  "{\n"
	  "\tfor (size_t i = nfiles; i-- > 0;) {\n"
	  "\t\tstruct stat now, was;\n"
	  "\t\tif (strcmp(files[i].path, path) || !fits(files[i].kind, w))\n"
	  "\t\t\tcontinue;\n"
	  "\t\tif (fstatat(mnt, path, &now, 0) < 0 || fstat(files[i].fd, &was) < 0)\n"
	  "\t\t\treturn -1;\n"
	  "\t\tif (now.st_dev != was.st_dev || now.st_ino != was.st_ino)\n"
	  "\t\t\treturn -1;\n"
	  "\t\treturn files[i].fd;\n"
	  "\t}\n"
	  "\treturn -1;\n"
	  "}\n"
	  "\n"
	  "/* A descriptor for path fit for w: the cached one, or a fresh open (kept). */\n"
	  "static int get_fd(const char *path, enum want w, mode_t mode)\n"
	  "{\n"
	  "\tint fd = cached_fd(path, w);\n"
	  "\tenum fkind kind = F_RW;\n"
	  "\tstruct stat st;\n"
	  "\tif (fd >= 0)\n"
	  "\t\treturn fd;\n"
	  "\tswitch (w) {\n"
	  "\tcase W_CREATE:\n"
	  "\t\tfd = openat(mnt, path, O_RDWR | O_CREAT | O_CLOEXEC, mode);\n"
	  "\t\tbreak;\n"
	  "\tcase W_RW:\n"
	  "\t\tfd = openat(mnt, path, O_RDWR | O_CLOEXEC);\n"
	  "\t\tbreak;\n"
	  "\tcase W_DIRECT:\n"
	  "\t\tkind = F_DIRECT;\n"
	  "\t\tfd = openat(mnt, path, O_RDWR | O_CREAT | O_DIRECT | O_CLOEXEC, mode);\n"
	  "\t\tbreak;\n"
	  "\tcase W_ANY:\n"
	  "\t\tif (fstatat(mnt, path, &st, 0) == 0 && S_ISDIR(st.st_mode)) {\n"
	  "\t\t\tkind = F_DIR;\n"
	  "\t\t\tfd = openat(mnt, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);\n"
	  "\t\t\tbreak;\n"
	  "\t\t}\n"
	  "\t\tfd = openat(mnt, path, O_RDWR | O_CLOEXEC | O_NONBLOCK);\n"
	  "\t\tif (fd < 0 && (errno == EACCES || errno == EROFS || errno == ETXTBSY || errno == EPERM)) {\n"
	  "\t\t\tkind = F_RO;\n"
	  "\t\t\tfd = openat(mnt, path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);\n"
	  "\t\t}\n"
	  "\t\tif (fd >= 0)\n"
	  "\t\t\tfcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);\n"
	  "\t\tbreak;\n"
	  "\t}\n"
	  "\tif (fd < 0)\n"
	  "\t\treturn -1;\n"
	  "\tif (add_file(path, fd, kind) < 0) {\n"
	  "\t\tclose(fd);\n"
	  "\t\treturn -1;\n"
	  "\t}\n"
	  "\treturn fd;\n"
	  "}\n" },
	{ "pattern",
	  "/* crashlab's write pattern: byte x of a file written by op `id` with a\n"
	  " * length is byte x % 16 of the record \"CLWL\" | le32 id | le64 x / 4096, so\n"
	  " * every 16 bytes name the op and the 4 KiB block that wrote them. */\n"
	  "static void pattern(unsigned id, unsigned long long off, unsigned char *buf, size_t len)\n"
	  "{\n"
	  "\tfor (size_t i = 0; i < len; i++) {\n"
	  "\t\tunsigned long long x = off + i, block = x / 4096;\n"
	  "\t\tunsigned char rec[16] = { 'C', 'L', 'W', 'L' };\n"
	  "\t\tfor (int k = 0; k < 4; k++)\n"
	  "\t\t\trec[4 + k] = (unsigned char)(id >> (8 * k));\n"
	  "\t\tfor (int k = 0; k < 8; k++)\n"
	  "\t\t\trec[8 + k] = (unsigned char)(block >> (8 * k));\n"
	  "\t\tbuf[i] = rec[x % 16];\n"
	  "\t}\n"
	  "}\n" },
	{ "write",
	  "#define CHUNK (1u << 20)\n"
	  "\n"
	  "/* len bytes at off through fd: text (when not NULL) or op id's pattern,\n"
	  " * in pieces of at most CHUNK; appending: write() on an O_APPEND fd. The\n"
	  " * bytes written, or -1 when none were (short_err: why a later piece failed). */\n"
	  "static long write_data(int fd, unsigned id, const char *text, unsigned long long off,\n"
	  "\t\t       unsigned long long len, int appending, unsigned char *buf, size_t bufsize)\n"
	  "{\n"
	  "\tunsigned long long done = 0;\n"
	  "\tdo {\n"
	  "\t\tsize_t n = len - done > bufsize ? bufsize : (size_t)(len - done);\n"
	  "\t\tconst void *src = buf;\n"
	  "\t\tssize_t w;\n"
	  "\t\tif (text)\n"
	  "\t\t\tsrc = text + done;\n"
	  "\t\telse\n"
	  "\t\t\tpattern(id, off + done, buf, n);\n"
	  "\t\tw = appending ? write(fd, src, n) : pwrite(fd, src, n, (off_t)(off + done));\n"
	  "\t\tif (w < 0) {\n"
	  "\t\t\tif (errno == EINTR)\n"
	  "\t\t\t\tcontinue;\n"
	  "\t\t\tif (!done)\n"
	  "\t\t\t\treturn -1;\n"
	  "\t\t\tshort_err = errno;\n"
	  "\t\t\treturn (long)done;\n"
	  "\t\t}\n"
	  "\t\tdone += (unsigned long long)w;\n"
	  "\t\tif (w == 0) {\n"
	  "\t\t\tshort_err = EIO;\n"
	  "\t\t\tbreak;\n"
	  "\t\t}\n"
	  "\t} while (done < len);\n"
	  "\treturn (long)done;\n"
	  "}\n" },
	{ "buffered",
	  "/* write P [OFF] LEN|\"TEXT\" and append P LEN|\"TEXT\": pwrite (or write with\n"
	  " * O_APPEND set) through the file's descriptor, created 0644 if needed. */\n"
	  "static long do_write(unsigned id, const char *path, long long off, const char *text, unsigned long long len,\n"
	  "\t\t     int appending)\n"
	  "{\n"
	  "\tint fd = get_fd(path, W_CREATE, 0644), oldfl = -1;\n"
	  "\tsize_t bufsize = CHUNK;\n"
	  "\tunsigned char *buf = NULL;\n"
	  "\tstruct stat st;\n"
	  "\tlong r;\n"
	  "\tint e;\n"
	  "\tif (fd < 0)\n"
	  "\t\treturn -1;\n"
	  "\tif (!text) {\n"
	  "\t\tbufsize = len < CHUNK ? (size_t)len : CHUNK;\n"
	  "\t\tbuf = malloc(bufsize ? bufsize : 1);\n"
	  "\t\tif (!buf) {\n"
	  "\t\t\terrno = ENOMEM;\n"
	  "\t\t\treturn -1;\n"
	  "\t\t}\n"
	  "\t}\n"
	  "\tif (appending) {\n"
	  "\t\tif (fstat(fd, &st) < 0 || (oldfl = fcntl(fd, F_GETFL)) < 0 || fcntl(fd, F_SETFL, oldfl | O_APPEND) < 0) {\n"
	  "\t\t\tfree(buf);\n"
	  "\t\t\treturn -1;\n"
	  "\t\t}\n"
	  "\t\toff = st.st_size;\n"
	  "\t}\n"
	  "\tr = write_data(fd, id, text, (unsigned long long)off, len, appending, buf, bufsize ? bufsize : 1);\n"
	  "\te = errno;\n"
	  "\tif (appending)\n"
	  "\t\tfcntl(fd, F_SETFL, oldfl);\n"
	  "\tfree(buf);\n"
	  "\terrno = e;\n"
	  "\treturn r;\n"
	  "}\n" },
	{ "dwrite",
	  "/* dwrite P [OFF] LEN: O_DIRECT, from a 4 KiB-aligned buffer. */\n"
	  "static long do_dwrite(unsigned id, const char *path, long long off, unsigned long long len)\n"
	  "{\n"
	  "\tint fd = get_fd(path, W_DIRECT, 0644), e;\n"
	  "\tsize_t bufsize = len < CHUNK ? (size_t)len : CHUNK;\n"
	  "\tvoid *buf;\n"
	  "\tlong r;\n"
	  "\tif (fd < 0)\n"
	  "\t\treturn -1;\n"
	  "\te = posix_memalign(&buf, 4096, bufsize ? bufsize : 4096);\n"
	  "\tif (e) {\n"
	  "\t\terrno = e;\n"
	  "\t\treturn -1;\n"
	  "\t}\n"
	  "\tr = write_data(fd, id, NULL, (unsigned long long)off, len, 0, buf, bufsize ? bufsize : 4096);\n"
	  "\te = errno;\n"
	  "\tfree(buf);\n"
	  "\terrno = e;\n"
	  "\treturn r;\n"
	  "}\n" },
	{ "mmapwrite",
	  "#include <setjmp.h>\n"
	  "#include <signal.h>\n"
	  "#include <sys/mman.h>\n"
	  "\n"
	  "static sigjmp_buf bus_jump;\n"
	  "\n"
	  "static void on_sigbus(int sig)\n"
	  "{\n"
	  "\t(void)sig;\n"
	  "\tsiglongjmp(bus_jump, 1);\n"
	  "}\n"
	  "\n"
	  "/* mmapwrite P [OFF] LEN|\"TEXT\": extend the file to OFF + LEN if shorter,\n"
	  " * map it shared, store the bytes, unmap; a SIGBUS is -1, EFAULT. */\n"
	  "static long do_mmapwrite(unsigned id, const char *path, long long off, const char *text, unsigned long long len)\n"
	  "{\n"
	  "\tint fd = get_fd(path, W_CREATE, 0644);\n"
	  "\tunsigned long long page = (unsigned long long)sysconf(_SC_PAGESIZE), moff;\n"
	  "\tstruct sigaction sa, old;\n"
	  "\tvolatile long r = (long)len;\n"
	  "\tunsigned char *m;\n"
	  "\tsize_t mlen;\n"
	  "\tstruct stat st;\n"
	  "\tif (fd < 0 || fstat(fd, &st) < 0)\n"
	  "\t\treturn -1;\n"
	  "\tif ((unsigned long long)st.st_size < off + len && ftruncate(fd, (off_t)(off + len)) < 0)\n"
	  "\t\treturn -1;\n"
	  "\tif (len == 0)\n"
	  "\t\treturn 0;\n"
	  "\tmoff = (unsigned long long)off / page * page;\n"
	  "\tmlen = (size_t)(off + len - moff);\n"
	  "\tm = mmap(NULL, mlen, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)moff);\n"
	  "\tif (m == MAP_FAILED)\n"
	  "\t\treturn -1;\n"
	  "\tmemset(&sa, 0, sizeof(sa));\n"
	  "\tsa.sa_handler = on_sigbus;\n"
	  "\tsigemptyset(&sa.sa_mask);\n"
	  "\tsigaction(SIGBUS, &sa, &old);\n"
	  "\tif (sigsetjmp(bus_jump, 1) == 0) {\n"
	  "\t\tif (text)\n"
	  "\t\t\tmemcpy(m + (off - moff), text, (size_t)len);\n"
	  "\t\telse\n"
	  "\t\t\tpattern(id, (unsigned long long)off, m + (off - moff), (size_t)len);\n"
	  "\t} else {\n"
	  "\t\tr = -1;\n"
	  "\t}\n"
	  "\tsigaction(SIGBUS, &old, NULL);\n"
	  "\tmunmap(m, mlen);\n"
	  "\tif (r < 0)\n"
	  "\t\terrno = EFAULT;\n"
	  "\treturn r;\n"
	  "}\n" },
	{ "fullpath",
	  "static char *full_path(const char *p)\n"
	  "{\n"
	  "\tchar *s = malloc(strlen(mntpath) + strlen(p) + 2);\n"
	  "\tif (!s) {\n"
	  "\t\tperror(\"malloc\");\n"
	  "\t\texit(2);\n"
	  "\t}\n"
	  "\tsprintf(s, \"%s/%s\", mntpath, p);\n"
	  "\treturn s;\n"
	  "}\n" },
	{ "truncate",
	  "/* truncate P SIZE: ftruncate on the file's descriptor if it is open, else truncate(2). */\n"
	  "static long do_truncate(const char *path, long long size)\n"
	  "{\n"
	  "\tint fd = cached_fd(path, W_RW);\n"
	  "\tchar *p;\n"
	  "\tlong r;\n"
	  "\tint e;\n"
	  "\tif (fd >= 0)\n"
	  "\t\treturn ftruncate(fd, (off_t)size);\n"
	  "\tp = full_path(path);\n"
	  "\tr = truncate(p, (off_t)size);\n"
	  "\te = errno;\n"
	  "\tfree(p);\n"
	  "\terrno = e;\n"
	  "\treturn r;\n"
	  "}\n" },
	{ "falloc",
	  "#include <linux/falloc.h>\n"
	  "\n"
	  "/* falloc P MODE OFF LEN: fallocate(2) with MODE's flags. */\n"
	  "static long do_falloc(const char *path, int mode, long long off, long long len)\n"
	  "{\n"
	  "\tint fd = get_fd(path, W_RW, 0);\n"
	  "\tif (fd < 0)\n"
	  "\t\treturn -1;\n"
	  "\treturn fallocate(fd, mode, (off_t)off, (off_t)len);\n"
	  "}\n" },
	{ "rename",
	  "#ifndef RENAME_NOREPLACE\n"
	  "#define RENAME_NOREPLACE (1 << 0)\n"
	  "#endif\n"
	  "#ifndef RENAME_EXCHANGE\n"
	  "#define RENAME_EXCHANGE (1 << 1)\n"
	  "#endif\n"
	  "/* RENAME_BARRIER: the flag of crashlab's kernel series (an unpatched kernel says EINVAL). */\n"
	  "#ifndef RENAME_BARRIER\n"
	  "#define RENAME_BARRIER (1 << 3)\n"
	  "#endif\n"
	  "\n"
	  "static long do_rename(const char *from, const char *to, unsigned flags)\n"
	  "{\n"
	  "\treturn syscall(SYS_renameat2, mnt, from, mnt, to, flags);\n"
	  "}\n" },
	{ "xattr",
	  "#include <sys/xattr.h>\n"
	  "\n"
	  "/* setxattr P NAME VALUE / removexattr P NAME, on the link itself (lsetxattr). */\n"
	  "static long do_xattr(const char *path, const char *name, const char *value, size_t len, int remove)\n"
	  "{\n"
	  "\tchar *p = full_path(path);\n"
	  "\tlong r = remove ? lremovexattr(p, name) : lsetxattr(p, name, value, len, 0);\n"
	  "\tint e = errno;\n"
	  "\tfree(p);\n"
	  "\terrno = e;\n"
	  "\treturn r;\n"
	  "}\n" },
	{ "close",
	  "/* close P: every descriptor opened as P, current or stale; EBADF when none. */\n"
	  "static long do_close(const char *path)\n"
	  "{\n"
	  "\tsize_t k = 0;\n"
	  "\tint closed = 0, failed = 0, e = 0;\n"
	  "\tfor (size_t i = 0; i < nfiles; i++) {\n"
	  "\t\tif (strcmp(files[i].path, path)) {\n"
	  "\t\t\tfiles[k++] = files[i];\n"
	  "\t\t\tcontinue;\n"
	  "\t\t}\n"
	  "\t\tif (close(files[i].fd) < 0 && !failed) {\n"
	  "\t\t\tfailed = 1;\n"
	  "\t\t\te = errno;\n"
	  "\t\t}\n"
	  "\t\tfree(files[i].path);\n"
	  "\t\tclosed++;\n"
	  "\t}\n"
	  "\tnfiles = k;\n"
	  "\tif (!closed) {\n"
	  "\t\terrno = EBADF;\n"
	  "\t\treturn -1;\n"
	  "\t}\n"
	  "\tif (failed) {\n"
	  "\t\terrno = e;\n"
	  "\t\treturn -1;\n"
	  "\t}\n"
	  "\treturn 0;\n"
	  "}\n" },
	{ "sleep",
	  "#include <time.h>\n"
	  "\n"
	  "static long do_sleep(long long ms)\n"
	  "{\n"
	  "\tstruct timespec ts = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000L };\n"
	  "\twhile (nanosleep(&ts, &ts) < 0)\n"
	  "\t\tif (errno != EINTR)\n"
	  "\t\t\treturn -1;\n"
	  "\treturn 0;\n"
	  "}\n" },
	{ "fdop",
	  "#include <linux/fiemap.h>\n"
	  "#include <linux/fs.h>\n"
	  "#include <sys/ioctl.h>\n"
	  "\n"
	  "/* The barrier calls of crashlab's kernel series (kernel/0002): fbarrier(fd,\n"
	  " * flags) = " SERIES_NR_FBARRIER " and fdatabarrier(fd, flags) = " SERIES_NR_FDATABARRIER ". No upstream kernel uses\n"
	  " * these numbers (the series keeps them hundreds above upstream's highest),\n"
	  " * so a kernel without the calls fails them with ENOSYS and no other call is\n"
	  " * made by mistake. A kernel that numbers them otherwise: give its numbers\n"
	  " * as FBARRIER_NR / FDATABARRIER_NR in the environment (-1: fail with ENOSYS\n"
	  " * without a call). */\n"
	  "static long barrier_nr(int data)\n"
	  "{\n"
	  "\tconst char *env = getenv(data ? \"FDATABARRIER_NR\" : \"FBARRIER_NR\");\n"
	  "\tif (env && *env)\n"
	  "\t\treturn atol(env);\n"
	  "\treturn data ? " SERIES_NR_FDATABARRIER " : " SERIES_NR_FBARRIER ";\n"
	  "}\n"
	  "\n"
	  "enum fdop { FD_FSYNC, FD_FDATASYNC, FD_SFR, FD_FBARRIER, FD_FDATABARRIER, FD_FIEMAP_SYNC };\n"
	  "\n"
	  "/* The ops on a descriptor of an existing file or directory. */\n"
	  "static long do_fd_op(const char *path, enum fdop what, long long off, long long len, unsigned sfr_flags)\n"
	  "{\n"
	  "\tint fd = get_fd(path, W_ANY, 0);\n"
	  "\tstruct fiemap fm;\n"
	  "\tlong nr;\n"
	  "\tif (fd < 0)\n"
	  "\t\treturn -1;\n"
	  "\tswitch (what) {\n"
	  "\tcase FD_FSYNC:\n"
	  "\t\treturn fsync(fd);\n"
	  "\tcase FD_FDATASYNC:\n"
	  "\t\treturn fdatasync(fd);\n"
	  "\tcase FD_SFR:\n"
	  "\t\treturn sync_file_range(fd, (off_t)off, (off_t)len, sfr_flags);\n"
	  "\tcase FD_FBARRIER:\n"
	  "\tcase FD_FDATABARRIER:\n"
	  "\t\tnr = barrier_nr(what == FD_FDATABARRIER);\n"
	  "\t\tif (nr < 0) {\n"
	  "\t\t\terrno = ENOSYS;\n"
	  "\t\t\treturn -1;\n"
	  "\t\t}\n"
	  "\t\treturn syscall(nr, fd, 0);\n"
	  "\tcase FD_FIEMAP_SYNC:\n"
	  "\t\tmemset(&fm, 0, sizeof(fm));\n"
	  "\t\tfm.fm_length = FIEMAP_MAX_OFFSET;\n"
	  "\t\tfm.fm_flags = FIEMAP_FLAG_SYNC;\n"
	  "\t\treturn ioctl(fd, FS_IOC_FIEMAP, &fm);\n"
	  "\t}\n"
	  "\terrno = EINVAL;\n"
	  "\treturn -1;\n"
	  "}\n" },
};

/* ------------------------------------------------------------------ */
/* Shared */

static char *op_line(const struct wl_op *op)
{
	int len = wl_format(op, NULL, 0);
	char *t = xmalloc((size_t)len + 1);
	wl_format(op, t, (size_t)len + 1);
	return t;
}

/* bytes as a C string literal, every byte outside printable ASCII (and
 * '"', '\\', '?') as an octal escape */
static void c_literal(struct sbuf *out, const char *s, size_t n)
{
	sbuf_adds(out, "\"");
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\' && c != '?')
			sbuf_add(out, &s[i], 1);
		else
			sbuf_addf(out, "\\%03o", c);
	}
	sbuf_adds(out, "\"");
}

static void c_str(struct sbuf *out, const char *s)
{
	c_literal(out, s ? s : "", s ? strlen(s) : 0);
}

/* A comment's text: no "*" followed by "/" can end it early, nothing but printable ASCII. */
static void comment_text(struct sbuf *out, const char *s)
{
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '*' && s[1] == '/')
			sbuf_adds(out, "* ");
		else if (c < 0x20 || c >= 0x7f)
			sbuf_adds(out, "?");
		else
			sbuf_add(out, s, 1);
	}
}

static const char *or_default(const char *s)
{
	return s && *s ? s : "(defaults)";
}

/* ------------------------------------------------------------------ */
/* Notes */

void export_notes(struct sbuf *out, const struct export_src *x, const char *what)
{
	const struct run_info *r = x->run;
	const struct fsrun *f = x->fr;
	const struct state_result *s = x->st;
	sbuf_addf(out, "%s\n\n", what);
	sbuf_addf(out, "from        crashlab run %" PRId64 ", file system %s, crash state %d\n", r->id, f->fs, s->idx);
	sbuf_addf(out, "workload    %s\n", r->workload_file ? r->workload_file : "-");
	sbuf_addf(out, "kernel      %s\n", r->kernel_version ? r->kernel_version : "-");
	sbuf_addf(out, "mkfs        %s %s\n", f->fs, or_default(f->mkfs_opts));
	sbuf_addf(out, "mount       -t %s -o %s\n", f->fs, f->mount_opts && *f->mount_opts ? f->mount_opts : "defaults");
	if (f->ops.overlay)
		sbuf_addf(out, "overlay     -t overlay -o lowerdir=M/%s,upperdir=M/%s,workdir=M/%s,%s (M: where the disk is "
			  "mounted; the nodes below are its merged view)\n", WL_OVERLAY_LOWER, WL_OVERLAY_UPPER,
			  WL_OVERLAY_WORK, WL_OVERLAY_OPTS);
	sbuf_addf(out, "disk        %" PRId64 " bytes\n", f->image_size);
	sbuf_addf(out, "state       %s (%s), log position %" PRId64 "\n", s->kind ? s->kind : "-",
		  s->spec ? s->spec : "-", s->point);
	if (s->last_completed_op)
		sbuf_addf(out, "crash       after op %d had returned (the last op completed)\n", s->last_completed_op);
	else
		sbuf_addf(out, "crash       before any op of [run] had returned\n");
	sbuf_addf(out, "observed    %s, fsck %s, %" PRId64 " nodes (tree hash %s)\n",
		  s->check.mount_ok ? "mounted" : "did not mount",
		  s->check.fsck_status < 0 ? "not run" : s->check.fsck_clean ? "clean" : "complained", s->n_nodes,
		  s->check.tree_hash[0] ? s->check.tree_hash : "-");
	sbuf_adds(out, "\nops (as the recording carried them out)\n");
	for (size_t i = 0; f->res && i < f->ops.n; i++) {
		const struct wl_op *op = &f->ops.ops[i];
		char *t = op_line(op);
		int done = f->res[i].log_pos <= s->point;
		sbuf_addf(out, "  %4d  %-5s  %-13s  ret %" PRId64 "%s%s  %s\n", op->id, op->section ? "run" : "setup",
			  done ? "completed" : "not completed", f->res[i].ret, f->res[i].err ? ", errno " : "",
			  f->res[i].err ? strerrorname_np(f->res[i].err) ? strerrorname_np(f->res[i].err) : "?" : "", t);
		free(t);
	}
	int any = 0;
	for (size_t i = 0; i < s->judge.n; i++) {
		const struct verdict *v = &s->judge.v[i];
		if (v->kind != V_LOST && v->kind != V_BROKEN)
			continue;
		if (!any)
			sbuf_addf(out, "\nfindings (what was promised and not kept, under every model; the run's own\n"
				  "models for %s: %s)\n", f->fs, f->models && *f->models ? f->models : "-");
		any = 1;
		sbuf_addf(out, "  %-6s [%s] %s\n", verdict_name(v->kind), model_name(v->model), v->reason);
		if (v->cite[0])
			sbuf_addf(out, "         promised by: %s\n", v->cite);
	}
	if (!any)
		sbuf_adds(out, "\nfindings: none in this state (no LOST promise, no broken rule)\n");
}

/* ------------------------------------------------------------------ */
/* The C program */

static unsigned chunk_bit(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(chunks); i++)
		if (!strcmp(chunks[i].name, name))
			return 1u << i;
	BUG("no runtime piece '%s'", name);
}

static unsigned chunks_for(const struct wl_op *op)
{
	switch (op->kind) {
	case WL_WRITE:
	case WL_APPEND:
		return chunk_bit("pattern") | chunk_bit("write") | chunk_bit("buffered");
	case WL_DWRITE:
		return chunk_bit("pattern") | chunk_bit("write") | chunk_bit("dwrite");
	case WL_MMAPWRITE:
		return chunk_bit("pattern") | chunk_bit("mmapwrite");
	case WL_TRUNCATE:
		return chunk_bit("fullpath") | chunk_bit("truncate");
	case WL_FALLOC:
		return chunk_bit("falloc");
	case WL_RENAME:
		return chunk_bit("rename");
	case WL_SETXATTR:
	case WL_REMOVEXATTR:
		return chunk_bit("fullpath") | chunk_bit("xattr");
	case WL_CLOSE:
		return chunk_bit("close");
	case WL_SLEEP:
		return chunk_bit("sleep");
	case WL_FSYNC:
	case WL_FDATASYNC:
	case WL_SYNC_FILE_RANGE:
	case WL_FBARRIER:
	case WL_FDATABARRIER:
	case WL_FIEMAP_SYNC:
		return chunk_bit("fdop");
	default:
		return 0;
	}
}

static const char *const falloc_flags[] = {
	"0", "FALLOC_FL_KEEP_SIZE", "FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE", "FALLOC_FL_ZERO_RANGE",
	"FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE",
};
static const char *const rename_flags[] = { "0", "RENAME_NOREPLACE", "RENAME_EXCHANGE", "RENAME_BARRIER" };

static int64_t off_of(const struct wl_op *op)
{
	return op->off > 0 ? op->off : 0;
}

static uint64_t len_of(const struct wl_op *op)
{
	if (op->data)
		return op->data_len;
	return op->len > 0 ? (uint64_t)op->len : 0;
}

static void c_data(struct sbuf *out, const struct wl_op *op)
{
	if (op->data)
		c_literal(out, op->data, op->data_len);
	else
		sbuf_adds(out, "NULL");
}

/* The call that carries out op, as an expression. */
static void c_call(struct sbuf *o, const struct wl_op *op)
{
	switch (op->kind) {
	case WL_MKDIR:
		sbuf_adds(o, "mkdirat(mnt, ");
		c_str(o, op->path);
		sbuf_addf(o, ", 0%o)", op->mode);
		break;
	case WL_RMDIR:
		sbuf_adds(o, "unlinkat(mnt, ");
		c_str(o, op->path);
		sbuf_adds(o, ", AT_REMOVEDIR)");
		break;
	case WL_CREAT:
		/* creat: O_TRUNC, the descriptor kept; its number means nothing: 0 */
		sbuf_adds(o, "(r = openat(mnt, ");
		c_str(o, op->path);
		sbuf_addf(o, ", O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0%o)) < 0 ? -1 : add_file(", op->mode);
		c_str(o, op->path);
		sbuf_adds(o, ", (int)r, F_RW)");
		break;
	case WL_WRITE:
	case WL_APPEND:
		sbuf_addf(o, "do_write(%d, ", op->id);
		c_str(o, op->path);
		sbuf_addf(o, ", %" PRId64 ", ", off_of(op));
		c_data(o, op);
		sbuf_addf(o, ", %" PRIu64 ", %d)", len_of(op), op->kind == WL_APPEND);
		break;
	case WL_DWRITE:
		sbuf_addf(o, "do_dwrite(%d, ", op->id);
		c_str(o, op->path);
		sbuf_addf(o, ", %" PRId64 ", %" PRIu64 ")", off_of(op), len_of(op));
		break;
	case WL_MMAPWRITE:
		sbuf_addf(o, "do_mmapwrite(%d, ", op->id);
		c_str(o, op->path);
		sbuf_addf(o, ", %" PRId64 ", ", off_of(op));
		c_data(o, op);
		sbuf_addf(o, ", %" PRIu64 ")", len_of(op));
		break;
	case WL_TRUNCATE:
		sbuf_adds(o, "do_truncate(");
		c_str(o, op->path);
		sbuf_addf(o, ", %" PRId64 ")", op->len);
		break;
	case WL_FALLOC:
		sbuf_adds(o, "do_falloc(");
		c_str(o, op->path);
		sbuf_addf(o, ", %s, %" PRId64 ", %" PRId64 ")",
			  op->flags >= 0 && op->flags < 5 ? falloc_flags[op->flags] : "-1", op->off, op->len);
		break;
	case WL_LINK:
		sbuf_adds(o, "linkat(mnt, ");
		c_str(o, op->path);
		sbuf_adds(o, ", mnt, ");
		c_str(o, op->path2);
		sbuf_adds(o, ", 0)");
		break;
	case WL_SYMLINK:
		sbuf_adds(o, "symlinkat(");
		c_str(o, op->path2);
		sbuf_adds(o, ", mnt, ");
		c_str(o, op->path);
		sbuf_adds(o, ")");
		break;
	case WL_RENAME:
		sbuf_adds(o, "do_rename(");
		c_str(o, op->path);
		sbuf_adds(o, ", ");
		c_str(o, op->path2);
		sbuf_addf(o, ", %s)", op->flags >= 0 && op->flags < 4 ? rename_flags[op->flags] : "0");
		break;
	case WL_UNLINK:
		sbuf_adds(o, "unlinkat(mnt, ");
		c_str(o, op->path);
		sbuf_adds(o, ", 0)");
		break;
	case WL_SETXATTR:
	case WL_REMOVEXATTR:
		sbuf_adds(o, "do_xattr(");
		c_str(o, op->path);
		sbuf_adds(o, ", ");
		c_str(o, op->name);
		sbuf_adds(o, ", ");
		if (op->kind == WL_SETXATTR)
			c_literal(o, op->value ? op->value : "", op->value ? op->value_len : 0);
		else
			sbuf_adds(o, "NULL");
		sbuf_addf(o, ", %zu, %d)", op->kind == WL_SETXATTR && op->value ? op->value_len : 0,
			  op->kind == WL_REMOVEXATTR);
		break;
	case WL_CHMOD:
		sbuf_adds(o, "fchmodat(mnt, ");
		c_str(o, op->path);
		sbuf_addf(o, ", 0%o, 0)", op->mode);
		break;
	case WL_FSYNC:
	case WL_FDATASYNC:
	case WL_SYNC_FILE_RANGE:
	case WL_FBARRIER:
	case WL_FDATABARRIER:
	case WL_FIEMAP_SYNC: {
		const char *what = op->kind == WL_FSYNC ? "FD_FSYNC" : op->kind == WL_FDATASYNC ? "FD_FDATASYNC"
				 : op->kind == WL_SYNC_FILE_RANGE ? "FD_SFR" : op->kind == WL_FBARRIER ? "FD_FBARRIER"
				 : op->kind == WL_FDATABARRIER ? "FD_FDATABARRIER" : "FD_FIEMAP_SYNC";
		sbuf_adds(o, "do_fd_op(");
		c_str(o, op->path);
		sbuf_addf(o, ", %s, ", what);
		if (op->kind == WL_SYNC_FILE_RANGE) {
			struct sbuf fl = SBUF_INIT;
			if (op->flags & WL_SFR_WAIT_BEFORE)
				sbuf_addf(&fl, "%sSYNC_FILE_RANGE_WAIT_BEFORE", fl.len ? " | " : "");
			if (op->flags & WL_SFR_WRITE)
				sbuf_addf(&fl, "%sSYNC_FILE_RANGE_WRITE", fl.len ? " | " : "");
			if (op->flags & WL_SFR_WAIT_AFTER)
				sbuf_addf(&fl, "%sSYNC_FILE_RANGE_WAIT_AFTER", fl.len ? " | " : "");
			sbuf_addf(o, "%" PRId64 ", %" PRId64 ", %s)", off_of(op), op->len > 0 ? op->len : 0,
				  fl.len ? fl.buf : "0");
			sbuf_free(&fl);
		} else {
			sbuf_adds(o, "0, 0, 0)");
		}
		break;
	}
	case WL_SYNC:
		sbuf_adds(o, "(sync(), 0)");
		break;
	case WL_SYNCFS:
		sbuf_adds(o, "syncfs(mnt)");
		break;
	case WL_CLOSE:
		sbuf_adds(o, "do_close(");
		c_str(o, op->path);
		sbuf_adds(o, ")");
		break;
	case WL_SLEEP:
		sbuf_addf(o, "do_sleep(%" PRId64 ")", op->len > 0 ? op->len : 0);
		break;
	case WL_MARK:
	case WL_NKINDS:
		sbuf_adds(o, "0");
		break;
	}
}

void export_c(struct sbuf *out, const struct export_src *x, const char *name)
{
	const struct fsrun *f = x->fr;
	const struct wl_workload *w = &f->ops;
	unsigned need = chunk_bit("base");
	for (size_t i = 0; i < w->n; i++)
		need |= chunks_for(&w->ops[i]);

	sbuf_addf(out, "/*\n * %s.c - the workload of crashlab run %" PRId64 " (", name, x->run->id);
	comment_text(out, x->run->workload_file);
	sbuf_addf(out, "), fs run %s, made\n"
		  " * with the system calls crashlab's in-guest agent makes, in the same order.\n"
		  " *\n"
		  " *   cc -Wall -O2 -o %s %s.c          (add -static for a minimal guest)\n"
		  " *   mkfs.%s %s DEV && mount -t %s -o %s DEV /mnt && ./%s /mnt\n"
		  " *\n"
		  " * One line per op, tab-separated: the op's id, the system call's return\n"
		  " * value, errno (0 when none; a write that wrote part of its bytes and then\n"
		  " * failed has both), errno's name, the op. The first three are what\n"
		  " * crashlab stored for the op (its ops table: op_id, ret, err); %s.expected\n"
		  " * holds the stored lines, so\n"
		  " *   ./%s /mnt | cut -f1-3 | diff - <(cut -f1-3 %s.expected)\n"
		  " * compares the two. A write given as a length writes crashlab's pattern\n"
		  " * (every 16 bytes name the op and the 4 KiB block); the [setup] ops are\n"
		  " * followed by sync(), as crashlab syncs before it starts recording.\n"
		  " * Files stay open from their first use to `close` or the end, as an\n"
		  " * application's would, so fsync acts on the descriptor the data went\n"
		  " * through.\n"
		  " */\n",
		  f->fs, name, name, f->fs, or_default(f->mkfs_opts), f->fs,
		  f->mount_opts && *f->mount_opts ? f->mount_opts : "defaults", name, name, name, name);
	for (size_t i = 0; i < ARRAY_SIZE(chunks); i++)
		if (need & (1u << i))
			sbuf_addf(out, "%s\n", chunks[i].text);

	sbuf_adds(out, "int main(int argc, char **argv)\n{\n\tlong r = 0;\n\n");
	sbuf_addf(out, "\tif (argc != 2) {\n"
		  "\t\tfprintf(stderr, \"usage: %%s DIR  (a directory on a fresh %s file system)\\n\", argv[0]);\n"
		  "\t\treturn 2;\n\t}\n", f->fs);
	sbuf_adds(out, "\tmntpath = argv[1];\n"
		  "\tmnt = open(mntpath, O_RDONLY | O_DIRECTORY | O_CLOEXEC);\n"
		  "\tif (mnt < 0) {\n\t\tperror(mntpath);\n\t\treturn 1;\n\t}\n"
		  "\tumask(0); /* the modes are the workload's own */\n");
	int in_run = 0;
	for (size_t i = 0; i < w->n; i++) {
		const struct wl_op *op = &w->ops[i];
		if (op->section == WL_RUN && !in_run) {
			in_run = 1;
			sbuf_adds(out, "\n\tsync(); /* the end of [setup]: crashlab records from here */\n\n\t/* [run] */\n");
		} else if (i == 0) {
			sbuf_adds(out, "\n\t/* [setup] */\n");
		}
		char *t = op_line(op);
		sbuf_addf(out, "\t/* op %d, line %d: ", op->id, op->line);
		comment_text(out, t);
		sbuf_adds(out, " */\n\terrno = 0;\n\tr = ");
		c_call(out, op);
		sbuf_addf(out, ";\n\treport(%d, r, ", op->id);
		c_str(out, t);
		sbuf_adds(out, ");\n");
		free(t);
	}
	if (!in_run)
		sbuf_adds(out, "\n\tsync(); /* the end of [setup] */\n");
	sbuf_adds(out, "\treturn 0;\n}\n");
}

void export_c_expected(struct sbuf *out, const struct fsrun *f)
{
	for (size_t i = 0; f->res && i < f->ops.n; i++) {
		const struct op_result *r = &f->res[i];
		char *t = op_line(&f->ops.ops[i]);
		const char *n = r->err ? strerrorname_np(r->err) : "-";
		char nb[24];
		if (!n) {
			snprintf(nb, sizeof(nb), "errno %d", r->err);
			n = nb;
		}
		sbuf_addf(out, "%d\t%" PRId64 "\t%d\t%s\t%s\n", f->ops.ops[i].id, r->ret, r->err, n, t);
		free(t);
	}
}

/* ------------------------------------------------------------------ */
/* The .wl file */

void export_wl(struct sbuf *out, const struct export_src *x)
{
	sbuf_addf(out, "# exported from crashlab run %" PRId64 " (", x->run->id);
	comment_text(out, x->run->workload_file);
	sbuf_addf(out, "), file system %s, crash state %d\n", x->fr->fs, x->st->idx);
	if ((x->fr->mkfs_opts && *x->fr->mkfs_opts) || (x->fr->mount_opts && *x->fr->mount_opts)) {
		sbuf_adds(out, "# recorded with: crashlab run FILE --fs ");
		sbuf_adds(out, x->fr->fs);
		if (x->fr->mkfs_opts && *x->fr->mkfs_opts) {
			sbuf_addf(out, " --mkfs-opts '%s:", x->fr->fs);
			comment_text(out, x->fr->mkfs_opts);
			sbuf_adds(out, "'");
		}
		if (x->fr->mount_opts && *x->fr->mount_opts) {
			sbuf_addf(out, " --mount-opts %s:", x->fr->fs);
			comment_text(out, x->fr->mount_opts);
		}
		sbuf_adds(out, "\n");
	}
	const char *t = x->run->workload_text ? x->run->workload_text : "";
	if (*t) {
		sbuf_adds(out, t);
		if (t[strlen(t) - 1] != '\n')
			sbuf_adds(out, "\n");
		return;
	}
	/* no text stored: the ops as the recording ran them */
	for (size_t i = 0; i < x->fr->ops.n; i++) {
		const struct wl_op *op = &x->fr->ops.ops[i];
		if (i == 0 || op->section != x->fr->ops.ops[i - 1].section)
			sbuf_adds(out, op->section == WL_SETUP ? "[setup]\n" : "[run]\n");
		char *l = op_line(op);
		sbuf_addf(out, "%s\n", l);
		free(l);
	}
}

/* ------------------------------------------------------------------ */
/* The xfstests test */

/* Every helper of xfstests the generated test calls, each defined in
 * xfstests' common/ files (common/preamble, rc, exit, filter, dmflakey, attr). */
const char *const export_xfstests_helpers[] = {
	"_begin_fstest", "_cleanup", "_cleanup_flakey", "_require_scratch", "_require_dm_target",
	"_require_xfs_io_command", "_require_odirect", "_require_attrs", "_scratch_mkfs",
	"_require_metadata_journaling", "_init_flakey", "_scratch_mount", "_scratch_sync",
	"_flakey_drop_and_remount", "_scratch_unmount", "_exit", NULL,
};

/* The facts printed about a path after the power cut. */
enum { FACT_DATA = 1, FACT_SIZE = 2, FACT_MODE = 4, FACT_TARGET = 8 };

static int fill_byte(int op)
{
	return op % 256 ? op % 256 : 0xff;
}

/* A shell word for the path under the scratch mount. */
static void sh_path(struct sbuf *o, const char *p)
{
	sbuf_adds(o, "\"$SCRATCH_MNT\"/'");
	for (; *p; p++) {
		if (*p == '\'')
			sbuf_adds(o, "'\\''");
		else
			sbuf_add(o, p, 1);
	}
	sbuf_adds(o, "'");
}

static void sh_quote(struct sbuf *o, const char *s, size_t n)
{
	sbuf_adds(o, "'");
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '\'')
			sbuf_adds(o, "'\\''");
		else
			sbuf_add(o, &s[i], 1);
	}
	sbuf_adds(o, "'");
}

/* Text inside a shell's double quotes: '"', '$', '`' and '\\' escaped, and
 * nothing but printable ASCII. */
static void sh_dq_text(struct sbuf *o, const char *s)
{
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '$' || c == '`' || c == '\\')
			sbuf_addf(o, "\\%c", c);
		else if (c < 0x20 || c >= 0x7f)
			sbuf_adds(o, "?");
		else
			sbuf_add(o, s, 1);
	}
}

/* printf's format for bytes: every byte as an octal escape but letters and digits */
static void sh_printf_bytes(struct sbuf *o, const char *s, size_t n)
{
	sbuf_adds(o, "printf '");
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == ' ')
			sbuf_add(o, &s[i], 1);
		else
			sbuf_addf(o, "\\%03o", c);
	}
	sbuf_adds(o, "'");
}

/* One op as shell and xfs_io commands; -1 with e when they cannot express it. */
static int xfs_op(struct sbuf *o, unsigned *req, const struct wl_op *op, struct errbuf *e)
{
	const char *why = NULL;
	char fill[8];
	snprintf(fill, sizeof(fill), "0x%02x", fill_byte(op->id));
	switch (op->kind) {
	case WL_MKDIR:
		sbuf_addf(o, "mkdir -m %o ", op->mode);
		sh_path(o, op->path);
		break;
	case WL_RMDIR:
		sbuf_adds(o, "rmdir ");
		sh_path(o, op->path);
		break;
	case WL_CREAT:
		/* O_CREAT | O_TRUNC, then the workload's mode */
		sbuf_adds(o, "$XFS_IO_PROG -f -c \"truncate 0\" ");
		sh_path(o, op->path);
		sbuf_addf(o, " && chmod %o ", op->mode);
		sh_path(o, op->path);
		break;
	case WL_WRITE:
	case WL_APPEND:
	case WL_DWRITE: {
		const char *flags = op->kind == WL_APPEND ? "-f -a" : op->kind == WL_DWRITE ? "-f -d" : "-f";
		if (op->kind == WL_DWRITE)
			*req |= 1;
		if (op->data) {
			sh_printf_bytes(o, op->data, op->data_len);
			sbuf_addf(o, " > $tmp.op%d && ", op->id);
			sbuf_addf(o, "$XFS_IO_PROG %s -c \"pwrite -i $tmp.op%d %" PRId64 " %zu\" ", flags, op->id,
				  op->kind == WL_APPEND ? 0 : off_of(op), op->data_len);
		} else {
			sbuf_addf(o, "$XFS_IO_PROG %s -c \"pwrite -S %s %" PRId64 " %" PRIu64 "\" ", flags, fill,
				  op->kind == WL_APPEND ? 0 : off_of(op), len_of(op));
		}
		sh_path(o, op->path);
		break;
	}
	case WL_TRUNCATE:
		sbuf_addf(o, "$XFS_IO_PROG -c \"truncate %" PRId64 "\" ", op->len);
		sh_path(o, op->path);
		break;
	case WL_FALLOC: {
		static const char *const cmd[] = { "falloc", "falloc -k", "fpunch", "fzero", "fzero -k" };
		static const unsigned need[] = { 2, 2, 4, 8, 8 };
		if (op->flags < 0 || op->flags > 4) {
			why = "an unknown falloc mode";
			break;
		}
		*req |= need[op->flags];
		sbuf_addf(o, "$XFS_IO_PROG -c \"%s %" PRId64 " %" PRId64 "\" ", cmd[op->flags], op->off, op->len);
		sh_path(o, op->path);
		break;
	}
	case WL_LINK:
		sbuf_adds(o, "ln ");
		sh_path(o, op->path);
		sbuf_adds(o, " ");
		sh_path(o, op->path2);
		break;
	case WL_SYMLINK:
		sbuf_adds(o, "ln -s ");
		sh_quote(o, op->path2, strlen(op->path2));
		sbuf_adds(o, " ");
		sh_path(o, op->path);
		break;
	case WL_RENAME:
		if (op->flags != WL_RENAME_PLAIN) {
			why = "mv makes a plain rename only (noreplace, exchange and barrier need renameat2 flags)";
			break;
		}
		sbuf_adds(o, "mv -T ");
		sh_path(o, op->path);
		sbuf_adds(o, " ");
		sh_path(o, op->path2);
		break;
	case WL_UNLINK:
		sbuf_adds(o, "unlink ");
		sh_path(o, op->path);
		break;
	case WL_SETXATTR:
	case WL_REMOVEXATTR:
		*req |= 16;
		sbuf_adds(o, "$SETFATTR_PROG -h ");
		if (op->kind == WL_SETXATTR) {
			sbuf_adds(o, "-n ");
			sh_quote(o, op->name, strlen(op->name));
			sbuf_adds(o, " -v ");
			/* setfattr reads a 0x-prefixed value as hex: any bytes */
			sbuf_adds(o, "0x");
			for (size_t i = 0; op->value && i < op->value_len; i++)
				sbuf_addf(o, "%02x", (unsigned char)op->value[i]);
			if (!op->value || !op->value_len)
				why = "an empty xattr value (setfattr cannot set one)";
		} else {
			sbuf_adds(o, "-x ");
			sh_quote(o, op->name, strlen(op->name));
		}
		sbuf_adds(o, " ");
		sh_path(o, op->path);
		break;
	case WL_CHMOD:
		sbuf_addf(o, "chmod %o ", op->mode);
		sh_path(o, op->path);
		break;
	case WL_FSYNC:
	case WL_FDATASYNC:
		/* read-only, so a directory can be opened too */
		sbuf_addf(o, "$XFS_IO_PROG -r -c %s ", op->kind == WL_FSYNC ? "fsync" : "fdatasync");
		sh_path(o, op->path);
		break;
	case WL_SYNC_FILE_RANGE:
		*req |= 32;
		sbuf_addf(o, "$XFS_IO_PROG -c \"sync_range%s%s%s %" PRId64 " %" PRId64 "\" ",
			  op->flags & WL_SFR_WAIT_BEFORE ? " -b" : "", op->flags & WL_SFR_WRITE ? " -w" : "",
			  op->flags & WL_SFR_WAIT_AFTER ? " -a" : "", off_of(op), op->len > 0 ? op->len : 0);
		sh_path(o, op->path);
		break;
	case WL_SYNC:
		sbuf_adds(o, "sync");
		break;
	case WL_SYNCFS:
		*req |= 64;
		sbuf_adds(o, "$XFS_IO_PROG -c syncfs \"$SCRATCH_MNT\"");
		break;
	case WL_SLEEP:
		sbuf_addf(o, "sleep %" PRId64 ".%03" PRId64, op->len / 1000, op->len % 1000);
		break;
	case WL_CLOSE:
		sbuf_adds(o, ": each command above closed its file");
		break;
	case WL_MARK:
		sbuf_addf(o, ": mark %s", op->name ? op->name : "");
		break;
	case WL_MMAPWRITE:
		why = "xfs_io's mmap needs the file's size beforehand; the C export (--format c) makes the call";
		break;
	case WL_FBARRIER:
	case WL_FDATABARRIER:
		why = "xfs_io has no command for crashlab's barrier calls; the C export (--format c) makes the call";
		break;
	case WL_FIEMAP_SYNC:
		why = "xfs_io's fiemap does not set FIEMAP_FLAG_SYNC";
		break;
	case WL_NKINDS:
		why = "an unknown op";
		break;
	}
	if (why) {
		char *t = op_line(op);
		errbuf_set(e, EXIT_DATAERR, "op %d (line %d) `%s`: cannot be written as an xfstests command: %s", op->id,
			   op->line, t, why);
		free(t);
		return -1;
	}
	return 0;
}

static unsigned facts_of(enum wl_kind k)
{
	switch (k) {
	case WL_WRITE:
	case WL_APPEND:
	case WL_DWRITE:
	case WL_MMAPWRITE:
	case WL_TRUNCATE:
	case WL_FALLOC:
		return FACT_DATA;
	case WL_CHMOD:
		return FACT_MODE;
	case WL_SYMLINK:
		return FACT_TARGET;
	default:
		return 0;
	}
}

/* The bytes of a file as the test writes it, from its node in the
 * simulator's tree: NULL when they cannot be known (malloc'd, node->size bytes). */
static unsigned char *expected_bytes(const struct tree_node *n)
{
	if (n->size > (64u << 20))
		return NULL;
	unsigned char *b = xcalloc(1, n->size ? n->size : 1);
	const char *t = n->blocks ? n->blocks : "";
	int has_pattern = strchr(t, 'p') != NULL;
	for (uint64_t blk = 0; *t || blk * TREE_BLOCK < n->size; blk++) {
		size_t l = strcspn(t, ",");
		uint64_t at = blk * TREE_BLOCK;
		size_t len = at >= n->size ? 0 : n->size - at < TREE_BLOCK ? (size_t)(n->size - at) : TREE_BLOCK;
		if (l == 0 && at < n->size)
			goto unknown;
		if (t[0] == 'p') {
			memset(b + at, fill_byte(atoi(t + 1)), len);
		} else if (t[0] == 'z') {
			/* zeros */
		} else if (len && !has_pattern && n->content && n->content_len == n->size) {
			memcpy(b + at, n->content + at, len);
		} else if (len) {
			goto unknown;
		}
		t += l;
		if (*t == ',')
			t++;
	}
	return b;
unknown:
	free(b);
	return NULL;
}

static const struct tree_node *find_node(const struct tree_node *v, size_t n, const char *path)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(v[i].path, path))
			return &v[i];
	return NULL;
}

static int pick_model(const struct state_result *st, const struct fsrun *f)
{
	int order[MODEL_COUNT + 2], n = 0;
	int own = model_of_mount(f->fs, f->mount_opts);
	if (own >= 0)
		order[n++] = own;
	order[n++] = MODEL_POSIX;
	if (own != MODEL_SOMC)
		order[n++] = MODEL_SOMC;
	/* then the others; last what applications assume and no fs promises */
	for (int m = 0; m < MODEL_COUNT; m++)
		if (m != own && m != MODEL_POSIX && m != MODEL_SOMC && m != MODEL_SEQUENTIAL)
			order[n++] = m;
	order[n++] = MODEL_SEQUENTIAL;
	for (int i = 0; i < n; i++)
		for (size_t k = 0; k < st->judge.n; k++)
			if (st->judge.v[k].model == order[i] && st->judge.v[k].kind == V_LOST && st->judge.v[k].path[0])
				return order[i];
	return -1;
}

struct fact {
	char *path;
	unsigned kinds;
};

int export_xfstests(struct sbuf *script, struct sbuf *golden, const struct export_src *x, const char *number,
		    int model, int *used_model, struct errbuf *e)
{
	const struct fsrun *f = x->fr;
	const struct state_result *st = x->st;
	const struct wl_workload *w = &f->ops;
	if (!f->res || !w->n)
		return errbuf_set(e, EXIT_DATAERR, "%s of run %" PRId64 " has no recorded ops", f->fs, x->run->id);
	if (!st->judge.judged)
		return errbuf_set(e, EXIT_DATAERR, "state %d of %s is not judged; run 'crashlab judge %" PRId64 "' first",
				  st->idx, f->fs, x->run->id);
	if (model < 0 && (model = pick_model(st, f)) < 0)
		return errbuf_set(e, EXIT_DATAERR,
				  "state %d of %s has no LOST promise under any model, so there is no finding to make a "
				  "test of; give --model M to write a test of what M promised and the state kept",
				  st->idx, f->fs);
	*used_model = model;

	/* what the model promised, from the program's tree after the trigger */
	struct judge_run jr;
	judge_run_init(&jr, w, f->res);
	if (!jr.ok) {
		errbuf_set(e, EXIT_DATAERR, "the workload cannot be simulated: %s", jr.err.msg);
		judge_run_free(&jr);
		return -1;
	}

	/* the promises: the model's LOST and kept verdicts that name a path */
	int trigger = 0, nlost = 0;
	for (size_t k = 0; k < st->judge.n; k++) {
		const struct verdict *v = &st->judge.v[k];
		if (v->model == model && (v->kind == V_LOST || v->kind == V_KEPT) && v->path[0] && v->op > 0 &&
		    (size_t)v->op <= w->n) {
			nlost += v->kind == V_LOST;
			int t = v->trigger > 0 ? v->trigger : v->op;
			if (t > trigger)
				trigger = t;
		}
	}
	if ((size_t)trigger > w->n)
		trigger = (int)w->n;
	struct fact *facts = NULL;
	size_t nf = 0, cap = 0;
	for (size_t k = 0; k < st->judge.n; k++) {
		const struct verdict *v = &st->judge.v[k];
		if (v->model != model || (v->kind != V_LOST && v->kind != V_KEPT) || !v->path[0] || v->op <= 0 ||
		    (size_t)v->op > w->n)
			continue;
		unsigned kinds = facts_of(w->ops[v->op - 1].kind);
		char *path = NULL;
		/* data, a mode, a target: of the op's inode, wherever it is named at the promise */
		if (kinds && jr.sim.ops[v->op - 1].obj >= 0)
			path = sim_path_at(&jr.sim, jr.sim.ops[v->op - 1].obj, trigger);
		if (!path)
			path = xstrdup(v->path);
		size_t i;
		for (i = 0; i < nf && strcmp(facts[i].path, path); i++)
			;
		if (i == nf) {
			ALLOC_GROW(facts, nf + 1, cap);
			facts[nf++] = (struct fact){ path, 0 };
		} else {
			free(path);
		}
		facts[i].kinds |= kinds;
	}
	if (!nf) {
		judge_run_free(&jr);
		return errbuf_set(e, EXIT_DATAERR, "state %d of %s: model %s promised nothing at a path there", st->idx,
				  f->fs, model_name(model));
	}

	/* the ops up to the promise, as commands */
	struct sbuf ops = SBUF_INIT;
	unsigned req = 0;
	int in_run = 0;
	for (size_t i = 0; i < w->n && w->ops[i].id <= trigger; i++) {
		const struct wl_op *op = &w->ops[i];
		if (op->section == WL_RUN && !in_run) {
			in_run = 1;
			sbuf_adds(&ops, "# Everything so far reaches the disk, as crashlab syncs before it records.\n"
				  "_scratch_sync\n\n");
		}
		char *t = op_line(op);
		sbuf_addf(&ops, "# op %d: ", op->id);
		comment_text(&ops, t);
		if (f->res[i].err)
			sbuf_addf(&ops, " (failed in the recording: %s)",
				  strerrorname_np(f->res[i].err) ? strerrorname_np(f->res[i].err) : "an error");
		sbuf_adds(&ops, "\n");
		free(t);
		if (xfs_op(&ops, &req, op, e) < 0) {
			sbuf_free(&ops);
			for (size_t j = 0; j < nf; j++)
				free(facts[j].path);
			free(facts);
			judge_run_free(&jr);
			return -1;
		}
		sbuf_adds(&ops, " >>$seqres.full 2>&1\n");
	}
	if (!in_run)
		sbuf_adds(&ops, "_scratch_sync\n");

	struct tree_node *tree;
	size_t nt;
	sim_tree_at(&jr.sim, trigger, &tree, &nt);

	struct sbuf show = SBUF_INIT;
	sbuf_addf(golden, "QA output created by %s\n", number);
	for (size_t i = 0; i < nf; i++) {
		const struct tree_node *n = find_node(tree, nt, facts[i].path);
		unsigned k = facts[i].kinds;
		char sum[65] = "";
		if (n && n->type == 'f' && (k & FACT_DATA)) {
			unsigned char *b = expected_bytes(n);
			if (b) {
				struct hasher *h = hasher_new();
				hasher_add(h, b, n->size);
				hasher_done(h, sum);
				free(b);
			} else {
				k = (k & ~FACT_DATA) | FACT_SIZE;
			}
		}
		if (!n || n->type != 'f')
			k &= ~(FACT_DATA | FACT_SIZE);
		if (!n || n->type != 'l')
			k &= ~FACT_TARGET;
		if (!n || n->type == 'l')
			k &= ~FACT_MODE;
		sbuf_adds(&show, "show_path ");
		sh_quote(&show, facts[i].path, strlen(facts[i].path));
		sbuf_addf(&show, "%s%s%s%s\n", k & FACT_DATA ? " data" : "", k & FACT_SIZE ? " size" : "",
			  k & FACT_MODE ? " mode" : "", k & FACT_TARGET ? " target" : "");
		if (!n) {
			sbuf_addf(golden, "%s: absent\n", facts[i].path);
			continue;
		}
		sbuf_addf(golden, "%s: %s\n", facts[i].path,
			  n->type == 'f' ? "file" : n->type == 'd' ? "directory" : n->type == 'l' ? "symlink" : "other");
		if (k & FACT_DATA)
			sbuf_addf(golden, "%s: size %" PRIu64 ", sha256 %s\n", facts[i].path, n->size, sum);
		if (k & FACT_SIZE)
			sbuf_addf(golden, "%s: size %" PRIu64 "\n", facts[i].path, n->size);
		if (k & FACT_MODE)
			sbuf_addf(golden, "%s: mode %o\n", facts[i].path, n->mode);
		if (k & FACT_TARGET)
			sbuf_addf(golden, "%s: target %s\n", facts[i].path, n->target ? n->target : "");
	}

	/* the script */
	const char *mopts = f->mount_opts && *f->mount_opts ? f->mount_opts : NULL;
	sbuf_adds(script, "#! /bin/bash\n# SPDX-License-Identifier: GPL-2.0\n#\n");
	sbuf_addf(script, "# FSQA Test No. %s\n#\n", number);
	sbuf_addf(script, "# A power cut after op %d of this workload, which crashlab (run %" PRId64 ", %s, crash\n"
		  "# state %d) found %s: under the model '%s' the paths printed at the end\n"
		  "# must be as in the golden output after the power cut.\n", trigger, x->run->id, f->fs, st->idx,
		  nlost ? "not keeping a promise" : "keeping its promises", model_name(model));
	sbuf_adds(script, "#\n# Writes given by length write one fill byte per op (op id modulo 256);\n"
		  "# text is written from a file of its own. Files are compared by size and\n"
		  "# SHA-256, modes and link targets as they are.\n#\n");
	sbuf_adds(script, ". ./common/preamble\n_begin_fstest auto quick log\n\n"
		  "_cleanup()\n{\n\t_cleanup_flakey\n\tcd /\n\trm -f $tmp.*\n}\n\n"
		  ". ./common/filter\n. ./common/dmflakey\n");
	if (req & 16)
		sbuf_adds(script, ". ./common/attr\n");
	sbuf_adds(script, "\n_require_scratch\n_require_dm_target flakey\n");
	if (req & 1)
		sbuf_adds(script, "_require_odirect\n");
	if (req & 2)
		sbuf_adds(script, "_require_xfs_io_command \"falloc\"\n");
	if (req & 4)
		sbuf_adds(script, "_require_xfs_io_command \"fpunch\"\n");
	if (req & 8)
		sbuf_adds(script, "_require_xfs_io_command \"fzero\"\n");
	if (req & 16)
		sbuf_adds(script, "_require_attrs\n");
	if (req & 32)
		sbuf_adds(script, "_require_xfs_io_command \"sync_range\"\n");
	if (req & 64)
		sbuf_adds(script, "_require_xfs_io_command \"syncfs\"\n");
	if (f->mkfs_opts && *f->mkfs_opts) {
		sbuf_addf(script, "\n# crashlab made %s with these options\nif [ \"$FSTYP\" = %s ]; then\n"
			  "\texport MKFS_OPTIONS=\"", f->fs, f->fs);
		sh_dq_text(script, f->mkfs_opts);
		sbuf_adds(script, " $MKFS_OPTIONS\"\nfi\n");
	}
	sbuf_adds(script, "\n_scratch_mkfs >>$seqres.full 2>&1\n_require_metadata_journaling $SCRATCH_DEV\n");
	if (mopts) {
		sbuf_addf(script, "\n# crashlab mounted %s with these options\nif [ \"$FSTYP\" = %s ]; then\n"
			  "\texport MOUNT_OPTIONS=\"-o ", f->fs, f->fs);
		sh_dq_text(script, mopts);
		sbuf_adds(script, " $MOUNT_OPTIONS\"\nfi\n");
	}
	sbuf_adds(script, "\n_init_flakey\n_scratch_mount\n\n");
	sbuf_add(script, ops.buf, ops.len);
	sbuf_adds(script, "\n# What a path holds: its type, and what the words after it ask for.\n"
		  "show_path()\n{\n"
		  "\tlocal p=\"$SCRATCH_MNT/$1\" name=$1 what\n"
		  "\tshift\n"
		  "\tif [ -L \"$p\" ]; then\n\t\techo \"$name: symlink\"\n"
		  "\telif [ -d \"$p\" ]; then\n\t\techo \"$name: directory\"\n"
		  "\telif [ -f \"$p\" ]; then\n\t\techo \"$name: file\"\n"
		  "\telif [ -e \"$p\" ]; then\n\t\techo \"$name: other\"\n"
		  "\telse\n\t\techo \"$name: absent\"\n\t\treturn\n\tfi\n"
		  "\tfor what in \"$@\"; do\n"
		  "\t\tcase $what in\n"
		  "\t\tdata) echo \"$name: size $(stat -c %s \"$p\"), sha256 $(sha256sum <\"$p\" | cut -d' ' -f1)\" ;;\n"
		  "\t\tsize) echo \"$name: size $(stat -c %s \"$p\")\" ;;\n"
		  "\t\tmode) echo \"$name: mode $(stat -c %a \"$p\")\" ;;\n"
		  "\t\ttarget) echo \"$name: target $(readlink \"$p\")\" ;;\n"
		  "\t\tesac\n\tdone\n}\n\n"
		  "# The power cut: every write not yet on the disk is dropped, then the\n"
		  "# file system mounts again and recovers.\n"
		  "_flakey_drop_and_remount\n\n");
	sbuf_add(script, show.buf, show.len);
	sbuf_adds(script, "\n_scratch_unmount\n_exit 0\n");

	for (size_t i = 0; i < nt; i++)
		tree_node_free(&tree[i]);
	free(tree);
	judge_run_free(&jr);
	sbuf_free(&show);
	sbuf_free(&ops);
	for (size_t i = 0; i < nf; i++)
		free(facts[i].path);
	free(facts);
	return 0;
}
