/* SPDX-License-Identifier: MIT */
/* arch/aarch64.h: the generic timer's virtual counter and the spin hint on arm64. */
#ifndef PUNCTUAL_ARCH_AARCH64_H
#define PUNCTUAL_ARCH_AARCH64_H

#include <stdint.h>

#define PN_ARCH_CYCLES_SOURCE 2 /* PN_CYCLES_CNTVCT */
#define PN_ARCH_CYCLES_NAME   "cntvct_el0"

static inline uint64_t pn__arch_cycles(void)
{
	uint64_t v;
	__asm__ __volatile__("mrs %0, cntvct_el0" : "=r"(v));
	return v;
}

/* isb: the counter read cannot be speculated ahead of earlier instructions. */
static inline uint64_t pn__arch_cycles_ordered(void)
{
	uint64_t v;
	__asm__ __volatile__("isb\n\tmrs %0, cntvct_el0" : "=r"(v)::"memory");
	return v;
}

static inline void pn__arch_relax(void)
{
	__asm__ __volatile__("yield" ::: "memory");
}

/* One load from p (libpunctual's own) to cache its page's translation. */
static inline void pn__arch_touch(const void *p)
{
	unsigned v;
	__asm__ __volatile__("ldrb %w0, [%1]" : "=r"(v) : "r"(p));
	(void)v;
}

/* The architecture requires a constant-rate, system-wide counter. */
static inline int pn__arch_cycles_invariant(void)
{
	return 1;
}

static inline uint64_t pn__arch_cycles_hz(void)
{
	uint64_t f;
	__asm__ __volatile__("mrs %0, cntfrq_el0" : "=r"(f));
	return f;
}

#endif
