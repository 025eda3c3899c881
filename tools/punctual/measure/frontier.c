/* SPDX-License-Identifier: MIT */
/*
 * measure/frontier.c: the lateness-versus-CPU frontier. Each variant sleeps in a thread of
 * its own (its own EEVDF lag, slack, slice and runs), the threads taking turns, the first
 * moving by one a round. punctual's variants keep a sleep state each, so that a budget is
 * measured against its own sleeps.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <punctual/clock.h>
#include <punctual/slack.h>
#include <punctual/sleep.h>
#include "contract.h"
#include "measure/frontier.h"

#define US 1000LL
#define MS 1000000LL

void frontier_probe_config(struct frontier_config *c, int quick)
{
	static const struct frontier_variant var[] = {
	        {FR_KERNEL, 0},      {FR_FIXED, 125 * US}, {FR_FIXED, 500 * US},
	        {FR_BUDGET, 50000},  {FR_BUDGET, 100000},  {FR_BUDGET, 250000},
	        {FR_BUDGET, 500000}, {FR_AUTO, 0},         {FR_SPIN, 0},
	};
	memset(c, 0, sizeof(*c));
	c->nvar = (int)(sizeof(var) / sizeof(var[0]));
	memcpy(c->var, var, sizeof(var));
	c->nlen = 3;
	c->len[0] = 100 * US;
	c->len[1] = 1 * MS;
	c->len[2] = 10 * MS;
	/* at 1 ms, where the advice is, a p99 rests on the 5th latest of 400 sleeps, not the
	 * 3rd of 200, which two stalls of the host decide */
	c->rounds[0] = quick ? 100 : 400;
	c->rounds[1] = quick ? 100 : 400;
	c->rounds[2] = quick ? 2 : 12;
	c->precision = 1 * US;
	c->slice_auto = true; /* the probe's "default" is the library's */
}

const char *frontier_name(const struct frontier_variant *v, char *buf, size_t n)
{
	switch (v->kind) {
	case FR_KERNEL:
		if (v->arg)
			snprintf(buf, n, "plain, slack %lld us", (long long)(v->arg / US));
		else
			snprintf(buf, n, "kernel");
		break;
	case FR_FIXED:
		snprintf(buf, n, "fixed %lld us", (long long)(v->arg / US));
		break;
	case FR_BUDGET:
		snprintf(buf, n, "budget %g%%", (double)v->arg / 1e4);
		break;
	case FR_AUTO:
		snprintf(buf, n, "default");
		break;
	case FR_SPIN:
		snprintf(buf, n, "spin");
		break;
	case FR_SLICE:
		snprintf(buf, n, "kernel, slice %lld us", (long long)(v->arg / US));
		break;
	case FR_RT:
		snprintf(buf, n, "default, FIFO %lld", (long long)v->arg);
		break;
	case FR_AUTO_NORT:
		snprintf(buf, n, "default, no real time");
		break;
	}
	return buf;
}

const char *frontier_id(const struct frontier_variant *v, char *buf, size_t n)
{
	switch (v->kind) {
	case FR_FIXED:
		snprintf(buf, n, "fixed%lldus", (long long)(v->arg / US));
		break;
	case FR_BUDGET:
		snprintf(buf, n, "budget%g", (double)v->arg / 1e4);
		break;
	case FR_AUTO:
		snprintf(buf, n, "auto");
		break;
	case FR_SLICE:
		snprintf(buf, n, "slice%lldus", (long long)(v->arg / US));
		break;
	case FR_KERNEL:
		if (v->arg) {
			snprintf(buf, n, "plain%lldus", (long long)(v->arg / US));
			break;
		}
		frontier_name(v, buf, n);
		break;
	case FR_RT:
		snprintf(buf, n, "rt%lld", (long long)v->arg);
		break;
	case FR_AUTO_NORT:
		snprintf(buf, n, "auto-nort");
		break;
	default:
		frontier_name(v, buf, n);
	}
	return buf;
}

