/* SPDX-License-Identifier: MIT */
/* The host every report describes (sysinfo.c reads it, render/figures.c's host_json writes
 * it for clock, sleep and probe alike); /proc and /sys lines read and written. */
#ifndef PUNCTUAL_UTIL_HOST_H
#define PUNCTUAL_UTIL_HOST_H

#include <stddef.h>
#include <stdint.h>

struct host {
	char kernel[256];
	char cpu[128];
	char virt[96];          /* "KVM (CPUID hypervisor bit, ...)", "none", ... */
	char dmi[160];          /* DMI vendor and product, "" if unreadable */
	char container[48];     /* the container manager's name ("podman"), or "" */
	char container_how[32]; /* where it was found; "": no container found */
	char clocksource[64];
	char clocksources[256]; /* space separated */
	int invariant_tsc;      /* 1, 0, or -1 where not applicable */
	int64_t coarse_res_ns;
	double tick_hz;                 /* estimated from the coarse clock's resolution */
	char nohz_full[64];             /* CPU list, "" when none or unreadable */
	char isolated[64];              /* CPU list, "" when none or unreadable */
	int64_t slack_self, slack_pid1; /* timer slack in ns, or -errno */
};
/* Fills h; a fact that cannot be read is "unknown", "" or -errno, so it never fails. */
void host_read(struct host *h);
/* The CPUs' time and the steal in it, in /proc/stat's ticks, into t ({0, 0}: unreadable):
 * what a hypervisor took from this guest between two reads. */
void host_cpu_ticks(uint64_t t[2]);
/* The share of the CPUs' time stolen between the reads before and after, 0 unknown. */
double host_steal(const uint64_t before[2], const uint64_t after[2]);
/* The first line of a /proc or /sys file (root-prefixed), without its newline and
 * trailing blanks, into buf: 0 or -errno. */
int read_sysfs_line(const char *path, char *buf, size_t n);
/* Writes val to an existing file such as a sysfs attribute in one write: 0 or -errno. */
int write_sysfs(const char *path, const char *val);

#endif
