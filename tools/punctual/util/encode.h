/* SPDX-License-Identifier: MIT */
/* util/encode.h: untrusted text for each medium (encode.c): UTF-8 checks, text safe for a
 * terminal. */
#ifndef PUNCTUAL_UTIL_ENCODE_H
#define PUNCTUAL_UTIL_ENCODE_H

#include <stddef.h>

/* The length of the well-formed UTF-8 sequence at p, before end (RFC 3629: no overlong
 * form, no surrogate, nothing past U+10FFFF), or 0 when the bytes there are not one. */
int utf8_len(const unsigned char *p, const unsigned char *end);
/* How many bytes at p no terminal should get: 1 for a byte that is not UTF-8 or a C0
 * control or DEL, 2 for a C1 control (U+0080-U+009F), 0 for a character to show. */
int utf8_unsafe(const unsigned char *p, const unsigned char *end);
/* s for text output into buf (n > 0 bytes, cut at a character): every byte utf8_unsafe
 * names shown as \xHH. Returns buf. */
const char *text_safe(char *buf, size_t n, const char *s);

#endif
