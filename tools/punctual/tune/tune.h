/* SPDX-License-Identifier: MIT */
/* What the parts of `punctual tune` hand each other: the settings, the runs under each,
 * the unit's drop-ins and its control. */
#ifndef PUNCTUAL_CMD_TUNE_H
#define PUNCTUAL_CMD_TUNE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "run/runs.h"

/* The precision tune's --precise settings ask for: run --precise's default. */
#define TUNE_PRECISION_NS 10000

/* The bare short slice tried with slack 1 ns. */
#define TUNE_SLICE "100us"

/* A setting tried, in order of cost: none, slack 1 ns (with a short slice), precise waits
 * with an optional CPU budget. */
struct tune_setting {
	const char *name; /* as `punctual run` spells it */
	bool slack;
	bool precise;
	const char *budget; /* PUNCTUAL_BUDGET's value, or NULL */
	const char *slice;  /* run --slice's value without --precise, or NULL */
	bool rt;            /* a non-root unit given CAP_SYS_NICE for its shared waits */
	bool shim;          /* the shim's to apply */
};

/* The most settings tune tries. */
#define TUNE_SETTINGS_MAX 6

/* One run under a setting; cpu -1: not known. */
struct tune_run {
	struct run_fig fig, traced;
	int64_t wall_ns, cpu_ns;
};

/* A setting's runs merged, the quantile judged with its interval, and against res[0] the
 * ratio and verdict: -1 better, +1 worse, 0 the same within noise. */
struct tune_result {
	struct run_fig fig;
	int runs;
	int64_t wall_ns, cpu_ns; /* cpu_ns -1: not known for every run */
	double v, lo, hi;
	double ratio, ratio_lo, ratio_hi;
	int verdict;
	int64_t run_p99_lo, run_p99_hi; /* its runs' least and largest p99 (0: none) */
};

/* The measurement: every setting's result and the setting kept (or -1). */
struct tune_outcome {
	struct tune_result res[TUNE_SETTINGS_MAX];
	int n;
	double q; /* 0.99, or 0.5 with fewer than 100 waits as it is */
	int rounds;
	int kept, best; /* kept: the cheapest not worse than best beyond noise */
	int64_t spent_ns;
	double steal; /* the share of CPU time the hypervisor stole while measuring */
	bool traced;  /* the shim saw no timed wait: runs traced through eBPF instead */
};

/* A run's timed waits traced through eBPF, for a program the shim cannot time: its main
 * process's and its children's, each wait's lateness as `punctual why` measures it. */
struct tune_trace;
/* NULL where runs can be traced here, else why not (a sentence). */
const char *tune_trace_refused(void);
/* The tracer loaded: exits 1 where it cannot be. */
struct tune_trace *tune_trace_open(void);
/* From now on, the waits of process pid and of the children it forks go into f (emptied
 * first); exits 1 where the trace cannot start. */
void tune_trace_begin(struct tune_trace *t, long pid, struct run_fig *f);
/* Process pid traced with the run begun, and its children from now on: exits 1 where it
 * cannot be. */
void tune_trace_add(struct tune_trace *t, long pid);
/* Ends the trace: its waits are in f. Exits 1 where the trace failed. */
void tune_trace_end(struct tune_trace *t);
/* NULL: nothing. */
void tune_trace_close(struct tune_trace *t);

/* Runs s for at most for_ns and reads its run into r (with trace, its main process
 * traced). Exits 1 when the run failed, 2 when the command cannot be run. */
typedef void tune_runner(void *ctx, const struct tune_setting *s, int64_t for_ns,
                         struct tune_trace *trace, struct tune_run *r);

/* The command runner: each run is `punctual run --stats` in a process group of its own. */
struct tune_cmd {
	char **cmd;
	char slack[64]; /* "--slack=NS" where a unit file sets its own, else "" */
};
tune_runner tune_cmd_runner;

/* The histogram's resolution: 4 buckets an octave. */
#define TUNE_RESOLUTION 0.19
/* The q-quantile of f's lateness, interpolated in its bucket, capped at f's largest; f
 * has a wait at least. */
double tune_quantile(const struct run_fig *f, double q);

/* Runs s[0..n-1] in turns, each round's order turned, until every fix stands apart from
 * s[0] beyond noise after two rounds, or for_ns is spent. Where the shim sees no timed
 * wait and a trace does, every run is traced and the shim's settings are dropped (o->n).
 * Exits 1 where the program made no timed wait as it is. */
void tune_measure(tune_runner *run, void *ctx, struct tune_setting *s, int n, int64_t for_ns,
                  struct tune_outcome *o);

