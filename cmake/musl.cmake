# SPDX-License-Identifier: MIT
# A build against musl with Debian's musl-tools (musl-gcc): the library, the tool, the shim
# and the smoke suite (`make test-musl`; cmocka is glibc's here, so no unit tests).
set(CMAKE_C_COMPILER musl-gcc)
# musl-gcc sees musl's headers only. The kernel's (linux/, asm/, asm-generic/ from Debian's
# linux-libc-dev) come through a directory of links to them, without glibc's beside them.
set(pn_kernel_headers ${CMAKE_BINARY_DIR}/musl-kernel-headers)
file(MAKE_DIRECTORY ${pn_kernel_headers})
foreach(d linux asm-generic)
	file(CREATE_LINK /usr/include/${d} ${pn_kernel_headers}/${d} SYMBOLIC)
endforeach()
file(CREATE_LINK /usr/include/${CMAKE_HOST_SYSTEM_PROCESSOR}-linux-gnu/asm
	${pn_kernel_headers}/asm SYMBOLIC)
set(CMAKE_C_FLAGS_INIT "-isystem ${pn_kernel_headers}")
# No library built for glibc: pkg-config finds none (without liburing, the tool's io_uring
# row says unsupported).
set(ENV{PKG_CONFIG_LIBDIR} ${pn_kernel_headers}/no-pkgconfig)
