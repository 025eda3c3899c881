/* SPDX-License-Identifier: MIT */
/* What the parts of `punctual tune` hand each other: the settings it tries, the runs under
 * each (tune/run.c measures and judges them, for a command or a systemd unit), the unit's
 * drop-ins (tune/dropin.c) and its control (tune/unit.c), for tune/tune.c to render. */
#ifndef PUNCTUAL_CMD_TUNE_H
#define PUNCTUAL_CMD_TUNE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "run/runs.h"

/* The precision tune's --precise settings ask for: run --precise's default. */
#define TUNE_PRECISION_NS 10000

/* The bare short EEVDF slice tried with slack 1 ns (run --slice's lower bound). */
#define TUNE_SLICE "100us"

/* A setting tried: none (the program as it is), timer slack 1 ns (with a short slice), or
 * precise waits with an optional CPU budget. The settings are tried in this order, which
 * is also their cost's: slack (a kernel setting), the slice (the shim at load), the shim's
 * precise waits (its spin). */
struct tune_setting {
	const char *name; /* as `punctual run` spells it: "--precise --budget=5%" */
	bool slack;
	bool precise;
	const char *budget; /* PUNCTUAL_BUDGET's value ("5.0000%", "auto"), or NULL */
	const char *slice;  /* run --slice's value without --precise, or NULL */
	bool rt;            /* a unit run as another user than root given CAP_SYS_NICE: its shared
	                     * waits under SCHED_FIFO, each wait alone (AmbientCapabilities=) */
	bool shim;          /* the shim's to apply: no fix for a program it cannot time */
};

/* The most settings tune tries. */
#define TUNE_SETTINGS_MAX 6

/* One run under a setting: its waits from the shim's records (and where traced, as the
 * trace saw them), how long it ran, the CPU its processes used (-1: not known). */
struct tune_run {
	struct run_fig fig, traced;
	int64_t wall_ns, cpu_ns;
};

/* A setting's runs merged: their waits, time and CPU; the quantile judged (the p99, or
 * the median where the program made fewer than 100 waits as it is) with its interval;
 * against the program as it is (res[0]), the ratio of the quantiles with the interval both
 * runs' noise allows, and the verdict: -1 better, +1 worse, 0 the same. */
struct tune_result {
	struct run_fig fig;
	int runs;
	int64_t wall_ns, cpu_ns; /* cpu_ns -1: not known for every run */
	double v, lo, hi;
	double ratio, ratio_lo, ratio_hi;
	int verdict;
	int64_t run_p99_lo, run_p99_hi; /* the least and largest p99 of its runs (0: none) */
};

/* The measurement: every setting's result, the quantile judged, the rounds run, the
 * setting kept (or -1), the measuring time spent, and whether the runs were traced. */
struct tune_outcome {
	struct tune_result res[TUNE_SETTINGS_MAX];
	int n;
	double q; /* 0.99, or 0.5 with fewer than 100 waits as it is */
	int rounds;
	int kept, best; /* kept: the cheapest not worse than best beyond noise; -1: none */
	int64_t spent_ns;
	double steal; /* the CPUs' time the hypervisor stole while measuring, a share */
	bool traced;  /* the shim saw no timed wait: each run's main process traced (eBPF) */
};

/* A run's timed waits traced through eBPF (trace.c, why/'s tracing), where the shim's
 * records are absent: a program the shim cannot time (statically linked, or making its
 * system calls itself). One process a run, its main one; the lateness of each wait its
 * timer ended, from the deadline to the run, as `punctual why` measures it. */
struct tune_trace;
/* NULL where runs can be traced here, else why not (a sentence). */
const char *tune_trace_refused(void);
/* The tracer loaded: exits 1 where it cannot be. */
struct tune_trace *tune_trace_open(void);
/* From now on, process pid's waits go into f (emptied first) until tune_trace_end:
 * exits 1 where the trace cannot start. */
void tune_trace_begin(struct tune_trace *t, long pid, struct run_fig *f);
/* Ends the trace begun: its waits are in its f, with their p50 and p99. Exits 1 where the
 * trace failed. */
void tune_trace_end(struct tune_trace *t);
/* Frees t (NULL: nothing). */
void tune_trace_close(struct tune_trace *t);

