/* SPDX-License-Identifier: MIT */
/* util/diag.h: the tool's exits with a message (diag.c): usage_error (bad input: one line,
 * exit 2) and die; the cleanups a signal runs, and the stop a first SIGINT or SIGTERM asks
 * of a command that measures. */
#ifndef PUNCTUAL_UTIL_DIAG_H
#define PUNCTUAL_UTIL_DIAG_H

#include <signal.h>

#define PN_FMT(a, b) __attribute__((format(printf, a, b)))

/* Exit statuses: 0 success, 1 runtime failure, 2 bad input (usage). */
enum { EXIT_USAGE = 2 };

/* The subcommand being run ("clock"); used to prefix messages. */
extern const char *tool_cmd;
/* One line on stderr, "punctual CMD: MSG (try 'punctual CMD --help')", exit 2. */
_Noreturn void usage_error(const char *fmt, ...) PN_FMT(1, 2);
/* One line on stderr, "punctual CMD: MSG", exit status st. */
_Noreturn void die(int st, const char *fmt, ...) PN_FMT(2, 3);
/* Runs fn (async-signal-safe) when SIGINT, SIGTERM or SIGHUP ends the tool, then lets the
 * signal end it as it would have. Signals the tool's caller ignores stay ignored; a
 * command's own handler (one that restores and exits) replaces this one. At most 8. */
void cleanup_on_signal(void (*fn)(void));
/* The signal (SIGINT, SIGTERM) that asked a command to stop measuring, or 0. A command
 * that calls stop_on_signals checks it between samples, prints what it measured marked
 * as interrupted, and exits 0, as cyclictest. */
extern volatile sig_atomic_t tool_stop;
/* From here on the first SIGINT or SIGTERM sets tool_stop and interrupts a sleep (EINTR);
 * a second one, 100 ms or more later, runs the cleanups and ends the tool by the signal. */
void stop_on_signals(void);
/* From here on SIGHUP, unless ignored, stops a command as SIGTERM does (its first sets
 * tool_stop), where an ending by the signal would leave a change half made (tune). */
void stop_on_hangup(void);
/* Measuring is over: from here on a SIGINT or SIGTERM ends the tool again (the cleanups
 * remove a file half written), tool_stop still saying whether one stopped it. */
void stop_on_signals_end(void);

#endif
