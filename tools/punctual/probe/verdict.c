/* SPDX-License-Identifier: MIT */
/*
 * `punctual probe`'s first lines: what deadlines this host can keep and what to do. For
 * each loop length from 1 ms on whose cells have a p99, how late the kernel alone wakes
 * and how late the advised fix does; then the recommendations' commands, and what the
 * host was too noisy to tell. No fix where the quota throttled the probe.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "probe/probe.h"
#include "util/json.h"
#include "util/out.h"

#define MS          1000000LL
#define VERDICT_CMD 160

/* The advised fix's variant index, or -1. */
static int fix(const struct probe *p)
{
	return probe_throttled(p) ? -1 : p->frontier.best;
}

/* The fewer sleeps of length l's kernel cell and its fix's: one count names the line. */
static uint64_t sleeps(const struct probe *p, int l, int k)
{
	const struct frontier *f = p->frontier.f;
	uint64_t n = pn_hist_count(&f->cell[l][k].late);
	int best = fix(p);
	if (best >= 0 && pn_hist_count(&f->cell[l][best].late) < n)
		n = pn_hist_count(&f->cell[l][best].late);
	return n;
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

/* A length from 1 ms on whose cells have a p99 each. */
static bool shown(const struct probe *p, int l, int k)
{
	return p->frontier.f->c.len[l] >= 1 * MS && sleeps(p, l, k) >= FRONTIER_MIN_P99;
}

/* The recommendations' `...` commands, each once, " -- APP" left off, into cmd: their
 * number. */
static int commands(const struct probe *p, char cmd[][VERDICT_CMD], int max)
{
	int n = 0;
	for (int i = 0; i < p->nrecos; i++) {
		const char *t = p->recos[i].text, *open, *close;
		for (; (open = strchr(t, '`')) && (close = strchr(open + 1, '`')); t = close + 1) {
			char c[VERDICT_CMD];
			int len = (int)(close - open - 1);
			if (len <= 0 || len >= VERDICT_CMD || n == max)
				continue;
			snprintf(c, sizeof(c), "%.*s", len, open + 1);
			static const char *const tails[] = {" -- APP", " APP"};
			for (int x = 0; x < 2; x++) {
				size_t cl = strlen(c), tl = strlen(tails[x]);
				if (cl > tl && strcmp(c + cl - tl, tails[x]) == 0) {
					c[cl - tl] = '\0';
					break;
				}
			}
			int seen = 0;
			for (int k = 0; k < n && !seen; k++)
				seen = strcmp(cmd[k], c) == 0;
			if (!seen)
				snprintf(cmd[n++], VERDICT_CMD, "%s", c);
		}
	}
	return n;
}

/* A loop length's line: the kernel's p99 and the fix's; "nothing lowered it" only where
 * no recommendation gives a command. */
static void loop_text(const struct probe *p, int l, int k, int ncmds)
{
	const struct frontier *f = p->frontier.f;
	int best = fix(p);
	char a[32], b[32], cmd[64], line[512], first[32];
	int w = snprintf(line, sizeof(line), "%s with the kernel alone",
	                 fmt_ns(a, sizeof(a), (double)probe_p99(&f->cell[l][k].late)));
	char *rest = line + w;
	size_t left = sizeof(line) - (size_t)w;
	if (best >= 0)
		snprintf(rest, left,
		         "; %s with `%s` (sure: lower in %d of %d rounds, beyond the noise of "
		         "repeated runs)",
		         fmt_ns(b, sizeof(b), (double)probe_p99(&f->cell[l][best].late)),
		         command(cmd, sizeof(cmd), &f->c.var[best]), p->frontier.won,
		         FRONTIER_ROUNDS);
	else if (probe_throttled(p))
		snprintf(rest, left,
		         "; no fix that spins: the CPU quota throttled the probe (raise it)");
	else if (!ncmds && !p->nunsure)
		snprintf(rest, left, "; nothing lowered it beyond the noise of repeated runs");
	snprintf(first, sizeof(first), "  %s loop: ", fmt_ns(a, sizeof(a), (double)f->c.len[l]));
	out_wrap(out, first, "      ", line);
}

/* Every command of the recommendations, and what the host was too noisy to tell. */
static void todo_text(const struct probe *p, char cmds[][VERDICT_CMD], int ncmds)
{
	char line[1024], why[256];
	int w = 0;
	if (!ncmds)
		w = snprintf(line, sizeof(line), "nothing measured here calls for a change");
	for (int i = 0; i < ncmds && w >= 0 && (size_t)w < sizeof(line); i++)
		w += snprintf(line + w, sizeof(line) - (size_t)w, "%s`%s`", i ? ", " : "", cmds[i]);
	if (ncmds && w >= 0 && (size_t)w < sizeof(line))
		snprintf(line + w, sizeof(line) - (size_t)w, " (the recommendations say why)");
	out_wrap(out, "  to do: ", "      ", line);
	if (!p->nunsure)
		return;
	w = snprintf(line, sizeof(line), "whether ");
	for (int i = 0; i < p->nunsure && w >= 0 && (size_t)w < sizeof(line); i++)
		w += snprintf(line + w, sizeof(line) - (size_t)w, "%s%s", i ? "; whether " : "",
		              p->unsure[i]);
	probe_noise(p, why, sizeof(why));
	if (w >= 0 && (size_t)w < sizeof(line))
		snprintf(line + w, sizeof(line) - (size_t)w, ": %s", why);
	out_wrap(out, "  too noisy to tell ", "      ", line);
}

void probe_verdict_text(const struct probe *p)
{
	const struct frontier *f = p->frontier.f;
	int k = f ? frontier_kernel(&f->c) : -1;
	if (k < 0)
		return;
	char cmds[PROBE_RECOS * 2][VERDICT_CMD];
	int ncmds = commands(p, cmds, PROBE_RECOS * 2);
	fprintf(out, "verdict: how late this host keeps a loop's deadlines (lateness p99 of\n"
	             "alternating sleeps, no load of the probe's own), and what to do\n");
	for (int l = 0; l < f->c.nlen; l++)
		if (shown(p, l, k))
			loop_text(p, l, k, ncmds);
	todo_text(p, cmds, ncmds);
	fputc('\n', out);
}

void probe_verdict_json(struct json *j, const struct probe *p)
{
	const struct frontier *f = p->frontier.f;
	int k = f ? frontier_kernel(&f->c) : -1, best = fix(p);
	if (k < 0)
		return;
	char id[32], cmd[64], cmds[PROBE_RECOS * 2][VERDICT_CMD], why[256];
	json_obj(j, "verdict");
	json_arr(j, "loops");
	for (int l = 0; l < f->c.nlen; l++) {
		if (!shown(p, l, k))
			continue;
		json_obj(j, NULL);
		json_int(j, "length_ns", f->c.len[l]);
		json_str(j, "statistic", "p99");
		json_uint(j, "sleeps", sleeps(p, l, k));
		json_int(j, "kernel_ns", probe_p99(&f->cell[l][k].late));
		json_int_if(j, "fix_ns", best >= 0,
		            best >= 0 ? probe_p99(&f->cell[l][best].late) : 0);
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
	int ncmds = commands(p, cmds, PROBE_RECOS * 2);
	json_arr(j, "commands");
	for (int i = 0; i < ncmds; i++)
		json_str(j, NULL, cmds[i]);
	json_arr_end(j);
	json_arr(j, "unsure");
	for (int i = 0; i < p->nunsure; i++)
		json_str(j, NULL, p->unsure[i]);
	json_arr_end(j);
	if (p->nunsure) {
		probe_noise(p, why, sizeof(why));
		json_str(j, "noise", why);
	} else {
		json_none(j, "noise");
	}
	json_num(j, "steal", probe_steal(p));
	json_obj_end(j);
}