/* Runs setting s for at most for_ns (a command: to its exit, SIGTERM at for_ns) and reads
 * its run into r: its waits from the shim's records, and with trace (not NULL) its main
 * process's traced. Exits 1 when the run failed, 2 when the command cannot be run. */
typedef void tune_runner(void *ctx, const struct tune_setting *s, int64_t for_ns,
                         struct tune_trace *trace, struct tune_run *r);

/* The command runner: ctx is a struct tune_cmd. Each run is `punctual run --stats`
 * (this binary) with the setting's options, in a process group of its own. */
struct tune_cmd {
	char **cmd;
	char slack[64]; /* "--slack=NS" where a unit file sets its own, else "" */
};
tune_runner tune_cmd_runner;

/* The lateness histogram's resolution: 4 buckets an octave (decay_hist.h), so a bucket's
 * largest value is at most 2^(1/4) - 1 above its smallest. */
#define TUNE_RESOLUTION 0.19
/* The q-quantile of f's lateness, ns, interpolated in its bucket (so within
 * TUNE_RESOLUTION of the true one), capped at f's largest; f has a wait at least. */
double tune_quantile(const struct run_fig *f, double q);

/* The settings s[0..n-1] run in turns (A B C A B C ..., each round's order turned by one)
 * in runs of for_ns / (4 n) (at least 0.5 s), until every fix stands apart from s[0]
 * beyond noise on the p99 (100 waits of s[0] at least) after two rounds at least, or
 * for_ns of runs is spent. Where the first run's records hold no timed wait, it runs
 * again traced; where the records hold none again and the trace does, every run is
 * traced, and the settings that are the shim's are taken out of s (o->n: those left).
 * Exits 1 where the program made no timed wait as it is, as the shim and (where this
 * process may trace) the trace saw it. */
void tune_measure(tune_runner *run, void *ctx, struct tune_setting *s, int n, int64_t for_ns,
                  struct tune_outcome *o);

/* ---- the report (tune.c) ---- */
/* The text report's verdict of o on f, its settings s: the fix kept and its lateness
 * against the program as it is, then, where the best is another, that it is not better
 * beyond the noise; or, where a fix was lower within the noise, that the host was too
 * noisy to tell, and why (steal, the runs' p99s apart); else that no fix measured
 * better. */
void tune_kept_lines(FILE *f, const struct tune_outcome *o, const struct tune_setting *s);

/* ---- the drop-ins (tune/dropin.c) ---- */
/* The first line of every file tune writes; a file without it is someone else's. */
#define TUNE_MARK "# Written by punctual tune"
/* The name of tune's kept drop-in in a unit's .d directory, and of the measuring one in
 * /run's (it sorts after the kept one, so that its settings win). */
#define TUNE_DROP_IN    "50-punctual-tune.conf"
#define TUNE_MEASURE_IN "60-punctual-tune-measure.conf"

/* What a unit sets itself, read from its files (not tune's): its own LD_PRELOAD and
 * TimerSlackNSec=, as written (specifiers left for systemd); and what an earlier tune's
 * kept drop-in sets: its environment's assignments and whether it sets the slack. No
 * bound on their number or length (tune_unit_own_free frees them). */
struct tune_unit_own {
	char *preload;  /* NULL: none */
	char slack[64]; /* "": none */
	char **old_env;
	int old_nenv;
	bool old_slack;
};
/* What a reader's -errno e says of a unit file: strerror's, or for -EILSEQ that the file
 * holds a NUL byte (refused: systemd would end a line there). */
const char *tune_file_error(int e);
/* Reads the files of the unit (its fragment and drop-ins, systemctl show's paths, in
 * systemd's order) into *own: 0, or -errno. */
int tune_unit_own(const char *fragment, const char *dropins, struct tune_unit_own *own);
/* Frees what tune_unit_own read into *own, and empties it. */
void tune_unit_own_free(struct tune_unit_own *own);
/* The environment assignments of a unit file's [Service] Environment= lines, unquoted
 * (NAME=VALUE each; a later one replaces an earlier of its name) into *env, allocated
 * (tune_env_free): their number, or -errno (*env untouched). Values with specifiers (%)
 * are left as written. */
