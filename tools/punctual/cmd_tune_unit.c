/* SPDX-License-Identifier: MIT */
/*
 * cmd_tune_unit.c: `punctual tune UNIT`: a systemd service measured under each setting
 * through a runtime drop-in (/run/systemd/system/UNIT.d/) and a restart, the best one
 * kept as a drop-in under /etc/systemd/system/UNIT.d/ with --apply. Every drop-in is
 * written whole (a temporary file, fsync, rename: files.c) and carries MARK, so --revert
 * removes exactly those. Whatever ends the tune early (a failed restart, a unit that
 * exits, an error), the exit handler puts back the drop-in an earlier tune wrote and the
 * unit's state: running or stopped.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cmd_tune.h"
#include "tool.h"

#define MARK    "# Written by punctual tune"
#define ETC_DIR "/etc/systemd/system"
#define RUN_DIR "/run/systemd/system"
#define DROP_IN TUNE_DROP_IN
/* sorts after DROP_IN, so that its settings win over an earlier tune's */
#define MEASURE_IN "60-punctual-tune-measure.conf"
#define OLD_MAX    4096
/* How often a measuring run looks whether the unit still runs. */
#define LOOK_NS 200000000LL

/* ---- the drop-in -------------------------------------------------------------------- */

/* v on f with systemd's specifier character doubled ("5%" -> "5%%"). */
static void unit_escaped(FILE *f, const char *v)
{
	for (; *v; v++)
		fputs(*v == '%' ? "%%" : (char[]){*v, 0}, f);
}

void tune_cpus_env(char *buf, size_t size, int n)
{
	snprintf(buf, size,
	         "PUNCTUAL_CPUS=%d GOMAXPROCS=%d OMP_NUM_THREADS=%d DOTNET_PROCESSOR_COUNT=%d "
	         "PYTHON_CPU_COUNT=%d JAVA_TOOL_OPTIONS=-XX:ActiveProcessorCount=%d",
	         n, n, n, n, n, n);
}

/* The Environment= line of d, if it needs one. */
static void drop_env(FILE *f, const struct tune_drop *d)
{
	const struct tune_setting *s = d->s;
	if (!s->precise && !s->slice && !d->records && !d->cpus)
		return;
	fprintf(f, "Environment=LD_PRELOAD=%s", d->shim);
	if (s->precise)
		fprintf(f, " PUNCTUAL_PRECISION=%d", TUNE_PRECISION_NS);
	if (s->slice) /* systemd has no slice setting: the shim sets it as it loads */
		fprintf(f, " PUNCTUAL_PROCESS_SLICE=%s", s->slice);
	if (s->precise && s->budget) {
		fputs(" PUNCTUAL_BUDGET=", f);
		unit_escaped(f, s->budget);
	}
	if (d->records)
		fprintf(f, " PUNCTUAL_STATS=1 PUNCTUAL_STATS_FILE=%s", d->records);
	if (d->cpus) {
		char env[256];
		tune_cpus_env(env, sizeof(env), d->cpus);
		fprintf(f, " %s", env);
	}
	fputc('\n', f);
}

int tune_drop_in(FILE *f, const struct tune_drop *d)
{
	const struct tune_setting *s = d->s;
	fprintf(f, "%s (%s); `punctual tune UNIT --revert` removes it.\n", MARK, s->name);
	if (s->precise || s->slice || d->records || d->cpus)
		fprintf(f, "# Its LD_PRELOAD replaces one the unit sets.\n");
	if (d->cpus)
		fprintf(f, "# The CPU count is advice from the cgroup's quota, not measured.\n");
	fprintf(f, "[Service]\n");
	drop_env(f, d);
	if (s->slack)
		fprintf(f, "TimerSlackNSec=1\n");
	if (d->records) /* a unit with ProtectSystem=strict may still append its records */
		fprintf(f, "ReadWritePaths=-%s\n", d->records);
	return ferror(f) ? -EIO : 0;
}

/* ---- the unit file's command -------------------------------------------------------- */

