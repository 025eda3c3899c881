/* SPDX-License-Identifier: MIT */
/*
 * stall.c: a process stopped (SIGSTOP, 50 ms) during its first 3 ms nanosleep, then 64
 * more: under libpunctual-preload.so the stall must not stay the learned margin of the
 * 3 ms class (it would make every later sleep spin). Prints that class's margin and
 * sample count as the shim's punctual_preload_sleep_stats reports them, or "no shim".
 * Then 50 nanosleep(300 us) and 50 epoll_wait(1 ms) on an idle epoll set: the shim ends
 * their spins in the wrapper's own frame and counts them at the next call or read, so the
 * statistics must count each of the 166 sleeps once, none early ("counted N early E").
 */
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <punctual/sleep.h>

int main(void)
{
	struct timespec ms3 = {0, 3000000}, us200 = {0, 200000};
	nanosleep(&us200, NULL); /* the shim's first sleep: it probes the wakeup latency */
	pid_t parent = getpid(), child = fork();
	if (child == 0) {
		usleep(1000);
		kill(parent, SIGSTOP);
		usleep(50000);
		kill(parent, SIGCONT);
		_exit(0);
	}
	nanosleep(&ms3, NULL); /* stopped in here */
	waitpid(child, NULL, 0);
	for (int i = 0; i < 64; i++)
		nanosleep(&ms3, NULL);
	int (*stats)(struct pn_sleep_stats *) = (int (*)(struct pn_sleep_stats *))dlsym(
	        RTLD_DEFAULT, "punctual_preload_sleep_stats");
	struct pn_sleep_stats st;
	if (!stats || stats(&st) != 0) {
		printf("no shim\n");
		return 0;
	}
	printf("3ms class: margin %lld ns, %llu samples\n", (long long)st.class_margin_ns[11],
	       (unsigned long long)st.class_samples[11]);
	struct timespec us300 = {0, 300000};
	int epfd = epoll_create1(0);
	if (epfd < 0)
		return 1;
	struct epoll_event ev[1];
	for (int i = 0; i < 50; i++) {
		nanosleep(&us300, NULL);
		if (epoll_wait(epfd, ev, 1, 1) != 0)
			return 1;
	}
	if (stats(&st) != 0)
		return 1;
	printf("counted %llu early %llu\n", (unsigned long long)(st.sleeps + st.past),
	       (unsigned long long)st.early);
	return 0;
}
