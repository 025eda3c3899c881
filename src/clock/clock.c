/* SPDX-License-Identifier: MIT */
/*
 * clock.c: pn_now() through the vDSO, found once at load in the ELF image the kernel maps
 * (as musl does), the coarse clock, and the cycle counter calibrated against
 * CLOCK_MONOTONIC_RAW: a load-time anchor and one taken when a rate is first needed, at
 * least 100 ms later (docs/DESIGN.md, "The counter's calibration").
 */
#include <elf.h>
#include <link.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <punctual/clock.h>
#include "internal.h"
#include "kernel.h"

#define CAL_SANDWICHES   64
#define CAL_DEFAULT_BASE (100 * 1000 * 1000LL)
#define CAL_MAX_BASE     (60 * PN_NSEC)
#define MULT_SHIFT       32

/* ---- vDSO ------------------------------------------------------------------------- */

#if defined(__x86_64__)
#define VDSO_CLOCK_GETTIME "__vdso_clock_gettime"
#elif defined(__aarch64__)
#define VDSO_CLOCK_GETTIME "__kernel_clock_gettime"
#else
#define VDSO_CLOCK_GETTIME ""
#endif

static void *vdso_lookup(const char *name)
{
	uintptr_t base = (uintptr_t)getauxval(AT_SYSINFO_EHDR);
	if (!base || !name[0])
		return NULL;
	const ElfW(Ehdr) *eh = (const ElfW(Ehdr) *)base;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_shoff == 0)
		return NULL;

	/* linked at vaddr 0 on current kernels; a non-zero one honoured anyway */
	const ElfW(Phdr) *ph = (const ElfW(Phdr) *)(base + eh->e_phoff);
	uintptr_t load = base;
	for (int i = 0; i < eh->e_phnum; i++) {
		if (ph[i].p_type == PT_LOAD) {
			load = base + ph[i].p_offset - ph[i].p_vaddr;
			break;
		}
	}

	const ElfW(Shdr) *sh = (const ElfW(Shdr) *)(base + eh->e_shoff);
	for (int i = 0; i < eh->e_shnum; i++) {
		if (sh[i].sh_type != SHT_DYNSYM || sh[i].sh_entsize == 0 ||
		    sh[i].sh_link >= eh->e_shnum)
			continue;
		const ElfW(Sym) *sym = (const ElfW(Sym) *)(base + sh[i].sh_offset);
		const char *str = (const char *)(base + sh[sh[i].sh_link].sh_offset);
		size_t n = sh[i].sh_size / sh[i].sh_entsize;
		for (size_t k = 0; k < n; k++) {
			if ((sym[k].st_info & 0xf) != STT_FUNC || sym[k].st_shndx == SHN_UNDEF)
				continue;
			if (strcmp(str + sym[k].st_name, name) == 0)
				return (void *)(load + sym[k].st_value);
		}
	}
	return NULL;
}

static int cgt_syscall(clockid_t id, struct timespec *ts)
{
	return (int)syscall(SYS_clock_gettime, id, ts);
}

/* Written once by the constructor before any thread; pn__clock_vdso_gettime() resolves it
 * for earlier constructors too. */
static pn__clock_gettime_fn cgt = cgt_syscall;
static pn__clock_gettime_fn vdso_cgt;

pn__clock_gettime_fn pn__clock_vdso_gettime(void)
{
	return vdso_cgt;
}

static inline int64_t read_clock(clockid_t id)
{
	struct timespec ts;
	cgt(id, &ts);
	return pn__ts_ns(&ts);
}

int64_t pn__clock_ns(clockid_t clk)
{
	return read_clock(clk);
}

PN_API int64_t pn_now(void)
{
	return read_clock(CLOCK_MONOTONIC);
}

PN_API int64_t pn_now_coarse(void)
{
	return read_clock(CLOCK_MONOTONIC_COARSE);
}

static int64_t coarse_res;

PN_API int64_t pn_now_coarse_resolution(void)
{
	return coarse_res;
}

/* ---- cycle counter ---------------------------------------------------------------- */

struct anchor {
	uint64_t c;
	int64_t t;     /* CLOCK_MONOTONIC_RAW at the sandwich's midpoint */
	int64_t width; /* the sandwich: the uncertainty of t */
};

static _Atomic int source;
static const char *source_reason;
static _Atomic uint64_t mult; /* ns per count << MULT_SHIFT; 0: not calibrated */
static struct anchor anchor0;
static pthread_mutex_t cal_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	int64_t base;
	int64_t uncertainty;
	double hz;
} cal; /* guarded by cal_lock */

