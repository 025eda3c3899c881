/* SPDX-License-Identifier: MIT */
/*
 * cgroup.c: the cgroup CPU limit, the minimum over every level from the process's cgroup
 * up to the mount root, seeded with the leaf's own (ties keep the nearer level): a quota
 * bounds its whole subtree (JDK-8322420 read only the leaf). And the mount cache.
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

#include <punctual/version.h>
#include "cpus/cgroup.h"
#include "fs.h"

/* Linux 5.8's statx bits, for C libraries that predate them. */
#ifndef STATX_MNT_ID
#define STATX_MNT_ID 0x00001000U
#endif
#ifndef STATX_ATTR_MOUNT_ROOT
#define STATX_ATTR_MOUNT_ROOT 0x00002000
#endif

/* The biggest /proc file read whole (mountinfo with thousands of mounts is ~1 MiB). */
#define READ_ALL_MAX (16u << 20)

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
		int r = pn__fs_read_at(root, path, buf, cap);
		if (r >= 0) {
			*out = buf;
			return 0;
		}
		if (r != -EIO || cap >= READ_ALL_MAX) {
			free(buf);
			return r;
		}
		/* the buffer filled: /proc files are generated per read, so read again */
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

static int read_num(const char *root, const char *dir, const char *file, int64_t *v)
{
	char buf[64];
	int r = pn__fs_read(root, dir, file, buf, sizeof(buf), PN__FS_ONCE | PN__FS_WHOLE);
	if (r < 0)
		return r;
	return pn__cgroup_parse_int(buf, v);
}

