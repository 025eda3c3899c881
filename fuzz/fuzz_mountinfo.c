/* SPDX-License-Identifier: MIT */
/*
 * fuzz_mountinfo.c: libFuzzer harness for pn__cgroup_parse_mountinfo (/proc/self/mountinfo),
 * looking up the v1 cpu hierarchy and the v2 one for a few cgroup paths (the root, a
 * nested one, one with colons, one under "/.."). Any bytes: no crash, no overread; a mount
 * found has absolute root and mount point.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cpus/cgroup.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *paths[] = {"/", "/a/b", "/docker/abc", "/a:b:c", "/../x"};
	char *text = fuzz_text(data, size);
	if (!text)
		return 0;
	for (int v2 = 0; v2 <= 1; v2++) {
		for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
			struct pn__cg_mount m;
			if (pn__cgroup_parse_mountinfo(text, v2, paths[i], &m) != 0)
				continue;
			if (m.root[0] != '/' || m.point[0] != '/')
				abort();
			if (i == 4 && !m.outside)
				abort(); /* a "/.." path is never under any mount root */
		}
	}
	free(text);
	return 0;
}