double frontier_cpu_pct(const struct frontier_cell *c)
{
	return c->wall_ns ? 100.0 * (double)c->cpu_ns / (double)c->wall_ns : 0;
}

double frontier_hog_pct(const struct frontier *f, const struct frontier_cell *c)
{
	return f->hog_ncpus && c->hog_wall_ns
	               ? 100.0 * (double)c->hog_ns / ((double)c->hog_wall_ns * f->hog_ncpus)
	               : 0;
}

double frontier_fair_pct(const struct frontier *f, const struct frontier_cell *c)
{
	double left = (double)c->hog_wall_ns * f->hog_ncpus - (double)c->cpu_ns;
	return f->hog_ncpus && left > 0 ? 100.0 * (double)c->hog_ns / left : 0;
}

static int64_t p99_of(const struct frontier_cell *c)
{
	return pn_hist_percentile(&c->late, 99);
}

/* Whether a cell has sleeps enough for its p99 to be compared. */
static bool measured(const struct frontier_cell *c)
{
	return pn_hist_count(&c->late) >= FRONTIER_MIN_P99;
}

/* Whether a fixed margin at length l has no more CPU than v's and a lower p99. */
static bool dominated(const struct frontier *f, int l, int v)
{
	const struct frontier_cell *x = &f->cell[l][v];
	for (int m = 0; m < f->c.nvar; m++) {
		const struct frontier_cell *y = &f->cell[l][m];
		if (f->c.var[m].kind == FR_FIXED && measured(y) &&
		    frontier_cpu_pct(y) <= frontier_cpu_pct(x) && p99_of(y) < p99_of(x))
			return true;
	}
	return false;
}

int frontier_kernel(const struct frontier_config *c)
{
	int k = -1;
	for (int v = 0; v < c->nvar; v++)
		if (c->var[v].kind == FR_KERNEL && !c->var[v].arg)
			k = v;
	return k;
}

int frontier_p99_interval(const struct frontier_cell *c, int64_t *lo, int64_t *hi)
{
	if (!measured(c))
		return -1;
	double d = 100 * 1.96 * sqrt(0.99 * 0.01 / (double)pn_hist_count(&c->late));
	*lo = pn_hist_percentile(&c->late, 99 - d);
	*hi = pn_hist_percentile(&c->late, 99 + d > 100 ? 100 : 99 + d);
	return 0;
}

int64_t frontier_round_p99(const struct frontier_cell *c, int round)
{
	const struct frontier_tail *t = &c->round[round];
	if (t->n <= 0)
		return -1;
	int64_t rank = (t->n * 99 + 99) / 100; /* ceil(0.99 n), 1-based */
	int64_t from_top = t->n - rank;
	return t->top[from_top < FRONTIER_TAIL ? from_top : FRONTIER_TAIL - 1];
}

bool frontier_beats(const struct frontier *f, int l, int a, int b, int *won)
{
	const struct frontier_cell *x = &f->cell[l][a], *y = &f->cell[l][b];
	int64_t xlo, xhi, ylo, yhi;
	*won = 0;
	for (int r = 0; r < FRONTIER_ROUNDS; r++) {
		int64_t px = frontier_round_p99(x, r), py = frontier_round_p99(y, r);
		*won += px >= 0 && py >= 0 && px < py;
	}
	return frontier_p99_interval(x, &xlo, &xhi) == 0 &&
	       frontier_p99_interval(y, &ylo, &yhi) == 0 && xhi < ylo && *won == FRONTIER_ROUNDS;
}

