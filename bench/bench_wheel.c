/* SPDX-License-Identifier: MIT */
/*
 * bench_wheel.c: pn_wheel against the timers of libuv (uv_timer), libevent (evtimer),
 * libev (ev_timer), sd-event (sd_event_add_time) and, when built with TIMEOUT_C_DIR,
 * wahern/timeout's hashed wheel (timeout.c), driven through their public APIs
 * behind one small table of function pointers (wahern/timeout's bench layout), in one
 * run; then the wakeup counts of the same workloads: offline optimum, pn_wheel,
 * sd-event and no coalescing. Prints a Markdown section on stdout. Each peer is in its
 * own file (bench_wheel_<peer>.c, bench_wheel.h); this one holds the table and the
 * workloads.
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

#include <punctual/clock.h>
#include <punctual/sleep.h>
#include <punctual/wheel.h>
#include "bench_stats.h"
#include "bench_wheel.h"
#include "splitmix.h"

#define BATCH      1000
#define NBATCH     12    /* per pass */
#define CANCEL_OPS 50000 /* per round */
#define ROUNDS     2     /* per pass */
#define PASSES     5

/* ---- the table -------------------------------------------------------------------------- */

size_t fired_total; /* callbacks run, all peers */

/* pn_wheel first: the others' figures are given against it. */
static const struct peer *const peers[] = {
        &bench_wheel_pn,
#ifdef PN_HAVE_LIBUV
        &bench_wheel_libuv,
#endif
#ifdef PN_HAVE_LIBEVENT
        &bench_wheel_libevent,
#endif
#ifdef PN_HAVE_LIBEV
        &bench_wheel_libev,
#endif
#ifdef PN_HAVE_SDEVENT
        &bench_wheel_sdevent,
#endif
#ifdef PN_HAVE_TIMEOUT_C
        &bench_wheel_timeout,
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
		size_t before = fired_total;
		int64_t t2 = pn_now();
		while (fired_total - before < BATCH)
			p->expire(c);
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

static uint64_t early_total, past_total; /* of the run in progress */

/* Every firing's window goes into a struct windows (measure/timers.h) for the offline
 * optimum and the count without coalescing, as in `punctual timers`. */
void job_fired(struct wjob *j, int64_t now, int64_t slop)
{
	if (now < j->deadline)
		early_total++;
	else if (now > j->deadline + j->precision + slop)
		past_total++;
	if (windows_add(j->ws, j->deadline, j->deadline + j->precision) < 0)
		abort();
}

void setup_jobs(const struct load *L, struct wjob *jobs, struct windows *ws, int64_t start)
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
		for (size_t k = 0; k < NPEERS; k++) {
			const struct peer *p = peers[k];
			if (!p->wakeups || (L->virtual_time && !p->simulated))
				continue;
			struct windows ws = {0};
			early_total = past_total = 0;
			uint64_t wk = p->wakeups(L, &ws);
			uint64_t plain = windows_deadlines(ws.w, ws.n);
			uint64_t opt = windows_optimum(ws.w, ws.n);
			printf("| %s | %s | %llu | %llu | %.3f | %llu | %llu | %llu |\n", L->name,
			       p->name, (unsigned long long)wk, (unsigned long long)opt,
			       opt ? (double)wk / (double)opt : 0.0, (unsigned long long)plain,
			       (unsigned long long)past_total, (unsigned long long)early_total);
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
