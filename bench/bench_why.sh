#!/bin/bash
# SPDX-License-Identifier: MIT
# bench_why.sh PUNCTUAL [LOOP]: what `punctual why` costs the traced program and the host,
# at 1,000 and 10,000 wakeups a second (LOOP, by default the build's bench/slack_loop:
# nanosleeps with 1 ns slack, interval 1 ms or 100 us, which prints its own "p50_ns p99_ns
# sleeps"): the loop's own lateness untraced and traced, in alternating runs; the tracer's
# CPU (its user + system time over 2 s of the steady state, /proc/PID/stat); the kernel
# side's run time per traced wakeup (kernel.bpf_stats_enabled: every program's run_time_ns
# over the loop's wakeups, sched_switch's and the interrupts' runs host-wide included).
# Root.
set -eu
PN=$1 LOOP=${2:-$(dirname "$1")/bench/slack_loop} SECS=${SECS:-5} ROUNDS=${ROUNDS:-3}
old=$(sysctl -n kernel.bpf_stats_enabled)
trap 'sysctl -q -w kernel.bpf_stats_enabled=$old' EXIT
sysctl -q -w kernel.bpf_stats_enabled=1
for iv in 1000000 100000; do
	n=$((SECS * 1000000000 / iv))
	for r in $(seq "$ROUNDS"); do
		u=$("$LOOP" 1 $iv $n)
		"$LOOP" 1 $iv $n >"/tmp/bench_why.own" &
		L=$!
		sleep 0.2
		"$PN" why $L --for $((SECS + 2))s --json >/tmp/bench_why.json &
		W=$!
		sleep 1
		c0=$(awk '{print $14 + $15}' /proc/$W/stat)
		ids=$(bpftool prog show | sed -n 's/^\([0-9]*\): tracing  name why_\([a-z_]*\).*/\1/p')
		b0=0; for i in $ids; do b0=$((b0 + $(bpftool prog show id $i | sed -n 's/.*run_time_ns \([0-9]*\).*/\1/p'))); done
		sleep 2
		c1=$(awk '{print $14 + $15}' /proc/$W/stat)
		b1=0; for i in $ids; do b1=$((b1 + $(bpftool prog show id $i | sed -n 's/.*run_time_ns \([0-9]*\).*/\1/p'))); done
		wait $L; wait $W
		waits2s=$((2 * 1000000000 / iv))
		echo "interval $iv: own p50/p99 untraced $(echo $u | cut -d' ' -f1,2) traced $(cut -d' ' -f1,2 /tmp/bench_why.own)" \
			"| why p50 $(jq .lateness_ns.p50 /tmp/bench_why.json) waits $(jq .waits /tmp/bench_why.json)" \
			"| tracer CPU $(echo "$c0 $c1 $(getconf CLK_TCK)" | awk '{printf "%.2f%%", 100 * ($2 - $1) / $3 / 2}')" \
			"| BPF ns per wakeup $(( (b1 - b0) / waits2s ))"
	done
done