int frontier_best(const struct frontier *f, int l, int *won)
{
	int k = frontier_kernel(&f->c), least = -1, deflt = -1;
	bool good[FRONTIER_MAX_VARIANTS] = {0};
	int w[FRONTIER_MAX_VARIANTS] = {0};
	*won = 0;
	if (l < 0 || l >= f->c.nlen || k < 0 || !measured(&f->cell[l][k]))
		return -1;
	for (int v = 0; v < f->c.nvar; v++) {
		enum frontier_kind kind = f->c.var[v].kind;
		if ((kind != FR_BUDGET && kind != FR_AUTO) || !measured(&f->cell[l][v]) ||
		    dominated(f, l, v) || !frontier_beats(f, l, v, k, &w[v]))
			continue;
		good[v] = true;
		if (kind == FR_AUTO)
			deflt = v;
		if (least < 0 || p99_of(&f->cell[l][v]) < p99_of(&f->cell[l][least]))
			least = v;
	}
	if (least < 0)
		return -1;
	/* as good as the least: the intervals meet */
	int64_t llo = 0, lhi = 0, lo = 0, hi = 0;
	frontier_p99_interval(&f->cell[l][least], &llo, &lhi);
	int pick = -1;
	for (int v = 0; v < f->c.nvar; v++) {
		if (!good[v])
			continue;
		frontier_p99_interval(&f->cell[l][v], &lo, &hi);
		if (lo > lhi)
			continue;
		if (v == deflt) {
			*won = w[v];
			return v; /* no budget to choose */
		}
		if (pick < 0 || f->c.var[v].arg < f->c.var[pick].arg)
			pick = v;
	}
	/* a budget only where it beats the default itself */
	int dw = 0, d = -1;
	for (int v = 0; v < f->c.nvar; v++)
		if (f->c.var[v].kind == FR_AUTO && measured(&f->cell[l][v]))
			d = v;
	if (pick >= 0 && (d < 0 || frontier_beats(f, l, pick, d, &dw))) {
		*won = d < 0 ? w[pick] : dw;
		return pick;
	}
	if (deflt < 0 && d >= 0 && pick >= 0) {
		*won = w[pick]; /* against the kernel */
		return d;
	}
	*won = deflt >= 0 ? w[deflt] : 0;
	return deflt;
}

static int64_t thread_cpu(void)
{
	struct timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (int64_t)t.tv_sec * 1000000000LL + t.tv_nsec;
}

/* The kernel's absolute sleep to t, a raw system call so that the shim does not time it. */
static void kernel_until(int64_t t)
{
	struct timespec ts = {t / 1000000000LL, t % 1000000000LL};
	while (syscall(SYS_clock_nanosleep, CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) != 0 &&
	       errno == EINTR)
		;
}

static void spin_until(int64_t t)
{
	while (pn_now() < t)
		;
}

/* One sleep of variant v to deadline, with its state s where it has one. */
static void sleep_one(const struct frontier_variant *v, struct pn__state *s, int64_t deadline,
                      int64_t precision)
{
	switch (v->kind) {
	case FR_KERNEL:
	case FR_SLICE:
		pn_slack_set(v->kind == FR_KERNEL && v->arg ? v->arg : 1);
		kernel_until(deadline);
		break;
	case FR_FIXED:
		pn_slack_set(1);
		if (deadline - v->arg > pn_now())
			kernel_until(deadline - v->arg);
		spin_until(deadline);
		break;
	case FR_BUDGET:
	case FR_AUTO:
	case FR_AUTO_NORT:
	case FR_RT:
		pn__state_use(s);
		pn_sleep_until(deadline, precision);
		break;
	case FR_SPIN:
		spin_until(deadline);
		break;
	}
}

/* ---- the thread's scheduling, per variant ---------------------------------------------- */

/* Before a sleep of v: FR_SLICE's slice, FR_RT's SCHED_FIFO; false where not permitted.
 * punctual's variants set their own around their kernel part, as a program's do. */
