/* SPDX-License-Identifier: MIT */
/*
 * bench_default.c: whether punctual's default (pn_sleep_until with no budget given) sits
 * on the lower envelope of everything punctual can do, at its CPU. Every variant the probe
 * measures (the kernel alone at 1 ns slack, a plain program at 50 us slack, the kernel with
 * a 100 us EEVDF slice, fixed margins of 125 and 500 us, budgets of 5 to 50%, the default,
 * a pure spin: the floor), alternating sleep by sleep in one thread (the tool's
 * measure/frontier.c), in ROUNDS runs of N sleeps per variant, idle or beside CPU hogs of
 * its own (two per CPU). Prints Markdown: per length, each variant's p99 over the rounds
 * (least, median, most) and its median CPU; then per length the rounds in which the
 * default's p99 was within the noise (1.5x + 5 us idle, + 20 us shared) of every variant
 * that spent no more CPU, and in which it was at or below them.
 * Usage: bench_default idle|shared [N] [ROUNDS]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <punctual/hist.h>
#include "measure/frontier.h"

#define US      1000LL
#define MS      1000000LL
#define MAXR    16
#define NLENGTH 4

static const int64_t lens[NLENGTH] = {100 * US, 1 * MS, 3 * MS, 10 * MS};

static const struct frontier_variant vars[] = {
        {FR_KERNEL, 0},       {FR_KERNEL, 50 * US}, {FR_SLICE, 100 * US}, {FR_FIXED, 125 * US},
        {FR_FIXED, 500 * US}, {FR_BUDGET, 50000},   {FR_BUDGET, 100000},  {FR_BUDGET, 250000},
        {FR_BUDGET, 500000},  {FR_AUTO, 0},         {FR_SPIN, 0},
};
#define NVAR ((int)(sizeof(vars) / sizeof(vars[0])))
#define AUTO 9

struct figure {
	double p99_us, cpu; /* p99_us < 0: too few sleeps */
	double fair;        /* the hogs' CPU against what the sleeper left them, % */
};
static struct figure fig[MAXR][NLENGTH][NVAR];

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* The least, median and most of v's p99 at length l over the rounds (-1: none). */
static void spread(int rounds, int l, int v, double *lo, double *mid, double *hi, double *cpu,
                   double *fair)
{
	double p[MAXR], c[MAXR], w[MAXR];
	int n = 0;
	for (int r = 0; r < rounds; r++) {
		c[r] = fig[r][l][v].cpu;
		w[r] = fig[r][l][v].fair;
		if (fig[r][l][v].p99_us >= 0)
			p[n++] = fig[r][l][v].p99_us;
	}
	qsort(c, (size_t)rounds, sizeof(double), cmp_double);
	qsort(w, (size_t)rounds, sizeof(double), cmp_double);
	*cpu = c[rounds / 2];
	*fair = w[0];
	if (!n) {
		*lo = *mid = *hi = -1;
		return;
	}
	qsort(p, (size_t)n, sizeof(double), cmp_double);
	*lo = p[0];
	*mid = p[n / 2];
	*hi = p[n - 1];
}

/* In round r at length l: the best p99 of the variants of no more CPU than the default's
 * (not the default; -1: none), and its index. */
static double best_cheaper(int r, int l, int *which)
{
	const struct figure *d = &fig[r][l][AUTO];
	double best = -1;
	*which = -1;
	for (int v = 0; v < NVAR; v++) {
		const struct figure *x = &fig[r][l][v];
		if (v == AUTO || x->p99_us < 0 || x->cpu > d->cpu)
			continue;
		if (best < 0 || x->p99_us < best) {
			best = x->p99_us;
			*which = v;
		}
	}
	return best;
}

