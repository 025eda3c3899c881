/* SPDX-License-Identifier: MIT */
/* `punctual probe`'s section "system": the kernel, the CPU, the hypervisor, the container, the
 * clocksource, the tick, nohz_full and isolated CPUs, the timer slack of this process and of
 * PID 1. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include <punctual/slack.h>
#include "probe/probe.h"
#include "util/host.h"
#include "util/json.h"
#include "util/out.h"
#include "util/prom.h"

static void virtualization(struct probe *p)
{
	snprintf(p->virt, sizeof(p->virt), "none");
#if defined(__x86_64__)
	unsigned a, b, c, d;
	if (__get_cpuid(1, &a, &b, &c, &d) && (c >> 31) & 1) {
		unsigned sig[3];
		__cpuid(0x40000000, a, sig[0], sig[1], sig[2]);
		char id[13];
		memcpy(id, sig, 12);
		id[12] = '\0';
		static const struct {
			const char *sig, *name;
		} known[] = {{"KVMKVMKVM", "KVM"},         {"Microsoft Hv", "Hyper-V"},
		             {"VMwareVMware", "VMware"},   {"XenVMMXenVMM", "Xen"},
		             {"TCGTCGTCGTCG", "QEMU TCG"}, {"ACRNACRNACRN", "ACRN"},
		             {"bhyve bhyve ", "bhyve"},    {" lrpepyh  vr", "Parallels"}};
		const char *name = NULL;
		for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
			if (strncmp(id, known[i].sig, strlen(known[i].sig)) == 0)
				name = known[i].name;
		for (int i = 0; i < 12; i++)
			if (id[i] < 0x20 || id[i] > 0x7e)
				id[i] = '.';
		snprintf(p->virt, sizeof(p->virt), "%s (CPUID hypervisor bit, \"%s\")",
		         name ? name : "unknown hypervisor", id);
	}
#endif
	char vendor[64] = "", product[64] = "";
	read_sysfs_line("/sys/class/dmi/id/sys_vendor", vendor, sizeof(vendor));
	read_sysfs_line("/sys/class/dmi/id/product_name", product, sizeof(product));
	snprintf(p->dmi, sizeof(p->dmi), "%s%s%s", vendor, *vendor && *product ? " " : "", product);
}

/* The container this process runs in, by systemd-detect-virt's rules: what its manager
 * wrote to /run/systemd/container (systemd-nspawn, podman, ... for the systemd inside),
 * PID 1's "container=" (an init that is not systemd; root may read it), then the files
 * podman and docker leave (/run/.containerenv, /.dockerenv); "" for none found. The name
 * is printable ASCII, cut to fit; how it was found goes to p->container_how. */
static void container(struct probe *p)
{
	char v[sizeof(p->container)] = "";
	const char *how = "";
	FILE *f = fopen("/run/systemd/container", "r");
	if (f) {
		if (fgets(v, sizeof(v), f))
			how = "/run/systemd/container";
		fclose(f);
	}
	if (!*how && (f = fopen("/proc/1/environ", "r"))) {
		char var[4096];
		size_t n = fread(var, 1, sizeof(var) - 1, f);
		fclose(f);
		var[n] = '\0';
		for (size_t i = 0; i < n; i += strlen(var + i) + 1)
			if (strncmp(var + i, "container=", 10) == 0 && var[i + 10]) {
				snprintf(v, sizeof(v), "%s", var + i + 10);
				how = "PID 1's container=";
			}
	}
	if (!*how && access("/run/.containerenv", F_OK) == 0) {
		snprintf(v, sizeof(v), "podman");
		how = "/run/.containerenv";
	}
	if (!*how && access("/.dockerenv", F_OK) == 0) {
		snprintf(v, sizeof(v), "docker");
		how = "/.dockerenv";
	}
	v[strcspn(v, "\n")] = '\0';
	for (char *c = v; *c; c++)
		if (*c < 0x20 || *c > 0x7e)
			*c = '?';
	snprintf(p->container, sizeof(p->container), "%s", *how ? v : "");
	snprintf(p->container_how, sizeof(p->container_how), "%s", how);
}

static void system_measure(struct probe *p)
{
	host_read(&p->host);
	virtualization(p);
	container(p);
	if (read_sysfs_line("/sys/devices/system/cpu/nohz_full", p->nohz_full,
	                    sizeof(p->nohz_full)) < 0 ||
	    strcmp(p->nohz_full, "(null)") == 0)
		p->nohz_full[0] = '\0';
	if (read_sysfs_line("/sys/devices/system/cpu/isolated", p->isolated, sizeof(p->isolated)) <
	    0)
		p->isolated[0] = '\0';
	p->slack_self = pn_slack_get();
	p->slack_pid1 = pn_slack_get_pid(1);
}