static struct anchor take_anchor(void)
{
	struct anchor best = {0, 0, INT64_MAX};
	for (int i = 0; i < CAL_SANDWICHES; i++) {
		int64_t t1 = read_clock(CLOCK_MONOTONIC_RAW);
		uint64_t c = pn__arch_cycles_ordered();
		int64_t t2 = read_clock(CLOCK_MONOTONIC_RAW);
		if (t2 - t1 < best.width)
			best = (struct anchor){c, t1 + (t2 - t1) / 2, t2 - t1};
	}
	return best;
}

int pn__clock_cycles_decide(const char **reason)
{
	const char *env = getenv("PUNCTUAL_CYCLES");
	if (env && strcmp(env, "clock") == 0) {
		*reason = "PUNCTUAL_CYCLES=clock";
		return PN_CYCLES_CLOCK;
	}
	if (PN_ARCH_CYCLES_SOURCE == PN_CYCLES_CLOCK) {
		*reason = "no cycle counter on this architecture";
		return PN_CYCLES_CLOCK;
	}
	if (!pn__arch_cycles_invariant()) {
		*reason = "TSC is not invariant (CPUID 0x80000007 EDX[8] clear)";
		return PN_CYCLES_CLOCK;
	}
#if defined(__x86_64__)
	/* the kernel drops tsc from its clocksources when it finds it unsynchronized or
	 * unstable: its verdict over the CPUID bit */
	char buf[256];
	if (pn__fs_read_file("/sys/devices/system/clocksource/clocksource0/available_clocksource",
	                     buf, sizeof(buf)) > 0) {
		int found = 0;
		for (char *save, *tok = strtok_r(buf, " \n", &save); tok;
		     tok = strtok_r(NULL, " \n", &save))
			found |= strcmp(tok, "tsc") == 0;
		if (!found) {
			*reason = "the kernel marked the TSC unstable (tsc not in "
			          "available_clocksource)";
			return PN_CYCLES_CLOCK;
		}
	}
	*reason = "invariant TSC (CPUID 0x80000007 EDX[8]), tsc usable as clocksource";
#else
	*reason = "architected generic timer (constant rate)";
#endif
	if (env && strcmp(env, "auto") != 0 && strcmp(env, PN_ARCH_CYCLES_NAME) != 0)
		*reason = "PUNCTUAL_CYCLES has an unknown value; ignored";
	return PN_ARCH_CYCLES_SOURCE;
}

static pthread_once_t source_once = PTHREAD_ONCE_INIT;

static void source_init(void)
{
	atomic_store_explicit(&source, pn__clock_cycles_decide(&source_reason),
	                      memory_order_release);
}

static int decide_source(void)
{
	int s = atomic_load_explicit(&source, memory_order_acquire);
	if (PN_LIKELY(s))
		return s;
	pthread_once(&source_once, source_init);
	return atomic_load_explicit(&source, memory_order_acquire);
}

PN_API int pn_cycles_source(void)
{
	return decide_source();
}

PN_API uint64_t pn_cycles(void)
{
	if (PN_LIKELY(atomic_load_explicit(&source, memory_order_relaxed) ==
	              PN_ARCH_CYCLES_SOURCE) &&
	    PN_ARCH_CYCLES_SOURCE != PN_CYCLES_CLOCK)
		return pn__arch_cycles();
	return decide_source() == PN_CYCLES_CLOCK ? (uint64_t)pn_now() : pn__arch_cycles();
}

PN_API uint64_t pn_cycles_ordered(void)
{
	if (PN_LIKELY(atomic_load_explicit(&source, memory_order_relaxed) ==
	              PN_ARCH_CYCLES_SOURCE) &&
	    PN_ARCH_CYCLES_SOURCE != PN_CYCLES_CLOCK)
		return pn__arch_cycles_ordered();
	/* the vDSO orders its own counter read */
	return decide_source() == PN_CYCLES_CLOCK ? (uint64_t)pn_now() : pn__arch_cycles_ordered();
}

/* Waits, without cal_lock, until base has passed since the load-time anchor (a fork
 * meanwhile must not leave the child a lock held for 100 ms), on MONOTONIC, re-checking
 * RAW. */
static void calibrate_wait(int64_t base)
{
	pthread_mutex_lock(&cal_lock);
	int64_t until = anchor0.t + base;
	pthread_mutex_unlock(&cal_lock);
	for (int64_t wait; (wait = until - read_clock(CLOCK_MONOTONIC_RAW)) > 0;)
		pn__kernel_raw.sleep_abs(CLOCK_MONOTONIC, read_clock(CLOCK_MONOTONIC) + wait);
}

