/* SPDX-License-Identifier: MIT */
/*
 * punctual/version.h: library version, the PN_API export macro and error strings.
 * Every fallible libpunctual call returns int: >= 0 on success, -errno on failure.
 */
#ifndef PUNCTUAL_VERSION_H
#define PUNCTUAL_VERSION_H

#ifdef __cplusplus
extern "C" {
#endif

#define PN_VERSION_MAJOR  0
#define PN_VERSION_MINOR  1
#define PN_VERSION_PATCH  0
#define PN_VERSION_STRING "0.1.0"

/* The library is built with -fvisibility=hidden: only PN_API symbols are exported. */
#if defined(__GNUC__)
#define PN_API __attribute__((visibility("default")))
#else
#define PN_API
#endif

/* The version of the library actually linked, e.g. "0.1.0". Never fails. */
PN_API const char *pn_version(void);

/* A static description of an error code, negative (-EINVAL) or positive (EINVAL).
 * Thread-safe; never NULL. */
PN_API const char *pn_strerror(int err);

#ifdef __cplusplus
}
#endif
#endif
