/* SPDX-License-Identifier: MIT */
/*
 * rawfork.c FILE: a child of a raw fork system call (no atfork handler runs) counts its
 * waits in a page of its own, never in its parent's. Run as
 * `PUNCTUAL_STATS=1 PUNCTUAL_STATS_FILE=FILE punctual run --precise -- rawfork FILE`: the
 * parent waits 10 times, forks with a raw clone system call, the child waits 30 times and exits,
 * the parent waits 10 more, then reads FILE: the pages of the parent's pid must hold at
 * most its 20 waits and the child's most of its 30 (25: a thread's last wait is counted at
 * its next, or at its exit's report, which _exit skips; before the fix it had none, and the
 * parent's held 49). Exit 0, or 1 with what differs.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "report/record.h"

/* fork as a raw system call, no atfork handler run (clone: aarch64 has no SYS_fork) */
static pid_t raw_fork(void)
{
	return (pid_t)syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0);
}
static void waits(int n)
{
	for (int i = 0; i < n; i++)
		nanosleep(&(struct timespec){0, 200000}, NULL);
}

int main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	if (getenv("PUNCTUAL_EMULATOR")) { /* qemu-user takes madvise as a hint it may drop */
		fprintf(stderr, "rawfork: SKIP: under %s, MADV_WIPEONFORK is not the kernel's\n",
		        getenv("PUNCTUAL_EMULATOR"));
		return 77;
	}
	waits(10);
	pid_t c = raw_fork();
	if (c == 0) {
		waits(30);
		_exit(0);
	}
	int st;
	if (c < 0 || waitpid(c, &st, 0) != c)
		return 1;
	waits(10);
	int fd = open(argv[1], O_RDONLY);
	struct stat s;
	if (fd < 0 || fstat(fd, &s) != 0 || s.st_size == 0) {
		fprintf(stderr, "rawfork: no records in %s\n", argv[1]);
		return 1;
	}
	const char *m = mmap(NULL, (size_t)s.st_size, PROT_READ, MAP_SHARED, fd, 0);
	uint64_t mine = 0, child = 0;
	for (off_t at = 0; m != MAP_FAILED && at + (off_t)sizeof(struct pn__record) <= s.st_size;) {
		const struct pn__record *r = (const void *)(m + at);
		if (memcmp(r->magic, PN__RECORD_MAGIC, sizeof(r->magic)) != 0 || !r->size)
			break;
		if (r->pid == getpid())
			mine += r->waits;
		else if (r->pid == c)
			child += r->waits;
		at += r->size;
	}
	if (mine > 20 || child < 25) {
		fprintf(stderr,
		        "rawfork: the parent's pages hold %llu waits (20 its own), the "
		        "child's %llu (25 or more)\n",
		        (unsigned long long)mine, (unsigned long long)child);
		return 1;
	}
	return 0;
}
