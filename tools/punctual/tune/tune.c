/* SPDX-License-Identifier: MIT */
/*
 * `punctual tune`: a command, a unit file's command or a running systemd service measured
 * as it is and under each fix run offers, each for the same time, through the shim's
 * records or a trace; the fix whose p99 lateness is lower beyond both runs' noise is
 * printed, and kept with --apply.
 */
#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <punctual/cpus.h>
#include <punctual/sleep.h>
#include "contract.h"
#include "util/diag.h"
#include "util/opts.h"
#include "util/out.h"
#include "commands.h"
#include "util/json.h"
#include "tune/tune.h"

static const char usage[] =
        "usage: punctual tune [--for=D] [--budget=B%] [--json] -- CMD [ARGS...]\n"
        "       punctual tune [--for=D] [--budget=B%] [--json] --unit-file FILE\n"
        "       punctual tune [--for=D] [--budget=B%] [--json] [--apply] UNIT\n"
        "       punctual tune [--for=D] [--budget=B%] [--json] [--apply] --pid PID\n"
        "       punctual tune --revert [--dry-run] (UNIT | --pid PID)\n"
        "\n"
        "Measures a program's timed waits (the shim's stats, as run --stats) as it is\n"
        "and under each fix: --slack 1ns, --slack 1ns --slice=100us (Linux 6.12+; a\n"
        "unit's set by the shim), --precise, --precise --budget=B if given, and for a\n"
        "unit run as another user than root --precise +CAP_SYS_NICE (its waits on a\n"
        "shared CPU under SCHED_FIFO, each wait alone: AmbientCapabilities=). The\n"
        "settings run in turns (A B C A B C ...) until every fix stands apart from the\n"
        "program as it is beyond noise (as probe --compare judges) or D is spent. Of the\n"
        "fixes better than as it is, the cheapest (slack, then the slice, then the\n"
        "shim's waits) not worse than the best beyond noise is kept. The p99 is judged,\n"
        "or the median where the program made fewer than 100 waits. Where the cgroup's\n"
        "CPU quota allows fewer CPUs than are online, run --cpus is added as advice,\n"
        "unmeasured. A program the shim cannot time (static, or its own system calls)\n"
        "is traced through eBPF where root, without the shim's settings.\n"
        "\n"
        "  -- CMD           run CMD; print the fix kept as a command line and environment\n"
        "      --unit-file FILE\n"
        "                   run a unit file's ExecStart= here, with its Environment= and\n"
        "                   TimerSlackNSec=; print the drop-in beside it\n"
        "  UNIT             a running service (systemd as PID 1, root): restarted under\n"
        "                   each fix through a drop-in in /run/systemd/system/UNIT.d/,\n"
        "                   then put back as it was; prints the drop-in\n"
        "      --pid PID    the service unit that PID runs in, as UNIT (the shim loads\n"
        "                   when a program starts: the unit is restarted)\n"
        "      --apply      with UNIT: keep the fix's drop-in in\n"
        "                   /etc/systemd/system/UNIT.d/50-punctual-tune.conf (replacing\n"
        "                   tune's own, never another's), or none when no fix measured\n"
        "                   better; the unit restarted under it\n"
        "      --dry-run    print, change nothing (the default)\n"
        "      --revert     remove the drop-ins tune wrote for UNIT, and restart it\n"
        "      --budget=B%  also try --precise with this CPU budget (run --budget)\n"
        "      --for=D      the measuring time at most, all runs (default 60s)\n"
        "  -j, --json       JSON\n"
        "  -h, --help       this text\n";

/* What the user asked for. */
struct tune_opts {
	bool apply, dry_run, revert, json;
	const char *budget; /* the user's spelling, or NULL */
	char budget_env[32];
	int64_t for_ns;
	const char *unit_file;
	const char *unit;
	const char *pid;
	char **cmd;
};

