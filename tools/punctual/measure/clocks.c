/* SPDX-License-Identifier: MIT */
/*
 * measure/clocks.c: what each clock source costs, its resolution, whether it ever goes
 * backwards, and whether a read is served by the vDSO or a system call.
 *
 * Cost: batches of ~50 us timed with pn_now(), round-robin across sources so that noise
 * spreads over all of them. Backward steps: consecutive reads in one thread, then a
 * handoff between two threads on different CPUs, where a read after the handoff must not
 * be below the read before it. The path: each call run once in a thread whose seccomp
 * filter fails the time system calls.
 */
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <punctual/clock.h>
#include "contract.h"
#include "util/diag.h"
#include "util/progress.h"
#include "measure/clocks.h"

#define BATCH_TARGET_NS 50000
#define PROBE_ERRNO     ENOTRECOVERABLE

struct clock_source {
	const char *id, *name, *via;
	clockid_t clk; /* for clock_getres; -1 when none */
	bool ordered, counts, cross;
	int64_t unit_ns; /* ns per unit of the value read (counts: 0) */
	void (*batch)(uint64_t n);
	int64_t (*read)(void);
	int (*probe)(void); /* 0: no system call made; NULL: path is static */
	const char *static_path;
};

static inline void sink(int64_t v)
{
	__asm__ __volatile__("" ::"r"(v));
}

#define DEFINE_READ(fn, expr)                                                                      \
	static int64_t read_##fn(void)                                                             \
	{                                                                                          \
		return (expr);                                                                     \
	}                                                                                          \
	static void batch_##fn(uint64_t n)                                                         \
	{                                                                                          \
		uint64_t acc = 0;                                                                  \
		for (uint64_t i = 0; i < n; i++)                                                   \
			acc += (uint64_t)(expr);                                                   \
		sink((int64_t)acc);                                                                \
	}

static inline int64_t libc_cgt(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return pn__ts_ns(&ts);
}

static inline int64_t sys_cgt(clockid_t id)
{
	struct timespec ts;
	syscall(SYS_clock_gettime, id, &ts);
	return pn__ts_ns(&ts);
}

static inline int64_t libc_gtod(void)
{
	struct timeval tv;
	gettimeofday(&tv, NULL);
	return (int64_t)tv.tv_sec * 1000000 + tv.tv_usec;
}

