/* SPDX-License-Identifier: MIT */
/* error.c: error strings. */
#include <limits.h>
#include <string.h>

#include <punctual/version.h>

PN_API const char *pn_strerror(int err)
{
	if (err == INT_MIN) /* -INT_MIN does not exist, and no errno is near it */
		return "Unknown error";
#ifdef __GLIBC__
	/* strerrordesc_np is thread-safe and never formats into a shared buffer. */
	const char *s = strerrordesc_np(err < 0 ? -err : err);
#else
	/* musl's strerror returns its table's constant strings: thread-safe as well. */
	const char *s = strerror(err < 0 ? -err : err);
#endif
	return s ? s : "Unknown error";
}