static bool sched_enter(const struct frontier_variant *v, const struct pn__sched_attr *base,
                        struct frontier *f)
{
	struct pn__sched_attr a = *base;
	if (v->kind == FR_SLICE) {
		a.runtime = (uint64_t)v->arg;
		pn__sched_set(&a); /* refused: the kernel alone's figures */
	} else if (v->kind == FR_RT) {
		if (f->rt_refused)
			return false;
		memset(&a, 0, sizeof(a));
		a.policy = SCHED_FIFO;
		a.priority = (uint32_t)v->arg;
		if (pn__sched_set(&a) < 0) {
			f->rt_refused = true;
			return false;
		}
	}
	return true;
}

/* After it: the thread's scheduling back. */
static void sched_leave(const struct frontier_variant *v, struct pn__sched_attr *base)
{
	if (v->kind == FR_SLICE || v->kind == FR_RT)
		pn__sched_set(base);
}

/* ---- what punctual's variants learn of the CPU's sharing ---------------------------------- */

/* The thread's schedstat: time on a CPU, on a run queue, switch-ins. */
struct runs {
	uint64_t exec, queued, n;
};

/* The thread's schedstat, open for the run: one pread a reading, where the library's open
 * and close would add two system calls to a punctual variant's run between wakeups, which
 * delays its next wakeup on a shared CPU. -1: read as the library does. */
static _Thread_local int runs_fd = -1;

static void runs_read(struct runs *r)
{
	struct pn__runs k;
	if ((runs_fd >= 0 ? pn__runs_pread(runs_fd, &k) : pn__runs_read(&k)) < 0)
		k = (struct pn__runs){0};
	*r = (struct runs){k.exec_ns, k.queued_ns, k.switches};
}

/* A punctual variant learns whether its CPU is shared from its own sleeps alone, as a
 * thread that only sleeps so would: its runs across its sleeps, noted as a reading when
 * the library would read (the state's readings are external). */
struct own_runs {
	struct runs sum;
};

static void own_runs_add(struct own_runs *o, struct pn__state *s, const struct runs *a,
                         const struct runs *b)
{
	if (!a->n || b->n < a->n || b->queued < a->queued)
		return;
	/* a spin that lost the CPU: the library's rule on this sleep's own run-queue wait (a
	 * late kernel wakeup is no evidence: its wait includes the host's delay) */
	uint64_t usual = (uint64_t)(s->slice.delay_ns > 0 ? s->slice.delay_ns : 0) * (b->n - a->n);
	uint64_t q = b->queued - a->queued;
	if (!s->slice.shared)
		pn__slice_spun(&s->slice, s->slice.lost_ns, q > usual ? q - usual : 0);
	s->slice.lost_ns = 0;
	o->sum.exec += b->exec - a->exec;
	o->sum.queued += b->queued - a->queued;
	o->sum.n += b->n - a->n;
	if (pn__slice_due(&s->slice)) {
		pn__slice_busy(&s->slice); /* as the library's own reading */
		pn__slice_note(&s->slice, o->sum.exec, o->sum.queued, o->sum.n);
	}
}

/* ---- the hogs ---------------------------------------------------------------------------- */

#define MAX_HOGS 64

struct hogs {
	pthread_t t[MAX_HOGS];
	clockid_t clk[MAX_HOGS]; /* each one's thread CPU clock */
	atomic_bool stop;
	cpu_set_t own; /* the sleeper's CPUs before it was pinned */
	cpu_set_t set; /* the hogs' CPUs, each takes itself (musl has no attribute) */
};

/* A hog: a thread of this process, so that it ends with it, and its CPU clock is exact
 * (another process's adds a running task's time only at ticks and switches). */
static void *hog(void *arg)
{
	struct hogs *h = arg;
	sched_setaffinity(0, sizeof(h->set), &h->set);
	while (!atomic_load_explicit(&h->stop, memory_order_relaxed))
		for (volatile int x = 0; x < 1000; x++)
			;
	return NULL;
}

/* Pins the calling thread to its last CPU and starts c's hogs: 0, or -errno (f->nhogs
 * started). */
