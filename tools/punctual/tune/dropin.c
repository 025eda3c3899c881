/* SPDX-License-Identifier: MIT */
/*
 * The unit files `punctual tune` reads and the drop-ins it writes. Unit files are read as
 * systemd reads them (continued lines, comments, quoting), a file with a NUL byte
 * refused, specifiers left for systemd. A drop-in quotes what must be and doubles '%' in
 * what tune adds; a measuring drop-in also undoes what an earlier tune's kept one sets,
 * so that the kept one stays in place until a new one replaces it.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/diag.h"
#include "util/out.h"
#include "tune/tune.h"

/* ---- reading unit files ------------------------------------------------------------- */

/* A [Service] line's handler: its key and trimmed, writable value. */
typedef void service_fn(const char *key, char *value, void *arg);

/* s trimmed in place. */
static char *trim(char *s)
{
	s += strspn(s, " \t");
	size_t n = strlen(s);
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r'))
		s[--n] = '\0';
	return s;
}

/* A growing text, NUL-terminated once anything is added. */
struct text {
	char *s;
	size_t len, cap;
};

static void text_add(struct text *t, const char *p, size_t n)
{
	if (!t->s || t->len + n + 1 > t->cap) {
		size_t cap = 2 * (t->len + n + 1) + 64;
		char *m = realloc(t->s, cap);
		if (!m)
			die(1, "out of memory");
		t->s = m;
		t->cap = cap;
	}
	memcpy(t->s + t->len, p, n);
	t->len += n;
	t->s[t->len] = '\0';
}

/* One line of f into *t, ending at "\n", "\r\n" or "\r" as systemd reads. 1, 0 at the
 * end, -EILSEQ at a NUL byte (refused rather than read otherwise than systemd). */
static int raw_line(FILE *f, struct text *t)
{
	int c;
	bool any = false;
	t->len = 0;
	text_add(t, "", 0);
	while ((c = getc(f)) != EOF) {
		any = true;
		if (c == '\0')
			return -EILSEQ;
		if (c == '\n')
			break;
		if (c == '\r') {
			if ((c = getc(f)) != '\n' && c != EOF)
				ungetc(c, f);
			break;
		}
		char ch = (char)c;
		text_add(t, &ch, 1);
	}
	return any;
}

/* One logical line of f, as systemd joins them: comment lines skipped, an unescaped
 * trailing backslash going on in the next line as a space. 1, 0 at the end, or -EILSEQ. */
static int logical_line(FILE *f, struct text *line)
{
	struct text part = {0};
	bool any = false;
	int r;
	line->len = 0;
	while ((r = raw_line(f, &part)) > 0) {
		const char *t = part.s + strspn(part.s, " \t");
		if (*t == '#' || *t == ';')
			continue;
		text_add(line, part.s, part.len);
		any = true;
		bool escaped = false;
		for (size_t i = 0; i < line->len; i++)
			escaped = !escaped && line->s[i] == '\\';
		if (!escaped)
			break;
		line->s[line->len - 1] = ' ';
	}
	free(part.s);
	return r < 0 ? r : any;
}

/* Calls fn with each Key=Value line of file's [Service] section: 0, or -errno. */
static int service_lines(const char *file, service_fn *fn, void *arg)
{
	FILE *f = fopen(file, "r");
	if (!f)
		return -errno;
	struct text line = {0};
	bool service = false;
	int r;
	while ((r = logical_line(f, &line)) > 0) {
		char *l = trim(line.s), *eq = strchr(l, '=');
		if (l[0] == '[')
			service = strcmp(l, "[Service]") == 0;
		else if (service && eq) {
			*eq = '\0';
			fn(trim(l), trim(eq + 1), arg);
		}
	}
	free(line.s);
	fclose(f);
	return r;
}

const char *tune_file_error(int e)
{
	return e == -EILSEQ ? "a NUL byte in it (systemd would end its line there): not read"
	                    : strerror(-e);
}

/* The next word of an Environment= or ExecStart= value at *p, unquoted and unescaped in
 * place, '%' left as it is; NULL at the end. */