static struct tune_opts opt = {.for_ns = 60000000000LL};
static struct tune_setting set[TUNE_SETTINGS_MAX];
static int nset;
static const char *notes[3]; /* why a setting was not tried */
static int nnotes;
static char **unit_cmd; /* --unit-file's command */

static void parse(int argc, char **argv)
{
	static const struct option lo[] = {
	        {"apply", no_argument, NULL, 'A'},     {"dry-run", no_argument, NULL, 'D'},
	        {"revert", no_argument, NULL, 'R'},    {"budget", required_argument, NULL, 'B'},
	        {"for", required_argument, NULL, 'F'}, {"unit-file", required_argument, NULL, 'U'},
	        {"pid", required_argument, NULL, 'P'}, {"json", no_argument, NULL, 'j'},
	        {"help", no_argument, NULL, 'h'},      {0},
	};
	int end = 1; /* options end at "--" */
	while (end < argc && strcmp(argv[end], "--") != 0)
		end++;
	if (end < argc)
		opt.cmd = argv + end + 1;
	int c;
	while ((c = next_opt(end, argv, ":jh", lo, usage)) != -1) {
		if (c == 'A')
			opt.apply = true;
		else if (c == 'D')
			opt.dry_run = true;
		else if (c == 'R')
			opt.revert = true;
		else if (c == 'B') {
			opt.budget = optarg;
			opt_budget(optarg, opt.budget_env, sizeof(opt.budget_env));
		} else if (c == 'F')
			opt.for_ns = opt_duration("--for", optarg);
		else if (c == 'U')
			opt.unit_file = optarg;
		else if (c == 'P')
			opt.pid = optarg;
		else if (c == 'j')
			opt.json = true;
	}
	if (optind < end)
		opt.unit = argv[optind++];
	if (optind < end)
		usage_error("unexpected argument '%s'", argv[optind]);
}

static void check(void)
{
	int targets = (opt.cmd != NULL) + (opt.unit_file != NULL) + (opt.unit != NULL) +
	              (opt.pid != NULL);
	if (targets != 1)
		usage_error("give one of UNIT, --pid PID, --unit-file FILE or -- CMD");
	if (opt.cmd && !opt.cmd[0])
		usage_error("missing the command after --");
	if (opt.apply && opt.dry_run)
		usage_error("--apply and --dry-run: choose one");
	if ((opt.apply || opt.revert) && !opt.unit && !opt.pid)
		usage_error("--%s needs a UNIT or --pid: it changes a systemd service",
		            opt.apply ? "apply" : "revert");
	if (opt.revert && (opt.apply || opt.budget || opt.json))
		usage_error("--revert takes only UNIT (and --dry-run)");
	if (opt.for_ns < 1000000000 || opt.for_ns > 86400000000000LL)
		usage_error("--for: give a duration in [1s, 24h]");
}

/* Whether run --slice can set a slice here, tried in a child: NULL, or why not. */
static const char *slice_refused(void)
{
	int64_t ns;
	if (pn__slice_parse(TUNE_SLICE, &ns) < 0)
		return "its value is not a slice";
	fflush(NULL);
	pid_t c = fork();
	if (c == 0) {
		int64_t got = pn__slice_set_self(ns);
		_exit(got == ns ? 0 : got == -EOPNOTSUPP ? 2 : 1);
	}
	int st;
	if (c < 0 || waitpid(c, &st, 0) != c || !WIFEXITED(st) || WEXITSTATUS(st) == 1)
		return "this kernel does not keep a slice (Linux 6.12 or later does)";
	if (WEXITSTATUS(st) == 2)
		return "a slice is SCHED_OTHER's or SCHED_BATCH's, and tune runs under another "
		       "policy";
	return NULL;
}

/* The bare short slice with slack 1 ns, where run --slice can set it. */
static void setting_slice(bool unit)
{
	static char note[160];
	const char *why = slice_refused();
	if (why) {
		snprintf(note, sizeof(note), "--slice=%s not tried: %s", TUNE_SLICE, why);
		notes[nnotes++] = note;
		return;
	}
	set[nset++] = (struct tune_setting){.name = "--slack 1ns --slice=" TUNE_SLICE,
	                                    .slack = true,
	                                    .slice = TUNE_SLICE,
	                                    .shim = unit};
}

