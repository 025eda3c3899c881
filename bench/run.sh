#!/bin/bash
# SPDX-License-Identifier: MIT
# run.sh BUILD_DIR OUTPUT: runs every benchmark in one go and writes OUTPUT
# (docs/BENCHMARKS.md) with the machine it ran on and the command that reproduces it.
# TIMEOUT_C_DIR (set by make bench when given): bench_wheel was built with timeout.c.
set -eu
B=$1 OUTFILE=$2
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
cs=/sys/devices/system/clocksource/clocksource0
{
	echo "# Benchmarks"
	echo
	echo "Written by \`make bench\` (bench/run.sh) on $(date -u '+%Y-%m-%d %H:%M UTC'); every"
	echo "figure below comes from this one run, each beside its peer. Reproduce with"
	if [ -n "${TIMEOUT_C_DIR:-}" ]; then
		echo "\`make bench TIMEOUT_C_DIR=/path/to/a/checkout/of/wahern/timeout\`."
	else
		echo "\`make bench\`."
	fi
	echo
	echo "- kernel: $(uname -sr), $(nproc) CPUs"
	echo "- CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
	echo "- clocksource: $(cat $cs/current_clocksource 2>/dev/null) (available: $(cat $cs/available_clocksource 2>/dev/null | sed 's/ *$//'))"
	echo
	"$B/bench/bench_clock"
	"$(dirname "$0")/bench_sleep.sh" "$B/punctual"
	"$(dirname "$0")/bench_precise.sh" "$B/bench/bench_precise"
	"$(dirname "$0")/bench_preload.sh" "$B"
	"$(dirname "$0")/bench_stall.sh" "$B"
	"$B/bench/bench_cpus" "$(dirname "$0")" "$B/bench"
	"$B/bench/bench_wheel"
	if [ -z "${TIMEOUT_C_DIR:-}" ]; then
		echo "bench_wheel's table has no timeout.c column in this run: wahern/timeout (the"
		echo "hashed wheel pn_wheel's layout follows) is not part of the project. To add it,"
		echo "check it out anywhere (\`git clone https://github.com/wahern/timeout\`) and run"
		echo "\`make bench TIMEOUT_C_DIR=/path/to/timeout\`: bench_wheel then builds its timeout.c"
		echo "from there with 7 wheels (WHEEL_NUM=7, so that its ticks can be ns up to 300 s)."
		echo
	fi
} >"$tmp"
mkdir -p "$(dirname "$OUTFILE")"
mv "$tmp" "$OUTFILE"
trap - EXIT
echo "bench: wrote $OUTFILE"
