/* SPDX-License-Identifier: MIT */
/*
 * `punctual probe`'s section "what precision costs here": the frontier at 100 us, 1 ms and
 * 10 ms, and the recommendation at 1 ms by frontier_best's rule: punctual's default, or a
 * budget only where it beats the default in every stretch; none where nothing beats the
 * kernel alone so, nor where the quota throttled the probe (spinning spends it).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probe/probe.h"
#include "util/diag.h"
#include "util/json.h"
#include "util/out.h"
#include "util/progress.h"
#include "util/prom.h"

#define MS 1000000LL

int probe_frontier_run(struct frontier_config *c, struct frontier **f)
{
	*f = malloc(sizeof(**f));
	if (!*f)
		die(1, "out of memory");
	c->stop = &tool_stop;
	int e = frontier_run(c, *f);
	if (e == -ENOMEM)
		die(1, "out of memory");
	return e;
}

static void probe_frontier_measure(struct probe_frontier *pf, bool quick)
{
	struct frontier_config c;
	frontier_probe_config(&c, quick);
	pf->run = true;
	pf->best = pf->len_1ms = -1;
	progress("probe: what precision costs (%d variants, alternating)", c.nvar);
	int e = probe_frontier_run(&c, &pf->f);
	if (e < 0)
		die(1, "the frontier failed: %s", pn_strerror(e));
	for (int l = 0; l < c.nlen; l++)
		if (c.len[l] == 1 * MS)
			pf->len_1ms = l;
	pf->best = frontier_best(pf->f, pf->len_1ms, &pf->won);
}

static void probe_frontier_free(struct probe_frontier *pf)
{
	free(pf->f);
	pf->f = NULL;
}

/* A lateness in few characters: "35", "1.2m" (us; m: ms). */
static const char *lat(char *buf, size_t n, int64_t ns)
{
	double us = (double)ns / 1e3;
	if (us < 10)
		snprintf(buf, n, "%.1f", us);
	else if (us < 1000)
		snprintf(buf, n, "%.0f", us);
	else if (us < 10000)
		snprintf(buf, n, "%.1fm", us / 1e3);
	else
		snprintf(buf, n, "%.0fm", us / 1e3);
	return buf;
}

static int64_t quantile(const struct frontier_cell *c, double q, uint64_t min)
{
	return pn_hist_count(&c->late) >= min ? pn_hist_percentile(&c->late, q) : -1;
}

static void probe_frontier_text(FILE *f, const struct probe_frontier *pf)
{
	if (!pf->run || !pf->f)
		return;
	const struct frontier_config *c = &pf->f->c;
	char a[16], b[16], name[32];
	fprintf(f, "\nwhat precision costs here (alternating sleeps: lateness p50/p99, CPU)\n");
	fprintf(f, "  %-14s", "");
	for (int l = 0; l < c->nlen; l++) {
		fmt_ns(a, sizeof(a), (double)c->len[l]);
		fprintf(f, "  %-16s", a);
	}
	fputc('\n', f);
	for (int v = 0; v < c->nvar; v++) {
		fprintf(f, "  %-14s", frontier_name(&c->var[v], name, sizeof(name)));
		for (int l = 0; l < c->nlen; l++) {
			const struct frontier_cell *x = &pf->f->cell[l][v];
			int64_t p99 = quantile(x, 99, FRONTIER_MIN_P99);
			char cell[40];
			snprintf(cell, sizeof(cell), "%s/%s", lat(a, sizeof(a), quantile(x, 50, 1)),
			         p99 < 0 ? "-" : lat(b, sizeof(b), p99));
			fprintf(f, "  %-11s%4.0f%%", cell, frontier_cpu_pct(x));
		}
		fputc('\n', f);
	}
	fprintf(f, "  (us; m: ms; -: under %d sleeps, too few for a p99; precision %s)\n",
	        FRONTIER_MIN_P99, fmt_ns(a, sizeof(a), (double)c->precision));
	for (int v = 0; v < c->nvar; v++) {
		if (c->var[v].kind != FR_AUTO)
			continue;
		fprintf(f, "  default settled on:");
		for (int l = 0; l < c->nlen; l++)
			fprintf(f, "%s %s at %s", l ? "," : "",
			        pn_sleep_mode_name(pf->f->cell[l][v].mode),
			        fmt_ns(a, sizeof(a), (double)c->len[l]));
		fputc('\n', f);
	}
}

/* "p99 35 us (95%: 30 to 41 us)" into buf. */
static const char *p99_noise(char *buf, size_t n, const struct frontier_cell *c)
{
	int64_t lo = 0, hi = 0;
	char a[16], b[16], d[16];
	frontier_p99_interval(c, &lo, &hi);
	snprintf(buf, n, "p99 %s (95%%: %s to %s)",
	         fmt_ns(a, sizeof(a), (double)pn_hist_percentile(&c->late, 99)),
	         fmt_ns(b, sizeof(b), (double)lo), fmt_ns(d, sizeof(d), (double)hi));
	return buf;
}