int tune_unit_file_env(const char *file, char ***env);
/* Frees the n assignments of env, and env. */
void tune_env_free(char **env, int n);

/* What a drop-in holds: a setting, the shim's path; the unit's own settings (NULL: none
 * known); with records, the measuring run's records file (a measuring drop-in, which
 * also undoes what an earlier tune's kept one sets) in its runtime directory
 * runtime_dir, RUNTIME_DIRECTORY as the unit has it without that one (runtime_env; NULL:
 * unset); with cpus, the CPU count. */
struct tune_drop {
	const struct tune_setting *s;
	const char *shim;
	const struct tune_unit_own *own;
	const char *records;     /* or NULL */
	const char *runtime_dir; /* the name under /run, or NULL */
	const char *runtime_env; /* or NULL */
	int cpus;                /* or 0 */
};
/* The drop-in d on f. Returns 0, or -EIO when a write fails. */
int tune_drop_in(FILE *f, const struct tune_drop *d);
/* The shim's path, resolved (no "..", no link): exits 1 when there is none, or its path
 * cannot go into a unit file (a control character). */
const char *tune_shim(void);
/* Whether the file at path was written by tune (its first line is TUNE_MARK). */
bool tune_ours(const char *path);
/* The runtime directory of unit's measuring runs, "punctual-tune-" and the unit's name
 * with each byte but [A-Za-z0-9.@-] as _XX (one name per unit; RuntimeDirectory= takes
 * '\\' as an escape and ':' as a link's), into buf (n bytes): exits 2 where it would pass
 * NAME_MAX. */
void tune_runtime_dir(const char *unit, char *buf, size_t n);
/* RUNTIME_DIRECTORY as systemd sets it for a unit whose RuntimeDirectory= is dirs
 * (systemctl show's words) without ours: "/run/A:/run/B", allocated; NULL for none. */
char *tune_runtime_env(const char *dirs, const char *ours);
/* The environment of run --cpus=n (n > 0) into buf, words split by spaces. */
void tune_cpus_env(char *buf, size_t size, int n);

/* ---- a unit file's command (tune/dropin.c) ---- */
/* The unit file's ExecStart= command line as an argv (NULL-terminated, one block to free):
 * exits 2 for a file without one, or one with specifiers or variables (systemd's to
 * expand). */
char **tune_unit_file_cmd(const char *file);

/* ---- a systemd unit (tune/unit.c) ---- */
/* UNIT checked as a service name (".service" added when it has no suffix) into name:
 * exits 2 for a name that is no service or a template without an instance. */
void tune_unit_name(const char *unit, char *name, size_t n);
/* Measures the unit name through runtime drop-ins and restarts, then with apply keeps the
 * kept setting's drop-in (or removes tune's). Whatever ends it early, the unit is put
 * back: its drop-ins as they were, running or stopped as it was. Renders with
 * render(o, cpus, drop-in path): cpus, what the quota of the unit's cgroup allows where
 * fewer than the CPUs online, else 0. Returns the exit status. */
typedef void tune_render(const struct tune_outcome *o, int cpus, const char *path);
int tune_unit(const char *name, struct tune_setting *s, int n, int64_t for_ns, bool apply,
              tune_render *render);
/* Whether the unit name's precise waits would take SCHED_FIFO only with CAP_SYS_NICE
 * given: 1 (it runs as another user than root, and its capability bounding set keeps
 * CAP_SYS_NICE), 0 (root's, or it has it already), -1 with why (n bytes) where it cannot be
 * given. */
int tune_unit_rt(const char *name, char *why, size_t n);
/* Removes what tune wrote for the unit name (its drop-ins) and restarts it if it ran;
 * with dry_run, says what it would remove: the exit status. */
int tune_unit_revert(const char *name, bool dry_run);

/* ---- another process (tune/pid.c) ---- */
/* The service unit that owns the process arg (a PID) into name: exits 2 for bad input, a
 * process that does not exist, or one in no service unit. */
void tune_pid_unit(const char *arg, char *name, size_t n);
/* The CPUs the quota of pid's cgroup (v1 or v2) and its parents allow, rounded up; 0: no quota,
 * or not readable. */
int tune_pid_cpus(long pid);

#endif
