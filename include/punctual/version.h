/* SPDX-License-Identifier: MIT */
/*
 * punctual/version.h: library version, the PN_API export macro and error strings.
 * A fallible call returns >= 0 on success, -errno on failure.
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

/* Only PN_API symbols are exported. */
#if defined(__GNUC__)
#define PN_API __attribute__((visibility("default")))
#else
#define PN_API
#endif

/* The linked library's version. */
PN_API const char *pn_version(void);

/* A static description of -errno or errno. Thread-safe; never NULL. */
PN_API const char *pn_strerror(int err);

#ifdef __cplusplus
}
#endif
#endif
