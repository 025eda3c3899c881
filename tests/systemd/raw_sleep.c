/* SPDX-License-Identifier: MIT */
/*
 * raw_sleep US: sleeps US microseconds at a time, forever, through the clock_nanosleep
 * system call itself, so that the shim (LD_PRELOAD) sees none of its waits: the service
 * tune can measure only by tracing it.
 */
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long us = argc > 1 ? atol(argv[1]) : 1000;
	struct timespec ts = {.tv_sec = us / 1000000, .tv_nsec = us % 1000000 * 1000};
	for (;;)
		syscall(SYS_clock_nanosleep, CLOCK_MONOTONIC, 0, &ts, NULL);
}
