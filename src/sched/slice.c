/* SPDX-License-Identifier: MIT */
/*
 * slice.c: the EEVDF slice of a thread that waits precisely, and what its runs say:
 * whether it shares its CPU. A slice is asked for only where the caller gives one, for
 * each kernel wait alone; none by default: the kernel's guidance (near the p95 of the runs
 * between waits: 100 us for a sleep loop) made a 1 ms loop's p99 several hog slices long
 * beside CPU hogs (docs/DESIGN.md, "When the CPU is shared").
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <punctual/sleep.h>
#include "internal.h"
#include "sched/runs.h"
#include "sched/slice.h"

/* The thread's runs are read at its first wait, FIRST_WAITS waits later, then every
 * SAMPLE_WAITS waits: three system calls, a small share of the waits' own cost. */
#define FIRST_WAITS  16
#define SAMPLE_WAITS 64
/* A due reading waits for room of ROOM_X times the last one's time (COST_FIRST_NS untimed),
 * forced after DEFER_MAX waits (docs/DESIGN.md, "A reading of the runs in a short wait"). */
#define ROOM_X        4
#define COST_FIRST_NS 20000
#define DEFER_MAX     64
/* The readings are averaged, 1/SHARED_DECAY for the newest: one reading alone is too few
 * waits (a stall of the vCPU is as long as another task's slice). Shared above
 * PN__SLICE_CONTENDED_NS, alone again below half of it. */
#define SHARED_DECAY 4

static _Atomic int support; /* 0 not known yet, 1 yes, -1 no: stop asking */
static int64_t default_want_ns = PN_SLEEP_SLICE_AUTO;
static bool default_from_env;
static long online;

int pn__slice_parse(const char *s, int64_t *slice_ns)
{
	if (!s || !*s)
		return -EINVAL;
	if (!strcmp(s, "auto")) {
		*slice_ns = PN_SLEEP_SLICE_AUTO;
		return 0;
	}
	if (!strcmp(s, "off")) {
		*slice_ns = PN_SLEEP_SLICE_OFF;
		return 0;
	}
	int64_t v;
	int r = pn__duration_parse(s, 0, &v);
	if (r < 0)
		return -EINVAL;
	if (v < PN__SLICE_MIN_NS || v > PN__SLICE_MAX_NS)
		return -ERANGE;
	*slice_ns = v;
	return 0;
}

/* PUNCTUAL_SLICE: the precise waiters' slice. PUNCTUAL_PROCESS_SLICE: the process's own,
 * set at load as `run --slice=D` sets it before exec, for a program another starts (a
 * systemd unit); its threads and children inherit it. Where it cannot be set, or
 * malformed: the process as it was. */
__attribute__((constructor)) static void slice_init(void)
{
	int64_t v;
	const char *env = getenv("PUNCTUAL_SLICE");
	if (env && pn__slice_parse(env, &v) == 0) {
		default_want_ns = v;
		default_from_env = true;
	}
	online = sysconf(_SC_NPROCESSORS_ONLN);
	env = getenv("PUNCTUAL_PROCESS_SLICE");
	if (env && pn__slice_parse(env, &v) == 0 && v > 0)
		(void)pn__slice_set_self(v);
}

void pn__slice_set_default(int64_t want)
{
	if (!default_from_env)
		default_want_ns = want;
}

int64_t pn__slice_default(void)
{
	return default_want_ns;
}

int pn__sched_get(struct pn__sched_attr *a)
{
	memset(a, 0, sizeof(*a));
	return syscall(SYS_sched_getattr, 0L, a, (long)sizeof(*a), 0L) ? -errno : 0;
}

int pn__sched_set(struct pn__sched_attr *a)
{
	a->size = sizeof(*a);
	return syscall(SYS_sched_setattr, 0L, a, 0L) ? -errno : 0;
}

