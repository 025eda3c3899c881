/* SPDX-License-Identifier: MIT */
/* The host every report describes; /proc and /sys lines read and written. */
#ifndef PUNCTUAL_UTIL_HOST_H
#define PUNCTUAL_UTIL_HOST_H

#include <stddef.h>
#include <stdint.h>

struct host {
	char kernel[256];
	char cpu[128];
	char virt[96];          /* "KVM (CPUID hypervisor bit, ...)", "none" */
	char dmi[160];          /* "" if unreadable */
	char container[48];     /* the container manager's name, or "" */
	char container_how[32]; /* where it was found */
	char clocksource[64];
	char clocksources[256]; /* space separated */
	int invariant_tsc;      /* 1, 0, or -1 where not applicable */
	int64_t coarse_res_ns;
	double tick_hz;                 /* from the coarse clock's resolution */
	char nohz_full[64];             /* CPU list, "" when none or unreadable */
	char isolated[64];              /* CPU list, "" when none or unreadable */
	int64_t slack_self, slack_pid1; /* or -errno */
};
/* Fills h; never fails: an unreadable fact is "unknown", "" or -errno. */
void host_read(struct host *h);
/* The CPUs' time and its steal in /proc/stat's ticks ({0, 0}: unreadable). */
void host_cpu_ticks(uint64_t t[2]);
/* The share of the CPUs' time stolen between two reads, 0 unknown. */
double host_steal(const uint64_t before[2], const uint64_t after[2]);
/* The first line of a root-prefixed /proc or /sys file, trimmed, into buf: 0 or -errno. */
int read_sysfs_line(const char *path, char *buf, size_t n);
/* Writes val to an existing file in one write: 0 or -errno. */
int write_sysfs(const char *path, const char *val);

#endif
