/* SPDX-License-Identifier: MIT */
/* static_exit.c: a statically linked program (no loader, so LD_PRELOAD cannot reach it)
 * that exits with the status given as its argument. */
#include <stdlib.h>

int main(int argc, char **argv)
{
	return argc > 1 ? atoi(argv[1]) : 0;
}
