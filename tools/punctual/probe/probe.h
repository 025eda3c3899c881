/* SPDX-License-Identifier: MIT */
/* What `punctual probe` measures, and its sections, each of one shape, run in turn. */
#ifndef PUNCTUAL_PROBE_H
#define PUNCTUAL_PROBE_H

#include <stdbool.h>
#include <stdint.h>

#include <punctual/clock.h>
#include <punctual/cpus.h>
#include <punctual/sleep.h>
#include "util/diag.h"
#include "util/host.h"
#include "util/json.h"
#include "measure/clocks.h"
#include "measure/matrix.h"
#include "measure/timers.h"
#include "probe/frontier.h"
#include "probe/reco.h"
#include "probe/why.h"

#define PROBE_INTERVALS 3
#define PROBE_SLACKS    2
#define PROBE_MECHS     6
#define PROBE_RECOS     8

struct probe_timers {
	bool run;
	int timers;
	int64_t min_delay, max_delay; /* ns */
	int percent;                  /* precision as % of the delay in the coalesced run */
	uint64_t wakeups_exact;       /* precision 0 */
	uint64_t wakeups_window;      /* precision = percent of the delay */
	uint64_t optimum_window;      /* the offline optimum for the same windows */
	uint64_t past_window;         /* fires after their window, coalesced run */
	uint64_t early;               /* fires before the deadline: 0 */
	int64_t late_p99;             /* ns, coalesced run */
	struct timers_config config;  /* the coalesced run's, */
	struct timers_result *result; /* and its result */
};

/* 1 ms sleeps beside CPU hogs, four variants. */
struct probe_shared {
	bool run;
	int error;          /* -errno: the hogs could not be started */
	struct frontier *f; /* NULL until measured */
};

/* The quota's throttling from the probe's start to the why-late loop's end (the shared
 * run's hogs would throttle a quota by themselves): spinning there spends the quota. */
struct probe_quota {
	struct causes_cgroup cg; /* the levels with a quota */
	struct pn__cgroup_stat before[CAUSES_LEVELS];
	int status[CAUSES_LEVELS]; /* 0, or -errno: that level's cpu.stat unreadable */
	int level;                 /* the level throttled the longest, or -1 */
	uint64_t throttled;        /* its periods throttled */
	int64_t throttled_ns;
};

struct probe {
	bool quick;
	struct host host;
	struct pn_cycles_info cycles;
	int nclocks;
	struct clock_result *clocks;
	int64_t intervals[PROBE_INTERVALS], slacks[PROBE_SLACKS];
	const struct sleep_mech *mechs[PROBE_MECHS];
	struct sleep_matrix sleeps;
	struct pn_cpu_info cpu;
	int cpu_status; /* pn_cpu_info's: -errno and cpu is not filled */
	int cpu_count;  /* pn_cpu_count(), which answers even then */
	struct probe_timers timers;
	struct probe_why why;
	struct probe_frontier frontier;
	struct probe_shared shared;
	struct probe_quota quota;
	struct probe_reco recos[PROBE_RECOS];
	int nrecos;
	const char *unsure[PROBE_RECOS]; /* fixes measured lower, not beyond the noise */
	int nunsure;
	uint64_t ticks_before[2], ticks_after[2]; /* /proc/stat's CPU time and steal */
	int64_t elapsed;
};

/* A section: it measures (exits 1 on failure), adds the recommendations its figures
 * support, and renders as text, --json and --prom; done frees what it measured. */
struct probe_section {
	const char *name;
	void (*measure)(struct probe *p);
	void (*recommend)(struct probe *p); /* NULL: none */
	void (*text)(const struct probe *p);
	void (*json)(struct json *j, const struct probe *p);
	void (*prom)(FILE *f, const struct probe *p);
	void (*done)(struct probe *p);
};
extern const struct probe_section probe_host, probe_clocks, probe_sleeps, probe_timers, probe_cpus,
        probe_frontier, probe_shared, probe_why;

/* The p99 of h the report shows and the advice quotes: from FRONTIER_MIN_P99 values on,
 * else -1 ("-"). */
static inline int64_t probe_p99(const struct pn_hist *h)
{
	return pn_hist_count(h) >= FRONTIER_MIN_P99 ? pn_hist_percentile(h, 99) : -1;
}

/* Index of a mechanism or a clock source in the probe's results, or -1. */
int probe_mech(const struct probe *p, const char *id);
int probe_clock(const struct probe *p, const char *id);

/* Appends to buf whether the shared-CPU run saw a short EEVDF slice win the wakeups a
 * plain program lost; nothing when it did not run. */
void probe_shared_note(const struct probe *p, char *buf, size_t n);

/* The quota levels' counters before any section measures and at the why-late loop's end;
 * whether a quota throttled the probe (then no advice spins); the quota's advice. */
void probe_quota_begin(struct probe *p);
void probe_quota_end(struct probe *p);
bool probe_throttled(const struct probe *p);
void probe_quota_reco(struct probe *p);

/* The report's first lines: each loop length's p99 lateness, the kernel alone's and
 * with the advised fix. */
void probe_verdict_text(const struct probe *p);
void probe_verdict_json(struct json *j, const struct probe *p);

/* Appends a recommendation of kind (naming command, "" none), its text from fmt; returns
 * it (NULL when the list is full). */
struct probe_reco *probe_reco_add(struct probe *p, const char *kind, const char *command,
                                  const char *fmt, ...) PN_FMT(4, 5);
/* The next free recommendation (counted once filled), or NULL when full. */
struct probe_reco *probe_reco_next(struct probe *p);
/* What r's change moved, measured (r NULL: nothing). */
void probe_reco_measured(struct probe_reco *r, const char *figure, double before, double after);
/* Whether fix's p99 is lower than base's beyond the noise of repeated runs. */
bool probe_sure(const struct pn_hist *fix, const struct pn_hist *base);
/* Whether a count n is below e, the count expected, by two Poisson standard deviations. */
bool probe_fewer(double n, double e);
/* The values of h in buckets wholly above t. */
uint64_t probe_count_above(const struct pn_hist *h, int64_t t);
/* Notes what (static) as a fix measured lower but not beyond the noise. */
void probe_unsure(struct probe *p, const char *what);
/* The share of the CPUs' time the hypervisor stole during the probe, 0 unknown. */
double probe_steal(const struct probe *p);
/* What made the host noisy into buf; its length. */
size_t probe_noise(const struct probe *p, char *buf, size_t n);
void probe_reco_text(const struct probe *p);
void probe_reco_json(struct json *j, const struct probe *p);

/* Before measuring: exits 2 if dir cannot be written or created or has a control
 * character (it goes into gnuplot scripts), 1 without gnuplot. */
void probe_plot_check(const char *dir);
/* PNG and SVG charts through gnuplot into dir: 0 or -errno, what naming the file that
 * failed ("" for dir); exits 1 without gnuplot. */
int probe_plot(const struct probe *p, const char *dir, char *what, size_t n);
/* `punctual probe --compare BEFORE AFTER`: its own options; exit status. */
int probe_compare(int argc, char **argv);

#endif
