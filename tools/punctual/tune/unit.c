/* SPDX-License-Identifier: MIT */
/*
 * `punctual tune UNIT`: a systemd service measured under each setting through a runtime
 * drop-in and a restart, the one kept written under /etc/systemd/system/UNIT.d/ with
 * --apply. What an administrator may count on:
 * - Every drop-in is written whole and carries TUNE_MARK; a file without it is never
 *   replaced or removed. Nothing is removed before its replacement is in place.
 * - Whatever ends the tune early but SIGKILL, the measuring drop-in goes and the unit is
 *   left running or stopped as it was; the next tune or --revert removes what SIGKILL left.
 * - The shim's records are a 0600 file of the service user's in the unit's runtime
 *   directory, read only as a regular file of that user, the directory removed at the end.
 * - One tune of a unit at a time.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "util/diag.h"
#include "util/out.h"
#include "util/files.h"
#include "util/encode.h"
#include "contract.h"
#include "tune/tune.h"

#define ETC_DIR    "/etc/systemd/system"
#define RUN_DIR    "/run/systemd/system"
#define LOCK_DIR   "/run/punctual"
#define DROP_IN    TUNE_DROP_IN
#define MEASURE_IN TUNE_MEASURE_IN
/* How often a measuring run looks whether the unit still runs. */
#define LOOK_NS 200000000LL

/* ---- names and systemctl ---------------------------------------------------------- */

/* systemd's unit name characters: a name from elsewhere (a cgroup's) with any other is
 * no unit's. */
#define UNIT_CHARS "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789:-_.\\@"

void tune_unit_name(const char *unit, char *name, size_t n)
{
	size_t len = strlen(unit);
	char safe[256];
	if (!len || unit[strspn(unit, UNIT_CHARS)] || len + 9 > n)
		usage_error("'%s' is not a unit name (NAME.service)",
		            text_safe(safe, sizeof(safe), unit));
	const char *dot = strrchr(unit, '.');
	if (dot && strcmp(dot, ".service") != 0)
		usage_error("%s: tune takes a service (NAME.service)", unit);
	snprintf(name, n, "%s%s", unit, dot ? "" : ".service");
	if (strstr(name, "@.service"))
		usage_error("%s is a template: give an instance (%.*s@INSTANCE.service)", name,
		            (int)(strlen(name) - 9), name);
}

/* ---- systemctl ---------------------------------------------------------------------- */

/* Runs systemctl with args, stderr to /dev/null, its stdout into buf (NULL: discarded):
 * its exit status, or -1 when it cannot run. */
