/* SPDX-License-Identifier: MIT */
/*
 * `punctual probe --compare`'s join: two reports' figures matched by name in O(n log n),
 * a verdict for each pair under the noise rules, and the figures skipped with why.
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/diag.h"
#include "probe/compare/compare.h"
#include "util/noise.h"

/*
 * The between-run bounds: one run's own samples understate what two runs of one host
 * differ by. Each is the smallest round figure that at most 1 in 100 rows of its rule
 * exceeded between back-to-back probes of a busy host (docs/DESIGN.md, "--compare's noise
 * rule").
 */
/* A figure without a spread of its own (a share, a CPU percentage). */
#define FACTOR 3.0
/* A range's smallest change. */
#define MIN_EFFECT 1.5
/* Standard deviations of a count's Poisson noise: late events come in bursts. */
#define COUNT_Z 6.0

/* ---- verdicts --------------------------------------------------------------------- */

/*
 * The noise rules (punctual(1), --compare): a verdict needs the difference to exceed
 * both reports' noise. Quantiles: the intervals do not overlap (one the report cannot
 * support is skipped). Ranges: apart by MIN_EFFECT. Counts of events: COUNT_Z. Exact
 * counts: any difference. Other figures: FACTOR. A figure without a direction is context,
 * an adaptive wait's "varies". Lower is better unless the row says higher.
 */
static enum verdict verdict(const struct fig *a, const struct fig *b)
{
	bool lower, higher;
	if (a->rule != R_CONTEXT && (a->adaptive || b->adaptive))
		return V_VARIES;
	switch (a->rule) {
	case R_QUANTILE:
		lower = noise_apart(a->lo, a->hi, b->lo, b->hi) < 0;
		higher = noise_apart(a->lo, a->hi, b->lo, b->hi) > 0;
		break;
	case R_RANGE: /* a median against the other's cheapest round */
		lower = b->hi * MIN_EFFECT < a->lo;
		higher = b->lo > a->hi * MIN_EFFECT;
		break;
	case R_COUNT: /* two Poisson counts: their difference's sd is sqrt(a + b) */
		lower = a->v - b->v > COUNT_Z * sqrt(a->v + b->v);
		higher = b->v - a->v > COUNT_Z * sqrt(a->v + b->v);
		break;
	case R_EXACT:
		lower = b->v < a->v;
		higher = b->v > a->v;
		break;
	case R_CONTEXT:
		return V_CONTEXT;
	default:
		lower = b->v * FACTOR < a->v;
		higher = b->v > a->v * FACTOR;
		break;
	}
	if (!lower && !higher)
		return V_SAME;
	return (lower ? -1 : +1) == a->dir ? V_BETTER : V_WORSE;
}

/* ---- finding figures by name -------------------------------------------------------- */

/*
 * Both reports' figures are sorted once by (section, name, position): a figure is found
 * by bisection, and the figures under an object are a run of that order, so a join costs
 * O(n log n) where a scan per figure would take hours near MAX_INPUT.
 */
static int by_name(const void *x, const void *y)
{
	const struct fig *a = *(const struct fig *const *)x, *b = *(const struct fig *const *)y;
	int c = strcmp(a->section, b->section);
	if (!c)
		c = strcmp(a->name, b->name);
	/* equal names keep report order: find() returns the first, as a scan would */
	return c ? c : (a > b) - (a < b);
}

static int by_position(const void *x, const void *y)
{
	const struct fig *a = *(const struct fig *const *)x, *b = *(const struct fig *const *)y;
	return (a > b) - (a < b);
}

static void index_figures(struct report *r)
{
	r->sorted = malloc((r->n + 1) * sizeof(*r->sorted));
	r->unused = malloc((r->n + 1) * sizeof(*r->unused));
	if (!r->sorted || !r->unused)
		die(1, "out of memory");
	for (size_t i = 0; i < r->n; i++)
		r->sorted[i] = &r->f[i];
	for (size_t i = 0; i <= r->n; i++)
		r->unused[i] = i;
	qsort(r->sorted, r->n, sizeof(*r->sorted), by_name);
}

