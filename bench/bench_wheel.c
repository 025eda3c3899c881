/* SPDX-License-Identifier: MIT */
/*
 * bench_wheel.c: pn_wheel against the timers of libuv (uv_timer), libevent (evtimer),
 * libev (ev_timer) and sd-event (sd_event_add_time), driven through their public APIs
 * behind one small table of function pointers (wahern/timeout's bench layout), in one
 * run; then the wakeup counts of the same workloads: offline optimum, pn_wheel,
 * sd-event and no coalescing. Prints a Markdown section on stdout.
 *
 * add + cancel: P timers pending (delays from the distribution); each op cancels a
 * random one and adds it again with a new delay, so P stays constant. Each peer runs 2
 * rounds of 50,000 ops right after its fill; the whole table is run 5 times, and a
 * figure is the peer's median round.
 * add + expire: P timers pending 10 s and more out (so none fires while measuring);
 * batches of 1000 timers are added with the distribution's delays scaled into 1 ms,
 * the loop waits (untimed) until they are all due, then one timed loop iteration fires
 * them (12 batches a pass, 5 passes); each figure is the peer's median batch. ns/op is
 * (add time + expiry time) per timer, so it includes each loop's per-iteration overhead
 * (one epoll_wait for the event loops; sd-event dispatches one source per iteration, so
 * its figure counts one per timer).
 *
 * Delays: uniform 1 us .. 300 s, or bimodal (half 1 us .. 1 ms, half 10 s .. 300 s:
 * retransmits and idle timeouts). pn_wheel's precision is 0 here (no coalescing help).
 * Peers the build lacks are skipped.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <punctual/clock.h>
#include <punctual/sleep.h>
#include <punctual/wheel.h>
#include "bench_wheel.h"
#include "bench_stats.h"
#include "measure/timers.h"
#include "splitmix.h"

#ifdef PN_HAVE_LIBUV
#include <uv.h>
#endif
#ifdef PN_HAVE_LIBEVENT
#include <event2/event.h>
#endif
#ifdef PN_HAVE_SDEVENT
#include <systemd/sd-event.h>
#endif

#define BATCH      1000
#define NBATCH     12    /* per pass */
#define CANCEL_OPS 50000 /* per round */
#define ROUNDS     2     /* per pass */
#define PASSES     5
#define US         1000LL
#define MS         1000000LL
#define SEC        1000000000LL

/* ---- the table -------------------------------------------------------------------------- */

size_t fired_total; /* callbacks run, all peers */

/* ---- pn_wheel ---- */

struct pn_ctx {
	struct pn_wheel *w;
	struct pn_timer *t;
	int64_t base;
};

static void pn_cb(struct pn_wheel *w, struct pn_timer *t, void *arg)
{
	(void)w, (void)t, (void)arg;
	fired_total++;
}

static void *pn_open(size_t n)
{
	struct pn_ctx *c = calloc(1, sizeof(*c));
	c->t = malloc(n * sizeof(*c->t));
	if (!c->t || pn_wheel_new(&c->w) < 0)
		abort();
	for (size_t i = 0; i < n; i++)
		pn_timer_init(&c->t[i], pn_cb, NULL);
	c->base = pn_now();
	return c;
}

static void pn_sync(void *ctx)
{
	((struct pn_ctx *)ctx)->base = pn_now();
}

static void pn_add(void *ctx, size_t i, int64_t delay)
{
	struct pn_ctx *c = ctx;
	pn_wheel_add(c->w, &c->t[i], c->base + delay, 0);
}

static void pn_cancel(void *ctx, size_t i)
{
	struct pn_ctx *c = ctx;
	pn_wheel_cancel(c->w, &c->t[i]);
}

static size_t pn_expire(void *ctx)
{
	struct pn_ctx *c = ctx;
	int r = pn_wheel_expire(c->w, pn_now());
	return r > 0 ? (size_t)r : 0;
}

static void pn_close(void *ctx)
{
	struct pn_ctx *c = ctx;
	pn_wheel_free(c->w);
	free(c->t);
	free(c);
}

/* ---- libuv ---- */
#ifdef PN_HAVE_LIBUV
struct uv_ctx {
	uv_loop_t loop;
	uv_timer_t *t;
	size_t n;
};

static void uv_cb(uv_timer_t *h)
{
	(void)h;
	fired_total++;
}

