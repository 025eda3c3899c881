/* SPDX-License-Identifier: MIT */
/*
 * cmd_run.c: `punctual run`: runs a command with timing settings it inherits, the way
 * nice(1) and taskset(1) do for priority and affinity. Each setting is parsed into
 * struct run_settings, checked, then applied by its own function just before exec, which
 * replaces this process: the command's exit status is the status, and a setting that
 * survives exec (timer slack does) is in force from the command's first instruction.
 *
 * A new setting adds a member, a case in the option loop, a check in run_check() and a
 * step in run_apply().
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <punctual/slack.h>
#include "tool.h"

/* env(1)'s statuses when the command cannot be run. */
enum { EXIT_CANNOT_INVOKE = 126, EXIT_NOT_FOUND = 127 };

static const char usage[] =
        "usage: punctual run [--slack VALUE] [--precise[=PRECISION]] [--] CMD [ARGS...]\n"
        "\n"
        "Runs CMD with the given settings, which it and its threads and children inherit.\n"
        "The exit status is CMD's; 127 if CMD is not found, 126 if it cannot be run.\n"
        "Options end at CMD: what follows it is CMD's.\n"
        "\n"
        "  -s, --slack VALUE  timer slack for CMD: a duration (1, 1ns, 50us, 1ms; a bare\n"
        "                     number is ns), whole ns (0.5 is refused); 0 or 'default'\n"
        "                     is the default this process inherited\n"
        "      --precise[=P]  make CMD's sleeps precise without recompiling it: preloads\n"
        "                     libpunctual-preload.so (appended to LD_PRELOAD), which makes\n"
        "                     nanosleep, clock_nanosleep, usleep, pthread_cond_timedwait,\n"
        "                     pthread_cond_clockwait, poll, ppoll, epoll_wait, epoll_pwait\n"
        "                     and epoll_pwait2 wake never early and at most P late\n"
        "                     (default 10us). Statically linked and setuid programs\n"
        "                     ignore LD_PRELOAD: punctual says so and runs them anyway.\n"
        "At least one of --slack and --precise is needed.\n"
        "  -h, --help         this text\n";

struct run_settings {
	bool slack;
	int64_t slack_ns;
	bool precise;
	int64_t precision_ns;
};

static void run_check(const struct run_settings *s)
{
	if (!s->slack && !s->precise)
		usage_error("nothing to set: give --slack VALUE or --precise");
}

/* The shim: $PUNCTUAL_PRELOAD, else beside this binary (a build tree), else in the lib
 * directory next to its bin directory, else where `make install` was configured to put
 * it. */
static const char *preload_path(void)
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

/* Why LD_PRELOAD cannot reach CMD, or NULL: an ELF executable without an interpreter is
 * statically linked; a setuid or setgid one run by someone else runs in secure mode,
 * where the loader ignores LD_PRELOAD paths. Scripts get their interpreter's answer:
 * not checked. */
static const char *preload_blocked(const char *file)
{
	struct stat st;
	if (stat(file, &st) != 0)
		return NULL;
	if (((st.st_mode & S_ISUID) && st.st_uid != geteuid()) ||
	    ((st.st_mode & S_ISGID) && st.st_gid != getegid()))
		return "is setuid or setgid: the loader ignores LD_PRELOAD for it";
	int fd = open(file, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	/* An executable without PT_INTERP has no loader to preload with: static, or
	 * static-pie (which has PT_DYNAMIC for relocating itself, but no PT_INTERP). */
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

static void apply_precise(const struct run_settings *s, const char *cmd)
{
	const char *shim = preload_path();
	if (!shim)
		die(1, "--precise: libpunctual-preload.so not found (beside %s, or %s)",
		    "the punctual binary", PN_PRELOAD_PATH);
	/* The loader splits LD_PRELOAD at spaces and colons and has no quoting: such a path
	 * would preload nothing, silently. No stand-in path is clean either: a symlink in a
	 * temporary directory outlives the command (exec leaves no one to remove it), and a
	 * /proc/self/fd/N path means another file, or none, in every child that inherits
	 * LD_PRELOAD. */
	if (strpbrk(shim, " :"))
		die(1,
		    "--precise: LD_PRELOAD cannot hold '%s' (the loader splits it at spaces and "
		    "colons): set PUNCTUAL_PRELOAD to a copy at a path without them",
		    shim);
	char buf[PATH_MAX];
	const char *file = find_cmd(cmd, buf, sizeof(buf));
	const char *why = file ? preload_blocked(file) : NULL;
	if (why)
		fprintf(stderr, "punctual run: %s %s; --precise cannot apply, running it anyway\n",
		        cmd, why);
	const char *old = getenv("LD_PRELOAD");
	char *val;
	if (old && *old) {
		if (asprintf(&val, "%s:%s", old, shim) < 0)
			die(1, "out of memory");
	} else {
		val = strdup(shim);
	}
	char prec[32];
	snprintf(prec, sizeof(prec), "%lld", (long long)s->precision_ns);
	if (!val || setenv("LD_PRELOAD", val, 1) != 0 || setenv("PUNCTUAL_PRECISION", prec, 1) != 0)
		die(1, "cannot set the environment: %s", strerror(errno));
	free(val);
}

static void run_apply(const struct run_settings *s, const char *cmd)
{
	if (s->precise)
		apply_precise(s, cmd);
	if (s->slack) {
		int r = pn_slack_set(s->slack_ns);
		if (r < 0)
			die(EXIT_USAGE, "--slack: %lld ns: %s", (long long)s->slack_ns,
			    pn_strerror(r));
	}
}

int cmd_run(int argc, char **argv)
{
	static const struct option opts[] = {
	        {"slack", required_argument, NULL, 's'},
	        {"precise", optional_argument, NULL, 'P'},
	        {"help", no_argument, NULL, 'h'},
	        {0},
	};
	struct run_settings set = {0};
	tool_cmd = "run";
	int c;
	/* "+": stop at CMD, so that its own options stay its own. */
	while ((c = next_opt(argc, argv, "+:s:h", opts, usage)) != -1) {
		switch (c) {
		case 's':
			set.slack = true;
			set.slack_ns = opt_slack("--slack", optarg);
			break;
		case 'P':
			set.precise = true;
			set.precision_ns = optarg ? opt_duration("--precise", optarg, 1) : 10000;
			break;
		}
	}
	run_check(&set);
	if (optind >= argc)
		usage_error("missing the command to run");

	char **cmd = argv + optind;
	run_apply(&set, cmd[0]);
	execvp(cmd[0], cmd);
	int e = errno;
	die(e == ENOENT ? EXIT_NOT_FOUND : EXIT_CANNOT_INVOKE, "%s: %s", cmd[0], strerror(e));
}
