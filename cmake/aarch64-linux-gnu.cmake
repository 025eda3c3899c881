# SPDX-License-Identifier: MIT
# Cross build for aarch64 (arm64) with Debian's gcc-aarch64-linux-gnu; the tests run under
# qemu-user (`make test-aarch64`). scripts/bootstrap aarch64 installs the compiler, the
# emulator, cmocka and jansson for arm64 (multiarch).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
# Headers and libraries from the cross sysroot and from Debian's multiarch arm64 packages
# (cmocka); programs (pkg-config, bash, jq) from the host.
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)
set(ENV{PKG_CONFIG_LIBDIR} /usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig)
# qemu-user's static build: a static host binary ignores LD_PRELOAD, which it passes on to
# the emulated program, so that `punctual run --precise -- qemu-aarch64-static PROG` preloads
# the aarch64 shim into PROG. -L: the emulated programs' loader and libc.
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64-static)