#define SYSTEMCTL_ARGS 24
static int systemctl(char *buf, size_t n, const char *const *args)
{
	const char *argv[SYSTEMCTL_ARGS + 2] = {"systemctl"};
	int k = 0;
	for (; args[k] && k < SYSTEMCTL_ARGS; k++)
		argv[k + 1] = args[k];
	if (args[k]) /* a caller's mistake: never run a command cut short */
		return -1;
	int fd[2];
	if (pipe2(fd, O_CLOEXEC) != 0)
		return -1;
	fflush(NULL);
	pid_t c = fork();
	if (c == 0) {
		int null = open("/dev/null", O_RDWR);
		dup2(fd[1], 1);
		dup2(null, 2);
		execvp("systemctl", (char **)argv);
		_exit(127);
	}
	close(fd[1]);
	size_t len = 0;
	ssize_t r;
	char sink[256];
	while ((r = read(fd[0], buf ? buf + len : sink, buf ? n - 1 - len : sizeof(sink))) > 0)
		len += buf ? (size_t)r : 0;
	close(fd[0]);
	if (buf)
		buf[len] = '\0';
	int st;
	if (c < 0 || waitpid(c, &st, 0) != c)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* ---- the unit's state --------------------------------------------------------------- */

struct unit {
	const char *name;
	const char *shim;
	struct tune_unit_own own;
	bool was_active;           /* running when the tune began */
	bool measuring;            /* MEASURE_IN written */
	bool done;                 /* nothing left to put back */
	int cpus;                  /* what its quota allows, if fewer than online; else 0 */
	char rundir[NAME_MAX + 1]; /* the measuring runs' RuntimeDirectory=, under /run */
	char *runtime_env;         /* RUNTIME_DIRECTORY as the unit has it; NULL: none */
	int runs;                  /* each run has a records file of its own */
	char records[NAME_MAX + 32];
	char etc[512], run[512]; /* the .d directories */
};

static struct unit *restoring; /* what the exit handler puts back */
static char measure_path[600]; /* what a second signal removes */

static void measure_remove(void)
{
	unlink(measure_path);
}

/* Key's value in systemctl show's lines into v ("" when absent). */
static void prop(const char *show, const char *key, char *v, size_t n)
{
	size_t k = strlen(key);
	v[0] = '\0';
	for (const char *l = show; *l; l += strcspn(l, "\n") + (l[strcspn(l, "\n")] != 0))
		if (strncmp(l, key, k) == 0 && l[k] == '=')
			snprintf(v, n, "%.*s", (int)strcspn(l + k + 1, "\n"), l + k + 1);
}

/* One property of name into v ("" when systemctl cannot say). */
static void show1(const char *name, const char *key, char *v, size_t n)
{
	char show[4096];
	if (systemctl(show, sizeof(show),
	              (const char *const[]){"show", "-p", key, "--", name, NULL}) != 0)
		show[0] = '\0';
	prop(show, key, v, n);
}

static int reload(void)
{
	return systemctl(NULL, 0, (const char *const[]){"daemon-reload", NULL});
}

static int unit_do(const char *verb, const char *name)
{
	return systemctl(NULL, 0, (const char *const[]){verb, "--", name, NULL});
}

static char *path_in(char *buf, size_t n, const char *dir, const char *file)
{
	snprintf(buf, n, "%s/%s", dir, file);
	return buf;
}

static int render_drop_in(FILE *f, const void *arg)
{
	return tune_drop_in(f, arg);
}

/* Writes d as file in dir (created if missing): 0 or -errno. */
static int write_in(const char *dir, const char *file, const struct tune_drop *d)
{
	int at = dir_open(dir);
	if (at < 0)
		return at;
	int r = file_write_at(at, file, render_drop_in, d);
	close(at);
	return r;
}

/* Removes the measuring drop-in in dir, and dir if empty: whether there was one. */
static bool measure_gone(const char *dir)
{
	char p[600];
	path_in(p, sizeof(p), dir, MEASURE_IN);
	if (!tune_ours(p))
		return false;
	unlink(p);
	rmdir(dir); /* only when empty */
	return true;
}

/* Removes name under fd and what it holds, never through a link (the service's user owns
 * it), 8 levels deep at most. */
static void tree_remove(int at, const char *name, int depth)
{
	if (unlinkat(at, name, 0) == 0 || errno != EISDIR || depth == 0)
		return;
	int fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	for (struct dirent *e; (e = readdir(d));)
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
			tree_remove(dirfd(d), e->d_name, depth - 1);
	closedir(d);
	unlinkat(at, name, AT_REMOVEDIR);
}

/* The measuring runs' runtime directory's path into buf: buf. */
static char *rundir_path(const struct unit *u, char *buf, size_t n)
{
	snprintf(buf, n, "/run/%s", u->rundir);
	return buf;
}

/* Whether the runtime directory is there (a killed tune's, or ours). */
static bool rundir_there(const struct unit *u)
{
	char p[NAME_MAX + 8];
	struct stat st;
	return lstat(rundir_path(u, p, sizeof(p)), &st) == 0;
}

/* Removes the runtime directory, which systemd leaves once no setting names it. */
static void rundir_remove(const struct unit *u)
{
	int at = open("/run", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (at < 0)
		return;
	tree_remove(at, u->rundir, 8);
	close(at);
}

/* The exit handler: the unit as it was. */
static void unit_restore(void)
{
	struct unit *u = restoring;
	if (!u || u->done)
		return;
	u->done = true;
	if (u->measuring)
		measure_gone(u->run);
	reload();
	unit_do(u->was_active ? "restart" : "stop", u->name);
	rundir_remove(u);
}

/* ---- measuring ---------------------------------------------------------------------- */

/* Waits the run's length; exits 1 (restored) if the unit stops. */
static void unit_wait(const struct unit *u, const struct tune_setting *s, int64_t for_ns)
{
	for (int64_t left = for_ns; left > 0; left -= LOOK_NS) {
		int64_t step = left < LOOK_NS ? left : LOOK_NS;
		nanosleep(&(struct timespec){step / 1000000000, step % 1000000000}, NULL);
		if (tool_stop)
			die(1, "interrupted: %s put back as it was", u->name);
		char st[32];
		show1(u->name, "ActiveState", st, sizeof(st));
		if (strcmp(st, "active") != 0 && strcmp(st, "reloading") != 0)
			die(1,
			    "%s stopped under '%s' (%s) before the run's end: put back as it was",
			    u->name, s->name, st[0] ? st : "unknown");
	}
}

static int64_t now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* The CPU time, ns, of process pid's threads and waited-for children. */
static int64_t proc_cpu(long pid)
{
	char p[64], st[1024];
	int64_t sum = 0;
	snprintf(p, sizeof(p), "/proc/%ld/task", pid);
	DIR *d = opendir(p);
	for (struct dirent *e; d && (e = readdir(d));) {
		struct pn__runs r;
		if (e->d_name[0] != '.' &&
		    pn__runs_read_task((pid_t)pid, (pid_t)atol(e->d_name), &r) == 0)
			sum += (int64_t)r.exec_ns;
	}
	if (d)
		closedir(d);
	snprintf(p, sizeof(p), "/proc/%ld/stat", pid);
	FILE *f = fopen(p, "r");
	size_t n = f ? fread(st, 1, sizeof(st) - 1, f) : 0;
	if (f)
		fclose(f);
	st[n] = '\0';
	const char *c = strrchr(st, ')'); /* the name may hold anything but ends there */
	long long cu, cs, hz = sysconf(_SC_CLK_TCK);
	if (c && hz > 0 &&
	    sscanf(c + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %lld %lld", &cu,
	           &cs) == 2)
		sum += (cu + cs) * (1000000000LL / hz);
	return sum;
}

/* The CPU time, ns, of the processes in cgroup.procs f, which it closes. */
static int64_t procs_cpu(FILE *f)
{
	int64_t sum = 0;
	long pid;
	while (fscanf(f, "%ld", &pid) == 1)
		sum += proc_cpu(pid);
	fclose(f);
	return sum;
}

/* The unit's cgroup.procs (v2, hybrid's unified, or v1's name=systemd) open, or NULL. */
static FILE *unit_procs(const char *name)
{
	char v[1024];
	show1(name, "ControlGroup", v, sizeof(v));
	if (v[0] != '/')
		return NULL;
	static const char *const roots[] = {"/sys/fs/cgroup", "/sys/fs/cgroup/unified",
	                                    "/sys/fs/cgroup/systemd"};
	for (size_t i = 0; i < sizeof(roots) / sizeof(roots[0]); i++) {
		char p[1200];
		snprintf(p, sizeof(p), "%s%s/cgroup.procs", roots[i], v);
		FILE *f = fopen(p, "re");
		if (f)
			return f;
	}
	return NULL;
}

/* The CPU the unit used since its start: systemd's accounting, else its live processes';
 * -1: not known. */
static int64_t unit_cpu(const char *name)
{
	char v[1024], *end;
	show1(name, "CPUUsageNSec", v, sizeof(v));
	errno = 0;
	unsigned long long n = strtoull(v, &end, 10);
	if (v[0] && !*end && !errno && n < (1ULL << 62))
		return (int64_t)n;
	FILE *f = unit_procs(name);
	return f ? procs_cpu(f) : -1;
}

/* Every process of the unit traced with its main process: a service's work may be in a
 * child it forked before the trace began. Read twice: a fork between the reading and
 * the tracing of its parent is in the second. */
static void unit_trace_procs(const struct unit *u, struct tune_trace *trace)
{
	for (int pass = 0; pass < 2; pass++) {
		FILE *f = unit_procs(u->name);
		long pid;
		while (f && fscanf(f, "%ld", &pid) == 1)
			tune_trace_add(trace, pid);
		if (f)
			fclose(f);
	}
}

/* Reads the run's records into f, as root in a directory the service's user owns: only
 * that user's regular file, never through a link, else -EPERM. No file: no timed wait. 0
 * or -errno. */
static int unit_records(const struct unit *u, struct run_fig *f)
{
	char p[NAME_MAX + 8];
	const char *file = strrchr(u->records, '/') + 1;
	int dir =
	        open(rundir_path(u, p, sizeof(p)), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dir < 0)
		return errno == ENOENT ? 0 : -errno;
	struct stat ds = {0}, fs = {0};
	int fd = openat(dir, file, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	int e = fd < 0 ? -errno : fstat(dir, &ds) != 0 || fstat(fd, &fs) != 0 ? -errno : 0;
	close(dir);
	if (fd < 0)
		return e == -ENOENT ? 0 : e == -ELOOP ? -EPERM : e;
	if (!e && (!S_ISREG(fs.st_mode) || fs.st_uid != ds.st_uid))
		e = -EPERM;
	if (!e)
		e = run_records_fd(fd, f, NULL);
	close(fd);
	return e;
}

/* The unit's main process: exits 1 (put back) where it has none. */
static long unit_main_pid(const struct unit *u, const struct tune_setting *s)
{
	char pid[32];
	show1(u->name, "MainPID", pid, sizeof(pid));
	long p = atol(pid);
	if (p <= 0)
		die(1, "%s has no main process to trace under '%s': put back as it was", u->name,
		    s->name);
	return p;
}

/* The runner: the unit restarted under s with a new records file, read for_ns later (the
 * next restart ends the run); with trace, its processes traced instead. */
static void unit_runner(void *ctx, const struct tune_setting *s, int64_t for_ns,
                        struct tune_trace *trace, struct tune_run *r)
{
	struct unit *u = ctx;
	char dir[NAME_MAX + 8];
	snprintf(u->records, sizeof(u->records), "%s/records.%d", rundir_path(u, dir, sizeof(dir)),
	         ++u->runs);
	struct tune_drop d = {.s = s,
	                      .shim = u->shim,
	                      .own = &u->own,
	                      .records = u->records,
	                      .runtime_dir = u->rundir,
	                      .runtime_env = u->runtime_env};
	u->measuring = true;
	int e = write_in(u->run, MEASURE_IN, &d);
	if (e < 0)
		die(1, "cannot write %s/%s: %s", u->run, MEASURE_IN, strerror(-e));
	if (reload() != 0 || unit_do("restart", u->name) != 0)
		die(1, "cannot restart %s under '%s' (systemctl status %s): put back as it was",
		    u->name, s->name, u->name);
	int64_t t0 = now_ns();
	memset(r, 0, sizeof(*r));
	if (trace) {
		tune_trace_begin(trace, unit_main_pid(u, s), &r->traced);
		unit_trace_procs(u, trace);
	}
	unit_wait(u, s, for_ns);
	if (trace)
		tune_trace_end(trace);
	r->cpu_ns = unit_cpu(u->name);
	r->wall_ns = now_ns() - t0;
	e = unit_records(u, &r->fig);
	if (e == -EPERM)
		die(1,
		    "%s is not the service's records file (a regular file of %s's owner): not read",
		    u->records, dir);
	if (e < 0 && e != -EINVAL)
		die(1, "cannot read %s: %s", u->records, strerror(-e));
}

/* ---- before measuring --------------------------------------------------------------- */

/* Exits unless name can be restarted here: systemd as PID 1, root, a loaded service that
 * is not socket-activated nor a oneshot. Its own settings into u. */
static void unit_check(const char *name, struct unit *u)
{
	if (access(RUN_DIR, F_OK) != 0)
		die(1,
		    "systemd is not PID 1 here (no %s): no unit to restart; measure its "
		    "command with 'punctual tune --unit-file FILE'",
		    RUN_DIR);
	if (geteuid() != 0 || access(RUN_DIR, W_OK) != 0 || access(ETC_DIR, W_OK) != 0)
		die(EXIT_USAGE, "%s: no permission to write its drop-ins and restart it (root's)",
		    name);
	char show[16384], load[32], type[32], by[512], active[32], frag[1024], drop[4096];
	char dirs[4096];
	if (systemctl(show, sizeof(show),
	              (const char *const[]){"show", "-p", "LoadState", "-p", "Type", "-p",
	                                    "TriggeredBy", "-p", "ActiveState", "-p",
	                                    "FragmentPath", "-p", "DropInPaths", "-p",
	                                    "RuntimeDirectory", "--", name, NULL}) != 0)
		die(1, "%s: systemctl show failed", name);
	prop(show, "RuntimeDirectory", dirs, sizeof(dirs));
	free(u->runtime_env);
	u->runtime_env = tune_runtime_env(dirs, u->rundir);
	prop(show, "LoadState", load, sizeof(load));
	prop(show, "Type", type, sizeof(type));
	prop(show, "TriggeredBy", by, sizeof(by));
	prop(show, "ActiveState", active, sizeof(active));
	prop(show, "FragmentPath", frag, sizeof(frag));
	prop(show, "DropInPaths", drop, sizeof(drop));
	if (strcmp(load, "loaded") != 0)
		die(EXIT_USAGE, "%s is not loaded (LoadState=%s)", name,
		    load[0] ? load : "unknown");
	if (strstr(by, ".socket"))
		die(EXIT_USAGE, "%s is socket-activated (%s): a restart would not run it", name,
		    by);
	if (strcmp(type, "oneshot") == 0)
		die(EXIT_USAGE, "%s is a oneshot: nothing runs to measure; use 'tune -- CMD'",
		    name);
	u->was_active = strcmp(active, "active") == 0;
	tune_unit_own_free(&u->own); /* a second look */
	int r = tune_unit_own(frag, drop, &u->own);
	if (r < 0)
		die(1, "%s: cannot read its unit files (%s %s): %s", name, frag, drop,
		    tune_file_error(r));
}

/* The directory of tune's locks, root's alone and never a link (/run/lock is 1777).
 * Exits 1 otherwise. */
static int lock_dir(void)
{
	if (mkdir(LOCK_DIR, 0700) != 0 && errno != EEXIST)
		die(1, "cannot create %s: %s", LOCK_DIR, strerror(errno));
	int fd = open(LOCK_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0 || st.st_uid != 0 || (st.st_mode & (S_IWGRP | S_IWOTH)))
		die(1,
		    "%s is not a directory root alone may write (a link, or another's): no lock "
		    "taken in it",
		    LOCK_DIR);
	return fd;
}

/* One tune of name at a time, until the tool exits; exits 1 if another holds it. */
static void unit_lock(const char *name)
{
	char file[NAME_MAX + 1];
	if ((size_t)snprintf(file, sizeof(file), "tune-%s.lock", name) >= sizeof(file))
		usage_error("%s: its lock's name would pass a file name's %d bytes", name,
		            NAME_MAX);
	int dir = lock_dir();
	int fd = openat(dir, file, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0600);
	if (fd < 0)
		die(1, "cannot open %s/%s: %s", LOCK_DIR, file, strerror(errno));
	close(dir);
	if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
		char pid[24] = "";
		ssize_t n = pread(fd, pid, sizeof(pid) - 1, 0);
		pid[n > 0 ? n : 0] = '\0';
		size_t k = strspn(pid, "0123456789");
		bool digits = k > 0 && k <= 10 && (pid[k] == '\0' || !strcmp(pid + k, "\n"));
		pid[k] = '\0';
		if (digits)
			die(1, "another punctual tune of %s is running (PID %s): one at a time",
			    name, pid);
		die(1, "another punctual tune of %s is running (%s/%s is held): one at a time",
		    name, LOCK_DIR, file);
	}
	char pid[24];
	int n = snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
	if (ftruncate(fd, 0) != 0 || pwrite(fd, pid, (size_t)n, 0) != n) {
		/* the PID is only for the message */
	}
}

/* Whether a tune that was killed left its measuring drop-in or runtime directory. */
static bool unit_left(const struct unit *u)
{
	char p[600];
	return tune_ours(path_in(p, sizeof(p), u->run, MEASURE_IN)) || rundir_there(u);
}

/* Removes what a killed tune left. */
static void unit_leftovers(const struct unit *u, bool dry_run)
{
	char p[600], dir[NAME_MAX + 8];
	bool drop = tune_ours(path_in(p, sizeof(p), u->run, MEASURE_IN)), recs = rundir_there(u);
	rundir_path(u, dir, sizeof(dir));
	if (dry_run) {
		if (drop)
			fprintf(out, "would remove %s, which an interrupted tune left\n", p);
		if (recs)
			fprintf(out, "would remove %s, which an interrupted tune left\n", dir);
		return;
	}
	if (drop) {
		measure_gone(u->run);
		fprintf(stderr, "punctual tune: removed %s, which an interrupted tune left\n", p);
		reload();
	}
	if (recs) { /* no longer the unit's (reloaded): systemd would leave it */
		rundir_remove(u);
		fprintf(stderr, "punctual tune: removed %s, which an interrupted tune left\n", dir);
	}
}

/* --apply: exits 2 where a drop-in of tune's name is someone else's. */
static void unit_not_theirs(const struct unit *u)
{
	char p[600];
	path_in(p, sizeof(p), u->etc, DROP_IN);
	if (access(p, F_OK) == 0 && !tune_ours(p))
		die(EXIT_USAGE,
		    "%s was not written by punctual tune: not replacing it (move it to another "
		    "name to keep it, then tune again)",
		    p);
}

/* ---- after measuring ---------------------------------------------------------------- */

/* --apply: the kept setting's drop-in renamed over an earlier one (or tune's removed), the
 * measuring one removed; exits 1 (put back) when the unit does not start under it. */
static void unit_keep(struct unit *u, const struct tune_setting *kept)
{
	char p[600];
	if (kept) {
		struct tune_drop d = {.s = kept, .shim = u->shim, .own = &u->own, .cpus = u->cpus};
		int r = write_in(u->etc, DROP_IN, &d);
		if (r < 0)
			die(1, "cannot write %s/%s: %s", u->etc, DROP_IN, strerror(-r));
	} else if (tune_ours(path_in(p, sizeof(p), u->etc, DROP_IN))) {
		unlink(p);
		rmdir(u->etc); /* only when empty */
	}
	measure_gone(u->run);
	u->measuring = false;
	if (reload() != 0 || unit_do(u->was_active ? "restart" : "stop", u->name) != 0)
		die(1, "cannot restart %s (systemctl status %s)", u->name, u->name);
	u->done = true;
	rundir_remove(u);
	if (u->was_active) { /* one that exits at once under the drop-in is said so */
		char st[32];
		nanosleep(&(struct timespec){1, 0}, NULL);
		show1(u->name, "ActiveState", st, sizeof(st));
		if (strcmp(st, "active") != 0)
			die(1,
			    "%s stopped under the kept drop-in (%s): `punctual tune --revert %s` "
			    "removes it",
			    u->name, st[0] ? st : "unknown", u->name);
	}
}

/* The CPUs name's cgroup quota allows, where fewer than online; else 0. */
static int unit_cpus(const char *name)
{
	char pid[32];
	show1(name, "MainPID", pid, sizeof(pid));
	long p = atol(pid), online = sysconf(_SC_NPROCESSORS_ONLN);
	int n = p > 0 ? tune_pid_cpus(p) : 0;
	return n > 0 && n < online ? n : 0;
}

int tune_unit_rt(const char *name, char *why, size_t n)
{
	char show[4096], user[64], dyn[16], bound[2048], amb[2048];
	if (systemctl(show, sizeof(show),
	              (const char *const[]){"show", "-p", "User", "-p", "DynamicUser", "-p",
	                                    "CapabilityBoundingSet", "-p", "AmbientCapabilities",
	                                    "--", name, NULL}) != 0)
		return 0;
	prop(show, "User", user, sizeof(user));
	prop(show, "DynamicUser", dyn, sizeof(dyn));
	prop(show, "CapabilityBoundingSet", bound, sizeof(bound));
	prop(show, "AmbientCapabilities", amb, sizeof(amb));
	bool root = strcmp(dyn, "yes") != 0 &&
	            (!user[0] || !strcmp(user, "root") || !strcmp(user, "0"));
	if (root || strstr(amb, "cap_sys_nice"))
		return 0;
	if (!strstr(bound, "cap_sys_nice")) {
		snprintf(why, n, "its CapabilityBoundingSet= lacks CAP_SYS_NICE");
		return -1;
	}
	return 1;
}

/* ---- tune UNIT, tune --revert UNIT ---------------------------------------------------- */

static void unit_begin(const char *name, struct unit *u)
{
	u->name = name;
	snprintf(u->etc, sizeof(u->etc), "%s/%s.d", ETC_DIR, name);
	snprintf(u->run, sizeof(u->run), "%s/%s.d", RUN_DIR, name);
	tune_runtime_dir(name, u->rundir, sizeof(u->rundir));
	unit_check(name, u);
	unit_lock(name);
}

int tune_unit(const char *name, struct tune_setting *s, int n, int64_t for_ns, bool apply,
              tune_render *render)
{
	static struct unit u;
	unit_begin(name, &u);
	if (apply)
		unit_not_theirs(&u);
	u.shim = tune_shim();
	unit_leftovers(&u, false);
	unit_check(name, &u); /* without what was left */
	u.cpus = unit_cpus(name);
	restoring = &u;
	atexit(unit_restore);
	path_in(measure_path, sizeof(measure_path), u.run, MEASURE_IN);
	cleanup_on_signal(measure_remove);
	stop_on_hangup();
	static struct tune_outcome o;
	tune_measure(unit_runner, &u, s, n, for_ns, &o);
	stop_on_signals(); /* a signal's stop is seen after what follows */
	if (apply)
		unit_keep(&u, o.kept >= 0 ? &s[o.kept] : NULL);
	else
		unit_restore();
	stop_on_signals_end();
	char p[600];
	render(&o, u.cpus, path_in(p, sizeof(p), u.etc, DROP_IN));
	return 0;
}

int tune_unit_revert(const char *name, bool dry_run)
{
	static struct unit u;
	unit_begin(name, &u);
	char p[600];
	bool left = unit_left(&u);
	path_in(p, sizeof(p), u.etc, DROP_IN);
	unit_leftovers(&u, dry_run);
	if (access(p, F_OK) == 0 && !tune_ours(p))
		fprintf(out, "%s was not written by punctual tune: left as it is\n", p);
	bool kept = tune_ours(p);
	if (!kept && !left) {
		fprintf(out, "%s: no drop-in of punctual tune's; nothing to revert\n", name);
		return 0;
	}
	const char *then = u.was_active ? "restart" : "leave stopped";
	if (dry_run) {
		if (kept)
			fprintf(out, "would remove %s\n", p);
		fprintf(out, "would %s %s\n", then, name);
		return 0;
	}
	if (kept && unlink(p) != 0)
		die(1, "cannot remove %s: %s", p, strerror(errno));
	if (kept)
		fprintf(out, "removed %s\n", p);
	rmdir(u.etc); /* only when empty */
	if (reload() != 0 || (u.was_active && unit_do("restart", name) != 0))
		die(1, "%s: tune's drop-ins removed, but it did not restart (systemctl status %s)",
		    name, name);
	fprintf(out, "%s %s without tune's drop-ins\n", name,
	        u.was_active ? "restarted" : "left stopped");
	return 0;
}
