# SPDX-License-Identifier: MIT
# Front door: `make run` and `make test` on a fresh Debian machine (see README.md).
# The build itself is CMake (CMakePresets.json); this file only sequences it.
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
# ctest's: twice the CPUs, as most tests wait (sleeps, timers, examples until started)
# more than they compute; the tests that must not overlap say so (RESOURCE_LOCK,
# RUN_SERIAL in tests/CMakeLists.txt), and none asserts a speed (make test-load).
TEST_JOBS ?= $(shell echo $$((2 * $(JOBS))))
# New build trees are Ninja's where it is installed (scripts/bootstrap installs it): a build
# takes a quarter less CPU than with Makefiles (no recursive makes); a tree configured
# before keeps its generator, and CMAKE_GENERATOR set outside wins.
ifneq ($(shell command -v ninja 2>/dev/null),)
export CMAKE_GENERATOR ?= Ninja
endif
PREFIX ?= /usr/local
RUN_ARGS ?= probe
MAKEFLAGS += --no-print-directory

.PHONY: all run test test-asan test-tsan test-load test-clang analyze test-musl test-aarch64 \
	test-systemd image test-container bench fuzz install package package-aarch64 bootstrap release \
	debug format clean

all: release

bootstrap:
	@./scripts/bootstrap

# The builds say one line each (scripts/quietly: the compiler's output in build/*.log, its
# end shown where a build fails), so that `make run` shows its report and `make test` its
# tests.
release: bootstrap
	@cmake --preset release >/dev/null
	@./scripts/quietly build/release.log "building (release)" \
		cmake --build --preset release -j $(JOBS)

debug: bootstrap
	@cmake --preset debug >/dev/null
	@./scripts/quietly build/debug.log "building (debug)" cmake --build --preset debug -j $(JOBS)

# The main job: the timing report; after it, on stderr (a report on stdout stays whole), one
# line saying where the tool is and how to install it.
run: release
	@./build/release/punctual $(RUN_ARGS) && echo "make run: the tool is build/release/punctual;" \
		"\`make install\` puts it and its man pages in $(PREFIX)" >&2

# Every test under ASan+UBSan, and the threaded ones again under TSan. The entries labelled
# "alone" (tests/CMakeLists.txt) run first with no other test beside them, while the TSan
# tree builds at SCHED_IDLE, which takes only the CPU they leave (make test-load runs them
# beside 8 hogs); then both trees' other tests side by side (the TSan output shown after),
# and last the TSan tree's lone entries.
test: bootstrap
	@cmake --preset asan >/dev/null
	@./scripts/quietly build/asan.log "building (ASan+UBSan)" cmake --build --preset asan -j $(JOBS)
	@cmake --preset tsan >/dev/null
	@chrt -i 0 ./scripts/quietly build/tsan.log "building (TSan, beside the lone entries)" \
		cmake --build --preset tsan -j $(JOBS) >build/tsan.out 2>&1 & b=$$!; \
	ctest --preset asan -L alone; a=$$?; tests/skips.sh build/asan; \
	wait $$b; t=$$?; cat build/tsan.out; [ $$t -eq 0 ] || exit $$t; [ $$a -eq 0 ] || exit $$a; \
	{ ctest --preset tsan -j $(JOBS) -LE alone; st=$$?; tests/skips.sh build/tsan; \
		exit $$st; } >build/tsan.out 2>&1 & b=$$!; \
	ctest --preset asan -j $(TEST_JOBS) -LE alone; a=$$?; tests/skips.sh build/asan; \
	wait $$b; t=$$?; cat build/tsan.out; \
	[ $$a -eq 0 ] || exit $$a; [ $$t -eq 0 ] || exit $$t; \
	ctest --preset tsan -L alone; t=$$?; tests/skips.sh build/tsan; exit $$t

test-asan: bootstrap
	@cmake --preset asan >/dev/null
	@./scripts/quietly build/asan.log "building (ASan+UBSan)" cmake --build --preset asan -j $(JOBS)
	@ctest --preset asan -j $(TEST_JOBS); st=$$?; tests/skips.sh build/asan; exit $$st

