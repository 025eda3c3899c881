/* SPDX-License-Identifier: MIT */
/*
 * compare.c: `punctual probe --compare BEFORE AFTER`: two probe reports (--json) side by
 * side. The reports are read with jsonread.c and walked generically, so that sections a
 * version adds are compared without this file knowing them (what a key means, a
 * parameter, an identity, a fact, is probe_schema.c's table): every number becomes a
 * figure named by its path, an array element by the members that identify it (a sleep
 * cell by mechanism, interval and which slack), and a histogram ({count, p50, p99, ...})
 * gives two figures, p50 and p99. compare_join.c joins the figures both reports have by
 * name and gives each pair a verdict that accounts for noise (the rules are at its
 * verdict(), and in punctual(1)); figures only one has are listed as skipped. System
 * facts that differ come first. compare_render.c renders the result.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare.h"
#include "probe.h"
#include "probe_schema.h"

#define MAX_INPUT (64 << 20)
/* pn_hist's resolution: a bucket is at most 1/64 of its lower bound wide. */
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

/* The section of doc named so (PROBE_TOP: doc itself), or NULL. */
static const struct jv *section_of(const struct jv *doc, const char *section)
{
	return strcmp(section, PROBE_TOP) == 0 ? doc : jv_get(doc, section);
}

/* The member key of section in doc, or NULL. */
static const struct jv *member(const struct jv *doc, const char *section, const char *key)
{
	return jv_get(section_of(doc, section), key);
}

static void load(struct report *r, const char *file)
{
	size_t n;
	char *text = slurp(file, &n), err[256];
	int e = jv_parse(text, n, &r->doc, err, sizeof(err));
	free(text);
	if (e == -ENOMEM)
		die(1, "out of memory");
	if (e < 0)
		die(EXIT_USAGE, "--compare %s: not valid JSON: %s", file, err);
	const char *tool = jv_str(r->doc, "tool"), *cmd = jv_str(r->doc, "command");
	if (!tool || strcmp(tool, "punctual") != 0)
		die(EXIT_USAGE, "--compare %s: not a punctual report (no \"tool\": \"punctual\")",
		    file);
	if (!cmd || strcmp(cmd, "probe") != 0)
		die(EXIT_USAGE,
		    "--compare %s: a report of 'punctual %s', not of 'punctual probe --json'", file,
		    cmd ? cmd : "?");
	r->file = file;
	r->slack_self = -1;
	for (size_t i = 0; i < probe_nkeys; i++) {
		const struct probe_key *k = &probe_keys[i];
		const struct jv *v = k->role == PK_SLACK_SELF && k->section && k->key
		                             ? member(r->doc, k->section, k->key)
		                             : NULL;
		if (v && v->type == JV_NUM)
			r->slack_self = v->num;
	}
}

/* ---- members by name -------------------------------------------------------------- */

/* An object's members sorted by name, for lookups by bisection: jv_get scans, and a
 * lookup per member would make an object of k members cost O(k^2). */
struct keyed {
	const struct jv *o;
	size_t *ord; /* member positions by name, then position */
};

static int by_key(const void *x, const void *y, void *o)
{
	char *const *keys = ((const struct jv *)o)->keys;
	size_t i = *(const size_t *)x, k = *(const size_t *)y;
	int c = strcmp(keys[i], keys[k]);
	return c ? c : (i > k) - (i < k);
}

static void keyed_init(struct keyed *kd, const struct jv *o)
{
	size_t n = o && o->type == JV_OBJ ? o->len : 0;
	kd->o = o;
	kd->ord = malloc((n + 1) * sizeof(*kd->ord));
	if (!kd->ord)
		die(1, "out of memory");
	for (size_t i = 0; i < n; i++)
		kd->ord[i] = i;
	qsort_r(kd->ord, n, sizeof(*kd->ord), by_key, (void *)o);
}

