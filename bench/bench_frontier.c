/* SPDX-License-Identifier: MIT */
/*
 * bench_frontier.c: what precision costs, side by side in one run: sleeps of 100 us, 1 ms,
 * 3 ms and 10 ms in every variant (the kernel alone at 1 ns slack, fixed margins of 50, 125,
 * 250, 500 and 1000 us then a spin, pn_sleep_until at budgets of 2 to 40%, at its default
 * and at 100% (the policy before budgets), and a pure spin), alternating sleep by sleep in
 * one thread (the tool's measure/frontier.c), N sleeps per variant. Prints Markdown: a table
 * per length (p50/p90/p99/p99.9 in us, CPU %), then the targets evaluated on this
 * run: dominance of every fixed margin by some budget, and the default's CPU, p50 and p99.
 * Usage: bench_frontier LABEL [N]   (LABEL names the condition: idle, loaded)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <punctual/hist.h>
#include "measure/frontier.h"

#define US 1000LL
#define MS 1000000LL

static const int64_t fixed[] = {50 * US, 125 * US, 250 * US, 500 * US, 1000 * US};
#define NFIXED 5
static const int32_t budgets[] = {20000, 50000, 100000, 200000, 400000};
#define NBUDGET 5

static double q(const struct frontier_cell *c, double p)
{
	return (double)pn_hist_percentile(&c->late, p) / 1e3;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s LABEL [N]\n", argv[0]);
		return 2;
	}
	const char *label = argv[1];
	int n = argc > 2 ? atoi(argv[2]) : 2000;
	struct frontier_config c = {.nlen = 4, .precision = 1 * US};
	const int64_t lens[] = {100 * US, 1 * MS, 3 * MS, 10 * MS};
	for (int l = 0; l < c.nlen; l++) {
		c.len[l] = lens[l];
		c.rounds[l] = n;
	}
	int k = 0, kernel, auto_v, full, spin, fx[NFIXED], bd[NBUDGET];
	c.var[kernel = k++] = (struct frontier_variant){FR_KERNEL, 0};
	for (int i = 0; i < NFIXED; i++)
		c.var[fx[i] = k++] = (struct frontier_variant){FR_FIXED, fixed[i]};
	for (int i = 0; i < NBUDGET; i++)
		c.var[bd[i] = k++] = (struct frontier_variant){FR_BUDGET, budgets[i]};
	c.var[auto_v = k++] = (struct frontier_variant){FR_AUTO, 0};
	c.var[full = k++] = (struct frontier_variant){FR_BUDGET, 1000000};
	c.var[spin = k++] = (struct frontier_variant){FR_SPIN, 0};
	c.nvar = k;
	struct frontier *f = malloc(sizeof(*f));
	if (!f || frontier_run(&c, f) != 0) {
		fprintf(stderr, "bench_frontier: the run failed\n");
		return 1;
	}
	char name[32];
	int64_t early = 0;
	for (int l = 0; l < c.nlen; l++) {
		printf("#### %s, %lld us sleeps\n\n", label, (long long)(c.len[l] / US));
		printf("| variant | p50 | p90 | p99 | p99.9 | CPU %% |\n|---|---:|---:|---:|---:|---:|\n");
		for (int v = 0; v < c.nvar; v++) {
			const struct frontier_cell *x = &f->cell[l][v];
			early += x->early;
			const char *nm = v == full ? "budget 100% (before budgets)"
			                 : v == auto_v ? "default (no budget given)"
			                               : frontier_name(&c.var[v], name, sizeof(name));
			printf("| %s | %.1f | %.1f | %.1f | %.1f | %.1f |\n", nm, q(x, 50), q(x, 90),
			       q(x, 99), q(x, 99.9), frontier_cpu_pct(x));
		}
		printf("\n");
	}
	/* the targets, on the lengths of 1 ms and more */
	printf("#### %s: targets\n\n", label);
	printf("Dominance: for each fixed margin, the cheapest budget whose CPU is at most the "
	       "margin's and whose p99 (and p99.9 where the margin's CPU is 10%% or more) is at "
	       "most the margin's.\n\n");
	printf("| length | fixed margin | its CPU %% | p99 | p99.9 | budget that dominates | its "
	       "CPU %% | p99 | p99.9 |\n|---|---|---:|---:|---:|---|---:|---:|---:|\n");
	int dominated = 0, cases = 0;
	for (int l = 1; l < c.nlen; l++)
		for (int i = 0; i < NFIXED; i++) {
			const struct frontier_cell *m = &f->cell[l][fx[i]];
			double mc = frontier_cpu_pct(m);
			int found = -1;
			int cand[NBUDGET + 2];
			int nc = 0;
			for (int b = 0; b < NBUDGET; b++)
				cand[nc++] = bd[b];
			cand[nc++] = auto_v;
			cand[nc++] = full;
			for (int b = 0; b < nc && found < 0; b++) {
				const struct frontier_cell *x = &f->cell[l][cand[b]];
				if (frontier_cpu_pct(x) <= mc && q(x, 99) <= q(m, 99) &&
				    (mc < 10 || q(x, 99.9) <= q(m, 99.9)))
					found = cand[b];
			}
			cases++;
			dominated += found >= 0;
			printf("| %lld ms | %lld us | %.1f | %.1f | %.1f | ", (long long)(c.len[l] / MS),
			       (long long)(fixed[i] / US), mc, q(m, 99), q(m, 99.9));
			if (found < 0) {
				printf("none: missed | | | |\n");
				continue;
			}
			const struct frontier_cell *x = &f->cell[l][found];
			printf("%s | %.1f | %.1f | %.1f |\n",
			       frontier_name(&c.var[found], name, sizeof(name)),
			       frontier_cpu_pct(x), q(x, 99), q(x, 99.9));
		}
	printf("\nDominated: %d of %d.\n\n", dominated, cases);
	printf("The default against the policy before budgets (100%%) and the fixed 125 us "
	       "margin: CPU <= 0.5x the old and <= 25%%, p50 <= 2 us, p99 <= max(1.2x, +30 us) "
	       "of the fixed margin's; the floor is the pure spin's p99.\n\n");
	printf("| length | default CPU %% | old CPU %% | p50 | p99 | fixed 125 us p99 | floor p99 "
	       "| CPU | p50 | p99 |\n|---|---:|---:|---:|---:|---:|---:|---|---|---|\n");
	for (int l = 1; l < c.nlen; l++) {
		const struct frontier_cell *a = &f->cell[l][auto_v], *o = &f->cell[l][full],
		                           *m = &f->cell[l][fx[1]], *s = &f->cell[l][spin];
		double ac = frontier_cpu_pct(a), oc = frontier_cpu_pct(o);
		double lim = q(m, 99) * 1.2 > q(m, 99) + 30 ? q(m, 99) * 1.2 : q(m, 99) + 30;
		printf("| %lld ms | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %s | %s | %s |\n",
		       (long long)(c.len[l] / MS), ac, oc, q(a, 50), q(a, 99), q(m, 99), q(s, 99),
		       ac <= 0.5 * oc && ac <= 25 ? "met" : "missed",
		       q(a, 50) <= 2 ? "met" : "missed", q(a, 99) <= lim ? "met" : "missed");
	}
	printf("\nEarly returns over every variant and length: %lld.\n\n", (long long)early);
	(void)kernel;
	free(f);
	return early ? 1 : 0;
}
