/* SPDX-License-Identifier: MIT */
/*
 * `punctual run`: runs a command with timing settings it inherits, as nice(1) and
 * taskset(1) do for priority and affinity. Each setting is parsed, checked, then applied
 * just before exec: the command's exit status is the status, and a setting that survives
 * exec is in force from its first instruction.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <punctual/cpus.h>
#include <punctual/slack.h>
#include <punctual/sleep.h>
#include "contract.h"
#include "util/diag.h"
#include "util/opts.h"
#include "commands.h"
#include "run/runs.h"

/* env(1)'s statuses when the command cannot be run. */
enum { EXIT_CANNOT_INVOKE = 126, EXIT_NOT_FOUND = 127 };

static const char usage[] =
        "usage: punctual run [--slack VALUE] [--precise[=PRECISION] [--budget=B%]\n"
        "                    [--rt[=PRIO]]] [--slice=S] [--stats [--explain[=D]]\n"
        "                    [--runs N]] [--cpus[=N]] [--] CMD [ARGS...]\n"
        "\n"
        "Runs CMD with the given settings, which it and its threads and children inherit.\n"
        "The exit status is CMD's; 127 if CMD is not found, 126 if it cannot be run.\n"
        "Options end at CMD: what follows it is CMD's.\n"
        "\n"
        "  -s, --slack VALUE  timer slack for CMD: a duration (1ns, 50us, 1ms) in whole\n"
        "                     ns (0.5ns is refused); 0 or 'default' is the default this\n"
        "                     process inherited\n"
        "      --precise[=P]  make CMD's sleeps precise without recompiling it: preloads\n"
        "                     libpunctual-preload.so (appended to LD_PRELOAD), which\n"
        "                     makes nanosleep, clock_nanosleep, usleep,\n"
        "                     pthread_cond_timedwait, pthread_cond_clockwait, poll,\n"
        "                     ppoll, epoll_wait, epoll_pwait, epoll_pwait2, select,\n"
        "                     pselect, sem_timedwait, sem_clockwait and sigtimedwait wake\n"
        "                     never early and at most P late (default 10us). Statically\n"
        "                     linked, setuid and setcap programs ignore LD_PRELOAD:\n"
        "                     punctual says so and runs them anyway. Raw system calls\n"
        "                     (Go, io_uring) and timerfd loops are out of its reach.\n"
        "                     The calls, signals, learning, shared CPUs and limits:\n"
        "                     man punctual, sections \"run --precise: ...\".\n"
        "      --budget=B%    with --precise: the CPU each of CMD's threads may spend in\n"
        "                     precise waits, B% of its time over any second (0% never\n"
        "                     spins; 100% is precision at any cost). Default: measured,\n"
        "                     the margin grows while 1% more CPU puts 0.1% more waits on\n"
        "                     time, up to 25% at sleeps of 1 ms or more (PUNCTUAL_BUDGET)\n"
        "      --slice=S      with --precise: the EEVDF slice each waiting thread asks\n"
        "                     for (Linux 6.12+), so that its wakeup preempts threads with\n"
        "                     longer ones on a shared CPU, its CPU share unchanged: a\n"
        "                     duration in [100us, 100ms], 'off' (the kernel's own), or\n"
        "                     'auto' (default: learned, about the p95 of its runs)\n"
        "                     (PUNCTUAL_SLICE). Alone: CMD's slice, a duration, which\n"
        "                     its threads and children inherit (chrt -o -T)\n"
        "      --rt[=PRIO]    with --precise: each waiting thread becomes SCHED_FIFO at\n"
        "                     PRIO (1-99, default 10) for good, its own work too, before\n"
        "                     its first precise wait; children SCHED_OTHER (reset on\n"
        "                     fork). RISK: RLIMIT_RTTIME becomes 1 s, so a thread that\n"
        "                     computes 1 s without blocking is killed (SIGXCPU), and\n"
        "                     while it computes its CPU's other tasks wait. Without\n"
        "                     --rt, a thread on a shared CPU already waits under\n"
        "                     SCHED_FIFO where permitted, for its waits alone. Refused\n"
        "                     unless permitted: CAP_SYS_NICE or RLIMIT_RTPRIO >= PRIO\n"
        "                     (PUNCTUAL_RT)\n"
        "      --stats        at exit, on stderr, each thread's timed waits: how late\n"
        "                     each woke past the deadline it asked for (p50, p99,\n"
        "                     p99.9, max). Alone, CMD's waits stay as it makes them\n"
        "                     (slack untouched; the shim only times them); with\n"
        "                     --precise, its precise waits, those late beyond P, the\n"
        "                     spin's share of the time, its budget and slice, the\n"
        "                     lateness saved (the kernel parts' own wakeups -> the\n"
        "                     precise waits) and the CPU spun\n"
        "      --explain[=D]  with --stats: the causes of each thread's waits later than\n"
        "                     D (default: twice its median lateness; with --precise, P):\n"
        "                     throttled, preempted, migrated, slack or wakeup, counted.\n"
        "                     Reads the thread's schedstat around every timed wait\n"
        "      --runs N       with --stats: runs CMD N times, one after the other; a line\n"
        "                     per run and the spread (mean, sd, min, max) of its waits\n"
        "                     and their p50, p99 and max lateness; with --explain, the\n"
        "                     causes over all the runs. A failing run stops the\n"
        "                     series; its status is the exit status, else 0\n"
        "      --cpus[=N]     CMD sees N CPUs (default: what `punctual cpus` counts, the\n"
        "                     cgroup's quota included) wherever runtimes look: the shim\n"
        "                     answers sysconf(_SC_NPROCESSORS_ONLN) and get_nprocs(), and\n"
        "                     JAVA_TOOL_OPTIONS gains -XX:ActiveProcessorCount=N;\n"
        "                     GOMAXPROCS, OMP_NUM_THREADS (nproc, OpenMP, OpenBLAS),\n"
        "                     DOTNET_PROCESSOR_COUNT and PYTHON_CPU_COUNT are set to N.\n"
        "                     A value already set is kept (said on stderr). The affinity\n"
        "                     mask is unchanged: CMD may still run on every CPU it had.\n"
        "At least one of --slack, --precise, --cpus, --stats and --slice is needed.\n"
        "Durations take a unit: ns, us, ms, s, m, h, or terms as 1m30s (0 needs none).\n"
        "  -h, --help         this text\n";

