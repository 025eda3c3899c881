/* SPDX-License-Identifier: MIT */
/* `punctual probe`'s section "host": the host every report describes (util/host.h: the
 * kernel, the CPU, the hypervisor, the container, the clocksource, the tick, nohz_full and
 * isolated CPUs, the timer slack of this process and of PID 1), as text, as clock and sleep
 * --json's "host" object, and as Prometheus's punctual_host_info. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <punctual/slack.h>
#include "probe/probe.h"
#include "render/figures.h"
#include "util/host.h"
#include "util/json.h"
#include "util/out.h"
#include "util/prom.h"

static void host_measure(struct probe *p)
{
	host_read(&p->host);
}

static const char *slack_name(char *buf, size_t n, int64_t v)
{
	if (v < 0)
		snprintf(buf, n, "unreadable (%s)", pn_strerror((int)v));
	else
		fmt_ns(buf, n, (double)v);
	return buf;
}

static void host_text(const struct probe *p)
{
	const struct host *h = &p->host;
	char a[48], b[48], c[32];
	fprintf(out, "host\n");
	fprintf(out, "  kernel          %s\n", h->kernel);
	fprintf(out, "  cpu             %s\n", h->cpu);
	fprintf(out, "  virtualization  %s%s%s\n", h->virt, *h->dmi ? "; DMI: " : "", h->dmi);
	if (*h->container_how)
		fprintf(out, "  container       %s (%s)\n", *h->container ? h->container : "?",
		        h->container_how);
	else
		fprintf(out, "  container       none found\n");
	fprintf(out, "  clocksource     %s (available: %s)\n", h->clocksource, h->clocksources);
	fprintf(out, "  tick            %.0f Hz (coarse clock resolution %s)\n", h->tick_hz,
	        fmt_ns(c, sizeof(c), (double)h->coarse_res_ns));
	fprintf(out, "  nohz_full       %s; isolated CPUs: %s\n",
	        *h->nohz_full ? h->nohz_full : "none", *h->isolated ? h->isolated : "none");
	fprintf(out, "  timer slack     this process %s, PID 1 %s\n",
	        slack_name(a, sizeof(a), h->slack_self), slack_name(b, sizeof(b), h->slack_pid1));
}

static void host_section_json(struct json *j, const struct probe *p)
{
	host_json(j, &p->host);
}

static void host_prom(FILE *f, const struct probe *p)
{
	const struct host *h = &p->host;
	prom_help(f, "punctual_host_info", "gauge", "Host facts from punctual probe (always 1).");
	fputs("punctual_host_info{kernel=\"", f);
	prom_label(f, h->kernel);
	fputs("\",cpu=\"", f);
	prom_label(f, h->cpu);
	fputs("\",virtualization=\"", f);
	prom_label(f, h->virt);
	fputs("\",container=\"", f);
	prom_label(f, h->container);
	fputs("\",clocksource=\"", f);
	prom_label(f, h->clocksource);
	fprintf(f, "\",version=\"%s\"} 1\n", PUNCTUAL_VERSION);

	prom_help(f, "punctual_tick_hertz", "gauge",
	          "Kernel tick rate estimated from the coarse clock.");
	fprintf(f, "punctual_tick_hertz %.0f\n", h->tick_hz);
	prom_help(f, "punctual_timer_slack_seconds", "gauge",
	          "Timer slack of this process and of PID 1.");
	fprintf(f, "punctual_timer_slack_seconds{process=\"self\"} %.9g\n",
	        (double)h->slack_self / 1e9);
	if (h->slack_pid1 >= 0)
		fprintf(f, "punctual_timer_slack_seconds{process=\"pid1\"} %.9g\n",
		        (double)h->slack_pid1 / 1e9);
}

const struct probe_section probe_host = {.name = "host",
                                         .measure = host_measure,
                                         .text = host_text,
                                         .json = host_section_json,
                                         .prom = host_prom};
