/* SPDX-License-Identifier: MIT */
/*
 * fuzz_proc_cgroup.c: libFuzzer harness for pn__cgroup_parse_self (/proc/self/cgroup).
 * Any bytes: no crash, no overread, and every path it accepts is a NUL-terminated
 * absolute path that fits its buffer.
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
	struct pn__cg_self s;
	if (pn__cgroup_parse_self(text, &s) == 0) {
		if (!s.has_v1 && !s.has_v2)
			abort();
		if (s.has_v2 && (s.v2_path[0] != '/' || strlen(s.v2_path) >= sizeof(s.v2_path)))
			abort();
		if (s.has_v1_cpu && (!s.has_v1 || s.v1_cpu_path[0] != '/'))
			abort();
	}
	free(text);
	return 0;
}
