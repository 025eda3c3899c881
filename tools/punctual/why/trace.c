/* SPDX-License-Identifier: MIT */
/*
 * The user-space side of `punctual why`'s tracing: loads the kernel side, drains its ring
 * buffer when a quarter full and at the end, and names each event's cause; loaded once,
 * it may trace again, or another process. It arms no timer while it traces but to read
 * cpu.stat: its wakeups would end the target's slack windows early. Under a quota, an
 * event was throttled when a level's counters rose between the last reading before it was
 * woken and the first after it ran (at most POLL_MS wider on each side than the wait).
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <bpf/libbpf.h>
#include <punctual/clock.h>
#include "contract.h"
#include "util/diag.h"
#include "why/explain.h"
#include "why/trace.h"
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized" /* gcc -O2 on bpftool's code */
#include "why.skel.h"
#pragma GCC diagnostic pop
#else
#include "why.skel.h"
#endif

#define POLL_MS 10
#define LEVELS  4    /* quota levels watched, nearest the process first */
#define SAMPLES 1024 /* cpu.stat readings kept: 10 s at POLL_MS */
/* The host's PID namespace's inode (PROC_PID_INIT_INO): its numbers are the kernel's. */
#define HOST_PIDNS_INO 0xEFFFFFFCu

struct sample {
	int64_t at;
	uint64_t thr[LEVELS];
};

struct why_tracer {
	struct why_bpf *skel;
	struct ring_buffer *rb;
	const struct why_target *target;
	why_sink *sink;
	void *ctx;
	int cg_fd[LEVELS];
	int levels;
	struct sample ring[SAMPLES];
	uint64_t nsamples;
	uint32_t gen; /* the target's: its events alone reach the sink */
	struct why_event *pending;
	size_t npending, cap;
	bool oom;
};

static int quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level, (void)fmt, (void)ap;
	return 0;
}

/* hrtimer_wakeup's address, which marks a sleeper's timer; 0 where kallsyms hides it. */
static uint64_t wakeup_fn(void)
{
	FILE *f = fopen("/proc/kallsyms", "re");
	if (!f)
		return 0;
	char line[256];
	unsigned long long a = 0;
	while (fgets(line, sizeof(line), f)) {
		char type, name[200];
		if (sscanf(line, "%llx %c %199s", &a, &type, name) == 3 &&
		    strcmp(name, "hrtimer_wakeup") == 0)
			break;
		a = 0;
	}
	fclose(f);
	return a;
}

static void sample(struct why_tracer *t)
{
	struct sample *s = &t->ring[t->nsamples % SAMPLES];
	s->at = pn_now();
	for (int i = 0; i < t->levels; i++) {
		struct pn__cgroup_stat st;
		s->thr[i] = pn__cgroup_stat_pread(t->cg_fd[i], t->target->cg->v2, &st) == 0
		                    ? st.nr_throttled + st.throttled_ns
		                    : 0;
	}
	t->nsamples++;
}

/* The level whose counters rose around e, or -1. */
static int throttled_level(const struct why_tracer *t, const struct why_event *e)
{
	if (!t->levels || t->nsamples < 2)
		return -1;
	uint64_t last = t->nsamples - 1, first = t->nsamples > SAMPLES ? t->nsamples - SAMPLES : 0;
	uint64_t before = first;
	for (uint64_t k = last; k > first; k--)
		if (t->ring[(k - 1) % SAMPLES].at <= e->woken) {
			before = k - 1;
			break;
		}
	const struct sample *a = &t->ring[before % SAMPLES], *b = &t->ring[last % SAMPLES];
	for (int i = 0; i < t->levels; i++)
		if (a->thr[i] != b->thr[i])
			return i;
	return -1;
}

static int on_event(void *ctx, void *data, size_t size)
{
	struct why_tracer *t = ctx;
	if (size < sizeof(struct why_event))
		return 0;
	if (t->npending == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 256;
		struct why_event *p = t->oom ? NULL : realloc(t->pending, cap * sizeof(*p));
		if (!p) {
			t->oom = true;
			return 0;
		}
		t->pending = p;
		t->cap = cap;
	}
	memcpy(&t->pending[t->npending++], data, sizeof(struct why_event));
	return 0;
}

static void flush(struct why_tracer *t)
{
	if (t->levels)
		sample(t);
	for (size_t i = 0; i < t->npending; i++) {
		const struct why_event *e = &t->pending[i];
		if (e->gen != t->gen)
			continue;
		struct cause_rec r = why_explain(e, throttled_level(t, e));
		t->sink(t->ctx, e, &r);
	}
	t->npending = 0;
}

/* Waits for a quarter-full buffer, the target's end (its pidfd, else a look every second),
 * stop_fd readable, or ms (-1: no bound). Whether the target is gone. */
static bool wait_gone(struct ring_buffer *rb, long pid, int pidfd, int stop_fd, int ms)
{
	struct pollfd p[3] = {{.fd = ring_buffer__epoll_fd(rb), .events = POLLIN},
	                      {.fd = stop_fd, .events = POLLIN},
	                      {.fd = pidfd, .events = POLLIN}};
	if (pid > 0 && pidfd < 0 && (ms < 0 || ms > 1000))
		ms = 1000;
	int r = poll(p, pidfd >= 0 ? 3 : 2, ms);
	if (pidfd >= 0)
		return r > 0 && (p[2].revents & POLLIN);
	return pid > 0 && kill((pid_t)pid, 0) < 0 && errno == ESRCH;
}

/* Whether stop_fd (-1: none) is readable. */
static bool stopped(int stop_fd)
{
	struct pollfd p = {.fd = stop_fd, .events = POLLIN};
	return stop_fd >= 0 && poll(&p, 1, 0) > 0;
}

