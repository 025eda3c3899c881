/* SPDX-License-Identifier: MIT */
/* main.c: uses the installed headers and library; exits 0 when they behave. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <punctual/punctual.h>

int main(void)
{
	static struct pn_hist h;
	pn_hist_init(&h);
	int64_t prev = pn_now();
	for (int i = 0; i < 1000; i++) {
		int64_t t = pn_now();
		if (t < prev)
			return 1;
		pn_hist_record(&h, t - prev);
		prev = t;
	}
	if (pn_hist_count(&h) != 1000 || pn_cycles_calibrate(-1) != -EINVAL)
		return 2;
	if (strcmp(pn_version(), PN_VERSION_STRING) != 0)
		return 3;
	printf("consumer: libpunctual %s, pn_now p50 step %lld ns, cycles %s\n", pn_version(),
	       (long long)pn_hist_percentile(&h, 50),
	       pn_cycles_source() == PN_CYCLES_CLOCK ? "clock" : "counter");
	return 0;
}
