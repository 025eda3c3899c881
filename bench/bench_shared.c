/* SPDX-License-Identifier: MIT */
/*
 * bench_shared.c: precise waits when the CPU is shared, side by side in one run: sleeps of
 * 1, 3 and 10 ms beside CPU hogs of the run's own (tools/punctual/measure/frontier.c), in
 * every variant in turn, sleep by sleep, on the last CPU: a plain program (the kernel at 50
 * us slack, the kernel's slice), the kernel alone at 1 ns slack, with a 100 us slice, fixed
 * margins of 125 and 500 us then a spin, punctual's default (its learned slice, no spin on a
 * shared CPU) and budget 10%, the default at SCHED_FIFO 10 (where permitted) and a pure
 * spin. Prints Markdown: per length p50/p90/p99/p99.9 (us), CPU %, the hogs' share of their
 * CPUs and that share against a fair one, then the targets on this run.
 * Usage: bench_shared shared|pinned [N]   (shared: 2 hogs per CPU, unpinned, on up to 4
 * CPUs; pinned: one hog pinned to the sleeper's CPU)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <punctual/hist.h>
#include "measure/frontier.h"

#define US 1000LL
#define MS 1000000LL

enum { PLAIN, KERNEL, SLICE, FIXED125, FIXED500, DEFAULT, BUDGET10, RT, SPIN, NVAR };

static double q(const struct frontier_cell *c, double p)
{
	return (double)pn_hist_percentile(&c->late, p) / 1e3;
}

static void table(const struct frontier *f, int l)
{
	char name[40];
	printf("| variant | p50 | p90 | p99 | p99.9 | CPU %% | hogs %% | fair %% |\n"
	       "|---|---:|---:|---:|---:|---:|---:|---:|\n");
	for (int v = 0; v < f->c.nvar; v++) {
		const struct frontier_cell *x = &f->cell[l][v];
		if (!pn_hist_count(&x->late)) {
			printf("| %s | not permitted here | | | | | | |\n",
			       frontier_name(&f->c.var[v], name, sizeof(name)));
			continue;
		}
		printf("| %s | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f |\n",
		       frontier_name(&f->c.var[v], name, sizeof(name)), q(x, 50), q(x, 90),
		       q(x, 99), q(x, 99.9), frontier_cpu_pct(x), frontier_hog_pct(f, x),
		       frontier_fair_pct(f, x));
	}
	printf("\n");
}

static const char *met(int ok)
{
	return ok ? "met" : "missed";
}

/* The targets at each length. */
static void targets(const struct frontier *f)
{
	printf("Targets: the default's p99 <= the plain program's / 2 and <= the kernel with a "
	       "100 us slice (the best fixed slice here); never worse than plain at the p99; the "
	       "hogs keep >= 95%% of a fair share; --rt p99 <= 100 us where permitted.\n\n");
	printf("| length | plain p99 | slice p99 | default p99 | <= plain/2 | <= slice | <= "
	       "plain | fair %% | rt p99 | rt <= 100 us |\n"
	       "|---|---:|---:|---:|---|---|---|---:|---:|---|\n");
	for (int l = 0; l < f->c.nlen; l++) {
		const struct frontier_cell *p = &f->cell[l][PLAIN], *s = &f->cell[l][SLICE],
		                           *d = &f->cell[l][DEFAULT], *r = &f->cell[l][RT];
		double fair = frontier_fair_pct(f, d);
		printf("| %lld ms | %.1f | %.1f | %.1f | %s | %s | %s | %.1f %s |",
		       (long long)(f->c.len[l] / MS), q(p, 99), q(s, 99), q(d, 99),
		       met(q(d, 99) <= q(p, 99) / 2), met(q(d, 99) <= q(s, 99)),
		       met(q(d, 99) <= q(p, 99)), fair, met(fair >= 95));
		if (pn_hist_count(&r->late))
			printf(" %.1f | %s |\n", q(r, 99), met(q(r, 99) <= 100));
		else
			printf(" - | not permitted |\n");
	}
	printf("\n");
}

int main(int argc, char **argv)
{
	if (argc < 2 || (strcmp(argv[1], "shared") && strcmp(argv[1], "pinned"))) {
		fprintf(stderr, "usage: %s shared|pinned [N]\n", argv[0]);
		return 2;
	}
	bool pinned = !strcmp(argv[1], "pinned");
	int n = argc > 2 ? atoi(argv[2]) : 1000;
	struct frontier_config c = {.nlen = 3,
	                            .nvar = NVAR,
	                            .precision = 10 * US,
	                            .hogs = pinned ? 0 : 2,
	                            .hog_cpus = 4,
	                            .hog_pinned = pinned,
	                            .slice_auto = true};
	const int64_t lens[] = {1 * MS, 3 * MS, 10 * MS};
	for (int l = 0; l < c.nlen; l++) {
		c.len[l] = lens[l];
		c.rounds[l] = l == 2 ? n / 4 : n; /* 10 ms: a quarter, or the run takes minutes */
	}
	c.var[PLAIN] = (struct frontier_variant){FR_KERNEL, 50 * US};
	c.var[KERNEL] = (struct frontier_variant){FR_KERNEL, 0};
	c.var[SLICE] = (struct frontier_variant){FR_SLICE, 100 * US};
	c.var[FIXED125] = (struct frontier_variant){FR_FIXED, 125 * US};
	c.var[FIXED500] = (struct frontier_variant){FR_FIXED, 500 * US};
	c.var[DEFAULT] = (struct frontier_variant){FR_AUTO, 0};
	c.var[BUDGET10] = (struct frontier_variant){FR_BUDGET, 100000};
	c.var[RT] = (struct frontier_variant){FR_RT, 10};
	c.var[SPIN] = (struct frontier_variant){FR_SPIN, 0};
	struct frontier *f = malloc(sizeof(*f));
	if (!f || frontier_run(&c, f) != 0) {
		fprintf(stderr, "bench_shared: the run failed\n");
		return 1;
	}
	int64_t early = 0;
	for (int l = 0; l < c.nlen; l++) {
		printf("#### %s: %lld ms sleeps, %d hog%s on %d CPU%s, sleeper on CPU %d\n\n",
		       argv[1], (long long)(c.len[l] / MS), f->nhogs, f->nhogs == 1 ? "" : "s",
		       f->hog_ncpus, f->hog_ncpus == 1 ? "" : "s", f->sleeper_cpu);
		table(f, l);
		for (int v = 0; v < c.nvar; v++)
			early += f->cell[l][v].early;
	}
	targets(f);
	printf("Early returns over every variant and length: %lld.\n\n", (long long)early);
	free(f);
	return early ? 1 : 0;
}