static void *uvp_open(size_t n)
{
	struct uv_ctx *c = calloc(1, sizeof(*c));
	c->t = calloc(n, sizeof(*c->t));
	c->n = n;
	if (!c->t || uv_loop_init(&c->loop) != 0)
		abort();
	for (size_t i = 0; i < n; i++)
		uv_timer_init(&c->loop, &c->t[i]);
	return c;
}

static void uvp_sync(void *ctx)
{
	uv_update_time(&((struct uv_ctx *)ctx)->loop);
}

static void uvp_add(void *ctx, size_t i, int64_t delay)
{
	struct uv_ctx *c = ctx;
	uv_timer_start(&c->t[i], uv_cb, (uint64_t)(delay / MS), 0); /* libuv counts ms */
}

static void uvp_cancel(void *ctx, size_t i)
{
	uv_timer_stop(&((struct uv_ctx *)ctx)->t[i]);
}

static size_t uvp_expire(void *ctx)
{
	size_t before = fired_total;
	uv_run(&((struct uv_ctx *)ctx)->loop, UV_RUN_NOWAIT);
	return fired_total - before;
}

static void uvp_close(void *ctx)
{
	struct uv_ctx *c = ctx;
	for (size_t i = 0; i < c->n; i++)
		uv_close((uv_handle_t *)&c->t[i], NULL);
	uv_run(&c->loop, UV_RUN_DEFAULT);
	uv_loop_close(&c->loop);
	free(c->t);
	free(c);
}
#endif

/* ---- libevent ---- */
#ifdef PN_HAVE_LIBEVENT
struct le_ctx {
	struct event_base *base;
	struct event **ev;
	size_t n;
};

static void le_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd, (void)what, (void)arg;
	fired_total++;
}

static void *le_open(size_t n)
{
	struct le_ctx *c = calloc(1, sizeof(*c));
	c->base = event_base_new();
	c->ev = calloc(n, sizeof(*c->ev));
	c->n = n;
	if (!c->base || !c->ev)
		abort();
	for (size_t i = 0; i < n; i++)
		c->ev[i] = evtimer_new(c->base, le_cb, NULL);
	return c;
}

static void le_sync(void *ctx)
{
	(void)ctx; /* libevent reads the clock itself */
}

static void le_add(void *ctx, size_t i, int64_t delay)
{
	struct le_ctx *c = ctx;
	struct timeval tv = {.tv_sec = delay / SEC, .tv_usec = (delay % SEC) / US};
	evtimer_add(c->ev[i], &tv);
}

static void le_cancel(void *ctx, size_t i)
{
	evtimer_del(((struct le_ctx *)ctx)->ev[i]);
}

static size_t le_expire(void *ctx)
{
	size_t before = fired_total;
	event_base_loop(((struct le_ctx *)ctx)->base, EVLOOP_NONBLOCK);
	return fired_total - before;
}

static void le_close(void *ctx)
{
	struct le_ctx *c = ctx;
	for (size_t i = 0; i < c->n; i++)
		event_free(c->ev[i]);
	event_base_free(c->base);
	free(c->ev);
	free(c);
}
#endif

/* ---- sd-event ---- */
#ifdef PN_HAVE_SDEVENT
struct sd_ctx {
	sd_event *e;
	sd_event_source **s;
	size_t n;
	uint64_t base_us;
};

static int sd_cb(sd_event_source *s, uint64_t usec, void *arg)
{
	(void)s, (void)usec, (void)arg;
	fired_total++;
	return 0;
}

static void *sd_open(size_t n)
{
	struct sd_ctx *c = calloc(1, sizeof(*c));
	c->s = calloc(n, sizeof(*c->s));
	c->n = n;
	if (!c->s || sd_event_new(&c->e) < 0)
		abort();
	/* Sources made once, then re-timed and enabled per op: no allocation per op, as for
	 * the others. Accuracy 1 us: sd-event's default (250 ms) would not be comparable. */
	for (size_t i = 0; i < n; i++) {
		if (sd_event_add_time(c->e, &c->s[i], CLOCK_MONOTONIC, UINT64_MAX - 1, 1, sd_cb,
		                      NULL) < 0)
			abort();
		sd_event_source_set_enabled(c->s[i], SD_EVENT_OFF);
	}
	c->base_us = (uint64_t)pn_now() / 1000;
	return c;
}

static void sd_sync(void *ctx)
{
	((struct sd_ctx *)ctx)->base_us = (uint64_t)pn_now() / 1000;
}

static void sd_add(void *ctx, size_t i, int64_t delay)
{
	struct sd_ctx *c = ctx;
	sd_event_source_set_time(c->s[i], c->base_us + (uint64_t)(delay / US));
	sd_event_source_set_enabled(c->s[i], SD_EVENT_ONESHOT);
}