#define CLOCK_PAIR(tag, ID)                                                                        \
	DEFINE_READ(libc_##tag, libc_cgt(ID))                                                      \
	DEFINE_READ(sys_##tag, sys_cgt(ID))                                                        \
	static int probe_libc_##tag(void)                                                          \
	{                                                                                          \
		struct timespec ts;                                                                \
		return clock_gettime(ID, &ts);                                                     \
	}

CLOCK_PAIR(realtime, CLOCK_REALTIME)
CLOCK_PAIR(monotonic, CLOCK_MONOTONIC)
CLOCK_PAIR(monotonic_raw, CLOCK_MONOTONIC_RAW)
CLOCK_PAIR(boottime, CLOCK_BOOTTIME)
CLOCK_PAIR(tai, CLOCK_TAI)
CLOCK_PAIR(realtime_coarse, CLOCK_REALTIME_COARSE)
CLOCK_PAIR(monotonic_coarse, CLOCK_MONOTONIC_COARSE)
CLOCK_PAIR(process_cputime, CLOCK_PROCESS_CPUTIME_ID)
CLOCK_PAIR(thread_cputime, CLOCK_THREAD_CPUTIME_ID)

DEFINE_READ(gettimeofday, libc_gtod())
DEFINE_READ(time, (int64_t)time(NULL))
DEFINE_READ(pn_now, pn_now())
DEFINE_READ(pn_now_coarse, pn_now_coarse())
DEFINE_READ(pn_cycles, (int64_t)pn_cycles())
DEFINE_READ(pn_cycles_ordered, (int64_t)pn_cycles_ordered())

#if defined(__x86_64__)
static inline int64_t rdtscp_(void)
{
	uint32_t lo, hi, aux;
	__asm__ __volatile__("rdtscp" : "=a"(lo), "=d"(hi), "=c"(aux));
	return (int64_t)((uint64_t)hi << 32 | lo);
}

static inline int64_t mfence_rdtsc(void)
{
	uint32_t lo, hi;
	__asm__ __volatile__("mfence\n\trdtsc" : "=a"(lo), "=d"(hi)::"memory");
	return (int64_t)((uint64_t)hi << 32 | lo);
}

DEFINE_READ(rdtsc, (int64_t)pn__arch_cycles())
DEFINE_READ(rdtscp, rdtscp_())
DEFINE_READ(lfence_rdtsc, (int64_t)pn__arch_cycles_ordered())
DEFINE_READ(mfence_rdtsc, mfence_rdtsc())
#elif defined(__aarch64__)
DEFINE_READ(cntvct, (int64_t)pn__arch_cycles())
DEFINE_READ(isb_cntvct, (int64_t)pn__arch_cycles_ordered())
#endif

static int probe_gettimeofday(void)
{
	struct timeval tv;
	return gettimeofday(&tv, NULL);
}

static int probe_time(void)
{
	return time(NULL) == (time_t)-1 ? -1 : 0;
}

/* pn_now()'s path: the vDSO function it calls, or the system call. */
static int probe_vdso(clockid_t id)
{
	pn__clock_gettime_fn f = pn__clock_vdso_gettime();
	struct timespec ts;
	return f ? f(id, &ts) : -1;
}

static int probe_pn_now(void)
{
	return probe_vdso(CLOCK_MONOTONIC);
}

static int probe_pn_now_coarse(void)
{
	return probe_vdso(CLOCK_MONOTONIC_COARSE);
}

static int probe_pn_cycles(void)
{
	return pn_cycles_source() == PN_CYCLES_CLOCK ? probe_pn_now() : 0;
}

#define LIBC(tag, ID, ord, cross_)                                                                 \
	{"libc:" #ID,                                                                              \
	 #ID,                                                                                      \
	 "libc",                                                                                   \
	 ID,                                                                                       \
	 ord,                                                                                      \
	 false,                                                                                    \
	 cross_,                                                                                   \
	 1,                                                                                        \
	 batch_libc_##tag,                                                                         \
	 read_libc_##tag,                                                                          \
	 probe_libc_##tag,                                                                         \
	 NULL},                                                                                    \
	{                                                                                          \
		"syscall:" #ID, #ID, "syscall", ID, ord, false, cross_, 1, batch_sys_##tag,        \
		        read_sys_##tag, NULL, "syscall"                                            \
	}

static const struct clock_source sources[] = {
        LIBC(realtime, CLOCK_REALTIME, true, true),
        LIBC(monotonic, CLOCK_MONOTONIC, true, true),
        LIBC(monotonic_raw, CLOCK_MONOTONIC_RAW, true, true),
        LIBC(boottime, CLOCK_BOOTTIME, true, true),
        LIBC(tai, CLOCK_TAI, true, true),
        LIBC(realtime_coarse, CLOCK_REALTIME_COARSE, true, true),
        LIBC(monotonic_coarse, CLOCK_MONOTONIC_COARSE, true, true),
        LIBC(process_cputime, CLOCK_PROCESS_CPUTIME_ID, true, true),
        /* a thread's CPU time is its own: two threads' readings do not compare */
        LIBC(thread_cputime, CLOCK_THREAD_CPUTIME_ID, true, false),
        {"gettimeofday", "gettimeofday", "libc", CLOCK_REALTIME, true, false, true, 1000,
         batch_gettimeofday, read_gettimeofday, probe_gettimeofday, NULL},
        {"time", "time", "libc", CLOCK_REALTIME, true, false, true, PN_NSEC, batch_time, read_time,
         probe_time, NULL},
#if defined(__x86_64__)
        {"rdtsc", "rdtsc", "instruction", -1, false, true, true, 0, batch_rdtsc, read_rdtsc, NULL,
         "instruction"},
        {"rdtscp", "rdtscp", "instruction", -1, true, true, true, 0, batch_rdtscp, read_rdtscp,
         NULL, "instruction"},
        {"lfence_rdtsc", "lfence+rdtsc", "instruction", -1, true, true, true, 0, batch_lfence_rdtsc,
         read_lfence_rdtsc, NULL, "instruction"},
        {"mfence_rdtsc", "mfence+rdtsc", "instruction", -1, true, true, true, 0, batch_mfence_rdtsc,
         read_mfence_rdtsc, NULL, "instruction"},
#elif defined(__aarch64__)
        {"cntvct", "cntvct_el0", "instruction", -1, false, true, true, 0, batch_cntvct, read_cntvct,
         NULL, "instruction"},
        {"isb_cntvct", "isb+cntvct_el0", "instruction", -1, true, true, true, 0, batch_isb_cntvct,
         read_isb_cntvct, NULL, "instruction"},
#endif
        {"pn_now", "pn_now", "libpunctual", CLOCK_MONOTONIC, true, false, true, 1, batch_pn_now,
         read_pn_now, probe_pn_now, NULL},
        {"pn_now_coarse", "pn_now_coarse", "libpunctual", CLOCK_MONOTONIC_COARSE, true, false, true,
         1, batch_pn_now_coarse, read_pn_now_coarse, probe_pn_now_coarse, NULL},
        {"pn_cycles", "pn_cycles", "libpunctual", -1, false, true, true, 0, batch_pn_cycles,
         read_pn_cycles, probe_pn_cycles, NULL},
        {"pn_cycles_ordered", "pn_cycles_ordered", "libpunctual", -1, true, true, true, 0,
         batch_pn_cycles_ordered, read_pn_cycles_ordered, probe_pn_cycles, NULL},
};

#define N_SOURCES ((int)(sizeof(sources) / sizeof(sources[0])))

int clock_sources_count(void)
{
	return N_SOURCES;
}

/* ---- path: vDSO or system call ---------------------------------------------------- */

static void *probe_thread(void *arg)
{
	int *paths = arg; /* per source: 1 system call, 0 none, -1 unknown */
	struct sock_filter f[] = {
	        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
	        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clock_gettime, 3, 0),
	        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_gettimeofday, 2, 0),
#ifdef SYS_time
	        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_time, 1, 0),
#else
	        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clock_gettime, 1, 0),
