/* kernel_test.h - `crashlab kernel test` (cmd/kernel_test.c), called by cmd/kernel.c. */
#ifndef CRASHLAB_KERNEL_TEST_H
#define CRASHLAB_KERNEL_TEST_H

#include "kbuild/kbuild.h"

/* Build the fbarrier kselftest against the tree of the kernel under test (the
 * build of o, or the tree next to --kernel), run it in one guest on each file
 * system of fs_list (NULL: all four) and on tmpfs. Returns the exit code:
 * 0 all passed, 1 a test failed, or a guest failure's code. */
int kernel_test(const struct lab_kbuild_opts *o, const char *fs_list, const char *accel);

#endif
