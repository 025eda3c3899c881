#!/bin/bash
# SPDX-License-Identifier: MIT
# bench_precise.sh BENCH_PRECISE: pn_sleep_until beside nanosleep and clock_nanosleep on
# CPU 0, first with the other CPU idle, then with stress-ng hogging it. Prints Markdown.
set -eu
BIN=$1
SCALE=${BENCH_PRECISE_SCALE:-1}
echo "## Precise sleep: pn_sleep_until (bench/bench_precise)"
echo
echo "Lateness = return time - deadline. All variants take turns in blocks of 25 sleeps on"
echo "CPU 0 (taskset); pn_sleep_until first learns each length for 200 sleeps (steady"
echo "state). CPU % = thread CPU time / wall time while sleeping; spin/sleep = mean time"
echo "spent spinning per pn_sleep_until; margin = the mean margin the variant's sleeps used"
echo "(its blocks' last sleeps'; it depends on the precision: the p99.9 of the wakeups at"
echo "1 us, their p99.6 at 50 us). Reproduce: \`make bench\`, or"
echo "\`taskset -c 0 build/release/bench/bench_precise\`."
echo
taskset -c 0 "$BIN" "idle (other CPU idle)" "$SCALE" || echo "(early returns: see above)"
if command -v stress-ng >/dev/null; then
	stress-ng --cpu 1 --taskset 1 --timeout 600s >/dev/null 2>&1 &
	hog=$!
	trap 'kill $hog 2>/dev/null; wait $hog 2>/dev/null' EXIT
	sleep 1
	taskset -c 0 "$BIN" "loaded (stress-ng --cpu 1 --taskset 1 on the other CPU)" "$SCALE" ||
		echo "(early returns: see above)"
	kill $hog 2>/dev/null
	wait $hog 2>/dev/null || true
	trap - EXIT
else
	echo "stress-ng is not installed (scripts/bootstrap installs it): loaded case skipped."
fi
echo
