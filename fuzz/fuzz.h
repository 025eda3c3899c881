/* SPDX-License-Identifier: MIT */
/* fuzz.h: what the text-parser harnesses share: the input as a NUL-terminated string,
 * as the parsers read files. */
#ifndef PUNCTUAL_FUZZ_H
#define PUNCTUAL_FUZZ_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A malloc'd copy of data with a NUL after it (free it), or NULL. */
static inline char *fuzz_text(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	if (text) {
		memcpy(text, data, size);
		text[size] = '\0';
	}
	return text;
}

#endif
