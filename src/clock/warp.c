/* SPDX-License-Identifier: MIT */
/*
 * warp.c: pn_cycles_warp_check, the kernel's TSC warp check (check_tsc_warp) on
 * pn_cycles_ordered: two threads on two CPUs take turns under a lock, so a read below the
 * other's last is a step back that no ordering explains: the counters disagree.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>

#include <punctual/clock.h>
#include "internal.h"

struct warp {
	atomic_flag lock;
	uint64_t last;
	int64_t until;
	bool stop;
	uint64_t reads, warps, max;
	cpu_set_t cpu[2];
};

static void turn(struct warp *w)
{
	while (atomic_flag_test_and_set_explicit(&w->lock, memory_order_acquire))
		pn__arch_relax();
	uint64_t before = w->last, now = pn_cycles_ordered();
	w->last = now;
	w->reads++;
	if (now < before) {
		w->warps++;
		if (before - now > w->max)
			w->max = before - now;
	}
	atomic_flag_clear_explicit(&w->lock, memory_order_release);
}

static void *other(void *arg)
{
	struct warp *w = arg;
	pthread_setaffinity_np(pthread_self(), sizeof(w->cpu[1]), &w->cpu[1]);
	while (!__atomic_load_n(&w->stop, __ATOMIC_ACQUIRE))
		turn(w);
	return NULL;
}

/* The first two CPUs the caller may run on into w->cpu; false when it has one. */
static bool two_cpus(struct warp *w, const cpu_set_t *allowed)
{
	int found = 0;
	for (int c = 0; c < CPU_SETSIZE && found < 2; c++) {
		if (!CPU_ISSET(c, allowed))
			continue;
		CPU_ZERO(&w->cpu[found]);
		CPU_SET(c, &w->cpu[found]);
		found++;
	}
	return found == 2;
}

PN_API int pn_cycles_warp_check(int64_t duration_ns, struct pn_cycles_warp *out)
{
	if (!out || duration_ns <= 0 || duration_ns > 60 * PN_NSEC)
		return -EINVAL;
	static struct warp zero;
	struct warp w = zero;
	cpu_set_t allowed;
	if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0)
		return -errno;
	if (!two_cpus(&w, &allowed)) {
		*out = (struct pn_cycles_warp){.cpus = 1};
		return 0;
	}
	int r = pthread_setaffinity_np(pthread_self(), sizeof(w.cpu[0]), &w.cpu[0]);
	pthread_t t;
	w.last = pn_cycles_ordered(); /* before the other thread's first turn */
	if (r == 0 && (r = pthread_create(&t, NULL, other, &w)) == 0) {
		for (int64_t end = pn_now() + duration_ns; pn_now() < end;)
			turn(&w);
		__atomic_store_n(&w.stop, true, __ATOMIC_RELEASE);
		pthread_join(t, NULL);
	}
	pthread_setaffinity_np(pthread_self(), sizeof(allowed), &allowed);
	if (r != 0)
		return -r;
	*out = (struct pn_cycles_warp){.reads = w.reads,
	                               .warps = w.warps,
	                               .max_ns = w.max ? pn_cycles_to_ns((int64_t)w.max) : 0,
	                               .cpus = 2};
	return 0;
}
