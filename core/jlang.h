/*
 * jlang.h - import of CrashMonkey's J-lang workloads (what its Ace
 * generator writes) as .wl text, for `crashlab import jlang`.
 *
 * A J-lang file has sections, each opened by a line "# define",
 * "# declare", "# setup" or "# run". [define] lists the paths a workload
 * names, one a line ("test" is the test file system's root); the ops name
 * a path by its define line with the slashes taken out ("A/foo" is "Afoo").
 * [declare] lists local variables (the checkpoint counter) and is ignored.
 * [setup] and [run] hold one op a line, its words separated by spaces.
 *
 * The ops and what they become (the J-lang op works on the descriptor its
 * open made where CrashMonkey's code does; the language names files by
 * path, so such an op names the path the file has now):
 *   mkdir X MODE          mkdir P MODE
 *   open X FLAGS MODE     creat P MODE when X does not exist (O_CREAT
 *                         needed), truncate P 0 for O_TRUNC on an existing
 *                         file, else nothing (the language opens at first
 *                         use); O_APPEND, O_SYNC, O_DSYNC and O_DIRECT
 *                         change what later ops mean: refused
 *   opendir X MODE        nothing (fsync opens the directory)
 *   creat X [MODE]        creat P MODE
 *   close X               close P when the language has P open
 *   write X OFF LEN       write P OFF LEN
 *   dwrite X OFF LEN      dwrite P OFF LEN, fsync P (CrashMonkey opens the
 *                         file O_DIRECT|O_SYNC for it)
 *   mmapwrite X OFF LEN   falloc P 0 OFF LEN, mmapwrite P OFF LEN,
 *                         fdatasync P (it preallocates, writes through a
 *                         shared mapping and msyncs it with MS_SYNC)
 *   falloc X MODE OFF LEN falloc P MODE' OFF LEN (0, FALLOC_FL_KEEP_SIZE,
 *                         _PUNCH_HOLE|_KEEP_SIZE, _ZERO_RANGE[|_KEEP_SIZE])
 *   truncate X LEN        truncate P LEN
 *   link X Y, rename X Y  link P Q, rename P Q
 *   symlink X Y           symlink T Q, T the path of X relative to Q's folder
 *   unlink X              unlink P;  remove X: unlink P, or rmdir P
 *   rmdir X               rmdir P
 *   fsync X, fdatasync X  fsync P, fdatasync P
 *   sync                  sync
 *   fsetxattr X           setxattr P user.xattr1 "val1"
 *   removexattr X         removexattr P user.xattr1
 *   checkpoint N          mark checkpoint-N
 *   none                  nothing (no persistence op here)
 * Refused, each with "FILE:LINE: cannot import 'OP': why" (EXIT_DATAERR):
 * mknod (the language has no special files), an op on the root directory
 * (it cannot be named), on a file no name reaches any more, on a descriptor
 * never opened, a path not defined, an unknown op or flag, a malformed line.
 *
 * libc only.
 */
#ifndef CRASHLAB_CORE_JLANG_H
#define CRASHLAB_CORE_JLANG_H

#include "core/err.h"
#include "core/util.h"

/* Turn J-lang text (file names it in messages and the header) into .wl
 * text appended to out: 0, or -1 with e. */
int jlang_import(const char *file, const char *text, struct sbuf *out, struct errbuf *e);

#endif
