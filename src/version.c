/* SPDX-License-Identifier: MIT */
/* version.c: the version of the library actually linked. */
#include <punctual/version.h>

PN_API const char *pn_version(void)
{
	return PN_VERSION_STRING;
}
