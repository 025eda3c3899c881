/* SPDX-License-Identifier: MIT */
/*
 * files.c: the files the tool writes besides stdout, checked before anything is measured.
 *
 * The tool often runs as root and writes where other users can write too (/tmp), so a
 * path is walked one name at a time from a directory descriptor, whatever
 * fs.protected_symlinks says:
 * - A symbolic link is followed only when it is the caller's or root's: another user's
 *   could point anywhere.
 * - The directory that receives the file must be the caller's or root's: another owner
 *   could swap the file between our write and our rename.
 * - A regular file or a new name is written to a new temporary file (O_EXCL, a random
 *   name) beside it, then renamed over the name, so that a reader never sees half of it.
 *   The old file's permission bits stay, and its owner and group where we may; a new name
 *   gets 0644 whatever the umask, for a collector run as another user.
 * - Anything else (a device, a FIFO) is written in place with O_NOFOLLOW, so that its
 *   errors are reported and the node stays.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/diag.h"
#include "util/files.h"

/* The kernel's own bound on the links one lookup follows. */
#define MAX_LINKS 40

int file_close(FILE *f)
{
	/* ferror: an earlier write's data is gone even if the last flush works */
	int e = ferror(f) ? EIO : 0;
	if (fflush(f) != 0)
		e = errno;
	if (fclose(f) != 0 && !e)
		e = errno;
	return -e;
}

/* A link or a directory we may trust: the caller's or root's. */
static bool trusted(uid_t uid)
{
	return uid == 0 || uid == geteuid();
}

/* The directory that holds a path's last name, and that name. */
struct place {
	int dir; /* O_PATH descriptor of the holding directory */
	char name[NAME_MAX + 1];
	bool exists;
	struct stat st;       /* what name holds, never a link */
	char shown[PATH_MAX]; /* the holding directory, for messages */
};

/* Why a walk failed: err for a writer, the rest for a person. */
enum refusal { R_ERRNO, R_NO_DIR, R_NOT_DIR, R_DANGLING, R_LINK_OWNER, R_DIR_OWNER };
struct failure {
	enum refusal why;
	int err;
	uid_t uid; /* the owner, for R_LINK_OWNER and R_DIR_OWNER */
	char what[PATH_MAX];
};

static int refuse(struct failure *fl, enum refusal why, int err)
{
	fl->why = why;
	fl->err = err;
	return -err;
}

/* dir/name for a person; dir "" is the current directory. */
static void join(char *buf, size_t n, const char *dir, const char *name)
{
	const char *sep = !*dir || dir[strlen(dir) - 1] == '/' ? "" : "/";
	snprintf(buf, n, "%s%s%s", dir, sep, name);
}

/* path's parent into buf, for messages. */
static void parent_of(char *buf, size_t n, const char *dir, const char *rest)
{
	join(buf, n, dir, rest);
	size_t len = strlen(buf);
	while (len > 1 && buf[len - 1] == '/')
		buf[--len] = '\0';
	char *slash = strrchr(buf, '/');
	if (!slash)
		snprintf(buf, n, ".");
	else
		slash[slash == buf] = '\0'; /* "/x" -> "/" */
}

/* A walk; a step that fails closes dir. */
struct walker {
	char rest[2 * PATH_MAX];
	const char *p;          /* the next name in rest */
	int dir;                /* O_PATH descriptor the next name is looked up in */
	int links;              /* links followed, at most MAX_LINKS */
	bool through_last_link; /* the last name came from a link: missing is dangling */
};

/* An O_PATH descriptor of name in dir, not followed, with st filled; or -errno. */
static int open_name(int dir, const char *name, struct stat *st)
{
	int fd = openat(dir, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, st) != 0) {
		int e = errno;
		close(fd);
		return -e;
	}
	return fd;
}

/* 1 for a new last name not reached by a link, else -errno. */
static int walk_missing(struct walker *w, struct place *pl, struct failure *fl, int e, bool last)
{
	if (e == ENOENT && w->through_last_link) {
		join(fl->what, sizeof(fl->what), pl->shown, w->p);
		close(w->dir);
		return refuse(fl, R_DANGLING, ENOENT);
	}
	if (e == ENOENT && last) { /* a new name */
		pl->exists = false;
		return 1;
	}
	if (e == ENOENT)
		parent_of(fl->what, sizeof(fl->what), pl->shown, w->p);
	close(w->dir);
	return refuse(fl, e == ENOENT ? R_NO_DIR : R_ERRNO, e);
}

