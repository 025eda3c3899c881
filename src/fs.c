/* SPDX-License-Identifier: MIT */
/*
 * fs.c: reading and writing the kernel's files under a root prefix (fs.h). Reads retry on
 * EINTR and never leave the buffer unterminated; nothing here allocates.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <unistd.h>

#include "fs.h"

static char root_prefix[PATH_MAX];

const char *pn__fs_root(void)
{
	return root_prefix;
}

void pn__fs_set_root(const char *root)
{
	if (!root)
		root = "";
	snprintf(root_prefix, sizeof(root_prefix), "%s", root);
}

int pn__fs_path(char *buf, size_t n, const char *root, const char *path, const char *file)
{
	if ((size_t)snprintf(buf, n, "%s%s%s%s", root, path, file ? "/" : "", file ? file : "") >=
	    n)
		return -ENAMETOOLONG;
	return 0;
}

int pn__fs_read(const char *root, const char *path, const char *file, char *buf, size_t n,
                int flags)
{
	char full[PATH_MAX];
	if (!path || !buf || n == 0)
		return -EINVAL;
	int e = pn__fs_path(full, sizeof(full), root, path, file);
	if (e)
		return e;
	int fd = open(full, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	size_t got = 0;
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
		if ((flags & PN__FS_ONCE) && (size_t)r < n - 1 - (got - (size_t)r))
			break;
	}
	close(fd);
	buf[got] = '\0';
	if (e)
		return e;
	return (flags & PN__FS_WHOLE) && got == n - 1 ? -EIO : (int)got;
}

int pn__fs_read_file(const char *path, char *buf, size_t n)
{
	return pn__fs_read(root_prefix, path, NULL, buf, n, 0);
}

int pn__fs_read_at(const char *root, const char *path, char *buf, size_t n)
{
	return pn__fs_read(root, path, NULL, buf, n, PN__FS_WHOLE);
}

int pn__fs_write_file(const char *path, const char *val, size_t len)
{
	char full[PATH_MAX];
	int e = pn__fs_path(full, sizeof(full), root_prefix, path, NULL);
	if (e)
		return e;
	/* Never O_CREAT: a missing file must stay an error, even under a fixture root. */
	int fd = open(full, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t w;
	do
		w = write(fd, val, len);
	while (w < 0 && errno == EINTR);
	e = w < 0 ? -errno : (size_t)w != len ? -EIO : 0;
	close(fd);
	return e;
}