static int hogs_start(const struct frontier_config *c, struct frontier *f, struct hogs *h)
{
	cpu_set_t me;
	if (sched_getaffinity(0, sizeof(h->own), &h->own) != 0)
		return -errno;
	int last = -1, taken = 0;
	CPU_ZERO(&h->set);
	for (int cpu = CPU_SETSIZE - 1; cpu >= 0; cpu--)
		if (CPU_ISSET(cpu, &h->own) && taken < (c->hog_pinned ? 1 : c->hog_cpus)) {
			CPU_SET(cpu, &h->set);
			taken++;
			last = last < 0 ? cpu : last;
		}
	CPU_ZERO(&me);
	CPU_SET(last, &me);
	if (sched_setaffinity(0, sizeof(me), &me) != 0)
		return -errno;
	f->sleeper_cpu = last;
	f->hog_ncpus = taken;
	int n = c->hog_pinned ? 1 : c->hogs * taken;
	int e = 0;
	for (f->nhogs = 0; e == 0 && f->nhogs < (n > MAX_HOGS ? MAX_HOGS : n); f->nhogs++) {
		if ((e = -pthread_create(&h->t[f->nhogs], NULL, hog, h)) < 0)
			break;
		if ((e = -pthread_getcpuclockid(h->t[f->nhogs], &h->clk[f->nhogs])) < 0) {
			f->nhogs++; /* stopped with the others */
			break;
		}
	}
	return e;
}

static void hogs_stop(struct frontier *f, struct hogs *h)
{
	atomic_store(&h->stop, true);
	for (int i = 0; i < f->nhogs; i++)
		pthread_join(h->t[i], NULL);
	if (f->sleeper_cpu >= 0)
		sched_setaffinity(0, sizeof(h->own), &h->own);
}

/* The hogs' CPU time so far, ns. */
static int64_t hogs_cpu(const struct frontier *f, const struct hogs *h)
{
	int64_t sum = 0;
	struct timespec t;
	for (int i = 0; i < f->nhogs; i++)
		if (clock_gettime(h->clk[i], &t) == 0)
			sum += (int64_t)t.tv_sec * 1000000000LL + t.tv_nsec;
	return sum;
}

/* ---- the run ----------------------------------------------------------------------------- */

/* The states of punctual's variants: 0 or -ENOMEM. */
static int states_new(const struct frontier_config *c, struct pn__state **state)
{
	for (int v = 0; v < c->nvar; v++) {
		enum frontier_kind k = c->var[v].kind;
		if (k != FR_BUDGET && k != FR_AUTO && k != FR_AUTO_NORT && k != FR_RT)
			continue;
		if (!(state[v] = pn__state_new()))
			return -ENOMEM;
		state[v]->budget_ppm =
		        k == FR_BUDGET ? (int32_t)c->var[v].arg : PN_SLEEP_BUDGET_AUTO;
		state[v]->slice.want_ns = c->slice_auto ? PN_SLEEP_SLICE_AUTO : PN_SLEEP_SLICE_OFF;
		state[v]->slice.external = true; /* own_runs_add */
		state[v]->rt.fifo_off = k == FR_AUTO_NORT;
	}
	return 0;
}

/* Keeps late among the stretch's largest. */
static void tail_add(struct frontier_tail *t, int64_t late)
{
	int64_t kept = t->n < FRONTIER_TAIL ? t->n : FRONTIER_TAIL;
	t->n++;
	if (kept == FRONTIER_TAIL && late <= t->top[FRONTIER_TAIL - 1])
		return;
	int64_t i = kept < FRONTIER_TAIL ? kept : FRONTIER_TAIL - 1;
	for (; i > 0 && t->top[i - 1] < late; i--)
		t->top[i] = t->top[i - 1];
	t->top[i] = late;
}