/* Follows a trusted link (fd, closed here) by splicing its target into rest: 0 or -errno. */
static int walk_link(struct walker *w, struct place *pl, struct failure *fl, int fd,
                     const struct stat *st, bool last, const char *next)
{
	char target[PATH_MAX], next_rest[2 * PATH_MAX];
	join(fl->what, sizeof(fl->what), pl->shown, pl->name);
	ssize_t len = 0;
	enum refusal why = R_ERRNO;
	int e = 0;
	if (!trusted(st->st_uid)) {
		fl->uid = st->st_uid;
		why = R_LINK_OWNER;
		e = EACCES;
	} else if (++w->links > MAX_LINKS) {
		e = ELOOP;
	} else if ((len = readlinkat(fd, "", target, sizeof(target) - 1)) <= 0) {
		e = len < 0 ? errno : ENOENT;
	}
	close(fd);
	if (e) {
		close(w->dir);
		return refuse(fl, why, e);
	}
	target[len] = '\0';
	if ((size_t)snprintf(next_rest, sizeof(next_rest), "%s%s%s", target, last ? "" : "/",
	                     next) >= sizeof(next_rest)) {
		close(w->dir);
		return refuse(fl, R_ERRNO, ENAMETOOLONG);
	}
	memcpy(w->rest, next_rest, sizeof(w->rest));
	w->p = w->rest;
	w->through_last_link |= last;
	if (*target == '/') {
		close(w->dir);
		w->dir = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (w->dir < 0)
			return refuse(fl, R_ERRNO, errno);
		snprintf(pl->shown, sizeof(pl->shown), "/");
	}
	return 0;
}

/* Descends into fd: 0, or -ENOTDIR (fd closed). */
static int walk_into(struct walker *w, struct place *pl, struct failure *fl, int fd,
                     const struct stat *st, const char *next)
{
	if (!S_ISDIR(st->st_mode)) {
		join(fl->what, sizeof(fl->what), pl->shown, pl->name);
		close(fd);
		close(w->dir);
		return refuse(fl, R_NOT_DIR, ENOTDIR);
	}
	close(w->dir);
	w->dir = fd;
	char shown[PATH_MAX];
	join(shown, sizeof(shown), pl->shown, pl->name);
	memcpy(pl->shown, shown, sizeof(shown));
	w->p = next;
	return 0;
}

/* The next name: 1 when the walk is over, 0 to go on, or -errno. */
static int walk_step(struct walker *w, struct place *pl, struct failure *fl)
{
	while (*w->p == '/')
		w->p++;
	size_t n = strcspn(w->p, "/");
	const char *next = w->p + n;
	while (*next == '/')
		next++;
	bool last = !*next;
	if (n > NAME_MAX) {
		close(w->dir);
		return refuse(fl, R_ERRNO, ENAMETOOLONG);
	}
	/* no name at all ("/"): the directory itself */
	snprintf(pl->name, sizeof(pl->name), "%.*s", n ? (int)n : 1, n ? w->p : ".");
	struct stat st = {0}; /* filled when fd >= 0 (for scan-build) */
	int fd = open_name(w->dir, pl->name, &st);
	if (fd < 0)
		return walk_missing(w, pl, fl, -fd, last);
	if (S_ISLNK(st.st_mode))
		return walk_link(w, pl, fl, fd, &st, last, next);
	if (last) {
		close(fd);
		pl->exists = true;
		pl->st = st;
		return 1;
	}
	return walk_into(w, pl, fl, fd, &st, next);
}

/* Walks path from at under the rules above, following a trusted link at its end too. 0,
 * pl->dir open; or -errno with fl saying why. The holding directory's owner is the
 * caller's to check. */
