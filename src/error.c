/* SPDX-License-Identifier: MIT */
/* error.c: error strings, the version, the root prefix for /proc and /sys reads, and the
 * parser of durations with units shared by the tool and the preload shim. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <punctual/version.h>
#include "internal.h"

PN_API const char *pn_version(void)
{
	return PN_VERSION_STRING;
}

PN_API const char *pn_strerror(int err)
{
	if (err == INT_MIN) /* -INT_MIN does not exist, and no errno is near it */
		return "Unknown error";
	/* strerrordesc_np is thread-safe and never formats into a shared buffer. */
	const char *s = strerrordesc_np(err < 0 ? -err : err);
	return s ? s : "Unknown error";
}

static char root_prefix[PATH_MAX];

const char *pn__root(void)
{
	return root_prefix;
}

void pn__set_root(const char *root)
{
	if (!root)
		root = "";
	snprintf(root_prefix, sizeof(root_prefix), "%s", root);
}

int pn__read_file(const char *path, char *buf, size_t n)
{
	char full[PATH_MAX];
	if (!path || !buf || n == 0)
		return -EINVAL;
	if ((size_t)snprintf(full, sizeof(full), "%s%s", root_prefix, path) >= sizeof(full))
		return -ENAMETOOLONG;
	int fd = open(full, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	size_t got = 0;
	while (got < n - 1) {
		ssize_t r = read(fd, buf + got, n - 1 - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = -errno;
			close(fd);
			return e;
		}
		if (r == 0)
			break;
		got += (size_t)r;
	}
	close(fd);
	buf[got] = '\0';
	return (int)got;
}
