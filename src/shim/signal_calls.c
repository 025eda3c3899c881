/* SPDX-License-Identifier: MIT */
/*
 * signal_calls.c: what ends a lend of real time before the program's own work runs: each
 * handler the program installs is entered through a trampoline that ends it first; fork,
 * posix_spawn, exec and the calls about a thread's own scheduling or slack end it before
 * they act. The bound's signal is the shim's: a program's handler for it gets the signals
 * not ours. sigaction's old action is always the program's, never the trampoline.
 */
#include <alloca.h>
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include "wait/wait.h"
#include "shim/core.h"
#include "shim/real.h"

#define NSIGS 65

/* The program's handler and flags per signal entered through the trampoline. */
static struct {
	_Atomic(void *) fn;
	_Atomic int flags;
	sigset_t mask;
} prog[NSIGS];
static atomic_flag lock = ATOMIC_FLAG_INIT;
static int bound_sig; /* the bound's signal; 0: no lend past the wait */

static void trampoline(int sig, siginfo_t *si, void *uc)
{
	pn__wait_lend(PN__LEND_HANDLER, NULL);
	void *fn = atomic_load_explicit(&prog[sig].fn, memory_order_acquire);
	int flags = atomic_load_explicit(&prog[sig].flags, memory_order_relaxed);
	if (!fn || fn == (void *)SIG_IGN || fn == (void *)SIG_DFL)
		return;
	if (flags & SA_SIGINFO)
		((void (*)(int, siginfo_t *, void *))fn)(sig, si, uc);
	else
		((void (*)(int))fn)(sig);
}

/* The bound's signal: ours (the thread's CPU timer), or the program's, given to its
 * disposition. */
static void on_bound(int sig, siginfo_t *si, void *uc)
{
	if (si && si->si_code == SI_TIMER && pn__wait_lend(PN__LEND_BOUND, si->si_value.sival_ptr))
		return;
	void *fn = atomic_load_explicit(&prog[sig].fn, memory_order_acquire);
	if (fn == (void *)SIG_IGN)
		return;
	if (fn && fn != (void *)SIG_DFL) {
		trampoline(sig, si, uc);
		return;
	}
	struct sigaction dfl;
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	pn__real.sigaction(sig, &dfl, NULL);
	sigset_t one;
	sigemptyset(&one);
	sigaddset(&one, sig);
	pn__real.pthread_sigmask(SIG_UNBLOCK, &one, NULL);
	raise(sig);
}

static bool wrapped(int sig)
{
	return pn__shim_precision >= 0 && sig > 0 && sig < NSIGS && sig != SIGKILL &&
	       sig != SIGSTOP && pn__real.sigaction;
}

/* The trampoline in place of a handler, SIG_DFL and SIG_IGN as they are; the bound's
 * signal keeps on_bound. */
EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	const struct pn__real *real = pn__real_get();
	if (!wrapped(sig))
		return real->sigaction ? real->sigaction(sig, act, old) : (errno = ENOSYS, -1);
	sigset_t all, was;
	sigfillset(&all);
	real->pthread_sigmask(SIG_BLOCK, &all, &was); /* a handler may call sigaction too */
	while (atomic_flag_test_and_set_explicit(&lock, memory_order_acquire))
		;
	void *pfn = atomic_load_explicit(&prog[sig].fn, memory_order_relaxed);
	int pflags = atomic_load_explicit(&prog[sig].flags, memory_order_relaxed);
	sigset_t pmask = prog[sig].mask;
	int r = 0;
	if (sig == bound_sig) {
		if (act) {
			atomic_store_explicit(&prog[sig].fn, (void *)act->sa_handler,
			                      memory_order_release);
			atomic_store_explicit(&prog[sig].flags, act->sa_flags,
			                      memory_order_relaxed);
			prog[sig].mask = act->sa_mask;
		}
		if (old) {
			memset(old, 0, sizeof(*old));
			old->sa_handler = pfn ? (void (*)(int))pfn : SIG_DFL;
			old->sa_flags = pflags;
			old->sa_mask = pmask;
		}
	} else {
		struct sigaction a;
		bool ours = act && act->sa_handler != SIG_DFL && act->sa_handler != SIG_IGN;
		if (ours) {
			a = *act;
			a.sa_sigaction = trampoline;
			a.sa_flags |= SA_SIGINFO;
			atomic_store_explicit(&prog[sig].fn, (void *)act->sa_handler,
			                      memory_order_release);
			atomic_store_explicit(&prog[sig].flags, act->sa_flags,
			                      memory_order_relaxed);
			prog[sig].mask = act->sa_mask;
		}
		r = real->sigaction(sig, ours ? &a : act, old);
		if (r != 0 && ours) {
			atomic_store_explicit(&prog[sig].fn, pfn, memory_order_relaxed);
			atomic_store_explicit(&prog[sig].flags, pflags, memory_order_relaxed);
		}
		if (r == 0 && old && old->sa_sigaction == trampoline) {
			old->sa_handler = (void (*)(int))pfn;
			old->sa_flags = pflags;
		}
	}
	atomic_flag_clear_explicit(&lock, memory_order_release);
	int e = errno;
	real->pthread_sigmask(SIG_SETMASK, &was, NULL);
	errno = e;
	return r;
}

