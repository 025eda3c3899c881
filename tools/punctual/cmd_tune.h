/* SPDX-License-Identifier: MIT */
/* cmd_tune.h: what the parts of `punctual tune` hand each other: the settings it tries,
 * a run's result under each (cmd_tune_run.c measures a command, cmd_tune_unit.c a
 * systemd unit), for cmd_tune.c to judge and render. */
#ifndef PUNCTUAL_CMD_TUNE_H
#define PUNCTUAL_CMD_TUNE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "run_runs.h"

/* The precision tune's --precise settings ask for: run --precise's default. */
#define TUNE_PRECISION_NS 10000

/* The bare short EEVDF slice tried with slack 1 ns (run --slice's lower bound). */
#define TUNE_SLICE "100us"

/* A setting tried: none (the program as it is), timer slack 1 ns (with a short slice), or
 * precise waits with an optional CPU budget. */
struct tune_setting {
	const char *name; /* as `punctual run` spells it: "--precise --budget=5%" */
	bool slack;
	bool precise;
	const char *budget; /* PUNCTUAL_BUDGET's value ("5.0000%", "auto"), or NULL */
	const char *slice;  /* run --slice's value without --precise, or NULL */
};

/* The most settings tune tries. */
#define TUNE_SETTINGS_MAX 5

/* A run under a setting: its figures and its p99 lateness's interval; against the first
 * run (as it is), the ratio of the p99s with the interval both runs' noise allows, and
 * the verdict: -1 better, +1 worse, 0 the same. */
struct tune_result {
	struct run_fig fig;
	double lo, hi;
	double ratio, ratio_lo, ratio_hi;
	int verdict;
};

/* Runs one setting and reads the shim's records into f: 0, or exits (1: the run failed,
 * 2: the command cannot be run). ctx is the runner's. */
typedef void tune_runner(void *ctx, const struct tune_setting *s, struct run_fig *f);

/* Runs cmd under s in a child of its own process group, stdout and stderr to /dev/null,
 * until it exits or for_ns passed (then SIGTERM), the shim's records in records (a file
 * that exists; PUNCTUAL_STATS_FILE). Its figures into f (status: 128 + a signal). Exits
 * 1 when a signal stopped the tool (tool_stop), the child gone. */
void tune_run_cmd(char **cmd, int64_t for_ns, const char *records, const struct tune_setting *s,
                  struct run_fig *f);
/* The command runner: ctx is a struct tune_cmd. */
struct tune_cmd {
	char **cmd;
	int64_t for_ns;
	char records[64];
};
tune_runner tune_cmd_runner;
/* A records file (mode 0666, so a service's user may append) in dir, its path into
 * path (n bytes), removed by a signal's cleanup: 0 or exits 1. */
void tune_records_create(const char *dir, char *path, size_t n);
void tune_records_remove(void);

/* Each setting of s[0..n-1] run in turn; res[i]'s figures, intervals and verdicts
 * against res[0]. Exits 1 (with the reason) when the first run cannot support a p99. */
void tune_measure(tune_runner *run, void *ctx, const struct tune_setting *s, int n,
                  struct tune_result *res);
/* The best setting measured better than res[0] beyond both runs' noise (the lowest p99;
 * the cheaper, earlier, of equals), or -1. */
int tune_best(const struct tune_result *res, int n);

/* ---- a systemd unit (cmd_tune_unit.c) ---- */
/* The name of tune's drop-in in a unit's .d directory. */
#define TUNE_DROP_IN "50-punctual-tune.conf"
/* What a drop-in holds: a setting, the shim's path; with records, the measuring run's
 * statistics too; with cpus, the CPU count (run --cpus's environment). A slice has no
 * unit directive: the shim sets it as it loads (PUNCTUAL_PROCESS_SLICE). */
struct tune_drop {
	const struct tune_setting *s;
	const char *shim;
	const char *records; /* or NULL */
	int cpus;            /* or 0 */
};
/* The drop-in d on f. Returns 0, or -EIO when a write fails. */
int tune_drop_in(FILE *f, const struct tune_drop *d);
/* The environment of run --cpus=n (n > 0) into buf, words split by spaces. */
void tune_cpus_env(char *buf, size_t size, int n);
/* The unit file's ExecStart= command line as an argv (NULL-terminated, one block to free):
 * exits 2 for a file without one, or one with specifiers or variables (systemd's to
 * expand). */
char **tune_unit_file_cmd(const char *file);
/* UNIT checked as a service name (".service" added when it has no suffix) into name:
 * exits 2 for a name that is no service or a template without an instance. */
void tune_unit_name(const char *unit, char *name, size_t n);
/* Measures the unit name through runtime drop-ins and restarts, then with apply writes the
 * best setting's drop-in (or removes tune's); restores the unit's state on failure.
 * Renders with render(res, n, best, cpus, path of the drop-in): cpus, what the quota of
 * the unit's cgroup allows where fewer than the CPUs online, else 0. Returns the exit
 * status. */
typedef void tune_render(const struct tune_setting *s, const struct tune_result *res, int n,
                         int best, int cpus, const char *path);
int tune_unit(const char *name, const struct tune_setting *s, int n, int64_t for_ns, bool apply,
              tune_render *render);
/* Removes what tune wrote for the unit name (its drop-ins) and restarts it if it ran:
 * the exit status. */
int tune_unit_revert(const char *name);

/* ---- another process (cmd_tune_pid.c) ---- */
/* The service unit that owns the process arg (a PID) into name: exits 2 for bad input, a
 * process that does not exist, or one in no service unit. */
void tune_pid_unit(const char *arg, char *name, size_t n);
/* The CPUs the quota of pid's cgroup (v1 or v2) and its parents allow, rounded up; 0: no quota,
 * or not readable. */
int tune_pid_cpus(long pid);

#endif