#endif
	        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (PROBE_ERRNO & SECCOMP_RET_DATA)),
	};
	struct sock_fprog prog = {.len = sizeof(f) / sizeof(f[0]), .filter = f};
	/* the filter binds this thread only, which exits right after */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) {
		for (int i = 0; i < N_SOURCES; i++)
			paths[i] = -1;
		return NULL;
	}
	for (int i = 0; i < N_SOURCES; i++)
		if (sources[i].probe)
			paths[i] = sources[i].probe() != 0;
	return NULL;
}

static void probe_paths(struct clock_result *res)
{
	int paths[N_SOURCES];
	memset(paths, 0xff, sizeof(paths));
	pthread_t t;
	if (pthread_create(&t, NULL, probe_thread, paths) == 0)
		pthread_join(t, NULL);
	for (int i = 0; i < N_SOURCES; i++) {
		const struct clock_source *s = &sources[i];
		if (s->static_path)
			res[i].path = s->static_path;
		else if (paths[i] < 0)
			res[i].path = "unknown";
		else if (paths[i])
			res[i].path = "syscall";
		else
			res[i].path = s->counts && pn_cycles_source() != PN_CYCLES_CLOCK
			                      ? "instruction"
			                      : "vdso";
	}
}

/* ---- cost ------------------------------------------------------------------------- */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static uint64_t batch_size(const struct clock_source *s)
{
	uint64_t n = 16;
	for (;;) {
		int64_t t0 = pn_now();
		s->batch(n);
		int64_t dt = pn_now() - t0;
		if (dt >= BATCH_TARGET_NS || n >= (1ULL << 30))
			return n;
		n = dt > 1000 ? n * BATCH_TARGET_NS / (uint64_t)dt + 1 : n * 8;
	}
}

/* Rank 1 is the cheapest tier; by median cost, a new tier starts above 1.35x the source
 * before (docs/DESIGN.md, "The clocks' table"). Equal ranks cost the same within noise. */
#define TIER_GAP 1.35

static void rank(struct clock_result *res)
{
	int order[N_SOURCES];
	for (int i = 0; i < N_SOURCES; i++)
		order[i] = i;
	for (int i = 1; i < N_SOURCES; i++)
		for (int k = i; k > 0 && res[order[k]].cost_median < res[order[k - 1]].cost_median;
		     k--) {
			int t = order[k];
			order[k] = order[k - 1];
			order[k - 1] = t;
		}
	int tier = 1;
	for (int i = 0; i < N_SOURCES; i++) {
		if (i > 0 && res[order[i]].cost_median > TIER_GAP * res[order[i - 1]].cost_median)
			tier++;
		res[order[i]].rank = tier;
	}
}

