/* SPDX-License-Identifier: MIT */
/*
 * fuzz_cpulist.c: libFuzzer harness for pn__cgroup_parse_cpulist (kernel cpu lists such as
 * "0-3,8-11" from /sys/devices/system/cpu/online or an affinity list). Any bytes: no
 * crash, and the result is -EIO or a count in [0, PN_CPU_COUNT_MAX].
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cpus/cgroup.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_text(data, size);
	if (!text)
		return 0;
	int n = pn__cgroup_parse_cpulist(text);
	if (n != -EIO && (n < 0 || n > PN_CPU_COUNT_MAX))
		abort();
	free(text);
	return 0;
}
