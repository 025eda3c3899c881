/* SPDX-License-Identifier: MIT */
/* util/opts.h: option parsing (opts.c): getopt_long for a subcommand, values with units
 * (durations, slack, shares), "did you mean". */
#ifndef PUNCTUAL_UTIL_OPTS_H
#define PUNCTUAL_UTIL_OPTS_H

#include <stddef.h>
#include <stdint.h>

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

#endif
