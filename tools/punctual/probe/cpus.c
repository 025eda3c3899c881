/* SPDX-License-Identifier: MIT */
/* `punctual probe`'s section "cpus": how many CPUs this process may use and why (pn_cpu_info),
 * and the advice when that is fewer than are online. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <punctual/cpus.h>
#include "probe/probe.h"
#include "render/figures.h"
#include "util/json.h"
#include "util/out.h"
#include "util/prom.h"

static void cpus_measure(struct probe *p)
{
	p->cpu_status = pn_cpu_info(&p->cpu);
	p->cpu_count = pn_cpu_count();
}

static void cpus_recommend(struct probe *p)
{
	/* CPUs */
	if (p->cpu_status == 0 && p->cpu.online > 0 && p->cpu.count < p->cpu.online)
		probe_reco_add(
		        p, "cpus", "punctual cpus",
		        "This process may use %d CPU%s, not the %d online (%s): size thread pools "
		        "with pn_cpu_count() or `punctual cpus`, not nproc or "
		        "sysconf(_SC_NPROCESSORS_ONLN).",
		        p->cpu.count, p->cpu.count == 1 ? "" : "s", p->cpu.online, p->cpu.reason);
}

static void cpus_text(const struct probe *p)
{
	if (p->cpu_status < 0) {
		fprintf(out, "\ncpus: %d\n  unavailable: %s\n", p->cpu_count,
		        pn_strerror(p->cpu_status));
		return;
	}
	fputc('\n', out);
	cpu_info_text(out, &p->cpu, false); /* cpus' shape, without the levels */
}

static void cpus_json(struct json *j, const struct probe *p)
{
	json_obj(j, "cpus");
	if (p->cpu_status == 0) {
		cpu_info_json(j, &p->cpu); /* cpus --json's shape (render/figures.c) */
	} else {
		json_int(j, "count", p->cpu_count);
		json_str(j, "error", pn_strerror(p->cpu_status));
	}
	json_obj_end(j);
}

static void cpus_prom(FILE *f, const struct probe *p)
{
	prom_help(f, "punctual_cpus", "gauge",
	          "CPUs: what this process may use, online, in its affinity.");
	if (p->cpu_status == 0) {
		fprintf(f, "punctual_cpus{kind=\"usable\"} %d\n", p->cpu.count);
		if (p->cpu.online > 0)
			fprintf(f, "punctual_cpus{kind=\"online\"} %d\n", p->cpu.online);
		if (p->cpu.affinity > 0)
			fprintf(f, "punctual_cpus{kind=\"affinity\"} %d\n", p->cpu.affinity);
		if (p->cpu.limit > 0)
			fprintf(f, "punctual_cpus{kind=\"cgroup_limit\"} %g\n", p->cpu.limit);
	} else {
		fprintf(f, "punctual_cpus{kind=\"usable\"} %d\n", p->cpu_count);
	}
}

const struct probe_section probe_cpus = {.name = "cpus",
                                         .measure = cpus_measure,
                                         .recommend = cpus_recommend,
                                         .text = cpus_text,
                                         .json = cpus_json,
                                         .prom = cpus_prom};
