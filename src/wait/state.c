/* SPDX-License-Identifier: MIT */
/*
 * state.c: the thread's precise-sleep state, mapped (mmap: a plan may run in a handler)
 * rather than in static TLS, which glibc carves out of every thread's stack for a
 * preloaded library (docs/DESIGN.md, "The shim's footprint"). Shared between threads: only
 * the default budget and the list of live states, both atomic.
 *
 * Lifetimes, each a rule a test holds:
 * - A listed state belongs to whoever takes it out: its thread's exit, or the report at the
 *   process's exit; an exit that finds its state taken leaves it mapped.
 * - A thread whose state has gone maps no new one.
 * - A fork()ed child keeps only its own thread's state, its statistics started anew.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <punctual/slack.h>
#include "report/record.h"
#include "report/why.h"
#include "wait/state.h"

/* A wait's overhead is read every OVERHEAD_EVERY-th wait (two CPU clock reads cost about
 * what the plan does), a mean decayed by 1/OVERHEAD_DECAY a reading. */
#define OVERHEAD_EVERY 8
#define OVERHEAD_DECAY 8

static PN_TLS struct pn__state *T;
static PN_TLS bool gone; /* the state was unmapped at the thread's exit: map no other */
static pthread_key_t state_key;
static bool state_key_ok;
static int32_t default_budget_ppm = PN_SLEEP_BUDGET_AUTO;
void (*pn__state_on_exit)(const struct pn__state *t);
void (*pn__state_on_new)(void);

/* The live states, for a report at exit; a thread past LIVE at once goes unreported,
 * nothing else. */
#define LIVE 512
static struct pn__state *live[LIVE];

/* A thread's explain counts, freed with its state, reset in a fork()ed child; they hold no
 * descriptor. */
static void why_free(struct pn__why *w)
{
	if (w)
		munmap(w, sizeof(*w));
}

static void why_forked(struct pn__why *w)
{
	if (w)
		memset(w, 0, sizeof(*w));
}

static bool live_add(struct pn__state *s)
{
	for (int i = 0; i < LIVE; i++) {
		struct pn__state *none = NULL;
		if (__atomic_compare_exchange_n(&live[i], &none, s, false, __ATOMIC_RELEASE,
		                                __ATOMIC_RELAXED))
			return true;
	}
	return false;
}

static bool live_take(struct pn__state *s)
{
	for (int i = 0; i < LIVE; i++) {
		struct pn__state *was = s;
		if (__atomic_compare_exchange_n(&live[i], &was, NULL, false, __ATOMIC_ACQ_REL,
		                                __ATOMIC_RELAXED))
			return true;
	}
	return false;
}

void pn__state_drain(void (*fn)(const struct pn__state *t))
{
	for (int i = 0; i < LIVE; i++) {
		struct pn__state *s = __atomic_exchange_n(&live[i], NULL, __ATOMIC_ACQ_REL);
		if (!s)
			continue;
		/* its last sleep, settled in a copy: a running thread's state is only read */
		static struct pn__state copy; /* the report at exit runs once */
		copy = *s;
		pn__state_settle(&copy);
		fn(&copy);
	}
}

