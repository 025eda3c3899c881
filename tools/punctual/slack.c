/* SPDX-License-Identifier: MIT */
/*
 * `punctual slack`: shows the timer slack of this process, of another one (-p) or of each of
 * its threads (--threads), and sets it for a running process (the main thread, or every
 * thread). Setting checks every input before changing anything, and prints the value(s) read
 * back from the kernel afterwards, never the value requested: a realtime thread ignores the
 * write.
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <punctual/slack.h>
#include "contract.h"
#include "util/diag.h"
#include "util/opts.h"
#include "util/out.h"
#include "util/encode.h"
#include "commands.h"
#include "util/json.h"

static const char usage[] =
        "usage: punctual slack [--json] [-p PID] [--threads] [VALUE]\n"
        "\n"
        "Timer slack: how late the kernel may wake a thread's timers (nanosleep, poll,\n"
        "epoll_wait, select, futex) to coalesce wakeups; 50 us by default, per thread;\n"
        "a new thread copies its creator's value and exec keeps it.\n"
        "\n"
        "Without VALUE, shows the slack of this process, or of PID. With VALUE, sets the\n"
        "slack of PID's main thread (of every thread with --threads) and shows the values\n"
        "read back. VALUE is a duration (1ns, 50us, 1ms: it takes a unit) in whole\n"
        "ns (0.5 is refused); 0 or 'default' resets each thread to its default, the value\n"
        "it inherited when it was created. Reading or setting another process needs\n"
        "CAP_SYS_NICE. To start a command with a slack, use 'punctual run --slack VALUE\n"
        "CMD'.\n"
        "\n"
        "  -p, --pid PID   the process (or thread id) to show or set\n"
        "  -t, --threads   one line per thread: tid, name, slack; with VALUE, set\n"
        "                  them all\n"
        "  -j, --json      print JSON instead of text\n"
        "Durations take a unit: ns, us, ms, s, m, h, or terms as 1m30s (0 needs none).\n"
        "  -h, --help      this text\n";

struct task_slack {
	pid_t tid;
	char comm[64];
	int64_t slack_ns;
};

struct task_list {
	struct task_slack *v;
	size_t n;
};

/* ---- reading ---------------------------------------------------------------------- */

/* Replaces each byte a terminal would act on (C0 and C1 controls, DEL) or that is not UTF-8
 * with '?': a thread names itself with any bytes (PR_SET_NAME), and the output must stay
 * one line per thread, valid JSON and inert on a terminal (U+009B is a CSI). */
static void clean_name(char *s)
{
	unsigned char *p = (unsigned char *)s, *end = p + strlen(s);
	while (p < end) {
		int bad = utf8_unsafe(p, end);
		for (int i = 0; i < bad; i++)
			p[i] = '?';
		p += bad ? bad : utf8_len(p, end);
	}
}

/* The thread's name from /proc/PID/task/TID/comm. Returns 0 or -errno. */
static int read_comm(pid_t pid, pid_t tid, char *buf, size_t n)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", (int)pid, (int)tid);
	int r = pn__fs_read_file(path, buf, n);
	if (r < 0)
		return r;
	/* only the kernel's newline: one inside the name becomes '?' */
	if (r > 0 && buf[r - 1] == '\n')
		buf[r - 1] = '\0';
	clean_name(buf);
	return 0;
}

/* The calling thread reads its own through prctl: no /proc, no privilege. */
static int64_t slack_of(pid_t tid)
{
	return tid == gettid() ? pn_slack_get() : pn_slack_get_pid(tid);
}

_Noreturn static void slack_failed(int64_t err, pid_t pid, const char *doing)
{
	if (err == -ESRCH)
		die(EXIT_USAGE, "no process %d", (int)pid);
	if (err == -EPERM)
		die(EXIT_USAGE, "%s the timer slack of process %d needs CAP_SYS_NICE over it",
		    doing, (int)pid);
	if (err == -ENOENT)
		die(1, "this kernel has no /proc/PID/timerslack_ns (it came in Linux 4.6)");
	die(1, "%s the timer slack of process %d: %s", doing, (int)pid, pn_strerror((int)err));
}

/* Fills t for thread tid of pid. Returns 0, or -ESRCH when the thread is gone. */
static int read_task(pid_t pid, pid_t tid, struct task_slack *t)
{
	t->tid = tid;
	int r = read_comm(pid, tid, t->comm, sizeof(t->comm));
	if (r == -ENOENT || r == -ESRCH)
		return -ESRCH;
	if (r < 0)
		snprintf(t->comm, sizeof(t->comm), "?");
	t->slack_ns = slack_of(tid);
	if (t->slack_ns == -ESRCH)
		return -ESRCH;
	if (t->slack_ns < 0)
		slack_failed(t->slack_ns, pid, "reading");
	return 0;
}

static int cmp_tid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;
	return (x > y) - (x < y);
}

/* The ids of pid's threads, sorted; exits when the process is gone or hidden. */
static pid_t *list_tids(pid_t pid, size_t *n)
{
	char path[PATH_MAX];
	if ((size_t)snprintf(path, sizeof(path), "%s/proc/%d/task", pn__fs_root(), (int)pid) >=
	    sizeof(path))
		die(1, "path too long: %s", pn__fs_root());
	DIR *d = opendir(path);
	if (!d)
		slack_failed(errno == ENOENT || errno == ENOTDIR ? -ESRCH
		             : errno == EACCES                   ? -EPERM
		                                                 : -errno,
		             pid, "reading");
	pid_t *tids = NULL;
	size_t cap = 0;
	*n = 0;
	for (struct dirent *e; (e = readdir(d));) {
		char *end;
		long tid = strtol(e->d_name, &end, 10);
		if (e->d_name[0] < '0' || e->d_name[0] > '9' || *end || tid <= 0 || tid > INT_MAX)
			continue;
		if (*n == cap) {
			cap = cap ? 2 * cap : 16;
			tids = realloc(tids, cap * sizeof(*tids));
			if (!tids)
				die(1, "out of memory");
		}
		tids[(*n)++] = (pid_t)tid;
	}
	closedir(d);
	if (*n > 1)
		qsort(tids, *n, sizeof(*tids), cmp_tid);
	return tids;
}

