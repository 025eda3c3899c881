#!/bin/bash
# SPDX-License-Identifier: MIT
# bench_frontier.sh BUILD_DIR: what precision costs (bench_frontier.c) on CPU 0, idle, then
# beside a CPU hog on the same CPU (stress-ng --cpu 1 --taskset 0), 2000 sleeps per variant
# and length (FRONTIER_N to change it). Prints Markdown.
set -eu
B=$1
N=${FRONTIER_N:-2000}
echo "## What precision costs: lateness against CPU (bench_frontier)"
echo
echo "Sleeps of 100 us, 1 ms, 3 ms and 10 ms, $N per variant and length, alternating sleep"
echo "by sleep in one thread on CPU 0 (tools/punctual/measure/frontier.c): the kernel alone"
echo "(clock_nanosleep, slack 1 ns), a fixed margin then a spin (the spin_sleep crate's rule),"
echo "pn_sleep_until(deadline, 1 us) at CPU budgets of 2 to 40%, at its default and at 100%"
echo "(the policy before budgets), and a pure spin (the floor: what a spin gets on this CPU"
echo "in the same minutes). Each punctual variant keeps a sleep state of its own. Lateness"
echo "past the deadline in us; CPU % = the thread's CPU time over the sleeps' time."
echo
taskset -c 0 "$B/bench/bench_frontier" idle "$N" || true
command -v stress-ng >/dev/null || { echo "(stress-ng is not installed: no loaded run)"; exit 0; }
stress-ng --cpu 1 --taskset 0 --quiet &
hog=$!
trap 'kill $hog 2>/dev/null; wait $hog 2>/dev/null' EXIT
sleep 1
echo "### Beside a CPU hog on the same CPU"
echo
echo "The same, with stress-ng --cpu 1 on CPU 0: a spin competes with the hog for every"
echo "slice, a kernel wait is woken ahead of it."
echo
taskset -c 0 "$B/bench/bench_frontier" loaded "$N" || true