/* A non-root unit: --precise with CAP_SYS_NICE too, so that its shared waits may take
 * SCHED_FIFO; the most invasive, last. */
static void setting_rt(const char *unit)
{
	static char note[160];
	char why[96];
	if (!unit || access("/run/systemd/system", F_OK) != 0)
		return;
	int r = tune_unit_rt(unit, why, sizeof(why));
	if (r < 0) {
		snprintf(note, sizeof(note), "--precise +CAP_SYS_NICE not tried: %s", why);
		notes[nnotes++] = note;
	} else if (r > 0) {
		set[nset++] = (struct tune_setting){.name = "--precise +CAP_SYS_NICE",
		                                    .precise = true,
		                                    .rt = true,
		                                    .shim = true};
	}
}

/* The settings tried, the first the program as it is; unit NULL: a command. */
static void settings(const char *unit)
{
	static char budget_name[64];
	set[nset++] = (struct tune_setting){.name = "as it is"};
	set[nset++] = (struct tune_setting){.name = "--slack 1ns", .slack = true};
	setting_slice(unit != NULL);
	set[nset++] = (struct tune_setting){.name = "--precise", .precise = true, .shim = true};
	if (opt.budget) {
		snprintf(budget_name, sizeof(budget_name), "--precise --budget=%s", opt.budget);
		set[nset++] = (struct tune_setting){.name = budget_name,
		                                    .precise = true,
		                                    .budget = opt.budget_env,
		                                    .shim = true};
	}
	setting_rt(unit);
}

/* ---- rendering ---------------------------------------------------------------------- */

static const char *verdict_name(const struct tune_result *r, int i)
{
	if (i == 0)
		return "before";
	if (isnan(r->ratio))
		return "no waits";
	return r->verdict < 0 ? "better" : r->verdict > 0 ? "worse" : "same";
}

/* s for a shell, single-quoted unless every byte is safe. */
static void sh_word(FILE *f, const char *s)
{
	if (*s && !s[strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	                       "_./=:,+-@%")]) {
		fputs(s, f);
		return;
	}
	fputc('\'', f);
	for (; *s; s++)
		fputs(*s == '\'' ? "'\\''" : (char[]){*s, 0}, f);
	fputc('\'', f);
}

static void sh_cmd(FILE *f, char **cmd)
{
	for (int i = 0; cmd[i]; i++) {
		fputc(' ', f);
		sh_word(f, cmd[i]);
	}
}

/* The environment that runs a command under s, with cpus the CPU count's (0: none); ""
 * for slack alone. */
static void env_of(char *buf, size_t n, const struct tune_setting *s, const char *shim, int cpus)
{
	char c[256] = "";
	if (cpus)
		tune_cpus_env(c, sizeof(c), cpus);
	buf[0] = '\0';
	if (s->precise)
		snprintf(buf, n, "LD_PRELOAD=%s PUNCTUAL_PRECISION=%d%s%s%s%s", shim,
		         TUNE_PRECISION_NS, s->budget ? " PUNCTUAL_BUDGET=" : "",
		         s->budget ? s->budget : "", cpus ? " " : "", c);
	else if (s->slice)
		snprintf(buf, n, "LD_PRELOAD=%s PUNCTUAL_PROCESS_SLICE=%s%s%s", shim, s->slice,
		         cpus ? " " : "", c);
	else if (cpus)
		snprintf(buf, n, "LD_PRELOAD=%s %s", shim, c);
}

/* The CPUs online. */
static long online(void)
{
	return sysconf(_SC_NPROCESSORS_ONLN);
}

/* A setting's CPU, % of one CPU (NAN: not known). */
static double cpu_pct(const struct tune_result *r)
{
	return r->cpu_ns >= 0 && r->wall_ns > 0 ? 100.0 * (double)r->cpu_ns / (double)r->wall_ns
	                                        : NAN;
}