static void verdict(int rounds, int l, double slack_us)
{
	int within = 0, below = 0, n = 0;
	char worst[160] = "";
	double worst_x = 0;
	for (int r = 0; r < rounds; r++) {
		int w;
		double d = fig[r][l][AUTO].p99_us, b = best_cheaper(r, l, &w);
		if (d < 0 || b < 0)
			continue;
		n++;
		within += d <= 1.5 * b + slack_us;
		below += d <= b;
		if (d / b > worst_x) {
			char name[32];
			worst_x = d / b;
			snprintf(worst, sizeof(worst),
			         "%.1f us vs %s %.1f us (%.1f%% vs %.1f%% CPU)", d,
			         frontier_name(&vars[w], name, sizeof(name)), b,
			         fig[r][l][AUTO].cpu, fig[r][l][w].cpu);
		}
	}
	if (!n) {
		printf("| %lld us | - | - | too few sleeps for a p99 |\n",
		       (long long)(lens[l] / US));
		return;
	}
	printf("| %lld us | %d of %d | %d of %d | %s |\n", (long long)(lens[l] / US), within, n,
	       below, n, worst);
}

int main(int argc, char **argv)
{
	if (argc < 2 || (strcmp(argv[1], "idle") && strcmp(argv[1], "shared"))) {
		fprintf(stderr, "usage: %s idle|shared [N] [ROUNDS]\n", argv[0]);
		return 2;
	}
	bool shared = !strcmp(argv[1], "shared");
	int n = argc > 2 ? atoi(argv[2]) : 400, rounds = argc > 3 ? atoi(argv[3]) : 3;
	if (n < 1 || rounds < 1 || rounds > MAXR) {
		fprintf(stderr, "bench_default: N >= 1, 1 <= ROUNDS <= %d\n", MAXR);
		return 2;
	}
	struct frontier_config c = {.nlen = NLENGTH, .nvar = NVAR};
	c.precision = shared ? 10 * US : 1 * US; /* the probe's: run --precise's when shared */
	c.hogs = shared ? 2 : 0;
	c.hog_cpus = shared ? 4 : 0;
	c.slice_auto = true; /* the library's default */
	memcpy(c.var, vars, sizeof(vars));
	for (int l = 0; l < NLENGTH; l++) {
		c.len[l] = lens[l];
		/* at most about 2 s of sleeps a variant and length */
		int cap = (int)(2000 * MS / lens[l]);
		c.rounds[l] = n < cap ? n : cap;
	}
	struct frontier *f = malloc(sizeof(*f));
	if (!f)
		return 1;
	for (int r = 0; r < rounds; r++) {
		if (frontier_run(&c, f) != 0) {
			fprintf(stderr, "bench_default: the run failed\n");
			return 1;
		}
		for (int l = 0; l < NLENGTH; l++)
			for (int v = 0; v < NVAR; v++) {
				const struct frontier_cell *x = &f->cell[l][v];
				bool enough = pn_hist_count(&x->late) >= FRONTIER_MIN_P99;
				fig[r][l][v].p99_us =
				        enough ? (double)pn_hist_percentile(&x->late, 99) / 1e3
				               : -1;
				fig[r][l][v].cpu = frontier_cpu_pct(x);
				fig[r][l][v].fair = frontier_fair_pct(f, x);
			}
	}
	char name[32];
	for (int l = 0; l < NLENGTH; l++) {
		printf("#### %s, %lld us sleeps (%d a variant, %d rounds)\n\n", argv[1],
		       (long long)(lens[l] / US), c.rounds[l], rounds);
		printf("| variant | p99 least | median | most | CPU %% | hogs' fair %% (least) "
		       "|\n|---|---:|---:|---:|---:|---:|\n");
		for (int v = 0; v < NVAR; v++) {
			double lo, mid, hi, cpu, fair;
			char p[64] = "- | - | -", w[16] = "-";
			spread(rounds, l, v, &lo, &mid, &hi, &cpu, &fair);
			if (mid >= 0)
				snprintf(p, sizeof(p), "%.1f | %.1f | %.1f", lo, mid, hi);
			if (shared)
				snprintf(w, sizeof(w), "%.1f", fair);
			printf("| %s | %s | %.1f | %s |\n",
			       frontier_name(&vars[v], name, sizeof(name)), p, cpu, w);
		}
		printf("\n");
	}
	printf("#### %s: the default against every variant of no more CPU\n\n", argv[1]);
	printf("| length | within 1.5x + %d us | at or below | its worst round |\n"
	       "|---|---:|---:|---|\n",
	       shared ? 20 : 5);
	for (int l = 0; l < NLENGTH; l++)
		verdict(rounds, l, shared ? 20 : 5);
	printf("\n");
	free(f);
	return 0;
}
