/* SPDX-License-Identifier: MIT */
/* cpus.c: prints what a C program learns of the CPU count, on one line:
 *   onln=sysconf(_SC_NPROCESSORS_ONLN) nprocs=get_nprocs() conf=sysconf(_SC_NPROCESSORS_CONF)
 *   nprocs_conf=get_nprocs_conf() affinity=CPU_COUNT(sched_getaffinity) page=sysconf(_SC_PAGESIZE)
 * The first two are what `punctual run --cpus` answers; the others must stay the machine's.
 * Two threads ask at once first, so that the shim's first-use path runs concurrently (the
 * TSan build checks the program side of it). */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <sys/sysinfo.h>
#include <unistd.h>

static long seen[2];

static void *ask(void *arg)
{
	long *out = arg;
	*out = sysconf(_SC_NPROCESSORS_ONLN);
	return NULL;
}

int main(void)
{
	pthread_t t;
	if (pthread_create(&t, NULL, ask, &seen[0]) != 0)
		return 1;
	ask(&seen[1]);
	pthread_join(t, NULL);
	if (seen[0] != seen[1]) {
		fprintf(stderr, "threads disagree: %ld and %ld\n", seen[0], seen[1]);
		return 1;
	}
	cpu_set_t set;
	int aff = sched_getaffinity(0, sizeof(set), &set) == 0 ? CPU_COUNT(&set) : -1;
	printf("onln=%ld nprocs=%d conf=%ld nprocs_conf=%d affinity=%d page=%ld\n", seen[0],
	       get_nprocs(), sysconf(_SC_NPROCESSORS_CONF), get_nprocs_conf(), aff,
	       sysconf(_SC_PAGESIZE));
	return 0;
}