struct run_settings {
	bool slack;
	int64_t slack_ns;
	bool precise;
	int64_t precision_ns;
	const char *budget; /* PUNCTUAL_BUDGET's value, or NULL */
	const char *slice;  /* PUNCTUAL_SLICE's value, or NULL */
	int64_t slice_ns;   /* ns, PN_SLEEP_SLICE_AUTO or _OFF */
	int rt;             /* PUNCTUAL_RT's priority; 0: none */
	bool stats;
	const char *explain; /* PUNCTUAL_EXPLAIN's value, or NULL */
	long runs;           /* --runs: 0 for one run by exec */
	bool cpus;
	int cpus_n; /* 0: pn_cpu_count()'s answer */
};

static void run_check(const struct run_settings *s)
{
	if (s->budget && !s->precise)
		usage_error("--budget needs --precise: it is the precise waits' CPU budget");
	if (s->slice && !s->precise && s->slice_ns <= 0)
		usage_error("--slice=%s needs --precise (it is the precise waiters'); alone, "
		            "--slice takes a duration",
		            s->slice);
	if (s->rt && !s->precise)
		usage_error("--rt needs --precise: it is the precise waiters' policy");
	if (s->explain && !s->stats)
		usage_error("--explain needs --stats: it explains the waits --stats measures");
	if (s->runs && !s->stats)
		usage_error("--runs needs --stats: it spreads the statistics across runs");
	if (!s->slack && !s->precise && !s->cpus && !s->stats && !s->slice)
		usage_error(
		        "nothing to do: give --slack VALUE, --precise, --cpus, --stats or --slice");
}

/* The shim: $PUNCTUAL_PRELOAD, else beside this binary, else in the lib directory next to
 * its bin directory, else where the build was configured to install it. */