int64_t pn__slice_set_self(int64_t ns)
{
	struct pn__sched_attr a;
	int r = pn__sched_get(&a);
	if (r < 0)
		return r;
	if (a.policy != SCHED_OTHER && a.policy != SCHED_BATCH)
		return -EOPNOTSUPP;
	a.runtime = (uint64_t)ns;
	a.flags &= PN__SCHED_RESET_ON_FORK; /* no utilization clamp changed */
	if ((r = pn__sched_set(&a)) < 0)
		return r;
	return (r = pn__sched_get(&a)) < 0 ? r : (int64_t)a.runtime;
}

/* Looks at the thread once: ours to set if SCHED_OTHER, its own slice noted. */
static int8_t look(struct pn__slice *s)
{
	struct pn__sched_attr a;
	if (pn__sched_get(&a) < 0) {
		atomic_store_explicit(&support, -1, memory_order_relaxed);
		return s->status = -1;
	}
	return s->status = a.policy == SCHED_OTHER ? 1 : -1;
}

void pn__slice_note(struct pn__slice *s, uint64_t exec_ns, uint64_t queued_ns, uint64_t runs)
{
	if (s->runs && runs > s->runs && exec_ns >= s->exec_ns && queued_ns >= s->queued_ns) {
		uint64_t n = runs - s->runs;
		int64_t d = (int64_t)((queued_ns - s->queued_ns) / n);
		s->delay_ns = s->readings++ ? s->delay_ns + (d - s->delay_ns) / SHARED_DECAY : d;
		if (s->hold)
			s->hold--;
		if (s->delay_ns > PN__SLICE_CONTENDED_NS)
			s->shared = true;
		else if (s->delay_ns < PN__SLICE_CONTENDED_NS / 2 && !s->hold && !s->busy)
			s->shared = false;
	}
	s->exec_ns = exec_ns;
	s->queued_ns = queued_ns;
	s->runs = runs;
}

void pn__slice_spun(struct pn__slice *s, int64_t lost_ns, uint64_t queued_ns)
{
	bool taken = lost_ns > PN__SLICE_LOST_NS && queued_ns >= (uint64_t)lost_ns / 2;
	s->lost_rate += ((taken ? 1.0f : 0.0f) - s->lost_rate) / PN__SLICE_LOST_DECAY;
	if (taken && s->lost_rate > PN__SLICE_LOST_RATE) {
		s->shared = true;
		s->hold = PN__SLICE_HOLD;
		s->lost_rate = 0; /* after the hold, two losses again */
	}
}

void pn__slice_spin_end(struct pn__slice *s, int64_t lost_ns)
{
	if (s->external) { /* a kernel wakeup's run-queue wait includes the host's delay */
		if (lost_ns > PN__SLICE_LOST_NS)
			s->lost_ns = lost_ns;
		return;
	}
	if (s->status <= 0 || !s->runs || s->shared)
		return;
	struct pn__runs now;
	uint64_t q = 0;
	if (lost_ns > PN__SLICE_LOST_NS && pn__runs_read(&now) == 0 &&
	    now.queued_ns >= s->queued_ns && now.switches >= s->runs) {
		uint64_t queued = now.queued_ns, runs = now.switches;
		/* the run-queue wait beyond its switch-ins' average since the reading */
		uint64_t usual = (uint64_t)(s->delay_ns > 0 ? s->delay_ns : 0) * (runs - s->runs);
		q = queued - s->queued_ns;
		q = q > usual ? q - usual : 0;
	}
	pn__slice_spun(s, lost_ns, q);
}

/* Whether the runnable tasks besides the caller fill every CPU online (/proc/loadavg). */
static bool saturated(void)
{
	char buf[128];
	int fd = open("/proc/loadavg", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0 || online <= 0)
		return false;
	buf[n] = '\0';
	long running, total;
	return sscanf(buf, "%*s %*s %*s %ld/%ld", &running, &total) == 2 && running - 1 >= online;
}

void pn__slice_busy(struct pn__slice *s)
{
	/* read while shared, and at the first reading, which has no run-queue wait to go by
	 * yet */
	bool first = !s->runs;
	s->busy = (s->shared || first) && saturated();
	if (first && s->busy)
		s->shared = true;
}

