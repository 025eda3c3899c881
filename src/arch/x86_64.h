/* SPDX-License-Identifier: MIT */
/* arch/x86_64.h: counter reads and the spin hint on x86-64. */
#ifndef PUNCTUAL_ARCH_X86_64_H
#define PUNCTUAL_ARCH_X86_64_H

#include <cpuid.h>
#include <stdint.h>

#define PN_ARCH_CYCLES_SOURCE 1 /* PN_CYCLES_TSC */
#define PN_ARCH_CYCLES_NAME   "tsc"

static inline uint64_t pn__arch_cycles(void)
{
	uint32_t lo, hi;
	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	return (uint64_t)hi << 32 | lo;
}

/* lfence is dispatch-serializing on Intel and, as Linux sets it up, on AMD (the kernel's
 * rdtsc_ordered). */
static inline uint64_t pn__arch_cycles_ordered(void)
{
	uint32_t lo, hi;
	__asm__ __volatile__("lfence\n\trdtsc" : "=a"(lo), "=d"(hi)::"memory");
	return (uint64_t)hi << 32 | lo;
}

static inline void pn__arch_relax(void)
{
	__builtin_ia32_pause();
}

/* One load from p (libpunctual's own code or data) to cache its page's translation, in
 * assembly so that sanitizers do not see it. */
static inline void pn__arch_touch(const void *p)
{
	unsigned char v;
	__asm__ __volatile__("movb (%1), %0" : "=q"(v) : "r"(p));
	(void)v;
}

/* Invariant TSC: CPUID 0x80000007 EDX bit 8. */
static inline int pn__arch_cycles_invariant(void)
{
	unsigned a, b, c, d;
	if (!__get_cpuid(0x80000007, &a, &b, &c, &d))
		return 0;
	return (d >> 8) & 1;
}

/* The counter's nominal frequency when the hardware states it exactly; 0 otherwise. */
static inline uint64_t pn__arch_cycles_hz(void)
{
	return 0;
}

#endif
