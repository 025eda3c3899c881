/* SPDX-License-Identifier: MIT */
/* util/opts.h: option parsing: getopt_long for a subcommand, values with units, "did you
 * mean". */
#ifndef PUNCTUAL_UTIL_OPTS_H
#define PUNCTUAL_UTIL_OPTS_H

#include <stddef.h>
#include <stdint.h>

/* Of names[n], the nearest to s within two edits (fewer than s has letters), or NULL. */
const char *nearest(const char *s, const char *const *names, size_t n);
/* A duration in ns: it takes a unit (ns, us, ms, s, m, h; terms as 1m30s), a bare number
 * none but 0. Exits 2 naming opt on error. */
int64_t opt_duration(const char *opt, const char *s);
/* A duration that is a whole number of us in [lo, hi] us: the us, or exit 2. */
long opt_us(const char *opt, const char *s, long lo, long hi);
/* A timer slack: a whole number of ns, or "default" (0); exits 2 on error. */
int64_t opt_slack(const char *opt, const char *s);
/* getopt_long for a subcommand (optstring starts with ':'): -h/--help prints usage and
 * exits 0; a missing or unwanted value or an unknown option is one line and exit 2.
 * Returns the next option or -1. */
struct option;
int next_opt(int argc, char **argv, const char *optstring, const struct option *lo,
             const char *usage) __attribute__((nonnull(2, 3, 4)));
/* Exits 2 if arguments remain after the options. */
void no_more_args(int argc, char **argv);
/* A non-negative integer in [lo, hi]; exits 2 on error. */
long opt_long(const char *opt, const char *s, long lo, long hi);
/* --budget's value as PUNCTUAL_BUDGET takes it, into buf, or exit 2. Returns buf. */
const char *opt_budget(const char *s, char *buf, size_t n);

#endif
