/* SPDX-License-Identifier: MIT */
/*
 * test_tune_dropin.c: the unit files `punctual tune` reads and the drop-ins it writes
 * (tools/punctual/tune/dropin.c), on files of the test's own: [Service] lines with
 * continuations (joined as systemd joins them), comments and quotes, a NUL byte refused;
 * what a unit sets itself beside an earlier tune's drop-in, however long or many; a
 * drop-in's quoting and '%' doubling, read back by the same reader; what a measuring
 * drop-in undoes; ExecStart= as a command. systemd itself reads these drop-ins
 * in tests/systemd (test_tune.sh: a shim path with '%', a unit's own LD_PRELOAD).
 */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "tune/tune.h"
#include "util/diag.h"

static char dir[64];
static char refusal[512];
static jmp_buf refused;

/* The tool's exits: the message kept, back to the test. */
void usage_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(refusal, sizeof(refusal), fmt, ap);
	va_end(ap);
	longjmp(refused, 1);
}

void die(int st, const char *fmt, ...)
{
	(void)st;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(refusal, sizeof(refusal), fmt, ap);
	va_end(ap);
	longjmp(refused, 2);
}

const char *run_preload_path(void)
{
	return "/usr/lib/x/libpunctual-preload.so";
}

/* dir/name written with text: its path (static, one at a time). */
static const char *put(const char *name, const char *text)
{
	static char path[256];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	return path;
}

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/pn-tune-dropin-XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) == 0 ? 0 : -1;
}

/* Environment= as systemd reads it: [Service] only, continued lines joined, comments
 * skipped, quotes and escapes undone, an empty assignment empties the list, a later
 * assignment of a name replaces the earlier. */
static void environment(void **state)
{
	(void)state;
	const char *f = put("a.service", "[Unit]\n"
	                                 "Environment=NOT=unit\n"
	                                 "[Service]\n"
	                                 "Environment=GONE=1\n"
	                                 "Environment=\n"
	                                 "# Environment=COMMENT=1\n"
	                                 "Environment=\"A=a b\" B=c\\\"d \\\n"
	                                 "  ; a comment inside a continuation\n"
	                                 "  C='e f'\n"
	                                 "  Environment = A=again  \n"
	                                 "Environment=D=%h\n");
	char **env;
	int n = tune_unit_file_env(f, &env);
	assert_int_equal(n, 4);
	assert_string_equal(env[0], "A=again");
	assert_string_equal(env[1], "B=c\"d");
	assert_string_equal(env[2], "C=e f");
	assert_string_equal(env[3], "D=%h"); /* a specifier left for systemd */
	tune_env_free(env, n);
	assert_int_equal(tune_unit_file_env("/nonexistent/x.service", &env), -ENOENT);
}

/* What a unit sets itself, beside an earlier tune's kept drop-in and a measuring one a
 * killed tune left. */
static void own(void **state)
{
	(void)state;
	char frag[256], drop[1024];
	snprintf(frag, sizeof(frag), "%s",
	         put("b.service", "[Service]\n"
	                          "Environment=LD_PRELOAD=/own.so\n"
	                          "ExecStart=/bin/true\n"
	                          "TimerSlackNSec=20ms\n"));
	char admin[256], old[256], measure[256];
	snprintf(admin, sizeof(admin), "%s",
	         put("10-admin.conf", "[Service]\nEnvironment=\"LD_PRELOAD=/a b.so\"\n"));
	snprintf(old, sizeof(old), "%s",
	         put(TUNE_DROP_IN,
	             TUNE_MARK " (--precise)\n[Service]\n"
	                       "Environment=LD_PRELOAD=/shim.so PUNCTUAL_PRECISION=10000\n"
	                       "TimerSlackNSec=1\n"));
	snprintf(measure, sizeof(measure), "%s",
	         put(TUNE_MEASURE_IN, TUNE_MARK ", measuring\n[Service]\nTimerSlackNSec=5\n"));
	snprintf(drop, sizeof(drop), "%s %s %s", admin, old, measure);
	struct tune_unit_own o;
	assert_int_equal(tune_unit_own(frag, drop, &o), 0);
	assert_string_equal(o.preload, "/a b.so"); /* the administrator's, not tune's */
	assert_string_equal(o.slack, "20ms");
	assert_true(o.old_slack);
	assert_int_equal(o.old_nenv, 2);
	assert_string_equal(o.old_env[0], "LD_PRELOAD=/shim.so");
	assert_string_equal(o.old_env[1], "PUNCTUAL_PRECISION=10000");
	tune_unit_own_free(&o);
	assert_true(tune_ours(old));
	assert_false(tune_ours(admin));
}