static char *next_word(char **p)
{
	char *s = *p + strspn(*p, " \t"), *w = s, *o = s;
	if (!*s)
		return NULL;
	char quote = 0;
	for (; *s && (quote || (*s != ' ' && *s != '\t')); s++) {
		if (*s == '\\' && s[1]) {
			s++;
			*o++ = *s == 'n' ? '\n' : *s == 't' ? '\t' : *s;
		} else if (!quote && (*s == '"' || *s == '\'')) {
			quote = *s;
		} else if (quote && *s == quote) {
			quote = 0;
		} else {
			*o++ = *s;
		}
	}
	*p = *s ? s + 1 : s;
	*o = '\0';
	return w;
}

/* ---- Environment= ------------------------------------------------------------------- */

/* NAME=VALUE assignments, unbounded in number and length as systemd's. */
struct env_list {
	char **env;
	int n, cap;
};

static void env_clear(struct env_list *l)
{
	for (int i = 0; i < l->n; i++)
		free(l->env[i]);
	l->n = 0;
}

/* Adds NAME=VALUE to l, replacing one of the same name. */
static void env_add(struct env_list *l, const char *a)
{
	size_t k = strcspn(a, "=");
	if (!a[k] || k == 0)
		return;
	int i = 0;
	while (i < l->n && strncmp(l->env[i], a, k + 1) != 0)
		i++;
	char *copy = strdup(a);
	if (!copy)
		die(1, "out of memory");
	if (i == l->n && l->n == l->cap) {
		int cap = 2 * l->cap + 16;
		char **m = realloc(l->env, (size_t)cap * sizeof(*m));
		if (!m)
			die(1, "out of memory");
		l->env = m;
		l->cap = cap;
	}
	if (i < l->n)
		free(l->env[i]);
	l->env[i] = copy;
	l->n += i == l->n;
}

/* env_add of a formatted assignment. */
PN_FMT(2, 3) static void env_addf(struct env_list *l, const char *fmt, ...)
{
	va_list ap;
	char *a;
	va_start(ap, fmt);
	int r = vasprintf(&a, fmt, ap);
	va_end(ap);
	if (r < 0)
		die(1, "out of memory");
	env_add(l, a);
	free(a);
}

static void env_line(const char *key, char *value, void *arg)
{
	struct env_list *l = arg;
	if (strcmp(key, "Environment") != 0)
		return;
	if (!*value) /* an empty assignment empties the list */
		env_clear(l);
	for (char *w; (w = next_word(&value));)
		env_add(l, w);
}

int tune_unit_file_env(const char *file, char ***env)
{
	struct env_list l = {0};
	int r = service_lines(file, env_line, &l);
	if (r < 0) {
		tune_env_free(l.env, l.n);
		return r;
	}
	*env = l.env;
	return l.n;
}

void tune_env_free(char **env, int n)
{
	for (int i = 0; i < n; i++)
		free(env[i]);
	free(env);
}

/* name's value in l ("" when none). */
static const char *env_get(const struct env_list *l, const char *name)
{
	size_t k = strlen(name);
	for (int i = 0; i < l->n; i++)
		if (strncmp(l->env[i], name, k) == 0 && l->env[i][k] == '=')
			return l->env[i] + k + 1;
	return "";
}

/* ---- what a unit sets itself -------------------------------------------------------- */

struct own_read {
	struct env_list env;
	char slack[64];
	bool old_slack;
};

static void own_line(const char *key, char *value, void *arg)
{
	struct own_read *o = arg;
	if (strcmp(key, "TimerSlackNSec") == 0)
		snprintf(o->slack, sizeof(o->slack), "%s", value);
	else
		env_line(key, value, &o->env);
}

/* An earlier tune's kept drop-in: its assignments and whether it sets the slack. */
static void old_line(const char *key, char *value, void *arg)
{
	struct own_read *o = arg;
	if (strcmp(key, "TimerSlackNSec") == 0)
		o->old_slack = true;
	else
		env_line(key, value, &o->env);
}