/* signal and bsd_signal: BSD semantics, as glibc's (SA_RESTART); sysv_signal: one shot. */
static sighandler_t with_flags(int sig, sighandler_t h, int flags)
{
	struct sigaction a, old;
	memset(&a, 0, sizeof(a));
	a.sa_handler = h;
	a.sa_flags = flags;
	if (sig <= 0 || sig >= NSIGS) {
		errno = EINVAL;
		return SIG_ERR;
	}
	sigemptyset(&a.sa_mask);
	if (!(flags & SA_NODEFER))
		sigaddset(&a.sa_mask, sig);
	return sigaction(sig, &a, &old) == 0 ? old.sa_handler : SIG_ERR;
}
EXPORT sighandler_t signal(int sig, sighandler_t h)
{
	return with_flags(sig, h, SA_RESTART);
}
EXPORT sighandler_t bsd_signal(int sig, sighandler_t h);
EXPORT sighandler_t bsd_signal(int sig, sighandler_t h)
{
	return with_flags(sig, h, SA_RESTART);
}
EXPORT sighandler_t sysv_signal(int sig, sighandler_t h); /* musl declares none */
EXPORT sighandler_t sysv_signal(int sig, sighandler_t h)
{
	return with_flags(sig, h, SA_RESETHAND | SA_NODEFER);
}
EXPORT sighandler_t __sysv_signal(int sig, sighandler_t h);
EXPORT sighandler_t __sysv_signal(int sig, sighandler_t h)
{
	return sysv_signal(sig, h);
}

/* ---- what starts other work: the lend ends first ---- */

EXPORT pid_t fork(void)
{
	pn__wait_lend(PN__LEND_END, NULL);
	return pn__real_get()->fork();
}
EXPORT int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa,
                       const posix_spawnattr_t *at, char *const argv[], char *const envp[])
{
	pn__wait_lend(PN__LEND_END, NULL);
	return pn__real_get()->posix_spawn(pid, path, fa, at, argv, envp);
}
EXPORT int posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *fa,
                        const posix_spawnattr_t *at, char *const argv[], char *const envp[])
{
	pn__wait_lend(PN__LEND_END, NULL);
	return pn__real_get()->posix_spawnp(pid, file, fa, at, argv, envp);
}
EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	pn__wait_lend(PN__LEND_END, NULL);
	return pn__real_get()->execve(path, argv, envp);
}
EXPORT int execv(const char *path, char *const argv[])
{
	pn__wait_lend(PN__LEND_END, NULL);
	return pn__real_get()->execv(path, argv);
}
EXPORT int execvp(const char *file, char *const argv[])
{
	pn__wait_lend(PN__LEND_END, NULL);
	return pn__real_get()->execvp(file, argv);
}
EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	pn__wait_lend(PN__LEND_END, NULL);
	return pn__real_get()->execvpe(file, argv, envp);
}
EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
	pn__wait_lend(PN__LEND_END, NULL);
	return pn__real_get()->fexecve(fd, argv, envp);
}

/* execl, execlp, execle: their arguments as an array on the caller's stack, as glibc's.
 * args_count: arg0 and the arguments after it; args_take fills argv (room for n + 1, the
 * list's NULL last) and leaves ap after that NULL. */
static size_t args_count(va_list *ap)
{
	va_list c;
	size_t n = 1;
	va_copy(c, *ap);
	while (va_arg(c, char *))
		n++;
	va_end(c);
	return n;
}

static char **args_take(char **argv, const char *arg0, size_t n, va_list *ap)
{
	argv[0] = (char *)arg0;
	for (size_t i = 1; i <= n; i++)
		argv[i] = va_arg(*ap, char *);
	return argv;
}

