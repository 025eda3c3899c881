/* SPDX-License-Identifier: MIT */
/*
 * emu_exec.c: a host program that runs one cross-built program (PN_EMU_TARGET) under the
 * emulator (PN_EMU_EMULATOR, qemu-user) with its own arguments, so that a CLI test runs
 * the aarch64 tool and test programs as it runs native ones, and the tool under emulation
 * can exec them (this machine has no binfmt_misc handler for them). Static, as the static
 * qemu-user is: a static program ignores LD_PRELOAD, which so reaches the emulated program
 * (the aarch64 shim under `punctual run --precise`).
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	char **args = calloc((size_t)argc + 2, sizeof(*args));
	if (!args)
		return 127;
	args[0] = (char *)PN_EMU_EMULATOR;
	args[1] = (char *)PN_EMU_TARGET;
	for (int i = 1; i < argc; i++)
		args[i + 1] = argv[i];
	execvp(args[0], args);
	perror(PN_EMU_EMULATOR);
	return 127;
}
