/* SPDX-License-Identifier: MIT */
/* sysinfo.c: host facts every report starts with: kernel, CPU, clocksources, tick. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <punctual/clock.h>
#include "contract.h"
#include "util/host.h"

#define CS_DIR "/sys/devices/system/clocksource/clocksource0/"

int read_sysfs_line(const char *path, char *buf, size_t n)
{
	int r = pn__fs_read_file(path, buf, n);
	if (r < 0)
		return r;
	buf[strcspn(buf, "\n")] = '\0';
	/* trailing blanks: available_clocksource ends with "kvm-clock \n" */
	for (size_t l = strlen(buf); l && buf[l - 1] == ' '; l--)
		buf[l - 1] = '\0';
	return 0;
}

int write_sysfs(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	size_t len = strlen(val);
	ssize_t w = write(fd, val, len);
	int e = w < 0 ? -errno : (size_t)w != len ? -EIO : 0;
	if (close(fd) < 0 && !e)
		e = -errno;
	return e;
}

static void cpu_model(char *buf, size_t n)
{
	static char info[1 << 16];
	snprintf(buf, n, "unknown");
	if (pn__fs_read_file("/proc/cpuinfo", info, sizeof(info)) <= 0)
		return;
	/* x86: "model name"; arm64 has no model name, only "CPU part". */
	const char *keys[] = {"model name", "Hardware", "CPU part"};
	for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
		char *p = strstr(info, keys[k]);
		if (!p || !(p = strchr(p, ':')))
			continue;
		p += 1 + strspn(p + 1, " \t");
		snprintf(buf, n, "%.*s", (int)strcspn(p, "\n"), p);
		return;
	}
}

void host_read(struct host *host)
{
	memset(host, 0, sizeof(*host));
	struct utsname u;
	if (uname(&u) == 0)
		snprintf(host->kernel, sizeof(host->kernel), "%s %s %s", u.sysname, u.release,
		         u.machine);
	cpu_model(host->cpu, sizeof(host->cpu));
	if (read_sysfs_line(CS_DIR "current_clocksource", host->clocksource,
	                    sizeof(host->clocksource)) < 0)
		snprintf(host->clocksource, sizeof(host->clocksource), "unknown");
	if (read_sysfs_line(CS_DIR "available_clocksource", host->clocksources,
	                    sizeof(host->clocksources)) < 0)
		snprintf(host->clocksources, sizeof(host->clocksources), "unknown");
#if defined(__x86_64__)
	host->invariant_tsc = pn__arch_cycles_invariant();
#else
	host->invariant_tsc = -1;
#endif
	host->coarse_res_ns = pn_now_coarse_resolution();
	/* The coarse clock advances once per tick, so its resolution is 1/HZ. */
	host->tick_hz = host->coarse_res_ns > 0 ? round(1e9 / (double)host->coarse_res_ns) : 0;
}

void host_cpu_ticks(uint64_t t[2])
{
	unsigned long long v[8] = {0};
	FILE *f = fopen("/proc/stat", "re");
	t[0] = t[1] = 0;
	if (!f)
		return;
	if (fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
	           &v[4], &v[5], &v[6], &v[7]) == 8) {
		for (int i = 0; i < 8; i++)
			t[0] += v[i];
		t[1] = v[7];
	}
	fclose(f);
}

double host_steal(const uint64_t before[2], const uint64_t after[2])
{
	if (after[0] <= before[0] || after[1] < before[1])
		return 0;
	return (double)(after[1] - before[1]) / (double)(after[0] - before[0]);
}