static void sample(struct pn__slice *s)
{
	struct pn__runs r;
	if (pn__runs_read(&r) == 0) {
		pn__slice_busy(s);
		pn__slice_note(s, r.exec_ns, r.queued_ns, r.switches);
	}
}

bool pn__slice_due(struct pn__slice *s)
{
	uint32_t every = !s->runs ? 1 : s->readings ? SAMPLE_WAITS : FIRST_WAITS;
	if (++s->waits < every)
		return false;
	s->waits = 0;
	return true;
}

int64_t pn__slice_wanted(const struct pn__slice *s)
{
	if (s->status < 0 || atomic_load_explicit(&support, memory_order_relaxed) < 0)
		return 0;
	int64_t w = s->want_ns == PN__SLICE_DEFAULT ? default_want_ns : s->want_ns;
	return w == PN_SLEEP_SLICE_AUTO ? 0 : w;
}

int pn__slice_wait(struct pn__slice *s, const struct pn__sched_attr *own, int64_t ns)
{
	struct pn__sched_attr a = *own;
	a.runtime = (uint64_t)ns;
	int r = pn__sched_set(&a);
	if (r < 0) {
		atomic_store_explicit(&support, -1, memory_order_relaxed);
		return r;
	}
	if (atomic_load_explicit(&support, memory_order_relaxed) == 0) {
		/* the first: does the kernel keep it (6.12+)? */
		int ok = pn__sched_get(&a) == 0 && a.runtime == (uint64_t)ns ? 1 : -1;
		atomic_store_explicit(&support, ok, memory_order_relaxed);
		if (ok < 0) {
			pn__sched_set((struct pn__sched_attr *)own);
			return -EOPNOTSUPP;
		}
	}
	s->set_ns = ns;
	return 0;
}

void pn__slice_sample(struct pn__slice *s, int64_t room, bool force)
{
	if (PN_UNLIKELY(s->status == 0))
		look(s);
	if (PN_LIKELY(s->status < 0) || s->external || !pn__slice_due(s))
		return;
	int64_t cost = s->cost_ns ? s->cost_ns : COST_FIRST_NS;
	if (s->runs && room < ROOM_X * cost && (s->deferred < DEFER_MAX || !force)) {
		s->deferred += s->deferred < UINT32_MAX;
		s->waits = SAMPLE_WAITS; /* due again at the next wait */
		return;
	}
	s->deferred = 0;
	int64_t t0 = pn_now();
	sample(s);
	int64_t took = pn_now() - t0;
	s->cost_ns = took > s->cost_ns / 2 ? took : s->cost_ns / 2;
}

/* Whether the kernel keeps a slice the calling thread asks for (6.12+) and lets it ask,
 * found by asking and putting its own back: 1, or -EOPNOTSUPP. */
static int kept(void)
{
	if (atomic_load_explicit(&support, memory_order_relaxed) < 0)
		return -EOPNOTSUPP;
	struct pn__sched_attr own;
	if (pn__sched_get(&own) < 0 || own.policy != SCHED_OTHER)
		return -EOPNOTSUPP;
	own.flags &= PN__SCHED_RESET_ON_FORK;
	struct pn__slice probe = {0};
	if (pn__slice_wait(&probe, &own, PN__SLICE_MIN_NS) < 0)
		return -EOPNOTSUPP;
	pn__sched_set(&own);
	return 1;
}

int pn__slice_want(struct pn__slice *s, int64_t slice_ns)
{
	if (slice_ns != PN_SLEEP_SLICE_AUTO && slice_ns != PN_SLEEP_SLICE_OFF &&
	    (slice_ns < PN__SLICE_MIN_NS || slice_ns > PN__SLICE_MAX_NS))
		return -EINVAL;
	if (s->status == 0)
		look(s);
	if (s->status < 0 || kept() < 0)
		return -EOPNOTSUPP;
	s->want_ns = slice_ns;
	return 0;
}

bool pn__slice_shared(const struct pn__slice *s)
{
	return s->shared;
}
