/* SPDX-License-Identifier: MIT */
/* commands.h: the subcommands main.c dispatches to, one function each. */
#ifndef PUNCTUAL_COMMANDS_H
#define PUNCTUAL_COMMANDS_H

int cmd_probe(int argc, char **argv);
int cmd_clock(int argc, char **argv);
int cmd_slack(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_sleep(int argc, char **argv);
int cmd_cpus(int argc, char **argv);
int cmd_timers(int argc, char **argv);
int cmd_tune(int argc, char **argv);
int cmd_why(int argc, char **argv);

#endif
