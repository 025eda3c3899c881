/* SPDX-License-Identifier: MIT */
/*
 * Tracing beside the caller's own work: what tracing needs here (why_can_trace, `punctual
 * why`'s check too), and a trace run in a thread between start and stop while the caller
 * measures (the probe's loop, tune's run). The thread blocks every signal: a SIGINT
 * reaches the caller's thread, and its stop (tool_stop) ends the trace as well. The stop
 * is an eventfd the trace polls beside its ring buffer, so it arms no timer of its own.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/capability.h>

#include "contract.h"
#include "why/watch.h"

#ifdef PN_HAVE_BPF
#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

/* Whether the effective set has cap (capget: no libcap). */
static bool has_cap(int cap)
{
	struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
	struct __user_cap_data_struct d[2];
	memset(d, 0, sizeof(d));
	if (syscall(SYS_capget, &h, d) != 0)
		return false;
	return d[cap / 32].effective & (1u << (cap % 32));
}
#endif

int why_can_trace(const char **why)
{
#ifndef PN_HAVE_BPF
	*why = "this punctual was built without eBPF (PUNCTUAL_BPF: clang, bpftool and libbpf "
	       "at build time)";
	return -ENOSYS;
#else
	if (access("/sys/kernel/btf/vmlinux", R_OK) != 0) {
		*why = "this kernel has no BTF (/sys/kernel/btf/vmlinux), which eBPF tracing needs";
		return -ENOENT;
	}
	if (!has_cap(CAP_SYS_ADMIN) && !(has_cap(CAP_BPF) && has_cap(CAP_PERFMON))) {
		*why = "tracing another process through eBPF needs root, or CAP_BPF and "
		       "CAP_PERFMON";
		return -EPERM;
	}
	return 0;
#endif
}

#ifdef PN_HAVE_BPF
struct why_watch {
	struct why_tracer *tracer;
	struct why_target target;
	int stop_fd; /* an eventfd: readable once stopped */
	pthread_t thread;
	bool running;
	struct why_run run;
	int status;
};

static void *trace_thread(void *arg)
{
	struct why_watch *w = arg;
	w->status = why_trace_run(w->tracer, w->stop_fd, &w->run);
	return NULL;
}

int why_watch_open(struct why_watch **out, long pid, bool children, why_sink *sink, void *ctx,
                   const char **step)
{
	struct why_watch *w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->target.pid = pid;
	w->target.children = children;
	*step = "eventfd";
	w->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	int r = w->stop_fd < 0 ? -errno : why_trace_open(&w->tracer, &w->target, sink, ctx, step);
	if (r < 0) {
		if (w->stop_fd >= 0)
			close(w->stop_fd);
		free(w);
		return r;
	}
	*out = w;
	return 0;
}

int why_watch_start(struct why_watch *w, long pid)
{
	if (w->running)
		return -EBUSY;
	if (pid > 0) {
		if (w->target.pid <= 0)
			return -EINVAL;
		w->target.pid = pid;
		int r = why_trace_retarget(w->tracer, &w->target);
		if (r < 0)
			return r;
	}
	uint64_t v;
	while (read(w->stop_fd, &v, sizeof(v)) > 0) /* the last stop's, taken back */
		;
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int r = pthread_create(&w->thread, NULL, trace_thread, w);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r != 0)
		return -r;
	w->running = true;
	return 0;
}

int why_watch_follow(struct why_watch *w, long pid)
{
	return why_trace_follow(w->tracer, pid);
}

int why_watch_stop(struct why_watch *w, struct why_run *run)
{
	memset(run, 0, sizeof(*run));
	if (!w->running)
		return -EINVAL;
	uint64_t one = 1;
	if (write(w->stop_fd, &one, sizeof(one)) != sizeof(one))
		return -errno; /* an eventfd takes 1 unless its count would pass 2^64 - 2 */
	pthread_join(w->thread, NULL);
	w->running = false;
	*run = w->run;
	return w->status;
}

void why_watch_close(struct why_watch *w)
{
	if (!w)
		return;
	struct why_run run;
	if (w->running)
		why_watch_stop(w, &run);
	why_trace_close(w->tracer);
	close(w->stop_fd);
	free(w);
}
#else
int why_watch_open(struct why_watch **out, long pid, bool children, why_sink *sink, void *ctx,
                   const char **step)
{
	(void)out, (void)pid, (void)children, (void)sink, (void)ctx;
	*step = "build";
	return -ENOSYS;
}

int why_watch_start(struct why_watch *w, long pid)
{
	(void)w, (void)pid;
	return -ENOSYS;
}

int why_watch_follow(struct why_watch *w, long pid)
{
	(void)w, (void)pid;
	return -ENOSYS;
}

int why_watch_stop(struct why_watch *w, struct why_run *run)
{
	(void)w;
	memset(run, 0, sizeof(*run));
	return -ENOSYS;
}

void why_watch_close(struct why_watch *w)
{
	(void)w;
}
#endif
