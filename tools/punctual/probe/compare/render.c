/* SPDX-License-Identifier: MIT */
/* `punctual probe --compare` as a table for people and as JSON. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/out.h"
#include "util/encode.h"
#include "util/json.h"
#include "probe/compare/compare.h"

static const char *const rule_name[] = {"quantile", "range",   "count",    "factor",
                                        "exact",    "context", "parameter"};
static const char *const verdict_name[] = {"same", "better", "worse", "context", "varies"};

/* The columns of the table: a value, the ratio of two, the verdict ("better"), and what
 * they take with their spaces; the name gets the rest of the line (COLUMNS, else 80), and
 * a longer name has a line of its own above its figures. */
#define VALUE_WIDTH   10
#define RATIO_WIDTH   7 /* "%.1g" of any double: "-3e+244" */
#define VERDICT_WIDTH 7
#define FIGURES_WIDTH (1 + VALUE_WIDTH + 1 + VALUE_WIDTH + 1 + RATIO_WIDTH + 2 + VERDICT_WIDTH)
#define NAME_MIN      20

static int name_width(void)
{
	const char *c = getenv("COLUMNS");
	long cols = c && *c ? strtol(c, NULL, 10) : 0;
	if (cols < NAME_MIN + 2 + FIGURES_WIDTH || cols > 1000)
		cols = 80;
	return (int)cols - 2 - FIGURES_WIDTH;
}

/* v with up to digits significant digits, as many as fit width: "%.1g" is 7 characters
 * at most ("-1e+308"), so an absurd value in a report never shifts the columns. */
static void fit(char *b, size_t n, double v, int digits, int width)
{
	for (int p = digits; p > 1; p--)
		if (snprintf(b, n, "%.*g", p, v) <= width)
			return;
	snprintf(b, n, "%.1g", v);
}

const char *compare_value(char *b, size_t n, const struct fig *f)
{
	if (isnan(f->v)) {
		snprintf(b, n, "unsupported");
	} else if (!f->time) {
		fit(b, n, f->v, 6, VALUE_WIDTH);
	} else if (strlen(fmt_ns(b, n, f->v)) > VALUE_WIDTH) { /* an absurd one: in s */
		fit(b, n, f->v / 1e9, 3, VALUE_WIDTH - 2);
		strncat(b, " s", n - strlen(b) - 1);
	}
	return b;
}

/* A figure's name for the table: without the "_ns" its value's unit says. */
static void display(char *b, size_t n, const char *name)
{
	size_t k = 0;
	for (const char *p = name; *p && k + 1 < n; p++) {
		if (strncmp(p, "_ns", 3) == 0 && (p[3] == ' ' || p[3] == '\0')) {
			p += 2;
			continue;
		}
		b[k++] = *p;
	}
	b[k] = '\0';
}

/* A ratio for people: 3 significant digits, "?" when unbounded. */
static const char *ratio(char *b, size_t n, double v)
{
	if (!isfinite(v))
		snprintf(b, n, "?");
	else
		fit(b, n, v, 3, RATIO_WIDTH);
	return b;
}

/* The warning when the two hosts' background loads differed, or the note that a report
 * does not record it. */
static void load_text(const struct load *l)
{
	if (l->before < 0 || l->after < 0) {
		fprintf(out,
		        "note: %s records no background load (why_late.others), so a\n"
		        "  difference in it cannot be told from one in the host\n",
		        l->before < 0 && l->after < 0 ? "neither report"
		        : l->before < 0               ? "BEFORE"
		                                      : "AFTER");
	} else if (l->differs) {
		fprintf(out,
		        "warning: the background load differed: other processes used %.2f CPUs\n"
		        "  beside BEFORE's 1 ms loop, %.2f beside AFTER's; lateness may differ\n"
		        "  for that alone (compare reports taken under the same load)\n",
		        l->before, l->after);
	}
}

/* Every string of a report (or a file's name) goes through text_safe: a report is input. */
#define SAFE(b, s) text_safe(b, sizeof(b), s)

/* The two files, then the facts that differ (kernel, clocksource, slack, CPUs). */
static void facts_text(const struct report *a, const struct report *b, const struct comparison *c)
{
	char s1[1024], s2[1024], s3[1024];
	fprintf(out, "punctual probe --compare\n  before: %s\n  after:  %s\n\n", SAFE(s1, a->file),
	        SAFE(s2, b->file));
	if (c->nf) {
		fprintf(out, "facts that differ\n");
		for (size_t i = 0; i < c->nf; i++)
			fprintf(out, "  %-24s %s -> %s\n", SAFE(s1, c->fa[i].name),
			        SAFE(s2, c->fa[i].before), SAFE(s3, c->fa[i].after));
	} else {
		fprintf(out, "facts: the same system (kernel, clocksource, slack, CPUs)\n");
	}
}

