/* SPDX-License-Identifier: MIT */
/*
 * calltime.c: a timed call's call time. Its deadline counts from the instant the
 * program called, so the counter is read first thing at the entry (pn__calltime_entry, ordered:
 * never before the program's own clock reads) and converted here once the call is to be
 * made precise: a clock read to warm its path, then the counter, then the clock (at or
 * after the counter's instant), less the counts since the entry at call_mult, a lower
 * bound of the clock's ns per count. The call time so comes out at or after the instant of
 * the call, never before it, and most of the clock's own cold read leaves the deadline
 * (docs/DESIGN.md, "The call time", has the measurements).
 *
 * The bound: the anchor is the counter read, then the clock (anchor_t at or after the
 * counter's instant); once it is CALL_BASE_NS old, a call reads the clock, then the counter
 * (the clock's value at or before the counter's instant), and the ratio of the two spans is
 * at most the clock's mean ns per count between them (a preemption in either pair only
 * lowers it). Less a quarter (CALL_MARGIN_SHIFT): the clock's rate against the counter is
 * not fixed. adjtimex's ADJ_TICK moves CLOCK_MONOTONIC's by up to 10%, so a rate taken in
 * one regime may be 1.1/0.9 of another's; a clock that does not count in the counter's
 * units (hpet, acpi_pm) drifts against it too. A gap whose conversion exceeds
 * CALL_GAP_MAX_NS is not converted: a suspend in it (the counter runs on, the monotonic
 * clock does not) would put the call time before the entry, and a preemption that long
 * makes the wait late anyway. Until the anchor is old enough, or without a trusted counter
 * (the kernel dropped the TSC: pn_cycles_source), the call time is the clock read.
 */
#include "shim/core.h"

#define CALL_BASE_NS      10000000
#define CALL_MARGIN_SHIFT 2
#define CALL_GAP_MAX_NS   1000000
#define CALL_NONE         UINT64_MAX
static uint64_t anchor_c; /* atomic, set after anchor_t; 0: none (a call before the constructor) */
static int64_t anchor_t;
static uint64_t call_mult; /* ns per count << 32, atomic; 0: not yet; CALL_NONE: never */

__attribute__((constructor)) static void call_anchor(void)
{
	if (PN_ARCH_CYCLES_SOURCE == PN_CYCLES_CLOCK ||
	    pn_cycles_source() != PN_ARCH_CYCLES_SOURCE) {
		__atomic_store_n(&call_mult, CALL_NONE, __ATOMIC_RELAXED);
		return;
	}
	uint64_t c = pn__arch_cycles_ordered();
	anchor_t = pn_now();
	__atomic_store_n(&anchor_c, c, __ATOMIC_RELEASE);
}

/* call_mult from the anchor, once the anchor is old enough (stored); 0 until then. */
static __attribute__((noinline)) uint64_t call_mult_measure(void)
{
	int64_t t = pn_now();
	uint64_t c = pn__arch_cycles_ordered(), c0 = __atomic_load_n(&anchor_c, __ATOMIC_ACQUIRE);
	if (!c0 || t - anchor_t < CALL_BASE_NS)
		return 0;
	uint64_t m = CALL_NONE; /* a counter that did not advance: never */
	if (c > c0) {
		unsigned __int128 r = ((unsigned __int128)(t - anchor_t) << 32) / (c - c0);
		r -= r >> CALL_MARGIN_SHIFT;
		m = r > 0 && r < CALL_NONE ? (uint64_t)r : CALL_NONE;
	}
	__atomic_store_n(&call_mult, m, __ATOMIC_RELAXED);
	return m;
}

int64_t pn__calltime_ns(uint64_t entry)
{
	uint64_t m = __atomic_load_n(&call_mult, __ATOMIC_RELAXED);
	if (PN_UNLIKELY(!m))
		m = call_mult_measure();
	if (!m || m == CALL_NONE)
		return pn_now();
	(void)pn_now(); /* the cold read, within the gap: the one below is quick */
	uint64_t c = pn__arch_cycles_ordered();
	int64_t now = pn_now();
	if (c < entry)
		return now;
	unsigned __int128 gap = ((unsigned __int128)(c - entry) * m) >> 32;
	return gap <= CALL_GAP_MAX_NS ? now - (int64_t)gap : now;
}

/* Test hook: the call time of an entry spin_ns before its conversion (the counter read,
 * then a spin of spin_ns on the clock), so that a test can see it is never before the
 * entry and, with a counter, near it rather than at the conversion. */
EXPORT int64_t punctual_preload_call_time(int64_t spin_ns);
EXPORT int64_t punctual_preload_call_time(int64_t spin_ns)
{
	uint64_t entry = pn__arch_cycles_ordered();
	if (spin_ns > 0) /* none: the conversion's clock read as cold as at a call's entry */
		for (int64_t end = pn_now() + spin_ns; pn_now() < end;)
			pn__arch_relax();
	return pn__calltime_ns(entry);
}