static const char *qname(const struct tune_outcome *o)
{
	return o->q > 0.9 ? "p99" : "p50";
}

static void runs_text(const struct tune_outcome *o)
{
	char a[24], c[24], cpu[16], head[16];
	snprintf(head, sizeof(head), "late %s", qname(o));
	fprintf(out, "  %-26s %6s %10s %6s  %-8s %s\n", "setting", "waits", head, "CPU", "verdict",
	        "AFTER/BEFORE (noise allows)");
	for (int i = 0; i < o->n; i++) {
		const struct tune_result *r = &o->res[i];
		char ratio[64] = "";
		if (i && !isnan(r->ratio))
			snprintf(ratio, sizeof(ratio), "%.3g x (%.3g to %s)", r->ratio, r->ratio_lo,
			         isfinite(r->ratio_hi)
			                 ? (snprintf(c, sizeof(c), "%.3g", r->ratio_hi), c)
			                 : "inf");
		double pct = cpu_pct(r);
		if (isnan(pct))
			snprintf(cpu, sizeof(cpu), "-");
		else
			snprintf(cpu, sizeof(cpu), "%.1f%%", pct);
		double v = r->fig.waits ? tune_quantile(&r->fig, o->q) : NAN;
		fprintf(out, "  %-26s %6llu %10s %6s  %-8s %s\n", set[i].name,
		        (unsigned long long)r->fig.waits, isnan(v) ? "-" : fmt_ns(a, sizeof(a), v),
		        cpu, verdict_name(r, i), ratio);
	}
}

/* The CPU count's reason, as the text and the JSON say it: no measurement claimed. */
static const char *quota_reason(char *buf, size_t n, int cpus)
{
	snprintf(buf, n, "quota allows %d of %ld CPUs", cpus, online());
	return buf;
}

/* The CPU count's advice. */
static void cpus_text(int cpus)
{
	char why[96];
	if (cpus)
		fprintf(out,
		        "\nadvice, not measured: the cgroup's %s; run --cpus\n  makes the "
		        "program's runtimes size their threads for %d\n",
		        quota_reason(why, sizeof(why), cpus), cpus);
}

/* A host noisy between runs: steal over STEAL_MIN, or the program's runs as it is with
 * p99s over BETWEEN_RUNS_MAX apart. */
#define STEAL_MIN        0.005
#define BETWEEN_RUNS_MAX 2.25

/* No fix kept: "too noisy to tell" and why where one was lower within the noise, else
 * "no fix measured better". */
static void noisy_lines(FILE *f, const struct tune_outcome *o, const struct tune_setting *s)
{
	const struct tune_result *base = &o->res[0];
	int lower = -1;
	for (int i = 1; i < o->n; i++)
		if (o->res[i].verdict == 0 && o->res[i].v < base->v &&
		    (lower < 0 || o->res[i].v < o->res[lower].v))
			lower = i;
	if (lower < 0) {
		fprintf(f, "\nno fix measured better than as it is, beyond both's noise\n");
		return;
	}
	char a[24], b[24], why[256] = "";
	int w = 0;
	if (o->steal > STEAL_MIN)
		w = snprintf(why, sizeof(why), "; the hypervisor stole %.1f%% of the CPUs' time",
		             100 * o->steal);
	if (base->runs > 1 && base->run_p99_lo > 0 &&
	    (double)base->run_p99_hi > BETWEEN_RUNS_MAX * (double)base->run_p99_lo && w >= 0 &&
	    (size_t)w < sizeof(why))
		snprintf(why + w, sizeof(why) - (size_t)w,
		         "; as it is, its runs' p99 went from %s to %s (stall bursts)",
		         fmt_ns(a, sizeof(a), (double)base->run_p99_lo),
		         fmt_ns(b, sizeof(b), (double)base->run_p99_hi));
	char c[24], line[512];
	snprintf(line, sizeof(line),
	         "too noisy to tell: the lowest, %s at %s %s, is within the noise of %s as it "
	         "is%s",
	         s[lower].name, qname(o),
	         fmt_ns(a, sizeof(a), tune_quantile(&o->res[lower].fig, o->q)),
	         fmt_ns(c, sizeof(c), tune_quantile(&base->fig, o->q)),
	         why[0]           ? why
	         : base->runs > 1 ? " (steal under 0.5%, and no stall burst seen between its "
	                            "runs: the waits' own spread at this length of run)"
	                          : " (steal under 0.5%: the waits' own spread at this length "
	                            "of run)");
	fputc('\n', f);
	out_wrap(f, "", "  ", line);
}

