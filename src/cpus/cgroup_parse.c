/* SPDX-License-Identifier: MIT */
/*
 * cgroup_parse.c: the cgroup parsers, pure functions of NUL-terminated text. Each pitfall
 * libpunctual(3) lists under CPU COUNT broke some runtime's parser. "Unlimited" (a
 * readable "max", or no limit file where the controller is off) is never confused with
 * "unreadable", which is reported in cgroup_error.
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpus/cgroup.h"

/* The kernel's CFS period when cpu.max gives only the quota. */
#define DEFAULT_PERIOD_US 100000

/* ---- small text helpers --------------------------------------------------------------- */

static int copy_n(char *dst, size_t size, const char *src, size_t n)
{
	if (n >= size)
		return -ENAMETOOLONG;
	memcpy(dst, src, n);
	dst[n] = '\0';
	return 0;
}

/* Whether the comma-separated list [s, s + n) holds tok exactly ("cpu", not "cpuacct"). */
static bool has_token(const char *s, size_t n, const char *tok)
{
	size_t tl = strlen(tok);
	const char *end = s + n;
	while (s <= end) {
		const char *c = memchr(s, ',', (size_t)(end - s));
		size_t len = c ? (size_t)(c - s) : (size_t)(end - s);
		if (len == tl && memcmp(s, tok, tl) == 0)
			return true;
		if (!c)
			break;
		s = c + 1;
	}
	return false;
}

static bool all_digits(const char *s, size_t n)
{
	if (n == 0)
		return false;
	for (size_t i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return true;
}

/* ---- /proc/self/cgroup ---------------------------------------------------------------- */

int pn__cgroup_parse_self(const char *text, struct pn__cg_self *out)
{
	if (!text || !out)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	bool usable = false;
	for (const char *line = text; *line;) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		const char *c1 = memchr(line, ':', len);
		const char *c2 = c1 ? memchr(c1 + 1, ':', len - (size_t)(c1 + 1 - line)) : NULL;
		if (c2 && all_digits(line, (size_t)(c1 - line))) {
			const char *ctl = c1 + 1, *path = c2 + 1;
			size_t ctl_len = (size_t)(c2 - ctl), path_len = (size_t)(line + len - path);
			bool v2 = (size_t)(c1 - line) == 1 && line[0] == '0' && ctl_len == 0;
			if (path_len == 0 || path[0] != '/') {
				/* not a path: skip the line */
			} else if (v2) {
				if (!out->has_v2 &&
				    copy_n(out->v2_path, sizeof(out->v2_path), path, path_len) == 0)
					out->has_v2 = usable = true;
			} else if (ctl_len > 0) {
				out->has_v1 = usable = true;
				if (!out->has_v1_cpu && has_token(ctl, ctl_len, "cpu") &&
				    copy_n(out->v1_cpu_path, sizeof(out->v1_cpu_path), path,
				           path_len) == 0)
					out->has_v1_cpu = 1;
			}
		}
		if (!nl)
			break;
		line = nl + 1;
	}
	return usable ? 0 : -EIO;
}

/* ---- /proc/self/mountinfo ------------------------------------------------------------- */