static void sd_cancel(void *ctx, size_t i)
{
	sd_event_source_set_enabled(((struct sd_ctx *)ctx)->s[i], SD_EVENT_OFF);
}

static size_t sd_expire(void *ctx)
{
	size_t before = fired_total;
	while (sd_event_run(((struct sd_ctx *)ctx)->e, 0) > 0)
		; /* one source per iteration */
	return fired_total - before;
}

static void sd_close(void *ctx)
{
	struct sd_ctx *c = ctx;
	for (size_t i = 0; i < c->n; i++)
		sd_event_source_unref(c->s[i]);
	sd_event_unref(c->e);
	free(c->s);
	free(c);
}
#endif

static const struct peer pn_peer = {"pn_wheel", pn_open,   pn_sync, pn_add,
                                    pn_cancel,  pn_expire, pn_close};
#ifdef PN_HAVE_LIBUV
static const struct peer uv_peer = {"libuv",    uvp_open,   uvp_sync, uvp_add,
                                    uvp_cancel, uvp_expire, uvp_close};
#endif
#ifdef PN_HAVE_LIBEVENT
static const struct peer le_peer = {"libevent", le_open,   le_sync, le_add,
                                    le_cancel,  le_expire, le_close};
#endif
#ifdef PN_HAVE_SDEVENT
static const struct peer sd_peer = {"sd-event", sd_open,   sd_sync, sd_add,
                                    sd_cancel,  sd_expire, sd_close};
#endif

static const struct peer *const peers[] = {
        &pn_peer,
#ifdef PN_HAVE_LIBUV
        &uv_peer,
#endif
#ifdef PN_HAVE_LIBEVENT
        &le_peer,
#endif
#ifdef PN_HAVE_LIBEV
        &bench_wheel_libev,
#endif
#ifdef PN_HAVE_SDEVENT
        &sd_peer,
#endif
};
#define NPEERS (sizeof(peers) / sizeof(peers[0]))

/* ---- workloads --------------------------------------------------------------------------- */

static uint64_t rng;

static int64_t between(int64_t lo, int64_t hi)
{
	/* multiply-shift, not %: a division would cost more than the ops measured */
	return lo +
	       (int64_t)(((unsigned __int128)pn__splitmix64(&rng) * (uint64_t)(hi - lo + 1)) >> 64);
}

enum dist { UNIFORM, BIMODAL };
static const char *dist_name[] = {"uniform 1us-300s", "bimodal 1us-1ms / 10s-300s"};

static int64_t draw(enum dist d)
{
	if (d == UNIFORM)
		return between(US, 300 * SEC);
	/* The mode from a table, not a branch: a coin flip no CPU predicts would cost every
	 * peer a pipeline flush per op, the bench's cost and not the timers'. */
	static const int64_t lo[2] = {10 * SEC, US}, hi[2] = {300 * SEC, MS};
	int mode = (int)(pn__splitmix64(&rng) & 1);
	return between(lo[mode], hi[mode]);
}

static void fill(const struct peer *p, void *c, size_t n, enum dist d, int64_t offset)
{
	p->sync(c);
	for (size_t i = 0; i < n; i++)
		p->add(c, i, offset + draw(d));
}

/* BENCH_WHEEL_PEERS=libev,libuv limits the peers measured (pn_wheel always runs) and
 * BENCH_WHEEL_OP=cancel or expire the operation: a developer's shortcut (with
 * --ops-only); make bench measures everything. */
static bool peer_wanted(const struct peer *p)
{
	const char *want = getenv("BENCH_WHEEL_PEERS");
	if (!want || p == peers[0])
		return true;
	size_t len = strlen(p->name);
	for (const char *s = want; (s = strstr(s, p->name)); s += len)
		if ((s == want || s[-1] == ',') && (s[len] == ',' || s[len] == '\0'))
			return true;
	return false;
}

/* add + cancel on peer p's context c, just filled: ROUNDS samples into sample. */
static void cancel_rounds(const struct peer *p, void *c, size_t n, enum dist d, double *sample)
{
	for (int r = 0; r < ROUNDS; r++) {
		p->sync(c);
		int64_t t0 = pn_now();
		for (int op = 0; op < CANCEL_OPS; op++) {
			size_t j = (size_t)(((unsigned __int128)pn__splitmix64(&rng) * n) >> 64);
			p->cancel(c, j);
			p->add(c, j, draw(d));
		}
		sample[r] = (double)(pn_now() - t0) / CANCEL_OPS;
	}
}