void tune_kept_lines(FILE *f, const struct tune_outcome *o, const struct tune_setting *s)
{
	char a[24], b[24];
	if (o->kept < 0) {
		noisy_lines(f, o, s);
		return;
	}
	const struct tune_result *r = &o->res[o->kept];
	fprintf(f, "\nkept: %s, %s lateness %s -> %s (%.3g x, noise allows %.3g to %.3g)\n",
	        s[o->kept].name, qname(o),
	        fmt_ns(a, sizeof(a), tune_quantile(&o->res[0].fig, o->q)),
	        fmt_ns(b, sizeof(b), tune_quantile(&r->fig, o->q)), r->ratio, r->ratio_lo,
	        r->ratio_hi);
	if (o->best != o->kept) /* so that none reads the best as kept */
		fprintf(f,
		        "  (the best, %s at %s %s, is not better than %s beyond the noise, and "
		        "costs more)\n",
		        s[o->best].name, qname(o),
		        fmt_ns(a, sizeof(a), tune_quantile(&o->res[o->best].fig, o->q)),
		        s[o->kept].name);
}

static void kept_text(const struct tune_outcome *o, const char *shim, int cpus)
{
	char env[900];
	tune_kept_lines(out, o, set);
	if (o->kept < 0 || !opt.cmd)
		return;
	fprintf(out, "  punctual run %s%s --", set[o->kept].name, cpus ? " --cpus" : "");
	sh_cmd(out, opt.cmd);
	env_of(env, sizeof(env), &set[o->kept], shim, cpus);
	if (env[0]) {
		fprintf(out, "\n  %s", env);
		sh_cmd(out, opt.cmd);
	}
	if (set[o->kept].slack && !set[o->kept].precise)
		fprintf(out, "\n  (timer slack is inherited, not an environment variable; in a "
		             "unit: TimerSlackNSec=1)");
	fputc('\n', out);
}

/* The kept setting's drop-in into buf. */
static void drop_in_compose(char *buf, size_t n, int i, const char *shim, int cpus)
{
	struct tune_drop d = {.s = &set[i], .shim = shim, .cpus = cpus};
	FILE *f = fmemopen(buf, n, "w");
	if (!f || tune_drop_in(f, &d) < 0 || fclose(f) != 0)
		die(1, "cannot render the drop-in");
}

static void drop_in_text(const char *drop_in, const char *path)
{
	if (opt.apply)
		fprintf(out, "kept, in %s:\n", path);
	else
		fprintf(out, "the drop-in --apply would write, to %s:\n", path);
	fprintf(out, "%s\n", drop_in);
}

/* The CPU count's advice and the settings not tried. */
static void advice_json(struct json *j, int cpus)
{
	if (cpus) {
		char why[96];
		json_obj(j, "cpus");
		json_int(j, "count", cpus);
		json_int(j, "online", online());
		json_str(j, "reason", quota_reason(why, sizeof(why), cpus));
		json_bool(j, "measured", false);
		json_obj_end(j);
	} else {
		json_none(j, "cpus");
	}
	json_arr(j, "notes");
	for (int i = 0; i < nnotes; i++)
		json_str(j, NULL, notes[i]);
	json_arr_end(j);
}

