/* SPDX-License-Identifier: MIT */
/*
 * files.c: the files the tool writes besides stdout (probe --prom FILE, probe --plot DIR),
 * checked before anything is measured and written without replacing what is not a
 * regular file. A new regular file or an existing one is written beside itself and
 * renamed over, so that a reader never sees half of it; anything else (a device such as
 * /dev/full, a FIFO) is written in place, so that its errors are reported and the node
 * stays. A symbolic link is written through: its target gets those rules, the link
 * stays a link.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tool.h"

int file_close(FILE *f)
{
	/* ferror: a write that failed earlier, its data gone even if the last flush works */
	int e = ferror(f) ? EIO : 0;
	if (fflush(f) != 0)
		e = errno;
	if (fclose(f) != 0 && !e)
		e = errno;
	return -e;
}

/* path with its symbolic links resolved into buf, or path itself when it is not one;
 * NULL with errno set for a link to nothing. */
static const char *resolve(const char *path, char *buf)
{
	struct stat st;
	if (lstat(path, &st) != 0 || !S_ISLNK(st.st_mode))
		return path;
	return realpath(path, buf);
}

/* The directory that holds path, into buf. */
static const char *parent_of(const char *path, char *buf, size_t n)
{
	snprintf(buf, n, "%s", path);
	return dirname(buf);
}

/* A directory we may create files in, or exit 2 naming it. */
static void writable_dir(const char *opt, const char *path, const char *dir)
{
	struct stat st;
	if (stat(dir, &st) != 0 && errno == ENOENT)
		usage_error("%s %s: directory %s does not exist", opt, path, dir);
	if (stat(dir, &st) != 0)
		usage_error("%s %s: directory %s: %s", opt, path, dir, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		usage_error("%s %s: %s is not a directory", opt, path, dir);
	if (access(dir, W_OK | X_OK) != 0)
		usage_error("%s %s: cannot create files in %s: %s", opt, path, dir,
		            strerror(errno));
}

void file_check(const char *opt, const char *path)
{
	char real[PATH_MAX], dir[PATH_MAX];
	if (path[strlen(path) - 1] == '/')
		usage_error("%s %s: names a directory, not a file", opt, path);
	const char *p = resolve(path, real);
	if (!p)
		usage_error("%s %s: a symbolic link to nothing (%s)", opt, path, strerror(errno));
	struct stat st;
	if (stat(p, &st) == 0) {
		if (S_ISDIR(st.st_mode))
			usage_error("%s %s: is a directory", opt, path);
		if (!S_ISREG(st.st_mode)) { /* written in place */
			if (access(p, W_OK) != 0)
				usage_error("%s %s: %s", opt, path, strerror(errno));
			return;
		}
	} else if (errno != ENOENT) {
		usage_error("%s %s: %s", opt, path, strerror(errno));
	}
	writable_dir(opt, path, parent_of(p, dir, sizeof(dir))); /* for the temporary file */
}

void dir_check(const char *opt, const char *dir)
{
	char parent[PATH_MAX];
	struct stat st;
	if (stat(dir, &st) == 0) {
		if (!S_ISDIR(st.st_mode))
			usage_error("%s %s: not a directory", opt, dir);
		if (access(dir, W_OK | X_OK) != 0)
			usage_error("%s %s: %s", opt, dir, strerror(errno));
		return;
	}
	if (errno != ENOENT)
		usage_error("%s %s: %s", opt, dir, strerror(errno));
	if (lstat(dir, &st) == 0)
		usage_error("%s %s: a symbolic link to nothing", opt, dir);
	writable_dir(opt, dir, parent_of(dir, parent, sizeof(parent))); /* to create it */
}

/* A stream writing to fd, an open descriptor; NULL with errno set, fd closed, on failure. */
static FILE *fd_stream(int fd)
{
	FILE *f = fdopen(fd, "w");
	if (!f) {
		int e = errno;
		close(fd);
		errno = e;
	}
	return f;
}

static int write_in_place(const char *path, int (*render)(FILE *f, const void *arg),
                          const void *arg)
{
	int fd = open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	FILE *f = fd_stream(fd);
	if (!f)
		return -errno;
	int r = render(f, arg);
	int e = file_close(f);
	return r < 0 ? r : e;
}

int file_write(const char *path, int (*render)(FILE *f, const void *arg), const void *arg)
{
	char real[PATH_MAX], tmp[PATH_MAX + 32];
	const char *p = resolve(path, real);
	if (!p)
		return -errno;
	struct stat st;
	if (stat(p, &st) == 0 && !S_ISREG(st.st_mode))
		return write_in_place(p, render, arg);
	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp.%d", p, (int)getpid()) >= sizeof(tmp))
		return -ENAMETOOLONG;
	int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	FILE *f = fd_stream(fd);
	if (!f) {
		int e = -errno;
		unlink(tmp);
		return e;
	}
	int e = render(f, arg);
	if (!e && (fflush(f) != 0 || fsync(fileno(f)) != 0))
		e = -errno;
	int c = file_close(f);
	if (!e)
		e = c;
	if (!e && rename(tmp, p) != 0)
		e = -errno;
	if (e)
		unlink(tmp);
	return e;
}
