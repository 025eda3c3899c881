# SPDX-License-Identifier: MIT
# Front door: `make run` and `make test` on a fresh Debian machine (see README.md).
# The build itself is CMake (CMakePresets.json); this file only sequences it.
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
PREFIX ?= /usr/local
RUN_ARGS ?= probe
MAKEFLAGS += --no-print-directory

.PHONY: all run test test-asan test-tsan test-load bench fuzz install bootstrap release debug format clean

all: release

bootstrap:
	@./scripts/bootstrap

release: bootstrap
	@cmake --preset release >/dev/null
	@cmake --build --preset release -j $(JOBS)

debug: bootstrap
	@cmake --preset debug >/dev/null
	@cmake --build --preset debug -j $(JOBS)

# The main job: the timing report.
run: release
	@./build/release/punctual $(RUN_ARGS)

# Every test under ASan+UBSan, then the threaded ones again under TSan.
test: test-asan test-tsan

test-asan: bootstrap
	@cmake --preset asan >/dev/null
	@cmake --build --preset asan -j $(JOBS)
	@ctest --preset asan -j $(JOBS); st=$$?; tests/skips.sh build/asan; exit $$st

test-tsan: bootstrap
	@cmake --preset tsan >/dev/null
	@cmake --build --preset tsan -j $(JOBS)
	@ctest --preset tsan; st=$$?; tests/skips.sh build/tsan; exit $$st

# The whole suite (test-asan's, then test-tsan's) beside 8 CPU hogs (stress-ng, started
# before the suite and killed after it, whatever happens): a test must fail only for a
# bug, never for a loaded machine. Not in CI (it takes several minutes); its status is
# the suite's.
test-load: bootstrap
	@cmake --preset asan >/dev/null
	@cmake --build --preset asan -j $(JOBS)
	@cmake --preset tsan >/dev/null
	@cmake --build --preset tsan -j $(JOBS)
	@stress-ng --cpu 8 --quiet & hog=$$!; \
	trap 'kill $$hog 2>/dev/null; wait $$hog 2>/dev/null' EXIT; trap 'exit 130' INT TERM; \
	ctest --preset asan -j $(JOBS); a=$$?; tests/skips.sh build/asan; \
	ctest --preset tsan; t=$$?; tests/skips.sh build/tsan; \
	echo "test-load: asan suite status $$a, tsan suite status $$t (beside stress-ng --cpu 8)"; \
	[ $$a -eq 0 ] && [ $$t -eq 0 ]

# Benchmarks against their peers, side by side in one run; writes docs/BENCHMARKS.md.
# TIMEOUT_C_DIR=/path/to/a/checkout/of/wahern/timeout adds timeout.c to bench_wheel's
# table (built from there, never part of the project); without it the column is absent.
TIMEOUT_C_DIR ?=
bench: bootstrap
	@cmake --preset release -DTIMEOUT_C_DIR=$(if $(TIMEOUT_C_DIR),$(abspath $(TIMEOUT_C_DIR))) >/dev/null
	@cmake --build --preset release -j $(JOBS)
	@TIMEOUT_C_DIR=$(if $(TIMEOUT_C_DIR),$(abspath $(TIMEOUT_C_DIR))) ./bench/run.sh build/release docs/BENCHMARKS.md

# libFuzzer harnesses (fuzz/), each for FUZZ_SECONDS (default 60); built with clang.
FUZZ_SECONDS ?= 60
fuzz: bootstrap
	@FUZZ_SECONDS=$(FUZZ_SECONDS) ./fuzz/run.sh

install: release
	@cmake --install build/release --prefix $(PREFIX)

format:
	@clang-format -i $$(git ls-files '*.c' '*.h')

clean:
	@rm -rf build
