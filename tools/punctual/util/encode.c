/* SPDX-License-Identifier: MIT */
/* encode.c: untrusted text (paths, cgroup and thread names, a report's strings) made safe
 * for the medium it goes to. Text on a terminal: no control character, C0 or C1, reaches
 * it (an ESC or a CSI would move the cursor, retitle the window or clear the screen), and
 * no byte that is not UTF-8; each such byte is shown as \xHH. JSON (json.c) and Prometheus
 * (prom.c) escape by their own rules on the same UTF-8 scan. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "util/encode.h"

int utf8_len(const unsigned char *p, const unsigned char *end)
{
	int n;
	uint32_t c;
	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		n = 2, c = p[0] & 0x1f;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		n = 3, c = p[0] & 0x0f;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		n = 4, c = p[0] & 0x07;
	else
		return 0;
	if (end - p < n)
		return 0;
	for (int i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (p[i] & 0x3f);
	}
	static const uint32_t min[] = {0, 0, 0x80, 0x800, 0x10000};
	if (c < min[n] || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	return n;
}

int utf8_unsafe(const unsigned char *p, const unsigned char *end)
{
	int n = utf8_len(p, end);
	if (n == 0)
		return 1; /* one byte that is not UTF-8 */
	if (n == 1)
		return p[0] < 0x20 || p[0] == 0x7f;
	/* U+0080 .. U+009F, the C1 controls (CSI is U+009B) */
	return n == 2 && p[0] == 0xc2 && p[1] <= 0x9f ? 2 : 0;
}

const char *text_safe(char *buf, size_t n, const char *s)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + strlen(s);
	size_t k = 0;
	while (p < end && k + 1 < n) {
		int bad = utf8_unsafe(p, end), len = bad ? bad : utf8_len(p, end);
		if (bad) {
			for (int i = 0; i < bad && k + 5 < n; i++, k += 4)
				snprintf(buf + k, 5, "\\x%02x", p[i]);
			if (k + 5 >= n)
				break;
		} else if (k + (size_t)len < n) {
			memcpy(buf + k, p, (size_t)len);
			k += (size_t)len;
		} else {
			break;
		}
		p += len;
	}
	buf[k] = '\0';
	return buf;
}