test-tsan: bootstrap
	@cmake --preset tsan >/dev/null
	@./scripts/quietly build/tsan.log "building (TSan)" cmake --build --preset tsan -j $(JOBS)
	@ctest --preset tsan -j $(TEST_JOBS); st=$$?; tests/skips.sh build/tsan; exit $$st

# The same suite built by clang (-O2, and UBSan, which unlike gcc's checks float-to-int
# conversions; the gcc warnings as errors), but the install tests: the package test builds
# the project anew from scratch, and make test runs them.
test-clang: bootstrap
	@./scripts/bootstrap clang
	@cmake --preset clang >/dev/null
	@echo "test-clang: $$(clang --version | head -1)"
	@cmake --build --preset clang -j $(JOBS)
	@ctest --preset clang -j $(JOBS) -LE install; st=$$?; tests/skips.sh build/clang; exit $$st

# clang's static analyzer (scan-build) on the library, the shim and the tool: any finding
# fails (each one is fixed, or answered in a comment where the analyzer cannot see why the
# code is right). The report, if any, goes to build/analyze/report. Without eBPF: the
# skeleton `punctual why` compiles in is bpftool's generated code, not ours to fix.
analyze: bootstrap
	@./scripts/bootstrap clang
	@rm -rf build/analyze
	@scan-build -o build/analyze/report cmake -S . -B build/analyze/build \
		-DCMAKE_BUILD_TYPE=Debug -DPUNCTUAL_TESTS=OFF -DPUNCTUAL_BENCH=OFF \
		-DPUNCTUAL_DOCS=OFF -DPUNCTUAL_BPF=OFF >/dev/null
	@scan-build -o build/analyze/report --status-bugs cmake --build build/analyze/build \
		-j $(JOBS) >build/analyze/log 2>&1; st=$$?; \
	grep -E 'scan-build:|warning:' build/analyze/log; exit $$st

# musl (Debian's musl-tools): the library, the tool and the shim built with musl-gcc, and the
# smoke suite, which needs no cmocka (tests/smoke: the clock, the sleep, the cgroup fixtures,
# a musl program's waits under the musl shim, the CLI's main and cpus tests).
test-musl: bootstrap
	@./scripts/bootstrap musl
	@cmake --preset musl >/dev/null
	@echo "test-musl: musl-gcc, musl $$(dpkg-query -W -f='$${Version}' musl-dev)"
	@cmake --build --preset musl -j $(JOBS)
	@ctest --preset musl -j $(JOBS); st=$$?; tests/skips.sh build/musl; exit $$st

# aarch64: a cross build (gcc-aarch64-linux-gnu) and the unit, preload and CLI tests under
# qemu-user; a test of what the emulator does not reproduce skips (exit 77) and says why.
# One seed of the wheel's reference model runs (a minute or two each, emulated): the model
# checks logic with no architecture in it, which the native suites run with every seed.
test-aarch64: bootstrap
	@./scripts/bootstrap aarch64
	@cmake --preset aarch64 >/dev/null
	@echo "test-aarch64: $$(aarch64-linux-gnu-gcc --version | head -1), under $$(qemu-aarch64-static --version | head -1)"
	@cmake --build --preset aarch64 -j $(JOBS)
	@ctest --preset aarch64 -j $(JOBS) -E '^unit\.wheel\.model_[234]$$'; st=$$?; \
	tests/skips.sh build/aarch64; exit $$st

# Under a real systemd: `make package`'s .deb installed in a Debian 12 booted with systemd as
# PID 1 under systemd-nspawn (tests/systemd: the root debootstrapped once into
# /var/tmp/punctual-box-bookworm, each boot on a throwaway overlay), and tests/systemd's
# tests run against it. A machine that cannot (not root, nspawn cannot boot) skips,
# saying why.
test-systemd: package
	@./scripts/bootstrap systemd
	@tests/systemd/run.sh build/package; st=$$?; [ $$st -ne 77 ] || st=0; exit $$st