/* Every thread of pid still there when read: one that exits meanwhile is skipped. */
static void read_threads(pid_t pid, struct task_list *l)
{
	size_t n;
	pid_t *tids = list_tids(pid, &n);
	l->v = calloc(n ? n : 1, sizeof(*l->v));
	if (!l->v)
		die(1, "out of memory");
	l->n = 0;
	for (size_t i = 0; i < n; i++)
		if (read_task(pid, tids[i], &l->v[l->n]) == 0)
			l->n++;
	free(tids);
	if (l->n == 0)
		slack_failed(-ESRCH, pid, "reading");
}

/* ---- setting ---------------------------------------------------------------------- */

static void set_tasks(pid_t pid, bool threads, int64_t ns)
{
	int r;
	if (!threads) {
		r = pn_slack_set_pid(pid, ns);
		if (r < 0)
			slack_failed(r, pid, "setting");
		return;
	}
	/* A thread created while this runs copies its creator's value, new or old. */
	size_t n;
	pid_t *tids = list_tids(pid, &n);
	for (size_t i = 0; i < n; i++) {
		r = tids[i] == gettid() ? pn_slack_set(ns) : pn_slack_set_pid(tids[i], ns);
		if (r == -ESRCH)
			continue;
		if (r < 0)
			slack_failed(r, pid, "setting");
	}
	free(tids);
}

/* ---- rendering -------------------------------------------------------------------- */

static void render_json(pid_t pid, const struct task_slack *main_task, bool threads, bool set,
                        int64_t set_ns, const struct task_list *l)
{
	struct json j;
	json_report_begin(&j, out, "slack");
	json_int(&j, "pid", pid);
	json_str(&j, "comm", main_task->comm);
	json_int(&j, "slack_ns", main_task->slack_ns);
	json_int_if(&j, "set_ns", set, set_ns);
	json_bool(&j, "all_threads", threads);
	json_arr(&j, "threads");
	for (size_t i = 0; i < l->n; i++) {
		json_obj(&j, NULL);
		json_int(&j, "tid", l->v[i].tid);
		json_str(&j, "comm", l->v[i].comm);
		json_int(&j, "slack_ns", l->v[i].slack_ns);
		json_obj_end(&j);
	}
	json_arr_end(&j);
	json_end(&j);
}

static void render_text(pid_t pid, const struct task_slack *main_task, bool threads,
                        const struct task_list *l)
{
	char b[32];
	if (!threads) {
		fprintf(out, "pid %d (%s): timer slack %lld ns (%s)\n", (int)pid, main_task->comm,
		        (long long)main_task->slack_ns,
		        fmt_ns(b, sizeof(b), (double)main_task->slack_ns));
		return;
	}
	fprintf(out, "pid %d (%s): %zu thread%s\n", (int)pid, main_task->comm, l->n,
	        l->n == 1 ? "" : "s");
	fprintf(out, "%8s  %-16s  %12s\n", "tid", "comm", "slack_ns");
	for (size_t i = 0; i < l->n; i++)
		fprintf(out, "%8d  %-16s  %12lld  (%s)\n", (int)l->v[i].tid, l->v[i].comm,
		        (long long)l->v[i].slack_ns,
		        fmt_ns(b, sizeof(b), (double)l->v[i].slack_ns));
}

/* ---- the command ------------------------------------------------------------------ */

int cmd_slack(int argc, char **argv)
{
	static const struct option opts[] = {
	        {"pid", required_argument, NULL, 'p'},
	        {"threads", no_argument, NULL, 't'},
	        {"json", no_argument, NULL, 'j'},
	        {"help", no_argument, NULL, 'h'},
	        {0},
	};
	bool json = false, threads = false, have_pid = false;
	pid_t pid = getpid();
	tool_cmd = "slack";
	int c;
	while ((c = next_opt(argc, argv, ":p:tjh", opts, usage)) != -1) {
		switch (c) {
		case 'p':
			pid = (pid_t)opt_long("--pid", optarg, 1, INT_MAX);
			have_pid = true;
			break;
		case 't':
			threads = true;
			break;
		case 'j':
			json = true;
			break;
		}
	}
	bool set = false;
	int64_t set_ns = 0;
	if (optind < argc) {
		set_ns = opt_slack("VALUE", argv[optind++]);
		set = true;
	}
	no_more_args(argc, argv);
	if (set && !have_pid)
		die(EXIT_USAGE, "setting needs -p PID (this process exits right away); to run a "
		                "command with a slack, use 'punctual run --slack VALUE CMD'");

	/* The process must exist and be ours to read before anything changes. */
	struct task_slack main_task;
	if (read_task(pid, pid, &main_task) < 0)
		slack_failed(-ESRCH, pid, "reading");
	if (set) {
		set_tasks(pid, threads, set_ns);
		if (read_task(pid, pid, &main_task) < 0)
			slack_failed(-ESRCH, pid, "reading");
	}
	/* Without --threads, the main thread alone. */
	struct task_list l = {.v = &main_task, .n = 1};
	if (threads)
		read_threads(pid, &l);

	out_open();
	if (json)
		render_json(pid, &main_task, threads, set, set_ns, &l);
	else
		render_text(pid, &main_task, threads, &l);
	out_commit();
	if (threads)
		free(l.v);
	return 0;
}