/* The slack a service inherits where nothing sets its own: PID 1's. */
static void manager_slack(char *buf, size_t n)
{
	char v[32] = "";
	FILE *f = fopen("/proc/1/timerslack_ns", "r");
	if (f && fgets(v, sizeof(v), f))
		v[strcspn(v, "\n")] = '\0';
	if (f)
		fclose(f);
	snprintf(buf, n, "%s", v[0] ? v : "50us");
}

int tune_unit_own(const char *fragment, const char *dropins, struct tune_unit_own *own)
{
	struct own_read o = {0}, t = {0};
	memset(own, 0, sizeof(*own));
	char *paths = strdup(dropins ? dropins : ""), *p = paths;
	if (!paths)
		die(1, "out of memory");
	int r = fragment && fragment[0] ? service_lines(fragment, own_line, &o) : 0;
	for (char *file; r >= 0 && (file = next_word(&p));) {
		const char *base = strrchr(file, '/');
		base = base ? base + 1 : file;
		bool tunes = tune_ours(file);
		if (tunes && strcmp(base, TUNE_MEASURE_IN) == 0)
			continue; /* a killed tune's, removed before measuring */
		r = service_lines(file, tunes ? old_line : own_line, tunes ? (void *)&t : &o);
	}
	free(paths);
	const char *preload = env_get(&o.env, "LD_PRELOAD");
	own->preload = preload[0] ? strdup(preload) : NULL;
	if (preload[0] && !own->preload)
		die(1, "out of memory");
	tune_env_free(o.env.env, o.env.n);
	snprintf(own->slack, sizeof(own->slack), "%s", o.slack);
	own->old_slack = t.old_slack;
	if (own->old_slack && !own->slack[0])
		manager_slack(own->slack, sizeof(own->slack));
	own->old_env = t.env.env;
	own->old_nenv = t.env.n;
	return r;
}

void tune_unit_own_free(struct tune_unit_own *own)
{
	free(own->preload);
	tune_env_free(own->old_env, own->old_nenv);
	memset(own, 0, sizeof(*own));
}

/* ---- writing ------------------------------------------------------------------------ */

/* s inside an Environment= word's double quotes, '%' doubled unless raw (the unit's own
 * text, whose specifiers are systemd's). */
static void env_text(FILE *f, const char *s, bool raw)
{
	for (; *s; s++) {
		if (*s == '\\' || *s == '"')
			fputc('\\', f);
		if (*s == '\n' || *s == '\t')
			fputs(*s == '\n' ? "\\n" : "\\t", f);
		else if (*s == '%' && !raw)
			fputs("%%", f);
		else
			fputc(*s, f);
	}
}

/* An assignment as an Environment= word, quoted where it needs to be. */
static void env_word(FILE *f, const char *a, bool raw)
{
	bool quote = false;
	for (const char *c = a; *c; c++)
		quote |= *c == ' ' || *c == '"' || *c == '\'' || *c == '\\' ||
		         iscntrl((unsigned char)*c);
	if (quote)
		fputc('"', f);
	env_text(f, a, raw);
	if (quote)
		fputc('"', f);
}

void tune_cpus_env(char *buf, size_t size, int n)
{
	snprintf(buf, size,
	         "PUNCTUAL_CPUS=%d GOMAXPROCS=%d OMP_NUM_THREADS=%d DOTNET_PROCESSOR_COUNT=%d "
	         "PYTHON_CPU_COUNT=%d JAVA_TOOL_OPTIONS=-XX:ActiveProcessorCount=%d",
	         n, n, n, n, n, n);
}