/* The mode each punctual variant's waits settled on at length l, into its cell. */
static void modes_note(const struct frontier_config *c, struct frontier *f, int l,
                       struct pn__state **state)
{
	for (int v = 0; v < c->nvar; v++) {
		struct pn_sleep_stats st;
		if (!state[v])
			continue;
		pn__state_stats(state[v], &st);
		f->cell[l][v].mode = st.mode;
	}
}

/* The variants' threads, each sleeping when main posts its go. One thread a variant: in
 * one thread the spinning variants ran its EEVDF lag into debt, and the next sleep woke
 * ineligible and waited out a hog's slice (docs/DESIGN.md). */
struct turns {
	const struct frontier_config *c;
	struct frontier *f;
	struct pn__state **state;
	const struct hogs *h;
	sem_t go[FRONTIER_MAX_VARIANTS], done;
	int l, r; /* set by main before it posts go */
	atomic_bool quit;
};

struct variant_thread {
	struct turns *t;
	int v;
	struct pn__sched_attr base; /* its scheduling at start */
	struct own_runs own;
};

/* Variant w->v's sleep in round t->r of length t->l. */
static void turn_sleep(struct variant_thread *w)
{
	const struct turns *t = w->t;
	const struct frontier_config *c = t->c;
	struct frontier *f = t->f;
	int v = w->v, l = t->l;
	struct pn__state *s = t->state[v];
	struct frontier_cell *cell = &f->cell[l][v];
	if (!sched_enter(&c->var[v], &w->base, f))
		return;
	bool learns = s && c->var[v].kind != FR_RT; /* FIFO: not shared */
	struct runs r0, r1;
	if (learns)
		runs_read(&r0);
	/* the hogs' time between two readings around the sleep */
	int64_t w0 = f->nhogs ? pn_now() : 0, h0 = hogs_cpu(f, t->h);
	int64_t c0 = thread_cpu(), t0 = pn_now(), d = t0 + c->len[l];
	sleep_one(&c->var[v], s, d, c->precision);
	int64_t now = pn_now();
	cell->cpu_ns += thread_cpu() - c0;
	cell->wall_ns += now - t0;
	if (f->nhogs) {
		cell->hog_ns += hogs_cpu(f, t->h) - h0;
		cell->hog_wall_ns += pn_now() - w0;
	}
	sched_leave(&c->var[v], &w->base);
	if (learns) {
		runs_read(&r1);
		own_runs_add(&w->own, s, &r0, &r1);
	}
	if (now < d)
		cell->early++;
	pn_hist_record(&cell->late, (uint64_t)(now > d ? now - d : 0));
	tail_add(&cell->round[t->r * FRONTIER_ROUNDS / c->rounds[l]], now > d ? now - d : 0);
}

static void sem_take(sem_t *s)
{
	while (sem_wait(s) != 0 && errno == EINTR)
		;
}

/* ---- the lend past a wakeup, as `run --precise` gives it ---------------------------------- */

/* The lend's bound (src/sched/sched.c): a shared thread of punctual's keeps real time past
 * its wakeup until its next wait or this signal, as under the shim, so that the default
 * measured is the one `run --precise` gives. */
static void on_bound(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	struct pn__state *s;
	if (si && si->si_code == SI_TIMER && (s = pn__state_get()) != NULL)
		pn__sched_on_bound(&s->sched, si->si_value.sival_ptr);
}

/* The bound's signal, installed once: the highest real-time one at its default, as the
 * shim's; 0: none free (no lend past a wakeup). */
static int lend_signal(void)
{
	static int sig = -1;
	if (sig >= 0)
		return sig;
	sig = 0;
	for (int n = SIGRTMAX - 1; n > SIGRTMAX - 8 && n > SIGRTMIN; n--) {
		struct sigaction now, a = {.sa_sigaction = on_bound, .sa_flags = SA_SIGINFO | SA_RESTART};
		if (sigaction(n, NULL, &now) != 0 || now.sa_handler != SIG_DFL)
			continue;
		sigfillset(&a.sa_mask);
		if (sigaction(n, &a, NULL) == 0)
			sig = n;
		break;
	}
	return sig;
}

