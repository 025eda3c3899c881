/* SPDX-License-Identifier: MIT */
/*
 * What `punctual tune` reads of another process: the service unit that owns it (the shim
 * cannot join a running process, so --pid tunes its unit), and the CPUs its cgroup's quota
 * allows. Every path is read under pn__fs_root()'s prefix.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "contract.h"
#include "util/diag.h"
#include "tune/tune.h"

/* /proc/PID/cgroup into buf: 0, or -errno (-ENOENT: no such process). */
static int read_cgroup(long pid, char *buf, size_t n)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%ld/cgroup", pid);
	int r = pn__fs_read(pn__fs_root(), path, NULL, buf, n, PN__FS_WHOLE);
	return r < 0 ? r : 0;
}

/* The cgroup path of systemd's units: the v2 line, else v1's "name=systemd" (a hybrid
 * host's v2 line may say only "/"); NULL when neither. Points into text. */
static char *systemd_path(char *text)
{
	char *v1 = NULL, *v2 = NULL;
	for (char *l = strtok(text, "\n"); l; l = strtok(NULL, "\n")) {
		char *c = strchr(l, ':');
		if (strncmp(l, "0::", 3) == 0)
			v2 = l + 3;
		else if (c && strncmp(c + 1, "name=systemd:", 13) == 0)
			v1 = c + 14;
	}
	return v2 && (strcmp(v2, "/") != 0 || !v1) ? v2 : v1;
}

/* The service in cgroup path p into name: 0, or -1 with why. Units under a user's manager
 * (user@UID) are refused: `systemctl` without --user cannot restart them. */
static int service_of(const char *p, char *name, size_t n, const char **why)
{
	for (const char *c = p; c && *c; c = strchr(c, '/')) {
		c += *c == '/';
		size_t len = strcspn(c, "/");
		if (len > 8 && strncmp(c + len - 8, ".service", 8) == 0) {
			if (strncmp(c, "user@", 5) == 0 && c[len] == '/' && c[len + 1]) {
				*why = "runs under a user's service manager (systemctl --user), "
				       "which tune does not drive";
				return -1;
			}
			snprintf(name, n, "%.*s", (int)len, c);
			return 0;
		}
	}
	*why = "is in no service unit";
	return -1;
}

void tune_pid_unit(const char *arg, char *name, size_t n)
{
	char *end;
	errno = 0;
	long pid = strtol(arg, &end, 10);
	if (!*arg || *end || errno || pid <= 0 || pid > INT_MAX)
		usage_error("--pid: '%s' is not a process ID", arg);
	char text[8192];
	int r = read_cgroup(pid, text, sizeof(text));
	if (r == -ENOENT || r == -ESRCH)
		usage_error("--pid %ld: no such process", pid);
	if (r < 0)
		usage_error("--pid %ld: cannot read /proc/%ld/cgroup: %s", pid, pid, strerror(-r));
	const char *path = systemd_path(text), *why = "is in no systemd cgroup";
	if (!path || service_of(path, name, n, &why) < 0)
		usage_error("--pid %ld %s; the shim must be loaded when the program starts, and "
		            "no unit restarts it under a setting: `punctual tune -- CMD` tunes it "
		            "started anew, `punctual why %ld` explains its late waits as it runs",
		            pid, why, pid);
}

int tune_pid_cpus(long pid)
{
	/* the library's walk, the lowest quota/period up to the mount */
	char file[64], note[256];
	struct pn_cpu_info info;
	int64_t q, p;
	memset(&info, 0, sizeof(info));
	snprintf(file, sizeof(file), "/proc/%ld/cgroup", pid);
	pn__cgroup_limit_of(pn__fs_root(), file, &info, &q, &p, note, sizeof(note), true);
	if (q <= 0 || p <= 0)
		return 0;
	double lim = (double)q / (double)p;
	return (int)fmax(ceil(lim - 1e-9), 1); /* pn_cpu_count's default rounding */
}
