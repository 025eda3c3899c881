/* SPDX-License-Identifier: MIT */
/*
 * cgroup.c: the cgroup CPU limit: parsers for /proc/self/cgroup, /proc/self/mountinfo,
 * cpu.max, cpu.cfs_quota_us and kernel cpu lists, and the walk from the process's cgroup
 * up to the hierarchy's mount root.
 *
 * Why a walk: a cgroup's quota bounds its whole subtree, so an unlimited child of a
 * parent allowed 0.5 CPU gets 0.5 CPU. The JDK read only the leaf until JDK-8322420 and
 * libuv keeps the outermost limit; the answer is the minimum over every level, seeded
 * with the leaf's own value (ties keep the level nearest the process).
 *
 * Why so defensive: every pitfall below broke some runtime's implementation. Paths hold
 * colons, so /proc/self/cgroup lines split on the first two only; the "0::" line can be
 * anywhere; v1 controllers are "cpu,cpuacct" in either order; mountinfo has zero or more
 * optional fields before " - " and octal escapes (\040); a mount root equal to the cgroup
 * path (cgroupns=host inside a container) means read at the mount point; a path under
 * "/.." (moved out of our cgroup namespace) cannot be located, so the mount point is read;
 * the same hierarchy can be mounted twice; cpu.max is "max", one field, or a period of 0
 * in broken files; v1 quota -1 means unlimited and must not be parsed as unsigned.
 * "Unlimited" (a readable "max", or no limit file where the controller is off) is never
 * confused with "unreadable" (a missing directory, EACCES, garbage): the second is
 * reported in cgroup_error.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroup.h"

/* Linux 5.8's statx bits, for C libraries that predate them. */
#ifndef STATX_MNT_ID
#define STATX_MNT_ID 0x00001000U
#endif
#ifndef STATX_ATTR_MOUNT_ROOT
#define STATX_ATTR_MOUNT_ROOT 0x00002000
#endif

/* Biggest /proc file read whole (mountinfo with thousands of mounts is ~1 MiB). */
#define READ_ALL_MAX (16u << 20)
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

/* Decodes the kernel's octal escapes (\040 space, \011 tab, \012 newline, \134 backslash).
 * A NUL byte cannot be in a path: -EIO. */
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

/* Whether cgroup path lies at or under root. */
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

int pn__mountinfo_find(const char *text, int v2, const char *cg_path, struct pn__cg_mount *out)
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

int pn__cpulist_count(const char *text)
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

/* ---- reading under a root --------------------------------------------------------------- */

/* once: stop after a short read. Right for the tiny kernfs attribute files (the kernel
 * formats them whole at the first read) and for regular files; wrong for seq_files that
 * hand out a page at a time (mountinfo), which read to EOF. Saves a system call a file. */