/* An integer, or null. */
static void json_ns(struct json *j, const char *key, double v)
{
	if (isfinite(v))
		json_int(j, key, (int64_t)llround(v));
	else
		json_none(j, key);
}

static void run_json(struct json *j, const struct tune_outcome *o, int i)
{
	const struct tune_result *r = &o->res[i];
	const struct run_fig *f = &r->fig;
	json_obj(j, NULL);
	json_str(j, "setting", set[i].name);
	json_int(j, "runs", r->runs);
	json_uint(j, "waits", f->waits);
	json_ns(j, "p50_ns", f->waits ? tune_quantile(f, 0.5) : NAN);
	json_ns(j, "p99_ns", f->waits >= 100 ? tune_quantile(f, 0.99) : NAN);
	json_ns(j, "max_ns", f->waits ? (double)f->max : NAN);
	json_arr(j, "interval_ns");
	json_ns(j, NULL, r->lo);
	json_ns(j, NULL, r->hi);
	json_arr_end(j);
	json_num(j, "cpu_pct", cpu_pct(r));
	json_num(j, "ratio", i ? r->ratio : 1);
	json_arr(j, "ratio_interval");
	json_num(j, NULL, i ? r->ratio_lo : NAN);
	json_num(j, NULL, i ? r->ratio_hi : NAN);
	json_arr_end(j);
	json_str(j, "verdict", verdict_name(r, i));
	json_obj_end(j);
}

static void report_json(const struct tune_outcome *o, int cpus, const char *shim,
                        const char *drop_in, const char *path)
{
	struct json j;
	json_report_begin(&j, out, "tune");
	json_int(&j, "for_ns", opt.for_ns);
	json_int(&j, "measured_ns", o->spent_ns);
	json_int(&j, "rounds", o->rounds);
	json_str(&j, "judged", qname(o));
	json_str(&j, "measured_by", o->traced ? "ebpf" : "shim");
	json_num(&j, "lateness_resolution", TUNE_RESOLUTION);
	json_arr(&j, "runs");
	for (int i = 0; i < o->n; i++)
		run_json(&j, o, i);
	json_arr_end(&j);
	if (o->best >= 0)
		json_str(&j, "best", set[o->best].name);
	else
		json_none(&j, "best");
	if (o->kept >= 0)
		json_str(&j, "kept", set[o->kept].name);
	else
		json_none(&j, "kept");
	char env[900] = "";
	if (o->kept >= 0 || cpus) /* the fix kept's, or the CPU count's advice alone */
		env_of(env, sizeof(env), &set[o->kept >= 0 ? o->kept : 0], shim, cpus);
	if (env[0])
		json_str(&j, "environment", env);
	else
		json_none(&j, "environment");
	advice_json(&j, cpus);
	if (drop_in)
		json_str(&j, "drop_in", drop_in);
	else
		json_none(&j, "drop_in");
	json_str(&j, "drop_in_path", path);
	json_bool(&j, "applied", opt.apply && o->kept >= 0);
	json_end(&j);
}

/* The report; path: where the drop-in would go, or went. */
static void render(const struct tune_outcome *o, int cpus, const char *path)
{
	const char *shim = tune_shim();
	char drop_in[8192];
	if (o->kept >= 0)
		drop_in_compose(drop_in, sizeof(drop_in), o->kept, shim, cpus);
	if (opt.json) {
		report_json(o, cpus, shim, o->kept >= 0 ? drop_in : NULL, path);
		return;
	}
	fprintf(out,
	        "tune: late %s of timed waits; %d settings in turns, %d round%s, %.3g s "
	        "measured\n",
	        qname(o), o->n, o->rounds, o->rounds == 1 ? "" : "s", (double)o->spent_ns / 1e9);
	runs_text(o);
	if (o->traced)
		out_wrap(out, "  (", "   ",
		         "the shim saw no timed wait: each run's processes (the main one and "
		         "its children) traced through eBPF, the lateness of the waits their "
		         "timer ended; the shim's settings not tried)");
	for (int k = 0; k < nnotes; k++)
		fprintf(out, "  (%s)\n", notes[k]);
	if (o->q < 0.9)
		fprintf(out, "  (%llu waits as it is: a p99 needs 100; judged on the median)\n",
		        (unsigned long long)o->res[0].fig.waits);
	kept_text(o, shim, cpus);
	cpus_text(cpus);
	if (!opt.cmd && o->kept >= 0) {
		fputc('\n', out);
		drop_in_text(drop_in, path);
	}
}

