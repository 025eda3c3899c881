/* SPDX-License-Identifier: MIT */
/* `punctual probe`'s recommendations: each section adds its own, quoting a gain it measured
 * beyond the noise of repeated runs (probe_sure); rendered after every section, as text and
 * --json. A fix measured lower but not so is noted as unsure, with the host's noise that hid
 * it (probe_noise). */
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "probe/probe.h"
#include "util/host.h"
#include "util/json.h"
#include "util/noise.h"
#include "util/out.h"

/* pn_hist's resolution: a bucket is at most 1/64 of its lower bound wide. */
#define HIST_RES (1.0 / 64)
/* A busy-wait is late only when its CPU is taken: a pure spin's p99 over this is the
 * host's stalls (a vCPU descheduled, steal, other tasks), not the sleep's. */
#define STALL_MIN 20000
/* Steal over this share of the CPUs' time is named as a cause of noise. */
#define STEAL_MIN 0.005

struct probe_reco *probe_reco_add(struct probe *p, const char *kind, const char *command,
                                  const char *fmt, ...)
{
	if (p->nrecos == PROBE_RECOS)
		return NULL;
	struct probe_reco *r = &p->recos[p->nrecos++];
	*r = (struct probe_reco){.kind = kind};
	snprintf(r->command, sizeof(r->command), "%s", command);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->text, sizeof(r->text), fmt, ap);
	va_end(ap);
	return r;
}

struct probe_reco *probe_reco_next(struct probe *p)
{
	return p->nrecos < PROBE_RECOS ? &p->recos[p->nrecos] : NULL;
}

void probe_reco_measured(struct probe_reco *r, const char *figure, double before, double after)
{
	if (!r)
		return;
	r->measured = true;
	r->figure = figure;
	r->before = before;
	r->after = after;
}

void probe_reco_text(const struct probe *p)
{
	fprintf(out, "\nrecommendations\n");
	if (!p->nrecos)
		fprintf(out, "  none: nothing measured here calls for a change\n");
	for (int i = 0; i < p->nrecos; i++) {
		char first[16];
		snprintf(first, sizeof(first), "  %d. ", i + 1);
		out_wrap(out, first, "     ", p->recos[i].text);
	}
}

void probe_reco_json(struct json *j, const struct probe *p)
{
	json_arr(j, "recommendations");
	for (int i = 0; i < p->nrecos; i++) {
		const struct probe_reco *r = &p->recos[i];
		json_obj(j, NULL);
		json_str(j, "kind", r->kind);
		if (*r->command)
			json_str(j, "command", r->command);
		if (r->measured) {
			json_obj(j, "effect");
			json_str(j, "figure", r->figure);
			json_num(j, "before", r->before);
			json_num(j, "after", r->after);
			json_obj_end(j);
		}
		json_str(j, "text", r->text);
		json_obj_end(j);
	}
	json_arr_end(j);
}

bool probe_fewer(double n, double e)
{
	return n <= e - 2 * sqrt(e);
}

uint64_t probe_count_above(const struct pn_hist *h, int64_t t)
{
	uint64_t n = 0;
	struct pn_hist_bucket b;
	for (int i = pn_hist_next(h, 0, &b); i >= 0; i = pn_hist_next(h, i + 1, &b))
		if (b.lo > t)
			n += b.count;
	return n;
}

static double at_hist(const void *arg, double q)
{
	return (double)pn_hist_percentile(arg, q * 100);
}

/* The p99 interval of h as noise.c widens it for repeated runs. */
static void p99_interval(const struct pn_hist *h, double *lo, double *hi)
{
	noise_interval((double)pn_hist_percentile(h, 99), 0.99, (double)pn_hist_count(h),
	               noise_z(1), HIST_RES, at_hist, h, lo, hi);
}

bool probe_sure(const struct pn_hist *fix, const struct pn_hist *base)
{
	if (probe_p99(fix) < 0 || probe_p99(base) < 0)
		return false;
	double flo, fhi, blo, bhi;
	p99_interval(fix, &flo, &fhi);
	p99_interval(base, &blo, &bhi);
	return noise_apart(blo, bhi, flo, fhi) < 0;
}

void probe_unsure(struct probe *p, const char *what)
{
	for (int i = 0; i < p->nunsure; i++)
		if (strcmp(p->unsure[i], what) == 0)
			return;
	if (p->nunsure < PROBE_RECOS)
		p->unsure[p->nunsure++] = what;
}

/* The pure spin's p99 at 1 ms in "what precision costs", or -1. */
static int64_t spin_p99(const struct probe *p)
{
	const struct frontier *f = p->frontier.f;
	if (!f || p->frontier.len_1ms < 0)
		return -1;
	for (int v = 0; v < f->c.nvar; v++)
		if (f->c.var[v].kind == FR_SPIN)
			return probe_p99(&f->cell[p->frontier.len_1ms][v].late);
	return -1;
}

double probe_steal(const struct probe *p)
{
	return host_steal(p->ticks_before, p->ticks_after);
}

size_t probe_noise(const struct probe *p, char *buf, size_t n)
{
	char a[32];
	int64_t spin = spin_p99(p);
	double steal = probe_steal(p);
	int w = 0;
	if (steal > STEAL_MIN)
		w = snprintf(buf, n, "the hypervisor stole %.1f%% of the CPUs' time", 100 * steal);
	if (spin > STALL_MIN && w >= 0 && (size_t)w < n)
		w += snprintf(buf + w, n - (size_t)w,
		              "%sthe CPU stalled in bursts: a pure spin woke %s late at p99",
		              w ? "; " : "", fmt_ns(a, sizeof(a), (double)spin));
	if (!w)
		w = snprintf(buf, n, "the p99s moved between rounds more than they differ");
	return w < 0 ? 0 : (size_t)w;
}