struct pn__state *pn__state_new(void)
{
	void *m = mmap(NULL, sizeof(struct pn__state), PROT_READ | PROT_WRITE,
	               MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return NULL;
	struct pn__state *s = m;
	s->budget_ppm = PN_SLEEP_BUDGET_AUTO;
	s->slice.want_ns = PN__SLICE_DEFAULT;
	return s;
}

void pn__state_free(struct pn__state *s)
{
	if (s && s != T)
		munmap(s, sizeof(*s));
}

struct pn__state *pn__state_use(struct pn__state *s)
{
	struct pn__state *was = T;
	T = s;
	return was;
}

static void state_exit(void *v)
{
	struct pn__state *s = v;
	pn__sched_exit(&s->sched); /* before T goes: the bound's signal finds the state */
	if (T == s) {
		T = NULL;
		gone = true;
	}
	/* taken by the report at exit: it may be reading it */
	if (s->listed && !live_take(s))
		return;
	pn__state_settle(s);
	if (pn__state_on_exit)
		pn__state_on_exit(s);
	pn__record_give(s->rec);
	why_free(s->why);
	munmap(s, sizeof(struct pn__state));
}

/* A page the kernel zeroes in a child (MADV_WIPEONFORK): a raw fork's child, which runs no
 * atfork handler, finds it zero at its first wait. */
static volatile char *forked_mark;

/* In a fork()ed child: the other threads' states are gone; the caller's counts anew. */
static void state_forked(void)
{
	if (forked_mark)
		*forked_mark = 1;
	for (int i = 0; i < LIVE; i++) {
		struct pn__state *s = __atomic_load_n(&live[i], __ATOMIC_RELAXED);
		if (s && s != T) {
			__atomic_store_n(&live[i], NULL, __ATOMIC_RELAXED);
			pn__record_drop(s->rec);
			why_free(s->why);
			munmap(s, sizeof(*s));
		}
	}
	pn__record_forked();
	if (!T)
		return;
	pn__record_drop(T->rec);
	T->rec = pn__record_take();
	T->tid = (int)syscall(SYS_gettid);
	T->st = (struct pn_sleep_stats){0};
	memset(T->late, 0, sizeof(T->late));
	memset(T->kwake, 0, sizeof(T->kwake));
	T->events = 0;
	why_forked(T->why);
	T->first = 0;
	T->pend.on = false;
	/* SCHED_RESET_ON_FORK gave the child SCHED_OTHER and the kernel's slice */
	T->rt = (struct pn__rt){0};
	pn__sched_forked(&T->sched);
	T->slice.status = 0;
	T->slice.set_ns = 0;
}

/* At load: pthread_key_create is not async-signal-safe, a first plan may be; and
 * PUNCTUAL_BUDGET. */
__attribute__((constructor)) static void state_init(void)
{
	state_key_ok = pthread_key_create(&state_key, state_exit) == 0;
	pthread_atfork(NULL, NULL, state_forked);
	void *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
#ifdef MADV_WIPEONFORK
	if (m != MAP_FAILED && madvise(m, 4096, MADV_WIPEONFORK) == 0) {
		forked_mark = m;
		*forked_mark = 1;
		m = MAP_FAILED;
	}
#endif
	if (m != MAP_FAILED)
		munmap(m, 4096);
	const char *env = getenv("PUNCTUAL_BUDGET");
	int32_t budget_ppm;
	if (env && pn__duration_parse_share(env, &budget_ppm) == 0)
		__atomic_store_n(&default_budget_ppm, budget_ppm, __ATOMIC_RELAXED);
}

struct pn__state *pn__state_get(void)
{
	return T;
}

struct pn__state *pn__state_make(void)
{
	if (PN_UNLIKELY(forked_mark && !*forked_mark))
		state_forked();
	if (PN_LIKELY(T != NULL))
		return T;
	if (gone)
		return NULL;
	struct pn__state *s = pn__state_new();
	if (!s)
		return NULL;
	/* without a key the mapping outlives the thread: a leak, not a fault */
	if (state_key_ok)
		pthread_setspecific(state_key, s);
	s->tid = (int)syscall(SYS_gettid);
	s->rec = pn__record_take();
	s->listed = live_add(s);
	if (pn__state_on_new)
		pn__state_on_new();
	return T = s;
}

int32_t pn__state_default_budget(void)
{
	return __atomic_load_n(&default_budget_ppm, __ATOMIC_RELAXED);
}

int32_t pn__state_budget(const struct pn__state *t)
{
	return t && t->budget_ppm != PN_SLEEP_BUDGET_AUTO ? t->budget_ppm
	                                                  : pn__state_default_budget();
}

PN_API int pn_sleep_set_default_budget(int32_t budget_ppm)
{
	if (budget_ppm < PN_SLEEP_BUDGET_AUTO || budget_ppm > PN_SLEEP_BUDGET_FULL)
		return -EINVAL;
	__atomic_store_n(&default_budget_ppm, budget_ppm, __ATOMIC_RELAXED);
	return 0;
}

PN_API int pn_sleep_set_budget(int32_t budget_ppm)
{
	if (budget_ppm < PN_SLEEP_BUDGET_AUTO || budget_ppm > PN_SLEEP_BUDGET_FULL)
		return -EINVAL;
	struct pn__state *t = pn__state_make();
	if (!t)
		return -ENOMEM;
	t->budget_ppm = budget_ppm;
	return 0;
}

PN_API int pn_sleep_set_slice(int64_t slice_ns)
{
	if (slice_ns != PN_SLEEP_SLICE_AUTO && slice_ns != PN_SLEEP_SLICE_OFF &&
	    (slice_ns < PN__SLICE_MIN_NS || slice_ns > PN__SLICE_MAX_NS))
		return -EINVAL;
	struct pn__state *t = pn__state_make();
	return t ? pn__slice_want(&t->slice, slice_ns) : -ENOMEM;
}

PN_API int64_t pn_sleep_slice(void)
{
	return T ? T->slice.set_ns : 0;
}

PN_API int pn_sleep_set_rt(int prio)
{
	if (prio < 0 || prio > 99)
		return -EINVAL;
	struct pn__state *t = pn__state_make();
	return t ? pn__rt_set(&t->rt, prio) : -ENOMEM;
}

PN_API int32_t pn_sleep_budget(void)
{
	return pn__state_budget(T);
}

#define SLOT_SHIFT 24 /* PN_SLEEP_WINDOW_NS / PN__WINDOW_SLOTS = 2^24 ns */

static void window_advance(struct pn__spin_window *w, int64_t now)
{
	int64_t slot = now >> SLOT_SHIFT;
	if (slot <= w->slot)
		return;
	if (slot - w->slot >= PN__WINDOW_SLOTS) {
		memset(w->ns, 0, sizeof(w->ns));
		w->total = 0;
	} else {
		for (int64_t s = w->slot + 1; s <= slot; s++) {
			int64_t *v = &w->ns[s % PN__WINDOW_SLOTS];
			w->total -= *v;
			*v = 0;
		}
	}
	w->slot = slot;
}

int64_t pn__state_window_used(struct pn__state *t, int64_t now)
{
	window_advance(&t->window, now);
	return t->window.total;
}

static void window_add(struct pn__state *t, int64_t now, int64_t cpu)
{
	window_advance(&t->window, now);
	t->window.ns[t->window.slot % PN__WINDOW_SLOTS] += cpu;
	t->window.total += cpu;
}

void pn__state_spun(struct pn__state *t, int64_t spin, int64_t now)
{
	spin = spin > 0 ? spin : 0;
	t->st.spun_ns += spin;
	window_add(t, now, spin + t->overhead);
}

bool pn__state_observed(struct pn__state *t, int64_t call, int64_t deadline, int64_t end,
                        bool timed_out)
{
	if (!t->first) {
		t->first = call;
		t->st.slack_ns = pn_slack_get(); /* the program's own, which it keeps */
	}
	if (!timed_out) {
		t->events++;
		pn__record_event(t->rec);
		return false;
	}
	if (call >= deadline) {
		pn__state_past(t);
		return false;
	}
	struct pn__sleep_end e = {.deadline = deadline, .spin_start = deadline, .end = end};
	pn__state_count(t, &e);
	return end > deadline;
}

void pn__state_past(struct pn__state *t)
{
	t->st.past++;
	pn__record_past(t->rec);
}

int64_t pn__state_cpu(void)
{
	struct timespec ts;
	return clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) == 0 ? pn__ts_ns(&ts) : 0;
}

