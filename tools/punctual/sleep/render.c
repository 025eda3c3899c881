/* SPDX-License-Identifier: MIT */
/*
 * `punctual sleep`'s matrix as text (a table per interval, a column group per timer slack
 * value), as CSV (a row per cell) and as JSON (every cell's histograms). sleep/sleep.c parses
 * the options and runs it; measure/matrix.c measures.
 */
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <punctual/hist.h>
#include <punctual/slack.h>
#include "sleep/periodic.h"
#include "sleep/render.h"
#include "util/diag.h"
#include "util/host.h"
#include "util/json.h"
#include "util/out.h"

static const char *policy_name(const struct matrix_sched *o)
{
	return o->fifo ? "SCHED_FIFO" : "SCHED_OTHER";
}

void matrix_json(const struct sleep_matrix *x, const struct matrix_sched *o,
                 const struct host *host)
{
	struct json j;
	sleep_json_header(&j, "sleep", host);
	json_int(&j, "duration_ns", x->duration);
	json_int(&j, "elapsed_ns", x->elapsed);
	json_bool(&j, "interrupted", tool_stop != 0); /* the cells measured until a signal */
	json_str(&j, "policy", policy_name(o));
	if (o->fifo)
		json_int(&j, "priority", o->fifo);
	json_int(&j, "slice_ns", o->slice_ns);
	json_int_if(&j, "cpu", o->cpu >= 0, o->cpu);
	json_int(&j, "slack_before_ns", x->original_slack);
	/* read back after the matrix put it back: equal to slack_before_ns */
	json_int(&j, "slack_after_ns", pn_slack_get());
	json_int(&j, "dma_latency_us", o->dma_latency);
	json_arr(&j, "slacks_ns");
	for (int s = 0; s < x->nslacks; s++)
		json_int(&j, NULL, x->slacks[s]);
	json_arr_end(&j);
	json_arr(&j, "intervals_ns");
	for (int i = 0; i < x->nintervals; i++)
		json_int(&j, NULL, x->intervals[i]);
	json_arr_end(&j);
	json_uint(&j, "early_total", sleep_matrix_early(x));
	json_arr(&j, "mechanisms");
	for (int m = 0; m < x->nm; m++) {
		json_obj(&j, NULL);
		json_str(&j, "id", x->m[m]->id);
		json_str(&j, "description", x->m[m]->desc);
		json_int(&j, "granularity_ns", x->m[m]->granularity);
		json_bool(&j, "baseline", x->m[m]->baseline);
		json_bool(&j, "supported", !x->unsupported[m]);
		if (x->unsupported[m])
			json_str(&j, "unsupported_reason", x->unsupported[m]);
		json_obj_end(&j);
	}
	json_arr_end(&j);
	json_arr(&j, "cells");
	for (int i = 0; i < x->nintervals; i++)
		for (int s = 0; s < x->nslacks; s++)
			for (int m = 0; m < x->nm; m++) {
				struct sleep_cell *c = sleep_matrix_cell(x, i, s, m);
				json_obj(&j, NULL);
				json_str(&j, "mechanism", x->m[m]->id);
				json_int(&j, "slack_ns", x->slacks[s]);
				json_int(&j, "interval_ns", x->intervals[i]);
				json_bool(&j, "supported", !x->unsupported[m]);
				json_uint(&j, "samples", pn_hist_count(&c->duration));
				if (x->m[m]->baseline)
					json_none(&j, "early");
				else
					json_uint(&j, "early", c->early);
				json_uint(&j, "interrupted", c->interrupted);
				json_uint(&j, "cut", c->cut);
				json_hist(&j, "duration_ns", &c->duration,
				          JSON_HIST_MEAN | JSON_HIST_BUCKETS);
				json_hist(&j, "overshoot_ns", &c->late,
				          JSON_HIST_MEAN | JSON_HIST_BUCKETS);
				json_obj_end(&j);
			}
	json_arr_end(&j);
	json_end(&j);
}

void matrix_csv(const struct sleep_matrix *x)
{
	fprintf(out, "mechanism,slack_ns,interval_ns,supported,samples,early,interrupted,"
	             "duration_p50_ns,duration_p99_ns,duration_max_ns,overshoot_p50_ns,"
	             "overshoot_p99_ns,overshoot_max_ns\n");
	for (int i = 0; i < x->nintervals; i++)
		for (int s = 0; s < x->nslacks; s++)
			for (int m = 0; m < x->nm; m++) {
				struct sleep_cell *c = sleep_matrix_cell(x, i, s, m);
				const struct pn_hist *d = &c->duration, *v = &c->late;
				fprintf(out,
				        "%s,%lld,%lld,%d,%llu,%llu,%llu,%lld,%lld,%lld,%lld,%lld,%"
				        "lld\n",
				        x->m[m]->id, (long long)x->slacks[s],
				        (long long)x->intervals[i], !x->unsupported[m],
				        (unsigned long long)pn_hist_count(d),
				        (unsigned long long)c->early,
				        (unsigned long long)c->interrupted,
				        (long long)pn_hist_percentile(d, 50),
				        (long long)pn_hist_percentile(d, 99),
				        (long long)pn_hist_max(d),
				        (long long)pn_hist_percentile(v, 50),
				        (long long)pn_hist_percentile(v, 99),
				        (long long)pn_hist_max(v));
			}
}

static const char *gran_name(int64_t g)
{
	return g == 0 ? "-" : g == 1 ? "ns" : g == 1000 ? "us" : g == 1000000 ? "ms" : "?";
}