const char *run_preload_path(void)
{
	static char p[PATH_MAX];
	const char *env = getenv("PUNCTUAL_PRELOAD");
	if (env && *env)
		return access(env, R_OK) == 0 ? env : NULL;
	ssize_t n = readlink("/proc/self/exe", p, sizeof(p) - 64);
	if (n > 0) {
		p[n] = '\0';
		char *slash = strrchr(p, '/');
		if (slash) {
			strcpy(slash + 1, "libpunctual-preload.so"); /* a build tree */
			if (access(p, R_OK) == 0)
				return p;
			strcpy(slash + 1, PN_BIN_TO_LIB "/libpunctual-preload.so"); /* installed */
			if (access(p, R_OK) == 0)
				return p;
		}
	}
	return access(PN_PRELOAD_PATH, R_OK) == 0 ? PN_PRELOAD_PATH : NULL;
}

/* CMD as execvp will find it, or NULL. */
static const char *find_cmd(const char *cmd, char *buf, size_t n)
{
	if (strchr(cmd, '/'))
		return cmd;
	const char *path = getenv("PATH");
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (const char *d = path; *d;) {
		size_t len = strcspn(d, ":");
		snprintf(buf, n, "%.*s%s%s", (int)len, d, len ? "/" : "", cmd);
		if (access(buf, X_OK) == 0)
			return buf;
		d += len + (d[len] == ':');
	}
	return NULL;
}

/* Why LD_PRELOAD cannot reach CMD, or NULL: a static executable, or one run in secure mode
 * (setuid or setgid run by someone else, file capabilities run by a user other than
 * root). Scripts are not checked. */