static int probe_frontier_reco(const struct probe_frontier *pf, struct probe_reco *r)
{
	if (!pf->run || !pf->f || pf->best < 0 || pf->len_1ms < 0)
		return 0;
	char *buf = r->text;
	size_t n = sizeof(r->text);
	const struct frontier_config *c = &pf->f->c;
	int l = pf->len_1ms, k = frontier_kernel(c);
	const struct frontier_cell *b = &pf->f->cell[l][pf->best], *kc = &pf->f->cell[l][k];
	*r = (struct probe_reco){.kind = "budget",
	                         .measured = true,
	                         .figure = "p99_ns",
	                         .before = (double)pn_hist_percentile(&kc->late, 99),
	                         .after = (double)pn_hist_percentile(&b->late, 99)};
	char q1[64], q2[64], name[32], flag[48];
	const struct frontier_variant *v = &c->var[pf->best];
	bool deflt = v->kind == FR_AUTO;
	if (deflt)
		snprintf(flag, sizeof(flag), "--precise");
	else
		snprintf(flag, sizeof(flag), "--precise --budget=%g%%", (double)v->arg / 1e4);
	int w = snprintf(buf, n,
	                 "What precision costs: at 1 ms sleeps, %s wakes at %s and %.0f%% CPU, "
	                 "the kernel alone at %s and %.0f%% (sure: lower in %d of %d rounds "
	                 "and beyond the noise of repeated runs",
	                 deflt ? "punctual's default" : frontier_name(v, name, sizeof(name)),
	                 p99_noise(q1, sizeof(q1), b), frontier_cpu_pct(b),
	                 p99_noise(q2, sizeof(q2), kc), frontier_cpu_pct(kc), pf->won,
	                 FRONTIER_ROUNDS);
	for (int d = 0; !deflt && d < c->nvar && w > 0 && (size_t)w < n; d++)
		if (c->var[d].kind == FR_AUTO && probe_p99(&pf->f->cell[l][d].late) >= 0)
			w += snprintf(buf + w, n - (size_t)w,
			              ", against the default's p99 %s as well",
			              fmt_ns(name, sizeof(name),
			                     (double)probe_p99(&pf->f->cell[l][d].late)));
	snprintf(r->command, sizeof(r->command), "punctual run %s -- APP", flag);
	if (w > 0 && (size_t)w < n)
		snprintf(buf + w, n - (size_t)w, "): `punctual run %s -- APP`%s.", flag,
		         deflt ? "" : ", or PUNCTUAL_BUDGET for a program linked with libpunctual");
	return 1;
}

static const char *kind_name(enum frontier_kind k)
{
	static const char *const names[] = {"kernel", "fixed", "budget", "auto",
	                                    "spin",   "slice", "rt"};
	_Static_assert(sizeof(names) / sizeof(names[0]) == FR_RT + 1, "a name per kind");
	return names[k];
}

static void probe_frontier_json(struct json *j, const struct probe_frontier *pf)
{
	if (!pf->run || !pf->f)
		return;
	const struct frontier_config *c = &pf->f->c;
	char id[32], name[32];
	json_obj(j, "frontier");
	json_int(j, "precision_ns", c->precision);
	json_arr(j, "lengths");
	for (int l = 0; l < c->nlen; l++) {
		json_obj(j, NULL);
		json_int(j, "length_ns", c->len[l]);
		json_arr(j, "variants");
		for (int v = 0; v < c->nvar; v++) {
			const struct frontier_cell *x = &pf->f->cell[l][v];
			const struct frontier_variant *var = &c->var[v];
			json_obj(j, NULL);
			json_str(j, "variant", frontier_id(var, id, sizeof(id)));
			json_str(j, "name", frontier_name(var, name, sizeof(name)));
			json_str(j, "kind", kind_name(var->kind));
			if (var->kind == FR_FIXED)
				json_int(j, "margin_ns", var->arg);
			if (var->kind == FR_BUDGET)
				json_int(j, "budget_ppm", var->arg);
			json_uint(j, "n", pn_hist_count(&x->late));
			json_int(j, "p50_ns", quantile(x, 50, 1));
			json_int_if(j, "p90_ns", pn_hist_count(&x->late) >= 10,
			            quantile(x, 90, 10));
			json_int_if(j, "p99_ns", quantile(x, 99, FRONTIER_MIN_P99) >= 0,
			            quantile(x, 99, FRONTIER_MIN_P99));
			json_int_if(j, "p999_ns", quantile(x, 99.9, FRONTIER_MIN_P999) >= 0,
			            quantile(x, 99.9, FRONTIER_MIN_P999));
			json_num(j, "cpu_pct", frontier_cpu_pct(x));
			if (x->mode != PN_SLEEP_MODE_NONE)
				json_str(j, "mode", pn_sleep_mode_name(x->mode));
			json_int(j, "early", x->early);
			json_obj_end(j);
		}
		json_arr_end(j);
		json_obj_end(j);
	}
	json_arr_end(j);
	if (pf->best >= 0)
		json_str(j, "best_at_1ms", frontier_id(&c->var[pf->best], id, sizeof(id)));
	else
		json_none(j, "best_at_1ms");
	json_obj_end(j);
}

