/* SPDX-License-Identifier: MIT */
/* util/diag.h: the tool's exits with a message, the cleanups a signal runs, and the stop
 * a first SIGINT or SIGTERM asks of a command that measures. */
#ifndef PUNCTUAL_UTIL_DIAG_H
#define PUNCTUAL_UTIL_DIAG_H

#include <signal.h>

#define PN_FMT(a, b) __attribute__((format(printf, a, b)))

/* Exit statuses: 0 success, 1 runtime failure, 2 bad input (usage). */
enum { EXIT_USAGE = 2 };

/* The subcommand being run, prefixing messages. */
extern const char *tool_cmd;
/* One line on stderr, "punctual CMD: MSG (try 'punctual CMD --help')", exit 2. */
_Noreturn void usage_error(const char *fmt, ...) PN_FMT(1, 2);
/* One line on stderr, "punctual CMD: MSG", exit status st. */
_Noreturn void die(int st, const char *fmt, ...) PN_FMT(2, 3);
/* Runs fn (async-signal-safe) when SIGINT, SIGTERM or SIGHUP ends the tool, then lets the
 * signal end it; signals the caller ignores stay ignored. At most 8. */
void cleanup_on_signal(void (*fn)(void));
/* The signal that asked a command to stop measuring, or 0: checked between samples, what
 * was measured printed as interrupted, exit 0, as cyclictest. */
extern volatile sig_atomic_t tool_stop;
/* From here on the first SIGINT or SIGTERM sets tool_stop and interrupts a sleep; a second,
 * 100 ms or more later, runs the cleanups and ends the tool by the signal. */
void stop_on_signals(void);
/* From here on SIGHUP stops a command as SIGTERM does, where dying would leave a change
 * half made. */
void stop_on_hangup(void);
/* Measuring is over: a SIGINT or SIGTERM ends the tool again, tool_stop still set. */
void stop_on_signals_end(void);

#endif