/* The next wait's bound: POLL_MS under a quota, else the end (-1: none). */
static int wait_ms(const struct why_tracer *t, int64_t end)
{
	if (t->levels)
		return POLL_MS;
	if (end == INT64_MAX)
		return -1;
	int64_t left = (end - pn_now()) / 1000000 + 1;
	return left > INT32_MAX ? INT32_MAX : left < 0 ? 0 : (int)left;
}

/* The kernel side numbers processes as this one's PID namespace does (a tool in a
 * container names its own PIDs); the host's needs no translation. */
static void pid_namespace(struct why_bpf *s)
{
	struct stat st;
	if (stat("/proc/self/ns/pid", &st) != 0 || st.st_ino == HOST_PIDNS_INO)
		return;
	s->rodata->ns_dev = ((uint64_t)major(st.st_dev) << 20) | minor(st.st_dev); /* dev_t */
	s->rodata->ns_ino = st.st_ino;
}

static int load(struct why_bpf **skel, const struct why_target *target, const char **step)
{
	libbpf_set_print(quiet);
	*step = "open";
	struct why_bpf *s = why_bpf__open();
	if (!s)
		return errno ? -errno : -EINVAL;
	s->bss->target_tgid = (__u32)target->pid;
	s->rodata->self_tgid = (__u32)getpid();
	s->rodata->wakeup_fn = wakeup_fn();
	s->rodata->follow = target->pid > 0 && target->children;
	pid_namespace(s);
	bpf_program__set_autoload(s->progs.why_fork, s->rodata->follow);
	bpf_program__set_autoload(s->progs.why_exit, s->rodata->follow);
	*step = "load";
	int r = why_bpf__load(s);
	if (r == 0) {
		*step = "attach";
		r = why_bpf__attach(s);
	}
	if (r < 0) {
		why_bpf__destroy(s);
		return r;
	}
	*skel = s;
	return 0;
}

static void watch_levels(struct why_tracer *t)
{
	const struct causes_cgroup *cg = t->target->cg;
	for (int i = 0; i < t->levels; i++)
		close(t->cg_fd[i]);
	t->levels = 0;
	t->nsamples = 0;
	for (int i = 0; cg && i < cg->n && t->levels < LEVELS; i++) {
		int fd = pn__cgroup_stat_open(cg->lv[i].dir);
		if (fd < 0)
			break;
		t->cg_fd[t->levels++] = fd;
	}
	if (t->levels)
		sample(t);
}

int why_trace_open(struct why_tracer **out, const struct why_target *target, why_sink *sink,
                   void *ctx, const char **step)
{
	struct why_bpf *skel = NULL;
	int r = load(&skel, target, step);
	if (r < 0 || !skel)
		return r < 0 ? r : -EINVAL;
	struct why_tracer *t = calloc(1, sizeof(*t));
	*step = "ring buffer";
	struct ring_buffer *rb =
	        t ? ring_buffer__new(bpf_map__fd(skel->maps.events), on_event, t, NULL) : NULL;
	if (!rb) {
		r = t ? (errno ? -errno : -ENOMEM) : -ENOMEM;
		free(t);
		why_bpf__destroy(skel);
		return r;
	}
	*t = (struct why_tracer){
	        .skel = skel, .rb = rb, .target = target, .sink = sink, .ctx = ctx};
	watch_levels(t);
	*out = t;
	return 0;
}

int why_trace_retarget(struct why_tracer *t, const struct why_target *target)
{
	if (target->pid <= 0 || t->target->pid <= 0)
		return -EINVAL;
	t->target = target;
	t->skel->bss->target_tgid = (__u32)target->pid;
	t->skel->bss->target_gen = ++t->gen;
	watch_levels(t);
	return 0;
}

int why_trace_follow(struct why_tracer *t, long pid)
{
	if (!t->skel->rodata->follow || pid <= 0 || pid > UINT32_MAX)
		return -EINVAL;
	uint32_t key = (uint32_t)pid, gen = t->gen;
	int r = bpf_map__update_elem(t->skel->maps.followed, &key, sizeof(key), &gen, sizeof(gen),
	                             BPF_ANY);
	return r < 0 ? r : 0;
}

int why_trace_run(struct why_tracer *t, int stop_fd, struct why_run *run)
{
	const struct why_target *target = t->target;
	int pidfd = target->pid > 0 ? (int)syscall(SYS_pidfd_open, (pid_t)target->pid, 0) : -1;
	int64_t start = pn_now(), end = target->duration > 0 ? start + target->duration : INT64_MAX;
	int r = 0;
	memset(run, 0, sizeof(*run));
	while (!tool_stop && pn_now() < end) {
		run->exited = wait_gone(t->rb, target->pid, pidfd, stop_fd, wait_ms(t, end));
		r = ring_buffer__consume(t->rb);
		if (r < 0 && r != -EINTR)
			break;
		r = 0;
		flush(t);
		if (run->exited || stopped(stop_fd))
			break;
	}
	run->elapsed = pn_now() - start;
	run->samples = t->nsamples;
	if (pidfd >= 0)
		close(pidfd);
	return r < 0 ? r : 0;
}

void why_trace_close(struct why_tracer *t)
{
	if (!t)
		return;
	for (int i = 0; i < t->levels; i++)
		close(t->cg_fd[i]);
	ring_buffer__free(t->rb);
	why_bpf__destroy(t->skel);
	free(t->pending);
	free(t);
}

int why_trace(const struct why_target *target, why_sink *sink, void *ctx, struct why_run *run,
              const char **step)
{
	struct why_tracer *t;
	int r = why_trace_open(&t, target, sink, ctx, step);
	if (r < 0)
		return r;
	r = why_trace_run(t, -1, run);
	why_trace_close(t);
	*step = "poll";
	return r;
}