/* 0 or -ENOMEM. */
static int measure_cost(struct clock_result *res, int64_t budget)
{
	uint64_t n[N_SOURCES];
	for (int i = 0; i < N_SOURCES; i++)
		n[i] = batch_size(&sources[i]);
	/* rounds: each visits every source once */
	int64_t per_round = (int64_t)N_SOURCES * BATCH_TARGET_NS;
	uint64_t stride = (uint64_t)(budget / per_round), rounds;
	if (stride < 15)
		stride = 15;
	double *cost = calloc(stride * N_SOURCES, sizeof(double));
	if (!cost)
		return -ENOMEM;
	int64_t start = pn_now();
	for (rounds = 0; rounds < stride; rounds++) {
		if ((rounds & 15) == 0)
			progress("clock: timing reads, round %llu of %llu",
			         (unsigned long long)rounds + 1, (unsigned long long)stride);
		for (int i = 0; i < N_SOURCES; i++) {
			int64_t t0 = pn_now();
			sources[i].batch(n[i]);
			int64_t t1 = pn_now();
			cost[(uint64_t)i * stride + rounds] = (double)(t1 - t0) / (double)n[i];
		}
		/* at most twice the budget; one round at least, whatever stops it */
		if ((rounds >= 14 && pn_now() - start > 2 * budget) || tool_stop) {
			rounds++;
			break;
		}
	}
	for (int i = 0; i < N_SOURCES; i++) {
		double *c = cost + (uint64_t)i * stride;
		qsort(c, rounds, sizeof(double), cmp_double);
		res[i].cost_min = c[0];
		res[i].cost_median =
		        rounds % 2 ? c[rounds / 2] : (c[rounds / 2 - 1] + c[rounds / 2]) / 2;
		res[i].rounds = rounds;
		res[i].reads_per_round = n[i];
	}
	rank(res);
	free(cost);
	return 0;
}

/* ---- resolution and backward steps in one thread ---------------------------------- */

static int64_t to_ns(const struct clock_source *s, int64_t v)
{
	return s->counts ? pn_cycles_to_ns(v) : v * s->unit_ns;
}

/* Reads s for budget ns, and on for up to patience ns more while it has not stepped: a
 * loaded VM's coarse clocks update late. */
static void measure_steps(const struct clock_source *s, struct clock_result *r, int64_t budget,
                          int64_t patience)
{
	enum { N = 1024 }; /* a system call's batch: about 1 ms */
	static int64_t buf[N];
	int64_t min_step = INT64_MAX, prev = s->read(), max_back = 0;
	uint64_t back = 0, reads = 0, steps = 0;
	int64_t end = pn_now() + budget;
	bool more;
	do {
		/* checked before the batch: a preemption that spends the patience is in the
		 * last batch's reads, a step across it counted */
		int64_t now = pn_now();
		more = now < end || (steps < 3 && now < end + patience);
		for (int i = 0; i < N; i++)
			buf[i] = s->read();
		for (int i = 0; i < N; i++) {
			int64_t d = buf[i] - prev;
			prev = buf[i];
			if (d > 0) {
				steps++;
				if (d < min_step)
					min_step = d;
			} else if (d < 0) {
				back++;
				if (-d > max_back)
					max_back = -d;
			}
		}
		reads += N;
	} while (more);
	r->reads_checked = reads;
	r->backward_same = back;
	r->step_ns = steps ? to_ns(s, min_step) : -1;
	r->backward_max_ns = max_back ? to_ns(s, max_back) : 0;
}

static void measure_getres(const struct clock_source *s, struct clock_result *r)
{
	r->getres_ns = -1;
	struct timespec ts;
	if (s->clk >= 0 && clock_getres(s->clk, &ts) == 0)
		r->getres_ns = pn__ts_ns(&ts) > s->unit_ns ? pn__ts_ns(&ts) : s->unit_ns;
}

/* ---- backward steps across CPUs ---------------------------------------------------- */

struct handoff {
	const struct clock_source *s;
	_Atomic int64_t value; /* the read made just before passing the turn */
	_Atomic int turn;      /* 0: main thread's, 1: partner's */
	_Atomic bool stop;     /* set by the main thread: both sides leave */
	int64_t end;           /* the main thread's wait for its turn ends here */
	uint64_t back;         /* partner's count */
	int64_t max_back;
	int cpu;
};

