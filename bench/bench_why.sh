#!/bin/bash
# SPDX-License-Identifier: MIT
# bench_why.sh PUNCTUAL: `punctual sleep --periodic --smp` beside `cyclictest -S` (rt-tests)
# on the same interval and duration, runs alternating, medians from each tool's own
# histogram; then what --explain's counter reads cost: the median lateness with the
# attribution on and off, runs alternating. Prints Markdown.
set -eu
PN=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
RUNS=3 D=2
med() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
# the median over every thread of a cyclictest -h file (1 us rows), in us
ct_median() {
	awk '/^[0-9]/ {for (i = 2; i <= NF; i++) {n[$1 + 0] += $i; t += $i}}
	END {h = 0; for (k = 0; k in n || k < 100000; k++) {h += n[k]; if (2 * h >= t) {print k; exit}}}' "$1"
}
echo "## Periodic wakeups beside cyclictest, and the cost of --explain"
echo
if command -v cyclictest >/dev/null; then
	for i in $(seq $RUNS); do
		"$PN" sleep --periodic --smp --interval 1ms --duration ${D}s --dma-latency 0 --json >"$tmp/pn.json"
		python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["latency_ns"]["p50"] / 1e3)' "$tmp/pn.json" >>"$tmp/pn"
		cyclictest -q -S -i 1000 -D $D -h 100000 --histfile="$tmp/ct.hist" >/dev/null 2>&1
		ct_median "$tmp/ct.hist" >>"$tmp/ct"
	done
	p=$(med <"$tmp/pn") c=$(med <"$tmp/ct")
	echo "One thread per CPU ($(nproc)), each pinned, SCHED_OTHER, interval 1 ms, ${D} s a run,"
	echo "/dev/cpu_dma_latency held at 0 by both (cyclictest's default), $RUNS runs each,"
	echo "alternating; the median wakeup lateness over every thread (cyclictest's from its -h"
	echo "histogram, 1 us rows), median over the runs."
	echo
	echo "| tool | median lateness (us) |"
	echo "|---|---:|"
	echo "| \`punctual sleep --periodic --smp\` | $p |"
	echo "| \`cyclictest -S\` | $c |"
	echo
	echo "punctual / cyclictest: $(python3 -c "print('%.2f' % ($p / $c) if $c > 0 else 'n/a')")"
else
	echo "cyclictest (rt-tests) is not installed: no side-by-side."
fi
echo
for i in $(seq 5); do
	for m in off on; do
		x=""
		[ $m = on ] && x=--explain
		"$PN" sleep --periodic --cpu 0 --interval 1ms --duration ${D}s $x --json >"$tmp/$m.json"
		python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["latency_ns"]["p50"])' "$tmp/$m.json" >>"$tmp/$m"
	done
done
on=$(med <"$tmp/on") off=$(med <"$tmp/off")
echo "\`--explain\` reads /proc/thread-self/schedstat (and cpu.stat where a quota is set) after"
echo "every wakeup, and the per-CPU interrupt and steal counters in blocks of 64 and at late"
echo "wakeups. One thread on CPU 0, interval 1 ms, ${D} s a run, 5 runs each, alternating;"
echo "median over the runs of each run's median lateness:"
echo
echo "| attribution | median lateness (ns) |"
echo "|---|---:|"
echo "| off | $off |"
echo "| on (--explain) | $on |"
echo
echo "Difference: $(python3 -c "print('%+.1f%%' % (100.0 * ($on - $off) / $off))") (target: within 5%)."
echo
