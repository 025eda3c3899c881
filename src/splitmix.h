/* SPDX-License-Identifier: MIT */
/*
 * splitmix.h: splitmix64 (Steele, Lea and Flood, 2014), the one pseudo-random generator of
 * the tool, the benchmarks and the tests: a seed gives the same sequence everywhere, any
 * seed is good. Not for anything that must be unpredictable.
 */
#ifndef PUNCTUAL_SPLITMIX_H
#define PUNCTUAL_SPLITMIX_H

#include <stdint.h>

static inline uint64_t pn__splitmix64(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

#endif
