#!/bin/bash
# SPDX-License-Identifier: MIT
# bench_stall.sh BUILD_DIR: the CPU share of `punctual run --precise` sleeps around one
# forced stall (stall_loop.c), beside the same program without the stall, runs alternating
# (5 each); and what putting the program's slack back costs per intercepted call (the
# shim reads the slack, lowers it for its kernel wait and restores it: three prctl).
# Prints Markdown.
set -eu
B=$1
PN=$B/punctual
L=$B/bench/stall_loop
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for i in 1 2 3 4 5; do
	taskset -c 0 "$PN" run --precise -- "$L" stall >>"$tmp/stall"
	taskset -c 0 "$PN" run --precise -- "$L" none >>"$tmp/none"
done
med() { # med FILE COLUMN: the median of a column over the runs
	awk -v c="$2" '{print $c}' "$1" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'
}
echo "## One stall under punctual run --precise"
echo
echo "A C loop of nanosleep(3 ms) under \`punctual run --precise\` (10 us) on CPU 0: 512"
echo "sleeps to reach the steady state, then one sleep during which the process is stopped"
echo "for 50 ms (SIGSTOP, SIGCONT), then 8 chunks of 64 sleeps; the control run is the"
echo "same program without the stop. Runs alternate, 5 of each; CPU % (process CPU time /"
echo "wall time) is the median over the runs. A stall must not become the learned margin:"
echo "the chunks after it are at the control's level from the first one on."
echo
printf '| run | steady (last 256 before) |'
for c in 1 2 3 4 5 6 7 8; do printf ' %d-%d |' $(((c - 1) * 64 + 1)) $((c * 64)); done
echo
printf '|---|---:|'
for c in 1 2 3 4 5 6 7 8; do printf -- '---:|'; done
echo
for r in stall none; do
	[ $r = stall ] && printf '| 50 ms stop |' || printf '| no stop (control) |'
	for col in 1 2 3 4 5 6 7 8 9; do printf ' %s |' "$(med "$tmp/$r" $col)"; done
	echo
done
early=$(awk '{s += $NF} END {print s}' "$tmp/stall" "$tmp/none")
echo
echo "Early returns over all $((2 * 5 * (512 + 1 + 512))) sleeps: $early."
echo
"$B/bench/slack_cost"
