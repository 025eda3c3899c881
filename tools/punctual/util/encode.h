/* SPDX-License-Identifier: MIT */
/* util/encode.h: untrusted text for each medium: UTF-8 checks, text safe for a terminal. */
#ifndef PUNCTUAL_UTIL_ENCODE_H
#define PUNCTUAL_UTIL_ENCODE_H

#include <stddef.h>

/* The length of the well-formed UTF-8 sequence at p (RFC 3629), or 0. */
int utf8_len(const unsigned char *p, const unsigned char *end);
/* Bytes at p no terminal should get: 1 for a non-UTF-8 byte, a C0 control or DEL, 2 for a
 * C1 control, 0 for a character to show. */
int utf8_unsafe(const unsigned char *p, const unsigned char *end);
/* s into buf (n > 0, cut at a character), unsafe bytes as \xHH. Returns buf. */
const char *text_safe(char *buf, size_t n, const char *s);

#endif