/* d's Environment= assignments but LD_PRELOAD, into l. */
static void drop_vars(const struct tune_drop *d, struct env_list *l)
{
	const struct tune_setting *s = d->s;
	if (s->precise)
		env_addf(l, "PUNCTUAL_PRECISION=%d", TUNE_PRECISION_NS);
	if (s->slice) /* systemd has no slice setting: the shim sets it as it loads */
		env_addf(l, "PUNCTUAL_PROCESS_SLICE=%s", s->slice);
	if (s->precise && s->budget)
		env_addf(l, "PUNCTUAL_BUDGET=%s", s->budget);
	if (d->records) {
		env_add(l, "PUNCTUAL_STATS=1");
		env_addf(l, "PUNCTUAL_STATS_FILE=%s", d->records);
		if (d->runtime_env) /* the unit's own */
			env_addf(l, "RUNTIME_DIRECTORY=%s", d->runtime_env);
	}
	if (d->cpus) {
		char env[256], *p = env;
		tune_cpus_env(env, sizeof(env), d->cpus);
		for (char *w; (w = next_word(&p));)
			env_add(l, w);
	}
}

/* d's Environment= line, if it needs one; its assignments into l. */
static void drop_env(FILE *f, const struct tune_drop *d, struct env_list *l)
{
	drop_vars(d, l);
	if (!l->n)
		return;
	const char *own = d->own && d->own->preload ? d->own->preload : "";
	fputs("Environment=", f);
	if (own[0]) { /* the unit's own first, then the shim: both load */
		fputs("\"LD_PRELOAD=", f);
		env_text(f, own, true);
		fputc(':', f);
		env_text(f, d->shim, false);
		fputc('"', f);
	} else {
		struct env_list shim = {0};
		env_addf(&shim, "LD_PRELOAD=%s", d->shim);
		env_word(f, shim.env[0], false);
		tune_env_free(shim.env, shim.n);
	}
	for (int i = 0; i < l->n; i++) {
		fputc(' ', f);
		env_word(f, l->env[i], false);
	}
	fputc('\n', f);
}

/* A measuring drop-in undoes what an earlier tune's kept drop-in sets and d does not. */
static void drop_undo(FILE *f, const struct tune_drop *d, const struct env_list *set)
{
	const struct tune_unit_own *own = d->own;
	if (!own || !d->records)
		return;
	for (int i = 0; i < own->old_nenv; i++) {
		const char *a = own->old_env[i];
		char *name = strndup(a, strcspn(a, "="));
		if (!name)
			die(1, "out of memory");
		bool keep = strcmp(name, "LD_PRELOAD") == 0 || env_get(set, name)[0];
		free(name);
		if (keep)
			continue;
		fputs("UnsetEnvironment=", f);
		env_word(f, a, true);
		fputc('\n', f);
	}
	if (own->old_slack && !d->s->slack)
		fprintf(f, "TimerSlackNSec=%s\n", own->slack);
}

int tune_drop_in(FILE *f, const struct tune_drop *d)
{
	const struct tune_setting *s = d->s;
	struct env_list l = {0};
	if (d->records)
		fprintf(f, "%s, measuring '%s': removed when it ends.\n", TUNE_MARK, s->name);
	else
		fprintf(f, "%s (%s); `punctual tune --revert UNIT` removes it.\n", TUNE_MARK,
		        s->name);
	if (d->own && d->own->preload && (s->precise || s->slice || d->cpus))
		fprintf(f, "# LD_PRELOAD: the unit's own, then punctual's shim.\n");
	if (d->cpus)
		fprintf(f, "# The CPU count is advice from the cgroup's quota, not measured.\n");
	if (s->rt)
		fprintf(f, "# CAP_SYS_NICE: where its CPU is shared, each wait under SCHED_FIFO "
		           "alone.\n");
	fprintf(f, "[Service]\n");
	if (s->precise || s->slice || d->records || d->cpus)
		drop_env(f, d, &l);
	drop_undo(f, d, &l);
	if (s->slack)
		fprintf(f, "TimerSlackNSec=1\n");
	if (s->rt)
		fprintf(f, "AmbientCapabilities=CAP_SYS_NICE\n");
	if (d->records && d->runtime_dir) {
		/* the service user's, writable under ProtectSystem=strict; no other user may
		 * create a file in it */
		fprintf(f, "RuntimeDirectory=%s\n", d->runtime_dir);
		if (!d->runtime_env) /* the unit has none */
			fprintf(f, "UnsetEnvironment=RUNTIME_DIRECTORY\n");
	}
	tune_env_free(l.env, l.n);
	return ferror(f) ? -EIO : 0;
}

