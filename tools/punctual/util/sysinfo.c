/* SPDX-License-Identifier: MIT */
/* The host facts every report starts with, and the /proc and /sys reads and writes the
 * tool makes. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include <punctual/clock.h>
#include <punctual/slack.h>
#include "contract.h"
#include "util/host.h"

#define CS_DIR "/sys/devices/system/clocksource/clocksource0/"

int read_sysfs_line(const char *path, char *buf, size_t n)
{
	int r = pn__fs_read_file(path, buf, n);
	if (r < 0)
		return r;
	buf[strcspn(buf, "\n")] = '\0';
	/* available_clocksource ends with "kvm-clock \n" */
	for (size_t l = strlen(buf); l && buf[l - 1] == ' '; l--)
		buf[l - 1] = '\0';
	return 0;
}

int write_sysfs(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	size_t len = strlen(val);
	ssize_t w = write(fd, val, len);
	int e = w < 0 ? -errno : (size_t)w != len ? -EIO : 0;
	if (close(fd) < 0 && !e)
		e = -errno;
	return e;
}

static void cpu_model(char *buf, size_t n)
{
	static char info[1 << 16];
	snprintf(buf, n, "unknown");
	if (pn__fs_read_file("/proc/cpuinfo", info, sizeof(info)) <= 0)
		return;
	/* arm64 has no model name */
	const char *keys[] = {"model name", "Hardware", "CPU part"};
	for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
		char *p = strstr(info, keys[k]);
		if (!p || !(p = strchr(p, ':')))
			continue;
		p += 1 + strspn(p + 1, " \t");
		snprintf(buf, n, "%.*s", (int)strcspn(p, "\n"), p);
		return;
	}
}

/* The hypervisor by CPUID's leaf (x86), and DMI's vendor and product. */
static void virtualization(struct host *h)
{
	snprintf(h->virt, sizeof(h->virt), "none");
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
		snprintf(h->virt, sizeof(h->virt), "%s (CPUID hypervisor bit, \"%s\")",
		         name ? name : "unknown hypervisor", id);
	}
#endif
	char vendor[64] = "", product[64] = "";
	read_sysfs_line("/sys/class/dmi/id/sys_vendor", vendor, sizeof(vendor));
	read_sysfs_line("/sys/class/dmi/id/product_name", product, sizeof(product));
	snprintf(h->dmi, sizeof(h->dmi), "%s%s%s", vendor, *vendor && *product ? " " : "", product);
}

/* The container this process runs in, by systemd-detect-virt's rules: its manager's
 * /run/systemd/container, PID 1's "container=", podman's and docker's files; "" for none.
 * Printable ASCII, cut to fit. */
static void container(struct host *h)
{
	char v[sizeof(h->container)] = "";
	const char *how = "";
	FILE *f = fopen("/run/systemd/container", "re");
	if (f) {
		if (fgets(v, sizeof(v), f))
			how = "/run/systemd/container";
		fclose(f);
	}
	if (!*how && (f = fopen("/proc/1/environ", "re"))) {
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
	snprintf(h->container, sizeof(h->container), "%s", *how ? v : "");
	snprintf(h->container_how, sizeof(h->container_how), "%s", how);
}

/* nohz_full and the isolated CPUs: "" for none (and for "(null)"). */
static void cpu_lists(struct host *h)
{
	if (read_sysfs_line("/sys/devices/system/cpu/nohz_full", h->nohz_full,
	                    sizeof(h->nohz_full)) < 0 ||
	    strcmp(h->nohz_full, "(null)") == 0)
		h->nohz_full[0] = '\0';
	if (read_sysfs_line("/sys/devices/system/cpu/isolated", h->isolated, sizeof(h->isolated)) <
	    0)
		h->isolated[0] = '\0';
}

void host_read(struct host *host)
{
	memset(host, 0, sizeof(*host));
	struct utsname u;
	if (uname(&u) == 0)
		snprintf(host->kernel, sizeof(host->kernel), "%s %s %s", u.sysname, u.release,
		         u.machine);
	cpu_model(host->cpu, sizeof(host->cpu));
	if (read_sysfs_line(CS_DIR "current_clocksource", host->clocksource,
	                    sizeof(host->clocksource)) < 0)
		snprintf(host->clocksource, sizeof(host->clocksource), "unknown");
	if (read_sysfs_line(CS_DIR "available_clocksource", host->clocksources,
	                    sizeof(host->clocksources)) < 0)
		snprintf(host->clocksources, sizeof(host->clocksources), "unknown");
#if defined(__x86_64__)
	host->invariant_tsc = pn__arch_cycles_invariant();
#else
	host->invariant_tsc = -1;
#endif
	host->coarse_res_ns = pn_now_coarse_resolution();
	/* the coarse clock advances once per tick */
	host->tick_hz = host->coarse_res_ns > 0 ? round(1e9 / (double)host->coarse_res_ns) : 0;
	virtualization(host);
	container(host);
	cpu_lists(host);
	host->slack_self = pn_slack_get();
	host->slack_pid1 = pn_slack_get_pid(1);
}

void host_cpu_ticks(uint64_t t[2])
{
	unsigned long long v[8] = {0};
	FILE *f = fopen("/proc/stat", "re");
	t[0] = t[1] = 0;
	if (!f)
		return;
	if (fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
	           &v[4], &v[5], &v[6], &v[7]) == 8) {
		for (int i = 0; i < 8; i++)
			t[0] += v[i];
		t[1] = v[7];
	}
	fclose(f);
}

double host_steal(const uint64_t before[2], const uint64_t after[2])
{
	if (after[0] <= before[0] || after[1] < before[1])
		return 0;
	return (double)(after[1] - before[1]) / (double)(after[0] - before[0]);
}