/* The first position in r->sorted not below (section, name); with name NULL, the first
 * whose section is above section. */
static size_t bound(const struct report *r, const char *section, const char *name)
{
	size_t lo = 0, hi = r->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct fig *f = r->sorted[mid];
		int c = strcmp(f->section, section);
		bool below = name ? c < 0 || (c == 0 && strcmp(f->name, name) < 0) : c <= 0;
		if (below)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* r's first figure (in report order) named as f is, or NULL. */
static struct fig *find(const struct report *r, const struct fig *f)
{
	size_t i = bound(r, f->section, f->name);
	if (i == r->n || strcmp(r->sorted[i]->section, f->section) != 0 ||
	    strcmp(r->sorted[i]->name, f->name) != 0)
		return NULL;
	return r->sorted[i];
}

/* The first position >= i in r->sorted not taken yet: r->unused links each taken
 * position onwards, shortened as walked, so taking every figure costs about O(n). */
static size_t next_unused(struct report *r, size_t i)
{
	size_t end = i;
	while (r->unused[end] != end)
		end = r->unused[end];
	while (i != end) {
		size_t k = r->unused[i];
		r->unused[i] = end;
		i = k;
	}
	return end;
}

/* Appends to got the figures of r->sorted[lo, hi) not taken yet, and takes them. */
static void take(struct report *r, size_t lo, size_t hi, struct fig **got, size_t *n)
{
	for (size_t i = next_unused(r, lo); i < hi; i = next_unused(r, i + 1)) {
		got[(*n)++] = r->sorted[i];
		r->unused[i] = i + 1;
	}
}

/* r's figures in the object (section, parent) or below it, not taken yet, in report
 * order; got has room for r->n. */
static size_t figures_under(struct report *r, const char *section, const char *parent,
                            struct fig **got)
{
	size_t n = 0;
	if (!*parent) {
		take(r, bound(r, section, ""), bound(r, section, NULL), got, &n);
	} else {
		/* the name itself ("" < "\x01"), then "parent ..." (' ' + 1 == '!') */
		char key[FIG_NAME_MAX + 2];
		size_t len = strlen(parent);
		snprintf(key, sizeof(key), "%s\x01", parent);
		take(r, bound(r, section, parent), bound(r, section, key), got, &n);
		key[len] = ' ';
		size_t lo = bound(r, section, key);
		key[len] = '!';
		take(r, lo, bound(r, section, key), got, &n);
	}
	qsort(got, n, sizeof(*got), by_position);
	return n;
}

/* Skips the figures under (section, parent) in both reports, each once. */
static void skip_under(struct report *a, struct report *b, const char *section, const char *parent,
                       struct skip *sk, size_t *ns, const char *why, struct fig **got)
{
	struct report *rs[2] = {a, b};
	for (int k = 0; k < 2; k++) {
		size_t n = figures_under(rs[k], section, parent, got);
		for (size_t i = 0; i < n; i++) {
			struct fig *f = got[i];
			if (f->used)
				continue;
			f->used = true;
			if (f->rule == R_PARAM || (k == 1 && find(a, f)))
				continue;
			sk[(*ns)++] =
			        (struct skip){.name = f->name, .section = f->section, .why = why};
		}
	}
}

/* Parameters first: an object whose run differs, or that one report could not run, is
 * skipped whole. */
static void parameters(struct report *a, struct report *b, struct skip *sk, size_t *ns)
{
	struct report *rs[2] = {a, b};
	struct fig **got = malloc(((a->n > b->n ? a->n : b->n) + 1) * sizeof(*got));
	if (!got)
		die(1, "out of memory");
	for (int k = 0; k < 2; k++)
		for (size_t i = 0; i < rs[k]->n; i++) {
			const struct fig *p = &rs[k]->f[i], *q = find(rs[!k], p);
			if (p->rule != R_PARAM)
				continue;
			char x[48], y[48];
			if (isnan(p->v)) {
				const char *why = compare_str(a, "unsupported in %s", rs[k]->file);
				skip_under(a, b, p->section, p->name, sk, ns, why, got);
			} else if (q && !isnan(q->v) && q->v != p->v && k == 0) {
				const char *why =
				        compare_str(a, "different runs: %s %s -> %s", p->name,
				                    compare_value(x, sizeof(x), p),
				                    compare_value(y, sizeof(y), q));
				skip_under(a, b, p->section, p->parent, sk, ns, why, got);
			}
		}
	free(got);
}

size_t compare_join(struct report *a, struct report *b, struct row *rows, struct skip *sk,
                    size_t *ns, int count[5])
{
	size_t nr = 0;
	index_figures(a);
	index_figures(b);
	parameters(a, b, sk, ns);
	const char *only_a = compare_str(a, "only in %s", a->file);
	const char *only_b = compare_str(a, "only in %s", b->file);
	for (size_t i = 0; i < a->n; i++) {
		struct fig *p = &a->f[i];
		if (p->used || p->rule == R_PARAM)
			continue;
		struct fig *q = find(b, p);
		if (!q || q->used) {
			sk[(*ns)++] = (struct skip){
			        .name = p->name, .section = p->section, .why = only_a};
			continue;
		}
		p->used = q->used = true;
		if (p->unsupported || q->unsupported) {
			sk[(*ns)++] = (struct skip){.name = p->name,
			                            .section = p->section,
			                            .why = p->unsupported ? p->unsupported
			                                                  : q->unsupported};
			continue;
		}
		rows[nr] = (struct row){p, q, verdict(p, q)};
		count[rows[nr++].v]++;
	}
	for (size_t i = 0; i < b->n; i++) {
		struct fig *q = &b->f[i];
		if (q->used || q->rule == R_PARAM || find(a, q))
			continue;
		sk[(*ns)++] = (struct skip){.name = q->name, .section = q->section, .why = only_b};
	}
	struct report *rs[2] = {a, b};
	for (int k = 0; k < 2; k++) {
		free(rs[k]->sorted);
		free(rs[k]->unused);
		rs[k]->sorted = NULL;
		rs[k]->unused = NULL;
	}
	return nr;
}

/* ---- headlines -------------------------------------------------------------------- */

/* The figures a summary quotes: the 1 ms loop's p99, the default precise wait's p99 at
 * 1 ms, a clock read's cost. */
static const struct {
	const char *label, *section, *name;
} heads[COMPARE_HEADLINES] = {
        {"1 ms loop, p99 lateness", "why_late", "p99_ns"},
        {"precise wait 1 ms, p99", "frontier", "1 ms default auto p99_ns"},
        {"clock read (MONOTONIC)", "clocks", "libc:CLOCK_MONOTONIC ns_per_read"},
};

size_t compare_headlines(const struct row *rows, size_t nr, struct headline *h)
{
	size_t n = 0;
	for (size_t k = 0; k < COMPARE_HEADLINES; k++)
		for (size_t i = 0; i < nr; i++) {
			const struct fig *a = rows[i].a, *b = rows[i].b;
			if (strcmp(a->section, heads[k].section) != 0 ||
			    strcmp(a->name, heads[k].name) != 0 || a->v <= 0 ||
			    (a->rule != R_QUANTILE && a->rule != R_RANGE))
				continue;
			h[n++] = (struct headline){.label = heads[k].label,
			                           .row = &rows[i],
			                           .ratio = b->v / a->v,
			                           .lo = a->hi > 0 ? b->lo / a->hi : 0,
			                           .hi = a->lo > 0 ? b->hi / a->lo : INFINITY};
			break;
		}
	return n;
}
