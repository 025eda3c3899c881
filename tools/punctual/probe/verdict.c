/* SPDX-License-Identifier: MIT */
/*
 * probe_verdict.c: `punctual probe`'s first lines, the answer to "what deadlines can this
 * host keep?": for each loop length of the frontier from 1 ms on, how late the kernel alone
 * wakes and how late the advised fix does (the frontier's recommendation, frontier_best),
 * with how sure the advice is. The p99 where both cells have the sleeps for one (probe_p99),
 * else the largest lateness of each, named as such. No fix where the CPU quota throttled
 * the probe.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "probe/probe.h"
#include "util/json.h"
#include "util/out.h"

#define MS 1000000LL

/* The advised fix's variant index, or -1 (none, or a quota throttled the probe). */
static int fix(const struct probe *p)
{
	return probe_throttled(p) ? -1 : p->frontier.best;
}

/* The sleeps of length l's kernel cell and of its fix's (if any), the fewer: one count, so
 * that one statistic names the line (a p99 where both show one, probe_p99's rule). */
static uint64_t sleeps(const struct probe *p, int l, int k)
{
	const struct frontier *f = p->frontier.f;
	uint64_t n = pn_hist_count(&f->cell[l][k].late);
	int best = fix(p);
	if (best >= 0 && pn_hist_count(&f->cell[l][best].late) < n)
		n = pn_hist_count(&f->cell[l][best].late);
	return n;
}

/* The cell's p99, or its largest lateness. */
static int64_t figure(const struct frontier_cell *c, bool p99)
{
	return p99 ? probe_p99(&c->late) : pn_hist_max(&c->late);
}

/* "punctual run --precise[ --budget=N%]" into buf. */
static const char *command(char *buf, size_t n, const struct frontier_variant *v)
{
	if (v->kind == FR_AUTO)
		snprintf(buf, n, "punctual run --precise");
	else
		snprintf(buf, n, "punctual run --precise --budget=%g%%", (double)v->arg / 1e4);
	return buf;
}

/* A length from 1 ms on whose cells have sleeps (an interrupted probe may leave none). */
static bool shown(const struct probe *p, int l, int k)
{
	return p->frontier.f->c.len[l] >= 1 * MS && sleeps(p, l, k) > 0;
}

void probe_verdict_text(const struct probe *p)
{
	const struct frontier *f = p->frontier.f;
	int k = f ? frontier_kernel(&f->c) : -1, best = fix(p);
	if (k < 0)
		return;
	char a[32], b[32], cmd[64], line[512], sure[96];
	snprintf(sure, sizeof(sure), " (sure: lower in %d of %d rounds, beyond the 95%% intervals)",
	         p->frontier.won, FRONTIER_ROUNDS);
	fprintf(out, "verdict: how late this host keeps a loop's deadlines (lateness p99 of\n"
	             "alternating sleeps, no load of the probe's own)\n");
	for (int l = 0; l < f->c.nlen; l++) {
		if (!shown(p, l, k))
			continue;
		const struct frontier_cell *kc = &f->cell[l][k];
		uint64_t n = sleeps(p, l, k);
		bool p99 = n >= FRONTIER_MIN_P99;
		int w = 0;
		if (!p99) /* a largest value is no figure to be sure of */
			w = snprintf(line, sizeof(line),
			             "the largest of %llu sleeps (too few for "
			             "a p99): ",
			             (unsigned long long)n);
		w += snprintf(line + w, sizeof(line) - (size_t)w, "%s with the kernel alone",
		              fmt_ns(a, sizeof(a), (double)figure(kc, p99)));
		if (best >= 0)
			snprintf(line + w, sizeof(line) - (size_t)w, "; %s with `%s`%s",
			         fmt_ns(b, sizeof(b), (double)figure(&f->cell[l][best], p99)),
			         command(cmd, sizeof(cmd), &f->c.var[best]), p99 ? sure : "");
		else if (probe_throttled(p)) /* whatever the sample count */
			snprintf(line + w, sizeof(line) - (size_t)w,
			         "; no fix that spins: the CPU quota throttled the probe (raise "
			         "it)");
		else if (p99)
			snprintf(line + w, sizeof(line) - (size_t)w,
			         "; no fix beat it in every round beyond the noise");
		char first[32];
		snprintf(first, sizeof(first),
		         "  %s loop: ", fmt_ns(a, sizeof(a), (double)f->c.len[l]));
		out_wrap(out, first, "      ", line);
	}
	fputc('\n', out);
}

void probe_verdict_json(struct json *j, const struct probe *p)
{
	const struct frontier *f = p->frontier.f;
	int k = f ? frontier_kernel(&f->c) : -1, best = fix(p);
	if (k < 0)
		return;
	char id[32], cmd[64];
	json_obj(j, "verdict");
	json_arr(j, "loops");
	for (int l = 0; l < f->c.nlen; l++) {
		if (!shown(p, l, k))
			continue;
		const struct frontier_cell *kc = &f->cell[l][k];
		uint64_t n = sleeps(p, l, k);
		bool p99 = n >= FRONTIER_MIN_P99;
		json_obj(j, NULL);
		json_int(j, "length_ns", f->c.len[l]);
		json_str(j, "statistic", p99 ? "p99" : "max");
		json_uint(j, "sleeps", n);
		json_int(j, "kernel_ns", figure(kc, p99));
		json_int_if(j, "fix_ns", best >= 0, best >= 0 ? figure(&f->cell[l][best], p99) : 0);
		json_obj_end(j);
	}
	json_arr_end(j);
	if (best >= 0) {
		json_obj(j, "fix");
		json_str(j, "variant", frontier_id(&f->c.var[best], id, sizeof(id)));
		json_str(j, "command", command(cmd, sizeof(cmd), &f->c.var[best]));
		json_int(j, "rounds_won", p->frontier.won);
		json_int(j, "rounds", FRONTIER_ROUNDS);
		json_obj_end(j);
	} else {
		json_none(j, "fix");
	}
	json_bool(j, "throttled", probe_throttled(p));
	json_obj_end(j);
}
