/* SPDX-License-Identifier: MIT */
/* util/host.h: host facts (sysinfo.c): kernel, CPU, clocksources, the tick; /proc and
 * /sys lines read and written. */
#ifndef PUNCTUAL_UTIL_HOST_H
#define PUNCTUAL_UTIL_HOST_H

#include <stddef.h>
#include <stdint.h>

struct host {
	char kernel[256];
	char cpu[128];
	char clocksource[64];
	char clocksources[256]; /* space separated */
	int invariant_tsc;      /* 1, 0, or -1 where not applicable */
	int64_t coarse_res_ns;
	double tick_hz; /* estimated from the coarse clock's resolution */
};
/* Fills h; a fact that cannot be read is "unknown" (or 0), so it never fails. */
void host_read(struct host *h);
/* The first line of a /proc or /sys file (root-prefixed), without its newline and
 * trailing blanks, into buf: 0 or -errno. */
/* The CPUs' time and the steal in it, in /proc/stat's ticks, into t ({0, 0}: unreadable):
 * what a hypervisor took from this guest between two reads. */
void host_cpu_ticks(uint64_t t[2]);
/* The share of the CPUs' time stolen between the reads before and after, 0 unknown. */
double host_steal(const uint64_t before[2], const uint64_t after[2]);
int read_sysfs_line(const char *path, char *buf, size_t n);
/* Writes val to an existing file such as a sysfs attribute in one write: 0 or -errno. */
int write_sysfs(const char *path, const char *val);

#endif