void pn__state_count(struct pn__state *t, const struct pn__sleep_end *e)
{
	int64_t spun = 0;
	if (e->spin_start < e->deadline) {
		spun = e->mid ? e->mid_cpu + (e->end - e->mid) : e->end - e->spin_start;
		spun = spun > 0 ? spun : 0;
		t->st.spun_ns += spun;
		pn__policy_spun(&t->cls[e->k], e->end - e->deadline);
	} else {
		t->st.kernel_only++;
	}
	window_add(t, e->end, spun + t->overhead);
	t->st.sleeps++;
	int64_t late = e->end - e->deadline;
	if (late < 0) /* cannot happen; counted if it ever does */
		t->st.early++;
	if (late > e->precision)
		t->st.late++;
	t->late[pn__decay_hist_bucket_of(late > 0 ? late : 0)]++;
	pn__record_late(t->rec, late);
	if (late > t->st.late_max_ns)
		t->st.late_max_ns = late;
}

void pn__state_overhead(struct pn__state *t, int64_t cpu0)
{
	int64_t other = pn__state_cpu() - cpu0;
	other = other > 0 ? other : 0;
	t->overhead += (other - t->overhead) / OVERHEAD_DECAY;
}

int64_t pn__state_begin(struct pn__state *t, int64_t now)
{
	if (!t->first)
		t->first = now;
	return t->waits++ % OVERHEAD_EVERY == 0 ? pn__state_cpu() : 0;
}

