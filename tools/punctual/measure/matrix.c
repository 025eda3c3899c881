/* SPDX-License-Identifier: MIT */
/*
 * measure/matrix.c: runs the sleep mechanisms over intervals and timer slack values, for
 * `punctual sleep` and `punctual probe`. Measuring never prints (but the progress line).
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <punctual/clock.h>
#include <punctual/slack.h>
#include "util/diag.h"
#include "util/out.h"
#include "util/progress.h"
#include "measure/matrix.h"

struct sleep_cell *sleep_matrix_cell(const struct sleep_matrix *x, int i, int s, int m)
{
	return &x->cells[((size_t)i * (size_t)x->nslacks + (size_t)s) * (size_t)x->nm + (size_t)m];
}

uint64_t sleep_matrix_early(const struct sleep_matrix *x)
{
	uint64_t e = 0;
	size_t n = (size_t)x->nintervals * (size_t)x->nslacks * (size_t)x->nm;
	for (size_t k = 0; k < n; k++)
		e += x->cells[k].early;
	return e;
}

static int apply_slack(int64_t *current, int64_t want)
{
	if (*current == want)
		return 0;
	int r = pn_slack_set(want);
	if (r == 0)
		*current = want;
	return r;
}

/* The watchdog of a run: once the budget is over by a tenth of it (at least CUT_MIN_NS), it
 * cuts the sample in progress, which a timer slack may stretch far past any budget (up to
 * the slack itself). */
#define CUT_MIN_NS 10000000LL
struct watchdog {
	struct sleep_ctx *ctx;
	pthread_t sleeper, thread;
	int64_t at;
	pthread_mutex_t mu;
	pthread_cond_t cv; /* on CLOCK_MONOTONIC */
	bool done, running;
};

static void *watch(void *arg)
{
	struct watchdog *w = arg;
	pthread_mutex_lock(&w->mu);
	for (int64_t at = w->at; !w->done; at = pn_now() + CUT_MIN_NS) {
		struct timespec ts = {at / 1000000000LL, at % 1000000000LL};
		while (!w->done && pthread_cond_timedwait(&w->cv, &w->mu, &ts) != ETIMEDOUT)
			;
		if (!w->done) /* every CUT_MIN_NS: a wakeup may come before the wait it ends */
			sleep_ctx_cut(w->ctx, w->sleeper);
	}
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

static void watchdog_start(struct watchdog *w, struct sleep_ctx *ctx, int64_t end, int64_t len)
{
	*w = (struct watchdog){.ctx = ctx, .sleeper = pthread_self()};
	w->at = end + (len / 10 > CUT_MIN_NS ? len / 10 : CUT_MIN_NS);
	pthread_condattr_t a;
	pthread_condattr_init(&a);
	pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
	pthread_cond_init(&w->cv, &a);
	pthread_condattr_destroy(&a);
	pthread_mutex_init(&w->mu, NULL);
	/* without a watchdog (no thread left), a run is as long as its slack makes it */
	w->running = pthread_create(&w->thread, NULL, watch, w) == 0;
}

static void watchdog_stop(struct watchdog *w)
{
	if (w->running) {
		pthread_mutex_lock(&w->mu);
		w->done = true;
		pthread_cond_signal(&w->cv);
		pthread_mutex_unlock(&w->mu);
		pthread_join(w->thread, NULL);
	}
	pthread_cond_destroy(&w->cv);
	pthread_mutex_destroy(&w->mu);
}

/* The budget (x->duration) is kept: no sample starts that would end past it, so a long
 * interval may get fewer samples (or none: its cells say so) rather than the run overrun;
 * and a sample that a timer slack stretches past it is cut (the watchdog). */
static int measure(struct sleep_matrix *x)
{
	int64_t start = pn_now(), slack = pn_slack_get(), end = start + x->duration;
	int r = 0;
	bool spent = false;
	for (int i = 0; i < x->nintervals && r == 0 && !spent && !tool_stop; i++) {
		int64_t now = pn_now();
		int64_t budget = (start + x->duration - now) / (x->nintervals - i);
		int64_t group_end = now + (budget > 0 ? budget : 0);
		for (long round = 0; r == 0; round++) {
			bool more = false;
			for (int s = 0; s < x->nslacks && r == 0; s++) {
				if ((r = apply_slack(&slack, x->slacks[s])) < 0)
					break;
				for (int m = 0; m < x->nm; m++) {
					struct sleep_cell *cell = sleep_matrix_cell(x, i, s, m);
					if (x->unsupported[m] ||
					    pn_hist_count(&cell->duration) >= (uint64_t)x->samples)
						continue;
					if (pn_now() + x->intervals[i] > end) {
						spent = true;
						break;
					}
					r = sleep_sample(x->ctx, x->m[m], x->intervals[i], cell);
					if (x->m[m]->own_slack)
						slack = -1; /* it chose its own: set ours again */
					if (r == -ECANCELED) { /* the budget is spent, or stopped */
						r = 0;
						spent = true;
						break;
					}
					if (r < 0) {
						x->failed = x->m[m];
						break;
					}
					more = true;
				}
			}
			if ((round & 63) == 0) {
				char b[32];
				progress("sleep: interval %s (%d of %d), round %ld, %.0f s left",
				         fmt_ns(b, sizeof(b), (double)x->intervals[i]), i + 1,
				         x->nintervals, round + 1,
				         (double)(start + x->duration - pn_now()) / 1e9);
			}
			if (!more || spent || pn_now() >= group_end)
				break;
		}
	}
	apply_slack(&slack, x->original_slack);
	x->elapsed = pn_now() - start;
	progress_done();
	return r;
}

int sleep_matrix_run(struct sleep_matrix *x)
{
	size_t ncells = (size_t)x->nintervals * (size_t)x->nslacks * (size_t)x->nm;
	x->original_slack = pn_slack_get();
	x->cells = malloc(ncells * sizeof(*x->cells));
	x->unsupported = calloc((size_t)x->nm, sizeof(*x->unsupported));
	x->ctx = sleep_ctx_new();
	if (!x->cells || !x->unsupported || !x->ctx)
		return -ENOMEM;
	for (size_t k = 0; k < ncells; k++)
		sleep_cell_init(&x->cells[k]);
	sleep_ctx_stop_on(x->ctx, &tool_stop);
	for (int m = 0; m < x->nm; m++) {
		const char *why = NULL;
		if (sleep_ctx_prepare(x->ctx, x->m[m], &why) < 0)
			x->unsupported[m] = why ? why : "unsupported";
	}
	struct sigaction old;
	struct watchdog w;
	int armed = sleep_ctx_cut_arm(&old);
	if (armed == 0)
		watchdog_start(&w, x->ctx, pn_now() + x->duration, x->duration);
	int r = measure(x);
	if (armed == 0) {
		watchdog_stop(&w);
		sleep_ctx_cut_disarm(&old);
	}
	return r;
}

uint64_t sleep_matrix_cut(const struct sleep_matrix *x)
{
	uint64_t n = 0;
	size_t cells = (size_t)x->nintervals * (size_t)x->nslacks * (size_t)x->nm;
	for (size_t k = 0; k < cells; k++)
		n += x->cells[k].cut;
	return n;
}

void sleep_matrix_free(struct sleep_matrix *x)
{
	sleep_ctx_free(x->ctx);
	free(x->cells);
	free(x->unsupported);
	x->ctx = NULL;
	x->cells = NULL;
	x->unsupported = NULL;
}
