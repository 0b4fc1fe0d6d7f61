/*
 * elfdeps.h - the shared objects a host ELF program loads (images/elfdeps.c).
 */
#ifndef CRASHLAB_IMAGES_ELFDEPS_H
#define CRASHLAB_IMAGES_ELFDEPS_H

#include "core/util.h"

/*
 * Host paths of every shared object that the ELF file at path loads,
 * recursively: its PT_INTERP loader and each DT_NEEDED library as the
 * loader would find it (DT_RUNPATH or DT_RPATH, then the system
 * directories, then /etc/ld.so.conf.d). Each path is added once to libs,
 * as found (a soname, often a symlink); a static binary or a file that is
 * not ELF adds nothing. -1 with e (66) naming the missing library and the
 * object that needs it.
 */
int img_elf_deps(const char *path, struct strvec *libs, struct errbuf *e);

#endif
