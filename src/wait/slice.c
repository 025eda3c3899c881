/* SPDX-License-Identifier: MIT */
/*
 * slice.c: the EEVDF slice of a thread that waits precisely (slice.h). The kernel's own
 * guidance ("sched/eevdf: Use sched_attr::sched_runtime to set request/slice suggestion"):
 * a slice near the p95 of the thread's runs between waits; shorter brings undue
 * preemptions of the thread, longer a later wakeup. So the learned slice is the p95 of the
 * thread's mean run per switch-in (read from /proc/thread-self/schedstat every
 * SAMPLE_WAITS waits), in the kernel's bounds, PN__SLICE_MIN_NS until it has one.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <punctual/sleep.h>
#include "internal.h"
#include "wait/slice.h"

/* The thread's runs are read at its first wait, FIRST_WAITS waits later (its first reading,
 * and the start from which its spins' losses count), then every SAMPLE_WAITS waits: three system
 * calls (open, read, close), a small share of the waits' own cost. */
#define FIRST_WAITS  16
#define SAMPLE_WAITS 64
/* The readings' mean waits are averaged with weight 1/SHARED_DECAY for the newest: one
 * reading is SAMPLE_WAITS waits, too few alone (beside two hogs per CPU, 1-3% of wakeups
 * wait out another task's slice, ~0.7 ms; alone, one stall of the vCPU is as long). The
 * thread shares its CPU above PN__SLICE_CONTENDED_NS, and again alone below half of it. */
#define SHARED_DECAY 4
/* A learned slice is asked for again when it moves by this factor either way. */
#define RESET_FACTOR 2

static _Atomic int support; /* 0 not known yet, 1 yes, -1 no: stop asking */
static int64_t default_want_ns = PN_SLEEP_SLICE_AUTO;
static bool default_from_env; /* PUNCTUAL_SLICE gave it */

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

/* PUNCTUAL_SLICE: the precise waiters' slice. PUNCTUAL_PROCESS_SLICE (a duration): the
 * process's own, set as the library (or the shim) loads, as `run --slice=D` alone sets it
 * before exec, for a program that another starts (a systemd unit: systemd has no slice
 * setting; tune UNIT's drop-in). Its threads and children inherit it. Under a policy not
 * SCHED_OTHER's or SCHED_BATCH's, on a kernel that keeps no slice, or malformed: the
 * process as it was. */
__attribute__((constructor)) static void slice_init(void)
{
	int64_t v;
	const char *env = getenv("PUNCTUAL_SLICE");
	if (env && pn__slice_parse(env, &v) == 0) { /* malformed: auto */
		default_want_ns = v;
		default_from_env = true;
	}
	env = getenv("PUNCTUAL_PROCESS_SLICE");
	if (env && pn__slice_parse(env, &v) == 0 && v > 0)
		(void)pn__slice_set_self(v, true);
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

int64_t pn__slice_set_self(int64_t ns, bool inherit)
{
	struct pn__sched_attr a;
	int r = pn__sched_get(&a);
	if (r < 0)
		return r;
	if (a.policy != SCHED_OTHER && (!inherit || a.policy != SCHED_BATCH))
		return -EOPNOTSUPP;
	a.runtime = (uint64_t)ns;
	a.flags &= PN__SCHED_RESET_ON_FORK; /* no utilization clamp changed */
	if (ns && a.nice >= 0 && !inherit)
		a.flags |= PN__SCHED_RESET_ON_FORK;
	if ((r = pn__sched_set(&a)) < 0)
		return r;
	return (r = pn__sched_get(&a)) < 0 ? r : (int64_t)a.runtime;
}

/* Looks at the thread once: ours to set (a SCHED_OTHER thread), its own slice noted. */
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
		pn__decay_hist_add(&s->run, (int64_t)((exec_ns - s->exec_ns) / n));
		int64_t d = (int64_t)((queued_ns - s->queued_ns) / n);
		s->delay_ns = s->readings++ ? s->delay_ns + (d - s->delay_ns) / SHARED_DECAY : d;
		if (s->hold)
			s->hold--;
		if (s->delay_ns > PN__SLICE_CONTENDED_NS)
			s->shared = true;
		else if (s->delay_ns < PN__SLICE_CONTENDED_NS / 2 && !s->hold)
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
	uint64_t exec = 0, queued = 0, runs = 0, q = 0;
	if (lost_ns > PN__SLICE_LOST_NS && pn__slice_read_runs(&exec, &queued, &runs) == 0 &&
	    queued >= s->queued_ns && runs >= s->runs) {
		/* the run-queue wait beyond what its switch-ins since the reading wait on average
		 */
		uint64_t usual = (uint64_t)(s->delay_ns > 0 ? s->delay_ns : 0) * (runs - s->runs);
		q = queued - s->queued_ns;
		q = q > usual ? q - usual : 0;
	}
	pn__slice_spun(s, lost_ns, q);
}

