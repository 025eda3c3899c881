# SPDX-License-Identifier: MIT
# punctual why's kernel side: tools/punctual/why/why.bpf.c compiled by clang for the BPF
# target against vmlinux.h (bpftool writes it from this kernel's BTF into the build
# directory; it is never committed), then a CO-RE skeleton libbpf loads. Not sanitized:
# the BPF object is the kernel's to verify. Off in cross and musl builds (their libbpf
# would be the host's glibc one) and wherever a piece is missing.
set(PN_BPF_OK OFF)
if(PUNCTUAL_BPF AND NOT CMAKE_CROSSCOMPILING AND NOT CMAKE_C_COMPILER MATCHES "musl"
	AND CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|amd64|aarch64")
	find_program(PN_CLANG clang)
	find_program(PN_BPFTOOL bpftool PATHS /usr/sbin /sbin)
	pkg_check_modules(LIBBPF IMPORTED_TARGET libbpf>=0.8)
	if(PN_CLANG AND PN_BPFTOOL AND LIBBPF_FOUND AND EXISTS /sys/kernel/btf/vmlinux)
		set(PN_BPF_OK ON)
	else()
		message(STATUS "punctual why: no eBPF (needs clang, bpftool, libbpf and "
			"/sys/kernel/btf/vmlinux; scripts/bootstrap installs the packages)")
	endif()
endif()
if(PN_BPF_OK)
	if(CMAKE_SYSTEM_PROCESSOR MATCHES "aarch64")
		set(pn_bpf_arch arm64)
	else()
		set(pn_bpf_arch x86)
	endif()
	set(pn_bpf_dir ${CMAKE_CURRENT_BINARY_DIR}/bpf)
	set(pn_bpf_src ${CMAKE_CURRENT_SOURCE_DIR}/tools/punctual/why)
	add_custom_command(OUTPUT ${pn_bpf_dir}/vmlinux.h
		COMMAND ${CMAKE_COMMAND} -E make_directory ${pn_bpf_dir}
		COMMAND ${PN_BPFTOOL} btf dump file /sys/kernel/btf/vmlinux format c
			> ${pn_bpf_dir}/vmlinux.h
		COMMENT "vmlinux.h from the kernel's BTF")
	add_custom_command(OUTPUT ${pn_bpf_dir}/why.bpf.o
		COMMAND ${PN_CLANG} -g -O2 -target bpf -D__TARGET_ARCH_${pn_bpf_arch}
			-I${pn_bpf_dir} -I${pn_bpf_src}/.. ${LIBBPF_CFLAGS}
			-c ${pn_bpf_src}/why.bpf.c -o ${pn_bpf_dir}/why.bpf.o
		DEPENDS ${pn_bpf_src}/why.bpf.c ${pn_bpf_src}/event.h ${pn_bpf_dir}/vmlinux.h
		COMMENT "the eBPF object of punctual why")
	add_custom_command(OUTPUT ${pn_bpf_dir}/why.skel.h
		COMMAND ${PN_BPFTOOL} gen skeleton ${pn_bpf_dir}/why.bpf.o name why_bpf
			> ${pn_bpf_dir}/why.skel.h
		DEPENDS ${pn_bpf_dir}/why.bpf.o
		COMMENT "the skeleton of punctual why's eBPF object")
	add_custom_target(why_bpf_skeleton DEPENDS ${pn_bpf_dir}/why.skel.h)
	target_sources(punctual_toolkit PRIVATE ${T}/why/trace.c)
	add_dependencies(punctual_toolkit why_bpf_skeleton)
	target_include_directories(punctual_toolkit PRIVATE ${pn_bpf_dir})
	target_link_libraries(punctual_toolkit PUBLIC PkgConfig::LIBBPF)
	target_compile_definitions(punctual_toolkit PUBLIC PN_HAVE_BPF=1)
endif()