/* Decodes the kernel's octal escapes; a NUL cannot be in a path: -EIO. */
static int unescape(char *dst, size_t size, const char *s, size_t n)
{
	size_t o = 0;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (c == '\\' && i + 3 < n && s[i + 1] >= '0' && s[i + 1] <= '3' &&
		    s[i + 2] >= '0' && s[i + 2] <= '7' && s[i + 3] >= '0' && s[i + 3] <= '7') {
			c = (char)((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0'));
			i += 3;
			if (c == '\0')
				return -EIO;
		}
		if (o + 1 >= size)
			return -ENAMETOOLONG;
		dst[o++] = c;
	}
	dst[o] = '\0';
	return 0;
}

static bool path_under(const char *root, const char *path)
{
	if (strcmp(root, "/") == 0)
		return path[0] == '/';
	size_t n = strlen(root);
	return strncmp(path, root, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

/* A path through ".." left our cgroup namespace: its place is unknown. */
static bool path_escapes(const char *path)
{
	return strcmp(path, "/..") == 0 || strncmp(path, "/../", 4) == 0;
}

#define MI_FIELDS 64

int pn__cgroup_parse_mountinfo(const char *text, int v2, const char *cg_path,
                               struct pn__cg_mount *out)
{
	if (!text || !cg_path || !out)
		return -EINVAL;
	bool found = false, best_under = false, escapes = path_escapes(cg_path);
	size_t best_len = 0;
	struct pn__cg_mount m;
	for (const char *line = text; *line;) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		const char *f[MI_FIELDS];
		size_t fl[MI_FIELDS];
		int nf = 0;
		for (size_t i = 0; i < len && nf < MI_FIELDS;) {
			while (i < len && line[i] == ' ')
				i++;
			if (i >= len)
				break;
			size_t j = i;
			while (j < len && line[j] != ' ')
				j++;
			f[nf] = line + i;
			fl[nf++] = j - i;
			i = j;
		}
		/* id parent maj:min root point options [optional...] - fstype source superopts */
		int sep = -1;
		for (int k = 6; k < nf; k++)
			if (fl[k] == 1 && f[k][0] == '-') {
				sep = k;
				break;
			}
		if (sep >= 0 && sep + 1 < nf) {
			const char *fs = f[sep + 1];
			size_t fs_len = fl[sep + 1];
			bool match;
			if (v2)
				match = fs_len == 7 && memcmp(fs, "cgroup2", 7) == 0;
			else
				match = fs_len == 6 && memcmp(fs, "cgroup", 6) == 0 &&
				        sep + 3 < nf && has_token(f[sep + 3], fl[sep + 3], "cpu");
			if (match && unescape(m.root, sizeof(m.root), f[3], fl[3]) == 0 &&
			    unescape(m.point, sizeof(m.point), f[4], fl[4]) == 0 &&
			    m.root[0] == '/' && m.point[0] == '/') {
				bool under = !escapes && path_under(m.root, cg_path);
				size_t rl = strlen(m.root);
				if (!found || (under && (!best_under || rl > best_len))) {
					m.id = strtoull(f[0], NULL, 10);
					*out = m;
					found = true;
					best_under = under;
					best_len = rl;
				}
			}
		}
		if (!nl)
			break;
		line = nl + 1;
	}
	if (!found)
		return -ENOENT;
	out->outside = !best_under;
	return 0;
}

/* ---- limit files ------------------------------------------------------------------------ */

int pn__cgroup_parse_int(const char *text, int64_t *v)
{
	if (!text || !v)
		return -EINVAL;
	const char *p = text;
	bool neg = *p == '-';
	if (neg)
		p++;
	const char *digits = p;
	int64_t x = 0;
	for (; *p >= '0' && *p <= '9'; p++) {
		int d = *p - '0';
		if (__builtin_mul_overflow(x, 10, &x) ||
		    (neg ? __builtin_sub_overflow(x, d, &x) : __builtin_add_overflow(x, d, &x)))
			return -EIO;
	}
	if (p == digits)
		return -EIO;
	if (*p == '\n')
		p++;
	if (*p)
		return -EIO;
	*v = x;
	return 0;
}

int pn__cgroup_parse_max(const char *text, int64_t *quota, int64_t *period)
{
	if (!text || !quota || !period)
		return -EINVAL;
	char buf[64], *p2 = NULL;
	size_t n = strlen(text);
	if (n >= sizeof(buf))
		return -EIO;
	memcpy(buf, text, n + 1);
	if (n > 0 && buf[n - 1] == '\n')
		buf[--n] = '\0';
	char *sp = strchr(buf, ' ');
	if (sp) {
		*sp = '\0';
		p2 = sp + 1;
	}
	int64_t q, p = DEFAULT_PERIOD_US;
	if (strcmp(buf, "max") == 0)
		q = -1;
	else if (buf[0] == '-' || pn__cgroup_parse_int(buf, &q) < 0 || q <= 0)
		return -EIO;
	if (p2 && (p2[0] == '-' || pn__cgroup_parse_int(p2, &p) < 0 || p <= 0))
		return -EIO;
	*quota = q;
	*period = p;
	return 0;
}

/* ---- cpu lists -------------------------------------------------------------------------- */

/* CPU numbers beyond this are garbage (the kernel's NR_CPUS tops out at 8192). */
#define CPU_ID_MAX (1 << 22)

static const char *cpu_id(const char *p, long *v)
{
	long x = 0;
	const char *s = p;
	for (; *p >= '0' && *p <= '9'; p++) {
		x = x * 10 + (*p - '0');
		if (x > CPU_ID_MAX)
			return NULL;
	}
	if (p == s)
		return NULL;
	*v = x;
	return p;
}

int pn__cgroup_parse_cpulist(const char *text)
{
	if (!text)
		return -EINVAL;
	const char *p = text;
	if (*p == '\0' || (p[0] == '\n' && p[1] == '\0'))
		return 0;
	long count = 0;
	for (;;) {
		long a, b;
		if (!(p = cpu_id(p, &a)))
			return -EIO;
		b = a;
		if (*p == '-' && !(p = cpu_id(p + 1, &b)))
			return -EIO;
		if (b < a)
			return -EIO;
		count += b - a + 1;
		if (count > PN_CPU_COUNT_MAX)
			return -EIO;
		if (*p != ',')
			break;
		p++;
	}
	if (*p == '\n')
		p++;
	return *p ? -EIO : (int)count;
}

void pn__cgroup_parse_stat(const char *text, bool v2, struct pn__cgroup_stat *st)
{
	*st = (struct pn__cgroup_stat){0};
	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		unsigned long long v;
		char key[32];
		if (sscanf(p, "%31s %llu", key, &v) != 2)
			continue;
		if (strcmp(key, "nr_periods") == 0)
			st->nr_periods = v;
		else if (strcmp(key, "nr_throttled") == 0)
			st->nr_throttled = v;
		else if (!v2 && strcmp(key, "throttled_time") == 0)
			st->throttled_ns = v;
		else if (v2 && strcmp(key, "throttled_usec") == 0)
			st->throttled_ns = v * 1000;
	}
}