EXPORT int execl(const char *path, const char *arg0, ...)
{
	va_list ap;
	va_start(ap, arg0);
	size_t n = args_count(&ap);
	char **argv = args_take(alloca((n + 1) * sizeof(char *)), arg0, n, &ap);
	va_end(ap);
	return execv(path, argv);
}
EXPORT int execlp(const char *file, const char *arg0, ...)
{
	va_list ap;
	va_start(ap, arg0);
	size_t n = args_count(&ap);
	char **argv = args_take(alloca((n + 1) * sizeof(char *)), arg0, n, &ap);
	va_end(ap);
	return execvp(file, argv);
}
EXPORT int execle(const char *path, const char *arg0, ...)
{
	va_list ap;
	va_start(ap, arg0);
	size_t n = args_count(&ap);
	char **argv = args_take(alloca((n + 1) * sizeof(char *)), arg0, n, &ap);
	char *const *envp = va_arg(ap, char *const *);
	va_end(ap);
	return execve(path, argv, envp);
}

/* ---- a thread's own scheduling: read and set as its own ---- */

EXPORT int sched_getscheduler(pid_t pid)
{
	pn__wait_lend(PN__LEND_END, NULL);
	return pn__real_get()->sched_getscheduler(pid);
}
EXPORT int sched_getparam(pid_t pid, struct sched_param *p)
{
	pn__wait_lend(PN__LEND_END, NULL);
	return pn__real_get()->sched_getparam(pid, p);
}
EXPORT int sched_setscheduler(pid_t pid, int policy, const struct sched_param *p)
{
	pn__wait_lend(PN__LEND_END, NULL);
	return pn__real_get()->sched_setscheduler(pid, policy, p);
}
EXPORT int sched_setparam(pid_t pid, const struct sched_param *p)
{
	pn__wait_lend(PN__LEND_END, NULL);
	return pn__real_get()->sched_setparam(pid, p);
}
EXPORT int pthread_getschedparam(pthread_t th, int *policy, struct sched_param *p)
{
	pn__wait_lend(PN__LEND_END, NULL);
	return pn__real_get()->pthread_getschedparam(th, policy, p);
}
EXPORT int pthread_setschedparam(pthread_t th, int policy, const struct sched_param *p)
{
	pn__wait_lend(PN__LEND_END, NULL);
	return pn__real_get()->pthread_setschedparam(th, policy, p);
}
EXPORT int pthread_setschedprio(pthread_t th, int prio)
{
	pn__wait_lend(PN__LEND_END, NULL);
	return pn__real_get()->pthread_setschedprio(th, prio);
}
#ifdef __GLIBC__
typedef __priority_which_t which_t; /* glibc's enum under _GNU_SOURCE; musl's int */
#else
typedef int which_t;
#endif
EXPORT int setpriority(which_t which, id_t who, int prio)
{
	pn__wait_lend(PN__LEND_END, NULL);
	return pn__real_get()->setpriority(which, who, prio);
}
EXPORT int nice(int inc)
{
	pn__wait_lend(PN__LEND_END, NULL);
	return pn__real_get()->nice(inc);
}
EXPORT int prctl(int option, ...)
{
	va_list ap;
	va_start(ap, option);
	unsigned long a2 = va_arg(ap, unsigned long), a3 = va_arg(ap, unsigned long),
	              a4 = va_arg(ap, unsigned long), a5 = va_arg(ap, unsigned long);
	va_end(ap);
	if (option == PR_GET_TIMERSLACK || option == PR_SET_TIMERSLACK)
		pn__wait_lend(PN__LEND_END, NULL);
	return pn__real_get()->prctl(option, a2, a3, a4, a5);
}

/* At load, where the shim makes waits precise: the bound's signal, the highest real-time
 * one the program did not inherit a disposition for; none free, no lend past a wait. */
__attribute__((constructor)) static void signal_init(void)
{
	const struct pn__real *real = pn__real_get();
	const char *precision = getenv("PUNCTUAL_PRECISION"); /* core.c's may come later */
	if (!precision || !*precision || !real->sigaction)
		return;
	for (int sig = SIGRTMAX - 1; sig > SIGRTMAX - 8 && sig > SIGRTMIN; sig--) {
		struct sigaction now;
		if (real->sigaction(sig, NULL, &now) != 0 || now.sa_handler != SIG_DFL)
			continue;
		struct sigaction a;
		memset(&a, 0, sizeof(a));
		a.sa_sigaction = on_bound;
		a.sa_flags = SA_SIGINFO | SA_RESTART;
		sigfillset(&a.sa_mask);
		if (real->sigaction(sig, &a, NULL) == 0) {
			bound_sig = sig;
			pn__wait_lend(PN__LEND_SIGNAL, (const void *)(intptr_t)sig);
		}
		return;
	}
}
