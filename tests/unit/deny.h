/* SPDX-License-Identifier: MIT */
/*
 * deny.h: a seccomp filter that denies one system call with an errno, as a sandbox would,
 * for the tests of the fallbacks (in a child: the filter lasts the process's life).
 */
#ifndef PN_TEST_DENY_H
#define PN_TEST_DENY_H

#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>

/* Denies system call nr with err from now on: 0, or -1 where no filter can be set. */
static inline int pn_deny_syscall(long nr, int err)
{
	struct sock_filter f[] = {
	        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
	        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)nr, 0, 1),
	        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (unsigned)err),
	        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {sizeof f / sizeof f[0], f};
	return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	                       prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog)
	               ? -1
	               : 0;
}

#endif