static const char *preload_blocked(const char *file)
{
	struct stat st;
	if (stat(file, &st) != 0)
		return NULL;
	if (((st.st_mode & S_ISUID) && st.st_uid != geteuid()) ||
	    ((st.st_mode & S_ISGID) && st.st_gid != getegid()))
		return "is setuid or setgid: the loader ignores LD_PRELOAD for it";
	/* an exec that gains file capabilities is secure unless the real user is root; the
	 * attribute's presence is the test */
	if (getuid() != 0 && getxattr(file, "security.capability", NULL, 0) > 0)
		return "has file capabilities (setcap): the loader ignores LD_PRELOAD for it";
	int fd = open(file, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	/* no PT_INTERP, no loader to preload with: static, or static-pie */
	Elf64_Ehdr eh;
	const char *why = NULL;
	if (read(fd, &eh, sizeof(eh)) == sizeof(eh) && memcmp(eh.e_ident, ELFMAG, SELFMAG) == 0 &&
	    eh.e_ident[EI_CLASS] == ELFCLASS64 && (eh.e_type == ET_EXEC || eh.e_type == ET_DYN)) {
		why = "is statically linked: there is no dynamic loader to preload with";
		for (int i = 0; i < eh.e_phnum && why; i++) {
			Elf64_Phdr ph;
			if (pread(fd, &ph, sizeof(ph),
			          (off_t)(eh.e_phoff + (uint64_t)i * eh.e_phentsize)) != sizeof(ph))
				break;
			if (ph.p_type == PT_INTERP)
				why = NULL;
		}
	}
	close(fd);
	return why;
}

/* Appends the shim to LD_PRELOAD once. */
static void add_preload(const char *opt, const char *cmd)
{
	const char *shim = run_preload_path();
	if (!shim)
		die(1, "%s: libpunctual-preload.so not found (beside %s, or %s)", opt,
		    "the punctual binary", PN_PRELOAD_PATH);
	/* the loader splits LD_PRELOAD at spaces and colons without quoting, and no stand-in
	 * path is clean (a symlink outlives the command, /proc/self/fd/N means another file
	 * in each child) */
	if (strpbrk(shim, " :"))
		die(1,
		    "%s: LD_PRELOAD cannot hold '%s' (the loader splits it at spaces and "
		    "colons): set PUNCTUAL_PRELOAD to a copy at a path without them",
		    opt, shim);
	char buf[PATH_MAX];
	const char *file = find_cmd(cmd, buf, sizeof(buf));
	const char *why = file ? preload_blocked(file) : NULL;
	if (why)
		fprintf(stderr, "punctual run: %s %s; %s cannot apply, running it anyway\n", cmd,
		        why, opt);
	const char *old = getenv("LD_PRELOAD");
	char *val;
	if (old && *old) {
		if (asprintf(&val, "%s:%s", old, shim) < 0)
			die(1, "out of memory");
	} else {
		val = strdup(shim);
	}
	if (!val || setenv("LD_PRELOAD", val, 1) != 0)
		die(1, "cannot set the environment: %s", strerror(errno));
	free(val);
}

static void set_env(const char *name, const char *val)
{
	if (setenv(name, val, 1) != 0)
		die(1, "cannot set the environment: %s", strerror(errno));
}

/* --rt: refused where this process may not take SCHED_FIFO at prio (tried in a child),
 * else RLIMIT_RTTIME bounded for CMD and PUNCTUAL_RT set. */
static void apply_rt(int prio)
{
	struct pn__sched_attr fifo = {
	        .policy = SCHED_FIFO, .priority = (uint32_t)prio, .flags = PN__SCHED_RESET_ON_FORK};
	fflush(NULL);
	pid_t c = fork();
	if (c == 0)
		_exit(-pn__sched_set(&fifo) & 0xff);
	int st = 0;
	if (c < 0 || waitpid(c, &st, 0) != c || !WIFEXITED(st))
		die(1, "--rt: cannot try SCHED_FIFO: %s", strerror(c < 0 ? errno : EINVAL));
	int r = WEXITSTATUS(st);
	if (r == EPERM)
		die(EXIT_USAGE,
		    "--rt=%d: SCHED_FIFO is not permitted here (it needs CAP_SYS_NICE, or "
		    "RLIMIT_RTPRIO >= %d)",
		    prio, prio);
	if (r)
		die(EXIT_USAGE, "--rt=%d: %s", prio, strerror(r));
	if ((r = pn__rt_limit()) < 0)
		die(1, "--rt: cannot bound RLIMIT_RTTIME: %s", strerror(-r));
	char v[8];
	snprintf(v, sizeof(v), "%d", prio);
	set_env("PUNCTUAL_RT", v);
}

/* --slice=D without --precise: CMD's EEVDF slice, set on this process before exec so that
 * CMD's threads and children inherit it. Refused where the policy is not SCHED_OTHER or
 * SCHED_BATCH, or the kernel does not keep it (before 6.12 it does not read back). */
static void apply_slice(const char *val, int64_t ns)
{
	struct pn__sched_attr a;
	int64_t got = pn__slice_set_self(ns);
	if (got == -EOPNOTSUPP && pn__sched_get(&a) == 0) {
		const char *policy = a.policy == SCHED_FIFO   ? "SCHED_FIFO"
		                     : a.policy == SCHED_RR   ? "SCHED_RR"
		                     : a.policy == SCHED_IDLE ? "SCHED_IDLE"
		                                              : "SCHED_DEADLINE";
		die(EXIT_USAGE,
		    "--slice: the policy is %s, and a slice is SCHED_OTHER's or SCHED_BATCH's",
		    policy);
	}
	if (got < 0)
		die(1, "--slice=%s: %s", val, strerror((int)-got));
	if (got != ns)
		die(1, "--slice=%s: this kernel does not keep a slice (Linux 6.12 or later does)",
		    val);
}

static void apply_precise(const struct run_settings *s)
{
	char prec[32];
	snprintf(prec, sizeof(prec), "%lld", (long long)s->precision_ns);
	set_env("PUNCTUAL_PRECISION", prec);
	if (s->budget)
		set_env("PUNCTUAL_BUDGET", s->budget);
	if (s->slice)
		set_env("PUNCTUAL_SLICE", s->slice);
	if (s->rt)
		apply_rt(s->rt);
	if (s->stats)
		set_env("PUNCTUAL_STATS", "1");
}

/* PUNCTUAL_EXPLAIN: the given threshold, else unset. */
static void apply_explain(const struct run_settings *s)
{
	if (s->explain)
		set_env("PUNCTUAL_EXPLAIN", s->explain);
	else if (unsetenv("PUNCTUAL_EXPLAIN") != 0)
		die(1, "cannot set the environment: %s", strerror(errno));
}

/* --slice's value, checked and passed on as given, or exit 2. */
static const char *opt_slice(const char *s, int64_t *slice_ns)
{
	if (!s)
		usage_error("--slice needs a value");
	int r = pn__slice_parse(s, slice_ns);
	if (r == -ERANGE)
		usage_error("--slice: %s is out of the kernel's range [100us, 100ms]", s);
	if (r < 0)
		usage_error("--slice: '%s' is not a duration with its unit, auto or off", s);
	return s;
}

/* --explain's value: a positive duration, or none ("auto"). */
static const char *opt_explain(const char *s)
{
	static char ns[32];
	if (!s)
		return "auto";
	int64_t v = opt_duration("--explain", s);
	if (v <= 0)
		usage_error("--explain: '%s' must be positive", s);
	snprintf(ns, sizeof(ns), "%lld", (long long)v);
	return ns;
}

/* The variables runtimes size themselves from, set to n unless the user set them (a
 * table in punctual(1)). */
static const char *const cpu_vars[] = {
        "GOMAXPROCS",
        "OMP_NUM_THREADS",
        "DOTNET_PROCESSOR_COUNT",
        "PYTHON_CPU_COUNT",
};

/* Appends "NAME=VALUE" (or "NAME=...VALUE", cut to len) to the kept list, controls as '?'. */
static void kept_add(char *kept, size_t n, const char *name, const char *val, size_t len, bool cut)
{
	size_t at = strlen(kept);
	int w = snprintf(kept + at, n - at, "%s%s=%s", at ? ", " : "", name, cut ? "..." : "");
	if (w < 0 || (at += (size_t)w) >= n - 1)
		return;
	size_t i;
	for (i = 0; val[i] && i < len && i < 60 && at < n - 4; i++)
		kept[at++] = (unsigned char)val[i] < 0x20 || val[i] == 0x7f ? '?' : val[i];
	if (val[i] && i < len)
		memcpy(kept + at, "...", 3), at += 3;
	kept[at] = '\0';
}

static void apply_cpus(const struct run_settings *s)
{
	int n = s->cpus_n ? s->cpus_n : pn_cpu_count();
	char num[16], kept[1024] = "";
	snprintf(num, sizeof(num), "%d", n);
	set_env("PUNCTUAL_CPUS", num); /* the shim answers the libc count queries */
	for (size_t i = 0; i < sizeof(cpu_vars) / sizeof(cpu_vars[0]); i++) {
		const char *v = getenv(cpu_vars[i]);
		if (v && *v)
			kept_add(kept, sizeof(kept), cpu_vars[i], v, SIZE_MAX, false);
		else
			set_env(cpu_vars[i], num);
	}
	/* the JVM reads JAVA_TOOL_OPTIONS and the last flag wins: one already there is the
	 * user's choice */
	const char *jto = getenv("JAVA_TOOL_OPTIONS");
	const char *apc = jto ? strstr(jto, "-XX:ActiveProcessorCount=") : NULL;
	if (apc) { /* the flag alone */
		kept_add(kept, sizeof(kept), "JAVA_TOOL_OPTIONS", apc, strcspn(apc, " \t\n"),
		         apc != jto);
	} else {
		char *val;
		if (asprintf(&val, "%s%s-XX:ActiveProcessorCount=%d", jto ? jto : "",
		             jto && *jto ? " " : "", n) < 0)
			die(1, "out of memory");
		set_env("JAVA_TOOL_OPTIONS", val);
		free(val);
	}
	/* a program linked with libpunctual: a forced count overrides it too */
	if (s->cpus_n) {
		const char *v = getenv("PUNCTUAL_CPU_COUNT");
		if (v && *v)
			kept_add(kept, sizeof(kept), "PUNCTUAL_CPU_COUNT", v, SIZE_MAX, false);
		else
			set_env("PUNCTUAL_CPU_COUNT", num);
	}
	if (kept[0])
		fprintf(stderr, "punctual run: --cpus=%d: kept what the environment set: %s\n", n,
		        kept);
}

static void run_apply(const struct run_settings *s, const char *cmd)
{
	if (s->precise || s->cpus || s->stats)
		add_preload(s->precise && s->cpus ? "--precise and --cpus"
		            : s->precise          ? "--precise"
		            : s->cpus             ? "--cpus"
		                                  : "--stats",
		            cmd);
	if (s->precise) {
		apply_precise(s);
	} else if (s->stats) { /* observed only */
		if (unsetenv("PUNCTUAL_PRECISION") != 0)
			die(1, "cannot set the environment: %s", strerror(errno));
		set_env("PUNCTUAL_STATS", "1");
	}
	if (s->stats)
		apply_explain(s);
	if (s->cpus)
		apply_cpus(s);
	if (s->slice && !s->precise)
		apply_slice(s->slice, s->slice_ns);
	if (s->slack) {
		int r = pn_slack_set(s->slack_ns);
		if (r < 0)
			die(EXIT_USAGE, "--slack: %lld ns: %s", (long long)s->slack_ns,
			    pn_strerror(r));
	}
}

int cmd_run(int argc, char **argv)
{
	static char budget[32]; /* --budget's PUNCTUAL_BUDGET form */
	static const struct option opts[] = {
	        {"slack", required_argument, NULL, 's'},
	        {"precise", optional_argument, NULL, 'P'},
	        {"cpus", optional_argument, NULL, 'C'},
	        {"budget", required_argument, NULL, 'B'},
	        {"slice", required_argument, NULL, 'L'},
	        {"rt", optional_argument, NULL, 'R'},
	        {"stats", no_argument, NULL, 'S'},
	        {"explain", optional_argument, NULL, 'E'},
	        {"runs", required_argument, NULL, 'N'},
	        {"help", no_argument, NULL, 'h'},
	        {0},
	};
	struct run_settings set = {0};
	tool_cmd = "run";
	int c;
	/* "+": stop at CMD, whose options are its own */
	while ((c = next_opt(argc, argv, "+:s:h", opts, usage)) != -1) {
		switch (c) {
		case 's':
			set.slack = true;
			set.slack_ns = opt_slack("--slack", optarg);
			break;
		case 'P':
			set.precise = true;
			set.precision_ns = optarg ? opt_duration("--precise", optarg) : 10000;
			break;
		case 'B':
			set.budget = opt_budget(optarg, budget, sizeof(budget));
			break;
		case 'L':
			set.slice = opt_slice(optarg, &set.slice_ns);
			break;
		case 'R':
			set.rt = optarg ? (int)opt_long("--rt", optarg, 1, 99) : 10;
			break;
		case 'S':
			set.stats = true;
			break;
		case 'E':
			set.explain = opt_explain(optarg);
			break;
		case 'N':
			set.runs = opt_long("--runs", optarg, 1, 1000000);
			break;
		case 'C':
			set.cpus = true;
			set.cpus_n =
			        optarg ? (int)opt_long("--cpus", optarg, 1, PN_CPU_COUNT_MAX) : 0;
			break;
		}
	}
	run_check(&set);
	if (optind >= argc)
		usage_error("missing the command to run");

	char **cmd = argv + optind;
	/* `--cpus 3 make`: an optional value attaches with '=', so 3 would be the command */
	if (set.cpus && !set.cpus_n && cmd[0][0] && !cmd[0][strspn(cmd[0], "0123456789")])
		usage_error(
		        "--cpus %s: give the count as --cpus=%s (%s would be run as the command)",
		        cmd[0], cmd[0], cmd[0]);
	run_apply(&set, cmd[0]);
	if (set.runs)
		return run_runs(cmd, set.runs, set.explain, set.precise ? set.precision_ns : -1);
	execvp(cmd[0], cmd);
	int e = errno;
	die(e == ENOENT ? EXIT_NOT_FOUND : EXIT_CANNOT_INVOKE, "%s: %s", cmd[0], strerror(e));
}