/* The member named key, the first if there are several (as jv_get), or NULL. */
static const struct jv *keyed_get(const struct keyed *kd, const char *key)
{
	const struct jv *o = kd->o;
	size_t lo = 0, hi = o && o->type == JV_OBJ ? o->len : 0, n = hi;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (strcmp(o->keys[kd->ord[mid]], key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && strcmp(o->keys[kd->ord[lo]], key) == 0 ? &o->v[kd->ord[lo]] : NULL;
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
	snprintf(f->section, sizeof(f->section), "%s", section);
	snprintf(f->parent, sizeof(f->parent), "%s", parent);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(f->name, sizeof(f->name), fmt, ap);
	va_end(ap);
	f->dir = -1;
	return f;
}

static bool ends_with(const char *s, const char *tail)
{
	size_t a = strlen(s), b = strlen(tail);
	return a >= b && strcmp(s + a - b, tail) == 0;
}

/* The value at quantile q of a histogram object, interpolated between the quantiles it
 * has (min 0, p50, p99, p999, max 1) on a log scale where they are positive. */
static double at(const struct jv *h, double q)
{
	static const char *const k[] = {"min", "p50", "p99", "p999", "max"};
	static const double kq[] = {0, 0.5, 0.99, 0.999, 1};
	double v[5];
	for (int i = 0; i < 5; i++)
		if (!jv_num(h, k[i], &v[i]))
			v[i] = i ? v[i - 1] : 0;
	if (q <= 0)
		return v[0];
	for (int i = 1; i < 5; i++) {
		if (q > kq[i])
			continue;
		double t = (q - kq[i - 1]) / (kq[i] - kq[i - 1]);
		if (v[i - 1] > 0 && v[i] > 0) /* latencies: a long right tail, log scale */
			return v[i - 1] * pow(v[i] / v[i - 1], t);
		return v[i - 1] + (v[i] - v[i - 1]) * t;
	}
	return v[4];
}

static bool is_hist(const struct jv *o)
{
	double d;
	return jv_num(o, "count", &d) && jv_num(o, "p50", &d) && jv_num(o, "p99", &d);
}

/* A quantile of a histogram; its interval comes once every figure is known. */
static void quantile(struct fig *f, const struct jv *h, double q)
{
	f->rule = R_QUANTILE;
	f->time = true;
	f->h = h;
	f->q = q;
	f->v = f->lo = f->hi = at(h, q);
}

/* The z for m quantile rows: a two-sided 5% chance that any of them is called changed
 * by chance alone (Bonferroni: 2.5%/m on each side), by bisection on erfc. */
static double z_for(size_t m)
{
	double tail = 0.025 / (double)(m ? m : 1), lo = 0, hi = 40;
	for (int i = 0; i < 100; i++) {
		double z = (lo + hi) / 2;
		if (0.5 * erfc(z / M_SQRT2) > tail)
			lo = z;
		else
			hi = z;
	}
	return hi;
}

/* Each quantile's interval: its order statistic's rank q*n +- z sqrt(n q (1-q)), as a
 * value by interpolating between the quantiles the report has, widened to the
 * histogram's resolution. */
static void intervals(struct report *r, double z)
{
	for (size_t i = 0; i < r->n; i++) {
		struct fig *f = &r->f[i];
		if (f->rule != R_QUANTILE)
			continue;
		double n = 0;
		jv_num(f->h, "count", &n);
		double d = n > 0 ? z * sqrt(f->q * (1 - f->q) / n) : 1;
		f->lo = fmin(at(f->h, f->q - d), f->v * (1 - HIST_RES));
		f->hi = fmax(at(f->h, f->q + d), f->v * (1 + HIST_RES));
	}
}

/* Whether a member under row k is no figure and is not walked: a fact, a slack, an
 * ignored key, or an identity's own value (an identity that holds an object is walked). */
static bool not_walked(const struct probe_key *k, const struct jv *m)
{
	if (k->role == PK_IDENTITY)
		return m->type != JV_OBJ && m->type != JV_ARR;
	return k->role != PK_FIGURE && k->role != PK_PARAM;
}

static void walk(struct report *r, const char *section, const char *path, const struct jv *v);

static void number(struct report *r, const char *section, const char *path, const char *key,
                   double v)
{
	const struct probe_key *k = probe_key(section, key);
	struct fig *f = add(r, section, path, "%s%s%s", path, *path ? " " : "", key);
	f->v = v;
	f->time = probe_key_ns(k, key);
	f->dir = k->higher ? +1 : -1;
	if (k->role == PK_PARAM) {
		f->rule = R_PARAM;
	} else if (k->exact) {
		f->rule = R_EXACT;
		f->fold = k->fold && *path; /* in an element, not a section's own total */
	} else if (!f->time && v >= 0 && v == floor(v)) {
		f->rule = R_COUNT; /* events counted in one run */
	} else {
		f->rule = R_FACTOR;
	}
}

static void object(struct report *r, const char *section, const char *path, const struct jv *o)
{
	const struct jv *sup = jv_get(o, "supported");
	if (sup && sup->type == JV_BOOL && !sup->b) {
		struct fig *f = add(r, section, path, "%s", path);
		f->rule = R_PARAM;
		f->v = NAN; /* unsupported: skipped with its figures */
		return;
	}
	struct keyed kd;
	keyed_init(&kd, o);
	for (size_t i = 0; i < o->len; i++) {
		const char *key = o->keys[i];
		const struct jv *m = &o->v[i], *low;
		char sub[192];
		snprintf(sub, sizeof(sub), "%s%s%s", path, *path ? " " : "", key);
		if (not_walked(probe_key(section, key), m))
			continue;
		char min[64], base[64];
		snprintf(min, sizeof(min), "%s_min", key);
		snprintf(base, sizeof(base), "%.*s", (int)strlen(key) - 4, key);
		if (m->type == JV_NUM && ends_with(key, "_min") && keyed_get(&kd, base))
			continue; /* the low end of its figure's range */
		if (m->type == JV_NUM)
			number(r, section, path, key, m->num);
		low = m->type == JV_NUM ? keyed_get(&kd, min) : NULL;
		if (low && low->type == JV_NUM && low->num <= m->num) {
			struct fig *f = &r->f[r->n - 1]; /* a figure with its range [min, it] */
			f->rule = R_RANGE;
			f->lo = low->num;
			f->hi = m->num;
		} else if (m->type == JV_OBJ && is_hist(m)) {
			quantile(add(r, section, path, "%s p50", sub), m, 0.5);
			quantile(add(r, section, path, "%s p99", sub), m, 0.99);
		} else if (m->type == JV_OBJ || m->type == JV_ARR)
			walk(r, section, sub, m);
	}
	free(kd.ord);
}

/* The timer slack an element ran at (its PK_SLACK member), if it says. */
static bool slack_of(const char *section, const struct jv *e, double *slack)
{
	for (size_t i = 0; i < e->len; i++)
		if (probe_key(section, e->keys[i])->role == PK_SLACK && e->v[i].type == JV_NUM) {
			*slack = e->v[i].num;
			return true;
		}
	return false;
}

/* An array element's name from its identifying members, one per slack role it has. */
static void element(struct report *r, const char *section, const char *path, size_t idx,
                    const struct jv *e)
{
	char id[160] = "";
	size_t n = 0;
	for (size_t i = 0; i < e->len; i++) {
		const struct jv *m = &e->v[i];
		if (probe_key(section, e->keys[i])->role != PK_IDENTITY || n >= sizeof(id) - 1)
			continue;
		char b[64];
		if (m->type == JV_STR)
			snprintf(b, sizeof(b), "%s", m->str);
		else if (m->type == JV_NUM && ends_with(e->keys[i], "_ns"))
			fmt_ns(b, sizeof(b), m->num);
		else if (m->type == JV_NUM)
			snprintf(b, sizeof(b), "%s %g", e->keys[i], m->num);
		else
			continue;
		n += (size_t)snprintf(id + n, sizeof(id) - n, "%s%s", n ? " " : "", b);
	}
	if (!n)
		snprintf(id, sizeof(id), "%s#%zu", path, idx);
	/* a sleep cell: at the process's slack (the report's first column) and at 1 ns;
	 * a process whose slack is 1 ns has one column, both */
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
		return;
	}
	object(r, section, id, e);
}

static void walk(struct report *r, const char *section, const char *path, const struct jv *v)
{
	if (v->type == JV_OBJ) {
		object(r, section, path, v);
		return;
	}
	for (size_t i = 0; i < v->len; i++) {
		const struct jv *e = &v->v[i];
		if (e->type == JV_OBJ)
			element(r, section, path, i, e);
		else if (e->type == JV_NUM) {
			char k[24];
			snprintf(k, sizeof(k), "#%zu", i);
			number(r, section, path, k, e->num);
		}
	}
}

/* The report's figures: its own numbers in PROBE_TOP, each object or array a section. */
static void figures(struct report *r)
{
	const struct jv *d = r->doc;
	for (size_t i = 0; i < d->len; i++) {
		const struct jv *m = &d->v[i];
		if (not_walked(probe_key(PROBE_TOP, d->keys[i]), m))
			continue;
		if (m->type == JV_OBJ || m->type == JV_ARR)
			walk(r, d->keys[i], "", m);
		else if (m->type == JV_NUM)
			number(r, PROBE_TOP, "", d->keys[i], m->num);
	}
}

/* ---- facts ------------------------------------------------------------------------ */

/* A scalar or an array of scalars as text, "" when absent. */
static void scalar(const struct jv *v, char *b, size_t n)
{
	b[0] = '\0';
	if (!v)
		snprintf(b, n, "(none)");
	else if (v->type == JV_STR)
		snprintf(b, n, "%s", v->str);
	else if (v->type == JV_NUM)
		snprintf(b, n, "%.15g", v->num);
	else if (v->type == JV_BOOL)
		snprintf(b, n, "%s", v->b ? "true" : "false");
	else if (v->type == JV_NULL)
		snprintf(b, n, "null");
	else if (v->type == JV_ARR)
		for (size_t i = 0, k = 0; i < v->len && k < n; i++) {
			char e[64];
			scalar(&v->v[i], e, sizeof(e));
			k += (size_t)snprintf(b + k, n - k, "%s%s", i ? " " : "", e);
		}
}

/* Appends the fact (section, key) to res if its values va and vb (NULL when absent)
 * differ. */
static void fact(const char *section, const char *key, const struct jv *va, const struct jv *vb,
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

/* The facts that differ, at most max, in the order of probe_keys' PK_FACT rows; a row
 * for a whole section gives its members in a's order, then those only b has. */
static size_t facts(const struct report *a, const struct report *b, struct fact *res, size_t max)
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
		const struct jv *sa = section_of(a->doc, k->section);
		const struct jv *sb = section_of(b->doc, k->section);
		struct keyed ka, kb;
		keyed_init(&ka, sa);
		keyed_init(&kb, sb);
		for (size_t m = 0; sa && sa->type == JV_OBJ && m < sa->len && n < max; m++)
			fact(k->section, sa->keys[m], &sa->v[m], keyed_get(&kb, sa->keys[m]), res,
			     &n);
		for (size_t m = 0; sb && sb->type == JV_OBJ && m < sb->len && n < max; m++)
			if (!keyed_get(&ka, sb->keys[m]))
				fact(k->section, sb->keys[m], NULL, &sb->v[m], res, &n);
		free(ka.ord);
		free(kb.ord);
	}
	return n;
}