/* The next word of an ExecStart= line at *p (double or single quotes group), or NULL. */
static char *next_word(char **p)
{
	char *s = *p + strspn(*p, " \t"), *w = s, *o = s;
	if (!*s)
		return NULL;
	char quote = 0;
	for (; *s && (quote || (*s != ' ' && *s != '\t')); s++) {
		if (!quote && (*s == '"' || *s == '\''))
			quote = *s;
		else if (quote && *s == quote)
			quote = 0;
		else
			*o++ = *s;
	}
	*p = *s ? s + 1 : s;
	*o = '\0';
	return w;
}

/* The ExecStart= line of the [Service] section (the first that is not empty), or exit 2. */
static char *exec_line(const char *file)
{
	FILE *f = fopen(file, "r");
	if (!f)
		usage_error("--unit-file %s: %s", file, strerror(errno));
	char *line = NULL, *found = NULL;
	size_t cap = 0;
	bool service = false;
	while (!found && getline(&line, &cap, f) > 0) {
		line[strcspn(line, "\r\n")] = '\0';
		if (line[0] == '[')
			service = strcmp(line, "[Service]") == 0;
		else if (service && strncmp(line, "ExecStart=", 10) == 0 && line[10])
			found = strdup(line + 10);
	}
	free(line);
	fclose(f);
	if (!found)
		usage_error("--unit-file %s: no ExecStart= in its [Service] section", file);
	return found;
}

char **tune_unit_file_cmd(const char *file)
{
	char *line = exec_line(file), *p = line;
	bool at = false;
	for (; *p == '@' || strchr("-:+!|", *p); p++)
		at |= *p == '@';
	if (strpbrk(p, "%$\\"))
		usage_error("--unit-file %s: its ExecStart= has specifiers, variables or escapes, "
		            "which systemd expands: give the command as tune -- CMD",
		            file);
	/* one block, the words after the pointers: the caller frees it once */
	size_t len = strlen(p) + 1, max = len / 2 + 2;
	char **argv = calloc(1, max * sizeof(*argv) + len);
	if (!argv)
		die(1, "out of memory");
	char *words = memcpy((char *)(argv + max), p, len);
	free(line);
	size_t n = 0;
	for (char *w; (w = next_word(&words));)
		argv[n++] = w;
	if (at && n >= 2) /* "@": the second word is only the name the program sees */
		memmove(argv + 1, argv + 2, (n-- - 1) * sizeof(*argv));
	if (!n)
		usage_error("--unit-file %s: its ExecStart= is empty", file);
	return argv;
}

void tune_unit_name(const char *unit, char *name, size_t n)
{
	size_t len = strlen(unit);
	if (!len || strchr(unit, '/') || len + 9 > n)
		usage_error("'%s' is not a unit name (NAME.service)", unit);
	const char *dot = strrchr(unit, '.');
	if (dot && strcmp(dot, ".service") != 0)
		usage_error("%s: tune takes a service (NAME.service)", unit);
	snprintf(name, n, "%s%s", unit, dot ? "" : ".service");
	if (strstr(name, "@.service"))
		usage_error("%s is a template: give an instance (%.*s@INSTANCE.service)", name,
		            (int)(strlen(name) - 9), name);
}

/* ---- systemctl ---------------------------------------------------------------------- */

/* Runs systemctl with args (NULL-terminated), stderr to /dev/null, its stdout into buf
 * (n bytes, NUL-terminated; NULL: discarded): its exit status, or -1 when it cannot run. */
static int systemctl(char *buf, size_t n, const char *const *args)
{
	const char *argv[12] = {"systemctl"};
	for (int i = 0; args[i] && i < 10; i++)
		argv[i + 1] = args[i];
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
	int64_t for_ns;
	bool was_active; /* running when the tune began: running again at its end */
	char old[OLD_MAX];
	size_t old_len; /* an earlier tune's drop-in, put back unless one is kept */
	bool measuring; /* MEASURE_IN written */
	bool wrote;     /* DROP_IN written by this tune */
	bool done;      /* nothing left to put back */
	int cpus;       /* what its cgroup's quota allows, if fewer than online; else 0 */
	char records[64];
	char etc[512], run[512]; /* the .d directories */
};