static int read_at(const char *root, const char *path, const char *file, char *buf, size_t n,
                   bool once)
{
	char full[PATH_MAX];
	if ((size_t)snprintf(full, sizeof(full), "%s%s%s%s", root, path, file ? "/" : "",
	                     file ? file : "") >= sizeof(full))
		return -ENAMETOOLONG;
	int fd = open(full, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	size_t got = 0;
	int e = 0;
	while (got < n - 1) {
		ssize_t r = read(fd, buf + got, n - 1 - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			e = -errno;
			break;
		}
		if (r == 0)
			break;
		got += (size_t)r;
		if (once && (size_t)r < n - 1 - (got - (size_t)r))
			break;
	}
	close(fd);
	buf[got] = '\0';
	if (e)
		return e;
	/* A full buffer means a file longer than any the kernel writes there. */
	return got == n - 1 ? -EIO : (int)got;
}

int pn__read_at(const char *root, const char *path, char *buf, size_t n)
{
	return read_at(root, path, NULL, buf, n, false);
}

/* The whole file into a malloc'd buffer the caller frees. Returns 0 or -errno. */
static int read_all(const char *root, const char *path, char **out)
{
	size_t cap = 8192;
	char *buf = NULL;
	for (;;) {
		char *nb = realloc(buf, cap);
		if (!nb) {
			free(buf);
			return -ENOMEM;
		}
		buf = nb;
		int r = pn__read_at(root, path, buf, cap);
		if (r >= 0) {
			*out = buf;
			return 0;
		}
		if (r != -EIO || cap >= READ_ALL_MAX) {
			free(buf);
			return r;
		}
		/* -EIO: the buffer filled; /proc files are generated per read, so read again. */
		cap *= 2;
	}
}

/* out of line: its path buffer stays off the walk's frame */
static __attribute__((noinline)) bool is_dir(const char *root, const char *dir)
{
	char full[PATH_MAX];
	struct stat st;
	if ((size_t)snprintf(full, sizeof(full), "%s%s", root, dir) >= sizeof(full))
		return false;
	return stat(full, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Reads one number file of dir; -errno or 0. */
static int read_num(const char *root, const char *dir, const char *file, int64_t *v)
{
	char buf[64];
	int r = read_at(root, dir, file, buf, sizeof(buf), true);
	if (r < 0)
		return r;
	return pn__cgroup_parse_int(buf, v);
}

/* One level's limit. A missing limit file in an existing directory means the controller
 * is not enabled there (the v2 root has no cpu.max): unlimited, not an error. */
static int read_level(const char *root, const char *dir, bool v2, bool lean, struct pn_cpu_level *l)
{
	int64_t q = -1, p = 0, w;
	int r;
	l->quota_us = -1;
	l->period_us = 0;
	l->shares = -1;
	if (!lean && read_num(root, dir, v2 ? "cpu.weight" : "cpu.shares", &w) == 0)
		l->shares = w;
	if (v2) {
		char buf[64];
		r = read_at(root, dir, "cpu.max", buf, sizeof(buf), true);
		if (r >= 0)
			r = pn__cgroup_parse_max(buf, &q, &p);
	} else {
		r = read_num(root, dir, "cpu.cfs_quota_us", &q);
		/* any negative quota is "no limit" (the kernel writes -1) */
		if (r == 0 && q < 0)
			q = -1;
		/* without a quota the count needs no period: one file less a level (~3 us) */
		if (r == 0 && (q > 0 || !lean))
			r = read_num(root, dir, "cpu.cfs_period_us", &p);
		if (r == 0 && (q == 0 || (q > 0 && p <= 0)))
			r = -EIO;
	}
	if (r == -ENOENT && is_dir(root, dir))
		return 0;
	if (r < 0)
		return r;
	l->quota_us = q;
	l->period_us = p;
	return 0;
}

/* ---- the mount cache ------------------------------------------------------------------- */

/* The mount found for what /proc/self/cgroup said, kept between evaluations: mountinfo
 * costs ~18 us to generate, most of a fresh evaluation, and cgroup mounts almost never
 * change. Reused only for the same /proc/self/cgroup answer and only while statx says
 * the same mount (by ID) is still at the mount point, as its root: an unmount, a remount
 * or a mount on top is seen at once. Not seen: another mount of the hierarchy appearing
 * elsewhere while this one stays. Not used under a root prefix (fixture trees have no
 * mount IDs) nor without STATX_MNT_ID (Linux < 5.8). A trylock: a thread finding it busy,
 * or a child forked while another thread held it, reads mountinfo instead of waiting. */
static struct {
	bool valid, v2;
	struct pn__cg_self self;
	struct pn__cg_mount m;
} mcache;
static pthread_mutex_t mcache_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic unsigned long mcache_hits;

unsigned long pn__cgroup_mount_cache_hits(void)
{
	return atomic_load(&mcache_hits);
}

static bool same_self(const struct pn__cg_self *a, const struct pn__cg_self *b)
{
	return a->has_v1 == b->has_v1 && a->has_v2 == b->has_v2 && a->has_v1_cpu == b->has_v1_cpu &&
	       strcmp(a->v1_cpu_path, b->v1_cpu_path) == 0 && strcmp(a->v2_path, b->v2_path) == 0;
}

/* Whether the mount with this ID is what sits at its mount point. */
static bool mount_still_there(const struct pn__cg_mount *m)
{
	struct statx stx;
	if (statx(AT_FDCWD, m->point, AT_STATX_DONT_SYNC, STATX_MNT_ID, &stx) != 0)
		return false;
	return (stx.stx_mask & STATX_MNT_ID) && stx.stx_mnt_id == m->id &&
	       (stx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) &&
	       (stx.stx_attributes & STATX_ATTR_MOUNT_ROOT);
}

/* The hierarchy to read and its mount: hybrid systems read the v1 cpu hierarchy; v2 only
 * where v1 has none. Returns 0, -ENOENT (not mounted) or a read error. */
static int find_mount(const char *root, const struct pn__cg_self *self, struct pn__cg_mount *m,
                      bool *v2)
{
	bool cacheable = root[0] == '\0';
	if (cacheable && pthread_mutex_trylock(&mcache_lock) == 0) {
		bool hit = mcache.valid && same_self(&mcache.self, self) &&
		           mount_still_there(&mcache.m);
		if (hit) {
			*m = mcache.m;
			*v2 = mcache.v2;
		}
		pthread_mutex_unlock(&mcache_lock);
		if (hit) {
			atomic_fetch_add_explicit(&mcache_hits, 1, memory_order_relaxed);
			return 0;
		}
	}
	char *text;
	int r = read_all(root, "/proc/self/mountinfo", &text);
	if (r < 0)
		return r;
	if (self->has_v1_cpu && pn__mountinfo_find(text, 0, self->v1_cpu_path, m) == 0)
		*v2 = false;
	else if (self->has_v2 && pn__mountinfo_find(text, 1, self->v2_path, m) == 0)
		*v2 = true;
	else
		r = -ENOENT;
	free(text);
	if (r == 0 && cacheable && mount_still_there(m) &&
	    pthread_mutex_trylock(&mcache_lock) == 0) {
		mcache.valid = true;
		mcache.v2 = *v2;
		mcache.self = *self;
		mcache.m = *m;
		pthread_mutex_unlock(&mcache_lock);
	}
	return r;
}

/* The level's name as /proc/self/cgroup would give it: mount root + the part below. */
static void level_name(char *dst, size_t size, const char *mroot, const char *rel)
{
	if (strcmp(mroot, "/") == 0)
		snprintf(dst, size, "%s", rel[0] ? rel : "/");
	else
		snprintf(dst, size, "%s%s", mroot, rel);
}

void pn__cgroup_limit(const char *root, struct pn_cpu_info *info, int64_t *quota, int64_t *period,
                      char *note, size_t note_size, bool lean)
{
	char *text = NULL;
	struct pn__cg_self self;
	struct pn__cg_mount m;
	*quota = -1;
	*period = 0;
	note[0] = '\0';
	info->cgroup_version = PN_CGROUP_NONE;
	info->limit_level = -1;

	int r = read_all(root, "/proc/self/cgroup", &text);
	if (r < 0) {
		info->cgroup_error = r;
		snprintf(note, note_size, "cannot read /proc/self/cgroup: %s", strerror(-r));
		return;
	}
	r = pn__cgroup_parse_self(text, &self);
	free(text);
	if (r < 0) {
		info->cgroup_error = r;
		snprintf(note, note_size, "no usable line in /proc/self/cgroup");
		return;
	}
	info->cgroup_version = self.has_v1 && self.has_v2 ? PN_CGROUP_HYBRID
	                       : self.has_v1              ? PN_CGROUP_V1
	                                                  : PN_CGROUP_V2;
	if (!self.has_v1_cpu && !self.has_v2) {
		snprintf(note, note_size, "no cpu controller in /proc/self/cgroup");
		return;
	}
	bool v2;
	r = find_mount(root, &self, &m, &v2);
	if (r == -ENOENT) {
		info->cgroup_error = r;
		snprintf(note, note_size, "the cgroup hierarchy is not mounted");
		return;
	}
	if (r < 0) {
		info->cgroup_error = r;
		snprintf(note, note_size, "cannot read /proc/self/mountinfo: %s", strerror(-r));
		return;
	}
	const char *path = v2 ? self.v2_path : self.v1_cpu_path;
	info->cgroup_v1_cpu = !v2;
	snprintf(info->cgroup_path, sizeof(info->cgroup_path), "%s", path);

	/* rel: the cgroup's place below the mount point ("" is the mount point itself). */
	char rel[PN_CPU_PATH_MAX];
	if (m.outside) {
		rel[0] = '\0';
		snprintf(note, note_size, "cgroup %s is outside the mount's root %s: read at %s",
		         path, m.root, m.point);
	} else {
		const char *below = strcmp(m.root, "/") == 0 ? path : path + strlen(m.root);
		snprintf(rel, sizeof(rel), "%s", strcmp(below, "/") == 0 ? "" : below);
	}
	if ((size_t)snprintf(info->cgroup_dir, sizeof(info->cgroup_dir), "%s%s", m.point, rel) >=
	    sizeof(info->cgroup_dir))
		info->cgroup_dir[0] = '\0'; /* too long to show; the walk uses its own buffer */

	int64_t best_q = -1, best_p = 0;
	for (int depth = 0;; depth++) {
		char dir[2 * PN_CPU_PATH_MAX]; /* a mount point and a path below it */
		struct pn_cpu_level lv;
		level_name(lv.path, sizeof(lv.path), m.root, rel);
		if ((size_t)snprintf(dir, sizeof(dir), "%s%s", m.point, rel) >= sizeof(dir)) {
			lv.status = -ENAMETOOLONG;
			lv.quota_us = -1;
			lv.period_us = 0;
			lv.shares = -1;
		} else {
			lv.status = read_level(root, dir, v2, lean, &lv);
		}
		if (lv.status < 0 && !info->cgroup_error) {
			info->cgroup_error = lv.status;
			if (!note[0])
				snprintf(note, note_size, "cannot read the limit of %s: %s",
				         lv.path, strerror(-lv.status));
		}
		/* strictly smaller: a tie keeps the level nearer the process */
		if (lv.status == 0 && lv.quota_us > 0 &&
		    (best_q < 0 ||
		     (__int128)lv.quota_us * best_p < (__int128)best_q * lv.period_us)) {
			best_q = lv.quota_us;
			best_p = lv.period_us;
			info->limit_level =
			        info->n_levels < PN_CPU_LEVELS_MAX ? info->n_levels : -1;
			snprintf(info->limit_path, sizeof(info->limit_path), "%s", lv.path);
		}
		if (info->n_levels < PN_CPU_LEVELS_MAX)
			info->levels[info->n_levels] = lv;
		info->n_levels++;
		char *slash = strrchr(rel, '/');
		if (!slash || depth > 4096)
			break;
		*slash = '\0';
	}
	*quota = best_q;
	*period = best_p;
}
