/* SPDX-License-Identifier: MIT */
/* `punctual probe`'s section "timers": the timer wheel's coalescing in real time, without
 * and with a precision window. A demonstration of the library, not a fact of the host: no
 * recommendation. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "measure/timers.h"
#include "render/figures.h"
#include "probe/probe.h"
#include "util/diag.h"
#include "util/json.h"
#include "util/out.h"
#include "util/progress.h"
#include "util/prom.h"

/* The workload of `punctual timers`, one-shot, without and with a window. */
static void timers_measure(struct probe *p)
{
	struct probe_timers *tm = &p->timers;
	*tm = (struct probe_timers){.run = true,
	                            .timers = p->quick ? 100 : 300,
	                            .min_delay = 1000000,
	                            .max_delay = p->quick ? 20000000 : 60000000,
	                            .percent = 10};
	struct timers_config c = {.count = tm->timers,
	                          .dist = TIMERS_UNIFORM,
	                          .a = tm->min_delay,
	                          .b = tm->max_delay,
	                          .percent = 0,
	                          .duration = 60 * 1000000000LL, /* a limit, never reached */
	                          .seed = 0x5eed};
	struct timers_result *r = malloc(sizeof(*r));
	if (!r)
		die(1, "out of memory");
	c.stop = &tool_stop;
	progress("probe: timers, no precision window");
	int e = timers_run(&c, r);
	tm->wakeups_exact = r->wakeups;
	tm->early = r->early;
	if (e == 0) {
		progress("probe: timers, precision %d%% of the delay", tm->percent);
		c.percent = tm->percent;
		e = timers_run(&c, r);
	}
	if (e == -ENOMEM)
		die(1, "out of memory");
	if (e < 0)
		die(1, "the timer wheel failed: %s", pn_strerror(e));
	tm->wakeups_window = r->wakeups;
	tm->optimum_window = r->optimum;
	tm->past_window = r->past_window;
	tm->early += r->early;
	tm->late_p99 = pn_hist_percentile(&r->late, 99);
	tm->config = c;
	tm->result = r; /* the coalesced run, as timers --json writes one */
}

static void timers_text(const struct probe *p)
{
	const struct probe_timers *t = &p->timers;
	if (!t->run)
		return;
	char a[32], b[32];
	fprintf(out, "\ntimers: %d one-shot timers, delays %s to %s, on a pn_wheel in real time\n",
	        t->timers, fmt_ns(a, sizeof(a), (double)t->min_delay),
	        fmt_ns(b, sizeof(b), (double)t->max_delay));
	fprintf(out, "  wakeups without a precision window   %llu\n",
	        (unsigned long long)t->wakeups_exact);
	fprintf(out, "  wakeups with %d%% of the delay        %llu (offline optimum %llu)\n",
	        t->percent, (unsigned long long)t->wakeups_window,
	        (unsigned long long)t->optimum_window);
	/* a wakeup past a window's end serves timers the optimum wakes for apart */
	if (t->past_window) {
		char line[160];
		snprintf(line, sizeof(line),
		         "%llu fired past their window: a late wakeup serves later windows "
		         "too%s",
		         (unsigned long long)t->past_window,
		         t->wakeups_window < t->optimum_window
		                 ? ", so fewer wakeups than the optimum"
		                 : "");
		out_wrap(out, "  ", "  ", line);
	}
	fprintf(out, "  lateness p99 %s inside windows of up to %s, early fires %llu\n",
	        fmt_ns(a, sizeof(a), (double)t->late_p99),
	        fmt_ns(b, sizeof(b), (double)(t->max_delay * t->percent / 100)),
	        (unsigned long long)t->early);
}

static void section_json(struct json *j, const struct probe *p)
{
	const struct probe_timers *t = &p->timers;
	json_obj(j, "timers");
	/* the coalesced run in timers --json's shape */
	timers_json(j, &t->config, t->result, tool_stop != 0);
	json_obj_end(j);
}

static void timers_done(struct probe *p)
{
	free(p->timers.result);
	p->timers.result = NULL;
}

static void timers_prom(FILE *f, const struct probe *p)
{
	const struct probe_timers *t = &p->timers;
	prom_help(f, "punctual_timer_wakeups", "gauge",
	          "Wakeups of the timer coalescing demo, by precision window.");
	fprintf(f, "punctual_timer_wakeups{window=\"none\"} %llu\n",
	        (unsigned long long)t->wakeups_exact);
	fprintf(f, "punctual_timer_wakeups{window=\"%d%%\"} %llu\n", t->percent,
	        (unsigned long long)t->wakeups_window);
	fprintf(f, "punctual_timer_wakeups{window=\"optimum\"} %llu\n",
	        (unsigned long long)t->optimum_window);
}

const struct probe_section probe_timers = {.name = "timers",
                                           .measure = timers_measure,
                                           .text = timers_text,
                                           .json = section_json,
                                           .done = timers_done,
                                           .prom = timers_prom};
