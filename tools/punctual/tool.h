/* SPDX-License-Identifier: MIT */
/*
 * tool.h: what the punctual tool's files share: the subcommand signature, option
 * parsing with units, error exits, the output buffer, progress and host facts.
 */
#ifndef PUNCTUAL_TOOL_H
#define PUNCTUAL_TOOL_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>

#include "internal.h"
#include "json.h"

#define PN_FMT(a, b) __attribute__((format(printf, a, b)))

/* Exit statuses: 0 success, 1 runtime failure, 2 bad input (usage). */
enum { EXIT_USAGE = 2 };

/* ---- errors (opts.c) ---- */
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

/* ---- values with units (opts.c) ---- */
/* Of names[n], the nearest to s (at most two edits away, fewer than s has letters: "prbe"
 * -> "probe"), for a "did you mean"; NULL when none is that near. */
const char *nearest(const char *s, const char *const *names, size_t n);
/* A duration, in ns: the one unit rule of every option is that a duration takes a unit
 * (ns, us, ms, s, m, h; terms as 1m30s), a bare number none but 0. Exits 2 with a message
 * naming opt on error (pn__duration_parse, src/internal.h). */
int64_t opt_duration(const char *opt, const char *s);
/* A duration that is a whole number of us in [lo, hi] us (a kernel interface counts in us:
 * /dev/cpu_dma_latency, cyclictest's histogram): the us, or exit 2. */
long opt_us(const char *opt, const char *s, long lo, long hi);
/* A timer slack value: a duration that is a whole number of ns, or "default" (0, as is
 * any zero); exits 2 on error, "0.5ns" and "1.0005us" included. */
int64_t opt_slack(const char *opt, const char *s);
/* getopt_long for a subcommand, from its first call on a new argv: -h/--help prints
 * usage and exits 0; a missing value, a value given to an option that takes none
 * (naming the long option as typed, in full) or an unknown option is one line and exit 2.
 * optstring starts with ':'. Returns the next option or -1. */
struct option;
int next_opt(int argc, char **argv, const char *optstring, const struct option *lo,
             const char *usage) __attribute__((nonnull(2, 3, 4)));
/* Exits 2 if arguments remain after the options. */
void no_more_args(int argc, char **argv);
/* A non-negative integer in [lo, hi]; exits 2 on error. */
long opt_long(const char *opt, const char *s, long lo, long hi);
/* --budget's value (a share of a CPU, or "auto") as PUNCTUAL_BUDGET takes it, into buf
 * (n bytes), or exit 2 (usage_error) with the reason. Returns buf. */
const char *opt_budget(const char *s, char *buf, size_t n);
/* ns for people ("850 ns", "12.5 us", "4 ms"): the library's one formatter
 * (pn__duration_format, src/duration.c). */
static inline const char *fmt_ns(char *buf, size_t n, double ns)
{
	return pn__duration_format(buf, n, ns);
}

/* ---- output (out.c; the JSON writer is json.h) ---- */
/* Everything a command prints to stdout goes through out, a memory stream flushed by
 * out_commit() only on success: an error never leaves half a report behind. */
extern FILE *out;
void out_open(void);
void out_commit(void);
/* Flushes and closes stdout: output that did not reach it (a full disk, /dev/full, a
 * closed descriptor) is one line and exit 1, like a report that cannot be written.
 * main() calls it once a subcommand returns; a path that exits 0 by itself calls it
 * first. */
void stdout_close(void);
/* The width text output fits: $COLUMNS (40 to 1000), else the terminal's when stdout is
 * one, else 80. */
int out_width(void);
/* text, words wrapped to out_width(): first before the first line, rest (spaces, as long as
 * first) before the others; a word longer than a line stays whole. */
void out_wrap(FILE *f, const char *first, const char *rest, const char *text);

/* ---- files besides stdout (files.c) ---- */
/* The rules, for root in directories others can write: a symbolic link (in the path or
 * its last name) is followed only when it is the caller's or root's, and the directory
 * that receives a file must be the caller's or root's. A regular file or a new name is
 * replaced through a new temporary file beside it and a rename (keeping the old file's
 * permission bits, and owner and group where we may; a new name gets 0644 whatever the
 * umask); anything else (a device, a FIFO) is written in place, never replaced; a link
 * followed stays a link. */
/* Before measuring: exits 2 with one line naming opt unless file_write can write path
 * under those rules: a regular file or a new name in a directory we may create files
 * in, or a writable device or FIFO; a directory or a link to nothing is refused. */
void file_check(const char *opt, const char *path);
/* Before measuring: exits 2 with one line naming opt unless dir is a directory of the
 * caller's or root's that we may create files in, or can be created (its parent is). */
void dir_check(const char *opt, const char *dir);
/* dir, created (0755, less the umask) if missing, as an O_PATH descriptor for
 * file_write_at, under dir_check's rules; or -errno (-EACCES for a refused owner). */