/* A cell's figures need this many samples to be shown (a p99 of fewer is its max, and a
 * median of a handful says little); its n is shown whatever it is. */
#define MIN_SAMPLES 100

/* "interrupted by SIGINT after 1.2 s: ..." when a signal stopped the run, else "". */
const char *matrix_interrupted(char *buf, size_t n, int64_t elapsed)
{
	if (!tool_stop)
		return "";
	snprintf(buf, n, "interrupted by %s after %.1f s: the figures measured until then",
	         tool_stop == SIGINT ? "SIGINT" : "SIGTERM", (double)elapsed / 1e9);
	return buf;
}

/* The title, then how the run went: policy, slack before, CPU, time taken. */
static void head_text(const struct sleep_matrix *x, const struct matrix_sched *o)
{
	char b[32];
	fprintf(out,
	        "punctual sleep: how late each mechanism wakes (overshoot past deadline, us)\n");
	fprintf(out, "policy %s%s%s, timer slack before: %s", policy_name(o),
	        o->fifo ? " (the kernel ignores slack for realtime threads)" : "",
	        sleep_slice_text(o->slice_ns), fmt_ns(b, sizeof(b), (double)x->original_slack));
	if (o->cpu >= 0)
		fprintf(out, ", pinned to CPU %ld", o->cpu);
	fprintf(out, ", %.1f s\n", (double)x->elapsed / 1e9);
}

/* A cell's columns: n, p50, p99, max, early returns; figures where the samples allow. */
static void cell_text(const struct sleep_mech *mech, const struct sleep_cell *c, bool with_max)
{
	const struct pn_hist *h = mech->baseline ? &c->duration : &c->late;
	uint64_t n = pn_hist_count(h);
	char early[16], p50[16], p99[16], max[16];
	if (mech->baseline)
		snprintf(early, sizeof(early), "-");
	else
		snprintf(early, sizeof(early), "%llu", (unsigned long long)c->early);
	bool enough = n >= MIN_SAMPLES;
	snprintf(p50, sizeof(p50), enough ? "%.1f" : "-", (double)pn_hist_percentile(h, 50) / 1e3);
	snprintf(p99, sizeof(p99), enough ? "%.1f" : "-", (double)pn_hist_percentile(h, 99) / 1e3);
	if (enough)
		snprintf(max, sizeof(max), " %8.1f", (double)pn_hist_max(h) / 1e3);
	else
		snprintf(max, sizeof(max), " %8s", "-");
	fprintf(out, " | %5llu %7s %7s%s %3s", (unsigned long long)n, p50, p99, with_max ? max : "",
	        early);
}

/* Interval i's table: a column group per slack value, a line per mechanism. */
static void interval_text(const struct sleep_matrix *x, int i, bool with_max)
{
	char b[32], head[48];
	snprintf(head, sizeof(head), "interval %s", fmt_ns(b, sizeof(b), (double)x->intervals[i]));
	fprintf(out, "\n%-24s", head);
	for (int s = 0; s < x->nslacks; s++) {
		char h[40];
		snprintf(h, sizeof(h), "slack %s", fmt_ns(b, sizeof(b), (double)x->slacks[s]));
		fprintf(out, " | %-*s", with_max ? 34 : 25, h);
	}
	fprintf(out, "\n%-19s %4s", "mechanism", "unit");
	for (int s = 0; s < x->nslacks; s++)
		fprintf(out, " | %5s %7s %7s%s %3s", "n", "p50", "p99", with_max ? "      max" : "",
		        "ear");
	fputc('\n', out);
	for (int m = 0; m < x->nm; m++) {
		fprintf(out, "%-19s %4s", x->m[m]->id, gran_name(x->m[m]->granularity));
		if (x->unsupported[m]) {
			fprintf(out, " | unsupported: %s\n", x->unsupported[m]);
			continue;
		}
		for (int s = 0; s < x->nslacks; s++)
			cell_text(x->m[m], sleep_matrix_cell(x, i, s, m), with_max);
		fputc('\n', out);
	}
}

/* Under the tables: the early returns, the samples cut, the legend, a signal's stop. */
static void foot_text(const struct sleep_matrix *x)
{
	uint64_t early = sleep_matrix_early(x);
	fprintf(out, "\nearly returns: %llu%s\n", (unsigned long long)early,
	        early ? "  <-- a sleep returned before its deadline: a kernel or libc bug" : "");
	uint64_t cut = sleep_matrix_cut(x);
	if (cut) {
		char line[160];
		snprintf(line, sizeof(line),
		         "cut: %llu sample%s still sleeping past --duration (a timer slack lets a "
		         "sleep last that long), not counted",
		         (unsigned long long)cut, cut == 1 ? "" : "s");
		out_wrap(out, "", "", line);
	}
	out_wrap(out, "", "",
	         "unit: the granularity of the mechanism's timeout, rounded up; syscall is a "
	         "baseline (its columns are its duration); ear: early returns; a cell's figures "
	         "need 100 samples (-: fewer; a longer --duration gives long intervals more), "
	         "and max shows where the width allows.");
	char why[128];
	if (tool_stop)
		fprintf(out, "%s\n", matrix_interrupted(why, sizeof(why), x->elapsed));
}

void matrix_text(const struct sleep_matrix *x, const struct matrix_sched *o)
{
	head_text(x, o);
	/* max where the width allows it (each slack's columns are 26 wide without it) */
	bool with_max = 24 + x->nslacks * 37 <= out_width();
	for (int i = 0; i < x->nintervals; i++)
		interval_text(x, i, with_max);
	foot_text(x);
}