static const char *slack_name(char *buf, size_t n, int64_t v)
{
	if (v < 0)
		snprintf(buf, n, "unreadable (%s)", pn_strerror((int)v));
	else
		fmt_ns(buf, n, (double)v);
	return buf;
}

static void system_text(const struct probe *p)
{
	char a[48], b[48], c[32];
	fprintf(out, "system\n");
	fprintf(out, "  kernel          %s\n", p->host.kernel);
	fprintf(out, "  cpu             %s\n", p->host.cpu);
	fprintf(out, "  virtualization  %s%s%s\n", p->virt, *p->dmi ? "; DMI: " : "", p->dmi);
	if (*p->container_how)
		fprintf(out, "  container       %s (%s)\n", *p->container ? p->container : "?",
		        p->container_how);
	else
		fprintf(out, "  container       none found\n");
	fprintf(out, "  clocksource     %s (available: %s)\n", p->host.clocksource,
	        p->host.clocksources);
	fprintf(out, "  tick            %.0f Hz (coarse clock resolution %s)\n", p->host.tick_hz,
	        fmt_ns(c, sizeof(c), (double)p->host.coarse_res_ns));
	fprintf(out, "  nohz_full       %s; isolated CPUs: %s\n",
	        *p->nohz_full ? p->nohz_full : "none", *p->isolated ? p->isolated : "none");
	fprintf(out, "  timer slack     this process %s, PID 1 %s\n",
	        slack_name(a, sizeof(a), p->slack_self), slack_name(b, sizeof(b), p->slack_pid1));
}

static void system_json(struct json *j, const struct probe *p)
{
	json_obj(j, "system");
	json_str(j, "kernel", p->host.kernel);
	json_str(j, "cpu", p->host.cpu);
	json_str(j, "virtualization", p->virt);
	json_str(j, "dmi", p->dmi);
	if (*p->container_how)
		json_str(j, "container", p->container);
	else
		json_none(j, "container");
	json_str(j, "clocksource", p->host.clocksource);
	json_words(j, "available_clocksources", p->host.clocksources);
	json_num(j, "tick_hz_estimate", p->host.tick_hz);
	json_int(j, "coarse_resolution_ns", p->host.coarse_res_ns);
	json_str(j, "nohz_full", p->nohz_full);
	json_str(j, "isolated_cpus", p->isolated);
	json_int_if(j, "slack_self_ns", p->slack_self >= 0, p->slack_self); /* or -errno */
	json_int_if(j, "slack_pid1_ns", p->slack_pid1 >= 0, p->slack_pid1);
	json_obj_end(j);
}

static void system_prom(FILE *f, const struct probe *p)
{
	prom_help(f, "punctual_host_info", "gauge", "Host facts from punctual probe (always 1).");
	fputs("punctual_host_info{kernel=\"", f);
	prom_label(f, p->host.kernel);
	fputs("\",cpu=\"", f);
	prom_label(f, p->host.cpu);
	fputs("\",virtualization=\"", f);
	prom_label(f, p->virt);
	fputs("\",container=\"", f);
	prom_label(f, p->container);
	fputs("\",clocksource=\"", f);
	prom_label(f, p->host.clocksource);
	fprintf(f, "\",version=\"%s\"} 1\n", PUNCTUAL_VERSION);

	prom_help(f, "punctual_tick_hertz", "gauge",
	          "Kernel tick rate estimated from the coarse clock.");
	fprintf(f, "punctual_tick_hertz %.0f\n", p->host.tick_hz);
	prom_help(f, "punctual_timer_slack_seconds", "gauge",
	          "Timer slack of this process and of PID 1.");
	fprintf(f, "punctual_timer_slack_seconds{process=\"self\"} %.9g\n",
	        (double)p->slack_self / 1e9);
	if (p->slack_pid1 >= 0)
		fprintf(f, "punctual_timer_slack_seconds{process=\"pid1\"} %.9g\n",
		        (double)p->slack_pid1 / 1e9);
}

const struct probe_section probe_system = {.name = "system",
                                           .measure = system_measure,
                                           .text = system_text,
                                           .json = system_json,
                                           .prom = system_prom};
