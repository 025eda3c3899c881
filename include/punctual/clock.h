/* SPDX-License-Identifier: MIT */
/*
 * punctual/clock.h: the cheapest correct monotonic clock, a coarse clock, and a cycle
 * counter converted to nanoseconds.
 *
 * Instants are int64_t nanoseconds on CLOCK_MONOTONIC's timebase; durations are their
 * differences. pn_now() reads CLOCK_MONOTONIC through the vDSO function it resolves once
 * (falling back to the system call where the kernel has no vDSO), so it costs what
 * clock_gettime(CLOCK_MONOTONIC) costs, without libc's wrapper.
 */
#ifndef PUNCTUAL_CLOCK_H
#define PUNCTUAL_CLOCK_H

#include <stdint.h>
#include <punctual/version.h>

#ifdef __cplusplus
extern "C" {
#endif

/* CLOCK_MONOTONIC in ns. Never goes backwards, in one thread or across threads. */
PN_API int64_t pn_now(void);

/* CLOCK_MONOTONIC_COARSE in ns: the time at the last tick (FreeBSD's getbinuptime()).
 * Several times cheaper than pn_now(); behind it by up to pn_now_coarse_resolution(). */
PN_API int64_t pn_now_coarse(void);

/* The coarse clock's resolution in ns (clock_getres: one tick, 4 ms at HZ=250). */
PN_API int64_t pn_now_coarse_resolution(void);

/* Where pn_cycles() reads from. */
enum pn_cycles_source {
	PN_CYCLES_TSC = 1,    /* x86-64 rdtsc, invariant TSC */
	PN_CYCLES_CNTVCT = 2, /* aarch64 cntvct_el0 */
	PN_CYCLES_CLOCK = 3,  /* no trusted counter: pn_now() in ns */
};

/* The raw cycle counter: one unordered instruction (rdtsc, mrs cntvct_el0). The CPU may
 * execute it before earlier loads and stores: use it to time code in one thread. Where
 * the counter cannot be trusted (see pn_cycles_source()) it returns pn_now(). */
PN_API uint64_t pn_cycles(void);

/* The cycle counter read after every earlier instruction has completed (lfence; rdtsc,
 * isb; mrs): a value read after observing another thread's store is never smaller than
 * the value that thread read before the store. */
PN_API uint64_t pn_cycles_ordered(void);

/* A cycle count (a difference of two pn_cycles() values) in ns, at the rate calibrated
 * against CLOCK_MONOTONIC_RAW. The first call calibrates if nothing has (see
 * pn_cycles_calibrate); it then waits until the library has been loaded for 100 ms.
 * Identity when the source is PN_CYCLES_CLOCK. Negative counts give negative ns. */
PN_API int64_t pn_cycles_to_ns(int64_t cycles);

/* Calibrates the counter's rate against CLOCK_MONOTONIC_RAW over a base of at least
 * base_ns (0: the default 100 ms; the time since the library loaded counts towards it),
 * pairing counter reads with the tightest kernel-read sandwiches at both ends. Blocks
 * for what remains of the base. Returns 0; -EINVAL if base_ns < 0 or > 60 s. Safe to call
 * from several threads; the new rate replaces the old one atomically. */
PN_API int pn_cycles_calibrate(int64_t base_ns);

struct pn_cycles_info {
	int source;             /* enum pn_cycles_source */
	const char *name;       /* "tsc", "cntvct_el0", "clock_monotonic" */
	const char *reason;     /* why this source: "invariant TSC (CPUID 0x80000007 EDX[8])" */
	int calibrated;         /* 1 once a rate is in force */
	double hz;              /* counts per second (1e9 for PN_CYCLES_CLOCK) */
	int64_t base_ns;        /* calibration base: time between the two anchors */
	int64_t uncertainty_ns; /* sum of the two anchors' sandwich widths */
};

/* The counter in use and its calibration, without calibrating. -EINVAL for NULL. */
PN_API int pn_cycles_info(struct pn_cycles_info *info);

/* Shorthand: pn_cycles_info's source. */
PN_API int pn_cycles_source(void);

#ifdef __cplusplus
}
#endif
#endif