void pn__state_settle(struct pn__state *t)
{
	if (!t->pend.on)
		return;
	t->pend.on = false;
	struct pn__sleep_end e = t->pend.e;
	e.end = t->pend.at.end;
	pn__state_count(t, &e);
}

void pn__state_pend(struct pn__state *t, struct pn__plan *p, const struct pn__sleep_end *e)
{
	uint32_t seq = t->pend.at.seq + 1;
	t->pend = (struct pn__state_pending){
	        .e = *e, .at = {.end = p->deadline, .seq = seq}, .on = true};
	p->tail = true;
	p->tail_to = &t->pend.at;
	p->tail_seq = seq;
}

/* A wait's mode weighs 1/MODE_DECAY, older ones less: the mode of most of the last few
 * hundred waits. */
#define MODE_DECAY 128.0f

void pn__state_mode(struct pn__state *t, int mode)
{
	for (int m = 0; m < PN_SLEEP_MODES; m++)
		t->mode_w[m] += ((m == mode ? 1.0f : 0.0f) - t->mode_w[m]) / MODE_DECAY;
}

static void mode_settled(const struct pn__state *t, struct pn_sleep_stats *st)
{
	float sum = 0;
	st->mode = PN_SLEEP_MODE_NONE;
	for (int m = 1; m < PN_SLEEP_MODES; m++) {
		sum += t->mode_w[m];
		if (t->mode_w[m] > t->mode_w[st->mode])
			st->mode = m;
	}
	st->mode_ppm = sum > 0 ? (int32_t)(1e6f * t->mode_w[st->mode] / sum) : 0;
}

PN_API const char *pn_sleep_mode_name(int mode)
{
	static const char *const name[PN_SLEEP_MODES] = {"none",  "spin", "spin all", "kernel",
	                                                 "cheap", "lost", "shared"};
	return mode >= 0 && mode < PN_SLEEP_MODES ? name[mode] : "?";
}

/* The q-quantile of the counted lateness, its bucket's largest, capped at the largest. */
static int64_t late_quantile(const struct pn__state *t, uint64_t n, double q)
{
	uint64_t rank = (uint64_t)(q * (double)n), seen = 0;
	for (int b = 0; b < PN__DECAY_HIST_BUCKETS; b++) {
		seen += t->late[b];
		if (seen > rank) {
			int64_t hi = pn__decay_hist_bucket_hi(b);
			return hi < t->st.late_max_ns ? hi : t->st.late_max_ns;
		}
	}
	return t->st.late_max_ns;
}

void pn__state_stats(const struct pn__state *t, struct pn_sleep_stats *st)
{
	*st = t->st;
	st->slice_ns = t->slice.set_ns;
	st->queued_ns = t->slice.delay_ns;
	st->rt_prio = t->rt.prio;
	mode_settled(t, st);
	st->wall_ns = t->first ? pn_now() - t->first : 0;
	uint64_t n = 0;
	for (int b = 0; b < PN__DECAY_HIST_BUCKETS; b++)
		n += t->late[b];
	st->late_p50_ns = n ? late_quantile(t, n, 0.5) : -1;
	st->late_p99_ns = n ? late_quantile(t, n, 0.99) : -1;
	st->late_p999_ns = n ? late_quantile(t, n, 0.999) : -1;
	st->late_max_ns = n ? t->st.late_max_ns : -1;
	for (int k = 0; k < PN_SLEEP_CLASSES; k++) {
		const struct pn__sleep_class *c = &t->cls[k];
		st->class_samples[k] = c->wake.n;
		st->class_margin_ns[k] = c->wake.n ? pn__policy_fine(c, 1000LL << k) : 0;
	}
}

void pn__state_learn_wake(struct pn__state *t, int k, int64_t late, int64_t len)
{
	pn__policy_learn(t->cls, k, late, len);
	t->cls[k].spins = 0; /* a class that woke in the kernel explores anew */
}

void pn__state_learn_probe(struct pn__state *t, int64_t late)
{
	pn__decay_hist_add(&t->cls[0].wake, late);
	t->st.probes++;
}

void pn__state_learn_gaps(struct pn__state *t, const struct pn__spin_gaps *g)
{
	pn__policy_loss_add(&t->loss, g);
}
