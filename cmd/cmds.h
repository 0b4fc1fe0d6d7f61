/* cmds.h - one handler per subcommand, each in cmd/<name>.c. */
#ifndef CRASHLAB_CMDS_H
#define CRASHLAB_CMDS_H

/* argv[0] is "crashlab <name>", so messages can name the command. */
int cmd_run(int argc, char **argv);
int cmd_kernel(int argc, char **argv);
int cmd_image(int argc, char **argv);
int cmd_boot(int argc, char **argv);
int cmd_shell(int argc, char **argv);
int cmd_try(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_doctor(int argc, char **argv);
int cmd_show(int argc, char **argv);
int cmd_report(int argc, char **argv);

#endif
