/* SPDX-License-Identifier: MIT */
/*
 * measure/frontier.c: the lateness-versus-CPU frontier of measure/frontier.h. Each round
 * sleeps once in every variant, in order, at one length; a variant's lateness is its
 * return less its deadline (the instant read before the call plus the length), its CPU the
 * thread's CPU time across the call. punctual's variants each keep a sleep state of their
 * own (pn__state_use), so that a budget is measured against its own sleeps, and
 * each learns as a program that sleeps so would.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <punctual/clock.h>
#include <punctual/slack.h>
#include <punctual/sleep.h>
#include "measure/frontier.h"
#include "wait/state.h"

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
	/* about 0.1 + 1 + 1.5 s quick, 0.6 + 2.7 + 4.5 s otherwise, for 9 variants */
	c->rounds[0] = quick ? 120 : 600;
	c->rounds[1] = quick ? 100 : 300;
	c->rounds[2] = quick ? 16 : 50;
	c->precision = 1 * US;
}

const char *frontier_name(const struct frontier_variant *v, char *buf, size_t n)
{
	switch (v->kind) {
	case FR_KERNEL:
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
	default:
		frontier_name(v, buf, n);
	}
	return buf;
}

double frontier_cpu_pct(const struct frontier_cell *c)
{
	return c->wall_ns ? 100.0 * (double)c->cpu_ns / (double)c->wall_ns : 0;
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

/* Whether a fixed margin measured at length l has no more CPU than v's and a lower p99. */
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
		if (c->var[v].kind == FR_KERNEL)
			k = v;
	return k;
}

int frontier_best(const struct frontier *f, int l)
{
	int k = frontier_kernel(&f->c), best = -1;
	if (l < 0 || l >= f->c.nlen || k < 0 || !measured(&f->cell[l][k]))
		return -1;
	const struct frontier_cell *kc = &f->cell[l][k];
	double kp = (double)p99_of(kc), kcpu = frontier_cpu_pct(kc), most = 0;
	for (int v = 0; v < f->c.nvar; v++) {
		const struct frontier_cell *vc = &f->cell[l][v];
		if ((f->c.var[v].kind != FR_BUDGET && f->c.var[v].kind != FR_AUTO) ||
		    !measured(vc) || dominated(f, l, v))
			continue;
		double gain = kp - (double)p99_of(vc);
		double extra = frontier_cpu_pct(vc) - kcpu;
		double per = gain / (extra > 0.5 ? extra : 0.5);
		if (gain > 0 && per > most) {
			most = per;
			best = v;
		}
	}
	return best;
}

int frontier_nearest_fixed(const struct frontier *f, int l, double cpu)
{
	int near = -1;
	double d = 0;
	for (int v = 0; l >= 0 && l < f->c.nlen && v < f->c.nvar; v++) {
		const struct frontier_cell *c = &f->cell[l][v];
		double dv = frontier_cpu_pct(c) - cpu;
		dv = dv < 0 ? -dv : dv;
		if (f->c.var[v].kind == FR_FIXED && measured(c) && (near < 0 || dv < d)) {
			near = v;
			d = dv;
		}
	}
	return near;
}

static int64_t thread_cpu(void)
{
	struct timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (int64_t)t.tv_sec * 1000000000LL + t.tv_nsec;
}

/* The kernel's absolute sleep to t (a raw system call: under the preload shim the tool's
 * own measurements stay the kernel's). */
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

/* One sleep of variant v to deadline; s: its state (FR_BUDGET, FR_AUTO). */
static void sleep_one(const struct frontier_variant *v, struct pn__state *s, int64_t deadline,
                      int64_t precision)
{
	switch (v->kind) {
	case FR_KERNEL:
		pn_slack_set(1);
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
		pn__state_use(s);
		pn_sleep_until(deadline, precision);
		break;
	case FR_SPIN:
		spin_until(deadline);
		break;
	}
}

int frontier_run(const struct frontier_config *c, struct frontier *f)
{
	struct pn__state *state[FRONTIER_MAX_VARIANTS] = {0};
	int e = 0;
	memset(f, 0, sizeof(*f));
	f->c = *c;
	for (int v = 0; v < c->nvar; v++) {
		if (c->var[v].kind != FR_BUDGET && c->var[v].kind != FR_AUTO)
			continue;
		if (!(state[v] = pn__state_new())) {
			e = -ENOMEM;
			goto out;
		}
		state[v]->budget_ppm =
		        c->var[v].kind == FR_AUTO ? PN_SLEEP_BUDGET_AUTO : (int32_t)c->var[v].arg;
	}
	for (int l = 0; l < c->nlen; l++)
		for (int v = 0; v < c->nvar; v++)
			pn_hist_init(&f->cell[l][v].late);
	int64_t slack = pn_slack_get();
	struct pn__state *own = pn__state_use(NULL);
	for (int l = 0; l < c->nlen; l++)
		for (int r = 0; r < c->rounds[l]; r++)
			for (int v = 0; v < c->nvar; v++) {
				struct frontier_cell *cell = &f->cell[l][v];
				int64_t c0 = thread_cpu(), t0 = pn_now(), d = t0 + c->len[l];
				sleep_one(&c->var[v], state[v], d, c->precision);
				int64_t t = pn_now();
				cell->cpu_ns += thread_cpu() - c0;
				cell->wall_ns += t - t0;
				if (t < d)
					cell->early++;
				pn_hist_record(&cell->late, (uint64_t)(t > d ? t - d : 0));
			}
	pn__state_use(own);
	pn_slack_set(slack > 0 ? slack : 0);
out:
	for (int v = 0; v < c->nvar; v++)
		pn__state_free(state[v]);
	return e;
}
