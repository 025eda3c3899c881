/* SPDX-License-Identifier: MIT */
/*
 * `punctual probe --compare` reads a probe report (--json) into figures and compares two
 * reports' facts. A report is walked generically, so that sections a version adds are
 * compared without this file knowing them: every number becomes a figure named by its
 * path, an array element by the members that identify it, and a histogram gives p50 and
 * p99, each with an interval from its sample count. Numbers are read as doubles
 * (JSON_DECODE_INT_AS_REAL): json.c writes integers past INT64_MAX, which jansson
 * refuses as integers.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "util/diag.h"
#include "util/out.h"
#include "util/json.h"
#include "probe/compare/compare.h"
#include "util/noise.h"
#include "probe/schema.h"

/* A probe report is some kilobytes; the cap bounds the memory jansson's tree and the
 * figures take (docs/DESIGN.md, "--compare's memory"). */
#define MAX_INPUT (16 << 20)
/* A probe report nests 5 levels; the walk recurses once or twice a level. */
#define MAX_DEPTH 64
/* pn_hist's resolution. */
#define HIST_RES (1.0 / 64)

/* ---- reading ---------------------------------------------------------------------- */

static char *slurp(const char *file, size_t *n)
{
	FILE *f = strcmp(file, "-") == 0 ? stdin : fopen(file, "rb");
	if (!f)
		die(EXIT_USAGE, "--compare %s: %s", file, strerror(errno));
	size_t cap = 1 << 16, len = 0;
	char *b = malloc(cap);
	if (!b)
		die(1, "out of memory");
	for (;;) {
		size_t k = fread(b + len, 1, cap - len, f);
		len += k;
		if (k == 0)
			break;
		if (len == cap) {
			if (cap >= MAX_INPUT)
				die(EXIT_USAGE,
				    "--compare %s: larger than %d MiB, not a probe report", file,
				    MAX_INPUT >> 20);
			char *nb = realloc(b, cap *= 2);
			if (!nb)
				die(1, "out of memory");
			b = nb;
		}
	}
	if (ferror(f))
		die(EXIT_USAGE, "--compare %s: %s", file, strerror(errno ? errno : EIO));
	if (f != stdin)
		fclose(f);
	*n = len;
	return b;
}

/* Whether v nests containers deeper than left. */
static bool too_deep(json_t *v, int left)
{
	const char *key;
	size_t i;
	json_t *m;
	if (!json_is_object(v) && !json_is_array(v))
		return false;
	if (left == 0)
		return true;
	json_array_foreach(v, i, m)
	{
		if (too_deep(m, left - 1))
			return true;
	}
	json_object_foreach(v, key, m)
	{
		if (too_deep(m, left - 1))
			return true;
	}
	return false;
}

/* The section of doc named so (PROBE_TOP: doc itself), or NULL. */
static json_t *section_of(json_t *doc, const char *section)
{
	return strcmp(section, PROBE_TOP) == 0 ? doc : json_object_get(doc, section);
}

/* The member key of section in doc, or NULL. */
static json_t *member(json_t *doc, const char *section, const char *key)
{
	return json_object_get(section_of(doc, section), key);
}

/* Member key of o as a number, when o is an object that has it. */
static bool num(const json_t *o, const char *key, double *v)
{
	const json_t *m = json_object_get(o, key);
	if (!json_is_number(m))
		return false;
	*v = json_number_value(m);
	return true;
}

void compare_load(struct report *r, const char *file)
{
	size_t n;
	char *text = slurp(file, &n);
	json_error_t err;
	r->doc = json_loadb(
	        text, n, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY | JSON_DECODE_INT_AS_REAL, &err);
	free(text);
	if (!r->doc && json_error_code(&err) == json_error_out_of_memory)
		die(1, "out of memory");
	if (!r->doc) {
		/* one line whatever the input */
		for (char *p = err.text; *p; p++)
			if ((unsigned char)*p < 0x20)
				*p = '?';
		die(EXIT_USAGE, "--compare %s: not valid JSON: line %d, column %d: %s", file,
		    err.line, err.column > 0 ? err.column : 1, err.text);
	}
	const char *tool = json_string_value(json_object_get(r->doc, "tool"));
	const char *cmd = json_string_value(json_object_get(r->doc, "command"));
	if (!tool || strcmp(tool, "punctual") != 0)
		die(EXIT_USAGE, "--compare %s: not a punctual report (no \"tool\": \"punctual\")",
		    file);
	if (!cmd || strcmp(cmd, "probe") != 0)
		die(EXIT_USAGE,
		    "--compare %s: a report of 'punctual %s', not of 'punctual probe --json'", file,
		    cmd ? cmd : "?");
	if (too_deep(r->doc, MAX_DEPTH))
		die(EXIT_USAGE, "--compare %s: nested deeper than %d levels, not a probe report",
		    file, MAX_DEPTH);
	compare_as_v1(r->doc);
	r->file = file;
	r->version = json_string_value(json_object_get(r->doc, "version"));
	r->slack_self = -1;
	for (size_t i = 0; i < probe_nkeys; i++) {
		const struct probe_key *k = &probe_keys[i];
		json_t *v = k->role == PK_SLACK_SELF && k->section && k->key
		                    ? member(r->doc, k->section, k->key)
		                    : NULL;
		if (json_is_number(v))
			r->slack_self = json_number_value(v);
	}
}

