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

static const struct {
	const char *name;
	int64_t ns;
} units[] = {
        {"ns", 1}, {"us", 1000}, {"\xc2\xb5s", 1000}, {"ms", 1000000}, {"s", 1000000000},
};

int pn__parse_duration(const char *s, int64_t default_unit_ns, int64_t *res)
{
	if (!s || !*s)
		return -EINVAL;
	const char *p = s;
	int64_t ip = 0;
	int digits = 0;
	for (; *p >= '0' && *p <= '9'; p++, digits++) {
		if (__builtin_mul_overflow(ip, 10, &ip) ||
		    __builtin_add_overflow(ip, *p - '0', &ip))
			return -ERANGE;
	}
	/* The fraction, kept to 18 digits: enough for any unit down to 1 ns. */
	int64_t frac = 0, frac_scale = 1;
	if (*p == '.') {
		p++;
		for (; *p >= '0' && *p <= '9'; p++, digits++) {
			if (frac_scale < 1000000000000000000LL) {
				frac = frac * 10 + (*p - '0');
				frac_scale *= 10;
			}
		}
	}
	if (digits == 0)
		return -EINVAL;
	int64_t unit = default_unit_ns;
	if (*p) {
		unit = 0;
		for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
			if (strcmp(p, units[i].name) == 0)
				unit = units[i].ns;
		if (!unit)
			return -EINVAL;
	}
	int64_t v;
	if (__builtin_mul_overflow(ip, unit, &v))
		return -ERANGE;
	/* frac/frac_scale * unit without overflow: unit <= 1e9 and frac < frac_scale. */
	__int128 f = (__int128)frac * unit / frac_scale;
	if (__builtin_add_overflow(v, (int64_t)f, &v))
		return -ERANGE;
	*res = v;
	return 0;
}