int dir_open(const char *dir);
/* Writes path with render (0 or -errno) under the rules above: 0 or -errno (-EACCES for
 * a link or a directory another user owns). */
int file_write(const char *path, int (*render)(FILE *f, const void *arg), const void *arg);
/* file_write, path relative to the directory descriptor at (or AT_FDCWD). */
int file_write_at(int at, const char *path, int (*render)(FILE *f, const void *arg),
                  const void *arg);
/* A file being written: fd is the temporary file's, or the node's written in place. */
struct file_out {
	int dir, fd;
	bool in_place;
	bool has_old; /* a regular file is replaced: old is its status */
	struct stat old;
	char name[256], tmp[256];
	int temp; /* its slot among the temporaries a signal removes (-1: none) */
};
/* Opens path (relative to at) for writing under the rules above, for a writer that is
 * not a stream (a child process): 0 with o->fd to write to, or -errno. */
int file_open_at(int at, const char *path, struct file_out *o);
/* Ends what file_open_at began: with err 0, the temporary file gets its owner and mode,
 * reaches the disk and is renamed over the name; otherwise it is removed. Closes o->fd.
 * Returns err, or the -errno that ended it. */
int file_commit(struct file_out *o, int err);
/* file_commit in two steps: file_finish settles the temporary file (err 0; else removes it:
 * then err, or the -errno that ended it), file_rename puts it over the name (0 or -errno).
 * file_discard removes a file begun or finished but not renamed. */
int file_finish(struct file_out *o, int err);
int file_rename(struct file_out *o);
void file_discard(struct file_out *o);
/* Files written together, all or nothing: each is staged under its temporary name, and
 * file_batch_commit renames them all once every one was written (a rename that fails
 * removes the rest), or file_batch_discard removes them all. Zero-initialize; discard
 * frees it. */
struct file_batch {
	struct file_out *o;
	int n, cap;
};
/* file_write_at into b: 0 (staged) or -errno (nothing left of it). */
int file_stage_at(struct file_batch *b, int at, const char *path,
                  int (*render)(FILE *f, const void *arg), const void *arg);
/* file_open_at into b, for a writer that is not a stream: the file to write (NULL, *err set:
 * nothing begun); end it with file_stage_end(b, err), which stages it (0) or removes it. */
struct file_out *file_stage_open(struct file_batch *b, int at, const char *path, int *err);
int file_stage_end(struct file_batch *b, int err);
int file_batch_commit(struct file_batch *b);
void file_batch_discard(struct file_batch *b);
/* fclose that also reports an earlier failed write (ferror): 0 or -errno. */
int file_close(FILE *f);

/* ---- untrusted text for each medium (encode.c) ---- */
/* The length of the well-formed UTF-8 sequence at p, before end (RFC 3629: no overlong
 * form, no surrogate, nothing past U+10FFFF), or 0 when the bytes there are not one. */
int utf8_len(const unsigned char *p, const unsigned char *end);
/* How many bytes at p no terminal should get: 1 for a byte that is not UTF-8 or a C0
 * control or DEL, 2 for a C1 control (U+0080-U+009F), 0 for a character to show. */
int utf8_unsafe(const unsigned char *p, const unsigned char *end);
/* s for text output into buf (n > 0 bytes, cut at a character): every byte utf8_unsafe
 * names shown as \xHH. Returns buf. */
const char *text_safe(char *buf, size_t n, const char *s);

/* ---- progress (progress.c): a single line on stderr, only when it is a terminal ---- */
void progress(const char *fmt, ...) PN_FMT(1, 2);
void progress_done(void);

/* ---- host facts (sysinfo.c) ---- */
struct host {
	char kernel[256];
	char cpu[128];
	char clocksource[64];
	char clocksources[256]; /* space separated */
	int invariant_tsc;      /* 1, 0, or -1 where not applicable */
	int64_t coarse_res_ns;
	double tick_hz; /* estimated from the coarse clock's resolution */
};
/* Fills h; a fact that cannot be read is "unknown" (or 0), so it never fails. */
void host_read(struct host *h);
/* The first line of a /proc or /sys file (root-prefixed), without its newline and
 * trailing blanks, into buf: 0 or -errno. */
int read_sysfs_line(const char *path, char *buf, size_t n);
/* Writes val to an existing file such as a sysfs attribute in one write: 0 or -errno. */
int write_sysfs(const char *path, const char *val);

/* ---- subcommands ---- */
int cmd_probe(int argc, char **argv);
int cmd_clock(int argc, char **argv);
int cmd_slack(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_sleep(int argc, char **argv);
int cmd_cpus(int argc, char **argv);
int cmd_timers(int argc, char **argv);
int cmd_tune(int argc, char **argv);

#endif