/* d rendered into buf. */
static void render(char *buf, size_t n, const struct tune_drop *d)
{
	FILE *f = fmemopen(buf, n, "w");
	assert_non_null(f);
	assert_int_equal(tune_drop_in(f, d), 0);
	assert_int_equal(fclose(f), 0);
}

/* A kept drop-in: '%' doubled in the shim's path, kept as written in the unit's own
 * LD_PRELOAD, quoted where blanks are; read back, the assignments are the ones meant. */
static void kept(void **state)
{
	(void)state;
	struct tune_unit_own o = {.preload = (char[]){"/my lib/%h.so"}};
	struct tune_setting s = {.name = "--precise", .precise = true, .budget = "5.0000%"};
	struct tune_drop d = {.s = &s, .shim = "/opt/p%q/shim.so", .own = &o, .cpus = 2};
	char buf[4096];
	render(buf, sizeof(buf), &d);
	assert_true(strncmp(buf, TUNE_MARK, strlen(TUNE_MARK)) == 0);
	assert_non_null(strstr(buf, "\"LD_PRELOAD=/my lib/%h.so:/opt/p%%q/shim.so\""));
	assert_non_null(strstr(buf, " PUNCTUAL_BUDGET=5.0000%%"));
	assert_null(strstr(buf, "UnsetEnvironment")); /* a kept one replaces the old whole */
	assert_null(strstr(buf, "ReadWritePaths"));
	const char *f = put("kept.conf", buf);
	char **env;
	int n = tune_unit_file_env(f, &env);
	assert_true(n >= 4);
	/* the reader leaves '%%' as written: systemd makes it one '%' */
	assert_string_equal(env[0], "LD_PRELOAD=/my lib/%h.so:/opt/p%%q/shim.so");
	assert_string_equal(env[1], "PUNCTUAL_PRECISION=10000");
	assert_string_equal(env[2], "PUNCTUAL_BUDGET=5.0000%%");
	assert_string_equal(env[3], "PUNCTUAL_CPUS=2");
	tune_env_free(env, n);
	struct tune_setting slack = {.name = "--slack 1ns", .slack = true};
	d = (struct tune_drop){.s = &slack, .shim = "/s.so"};
	render(buf, sizeof(buf), &d);
	assert_null(strstr(buf, "Environment="));
	assert_non_null(strstr(buf, "\nTimerSlackNSec=1\n"));
}

/* A measuring drop-in: the records, and what an earlier tune's kept drop-in sets that
 * this setting does not, undone. */