/* ---- the report (tune.c) ---- */
/* The text report's verdict: the fix kept against the program as it is, or why none. */
void tune_kept_lines(FILE *f, const struct tune_outcome *o, const struct tune_setting *s);

/* ---- the drop-ins (tune/dropin.c) ---- */
/* The first line of every file tune writes; a file without it is someone else's. */
#define TUNE_MARK "# Written by punctual tune"
/* tune's kept drop-in in a unit's .d directory, and the measuring one in /run's, which
 * sorts after it so that its settings win. */
#define TUNE_DROP_IN    "50-punctual-tune.conf"
#define TUNE_MEASURE_IN "60-punctual-tune-measure.conf"

/* What a unit sets itself (its own LD_PRELOAD and TimerSlackNSec=, as written), and what
 * an earlier tune's kept drop-in sets. */
struct tune_unit_own {
	char *preload;  /* NULL: none */
	char slack[64]; /* "": none */
	char **old_env;
	int old_nenv;
	bool old_slack;
};
/* What a reader's -errno e says of a unit file (-EILSEQ: it holds a NUL byte). */
const char *tune_file_error(int e);
/* Reads the unit's fragment and drop-ins in systemd's order into *own: 0, or -errno. */
int tune_unit_own(const char *fragment, const char *dropins, struct tune_unit_own *own);
/* Frees and empties *own. */
void tune_unit_own_free(struct tune_unit_own *own);
/* A unit file's [Service] Environment= assignments, unquoted, the last of a name winning,
 * into *env, allocated: their number, or -errno (*env untouched). */
int tune_unit_file_env(const char *file, char ***env);
/* Frees the n assignments of env, and env. */
void tune_env_free(char **env, int n);

/* A drop-in: a setting, the shim's path, the unit's own settings; a measuring drop-in
 * also names its records file, its runtime directory and RUNTIME_DIRECTORY without it. */
struct tune_drop {
	const struct tune_setting *s;
	const char *shim;
	const struct tune_unit_own *own;
	const char *records;     /* or NULL */
	const char *runtime_dir; /* the name under /run, or NULL */
	const char *runtime_env; /* or NULL */
	int cpus;                /* or 0 */
};
/* 0, or -EIO when a write fails. */
int tune_drop_in(FILE *f, const struct tune_drop *d);
/* The shim's resolved path: exits 1 when there is none or it cannot go into a unit file. */
const char *tune_shim(void);
/* Whether tune wrote the file at path (its first line is TUNE_MARK). */
bool tune_ours(const char *path);
/* The runtime directory of unit's measuring runs, the name escaped to [A-Za-z0-9.@-] and
 * _XX: exits 2 where it would pass NAME_MAX. */
void tune_runtime_dir(const char *unit, char *buf, size_t n);
/* RUNTIME_DIRECTORY as systemd sets it for RuntimeDirectory= dirs without ours; NULL for
 * none. */
char *tune_runtime_env(const char *dirs, const char *ours);
/* The environment of run --cpus=n into buf. */
void tune_cpus_env(char *buf, size_t size, int n);

/* ---- a unit file's command (tune/dropin.c) ---- */
/* The unit file's ExecStart= as an argv, one block to free: exits 2 for none, or one with
 * specifiers or variables. */
char **tune_unit_file_cmd(const char *file);

/* ---- a systemd unit (tune/unit.c) ---- */
/* UNIT checked as a service name into name: exits 2 for a name that is no service. */
void tune_unit_name(const char *unit, char *name, size_t n);
/* Measures the unit name through runtime drop-ins and restarts, then with apply keeps the
 * kept setting's drop-in. Whatever ends it early, the unit is put back as it was. cpus:
 * what the unit's quota allows where fewer than the CPUs online, else 0. Returns the exit
 * status. */
typedef void tune_render(const struct tune_outcome *o, int cpus, const char *path);
int tune_unit(const char *name, struct tune_setting *s, int n, int64_t for_ns, bool apply,
              tune_render *render);
/* Whether the unit's precise waits need CAP_SYS_NICE given for SCHED_FIFO: 1, 0 (it has
 * it), -1 with why where it cannot be given. */
int tune_unit_rt(const char *name, char *why, size_t n);
/* Removes tune's drop-ins for the unit and restarts it if it ran (dry_run: says so). */
int tune_unit_revert(const char *name, bool dry_run);

/* ---- another process (tune/pid.c) ---- */
/* The service unit of process arg into name: exits 2 where there is none. */
void tune_pid_unit(const char *arg, char *name, size_t n);
/* The CPUs pid's cgroup quota allows, rounded up; 0: none or unreadable. */
int tune_pid_cpus(long pid);

#endif
