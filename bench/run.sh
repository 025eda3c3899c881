#!/bin/bash
# SPDX-License-Identifier: MIT
# run.sh BUILD_DIR OUTPUT: runs every benchmark in one go and writes OUTPUT
# (docs/BENCHMARKS.md) with the machine it ran on and the command that reproduces it.
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
	echo "\`make bench\`."
	echo
	echo "- kernel: $(uname -sr), $(nproc) CPUs"
	echo "- CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
	echo "- clocksource: $(cat $cs/current_clocksource 2>/dev/null) (available: $(cat $cs/available_clocksource 2>/dev/null | sed 's/ *$//'))"
	echo
	"$B/bench/bench_clock"
	"$(dirname "$0")/bench_sleep.sh" "$B/punctual"
	"$(dirname "$0")/bench_precise.sh" "$B/bench/bench_precise"
	"$(dirname "$0")/bench_frontier.sh" "$B"
	"$(dirname "$0")/bench_default.sh" "$B"
	"$(dirname "$0")/bench_shared.sh" "$B"
	"$(dirname "$0")/bench_shared_clients.sh" "$B"
	"$(dirname "$0")/bench_reaction.sh" "$B"
	"$(dirname "$0")/bench_preload.sh" "$B"
	"$(dirname "$0")/bench_stall.sh" "$B"
	"$(dirname "$0")/bench_why.sh" "$B/punctual"
	"$(dirname "$0")/bench_loops.sh" "$B"
	"$B/bench/bench_cpus" "$(dirname "$0")" "$B/bench"
	"$(dirname "$0")/bench_run_cpus.sh" "$B"
	make -s image >/dev/null 2>&1; "$(dirname "$0")/bench_containers.sh" build/image
	"$B/bench/bench_wheel"
	"$(dirname "$0")/bench_python.sh" "$B"
	make -s package >/dev/null 2>&1 && "$(dirname "$0")/bench_tune_systemd.sh" build/package 3
} >"$tmp"
mkdir -p "$(dirname "$OUTFILE")"
mv "$tmp" "$OUTFILE"
trap - EXIT
echo "bench: wrote $OUTFILE"
