/* SPDX-License-Identifier: MIT */
/*
 * fuzz_cpu_info.c: libFuzzer harness for the whole evaluation (pn__cpus_info_at): the input,
 * split at NUL bytes, becomes /proc/self/cgroup, /proc/self/mountinfo, the v2 root's
 * cpu.max and the v1 cpu root's cpu.cfs_quota_us, then cpu.cfs_period_us, in a scratch
 * tree; the affinity is 0-7. Any input: no crash, and 1 <= count <= 8.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cpus/cgroup.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char root[64];
static const char *files[] = {
        "/proc/self/cgroup",
        "/proc/self/mountinfo",
        "/sys/fs/cgroup/cpu.max",
        "/sys/fs/cgroup/cpu/cpu.cfs_quota_us",
        "/sys/fs/cgroup/cpu/cpu.cfs_period_us",
};
#define N_FILES (sizeof(files) / sizeof(files[0]))
static const char *dirs[] = {"/proc",   "/proc/self",     "/sys",
                             "/sys/fs", "/sys/fs/cgroup", "/sys/fs/cgroup/cpu"};
#define N_DIRS (sizeof(dirs) / sizeof(dirs[0]))

static void cleanup(void)
{
	char p[256];
	for (size_t i = 0; i < N_FILES; i++) {
		snprintf(p, sizeof(p), "%s%s", root, files[i]);
		unlink(p);
	}
	for (size_t i = N_DIRS; i-- > 0;) {
		snprintf(p, sizeof(p), "%s%s", root, dirs[i]);
		rmdir(p);
	}
	rmdir(root);
}

static void setup(void)
{
	char p[256];
	snprintf(root, sizeof(root), "/tmp/pn_fuzz_XXXXXX");
	if (!mkdtemp(root))
		abort();
	for (size_t i = 0; i < N_DIRS; i++) {
		snprintf(p, sizeof(p), "%s%s", root, dirs[i]);
		mkdir(p, 0755);
	}
	unsetenv("PUNCTUAL_CPU_COUNT");
	unsetenv("PUNCTUAL_CPU_ROUNDING");
	atexit(cleanup);
}

static void put(const char *path, const uint8_t *d, size_t n)
{
	char p[256];
	snprintf(p, sizeof(p), "%s%s", root, path);
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		abort();
	if (n && write(fd, d, n) != (ssize_t)n)
		abort();
	close(fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!root[0])
		setup();
	size_t start = 0, k = 0;
	for (size_t i = 0; i <= size && k < N_FILES; i++) {
		if (i == size || data[i] == '\0') {
			put(files[k++], data + start, i - start);
			start = i + 1;
		}
	}
	for (; k < N_FILES; k++)
		put(files[k], NULL, 0);
	struct pn_cpu_info info;
	if (pn__cpus_info_at(root, "0-7", &info) != 0 || info.count < 1 || info.count > 8)
		abort();
	return 0;
}