/* add + expire: NBATCH samples of (add time + expiry time) / BATCH. */
static void expire_batches(const struct peer *p, void *c, size_t n, enum dist d, double *sample)
{
	for (int b = 0; b < NBATCH; b++) {
		p->sync(c);
		int64_t t0 = pn_now();
		for (size_t j = 0; j < BATCH; j++) /* the same shape, within 1 ms */
			p->add(c, n + j, draw(d) / 300000);
		int64_t t1 = pn_now();
		pn_sleep_until(t1 + 2 * MS, 100 * US); /* untimed: let them come due */
		size_t fired = 0;
		int64_t t2 = pn_now();
		while (fired < BATCH)
			fired += p->expire(c);
		sample[b] = (double)((t1 - t0) + (pn_now() - t2)) / BATCH;
	}
}

#define NROW   12 /* 3 sizes x 2 distributions x 2 operations */
#define PERMAX (NBATCH > ROUNDS ? NBATCH : ROUNDS)

static const size_t row_size[] = {1000, 100000, 1000000};

/* One pass over one row of the table: every wanted peer gets the same timers and the
 * same operations (the same random sequence), right after its own fill (its data as
 * warm as its own work leaves it, as in wahern/timeout's bench, where one library runs
 * at a time); the pass starts at another peer each time. Samples go to
 * sample[k][pass * per ...]. */
static void ops_row_pass(size_t n, enum dist d, bool expire, int pass,
                         double sample[NPEERS][PASSES * PERMAX])
{
	int per = expire ? NBATCH : ROUNDS;
	for (size_t i = 0; i < NPEERS; i++) {
		size_t k = (i + (size_t)pass) % NPEERS;
		if (!peer_wanted(peers[k]))
			continue;
		const struct peer *p = peers[k];
		/* add + expire: n timers 10 s and more out, and BATCH more to fire */
		void *c = p->open(expire ? n + BATCH : n);
		rng = expire ? 43 : 42;
		fill(p, c, n, d, expire ? 10 * SEC : 0);
		(expire ? expire_batches : cancel_rounds)(p, c, n, d, &sample[k][pass * per]);
		p->close(c);
	}
}

/* A shared machine has noisy stretches that last seconds, so the whole table is run
 * PASSES times and each figure is the median of a peer's samples over all passes: a
 * stretch lands on one pass of a row, not on all of its samples. */
static void ops_table(void)
{
	static double sample[NROW][NPEERS][PASSES * PERMAX];
	const char *only = getenv("BENCH_WHEEL_OP"); /* cancel or expire */
	printf("### add + cancel, add + expire (ns per op; in brackets pn_wheel's time / the "
	       "peer's)\n\n");
	printf("Each peer runs right after its own fill; the table is run %d times and a figure "
	       "is the median of %d rounds of %d ops (add + cancel) or of %d batches of %d "
	       "timers (add + expire).\n\n",
	       PASSES, PASSES * ROUNDS, CANCEL_OPS, PASSES * NBATCH, BATCH);
	for (int pass = 0; pass < PASSES; pass++) {
		for (int row = 0; row < NROW; row++) {
			int s = row / 4, d = row / 2 % 2, op = row % 2;
			if (only && strcmp(only, op ? "expire" : "cancel") != 0)
				continue;
			fprintf(stderr, "\rbench_wheel: pass %d/%d: %zu %s %s      ", pass + 1,
			        PASSES, row_size[s], dist_name[d], op ? "expire" : "cancel");
			ops_row_pass(row_size[s], d, op == 1, pass, sample[row]);
		}
	}
	fprintf(stderr, "\r%70s\r", "");
	printf("| pending | delays | op |");
	for (size_t k = 0; k < NPEERS; k++)
		printf(" %s |", peers[k]->name);
	printf("\n|---|---|---|");
	for (size_t k = 0; k < NPEERS; k++)
		printf("---|");
	printf("\n");
	for (int row = 0; row < NROW; row++) {
		int s = row / 4, d = row / 2 % 2, op = row % 2;
		if (only && strcmp(only, op ? "expire" : "cancel") != 0)
			continue;
		size_t nsample = PASSES * (op ? NBATCH : ROUNDS);
		double ns[NPEERS];
		for (size_t k = 0; k < NPEERS; k++)
			ns[k] = peer_wanted(peers[k]) ? median(sample[row][k], nsample) : 0;
		printf("| %zu | %s | %s | %.1f |", row_size[s], dist_name[d],
		       op == 0 ? "add+cancel" : "add+expire", ns[0]);
		for (size_t k = 1; k < NPEERS; k++)
			if (ns[k] > 0)
				printf(" %.1f (%.2fx) |", ns[k], ns[0] / ns[k]);
			else
				printf(" - |");
		printf("\n");
	}
	printf("\n");
}

