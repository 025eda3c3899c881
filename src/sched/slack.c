/* SPDX-License-Identifier: MIT */
/*
 * slack.c: timer slack, the calling thread's through prctl and any task's through
 * /proc/PID/timerslack_ns.
 *
 * prctl goes through syscall(2): glibc's wrapper returns int, which would truncate a slack
 * above 2^31 ns. A missing /proc/PID and a kernel without timerslack_ns both say ENOENT:
 * the directory tells them apart. Access to another task is checked at read or write,
 * not open (the file is 0666), so EPERM comes from those, and from open() only under
 * hidepid=noaccess; EACCES means the same.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <punctual/slack.h>
#include "internal.h"

PN_API int64_t pn_slack_get(void)
{
	long r = syscall(SYS_prctl, PR_GET_TIMERSLACK, 0L, 0L, 0L, 0L);
	/* a value above LONG_MAX (writable only through /proc) comes back negative: saturate */
	if (r < 0)
		return INT64_MAX;
	return (int64_t)r;
}

/* The slack as pn_slack_set last set it (0: unknown): a sleep skips a prctl it needs not. */
static __thread int64_t known;

int64_t pn__slack_known(void)
{
	return known;
}

int pn__slack_put(int64_t ns)
{
	if (ns < 0 || (uint64_t)ns > ULONG_MAX)
		return -EINVAL;
	int e = errno; /* the shim calls this on the program's behalf */
	int r = syscall(SYS_prctl, PR_SET_TIMERSLACK, (unsigned long)ns, 0L, 0L, 0L) < 0 ? -errno
	                                                                                 : 0;
	errno = e;
	return r;
}

PN_API int pn_slack_set(int64_t ns)
{
	int r = pn__slack_put(ns);
	if (r == 0)
		known = ns; /* 0 resets to a default whose value is not known here */
	return r;
}

static int proc_error(pid_t pid, int err)
{
	if (err == EACCES || err == EPERM)
		return -EPERM;
	if (err != ENOENT && err != ENOTDIR)
		return -err;
	/* which one is missing: the task or the file (an old kernel)? */
	char rel[32], dir[PATH_MAX];
	struct stat st;
	snprintf(rel, sizeof(rel), "/proc/%d", (int)pid);
	if (pn__fs_path(dir, sizeof(dir), pn__fs_root(), rel, NULL) < 0)
		return -ENAMETOOLONG;
	if (stat(dir, &st) < 0)
		return errno == EACCES || errno == EPERM ? -EPERM : -ESRCH;
	return S_ISDIR(st.st_mode) ? -ENOENT : -ESRCH;
}

/* An unsigned decimal and a newline; anything else is not the kernel's. */
static int64_t parse_slack(const char *s)
{
	uint64_t v = 0;
	const char *p = s;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, *p - '0', &v))
			return -EIO;
	}
	if (p == s || (*p == '\n' && p[1] != '\0') || (*p != '\n' && *p != '\0'))
		return -EIO;
	return v > INT64_MAX ? INT64_MAX : (int64_t)v;
}

PN_API int64_t pn_slack_get_pid(pid_t pid)
{
	if (pid <= 0)
		return -EINVAL;
	char path[64], buf[32];
	snprintf(path, sizeof(path), "/proc/%d/timerslack_ns", (int)pid);
	int r = pn__fs_read_file(path, buf, sizeof(buf));
	if (r < 0)
		return proc_error(pid, -r);
	/* a full buffer is more digits than a u64 has */
	if (r == 0 || (size_t)r >= sizeof(buf) - 1)
		return -EIO;
	return parse_slack(buf);
}

PN_API int pn_slack_set_pid(pid_t pid, int64_t ns)
{
	if (pid <= 0 || ns < 0)
		return -EINVAL;
	char path[64], val[32];
	snprintf(path, sizeof(path), "/proc/%d/timerslack_ns", (int)pid);
	int len = snprintf(val, sizeof(val), "%lld", (long long)ns);
	int e = pn__fs_write_file(path, val, (size_t)len);
	return e ? proc_error(pid, -e) : 0;
}