/* What this cgroup's quota allows, where fewer than the CPUs online; else 0. */
static int here_cpus(void)
{
	struct pn_cpu_info info;
	if (pn_cpu_info(&info) < 0 || info.limit_count <= 0)
		return 0;
	return info.limit_count < online() ? info.limit_count : 0;
}

/* --unit-file: the unit's Environment= and TimerSlackNSec= for the command; exits 2 for a
 * value with a specifier. */
static void unit_file_env(const char *file, struct tune_cmd *t)
{
	struct tune_unit_own own;
	int64_t ns;
	int r = tune_unit_own(file, NULL, &own);
	if (r < 0)
		usage_error("--unit-file %s: %s", file, tune_file_error(r));
	if (own.slack[0] && pn__duration_parse(own.slack, 1, &ns) != 0)
		usage_error("--unit-file %s: TimerSlackNSec=%s is not a duration", file, own.slack);
	if (own.slack[0])
		snprintf(t->slack, sizeof(t->slack), "--slack=%lldns", (long long)ns);
	tune_unit_own_free(&own);
	char **env;
	int n = tune_unit_file_env(file, &env);
	if (n < 0)
		usage_error("--unit-file %s: %s", file, tune_file_error(n));
	for (int i = 0; i < n; i++) {
		char *eq = strchr(env[i], '=');
		if (strchr(env[i], '%'))
			usage_error(
			        "--unit-file %s: its Environment= has specifiers, which systemd "
			        "expands: give the command as tune -- CMD",
			        file);
		*eq = '\0';
		if (setenv(env[i], eq + 1, 1) != 0)
			die(1, "cannot set the environment: %s", strerror(errno));
	}
	tune_env_free(env, n);
}

/* tune -- CMD, or --unit-file FILE. */
static int tune_here(void)
{
	struct tune_cmd t = {.cmd = opt.cmd};
	char path[4096] = "";
	if (opt.unit_file) {
		t.cmd = unit_cmd = tune_unit_file_cmd(opt.unit_file);
		unit_file_env(opt.unit_file, &t);
		char *a = strdup(opt.unit_file), *b = strdup(opt.unit_file);
		if (!a || !b)
			die(1, "out of memory");
		snprintf(path, sizeof(path), "%s/%s.d/%s", dirname(a), basename(b), TUNE_DROP_IN);
		free(a);
		free(b);
	}
	atexit(run_records_remove);
	static struct tune_outcome o;
	tune_measure(tune_cmd_runner, &t, set, nset, opt.for_ns, &o);
	run_records_remove();
	render(&o, here_cpus(), path);
	free(unit_cmd);
	return 0;
}

int cmd_tune(int argc, char **argv)
{
	tool_cmd = "tune";
	parse(argc, argv);
	check();
	char name[256], owner[256];
	if (opt.pid)
		tune_pid_unit(opt.pid, owner, sizeof(owner));
	if (opt.unit || opt.pid)
		tune_unit_name(opt.unit ? opt.unit : owner, name, sizeof(name));
	out_open();
	settings(opt.unit || opt.pid ? name : NULL);
	int st;
	if (opt.revert)
		st = tune_unit_revert(name, opt.dry_run);
	else if (opt.unit || opt.pid)
		st = tune_unit(name, set, nset, opt.for_ns, opt.apply, render);
	else
		st = tune_here();
	out_commit();
	return st;
}