/* One level's limit. No limit file in an existing directory: the controller is off there,
 * unlimited. */
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
		r = pn__fs_read(root, dir, "cpu.max", buf, sizeof(buf), PN__FS_ONCE | PN__FS_WHOLE);
		if (r >= 0)
			r = pn__cgroup_parse_max(buf, &q, &p);
	} else {
		r = read_num(root, dir, "cpu.cfs_quota_us", &q);
		/* any negative quota is "no limit" (the kernel writes -1) */
		if (r == 0 && q < 0)
			q = -1;
		/* without a quota the count needs no period */
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

/* The mount found for a /proc/self/cgroup answer, kept (mountinfo is most of an
 * evaluation's cost) while the answer is the same and statx finds the same mount ID at the
 * mount point. Not under a root prefix. A trylock: a thread finding it busy reads
 * mountinfo. */
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
#ifdef STATX_TYPE /* a C library with statx */
static bool mount_still_there(const struct pn__cg_mount *m)
{
	struct statx stx;
	if (statx(AT_FDCWD, m->point, AT_STATX_DONT_SYNC, STATX_MNT_ID, &stx) != 0)
		return false;
	return (stx.stx_mask & STATX_MNT_ID) && stx.stx_mnt_id == m->id &&
	       (stx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) &&
	       (stx.stx_attributes & STATX_ATTR_MOUNT_ROOT);
}
#else
/* No statx: mountinfo is read every time. */
static bool mount_still_there(const struct pn__cg_mount *m)
{
	(void)m;
	return false;
}
#endif

/* The hierarchy to read and its mount: the v1 cpu hierarchy where there is one, else v2.
 * 0, -ENOENT or a read error. */
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
	if (self->has_v1_cpu && pn__cgroup_parse_mountinfo(text, 0, self->v1_cpu_path, m) == 0)
		*v2 = false;
	else if (self->has_v2 && pn__cgroup_parse_mountinfo(text, 1, self->v2_path, m) == 0)
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

static void level_name(char *dst, size_t size, const char *mroot, const char *rel)
{
	if (strcmp(mroot, "/") == 0)
		snprintf(dst, size, "%s", rel[0] ? rel : "/");
	else
		snprintf(dst, size, "%s%s", mroot, rel);
}

/* Reads file: false, with a note, if unreadable or without a cpu controller. */
static bool read_self(const char *root, const char *file, struct pn__cg_self *self,
                      struct pn_cpu_info *info, char *note, size_t note_size)
{
	char *text = NULL;
	int r = read_all(root, file, &text);
	if (r < 0) {
		info->cgroup_error = r;
		snprintf(note, note_size, "cannot read %s: %s", file, pn_strerror(r));
		return false;
	}
	r = pn__cgroup_parse_self(text, self);
	free(text);
	if (r < 0) {
		info->cgroup_error = r;
		snprintf(note, note_size, "no usable line in %s", file);
		return false;
	}
	info->cgroup_version = self->has_v1 && self->has_v2 ? PN_CGROUP_HYBRID
	                       : self->has_v1               ? PN_CGROUP_V1
	                                                    : PN_CGROUP_V2;
	if (!self->has_v1_cpu && !self->has_v2) {
		snprintf(note, note_size, "no cpu controller in %s", file);
		return false;
	}
	return true;
}

static bool mount_of(const char *root, const struct pn__cg_self *self, struct pn__cg_mount *m,
                     bool *v2, struct pn_cpu_info *info, char *note, size_t note_size)
{
	int r = find_mount(root, self, m, v2);
	if (r == -ENOENT) {
		info->cgroup_error = r;
		snprintf(note, note_size, "the cgroup hierarchy is not mounted");
		return false;
	}
	if (r < 0) {
		info->cgroup_error = r;
		snprintf(note, note_size, "cannot read /proc/self/mountinfo: %s", pn_strerror(r));
		return false;
	}
	return true;
}

/* The cgroup's path below the mount point; "" when outside its root. */
static void below_mount(const char *path, const struct pn__cg_mount *m, char *rel, char *note,
                        size_t note_size)
{
	if (m->outside) {
		rel[0] = '\0';
		snprintf(note, note_size, "cgroup %s is outside the mount's root %s: read at %s",
		         path, m->root, m->point);
	} else {
		const char *below = strcmp(m->root, "/") == 0 ? path : path + strlen(m->root);
		snprintf(rel, PN_CPU_PATH_MAX, "%s", strcmp(below, "/") == 0 ? "" : below);
	}
}

/* The level at rel; status -ENAMETOOLONG if its path does not fit. */
static void read_rel(const char *root, const struct pn__cg_mount *m, const char *rel, bool v2,
                     bool lean, struct pn_cpu_level *lv)
{
	char dir[2 * PN_CPU_PATH_MAX];
	level_name(lv->path, sizeof(lv->path), m->root, rel);
	if ((size_t)snprintf(dir, sizeof(dir), "%s%s", m->point, rel) >= sizeof(dir)) {
		lv->status = -ENAMETOOLONG;
		lv->quota_us = -1;
		lv->period_us = 0;
		lv->shares = -1;
	} else {
		lv->status = read_level(root, dir, v2, lean, lv);
	}
}

/* Records a level; a tie keeps the nearer level. */
static void add_level(struct pn_cpu_info *info, const struct pn_cpu_level *lv, int64_t *best_q,
                      int64_t *best_p, char *note, size_t note_size)
{
	if (lv->status < 0 && !info->cgroup_error) {
		info->cgroup_error = lv->status;
		if (!note[0])
			snprintf(note, note_size, "cannot read the limit of %s: %s", lv->path,
			         pn_strerror(lv->status));
	}
	if (lv->status == 0 && lv->quota_us > 0 &&
	    (*best_q < 0 || (__int128)lv->quota_us * *best_p < (__int128)*best_q * lv->period_us)) {
		*best_q = lv->quota_us;
		*best_p = lv->period_us;
		info->limit_level = info->n_levels < PN_CPU_LEVELS_MAX ? info->n_levels : -1;
		snprintf(info->limit_path, sizeof(info->limit_path), "%s", lv->path);
	}
	if (info->n_levels < PN_CPU_LEVELS_MAX)
		info->levels[info->n_levels] = *lv;
	info->n_levels++;
}

void pn__cgroup_limit(const char *root, struct pn_cpu_info *info, int64_t *quota, int64_t *period,
                      char *note, size_t note_size, bool lean)
{
	pn__cgroup_limit_of(root, "/proc/self/cgroup", info, quota, period, note, note_size, lean);
}

void pn__cgroup_limit_of(const char *root, const char *file, struct pn_cpu_info *info,
                         int64_t *quota, int64_t *period, char *note, size_t note_size, bool lean)
{
	struct pn__cg_self self;
	struct pn__cg_mount m;
	bool v2;
	*quota = -1;
	*period = 0;
	note[0] = '\0';
	info->cgroup_version = PN_CGROUP_NONE;
	info->limit_level = -1;
	if (!read_self(root, file, &self, info, note, note_size))
		return;
	if (!mount_of(root, &self, &m, &v2, info, note, note_size))
		return;
	const char *path = v2 ? self.v2_path : self.v1_cpu_path;
	info->cgroup_v1_cpu = !v2;
	snprintf(info->cgroup_path, sizeof(info->cgroup_path), "%s", path);

	char rel[PN_CPU_PATH_MAX];
	below_mount(path, &m, rel, note, note_size);
	if ((size_t)snprintf(info->cgroup_dir, sizeof(info->cgroup_dir), "%s%s", m.point, rel) >=
	    sizeof(info->cgroup_dir))
		info->cgroup_dir[0] = '\0';

	int64_t best_q = -1, best_p = 0;
	for (int depth = 0;; depth++) {
		struct pn_cpu_level lv;
		read_rel(root, &m, rel, v2, lean, &lv);
		add_level(info, &lv, &best_q, &best_p, note, note_size);
		char *slash = strrchr(rel, '/');
		if (!slash || depth > 4096)
			break;
		*slash = '\0';
	}
	*quota = best_q;
	*period = best_p;
}

int pn__cgroup_stat_open(const char *dir)
{
	char path[PATH_MAX];
	if (snprintf(path, sizeof(path), "%s/cpu.stat", dir) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

int pn__cgroup_stat_pread(int fd, bool v2, struct pn__cgroup_stat *st)
{
	char buf[1024];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	pn__cgroup_parse_stat(buf, v2, st);
	return 0;
}

int pn__cgroup_stat(const char *dir, bool v2, struct pn__cgroup_stat *st)
{
	int fd = pn__cgroup_stat_open(dir);
	if (fd < 0)
		return fd;
	int e = pn__cgroup_stat_pread(fd, v2, st);
	close(fd);
	return e;
}
