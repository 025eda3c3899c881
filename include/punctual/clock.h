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
 * isb; mrs): never smaller than a value the calling thread read before on the same CPU.
 * Across threads, a value read after observing another thread's store is never smaller
 * than the value that thread read before the store where the CPUs' counters agree, which
 * the kernel checks at boot (and drops tsc as a clocksource when they do not). A virtual
 * machine whose host moves a vCPU between host CPUs with unsynchronized counters can break
 * it, by their skew: pn_cycles_warp_check measures that; pn_now() never goes back (the
 * kernel's clock clamps such a step). */
PN_API uint64_t pn_cycles_ordered(void);

/* What pn_cycles_warp_check saw. */
struct pn_cycles_warp {
	uint64_t reads; /* counter reads, the two CPUs taking turns under a lock */
	uint64_t warps; /* reads smaller than the read just before them (on either CPU) */
	int64_t max_ns; /* the largest such step back, in ns (0: none) */
	int cpus;       /* 2, or 1 where the caller may run on one CPU only (nothing checked) */
};

/* The kernel's TSC warp check on pn_cycles_ordered: for duration_ns, the calling thread and
 * one it starts, pinned to the first two CPUs the caller may use, read the counter in turns
 * and count the reads that went back. The caller's CPU affinity is put back. Returns 0;
 * -EINVAL for a NULL w or a duration outside (0, 60 s]; -errno if a thread or the
 * affinity cannot be had (*w untouched then). */
PN_API int pn_cycles_warp_check(int64_t duration_ns, struct pn_cycles_warp *w);

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