static struct unit *restoring; /* what the exit handler puts back */
static char measure_path[600]; /* what a second signal removes (the rest needs systemctl) */

static void measure_remove(void)
{
	unlink(measure_path);
}

/* Key's value in systemctl show's "Key=Value" lines into v (n bytes; "" when absent). */
static void prop(const char *show, const char *key, char *v, size_t n)
{
	size_t k = strlen(key);
	v[0] = '\0';
	for (const char *l = show; *l; l += strcspn(l, "\n") + (l[strcspn(l, "\n")] != 0))
		if (strncmp(l, key, k) == 0 && l[k] == '=')
			snprintf(v, n, "%.*s", (int)strcspn(l + k + 1, "\n"), l + k + 1);
}

static void active_state(const char *name, char *v, size_t n)
{
	char show[256];
	if (systemctl(show, sizeof(show),
	              (const char *const[]){"show", "-p", "ActiveState", "--", name, NULL}) != 0)
		show[0] = '\0';
	prop(show, "ActiveState", v, n);
}

/* Whether path is a drop-in tune wrote (its first line is MARK). */
static bool ours(const char *path)
{
	char line[64] = "";
	FILE *f = fopen(path, "r");
	if (!f)
		return false;
	bool yes = fgets(line, sizeof(line), f) && strncmp(line, MARK, strlen(MARK)) == 0;
	fclose(f);
	return yes;
}

struct drop_in_arg {
	struct tune_drop d;
	const char *raw; /* an earlier drop-in put back as it was */
	size_t raw_len;
};

static int render_drop_in(FILE *f, const void *arg)
{
	const struct drop_in_arg *a = arg;
	if (a->raw)
		return fwrite(a->raw, 1, a->raw_len, f) == a->raw_len ? 0 : -EIO;
	return tune_drop_in(f, &a->d);
}

