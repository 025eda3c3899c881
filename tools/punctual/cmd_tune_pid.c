/* SPDX-License-Identifier: MIT */
/*
 * cmd_tune_pid.c: what `punctual tune` reads of another process: the service unit that
 * owns it (tune --pid), and the CPUs its cgroup's quota allows (the CPU-count advice for
 * tune UNIT). The shim cannot join a running process, so --pid tunes the unit, which
 * restarts it with the shim. Every path is read under pn__fs_root()'s prefix.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cpus/cgroup.h"
#include "fs.h"
#include "cmd_tune.h"
#include "tool.h"

/* Where systemd mounts the unified hierarchy (and a v1 one of its own). */
#define CGROUP2_DIR "/sys/fs/cgroup"

/* /proc/PID/cgroup into buf: 0, or -errno (-ENOENT: no such process). */
static int read_cgroup(long pid, char *buf, size_t n)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%ld/cgroup", pid);
	int r = pn__fs_read(pn__fs_root(), path, NULL, buf, n, PN__FS_WHOLE);
	return r < 0 ? r : 0;
}

/* The cgroup path systemd keeps its units in: the v2 line ("0::"), else v1's
 * "name=systemd" hierarchy (a hybrid host's v2 line may say only "/"); NULL when
 * neither. Points into text, cut at the line's end. */
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

/* The service in cgroup path p into name: 0, or -1 with why in why. The first ".service"
 * component is the system manager's unit; one that is a user's manager (user@UID) with
 * more below holds that user's units, which `systemctl` without --user cannot restart. */
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
		usage_error("--pid %ld %s; the shim must be loaded when the program starts: "
		            "use `punctual tune -- CMD`",
		            pid, why);
}

/* The quota of cgroup dir (under the unified hierarchy) and its parents as CPUs: the
 * lowest quota/period on the way up, 0 when none limits. */
static double quota_up(char *dir)
{
	double lim = 0;
	for (;;) {
		char buf[64];
		int64_t q, p;
		if (pn__fs_read(pn__fs_root(), dir, "cpu.max", buf, sizeof(buf), PN__FS_WHOLE) >=
		            0 &&
		    pn__cgroup_parse_max(buf, &q, &p) == 0 && q > 0 &&
		    (lim == 0 || (double)q / (double)p < lim))
			lim = (double)q / (double)p;
		char *slash = strrchr(dir, '/');
		if (!slash || slash == dir + strlen(CGROUP2_DIR))
			return lim;
		*slash = '\0';
	}
}

int tune_pid_cpus(long pid)
{
	char text[8192], dir[PN_CPU_PATH_MAX + sizeof(CGROUP2_DIR)];
	if (read_cgroup(pid, text, sizeof(text)) < 0)
		return 0;
	/* v2 only: a v1 cpu hierarchy's mount point varies; pn_cpu_count reads mountinfo */
	char *v2 = NULL;
	for (char *l = strtok(text, "\n"); l; l = strtok(NULL, "\n"))
		if (strncmp(l, "0::", 3) == 0)
			v2 = l + 3;
	if (!v2 || snprintf(dir, sizeof(dir), "%s%s", CGROUP2_DIR, v2) >= (int)sizeof(dir))
		return 0;
	size_t len = strlen(dir);
	if (len > 1 && dir[len - 1] == '/')
		dir[len - 1] = '\0';
	double lim = quota_up(dir);
	return lim > 0 ? (int)fmax(ceil(lim - 1e-9), 1) : 0; /* ceil, pn_cpu_count's default */
}