/* The table: a head per section, a line per figure (a name longer than w on a line of its
 * own), then how many rows it left out as nothing to read. */
static void rows_text(const struct comparison *c, int w)
{
	char s1[1024];
	const char *sect = "";
	size_t zeros = 0, equal = 0;
	for (size_t i = 0; i < c->nr; i++) {
		const struct row *r = &c->rows[i];
		if (r->a->fold && r->a->v == 0 && r->b->v == 0) {
			zeros++; /* a cell's early returns: 0 in both, the invariant */
			continue;
		}
		if (r->v == V_CONTEXT && r->a->v == r->b->v) {
			equal++; /* a sample count both runs took: nothing to read */
			continue;
		}
		if (strcmp(sect, r->a->section) != 0) {
			sect = r->a->section;
			fprintf(out, "\n%-*.*s %*s %*s %*s  %s\n", w + 1, w + 1, SAFE(s1, sect),
			        VALUE_WIDTH, "before", VALUE_WIDTH, "after", RATIO_WIDTH, "ratio",
			        "verdict");
		}
		char name[192];
		display(name, sizeof(name), SAFE(s1, r->a->name));
		char x[48], y[48], q[24] = "-";
		if (r->a->v != 0)
			fit(q, sizeof(q), r->b->v / r->a->v, 3, RATIO_WIDTH);
		if ((int)strlen(name) > w) { /* its own line, the figures under it */
			fprintf(out, "  %s\n", name);
			name[0] = '\0';
		}
		fprintf(out, "  %-*s %*s %*s %*s  %s\n", w, name, VALUE_WIDTH,
		        compare_value(x, sizeof(x), r->a), VALUE_WIDTH,
		        compare_value(y, sizeof(y), r->b), RATIO_WIDTH, q, verdict_name[r->v]);
	}
	if (zeros)
		fprintf(out, "  (and %zu early-return counts, 0 in both)\n", zeros);
	if (equal)
		fprintf(out, "  (and %zu context figures equal in both: sample counts, settings)\n",
		        equal);
}

/* The figures not compared, each with its reason. */
static void skipped_text(const struct comparison *c, int w)
{
	if (!c->ns)
		return;
	char s1[1024], s2[1024], s3[1024];
	fprintf(out, "\nskipped (%zu figures not in both reports or not comparable)\n", c->ns);
	for (size_t i = 0; i < c->ns; i++) {
		SAFE(s1, c->sk[i].section);
		SAFE(s2, c->sk[i].name);
		SAFE(s3, c->sk[i].why);
		/* the reason under the name when the line would pass the text width */
		bool under =
		        (int)(strlen(s1) + strlen(s2) + strlen(s3)) + 6 > w + 2 + FIGURES_WIDTH;
		fprintf(out, "  %s %s:%s%s\n", s1, s2, under ? "\n    " : " ", s3);
	}
}
#undef SAFE

/* The headline figures: AFTER/BEFORE, and the range both reports' noise allows. */
static void headlines_text(const struct comparison *c)
{
	if (c->nh)
		fprintf(out,
		        "\nheadline: AFTER/BEFORE, and the range both reports' noise allows\n");
	for (size_t i = 0; i < c->nh; i++) {
		const struct headline *h = &c->head[i];
		char x[48], y[48], r0[24], r1[24], r2[24], range[64];
		if (h->row->v == V_VARIES)
			snprintf(range, sizeof(range), "(adaptive: varies)");
		else if (!isfinite(h->hi))
			snprintf(range, sizeof(range), "(too few samples)");
		else
			snprintf(range, sizeof(range), "(%s to %s)", ratio(r1, sizeof(r1), h->lo),
			         ratio(r2, sizeof(r2), h->hi));
		fprintf(out, "  %-23s %9s -> %-9s %6s x %s\n", h->label,
		        compare_value(x, sizeof(x), h->row->a),
		        compare_value(y, sizeof(y), h->row->b), ratio(r0, sizeof(r0), h->ratio),
		        range);
	}
}

void compare_text(const struct report *a, const struct report *b, const struct comparison *c)
{
	int w = name_width();
	facts_text(a, b, c);
	load_text(&c->load);
	rows_text(c, w);
	skipped_text(c, w);
	headlines_text(c);
	fprintf(out,
	        "\n%d better, %d worse, %d the same; %d context, %d of adaptive waits (of\n"
	        "%zu figures both reports have)\n",
	        c->count[V_BETTER], c->count[V_WORSE], c->count[V_SAME], c->count[V_CONTEXT],
	        c->count[V_VARIES], c->nr);
}

