/* SPDX-License-Identifier: MIT */
/*
 * pwait2.c: a kernel without epoll_pwait2 (a seccomp filter makes it fail with ENOSYS, as
 * before Linux 5.11, or with EPERM, as some container runtimes do): 10 waits of 5 ms on an
 * idle epoll set, then one on a ready set, through the library (pn_epoll_wait_until: "lib")
 * or through epoll_wait (what the shim interposes: "shim"). One line per wait, the same for
 * both; tests/cli/test_preload_semantics.sh counts the epoll_pwait2 attempts with strace
 * (one each: the fallback is remembered). Exits 1 if a wait returned early.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <punctual/clock.h>
#include <punctual/wait.h>

int main(int argc, char **argv)
{
	if (argc != 3 || (strcmp(argv[1], "lib") && strcmp(argv[1], "shim")) ||
	    (strcmp(argv[2], "ENOSYS") && strcmp(argv[2], "EPERM"))) {
		fprintf(stderr, "usage: %s lib|shim ENOSYS|EPERM\n", argv[0]);
		return 2;
	}
	int err = strcmp(argv[2], "EPERM") ? ENOSYS : EPERM;
	struct sock_filter f[] = {
	        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
	        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_epoll_pwait2, 0, 1),
	        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (unsigned)err),
	        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {sizeof f / sizeof f[0], f};
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog)) {
		perror("seccomp");
		return 2;
	}
	int p[2];
	if (pipe(p))
		return 2;
	int ep = epoll_create1(0), early = 0;
	struct epoll_event ev = {.events = EPOLLIN, .data.u32 = 7}, out[2];
	epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ev);
	for (int i = 0; i < 11; i++) {
		if (i == 10 && write(p[1], "x", 1) != 1)
			return 2;
		int64_t d = pn_now() + 5000000;
		int r = argv[1][0] == 'l' ? pn_epoll_wait_until(ep, out, 2, d, 1000)
		                          : epoll_wait(ep, out, 2, 5);
		int e = r < 0 ? (argv[1][0] == 'l' ? -r : errno) : 0;
		if (r == 0 && pn_now() < d)
			early++;
		printf("wait %d: %d %s%s\n", i, r < 0 ? -1 : r, e ? strerrorname_np(e) : "0",
		       r > 0 && out[0].data.u32 == 7 ? " data 7" : "");
	}
	return early ? 1 : 0;
}