static void *variant_main(void *arg)
{
	struct variant_thread *w = arg;
	struct turns *t = w->t;
	pn__sched_get(&w->base);
	runs_fd = pn__runs_open();
	if (pn__sched_lend_signal) { /* the threads start with every signal blocked */
		sigset_t one;
		sigemptyset(&one);
		sigaddset(&one, pn__sched_lend_signal);
		pthread_sigmask(SIG_UNBLOCK, &one, NULL);
	}
	for (;;) {
		sem_take(&t->go[w->v]);
		if (atomic_load(&t->quit))
			break;
		turn_sleep(w);
		sem_post(&t->done);
	}
	if (runs_fd >= 0)
		close(runs_fd);
	struct pn__state *s = pn__state_get();
	if (s) /* its lend ended and its bound's timer gone, by the thread that owns them */
		pn__sched_exit(&s->sched);
	pn__state_use(NULL);
	return NULL;
}

/* Every round of every length, each variant once in turn. 0, or -errno: a thread not
 * started. Signals stay with the calling thread. */
static int rounds(const struct frontier_config *c, struct frontier *f, struct pn__state **state,
                  const struct hogs *h)
{
	static struct turns t; /* one run at a time */
	static struct variant_thread w[FRONTIER_MAX_VARIANTS];
	pthread_t th[FRONTIER_MAX_VARIANTS];
	t = (struct turns){.c = c, .f = f, .state = state, .h = h};
	atomic_init(&t.quit, false);
	sem_init(&t.done, 0, 0);
	sigset_t all, was;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &was);
	int started = 0, e = 0;
	for (; started < c->nvar; started++) {
		sem_init(&t.go[started], 0, 0);
		w[started] = (struct variant_thread){.t = &t, .v = started};
		if ((e = -pthread_create(&th[started], NULL, variant_main, &w[started])) < 0) {
			sem_destroy(&t.go[started]);
			break;
		}
	}
	pthread_sigmask(SIG_SETMASK, &was, NULL);
	for (int l = 0; e == 0 && l < c->nlen; l++) {
		for (int r = 0; r < c->rounds[l] && !(c->stop && *c->stop); r++)
			for (int i = 0; i < c->nvar && !(c->stop && *c->stop); i++) {
				t.l = l;
				t.r = r;
				sem_post(&t.go[(i + r) % c->nvar]);
				sem_take(&t.done);
			}
		if (c->stop && *c->stop) /* the hogs are stopped after */
			break;
		modes_note(c, f, l, state);
	}
	atomic_store(&t.quit, true);
	for (int v = 0; v < started; v++) {
		sem_post(&t.go[v]);
		pthread_join(th[v], NULL);
		sem_destroy(&t.go[v]);
	}
	sem_destroy(&t.done);
	return e;
}

int frontier_run(const struct frontier_config *c, struct frontier *f)
{
	struct pn__state *state[FRONTIER_MAX_VARIANTS] = {0};
	static struct hogs h; /* one run at a time */
	memset(f, 0, sizeof(*f));
	f->c = *c;
	f->sleeper_cpu = -1;
	atomic_init(&h.stop, false);
	int e = states_new(c, state);
	for (int l = 0; l < c->nlen; l++)
		for (int v = 0; v < c->nvar; v++)
			pn_hist_init(&f->cell[l][v].late);
	if (e == 0 && (c->hogs || c->hog_pinned))
		e = hogs_start(c, f, &h);
	if (e == 0 && (c->hogs || c->hog_pinned)) /* shared: a wakeup's reaction is lent */
		pn__sched_lend_signal = lend_signal();
	if (e == 0)
		e = rounds(c, f, state, &h);
	pn__sched_lend_signal = 0;
	hogs_stop(f, &h);
	for (int v = 0; v < c->nvar; v++)
		pn__state_free(state[v]);
	return e;
}