# The OCI image punctual:VERSION and punctual:latest in podman's local store, FROM scratch
# (packaging/oci; nothing pulled from a registry): the tool and its shim built for /usr in
# build/image, the glibc they run on, coreutils' nproc and a static busybox, taken from
# this machine's Debian packages; about 6 MB. podman reads packaging/oci/containers.conf
# (runc, no default ulimits) unless CONTAINERS_CONF names another.
image: bootstrap
	@./scripts/bootstrap container
	@cmake -S . -B build/image -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=/usr \
		-DCMAKE_INSTALL_LIBDIR=lib -DPUNCTUAL_TESTS=OFF -DPUNCTUAL_BENCH=OFF \
		-DPUNCTUAL_DOCS=OFF >/dev/null
	@./scripts/quietly build/image.log "building (image)" cmake --build build/image -j $(JOBS)
	@packaging/oci/build.sh build/image

# The image in real containers (podman; tests/container): the CPU count under a quota, the
# probe's JSON and metrics, the DaemonSet's pod played by podman, and packaging/kubernetes
# checked against the Kubernetes API's schemas (npm packages installed under build/k8s).
# A machine that cannot run containers skips, saying why.
test-container: image
	@tests/container/run.sh build/image; st=$$?; [ $$st -ne 77 ] || st=0; exit $$st

# The whole suite (test-asan's, then test-tsan's) beside 8 CPU hogs (stress-ng, started
# before the suite and killed after it, whatever happens): a test must fail only for a
# bug, never for a loaded machine. Not in CI (it takes several minutes); its status is
# the suite's.
test-load: bootstrap
	@cmake --preset asan >/dev/null
	@./scripts/quietly build/asan.log "building (ASan+UBSan)" cmake --build --preset asan -j $(JOBS)
	@cmake --preset tsan >/dev/null
	@./scripts/quietly build/tsan.log "building (TSan)" cmake --build --preset tsan -j $(JOBS)
	@stress-ng --cpu 8 --quiet & hog=$$!; \
	trap 'kill $$hog 2>/dev/null; wait $$hog 2>/dev/null' EXIT; trap 'exit 130' INT TERM; \
	ctest --preset asan -j $(TEST_JOBS); a=$$?; tests/skips.sh build/asan; \
	ctest --preset tsan -j $(TEST_JOBS); t=$$?; tests/skips.sh build/tsan; \
	echo "test-load: asan suite status $$a, tsan suite status $$t (beside stress-ng --cpu 8)"; \
	[ $$a -eq 0 ] && [ $$t -eq 0 ]

# Benchmarks against their peers, side by side in one run; writes docs/BENCHMARKS.md.
bench: release
	@./bench/run.sh build/release docs/BENCHMARKS.md

# libFuzzer harnesses (fuzz/), each for FUZZ_SECONDS (default 60); built with clang.
FUZZ_SECONDS ?= 60
fuzz: bootstrap
	@FUZZ_SECONDS=$(FUZZ_SECONDS) ./fuzz/run.sh

# The tool, its shim, the library (shared and static, headers, pkg-config and CMake files),
# the man pages, completions and systemd units, into PREFIX: /usr/local by default, where
# `punctual` is on PATH and man finds its pages (from PATH, without mandb).
install: release
	@cmake --install build/release --prefix $(PREFIX)

# A Debian package (CPack) of what `make install` installs, for the prefix /usr:
# build/package/punctual_VERSION_ARCH.deb.
package: bootstrap
	@cmake -S . -B build/package -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=/usr \
		-DPUNCTUAL_TESTS=OFF -DPUNCTUAL_BENCH=OFF >/dev/null
	@./scripts/quietly build/package.log "building (package)" cmake --build build/package -j $(JOBS)
	@cd build/package && cpack -G DEB >/dev/null && ls -1 "$$PWD"/*.deb

# The same .deb for arm64, cross-built: build/package-aarch64/punctual_VERSION_arm64.deb.
package-aarch64: bootstrap
	@./scripts/bootstrap aarch64
	@cmake -S . -B build/package-aarch64 -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake \
		-DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=/usr \
		-DPUNCTUAL_TESTS=OFF -DPUNCTUAL_BENCH=OFF >/dev/null
	@cmake --build build/package-aarch64 -j $(JOBS)
	@cd build/package-aarch64 && cpack -G DEB >/dev/null && ls -1 "$$PWD"/*.deb

format:
	@clang-format -i $$(git ls-files '*.c' '*.h')

clean:
	@rm -rf build