/* Writes file in dir (created if missing) whole: 0 or -errno. */
static int write_in(const char *dir, const char *file, const struct drop_in_arg *a)
{
	int at = dir_open(dir);
	if (at < 0)
		return at;
	int r = file_write_at(at, file, render_drop_in, a);
	close(at);
	return r;
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

/* The exit handler: the measuring drop-in removed, the earlier tune's drop-in back (or
 * none), the unit running or stopped as it was. */
static void unit_restore(void)
{
	struct unit *u = restoring;
	char p[600];
	if (!u || u->done)
		return;
	u->done = true;
	if (u->measuring) {
		unlink(path_in(p, sizeof(p), u->run, MEASURE_IN));
		rmdir(u->run); /* only when nothing else is in it */
	}
	if (u->wrote)
		unlink(path_in(p, sizeof(p), u->etc, DROP_IN));
	struct drop_in_arg old = {.raw = u->old, .raw_len = u->old_len};
	if (u->old_len && write_in(u->etc, DROP_IN, &old) < 0)
		fprintf(stderr, "punctual tune: cannot put back %s/%s\n", u->etc, DROP_IN);
	reload();
	unit_do(u->was_active ? "restart" : "stop", u->name);
	tune_records_remove();
}

/* Waits the run's length, looking that the unit still runs; exits 1 (restored) if not. */
static void unit_wait(struct unit *u, const struct tune_setting *s)
{
	for (int64_t left = u->for_ns; left > 0; left -= LOOK_NS) {
		nanosleep(&(struct timespec){0, LOOK_NS}, NULL);
		if (tool_stop)
			die(1, "interrupted: %s put back as it was", u->name);
		char st[32];
		active_state(u->name, st, sizeof(st));
		if (strcmp(st, "active") != 0 && strcmp(st, "reloading") != 0)
			die(1,
			    "%s stopped under '%s' (%s) before the run's end: put back as it was",
			    u->name, s->name, st[0] ? st : "unknown");
	}
}

/* The runner: the unit restarted under s with its records, run for_ns, then stopped so
 * that the shim writes them at its exit. */
static void unit_runner(void *ctx, const struct tune_setting *s, struct run_fig *f)
{
	struct unit *u = ctx;
	struct drop_in_arg a = {.d = {.s = s, .shim = u->shim, .records = u->records}};
	if (truncate(u->records, 0) != 0)
		die(1, "cannot empty %s: %s", u->records, strerror(errno));
	u->measuring = true;
	int r = write_in(u->run, MEASURE_IN, &a);
	if (r < 0)
		die(1, "cannot write %s/%s: %s", u->run, MEASURE_IN, strerror(-r));
	if (reload() != 0 || unit_do("restart", u->name) != 0)
		die(1, "cannot restart %s under '%s' (systemctl status %s): put back as it was",
		    u->name, s->name, u->name);
	unit_wait(u, s);
	unit_do("stop", u->name);
	memset(f, 0, sizeof(*f));
	FILE *in = fopen(u->records, "r");
	if (!in || run_records(in, f, NULL) < 0)
		die(1, "cannot read %s: %s", u->records, strerror(errno));
	fclose(in);
}

/* ---- tune UNIT ---------------------------------------------------------------------- */

/* Exits unless name can be restarted here: systemd as PID 1 (sd_booted's test), root's
 * permission, a loaded service that is not socket-activated and not a oneshot. */
static void unit_check(const char *name, bool *was_active)
{
	if (access(RUN_DIR, F_OK) != 0)
		die(1,
		    "systemd is not PID 1 here (no %s): no unit to restart; measure its "
		    "command with 'punctual tune --unit-file FILE'",
		    RUN_DIR);
	if (geteuid() != 0 || access(RUN_DIR, W_OK) != 0 || access(ETC_DIR, W_OK) != 0)
		die(EXIT_USAGE, "%s: no permission to write its drop-ins and restart it (root's)",
		    name);
	char show[2048], load[32], type[32], by[512], active[32];
	if (systemctl(show, sizeof(show),
	              (const char *const[]){"show", "-p", "LoadState", "-p", "Type", "-p",
	                                    "TriggeredBy", "-p", "ActiveState", "--", name,
	                                    NULL}) != 0)
		die(1, "%s: systemctl show failed", name);
	prop(show, "LoadState", load, sizeof(load));
	prop(show, "Type", type, sizeof(type));
	prop(show, "TriggeredBy", by, sizeof(by));
	prop(show, "ActiveState", active, sizeof(active));
	if (strcmp(load, "loaded") != 0)
		die(EXIT_USAGE, "%s is not loaded (LoadState=%s)", name,
		    load[0] ? load : "unknown");
	if (strstr(by, ".socket"))
		die(EXIT_USAGE, "%s is socket-activated (%s): a restart would not run it", name,
		    by);
	if (strcmp(type, "oneshot") == 0)
		die(EXIT_USAGE, "%s is a oneshot: nothing runs to measure; use 'tune -- CMD'",
		    name);
	*was_active = strcmp(active, "active") == 0;
}

/* An earlier tune's drop-in: kept in u, removed while measuring. */
static void unit_take_old(struct unit *u)
{
	char p[600];
	path_in(p, sizeof(p), u->etc, DROP_IN);
	if (!ours(p))
		return;
	FILE *f = fopen(p, "r");
	if (f) {
		u->old_len = fread(u->old, 1, sizeof(u->old), f);
		fclose(f);
	}
	if (unlink(p) != 0)
		die(1, "cannot remove %s: %s", p, strerror(errno));
}

/* With --apply: the measuring drop-in gone, the best setting's kept (or none), the unit
 * as it was; exits 1 (put back) when the unit does not start under it. */
static void unit_keep(struct unit *u, const struct tune_setting *best)
{
	char p[600];
	unlink(path_in(p, sizeof(p), u->run, MEASURE_IN));
	rmdir(u->run); /* only when nothing else is in it */
	u->measuring = false;
	if (best) {
		struct drop_in_arg a = {.d = {.s = best, .shim = u->shim, .cpus = u->cpus}};
		u->wrote = true;
		int r = write_in(u->etc, DROP_IN, &a);
		if (r < 0)
			die(1, "cannot write %s/%s: %s", u->etc, DROP_IN, strerror(-r));
	}
	if (reload() != 0 || unit_do(u->was_active ? "restart" : "stop", u->name) != 0)
		die(1, "cannot restart %s: put back as it was", u->name);
	if (u->was_active) { /* one that exits at once under the drop-in is put back */
		char st[32];
		nanosleep(&(struct timespec){1, 0}, NULL);
		active_state(u->name, st, sizeof(st));
		if (strcmp(st, "active") != 0)
			die(1, "%s stopped under the drop-in (%s): put back as it was", u->name,
			    st[0] ? st : "unknown");
	}
	u->old_len = 0; /* replaced, not stacked; or, measured no better, not kept */
	u->done = true;
	tune_records_remove();
}

/* The CPUs the quota of the cgroup of name's main process allows, where fewer than the
 * CPUs online; else 0 (also for a unit with no main process running). */
static int unit_cpus(const char *name)
{
	char show[256], pid[32];
	if (systemctl(show, sizeof(show),
	              (const char *const[]){"show", "-p", "MainPID", "--", name, NULL}) != 0)
		return 0;
	prop(show, "MainPID", pid, sizeof(pid));
	long p = atol(pid), online = sysconf(_SC_NPROCESSORS_ONLN);
	int n = p > 0 ? tune_pid_cpus(p) : 0;
	return n > 0 && n < online ? n : 0;
}

int tune_unit(const char *name, const struct tune_setting *s, int n, int64_t for_ns, bool apply,
              tune_render *render)
{
	static struct unit u;
	u.name = name;
	u.for_ns = for_ns;
	unit_check(name, &u.was_active);
	u.cpus = unit_cpus(name);
	if (!(u.shim = run_preload_path()))
		die(1, "libpunctual-preload.so not found (beside the punctual binary)");
	snprintf(u.etc, sizeof(u.etc), "%s/%s.d", ETC_DIR, name);
	snprintf(u.run, sizeof(u.run), "%s/%s.d", RUN_DIR, name);
	tune_records_create("/run", u.records, sizeof(u.records));
	restoring = &u;
	atexit(unit_restore);
	path_in(measure_path, sizeof(measure_path), u.run, MEASURE_IN);
	cleanup_on_signal(measure_remove);
	unit_take_old(&u);
	struct tune_result res[TUNE_SETTINGS_MAX];
	tune_measure(unit_runner, &u, s, n, res);
	int best = tune_best(res, n);
	if (apply)
		unit_keep(&u, best >= 0 ? &s[best] : NULL);
	else
		unit_restore();
	char p[600];
	render(s, res, n, best, u.cpus, path_in(p, sizeof(p), u.etc, DROP_IN));
	return 0;
}

int tune_unit_revert(const char *name)
{
	bool active;
	unit_check(name, &active);
	char p[600], d[512];
	int removed = 0;
	const char *const dirs[] = {ETC_DIR, RUN_DIR}, *const files[] = {DROP_IN, MEASURE_IN};
	for (int i = 0; i < 2; i++) {
		snprintf(d, sizeof(d), "%s/%s.d", dirs[i], name);
		if (!ours(path_in(p, sizeof(p), d, files[i])))
			continue;
		if (unlink(p) != 0)
			die(1, "cannot remove %s: %s", p, strerror(errno));
		fprintf(out, "removed %s\n", p);
		removed++;
		rmdir(d); /* only when nothing else is in it */
	}
	if (!removed) {
		fprintf(out, "%s: no drop-in of punctual tune's; nothing to revert\n", name);
		return 0;
	}
	if (reload() != 0 || (active && unit_do("restart", name) != 0))
		die(1, "%s: its drop-ins removed, but it did not restart (systemctl status %s)",
		    name, name);
	fprintf(out, "%s %s without them\n", name, active ? "restarted" : "left stopped");
	return 0;
}
