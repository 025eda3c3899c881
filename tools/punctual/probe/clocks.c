/* SPDX-License-Identifier: MIT */
/* `punctual probe`'s section "clocks": what each clock source costs per read
 * (measure/clocks.c), the counter pn_cycles uses, and the advice when clock_gettime is a
 * system call here. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probe/probe.h"
#include "render/figures.h"
#include "util/diag.h"
#include "util/json.h"
#include "util/out.h"
#include "util/prom.h"

static void clocks_measure(struct probe *p)
{
	p->nclocks = clock_sources_count();
	p->clocks = calloc((size_t)p->nclocks, sizeof(*p->clocks));
	if (!p->clocks)
		die(1, "out of memory");
	if (clock_measure_all(p->clocks, p->quick ? 200000000LL : 1000000000LL) < 0)
		die(1, "out of memory");
	pn_cycles_info(&p->cycles);
}

int probe_clock(const struct probe *p, const char *id)
{
	for (int i = 0; i < p->nclocks; i++)
		if (strcmp(p->clocks[i].id, id) == 0)
			return i;
	return -1;
}

static void clocks_recommend(struct probe *p)
{
	char a[32], b[32];
	/* clocks: system calls where the vDSO should serve */
	int mono = probe_clock(p, "libc:CLOCK_MONOTONIC"), cyc = probe_clock(p, "pn_cycles");
	if (mono >= 0 && cyc >= 0 && strcmp(p->clocks[mono].path, "syscall") == 0)
		probe_reco_add(
		        p, "clock", "punctual clock --clocksources",
		        "clock_gettime is a system call here (%s per read, clocksource %s): for "
		        "timestamps use pn_cycles (%s, measured), or a clocksource with a vDSO "
		        "mode "
		        "(`punctual clock --clocksources` measures each).",
		        fmt_ns(a, sizeof(a), p->clocks[mono].cost_median), p->host.clocksource,
		        fmt_ns(b, sizeof(b), p->clocks[cyc].cost_median));
}

/* The clock rows the short table shows, in this order. */
static const char *const short_clocks[] = {
        "pn_now",
        "libc:CLOCK_MONOTONIC",
        "syscall:CLOCK_MONOTONIC",
        "libc:CLOCK_MONOTONIC_COARSE",
        "pn_now_coarse",
        "libc:CLOCK_REALTIME",
        "gettimeofday",
        "libc:CLOCK_THREAD_CPUTIME_ID",
        "rdtsc",
        "pn_cycles",
        "cntvct",
};
#define N_SHORT (int)(sizeof(short_clocks) / sizeof(short_clocks[0]))

static void clocks_text(const struct probe *p)
{
	fprintf(out, "\nclocks: the cost of a read (`punctual clock` measures every source)\n");
	clock_table_text(p->clocks, p->nclocks, short_clocks, N_SHORT, false,
	                 "`punctual clock --wide` shows all");
	fprintf(out, "pn_cycles: %s at %.3f MHz\n", p->cycles.name, p->cycles.hz / 1e6);
}

static void clocks_json(struct json *j, const struct probe *p)
{
	json_obj(j, "clocks");
	json_str(j, "cycles_source", p->cycles.name);
	json_num(j, "cycles_hz", p->cycles.hz);
	json_arr(j, "sources"); /* clock --json's shape (render/figures.c) */
	for (int i = 0; i < p->nclocks; i++)
		clock_source_json(j, &p->clocks[i]);
	json_arr_end(j);
	json_obj_end(j);
}

static void clocks_prom(FILE *f, const struct probe *p)
{
	prom_help(f, "punctual_clock_read_seconds", "gauge", "Median cost of one clock read.");
	for (int i = 0; i < p->nclocks; i++) {
		fprintf(f, "punctual_clock_read_seconds{source=\"");
		prom_label(f, p->clocks[i].id);
		fprintf(f, "\",path=\"%s\"} %.6g\n", p->clocks[i].path,
		        p->clocks[i].cost_median / 1e9);
	}
}

static void clocks_done(struct probe *p)
{
	free(p->clocks);
	p->clocks = NULL;
}

const struct probe_section probe_clocks = {.name = "clocks",
                                           .measure = clocks_measure,
                                           .recommend = clocks_recommend,
                                           .text = clocks_text,
                                           .json = clocks_json,
                                           .prom = clocks_prom,
                                           .done = clocks_done};