const char *tune_shim(void)
{
	static char path[4096];
	if (path[0])
		return path;
	const char *p = run_preload_path();
	if (!p)
		die(1, "libpunctual-preload.so not found (beside the punctual binary)");
	if (!realpath(p, path))
		snprintf(path, sizeof(path), "%s", p);
	for (const char *c = path; *c; c++)
		if (iscntrl((unsigned char)*c))
			die(1, "the shim's path has a control character: it cannot go into a unit");
	return path;
}

bool tune_ours(const char *path)
{
	char line[64] = "";
	FILE *f = fopen(path, "r");
	if (!f)
		return false;
	bool yes = fgets(line, sizeof(line), f) && strncmp(line, TUNE_MARK, strlen(TUNE_MARK)) == 0;
	fclose(f);
	return yes;
}

void tune_runtime_dir(const char *unit, char *buf, size_t n)
{
	static const char plain[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	                            "0123456789.-@";
	size_t k = (size_t)snprintf(buf, n, "punctual-tune-");
	for (const char *c = unit; *c && k < n; c++)
		k += (size_t)(strchr(plain, *c)
		                      ? snprintf(buf + k, n - k, "%c", *c)
		                      : snprintf(buf + k, n - k, "_%02x", (unsigned char)*c));
	if (k >= n || k > NAME_MAX)
		usage_error("%s: its runtime directory's name, with its characters escaped, "
		            "would pass a file name's %d bytes",
		            unit, NAME_MAX);
}

char *tune_runtime_env(const char *dirs, const char *ours)
{
	char *copy = strdup(dirs), *p = copy;
	struct text t = {0};
	if (!copy)
		die(1, "out of memory");
	for (char *w; (w = next_word(&p));) {
		w[strcspn(w, ":")] = '\0'; /* "NAME:LINK": the directory is NAME */
		if (!*w || strcmp(w, ours) == 0)
			continue;
		if (t.len)
			text_add(&t, ":", 1);
		text_add(&t, "/run/", 5);
		text_add(&t, w, strlen(w));
	}
	free(copy);
	return t.s;
}

/* ---- the unit file's command -------------------------------------------------------- */

static void exec_line(const char *key, char *value, void *arg)
{
	char **found = arg;
	if (strcmp(key, "ExecStart") != 0)
		return;
	if (!*value) { /* an empty assignment resets */
		free(*found);
		*found = NULL;
	} else if (!*found) {
		*found = strdup(value);
		if (!*found)
			die(1, "out of memory");
	}
}

char **tune_unit_file_cmd(const char *file)
{
	char *line = NULL;
	int r = service_lines(file, exec_line, &line);
	if (r < 0)
		usage_error("--unit-file %s: %s", file, tune_file_error(r));
	if (!line)
		usage_error("--unit-file %s: no ExecStart= in its [Service] section", file);
	char *p = line;
	bool at = false;
	for (; *p == '@' || (*p && strchr("-:+!|", *p)); p++)
		at |= *p == '@';
	if (strpbrk(p, "%$")) {
		free(line);
		usage_error("--unit-file %s: its ExecStart= has specifiers or variables, which "
		            "systemd expands: give the command as tune -- CMD",
		            file);
	}
	/* one block, the words after the pointers */
	size_t len = strlen(p) + 1, max = len / 2 + 2;
	char **argv = calloc(1, max * sizeof(*argv) + len);
	if (!argv)
		die(1, "out of memory");
	char *words = memcpy((char *)(argv + max), p, len);
	free(line);
	size_t n = 0;
	for (char *w; (w = next_word(&words));)
		argv[n++] = w;
	if (at && n >= 2) /* "@": the second word is the name the program sees */
		memmove(argv + 1, argv + 2, (n-- - 1) * sizeof(*argv));
	if (!n)
		usage_error("--unit-file %s: its ExecStart= is empty", file);
	return argv;
}