static void side(struct json *j, const char *key, const struct report *r)
{
	json_obj(j, key);
	json_str(j, "file", r->file);
	json_str(j, "version", r->version);
	json_obj_end(j);
}

/* The facts that differ, each with its two values. */
static void facts_json(struct json *j, const struct comparison *c)
{
	json_arr(j, "facts");
	for (size_t i = 0; i < c->nf; i++) {
		json_obj(j, NULL);
		json_str(j, "name", c->fa[i].name);
		json_str(j, "before", c->fa[i].before);
		json_str(j, "after", c->fa[i].after);
		json_obj_end(j);
	}
	json_arr_end(j);
}

/* Both hosts' background load in CPUs (null where a report does not record it). */
static void load_json(struct json *j, const struct load *l)
{
	json_obj(j, "load");
	if (l->before >= 0)
		json_num(j, "before_cpus", l->before);
	else
		json_none(j, "before_cpus");
	if (l->after >= 0)
		json_num(j, "after_cpus", l->after);
	else
		json_none(j, "after_cpus");
	json_bool(j, "differs", l->differs);
	json_obj_end(j);
}

/* Every figure both reports have: values, ratio, rule, intervals and verdict. */
static void figures_json(struct json *j, const struct comparison *c)
{
	json_arr(j, "figures");
	for (size_t i = 0; i < c->nr; i++) {
		const struct row *r = &c->rows[i];
		json_obj(j, NULL);
		json_str(j, "section", r->a->section);
		json_str(j, "figure", r->a->name);
		json_str(j, "unit", r->a->time ? "ns" : "");
		json_num(j, "before", r->a->v);
		json_num(j, "after", r->b->v);
		if (r->a->v != 0)
			json_num(j, "ratio", r->b->v / r->a->v);
		else
			json_none(j, "ratio");
		json_str(j, "rule", rule_name[r->a->rule]);
		if (r->a->rule == R_QUANTILE || r->a->rule == R_RANGE) {
			/* an unbounded end (a p99 at a flat object's highest quantile) is null */
			json_arr(j, "before_interval");
			json_num(j, NULL, r->a->lo);
			json_num(j, NULL, r->a->hi);
			json_arr_end(j);
			json_arr(j, "after_interval");
			json_num(j, NULL, r->b->lo);
			json_num(j, NULL, r->b->hi);
			json_arr_end(j);
		}
		json_str(j, "verdict", verdict_name[r->v]);
		json_obj_end(j);
	}
	json_arr_end(j);
}

/* The figures not compared, each with its reason. */
static void skipped_json(struct json *j, const struct comparison *c)
{
	json_arr(j, "skipped");
	for (size_t i = 0; i < c->ns; i++) {
		json_obj(j, NULL);
		json_str(j, "section", c->sk[i].section);
		json_str(j, "figure", c->sk[i].name);
		json_str(j, "reason", c->sk[i].why);
		json_obj_end(j);
	}
	json_arr_end(j);
}

/* The headlines: their ratios and the interval both reports' noise allows. */
static void headlines_json(struct json *j, const struct comparison *c)
{
	json_arr(j, "headlines");
	for (size_t i = 0; i < c->nh; i++) {
		const struct headline *h = &c->head[i];
		json_obj(j, NULL);
		json_str(j, "name", h->label);
		json_str(j, "section", h->row->a->section);
		json_str(j, "figure", h->row->a->name);
		json_num(j, "ratio", h->ratio);
		json_arr(j, "ratio_interval");
		json_num(j, NULL, h->lo);
		json_num(j, NULL, h->hi);
		json_arr_end(j);
		json_str(j, "verdict", verdict_name[h->row->v]);
		json_obj_end(j);
	}
	json_arr_end(j);
}

void compare_json(const struct report *a, const struct report *b, const struct comparison *c)
{
	struct json j;
	json_report_begin(&j, out, "probe --compare");
	side(&j, "before", a);
	side(&j, "after", b);
	facts_json(&j, c);
	load_json(&j, &c->load);
	figures_json(&j, c);
	skipped_json(&j, c);
	headlines_json(&j, c);
	json_obj(&j, "summary");
	json_int(&j, "better", c->count[V_BETTER]);
	json_int(&j, "worse", c->count[V_WORSE]);
	json_int(&j, "same", c->count[V_SAME]);
	json_int(&j, "context", c->count[V_CONTEXT]);
	json_int(&j, "varies", c->count[V_VARIES]);
	json_obj_end(&j);
	json_end(&j);
}
