/* SPDX-License-Identifier: MIT */
/*
 * fuzz_cpu_max.c: libFuzzer harness for the limit-file parsers: pn__cgroup_parse_max (v2
 * cpu.max) and pn__cgroup_parse_int (v1 cpu.cfs_quota_us, cpu.cfs_period_us, shares).
 * Any bytes: no crash; an accepted cpu.max has a period > 0 and a quota that is -1 (max)
 * or > 0, so no caller ever divides by zero or counts < 1.
 */
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
	int64_t q, p, v;
	if (pn__cgroup_parse_max(text, &q, &p) == 0) {
		if (p <= 0 || (q != -1 && q <= 0))
			abort();
	}
	if (pn__cgroup_parse_int(text, &v) == 0 && size == 0)
		abort(); /* an empty file holds no number */
	free(text);
	return 0;
}
