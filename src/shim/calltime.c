/* SPDX-License-Identifier: MIT */
/*
 * calltime.c: a timed call's call time. Its deadline counts from the instant the program
 * called: the counter is read first thing at the entry and converted once the call is
 * made precise, the clock less the counts since the entry at call_mult, a lower bound of
 * the clock's ns per count. So the call time is never before the call, and the clock's
 * cold read leaves the deadline. Without a trusted counter, a young anchor or over a long
 * gap, it is the clock read (docs/DESIGN.md, "The call time", has the bound).
 */
#include "shim/core.h"

#define CALL_BASE_NS      10000000
#define CALL_MARGIN_SHIFT 2
#define CALL_GAP_MAX_NS   1000000
#define CALL_NONE         UINT64_MAX
static uint64_t anchor_c; /* atomic, set after anchor_t; 0: none yet */
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

/* call_mult from the anchor once it is old enough (stored); 0 until then. */
static __attribute__((noinline)) uint64_t call_mult_measure(void)
{
	int64_t t = pn_now();
	uint64_t c = pn__arch_cycles_ordered(), c0 = __atomic_load_n(&anchor_c, __ATOMIC_ACQUIRE);
	if (!c0 || t - anchor_t < CALL_BASE_NS)
		return 0;
	uint64_t m = CALL_NONE; /* a counter that did not advance */
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
	(void)pn_now(); /* the cold read, within the gap */
	uint64_t c = pn__arch_cycles_ordered();
	int64_t now = pn_now();
	if (c < entry)
		return now;
	unsigned __int128 gap = ((unsigned __int128)(c - entry) * m) >> 32;
	return gap <= CALL_GAP_MAX_NS ? now - (int64_t)gap : now;
}

/* Test hook: the call time of an entry spin_ns before its conversion, never before the
 * entry and, with a counter, near it. */
EXPORT int64_t punctual_preload_call_time(int64_t spin_ns);
EXPORT int64_t punctual_preload_call_time(int64_t spin_ns)
{
	uint64_t entry = pn__arch_cycles_ordered();
	if (spin_ns > 0) /* none: the conversion's clock read as cold as at an entry */
		for (int64_t end = pn_now() + spin_ns; pn_now() < end;)
			pn__arch_relax();
	return pn__calltime_ns(entry);
}
