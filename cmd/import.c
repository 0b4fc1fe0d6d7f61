#include "cmd/cmd.h"
int cmd_import(int argc, char **argv, struct cmd_ctx *ctx) { return 0; }