static void probe_frontier_prom(FILE *f, const struct probe_frontier *pf)
{
	if (!pf->run || !pf->f)
		return;
	const struct frontier_config *c = &pf->f->c;
	char id[32];
	prom_help(f, "punctual_frontier_lateness_seconds", "gauge",
	          "Lateness past the deadline of the probe's alternating sleeps, by sleep length, "
	          "variant (kernel, fixed margin, punctual budget, default, spin) and percentile.");
	for (int l = 0; l < c->nlen; l++)
		for (int v = 0; v < c->nvar; v++) {
			const struct frontier_cell *x = &pf->f->cell[l][v];
			static const double qs[] = {50, 99};
			for (int q = 0; q < 2; q++) {
				int64_t val = quantile(x, qs[q], q ? FRONTIER_MIN_P99 : 1);
				if (val < 0)
					continue;
				fprintf(f,
				        "punctual_frontier_lateness_seconds{length_seconds=\"%g\","
				        "variant=\"%s\",percentile=\"%g\"} %.9f\n",
				        (double)c->len[l] / 1e9,
				        frontier_id(&c->var[v], id, sizeof(id)), qs[q],
				        (double)val / 1e9);
			}
		}
	prom_help(f, "punctual_frontier_cpu_ratio", "gauge",
	          "CPU time over wall time of the probe's alternating sleeps, by sleep length and "
	          "variant.");
	for (int l = 0; l < c->nlen; l++)
		for (int v = 0; v < c->nvar; v++)
			fprintf(f,
			        "punctual_frontier_cpu_ratio{length_seconds=\"%g\",variant=\"%s\"} "
			        "%.4f\n",
			        (double)c->len[l] / 1e9, frontier_id(&c->var[v], id, sizeof(id)),
			        frontier_cpu_pct(&pf->f->cell[l][v]) / 100);
}

/* ---- the section ----------------------------------------------------------------------- */

static void frontier_measure(struct probe *p)
{
	probe_frontier_measure(&p->frontier, p->quick);
}

/* The default's index among the variants, or -1. */
static int default_of(const struct frontier_config *c)
{
	for (int v = 0; v < c->nvar; v++)
		if (c->var[v].kind == FR_AUTO)
			return v;
	return -1;
}

/* Keeps frontier_best's pick where its p99 is below the kernel's beyond the noise of
 * repeated runs (a budget also below the default's), else the default where it is; else
 * none, noted as unsure where one was lower all the same. */
static void frontier_sure(struct probe *p)
{
	struct probe_frontier *pf = &p->frontier;
	if (!pf->run || !pf->f || pf->len_1ms < 0)
		return;
	const struct frontier_config *c = &pf->f->c;
	int l = pf->len_1ms, k = frontier_kernel(c), d = default_of(c);
	if (k < 0)
		return;
	const struct pn_hist *kh = &pf->f->cell[l][k].late;
	const struct pn_hist *dh = d >= 0 ? &pf->f->cell[l][d].late : NULL;
	if (pf->best >= 0 && pf->best != d && dh && probe_p99(dh) >= 0 &&
	    !probe_sure(&pf->f->cell[l][pf->best].late, dh)) /* within the default's noise */
		pf->best = d >= 0 && frontier_beats(pf->f, l, d, k, &pf->won) ? d : -1;
	if (pf->best >= 0 && probe_sure(&pf->f->cell[l][pf->best].late, kh))
		return;
	bool lower = pf->best >= 0 || (dh && probe_p99(dh) >= 0 && probe_p99(dh) < probe_p99(kh));
	pf->best = -1;
	if (lower)
		probe_unsure(p, "punctual's precise wait lowers a 1 ms loop's p99");
}

/* frontier_best's advice, where no quota throttled the probe, beyond the noise */
static void frontier_recommend(struct probe *p)
{
	if (probe_throttled(p))
		return;
	frontier_sure(p);
	struct probe_reco *r = probe_reco_next(p);
	if (r && probe_frontier_reco(&p->frontier, r))
		p->nrecos++;
}

static void frontier_text(const struct probe *p)
{
	probe_frontier_text(out, &p->frontier);
}

static void frontier_json(struct json *j, const struct probe *p)
{
	probe_frontier_json(j, &p->frontier);
}

static void frontier_prom(FILE *f, const struct probe *p)
{
	probe_frontier_prom(f, &p->frontier);
}

static void frontier_done(struct probe *p)
{
	probe_frontier_free(&p->frontier);
}

const struct probe_section probe_frontier = {.name = "frontier",
                                             .measure = frontier_measure,
                                             .recommend = frontier_recommend,
                                             .text = frontier_text,
                                             .json = frontier_json,
                                             .prom = frontier_prom,
                                             .done = frontier_done};
