/* SPDX-License-Identifier: MIT */
/*
 * punctual/clock.h: the cheapest correct monotonic clock, a coarse clock, and a cycle
 * counter converted to nanoseconds. Instants are int64_t ns on CLOCK_MONOTONIC's
 * timebase.
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

/* CLOCK_MONOTONIC_COARSE: behind pn_now() by up to pn_now_coarse_resolution(). */
PN_API int64_t pn_now_coarse(void);

/* The coarse clock's resolution in ns: one tick. */
PN_API int64_t pn_now_coarse_resolution(void);

/* Where pn_cycles() reads from. */
enum pn_cycles_source {
	PN_CYCLES_TSC = 1,
	PN_CYCLES_CNTVCT = 2,
	PN_CYCLES_CLOCK = 3, /* no trusted counter: pn_now() */
};

/* The cycle counter, unordered: for timing code in one thread. Where the counter cannot
 * be trusted it returns pn_now(). */
PN_API uint64_t pn_cycles(void);

/* The cycle counter read after every earlier instruction completes: never below the
 * thread's earlier reads on the same CPU. Across CPUs it keeps order only where their
 * counters agree; a VM's host can break that by their skew (pn_cycles_warp_check). */
PN_API uint64_t pn_cycles_ordered(void);

/* What pn_cycles_warp_check saw. */
struct pn_cycles_warp {
	uint64_t reads;
	uint64_t warps; /* reads smaller than the read before them */
	int64_t max_ns; /* the largest step back */
	int cpus;       /* 2, or 1: one CPU allowed, nothing checked */
};

/* The kernel's TSC warp check on pn_cycles_ordered over two CPUs; the caller's affinity is
 * put back. 0; -EINVAL for NULL or a duration outside (0, 60 s]; -errno (*w untouched). */
PN_API int pn_cycles_warp_check(int64_t duration_ns, struct pn_cycles_warp *w);

/* A cycle count in ns at the calibrated rate. The first call calibrates if nothing has,
 * waiting until the library has been loaded for 100 ms. */
PN_API int64_t pn_cycles_to_ns(int64_t cycles);

/* Calibrates against CLOCK_MONOTONIC_RAW over at least base_ns since load (0: 100 ms),
 * blocking for what remains. 0; -EINVAL if base_ns < 0 or > 60 s. Thread-safe. */
PN_API int pn_cycles_calibrate(int64_t base_ns);

struct pn_cycles_info {
	int source; /* enum pn_cycles_source */
	const char *name;
	const char *reason; /* why this source */
	int calibrated;     /* 1 once a rate is in force */
	double hz;
	int64_t base_ns;        /* time between the two anchors */
	int64_t uncertainty_ns; /* the anchors' summed widths */
};

/* The counter and its calibration, without calibrating. -EINVAL for NULL. */
PN_API int pn_cycles_info(struct pn_cycles_info *info);

/* pn_cycles_info's source. */
PN_API int pn_cycles_source(void);

#ifdef __cplusplus
}
#endif
#endif