/* Caller holds cal_lock, and base has passed since anchor0. */
static void calibrate_locked(int64_t base)
{
	if (decide_source() == PN_CYCLES_CLOCK) {
		cal.hz = 1e9;
		cal.base = 0;
		cal.uncertainty = 0;
		atomic_store_explicit(&mult, 1ULL << MULT_SHIFT, memory_order_release);
		return;
	}
	struct anchor a1 = take_anchor();
	/* a wrapped or stopped counter makes this <= 0 */
	int64_t dc = (int64_t)(a1.c - anchor0.c);
	int64_t dt = a1.t - anchor0.t;
	if (dc <= 0 || dt <= 0) {
		source_reason = "the counter did not advance during calibration";
		atomic_store_explicit(&source, PN_CYCLES_CLOCK, memory_order_release);
		calibrate_locked(base);
		return;
	}
	long double ns_per_count = (long double)dt / (long double)dc;
	cal.hz = (double)(1e9L / ns_per_count);
	cal.base = dt;
	cal.uncertainty = anchor0.width + a1.width;
	uint64_t m = (uint64_t)(ns_per_count * (long double)(1ULL << MULT_SHIFT) + 0.5L);
	atomic_store_explicit(&mult, m ? m : 1, memory_order_release);
}

PN_API int pn_cycles_calibrate(int64_t base_ns)
{
	if (base_ns < 0 || base_ns > CAL_MAX_BASE)
		return -EINVAL;
	int64_t base = base_ns ? base_ns : CAL_DEFAULT_BASE;
	calibrate_wait(base);
	pthread_mutex_lock(&cal_lock);
	calibrate_locked(base);
	pthread_mutex_unlock(&cal_lock);
	return 0;
}

static uint64_t default_mult(void)
{
	calibrate_wait(CAL_DEFAULT_BASE);
	pthread_mutex_lock(&cal_lock);
	if (!atomic_load_explicit(&mult, memory_order_relaxed))
		calibrate_locked(CAL_DEFAULT_BASE);
	pthread_mutex_unlock(&cal_lock);
	return atomic_load_explicit(&mult, memory_order_acquire);
}

PN_API int64_t pn_cycles_to_ns(int64_t cycles)
{
	uint64_t m = atomic_load_explicit(&mult, memory_order_acquire);
	if (PN_UNLIKELY(!m))
		m = default_mult();
	__int128 ns = ((__int128)cycles * (__int128)m) >> MULT_SHIFT;
	if (ns > INT64_MAX)
		return INT64_MAX;
	if (ns < INT64_MIN)
		return INT64_MIN;
	return (int64_t)ns;
}

PN_API int pn_cycles_info(struct pn_cycles_info *info)
{
	if (!info)
		return -EINVAL;
	int s = decide_source();
	pthread_mutex_lock(&cal_lock);
	struct pn_cycles_info r = {
	        .source = s,
	        .name = s == PN_CYCLES_CLOCK ? "clock_monotonic" : PN_ARCH_CYCLES_NAME,
	        .reason = source_reason,
	        .calibrated = atomic_load_explicit(&mult, memory_order_relaxed) != 0,
	        .hz = cal.hz,
	        .base_ns = cal.base,
	        .uncertainty_ns = cal.uncertainty,
	};
	pthread_mutex_unlock(&cal_lock);
	*info = r;
	return 0;
}

int pn__clock_cycles_reset(int force)
{
	if (force && force != PN_CYCLES_CLOCK && force != PN_ARCH_CYCLES_SOURCE)
		return -EINVAL;
	pthread_mutex_lock(&cal_lock);
	atomic_store_explicit(&mult, 0, memory_order_release);
	cal.hz = 0;
	cal.base = cal.uncertainty = 0;
	if (PN_ARCH_CYCLES_SOURCE != PN_CYCLES_CLOCK)
		anchor0 = take_anchor();
	int s = force;
	if (force)
		source_reason = "forced (pn__clock_cycles_reset)";
	else
		s = pn__clock_cycles_decide(&source_reason);
	atomic_store_explicit(&source, s, memory_order_release);
	pthread_mutex_unlock(&cal_lock);
	return s;
}

/* ---- load time -------------------------------------------------------------------- */

/* fork() waits for a calibration's microseconds under cal_lock, so that the child never
 * starts with the lock held. */
static void cal_prepare(void)
{
	pthread_mutex_lock(&cal_lock);
}

static void cal_release(void)
{
	pthread_mutex_unlock(&cal_lock);
}

__attribute__((constructor)) static void clock_init(void)
{
	pthread_atfork(cal_prepare, cal_release, cal_release);
	void *f = vdso_lookup(VDSO_CLOCK_GETTIME);
	if (f) {
		vdso_cgt = (pn__clock_gettime_fn)f;
		cgt = vdso_cgt;
	}
	struct timespec ts;
	if (clock_getres(CLOCK_MONOTONIC_COARSE, &ts) == 0)
		coarse_res = pn__ts_ns(&ts);
	if (PN_ARCH_CYCLES_SOURCE != PN_CYCLES_CLOCK)
		anchor0 = take_anchor();
	/* decided now: reading sysfs (tens of us) would land between a caller's first two
	 * timestamps */
	decide_source();
}
