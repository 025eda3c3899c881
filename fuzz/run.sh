#!/bin/bash
# SPDX-License-Identifier: MIT
# run.sh [SECONDS]: builds every libFuzzer harness in fuzz/ (the cgroup parsers, the
# duration parser and the timer wheel's operation sequences) with clang
# (-fsanitize=fuzzer,address,undefined) into build/fuzz/, seeds each corpus from
# tests/fixtures/cgroup/, and runs each harness for SECONDS (default $FUZZ_SECONDS, else
# 60). Stops at the first finding with a non-zero status; libFuzzer leaves the input that
# crashed as build/fuzz/crash-*. The corpora in build/fuzz/corpus_* grow across runs.
set -eu
S=${1:-${FUZZ_SECONDS:-60}}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=$ROOT/build/fuzz
FIX=$ROOT/tests/fixtures/cgroup
CC=${FUZZ_CC:-clang}
CFLAGS="-g -O1 -std=gnu11 -D_GNU_SOURCE -fsanitize=fuzzer,address,undefined
	-fno-sanitize-recover=all -I$ROOT/include -I$ROOT/src"
PARSER_SRCS="$ROOT/src/cpus/cgroup_parse.c"
DURATION_SRCS="$ROOT/src/duration.c"
INFO_SRCS="$ROOT/src/cpus/cgroup.c $ROOT/src/cpus/cgroup_parse.c $ROOT/src/cpus/cpus.c
	$ROOT/src/clock/clock.c $ROOT/src/kernel.c $ROOT/src/error.c $ROOT/src/fs.c"
# the wheel's pn_wheel_run sleeps through the wait engine: every file of the library
WHEEL_SRCS=$(find "$ROOT/src" -name '*.c' -not -path '*/shim/*' | sort)
mkdir -p "$OUT"

# seed NAME FILE...: copies the files that exist into build/fuzz/seeds_NAME/.
seed() {
	local d=$OUT/seeds_$1 i=0
	shift
	rm -rf "$d"
	mkdir -p "$d"
	for f in "$@"; do
		[ -f "$f" ] && cp "$f" "$d/$i" && i=$((i + 1))
	done
	return 0
}
seed proc_cgroup "$FIX"/*/proc/self/cgroup
seed mountinfo "$FIX"/*/proc/self/mountinfo
seed cpu_max $(find "$FIX" -name 'cpu.max' -o -name 'cpu.cfs_*_us' -o -name 'cpu.shares' \
	-o -name 'cpu.weight')
seed cpulist "$FIX"/*/sys/devices/system/cpu/online
i=0
for e in "$FIX"/*/EXPECTED; do
	a=$(sed -n 's/^affinity //p' "$e")
	[ -n "$a" ] && printf '%s' "$a" >"$OUT/seeds_cpulist/aff$i" && i=$((i + 1))
done
# whole trees: cgroup NUL mountinfo NUL cpu.max NUL quota NUL period
rm -rf "$OUT/seeds_cpu_info"
mkdir -p "$OUT/seeds_cpu_info"
i=0
for c in "$FIX"/*/; do
	[ -f "$c/proc/self/cgroup" ] && [ -f "$c/proc/self/mountinfo" ] || continue
	{
		cat "$c/proc/self/cgroup"
		printf '\0'
		cat "$c/proc/self/mountinfo"
		printf '\0%s\0%s\0%s' "50000 100000" "-1" "100000"
	} >"$OUT/seeds_cpu_info/$i"
	i=$((i + 1))
done

# wheel: operation sequences; no seed files, libFuzzer starts from an empty input
mkdir -p "$OUT/seeds_wheel"
# duration: what the options and PUNCTUAL_PRECISION take
rm -rf "$OUT/seeds_duration"
mkdir -p "$OUT/seeds_duration"
i=0
for d in 250 1.5ms 10us 2s 0 .5s 9223372036854775807 9223372036.854775807s 1.0005us; do
	printf '%s' "$d" >"$OUT/seeds_duration/$i"
	i=$((i + 1))
done

for h in proc_cgroup mountinfo cpu_max cpulist cpu_info duration wheel; do
	srcs=$PARSER_SRCS
	[ "$h" = cpu_info ] && srcs=$INFO_SRCS
	[ "$h" = wheel ] && srcs=$WHEEL_SRCS
	[ "$h" = duration ] && srcs=$DURATION_SRCS
	# shellcheck disable=SC2086
	$CC $CFLAGS "$ROOT/fuzz/fuzz_$h.c" $srcs -o "$OUT/fuzz_$h" -lpthread
	mkdir -p "$OUT/corpus_$h"
	echo "fuzz: $h for ${S}s"
	(cd "$OUT" && "./fuzz_$h" -max_total_time="$S" -timeout=10 -max_len=16384 \
		-print_final_stats=1 "corpus_$h" "seeds_$h" 2>"$OUT/fuzz_$h.log") || {
		tail -40 "$OUT/fuzz_$h.log" >&2
		echo "fuzz: $h found a problem; see $OUT/fuzz_$h.log" >&2
		exit 1
	}
	grep -E '^stat::number_of_executed_units|^Done' "$OUT/fuzz_$h.log" | sed "s/^/fuzz: $h: /"
done
echo "fuzz: no finding"
