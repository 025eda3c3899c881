/* SPDX-License-Identifier: MIT */
/*
 * runs.c: the one reader of a task's schedstat (runs.h). The file's text is three numbers
 * and a newline; a short or odd read is no reading.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "sched/runs.h"

int pn__runs_parse(const char *s, struct pn__runs *r)
{
	unsigned long long exec, queued, switches;
	char end;
	if (sscanf(s, "%llu %llu %llu%c", &exec, &queued, &switches, &end) != 4 || end != '\n')
		return -EINVAL;
	*r = (struct pn__runs){exec, queued, switches};
	return 0;
}

int pn__runs_pread(int fd, struct pn__runs *r)
{
	char buf[128];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return pn__runs_parse(buf, r);
}

static int read_path(const char *path, struct pn__runs *r)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	int e = pn__runs_pread(fd, r);
	close(fd);
	return e;
}

int pn__runs_open(void)
{
	int fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

int pn__runs_read(struct pn__runs *r)
{
	int fd = pn__runs_open();
	if (fd < 0)
		return fd;
	int e = pn__runs_pread(fd, r);
	close(fd);
	return e;
}

int pn__runs_read_task(pid_t pid, pid_t tid, struct pn__runs *r)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/task/%d/schedstat", (int)pid, (int)tid);
	return read_path(path, r);
}