/* ---- wakeups ----------------------------------------------------------------------------- */

/* Every firing's window goes into a struct windows (measure/timers.h) for the offline
 * optimum and the count without coalescing, as in `punctual timers`. */
static void win_add(struct windows *ws, int64_t lo, int64_t hi)
{
	if (windows_add(ws, lo, hi) < 0)
		abort();
}

struct load {
	const char *name;
	size_t count;
	int64_t lo, hi; /* delays or periods */
	bool periodic;
	int64_t run; /* periodic: how long */
	bool virtual_time;
};

struct wjob {
	struct pn_timer t;
	int64_t deadline, precision, period;
	struct windows *ws;
	uint64_t early;
#ifdef PN_HAVE_SDEVENT
	sd_event_source *s;
#endif
};

static int64_t wk_now;
static uint64_t early_total, past_total;

static void wk_cb(struct pn_wheel *w, struct pn_timer *t, void *arg)
{
	(void)w;
	struct wjob *j = arg;
	if (wk_now < j->deadline)
		early_total++;
	else if (wk_now > j->deadline + j->precision)
		past_total++;
	win_add(j->ws, j->deadline, j->deadline + j->precision);
	if (t->period)
		j->deadline = t->deadline;
}

static void setup_jobs(const struct load *L, struct wjob *jobs, struct windows *ws, int64_t start)
{
	rng = 7;
	for (size_t i = 0; i < L->count; i++) {
		int64_t d = between(L->lo, L->hi);
		jobs[i].precision = d / 10;
		jobs[i].period = L->periodic ? d : 0;
		jobs[i].deadline = start + (L->periodic ? between(1, d) : d);
		jobs[i].ws = ws;
	}
}

/* pn_wheel in real time (or virtual: waking exactly at pn_wheel_next's time). */
static uint64_t run_wheel(const struct load *L, struct windows *ws)
{
	struct pn_wheel *w;
	struct wjob *jobs = calloc(L->count, sizeof(*jobs));
	if (!jobs || pn_wheel_new(&w) < 0)
		abort();
	/* 20 ms of lead so that adding every timer is done before the first is due */
	int64_t start = L->virtual_time ? 0 : pn_now() + 20 * MS;
	if (L->virtual_time)
		pn_wheel_expire(w, start); /* an empty wheel adopts the simulated time */
	setup_jobs(L, jobs, ws, start);
	for (size_t i = 0; i < L->count; i++) {
		pn_timer_init(&jobs[i].t, wk_cb, &jobs[i]);
		if (L->periodic)
			pn_wheel_add_periodic(w, &jobs[i].t, jobs[i].deadline, jobs[i].precision,
			                      jobs[i].period);
		else
			pn_wheel_add(w, &jobs[i].t, jobs[i].deadline, jobs[i].precision);
	}
	uint64_t wakeups = 0;
	int64_t lo, hi, end = L->periodic ? start + L->run : INT64_MAX;
	while (pn_wheel_window(w, &lo, &hi) == 0 && lo < end) {
		if (L->virtual_time) {
			wk_now = hi;
		} else {
			pn_sleep_until(lo, hi - lo);
			wk_now = pn_now();
		}
		pn_wheel_expire(w, wk_now);
		wakeups++;
	}
	pn_wheel_free(w);
	free(jobs);
	return wakeups;
}

#ifdef PN_HAVE_SDEVENT
static int sdw_cb(sd_event_source *s, uint64_t usec, void *arg)
{
	(void)usec;
	struct wjob *j = arg;
	int64_t now = pn_now();
	if (now < j->deadline)
		early_total++;
	else if (now > j->deadline + j->precision + 999)
		past_total++; /* sd-event works in us: its window ends up to 1 us later */
	win_add(j->ws, j->deadline, j->deadline + j->precision);
	if (j->period) {
		int64_t k = (now - j->deadline) / j->period + 1;
		j->deadline += k * j->period;
		sd_event_source_set_time(s, (uint64_t)(j->deadline + 999) / 1000);
		sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
	}
	return 0;
}