static int walk(int at, const char *path, struct place *pl, struct failure *fl)
{
	struct walker w = {.links = 0, .through_last_link = false};
	if (strlen(path) >= PATH_MAX)
		return refuse(fl, R_ERRNO, ENAMETOOLONG);
	snprintf(w.rest, sizeof(w.rest), "%s", path);
	snprintf(pl->shown, sizeof(pl->shown), "%s", *path == '/' ? "/" : "");
	w.dir = openat(at, *path == '/' ? "/" : ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (w.dir < 0)
		return refuse(fl, R_ERRNO, errno);
	w.p = w.rest;
	int r;
	while ((r = walk_step(&w, pl, fl)) == 0)
		;
	if (r < 0)
		return r;
	pl->dir = w.dir;
	return 0;
}

/* 0 if the directory fd is the caller's or root's, else -EACCES. */
static int owned(int fd, const char *shown, struct failure *fl)
{
	struct stat st;
	if (fstat(fd, &st) != 0)
		return refuse(fl, R_ERRNO, errno);
	if (trusted(st.st_uid))
		return 0;
	fl->uid = st.st_uid;
	snprintf(fl->what, sizeof(fl->what), "%s", *shown ? shown : ".");
	return refuse(fl, R_DIR_OWNER, EACCES);
}

/* Exits 2 with the line fl describes. */
_Noreturn static void refused(const char *opt, const char *path, const struct failure *fl)
{
	switch (fl->why) {
	case R_NO_DIR:
		usage_error("%s %s: directory %s does not exist", opt, path, fl->what);
	case R_NOT_DIR:
		usage_error("%s %s: %s is not a directory", opt, path, fl->what);
	case R_DANGLING:
		usage_error("%s %s: a symbolic link to nothing (%s does not exist)", opt, path,
		            fl->what);
	case R_LINK_OWNER:
		usage_error("%s %s: %s is a symbolic link owned by uid %u: only the caller's "
		            "or root's links are followed",
		            opt, path, fl->what, (unsigned)fl->uid);
	case R_DIR_OWNER:
		usage_error("%s %s: directory %s is owned by uid %u: only the caller's or "
		            "root's directories are written in",
		            opt, path, fl->what, (unsigned)fl->uid);
	case R_ERRNO:
		break;
	}
	usage_error("%s %s: %s", opt, path, strerror(fl->err));
}

/* A directory of the caller's or root's that we may create files in, or exit 2. */
static void writable_dir(const char *opt, const char *path, int dir, const char *shown)
{
	struct failure fl;
	if (owned(dir, shown, &fl) < 0)
		refused(opt, path, &fl);
	if (faccessat(dir, ".", W_OK | X_OK, 0) != 0)
		usage_error("%s %s: cannot create files in %s: %s", opt, path, *shown ? shown : ".",
		            strerror(errno));
}

void file_check(const char *opt, const char *path)
{
	size_t len = strlen(path);
	if (!len || path[len - 1] == '/')
		usage_error("%s %s: names a directory, not a file", opt, path);
	struct place pl;
	struct failure fl;
	if (walk(AT_FDCWD, path, &pl, &fl) < 0)
		refused(opt, path, &fl);
	if (pl.exists && S_ISDIR(pl.st.st_mode))
		usage_error("%s %s: is a directory", opt, path);
	if (pl.exists && !S_ISREG(pl.st.st_mode)) { /* written in place */
		if (owned(pl.dir, pl.shown, &fl) < 0)
			refused(opt, path, &fl);
		if (faccessat(pl.dir, pl.name, W_OK, 0) != 0)
			usage_error("%s %s: %s", opt, path, strerror(errno));
	} else {
		writable_dir(opt, path, pl.dir, pl.shown); /* for the temporary file */
	}
	close(pl.dir);
}

void dir_check(const char *opt, const char *dir)
{
	struct place pl;
	struct failure fl;
	if (walk(AT_FDCWD, dir, &pl, &fl) < 0)
		refused(opt, dir, &fl);
	if (!pl.exists) { /* to be created in its parent */
		writable_dir(opt, dir, pl.dir, pl.shown);
		/* a trial, removed at once: /proc or a read-only file system refuses it */
		if (mkdirat(pl.dir, pl.name, 0700) == 0)
			unlinkat(pl.dir, pl.name, AT_REMOVEDIR);
		else if (errno == ENOSPC || errno == EDQUOT)
			die(1, "%s %s: %s", opt, dir, strerror(errno));
		else if (errno != EEXIST)
			usage_error("%s %s: %s", opt, dir, strerror(errno));
		close(pl.dir);
		return;
	}
	if (!S_ISDIR(pl.st.st_mode))
		usage_error("%s %s: not a directory", opt, dir);
	int fd = openat(pl.dir, pl.name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		usage_error("%s %s: %s", opt, dir, strerror(errno));
	char shown[PATH_MAX];
	join(shown, sizeof(shown), pl.shown, pl.name);
	close(pl.dir);
	if (owned(fd, shown, &fl) < 0)
		refused(opt, dir, &fl);
	if (faccessat(fd, ".", W_OK | X_OK, 0) != 0)
		usage_error("%s %s: %s", opt, dir, strerror(errno));
	close(fd);
}

int dir_open(const char *dir)
{
	struct place pl;
	struct failure fl;
	int r = walk(AT_FDCWD, dir, &pl, &fl);
	if (r < 0)
		return r;
	if (!pl.exists) { /* its parent must be the caller's or root's */
		r = owned(pl.dir, pl.shown, &fl);
		if (!r && mkdirat(pl.dir, pl.name, 0755) != 0 && errno != EEXIST)
			r = -errno;
	}
	int fd = r ? -1 : openat(pl.dir, pl.name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (!r && fd < 0)
		r = -errno;
	close(pl.dir);
	if (!r)
		r = owned(fd, "", &fl);
	if (r < 0 && fd >= 0)
		close(fd);
	return r < 0 ? r : fd;
}

/* Opens name to write in place if it is not a regular file: 1 with o->fd set, 0 if it is
 * one after all, or -errno. */
static int open_in_place(struct file_out *o)
{
	int fd = openat(o->dir, o->name, O_WRONLY | O_NOCTTY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	struct stat st;
	if (fstat(fd, &st) != 0) {
		int e = -errno;
		close(fd);
		return e;
	}
	if (S_ISREG(st.st_mode)) { /* swapped in since the walk */
		close(fd);
		o->has_old = true;
		o->old = st;
		return 0;
	}
	o->fd = fd;
	o->in_place = true;
	return 1;
}

/* The temporary files in existence, which SIGINT, SIGTERM and SIGHUP remove. A name is
 * noted once its file exists (those signals blocked from the create to the note) and
 * forgotten once renamed or removed. TEMPS: more than one command writes at once. */
#define TEMPS 256
static struct {
	int dir;
	char name[NAME_MAX + 1];
} temps[TEMPS];
static volatile sig_atomic_t temp_used[TEMPS];

/* Async-signal-safe: unlinkat only. */
static void temps_remove(void)
{
	for (int i = 0; i < TEMPS; i++)
		if (temp_used[i])
			unlinkat(temps[i].dir, temps[i].name, 0);
}

/* Notes o's temporary name in slot o->temp (-1: none free). */
static void temp_note(struct file_out *o)
{
	static bool armed;
	if (!armed) {
		cleanup_on_signal(temps_remove);
		armed = true;
	}
	o->temp = -1;
	for (int i = 0; i < TEMPS; i++)
		if (!temp_used[i]) {
			temps[i].dir = o->dir;
			memcpy(temps[i].name, o->tmp, sizeof(temps[i].name));
			atomic_signal_fence(memory_order_release); /* the name before the flag */
			temp_used[i] = 1;
			o->temp = i;
			return;
		}
}

static void temp_forget(struct file_out *o)
{
	if (o->temp >= 0)
		temp_used[o->temp] = 0;
	o->temp = -1;
}

/* A new temporary file beside o->name: 0 with o->fd and o->tmp set, or -errno. */
static int open_temporary(struct file_out *o)
{
	for (unsigned i = 0; i < 100; i++) {
		unsigned r;
		if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != (ssize_t)sizeof(r))
			r = (unsigned)getpid() * 2654435761u + i;
		/* a long name is shortened to fit NAME_MAX */
		snprintf(o->tmp, sizeof(o->tmp), "%.*s.tmp.%08x", NAME_MAX - 13, o->name, r);
		sigset_t ends, old;
		sigemptyset(&ends);
		sigaddset(&ends, SIGINT);
		sigaddset(&ends, SIGTERM);
		sigaddset(&ends, SIGHUP);
		sigprocmask(SIG_BLOCK, &ends, &old);
		o->fd = openat(o->dir, o->tmp,
		               O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC,
		               0600);
		int e = errno;
		if (o->fd >= 0)
			temp_note(o);
		sigprocmask(SIG_SETMASK, &old, NULL);
		if (o->fd >= 0)
			return 0;
		if (e != EEXIST)
			return -e;
	}
	return -EEXIST;
}

int file_open_at(int at, const char *path, struct file_out *o)
{
	struct place pl;
	struct failure fl;
	memset(o, 0, sizeof(*o));
	o->fd = o->dir = o->temp = -1;
	if (!*path || path[strlen(path) - 1] == '/')
		return -EISDIR;
	int r = walk(at, path, &pl, &fl);
	if (r < 0)
		return r;
	o->dir = pl.dir;
	memcpy(o->name, pl.name, sizeof(o->name));
	r = owned(pl.dir, pl.shown, &fl);
	if (!r && pl.exists && S_ISDIR(pl.st.st_mode))
		r = -EISDIR;
	if (!r && pl.exists && !S_ISREG(pl.st.st_mode))
		r = open_in_place(o);
	else if (!r && pl.exists) {
		o->has_old = true;
		o->old = pl.st;
	}
	if (!r)
		r = open_temporary(o);
	if (r < 0) {
		close(o->dir);
		o->dir = -1;
	}
	return r < 0 ? r : 0;
}

/* The temporary file takes the replaced file's mode, owner and group where we may (0644
 * for a new name), then reaches the disk. 0 or -errno. */
static int settle(const struct file_out *o)
{
	mode_t mode = 0644;
	if (o->has_old) {
		/* no set-ID bits: this is data */
		mode = o->old.st_mode & 0777;
		/* only root may give a file away: what cannot be set stays the caller's */
		if (fchown(o->fd, o->old.st_uid, o->old.st_gid) != 0 &&
		    fchown(o->fd, (uid_t)-1, o->old.st_gid) != 0)
			errno = 0;
	}
	if (fchmod(o->fd, mode) != 0 || fsync(o->fd) != 0)
		return -errno;
	return 0;
}

void file_discard(struct file_out *o)
{
	if (o->fd >= 0)
		close(o->fd);
	if (!o->in_place && o->dir >= 0)
		unlinkat(o->dir, o->tmp, 0);
	temp_forget(o);
	if (o->dir >= 0)
		close(o->dir);
	o->fd = o->dir = -1;
}

int file_finish(struct file_out *o, int err)
{
	int e = err;
	if (!o->in_place && !e)
		e = settle(o);
	if (close(o->fd) != 0 && !e)
		e = -errno;
	o->fd = -1;
	if (e)
		file_discard(o);
	return e;
}

int file_rename(struct file_out *o)
{
	int e = 0;
	if (!o->in_place && renameat(o->dir, o->tmp, o->dir, o->name) != 0) {
		e = -errno;
		unlinkat(o->dir, o->tmp, 0);
	}
	temp_forget(o);
	close(o->dir);
	o->dir = -1;
	return e;
}

int file_commit(struct file_out *o, int err)
{
	int e = file_finish(o, err);
	return e ? e : file_rename(o);
}

struct file_out *file_stage_open(struct file_batch *b, int at, const char *path, int *err)
{
	if (b->n == b->cap) {
		int cap = b->cap ? 2 * b->cap : 16;
		struct file_out *o = realloc(b->o, (size_t)cap * sizeof(*o));
		if (!o) {
			*err = -ENOMEM;
			return NULL;
		}
		b->o = o;
		b->cap = cap;
	}
	*err = file_open_at(at, path, &b->o[b->n]);
	return *err ? NULL : &b->o[b->n];
}

int file_stage_end(struct file_batch *b, int err)
{
	int e = file_finish(&b->o[b->n], err);
	if (!e)
		b->n++;
	return e;
}

int file_stage_at(struct file_batch *b, int at, const char *path,
                  int (*render)(FILE *f, const void *arg), const void *arg)
{
	int r;
	struct file_out *o = file_stage_open(b, at, path, &r);
	if (!o)
		return r;
	int fd = dup(o->fd);
	FILE *f = fd < 0 ? NULL : fdopen(fd, "w");
	if (!f) {
		r = -errno;
		if (fd >= 0)
			close(fd);
		return file_stage_end(b, r);
	}
	r = render(f, arg);
	int c = file_close(f);
	return file_stage_end(b, r < 0 ? r : c);
}

int file_batch_commit(struct file_batch *b)
{
	int e = 0;
	for (int i = 0; i < b->n; i++) {
		if (!e)
			e = file_rename(&b->o[i]);
		else
			file_discard(&b->o[i]);
	}
	b->n = 0;
	return e;
}

void file_batch_discard(struct file_batch *b)
{
	for (int i = 0; i < b->n; i++)
		file_discard(&b->o[i]);
	b->n = 0;
	free(b->o);
	b->o = NULL;
	b->cap = 0;
}

int file_write_at(int at, const char *path, int (*render)(FILE *f, const void *arg),
                  const void *arg)
{
	struct file_out o;
	int r = file_open_at(at, path, &o);
	if (r < 0)
		return r;
	/* file_commit still needs o.fd */
	int fd = dup(o.fd);
	FILE *f = fd < 0 ? NULL : fdopen(fd, "w");
	if (!f) {
		r = -errno;
		if (fd >= 0)
			close(fd);
		return file_commit(&o, r);
	}
	r = render(f, arg);
	int c = file_close(f);
	return file_commit(&o, r < 0 ? r : c);
}

int file_write(const char *path, int (*render)(FILE *f, const void *arg), const void *arg)
{
	return file_write_at(AT_FDCWD, path, render, arg);
}
