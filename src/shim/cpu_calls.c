/* SPDX-License-Identifier: MIT */
/*
 * cpu_calls.c: the preload shim's CPU count (`punctual run --cpus`): with PUNCTUAL_CPUS=N,
 * sysconf(_SC_NPROCESSORS_ONLN), __sysconf and get_nprocs() answer N; inert without it.
 *
 * Left alone on purpose: the affinity calls (programs pin threads with the mask; narrowing
 * it would change where they run), the configured count (arrays indexed by CPU number),
 * calls inside libc itself, and the /proc and /sys files.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <sys/sysinfo.h>
#include <unistd.h>

#include <punctual/cpus.h>
#include "shim/core.h"

typedef long (*sysconf_fn)(int);
typedef int (*get_nprocs_fn)(void);

static sysconf_fn real_sysconf, real__sysconf;
static get_nprocs_fn real_get_nprocs;
/* PUNCTUAL_CPUS: 1..PN_CPU_COUNT_MAX; 0: inert; -1: not read yet. A call can come before
 * the constructor, so every entry reads it on first use; racing first uses agree. */
extern char **environ;
static int cpus = -1;

/* "1".."1048575", digits only; 0 for anything else. */
static int parse_cpus(const char *s)
{
	if (!s || !*s)
		return 0;
	long v = 0;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return 0;
		v = v * 10 + (*s - '0');
		if (v > PN_CPU_COUNT_MAX)
			return 0;
	}
	return (int)v;
}

static void resolve_cpus(void)
{
	__atomic_store_n(&real_sysconf, (sysconf_fn)dlsym(RTLD_NEXT, "sysconf"), __ATOMIC_RELAXED);
	__atomic_store_n(&real__sysconf, (sysconf_fn)dlsym(RTLD_NEXT, "__sysconf"),
	                 __ATOMIC_RELAXED);
	__atomic_store_n(&real_get_nprocs, (get_nprocs_fn)dlsym(RTLD_NEXT, "get_nprocs"),
	                 __ATOMIC_RELAXED);
	/* a sanitizer asks from preinit_array, before libc sets environ: that call gets the
	 * real answer */
	if (__atomic_load_n(&environ, __ATOMIC_RELAXED))
		__atomic_store_n(&cpus, parse_cpus(getenv("PUNCTUAL_CPUS")), __ATOMIC_RELEASE);
}

/* N when the shim answers count queries, else 0. */
static inline int shim_cpus(void)
{
	int n = __atomic_load_n(&cpus, __ATOMIC_ACQUIRE);
	if (__builtin_expect(n < 0, 0)) {
		resolve_cpus();
		n = __atomic_load_n(&cpus, __ATOMIC_ACQUIRE);
	}
	return n > 0 ? n : 0;
}

__attribute__((constructor)) static void preload_cpus_init(void)
{
	shim_cpus();
}

static long call_sysconf(sysconf_fn f, sysconf_fn other, int name)
{
	if (!f)
		f = other;
	if (!f) {
		errno = ENOSYS;
		return -1;
	}
	return f(name);
}

EXPORT long sysconf(int name)
{
	int n = shim_cpus();
	if (n > 0 && name == _SC_NPROCESSORS_ONLN)
		return n;
	return call_sysconf(real_sysconf, real__sysconf, name);
}

EXPORT long __sysconf(int name);
EXPORT long __sysconf(int name)
{
	int n = shim_cpus();
	if (n > 0 && name == _SC_NPROCESSORS_ONLN)
		return n;
	return call_sysconf(real__sysconf, real_sysconf, name);
}

EXPORT int get_nprocs(void)
{
	int n = shim_cpus();
	if (n > 0)
		return n;
	if (!real_get_nprocs) {
		long v = call_sysconf(real_sysconf, real__sysconf, _SC_NPROCESSORS_ONLN);
		return v > 0 ? (int)v : 1;
	}
	return real_get_nprocs();
}

/* The count the shim answers, 0 when inert (tests, with dlsym). */
EXPORT int punctual_preload_cpus(void);
EXPORT int punctual_preload_cpus(void)
{
	return shim_cpus();
}