const char *compare_str(struct report *r, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	size_t len = strlen(buf) + 1, lead = sizeof(char *);
	if (r->arena_used + len > r->arena_size) {
		size_t size = 1 << 20; /* small beside a report at the cap */
		char *b = malloc(size);
		if (!b)
			die(1, "out of memory");
		memcpy(b, &r->arena, lead); /* the block before it */
		r->arena = b;
		r->arena_used = lead;
		r->arena_size = size;
	}
	char *s = memcpy(r->arena + r->arena_used, buf, len);
	r->arena_used += len;
	return s;
}

void compare_free(struct report *r)
{
	for (char *b = r->arena, *prev; b; b = prev) {
		memcpy(&prev, b, sizeof(prev));
		free(b);
	}
	r->arena = NULL;
	free(r->f);
	json_decref(r->doc);
}

/* ---- figures ---------------------------------------------------------------------- */

PN_FMT(4, 5)
static struct fig *add(struct report *r, const char *section, const char *parent, const char *fmt,
                       ...)
{
	if (r->n == r->cap) {
		r->cap = r->cap ? r->cap * 2 : 128;
		struct fig *nf = realloc(r->f, r->cap * sizeof(*nf));
		if (!nf)
			die(1, "out of memory");
		r->f = nf;
	}
	struct fig *f = &r->f[r->n++];
	memset(f, 0, sizeof(*f));
	f->section = section; /* a key of the document, or PROBE_TOP */
	char name[FIG_NAME_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(name, sizeof(name), fmt, ap);
	va_end(ap);
	f->name = compare_str(r, "%s", name);
	f->parent = compare_str(r, "%.*s", FIG_NAME_MAX - 1, parent);
	f->dir = -1;
	f->adaptive = r->adaptive;
	return f;
}

static bool ends_with(const char *s, const char *tail)
{
	size_t a = strlen(s), b = strlen(tail);
	return a >= b && strcmp(s + a - b, tail) == 0;
}

/* The quantiles an object gives, (q, value) in rising q, into kq and v: a histogram's
 * min, p50, p99, p999 and max, or a flat object's pNN_ns and max_ns. Their number. */
#define MAX_POINTS 8
static int points(const json_t *h, bool flat, double kq[MAX_POINTS], double v[MAX_POINTS])
{
	static const char *const hist[] = {"min", "p50", "p99", "p999", "max"};
	static const char *const flats[] = {"p50_ns", "p90_ns", "p99_ns", "p999_ns", "max_ns"};
	static const double hq[] = {0, 0.5, 0.99, 0.999, 1}, fq[] = {0.5, 0.9, 0.99, 0.999, 1};
	const char *const *k = flat ? flats : hist;
	const double *q = flat ? fq : hq;
	int n = 0, nk = 5;
	for (int i = 0; i < nk; i++)
		if (num(h, k[i], &v[n]))
			kq[n++] = q[i];
	return n;
}

/* The value at quantile q of an object of quantiles, interpolated on a log scale where
 * positive; NAN beyond the lowest or the highest. */
static double at(const json_t *h, bool flat, double q)
{
	double kq[MAX_POINTS], v[MAX_POINTS];
	int n = points(h, flat, kq, v);
	for (int i = 0; i < n; i++) {
		if (q > kq[i])
			continue;
		if (q == kq[i])
			return v[i];
		if (i == 0)
			return NAN;
		double t = (q - kq[i - 1]) / (kq[i] - kq[i - 1]);
		if (v[i - 1] > 0 && v[i] > 0) /* latencies: a long right tail */
			return v[i - 1] * pow(v[i] / v[i - 1], t);
		return v[i - 1] + (v[i] - v[i - 1]) * t;
	}
	return NAN;
}

static bool is_hist(const json_t *o)
{
	double d;
	return num(o, "count", &d) && num(o, "p50", &d) && num(o, "p99", &d);
}

/* A quantile of h resting on samples samples; its interval comes later. */
static void quantile(struct fig *f, const json_t *h, bool flat, double q, double samples)
{
	f->rule = R_QUANTILE;
	f->time = true;
	f->h = h;
	f->flat = flat;
	f->q = q;
	f->samples = samples;
	f->v = f->lo = f->hi = at(h, flat, q);
}

/* A quantile figure's object of quantiles at q. */
static double at_fig(const void *arg, double q)
{
	const struct fig *f = arg;
	return at(f->h, f->flat, q);
}

/*
 * Each quantile's interval, its report's noise. A quantile q needs n (1 - q) >= 1, one
 * sample above it: with fewer it is unsupported and never compared, as the text report
 * prints "-". The rank's bounds are interpolated, and widened to the histogram's
 * resolution and by the between-run factor.
 */
static void intervals(struct report *r, const char *side, double z)
{
	for (size_t i = 0; i < r->n; i++) {
		struct fig *f = &r->f[i];
		if (f->rule != R_QUANTILE)
			continue;
		double n = f->samples, need = 1 / (1 - f->q);
		if (isnan(f->v) || !(n * (1 - f->q) >= 1 - 1e-9)) {
			f->unsupported = compare_str(r, "p%g of %.0f samples %s (needs %.0f)",
			                             f->q * 100, n, side, ceil(need - 1e-9));
			continue;
		}
		noise_interval(f->v, f->q, n, z, HIST_RES, at_fig, f, &f->lo, &f->hi);
	}
}

/* Whether a member under row k is no figure and is not walked: a fact, a slack, an
 * ignored key, or an identity's own scalar value. */
static bool not_walked(const struct probe_key *k, const json_t *m)
{
	if (k->role == PK_IDENTITY)
		return !json_is_object(m) && !json_is_array(m);
	return k->role != PK_FIGURE && k->role != PK_PARAM && k->role != PK_CONTEXT;
}

static void walk(struct report *r, const char *section, const char *path, json_t *v);

/* pNN_ns: 0.NN, p999_ns: 0.999; else -1. */
static double quantile_of(const char *key)
{
	size_t n = strlen(key);
	if (n < 5 || key[0] != 'p' || strcmp(key + n - 3, "_ns") != 0 || n - 4 > 4)
		return -1;
	double q = 0, scale = 0.1;
	for (size_t i = 1; i < n - 3; i++, scale /= 10) {
		if (key[i] < '0' || key[i] > '9')
			return -1;
		q += (key[i] - '0') * scale;
	}
	return q > 0 && q < 1 ? q : -1;
}

/* The samples o's quantiles rest on (its member whose row has .samples), or -1. */
static double samples_of(const char *section, const json_t *o)
{
	const char *key;
	json_t *m;
	json_object_foreach((json_t *)o, key, m)
	{
		if (probe_key(section, key)->samples && json_is_number(m))
			return json_number_value(m);
	}
	return -1;
}

/* A number of object o (NULL: of an array, or the report's own) resting on n samples
 * (-1: unknown). */
static void number(struct report *r, const char *section, const char *path, const json_t *o,
                   double n, const char *key, double v)
{
	const struct probe_key *k = probe_key(section, key);
	struct fig *f = add(r, section, path, "%s%s%s", path, *path ? " " : "", key);
	f->v = v;
	f->time = probe_key_ns(k, key);
	f->dir = k->higher ? +1 : -1;
	double q = k->role == PK_FIGURE && o ? quantile_of(key) : -1;
	if (k->role == PK_PARAM) {
		f->rule = R_PARAM;
	} else if (k->role == PK_CONTEXT) {
		f->rule = R_CONTEXT;
	} else if (q > 0 && n >= 0) {
		quantile(f, o, true, q, n);
	} else if (k->exact) {
		f->rule = R_EXACT;
		f->fold = k->fold && *path; /* in an element, not a section's own total */
	} else if (!f->time && v >= 0 && v == floor(v)) {
		f->rule = R_COUNT;
	} else {
		f->rule = R_FACTOR;
	}
}

/* NAME_min beside NAME, both numbers, the low end at most NAME: NAME's range. */
static const json_t *range_low(const json_t *o, const char *key, const json_t *m)
{
	char min[FIG_NAME_MAX];
	if ((size_t)snprintf(min, sizeof(min), "%s_min", key) >= sizeof(min))
		return NULL;
	const json_t *low = json_object_get(o, min);
	return json_is_number(low) && json_number_value(low) <= json_number_value(m) ? low : NULL;
}

/* Whether key is NAME_min beside a member NAME: the low end of NAME's range. */
static bool is_range_low(const json_t *o, const char *key)
{
	char base[FIG_NAME_MAX];
	size_t n = strlen(key);
	if (!ends_with(key, "_min") || n - 4 >= sizeof(base))
		return false;
	memcpy(base, key, n - 4);
	base[n - 4] = '\0';
	return json_object_get(o, base) != NULL;
}

static void object(struct report *r, const char *section, const char *path, json_t *o)
{
	if (json_is_false(json_object_get(o, "supported"))) {
		struct fig *f = add(r, section, path, "%s", path);
		f->rule = R_PARAM;
		f->v = NAN; /* unsupported: skipped with its figures */
		return;
	}
	const char *key;
	json_t *m;
	double samples = samples_of(section, o);
	json_object_foreach(o, key, m)
	{
		char sub[192];
		snprintf(sub, sizeof(sub), "%s%s%s", path, *path ? " " : "", key);
		if (not_walked(probe_key(section, key), m))
			continue;
		if (json_is_number(m) && is_range_low(o, key))
			continue; /* the low end of its figure's range */
		const json_t *low = NULL;
		if (json_is_number(m)) {
			number(r, section, path, o, samples, key, json_number_value(m));
			low = range_low(o, key, m);
		}
		if (low) {
			struct fig *f = &r->f[r->n - 1];
			f->rule = R_RANGE;
			f->lo = json_number_value(low);
			f->hi = json_number_value(m);
		} else if (json_is_object(m) && is_hist(m)) {
			double n = 0;
			num(m, "count", &n);
			quantile(add(r, section, path, "%s p50", sub), m, false, 0.5, n);
			quantile(add(r, section, path, "%s p99", sub), m, false, 0.99, n);
		} else if (json_is_object(m) || json_is_array(m))
			walk(r, section, sub, m);
	}
}

/* The timer slack an element ran at (its PK_SLACK member), if it says. */
static bool slack_of(const char *section, json_t *e, double *slack)
{
	const char *key;
	json_t *m;
	json_object_foreach(e, key, m)
	{
		if (probe_key(section, key)->role == PK_SLACK && json_is_number(m)) {
			*slack = json_number_value(m);
			return true;
		}
	}
	return false;
}

/* An array element's name from its identifying members, one per slack role. */
static void element(struct report *r, const char *section, const char *path, size_t idx, json_t *e)
{
	char id[160] = "";
	size_t n = 0;
	const char *key;
	json_t *m;
	bool was_adaptive = r->adaptive;
	json_object_foreach(e, key, m)
	{
		if (probe_key(section, key)->role != PK_IDENTITY || n >= sizeof(id) - 1)
			continue;
		if (json_is_string(m) && probe_is_adaptive(key, json_string_value(m)))
			r->adaptive = true;
		char b[64];
		if (json_is_string(m))
			snprintf(b, sizeof(b), "%s", json_string_value(m));
		else if (json_is_number(m) && ends_with(key, "_ns"))
			fmt_ns(b, sizeof(b), json_number_value(m));
		else if (json_is_number(m))
			snprintf(b, sizeof(b), "%s %g", key, json_number_value(m));
		else
			continue;
		n += (size_t)snprintf(id + n, sizeof(id) - n, "%s%s", n ? " " : "", b);
	}
	if (!n)
		snprintf(id, sizeof(id), "%s#%zu", path, idx);
	/* an element inside an element is named under its parent's name: the same variant at
	 * two lengths is two figures */
	const char *last = strrchr(path, ' ');
	if (n && last) {
		char own[160];
		memcpy(own, id, sizeof(own));
		if (snprintf(id, sizeof(id), "%.*s %s", (int)(last - path), path, own) >=
		    (int)sizeof(id))
			id[sizeof(id) - 1] = '\0'; /* FIG_NAME_MAX bounds a name anyway */
	}
	/* a sleep cell: at the process's slack and at 1 ns; one column where that is 1 ns */
	double slack;
	if (slack_of(section, e, &slack)) {
		char p[192];
		if (slack == r->slack_self) {
			snprintf(p, sizeof(p), "%s, process slack", id);
			object(r, section, p, e);
		}
		if (slack == 1) {
			snprintf(p, sizeof(p), "%s, slack 1 ns", id);
			object(r, section, p, e);
		}
	} else {
		object(r, section, id, e);
	}
	r->adaptive = was_adaptive;
}

static void walk(struct report *r, const char *section, const char *path, json_t *v)
{
	if (json_is_object(v)) {
		object(r, section, path, v);
		return;
	}
	size_t i;
	json_t *e;
	json_array_foreach(v, i, e)
	{
		if (json_is_object(e))
			element(r, section, path, i, e);
		else if (json_is_number(e)) {
			char k[24];
			snprintf(k, sizeof(k), "#%zu", i);
			number(r, section, path, NULL, -1, k, json_number_value(e));
		}
	}
}

/* A report's figures: its own numbers in PROBE_TOP, each object or array a section. */
static void figures(struct report *r)
{
	const char *key;
	json_t *m;
	json_object_foreach(r->doc, key, m)
	{
		if (not_walked(probe_key(PROBE_TOP, key), m))
			continue;
		if (json_is_object(m) || json_is_array(m))
			walk(r, key, "", m);
		else if (json_is_number(m))
			number(r, PROBE_TOP, "", NULL, -1, key, json_number_value(m));
	}
}

void compare_figures(struct report *a, struct report *b)
{
	figures(a);
	figures(b);
	size_t nq = 0;
	for (size_t i = 0; i < a->n; i++)
		nq += a->f[i].rule == R_QUANTILE;
	double z = noise_z(nq);
	intervals(a, "before", z);
	intervals(b, "after", z);
}

/* ---- facts ------------------------------------------------------------------------ */

/* A scalar or an array of scalars as text, "(none)" when absent. */
static void scalar(const json_t *v, char *b, size_t n)
{
	b[0] = '\0';
	if (!v)
		snprintf(b, n, "(none)");
	else if (json_is_string(v))
		snprintf(b, n, "%s", json_string_value(v));
	else if (json_is_number(v))
		snprintf(b, n, "%.15g", json_number_value(v));
	else if (json_is_boolean(v))
		snprintf(b, n, "%s", json_is_true(v) ? "true" : "false");
	else if (json_is_null(v))
		snprintf(b, n, "null");
	else if (json_is_array(v))
		for (size_t i = 0, k = 0; i < json_array_size(v) && k < n; i++) {
			char e[64];
			scalar(json_array_get(v, i), e, sizeof(e));
			k += (size_t)snprintf(b + k, n - k, "%s%s", i ? " " : "", e);
		}
}

/* Appends the fact (section, key) to res if va and vb (NULL: absent) differ. */
static void fact(const char *section, const char *key, const json_t *va, const json_t *vb,
                 struct fact *res, size_t *n)
{
	if (!va && !vb)
		return;
	struct fact *f = &res[*n];
	scalar(va, f->before, sizeof(f->before));
	scalar(vb, f->after, sizeof(f->after));
	if (strcmp(f->before, f->after) == 0)
		return;
	bool top = strcmp(section, PROBE_TOP) == 0;
	snprintf(f->name, sizeof(f->name), "%s%s%s", top ? "" : section, top ? "" : " ", key);
	(*n)++;
}

size_t compare_facts(const struct report *a, const struct report *b, struct fact *res, size_t max)
{
	size_t n = 0;
	for (size_t i = 0; i < probe_nkeys && n < max; i++) {
		const struct probe_key *k = &probe_keys[i];
		if (k->role != PK_FACT || !k->section)
			continue;
		if (k->key) {
			fact(k->section, k->key, member(a->doc, k->section, k->key),
			     member(b->doc, k->section, k->key), res, &n);
			continue;
		}
		json_t *sa = section_of(a->doc, k->section), *sb = section_of(b->doc, k->section);
		const char *key;
		json_t *m;
		json_object_foreach(sa, key, m)
		{
			if (n == max)
				break;
			fact(k->section, key, m, json_object_get(sb, key), res, &n);
		}
		json_object_foreach(sb, key, m)
		{
			if (n == max)
				break;
			if (!json_object_get(sa, key))
				fact(k->section, key, NULL, m, res, &n);
		}
	}
	return n;
}

/* ---- background load -------------------------------------------------------------- */

/* Two reports' background loads differ when other processes' CPU beside their 1 ms loops
 * is this far apart: half a CPU shows in a sleeper's tail, whatever the CPU count. */
#define LOAD_APART 0.5

static double others_cpus(const struct report *r)
{
	double v;
	return num(member(r->doc, "why_late", "others"), "cpus", &v) ? v : -1;
}

void compare_load_of(const struct report *a, const struct report *b, struct load *l)
{
	l->before = others_cpus(a);
	l->after = others_cpus(b);
	l->differs = l->before >= 0 && l->after >= 0 && fabs(l->before - l->after) >= LOAD_APART;
}
