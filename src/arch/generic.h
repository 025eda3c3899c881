/* SPDX-License-Identifier: MIT */
/* arch/generic.h: no trusted counter; pn_cycles() falls back to pn_now(). */
#ifndef PUNCTUAL_ARCH_GENERIC_H
#define PUNCTUAL_ARCH_GENERIC_H

#include <stdint.h>

#define PN_ARCH_CYCLES_SOURCE 3 /* PN_CYCLES_CLOCK */
#define PN_ARCH_CYCLES_NAME   "clock_monotonic"

static inline uint64_t pn__arch_cycles(void)
{
	return 0;
}

static inline uint64_t pn__arch_cycles_ordered(void)
{
	return 0;
}

static inline void pn__arch_relax(void)
{
	__asm__ __volatile__("" ::: "memory");
}

static inline void pn__arch_touch(const void *p)
{
	__builtin_prefetch(p);
}

static inline int pn__arch_cycles_invariant(void)
{
	return 0;
}

static inline uint64_t pn__arch_cycles_hz(void)
{
	return 0;
}

#endif