/* sd-event on the same workload; a wakeup is a sd_event_wait that blocked and woke with
 * something to dispatch. Deadlines are rounded up to its microseconds. */
static uint64_t run_sdevent(const struct load *L, struct windows *ws)
{
	sd_event *e;
	struct wjob *jobs = calloc(L->count, sizeof(*jobs));
	if (!jobs || sd_event_new(&e) < 0)
		abort();
	int64_t start = pn_now() + 20 * MS;
	setup_jobs(L, jobs, ws, start);
	for (size_t i = 0; i < L->count; i++) {
		uint64_t acc = (uint64_t)jobs[i].precision / 1000;
		if (sd_event_add_time(e, &jobs[i].s, CLOCK_MONOTONIC,
		                      (uint64_t)(jobs[i].deadline + 999) / 1000, acc ? acc : 1,
		                      sdw_cb, &jobs[i]) < 0)
			abort();
	}
	uint64_t wakeups = 0;
	int64_t end = L->periodic ? start + L->run : INT64_MAX;
	size_t target = L->count;
	for (;;) {
		int64_t now = pn_now();
		if (now >= end || (!L->periodic && ws->n >= target))
			break;
		int r = sd_event_prepare(e);
		if (r == 0) {
			uint64_t timeout = L->periodic ? (uint64_t)(end - now) / 1000 : UINT64_MAX;
			r = sd_event_wait(e, timeout);
			if (r > 0)
				wakeups++;
		}
		if (r > 0)
			sd_event_dispatch(e);
		else if (r < 0)
			break;
	}
	for (size_t i = 0; i < L->count; i++)
		sd_event_source_unref(jobs[i].s);
	sd_event_unref(e);
	free(jobs);
	return wakeups;
}
#endif

static void wakeup_table(void)
{
	static const struct load loads[] = {
	        {"10^5 one-shot, uniform 1us-300s, precision 10%, virtual time", 100000, US,
	         300 * SEC, false, 0, true},
	        {"10^4 one-shot, uniform 1ms-2s, precision 10%, real time", 10000, MS, 2 * SEC,
	         false, 0, false},
	        {"10^4 periodic, periods 1ms-1s at random phases, precision 10%, 3 s", 10000, MS,
	         SEC, true, 3 * SEC, false},
	};
	printf("### Wakeups (fewer is better; never below the offline optimum of the realized "
	       "windows unless a window was overshot)\n\n");
	printf("| workload | loop | wakeups | offline optimum | / optimum | no coalescing | "
	       "past window | early |\n|---|---|---|---|---|---|---|---|\n");
	for (size_t l = 0; l < sizeof(loads) / sizeof(loads[0]); l++) {
		const struct load *L = &loads[l];
		for (int which = 0; which < 2; which++) {
			struct windows ws = {0};
			uint64_t wk;
			early_total = past_total = 0;
			if (which == 0) {
				wk = run_wheel(L, &ws);
			} else {
#ifdef PN_HAVE_SDEVENT
				if (L->virtual_time)
					continue;
				wk = run_sdevent(L, &ws);
#else
				continue;
#endif
			}
			uint64_t plain = windows_deadlines(ws.w, ws.n);
			uint64_t opt = windows_optimum(ws.w, ws.n);
			printf("| %s | %s | %llu | %llu | %.3f | %llu | %llu | %llu |\n", L->name,
			       which ? "sd-event" : "pn_wheel", (unsigned long long)wk,
			       (unsigned long long)opt, opt ? (double)wk / (double)opt : 0.0,
			       (unsigned long long)plain, (unsigned long long)past_total,
			       (unsigned long long)early_total);
			fflush(stdout);
			free(ws.w);
		}
	}
	printf("\n");
}

int main(int argc, char **argv)
{
	bool quick = argc > 1 && strcmp(argv[1], "--wakeups-only") == 0;
	bool ops_only = argc > 1 && strcmp(argv[1], "--ops-only") == 0;
	printf("## Timer wheel (bench_wheel)\n\n");
	printf("pn_wheel against");
	for (size_t k = 1; k < NPEERS; k++)
		printf(" %s%s", peers[k]->name, k + 1 < NPEERS ? "," : "");
	if (NPEERS == 1)
		printf(" no peer (none found at build time)");
	printf(", through their public APIs, in this one run. pn_timer is %zu bytes.\n\n",
	       sizeof(struct pn_timer));
	if (!quick)
		ops_table();
	if (!ops_only)
		wakeup_table();
	return 0;
}