static void pin(int cpu)
{
	if (cpu < 0)
		return;
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

/* Waits for the turn, then checks a read now against the other side's. The main thread
 * stops waiting at h->end: a partner kept off its CPU would hold a slice per turn. */
static bool take_turn(struct handoff *h, int me, uint64_t *back, int64_t *max_back)
{
	for (unsigned spins = 1; atomic_load_explicit(&h->turn, memory_order_acquire) != me;
	     spins++) {
		if (atomic_load_explicit(&h->stop, memory_order_relaxed))
			return false;
		if (me == 0 && (spins & 1023) == 0 && pn_now() > h->end)
			return false;
		pn__arch_relax();
	}
	int64_t before = atomic_load_explicit(&h->value, memory_order_relaxed);
	int64_t now = h->s->read();
	if (now < before) {
		(*back)++;
		if (before - now > *max_back)
			*max_back = before - now;
	}
	atomic_store_explicit(&h->value, h->s->read(), memory_order_relaxed);
	atomic_store_explicit(&h->turn, !me, memory_order_release);
	return true;
}

static void *partner(void *arg)
{
	struct handoff *h = arg;
	pin(h->cpu);
	while (take_turn(h, 1, &h->back, &h->max_back))
		;
	return NULL;
}

/* Two distinct CPUs this process may run on, or -1s. */
static void two_cpus(int *a, int *b)
{
	cpu_set_t set;
	*a = *b = -1;
	if (sched_getaffinity(0, sizeof(set), &set) != 0)
		return;
	for (int c = 0; c < CPU_SETSIZE && *b < 0; c++)
		if (CPU_ISSET(c, &set))
			*(*a < 0 ? a : b) = c;
}

static void measure_cross(const struct clock_source *s, struct clock_result *r, int64_t budget)
{
	int c0, c1;
	two_cpus(&c0, &c1);
	r->handoffs = 0;
	r->backward_cross = 0;
	if (c1 < 0 || !s->cross)
		return;
	struct handoff h = {.s = s, .cpu = c1};
	atomic_store(&h.value, s->read());
	atomic_store(&h.turn, 1);
	cpu_set_t saved;
	sched_getaffinity(0, sizeof(saved), &saved);
	pthread_t t;
	if (pthread_create(&t, NULL, partner, &h) != 0)
		return;
	pin(c0);
	uint64_t back = 0, n = 0;
	int64_t max_back = 0;
	h.end = pn_now() + budget;
	while (take_turn(&h, 0, &back, &max_back))
		if ((++n & 15) == 0 && pn_now() > h.end)
			break;
	atomic_store_explicit(&h.stop, true, memory_order_relaxed);
	pthread_join(t, NULL);
	sched_setaffinity(0, sizeof(saved), &saved);
	r->handoffs = n * 2;
	r->backward_cross = back + h.back;
	int64_t mb = max_back > h.max_back ? max_back : h.max_back;
	if (mb && to_ns(s, mb) > r->backward_max_ns)
		r->backward_max_ns = to_ns(s, mb);
}

#define STEPS_HARD_X 3

int clock_measure_all(struct clock_result *res, int64_t budget)
{
	memset(res, 0, sizeof(*res) * N_SOURCES);
	for (int i = 0; i < N_SOURCES; i++) {
		res[i].id = sources[i].id;
		res[i].name = sources[i].name;
		res[i].via = sources[i].via;
		res[i].ordered = sources[i].ordered;
		res[i].counts = sources[i].counts;
	}
	pn_cycles_to_ns(1); /* calibrate before timing anything */
	probe_paths(res);
	int e = measure_cost(res, budget * 6 / 10);
	if (e < 0)
		return e;
	int64_t step_budget = budget / 5 / N_SOURCES;
	int64_t cross_budget = budget / 5 / N_SOURCES;
	/* on a busy host the checks end at STEPS_HARD_X times the budget, the rest unchecked */
	int64_t hard = pn_now() + STEPS_HARD_X * budget;
	for (int i = 0; i < N_SOURCES; i++)
		measure_getres(&sources[i], &res[i]);
	/* punctual's own clocks first */
	for (int pass = 0; pass < 2; pass++) {
		for (int i = 0; i < N_SOURCES && !tool_stop; i++) {
			if ((strncmp(sources[i].id, "pn_", 3) == 0) != (pass == 0))
				continue;
			if (pn_now() > hard) {
				res[i].step_ns = -1;
				continue;
			}
			progress("clock: checking %s for backward steps (%d of %d)", sources[i].id,
			         i + 1, N_SOURCES);
			/* a coarse clock needs a few ticks to show its step; time()'s second is
			 * not waited for */
			int64_t patience =
			        sources[i].unit_ns < PN_NSEC ? 4 * pn_now_coarse_resolution() : 0;
			measure_steps(&sources[i], &res[i], step_budget, patience);
			measure_cross(&sources[i], &res[i], cross_budget);
		}
	}
	progress_done();
	return 0;
}