int pn__slice_read_runs(uint64_t *exec_ns, uint64_t *queued_ns, uint64_t *runs)
{
	char buf[128];
	int fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return n < 0 ? -errno : -ENODATA;
	buf[n] = '\0';
	pn__slice_parse_runs(buf, exec_ns, queued_ns, runs);
	return 0;
}

void pn__slice_parse_runs(const char *s, uint64_t *exec_ns, uint64_t *queued_ns, uint64_t *runs)
{
	char *end;
	*exec_ns = strtoull(s, &end, 10);
	*queued_ns = strtoull(end, &end, 10);
	*runs = strtoull(end, &end, 10);
}

static void sample(struct pn__slice *s)
{
	uint64_t exec = 0, queued = 0, runs = 0;
	if (pn__slice_read_runs(&exec, &queued, &runs) == 0)
		pn__slice_note(s, exec, queued, runs);
}

bool pn__slice_due(struct pn__slice *s)
{
	uint32_t every = !s->runs ? 1 : s->readings ? SAMPLE_WAITS : FIRST_WAITS;
	if (++s->waits < every)
		return false;
	s->waits = 0;
	return true;
}

/* The slice the thread should have now: 0 for its own (OFF). */
static int64_t wanted(struct pn__slice *s)
{
	int64_t w = s->want_ns == PN__SLICE_DEFAULT ? default_want_ns : s->want_ns;
	if (w != PN_SLEEP_SLICE_AUTO)
		return w;
	int64_t q = s->run.n ? pn__decay_hist_quantile(&s->run, 0.95, 1) : 0;
	return q < PN__SLICE_MIN_NS   ? PN__SLICE_MIN_NS
	       : q > PN__SLICE_MAX_NS ? PN__SLICE_MAX_NS
	                              : q;
}

/* Puts w (> 0) in place, or the kernel's own back (w 0): 0, or -EOPNOTSUPP where the
 * kernel keeps its own or refuses (then the process stops asking). */
static int put(struct pn__slice *s, int64_t w)
{
	if (w == 0 && !s->set_ns)
		return 0;
	int64_t got = pn__slice_set_self(w, false);
	if (got < 0) { /* denied (seccomp: EPERM, ENOSYS): stop asking */
		if (got != -EOPNOTSUPP)
			atomic_store_explicit(&support, -1, memory_order_relaxed);
		return -EOPNOTSUPP;
	}
	if (w && got != w) { /* the kernel keeps its own (< 6.12): stop asking */
		atomic_store_explicit(&support, -1, memory_order_relaxed);
		pn__slice_set_self(0, false);
		s->set_ns = 0;
		return -EOPNOTSUPP;
	}
	s->set_ns = w ? got : 0;
	return 0;
}

void pn__slice_apply(struct pn__slice *s)
{
	if (PN_UNLIKELY(s->status == 0))
		look(s);
	if (PN_LIKELY(s->status < 0))
		return;
	if (!s->external && pn__slice_due(s))
		sample(s);
	if (atomic_load_explicit(&support, memory_order_relaxed) < 0)
		return;
	int64_t want = s->want_ns == PN__SLICE_DEFAULT ? default_want_ns : s->want_ns;
	int64_t w = wanted(s);
	if (s->set_ns == w)
		return;
	if (want == PN_SLEEP_SLICE_AUTO && s->set_ns && w < RESET_FACTOR * s->set_ns &&
	    RESET_FACTOR * w > s->set_ns)
		return; /* close enough: no system call */
	put(s, w);
}

int pn__slice_want(struct pn__slice *s, int64_t slice_ns)
{
	if (slice_ns != PN_SLEEP_SLICE_AUTO && slice_ns != PN_SLEEP_SLICE_OFF &&
	    (slice_ns < PN__SLICE_MIN_NS || slice_ns > PN__SLICE_MAX_NS))
		return -EINVAL;
	if (atomic_load_explicit(&support, memory_order_relaxed) < 0)
		return -EOPNOTSUPP;
	if (s->status == 0)
		look(s);
	if (s->status < 0)
		return -EOPNOTSUPP;
	s->want_ns = slice_ns;
	return put(s, wanted(s));
}

bool pn__slice_shared(const struct pn__slice *s)
{
	return s->shared;
}