static void measuring(void **state)
{
	(void)state;
	char *old[] = {"LD_PRELOAD=/shim.so", "PUNCTUAL_PRECISION=10000"};
	struct tune_unit_own o = {
	        .slack = "20ms", .old_slack = true, .old_env = old, .old_nenv = 2};
	struct tune_setting as_is = {.name = "as it is"};
	struct tune_drop d = {.s = &as_is,
	                      .shim = "/shim.so",
	                      .own = &o,
	                      .records = "/run/pt-x/records.1",
	                      .runtime_dir = "pt-x"};
	char buf[4096];
	render(buf, sizeof(buf), &d);
	assert_non_null(strstr(buf, "Environment=LD_PRELOAD=/shim.so PUNCTUAL_STATS=1 "
	                            "PUNCTUAL_STATS_FILE=/run/pt-x/records.1\n"));
	assert_non_null(strstr(buf, "\nUnsetEnvironment=PUNCTUAL_PRECISION=10000\n"));
	assert_non_null(strstr(buf, "\nTimerSlackNSec=20ms\n")); /* the unit's own, back */
	/* the records in a directory systemd makes the service user's; the unit sees no
	 * RUNTIME_DIRECTORY of tune's */
	assert_non_null(strstr(buf, "\nRuntimeDirectory=pt-x\n"));
	assert_non_null(strstr(buf, "\nUnsetEnvironment=RUNTIME_DIRECTORY\n"));
	assert_null(strstr(buf, "ReadWritePaths"));
	struct tune_setting precise = {.name = "--precise", .precise = true};
	d.s = &precise;
	d.runtime_env = "/run/own";
	render(buf, sizeof(buf), &d);
	assert_null(strstr(buf, "UnsetEnvironment")); /* it sets the precision itself */
	assert_non_null(strstr(buf, " RUNTIME_DIRECTORY=/run/own\n")); /* the unit's own */
}

/* The runtime directory's name: one per unit (each byte but [A-Za-z0-9.@-] as _XX, '_'
 * too), nothing RuntimeDirectory= reads otherwise ('\\', ':'); too long, refused. And
 * RUNTIME_DIRECTORY as the unit has it without tune's. */