/* ---- the command ------------------------------------------------------------------ */

static const char usage[] =
        "usage: punctual probe --compare BEFORE.json AFTER.json [--json] [--fail-on-worse]\n"
        "\n"
        "Two reports of `punctual probe --json` (a file, or - for standard input) side by\n"
        "side: the system facts that differ, then every figure both have with the ratio\n"
        "AFTER/BEFORE and a verdict (better, worse, same) that accounts for each report's\n"
        "own noise (man punctual: the rules). Figures only one report has are skipped,\n"
        "and listed.\n"
        "\n"
        "  -j, --json           JSON\n"
        "  -w, --fail-on-worse  exit 3 when a figure got worse (for CI)\n"
        "  -h, --help           this text\n";

int probe_compare(int argc, char **argv)
{
	static const struct option opts[] = {
	        {"compare", no_argument, NULL, 'C'},
	        {"json", no_argument, NULL, 'j'},
	        {"fail-on-worse", no_argument, NULL, 'w'},
	        {"help", no_argument, NULL, 'h'},
	        {0},
	};
	bool json = false, fail_worse = false;
	int c;
	while ((c = next_opt(argc, argv, ":Cjwh", opts, usage)) != -1) {
		if (c == 'j')
			json = true;
		else if (c == 'w')
			fail_worse = true;
	}
	if (argc - optind != 2)
		usage_error("--compare needs two reports, BEFORE.json AFTER.json (- for standard "
		            "input)");
	if (strcmp(argv[optind], "-") == 0 && strcmp(argv[optind + 1], "-") == 0)
		usage_error("--compare: only one report can come from standard input");
	static struct report a, b;
	a.slack_self = b.slack_self = -1;
	load(&a, argv[optind]);
	load(&b, argv[optind + 1]);
	figures(&a);
	figures(&b);
	size_t nq = 0;
	for (size_t i = 0; i < a.n; i++)
		nq += a.f[i].rule == R_QUANTILE;
	double z = z_for(nq);
	intervals(&a, z);
	intervals(&b, z);

	size_t max = a.n + b.n + 1, ns = 0;
	struct row *rows = calloc(max, sizeof(*rows));
	struct skip *sk = calloc(max, sizeof(*sk));
	struct fact fa[64];
	if (!rows || !sk)
		die(1, "out of memory");
	size_t nf = facts(&a, &b, fa, 64);

	int count[3] = {0};
	size_t nr = compare_join(&a, &b, rows, sk, &ns, count);
	if (!nr)
		die(EXIT_USAGE, "--compare %s %s: the reports have no figure in common", a.file,
		    b.file);

	out_open();
	if (json)
		compare_json(&a, &b, fa, nf, rows, nr, sk, ns, count);
	else
		compare_text(&a, &b, fa, nf, rows, nr, sk, ns, count);
	out_commit();
	free(rows);
	free(sk);
	free(a.f);
	free(b.f);
	jv_free(a.doc);
	jv_free(b.doc);
	return fail_worse && count[V_WORSE] ? 3 : 0;
}