static void runtime_dir(void **state)
{
	(void)state;
	char buf[NAME_MAX + 1];
	tune_runtime_dir("pnt-loop.service", buf, sizeof(buf));
	assert_string_equal(buf, "punctual-tune-pnt-loop.service");
	tune_runtime_dir("a\\x2db@c:d_e.service", buf, sizeof(buf));
	assert_string_equal(buf, "punctual-tune-a_5cx2db@c_3ad_5fe.service");
	char name[200];
	memset(name, ':', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	refusal[0] = '\0';
	if (setjmp(refused) == 0) {
		tune_runtime_dir(name, buf, sizeof(buf));
		fail_msg("a name past NAME_MAX not refused");
	}
	assert_non_null(strstr(refusal, "255 bytes"));
	char *env =
	        tune_runtime_env("own punctual-tune-x.service b:link", "punctual-tune-x.service");
	assert_string_equal(env, "/run/own:/run/b");
	free(env);
	assert_null(tune_runtime_env("punctual-tune-x.service", "punctual-tune-x.service"));
	assert_null(tune_runtime_env("", "punctual-tune-x.service"));
}

/* ExecStart= as a command: prefixes dropped, "@" takes the second word out, quotes
 * grouped, continued lines joined; specifiers and variables refused. */
static void exec_start(void **state)
{
	(void)state;
	char **argv = tune_unit_file_cmd(put("c.service", "[Service]\n"
	                                                  "ExecStart=-@/bin/prog name \"a b\" \\\n"
	                                                  "  'c'\n"));
	assert_string_equal(argv[0], "/bin/prog");
	assert_string_equal(argv[1], "a b");
	assert_string_equal(argv[2], "c");
	assert_null(argv[3]);
	free(argv);
	const char *bad[] = {"[Service]\nExecStart=/bin/prog %i\n",
	                     "[Service]\nExecStart=/bin/prog $X\n", "[Unit]\nExecStart=/bin/x\n",
	                     "[Service]\nExecStart=/bin/x\nExecStart=\n"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		refusal[0] = '\0';
		if (setjmp(refused) == 0) {
			tune_unit_file_cmd(put("d.service", bad[i]));
			fail_msg("not refused: %s", bad[i]);
		}
		assert_non_null(strstr(refusal, "--unit-file"));
	}
}

/* Continued lines joined as systemd joins them: the backslash becomes a space (a word
 * ends there), a continuation's own blanks kept (inside quotes they count), an escaped
 * backslash ends the line, a comment line never continues; "\r\n" and "\r" end a line. A
 * NUL byte refuses the file. */
static void continuations(void **state)
{
	(void)state;
	char **argv = tune_unit_file_cmd(put("cont.service", "[Service]\n"
	                                                     "ExecStart=/bin/argv hello\\\n"
	                                                     "world\n"));
	assert_string_equal(argv[0], "/bin/argv");
	assert_string_equal(argv[1], "hello");
	assert_string_equal(argv[2], "world");
	assert_null(argv[3]);
	free(argv);
	char **env;
	int n = tune_unit_file_env(put("cont2.service", "[Service]\n"
	                                                "Environment=\"A=x \\\n"
	                                                "  y\"\n"
	                                                "Environment=B=c\\\\\n"
	                                                "Environment=C=d\r\n"
	                                                "# a comment that ends in a backslash \\\n"
	                                                "Environment=D=e\rEnvironment=E=f\n"),
	                           &env);
	assert_int_equal(n, 5);
	assert_string_equal(env[0], "A=x    y"); /* "x " + the backslash's " " + "  y" */
	assert_string_equal(env[1], "B=c\\");
	assert_string_equal(env[2], "C=d");
	assert_string_equal(env[3], "D=e");
	assert_string_equal(env[4], "E=f");
	tune_env_free(env, n);
	static const char nul[] = "[Service]\nExecStart=/bin/x\0 y\n";
	FILE *f = fopen(put("nul.service", ""), "w");
	assert_non_null(f);
	fwrite(nul, 1, sizeof(nul) - 1, f);
	fclose(f);
	char path[256];
	snprintf(path, sizeof(path), "%s/nul.service", dir);
	assert_int_equal(tune_unit_file_env(path, &env), -EILSEQ);
	refusal[0] = '\0';
	if (setjmp(refused) == 0) {
		tune_unit_file_cmd(path);
		fail_msg("a NUL byte not refused");
	}
	assert_non_null(strstr(refusal, "NUL byte"));
}

/* No fixed bound drops what a unit sets: its own LD_PRELOAD of 300 characters after 70
 * other names, and an earlier tune's kept drop-in of 20 assignments, every one undone by
 * a measuring drop-in. */
static void many(void **state)
{
	(void)state;
	char lib[301], text[8192], *p = text;
	memset(lib, 'l', sizeof(lib) - 1);
	lib[0] = '/';
	lib[sizeof(lib) - 1] = '\0';
	p += sprintf(p, "[Service]\n");
	for (int i = 0; i < 70; i++)
		p += sprintf(p, "Environment=V%d=%d\n", i, i);
	sprintf(p, "Environment=LD_PRELOAD=%s\n", lib);
	char frag[256], old[256];
	snprintf(frag, sizeof(frag), "%s", put("many.service", text));
	p = text + sprintf(text, TUNE_MARK " (--precise)\n[Service]\nEnvironment=");
	for (int i = 0; i < 20; i++)
		p += sprintf(p, " OLD%d=%d", i, i);
	sprintf(p, "\n");
	snprintf(old, sizeof(old), "%s", put(TUNE_DROP_IN, text));
	struct tune_unit_own o;
	assert_int_equal(tune_unit_own(frag, old, &o), 0);
	assert_string_equal(o.preload, lib);
	assert_int_equal(o.old_nenv, 20);
	struct tune_setting as_is = {.name = "as it is"};
	struct tune_drop d = {.s = &as_is, .shim = "/shim.so", .own = &o, .records = "/run/r.1"};
	char buf[8192];
	render(buf, sizeof(buf), &d);
	for (int i = 0; i < 20; i++) {
		char unset[64];
		snprintf(unset, sizeof(unset), "\nUnsetEnvironment=OLD%d=%d\n", i, i);
		assert_non_null(strstr(buf, unset));
	}
	char preload[400];
	snprintf(preload, sizeof(preload), "Environment=\"LD_PRELOAD=%s:/shim.so\"", lib);
	assert_non_null(strstr(buf, preload));
	tune_unit_own_free(&o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(environment), cmocka_unit_test(own),
	        cmocka_unit_test(kept),        cmocka_unit_test(measuring),
	        cmocka_unit_test(exec_start),  cmocka_unit_test(continuations),
	        cmocka_unit_test(many),        cmocka_unit_test(runtime_dir),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
