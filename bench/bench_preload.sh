#!/bin/bash
# SPDX-License-Identifier: MIT
# bench_preload.sh BUILD_DIR: `punctual run --precise` on programs that know nothing of
# libpunctual: a C loop of nanosleep(100 us), and the JDK's Thread.sleep (JMH
# ThreadSleep's calls), each without and with the shim, in one run. Prints Markdown.
set -eu
B=$1
PN=$B/punctual
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "## Precise sleeps without recompiling: punctual run --precise"
echo
echo "A C loop of nanosleep(100 us), 5000 sleeps per row, rows one after the other on"
echo "CPU 0; lateness = duration - 100 us, in us; CPU % = process CPU time / wall time."
echo
echo "| run | sleeps | p50 | p99 | p99.9 | max | early | CPU % |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|"
L=$B/bench/sleep_loop
taskset -c 0 "$L" "plain (default slack)" 100000 5000 || true
taskset -c 0 "$PN" run --slack 1ns -- "$L" "punctual run --slack 1ns" 100000 5000 || true
taskset -c 0 "$PN" run --precise=50us -- "$L" "punctual run --precise=50us" 100000 5000 || true
taskset -c 0 "$PN" run --precise -- "$L" "punctual run --precise (10 us)" 100000 5000 || true
taskset -c 0 "$PN" run --precise=1us -- "$L" "punctual run --precise=1us" 100000 5000 || true
echo
if command -v javac >/dev/null && command -v java >/dev/null; then
	javac -d "$tmp" "$(dirname "$0")/SleepJ.java"
	jv=$(java -version 2>&1 | head -n 1)
	echo "The JDK ($jv): Thread.sleep as JMH ThreadSleep calls it, 2000 sleeps per row after"
	echo "200 to warm up; durations in us. JDK 17 rounds sleep(0, 100000) up to 1 ms (JDK 21"
	echo "sleeps the nanoseconds), so that row asks the OS for 1 ms."
	if java -XX:+UnlockExperimentalVMOptions -XX:TimerSlack=1 -version >/dev/null 2>&1; then
		ts=1
	else
		ts=0
		echo "-XX:TimerSlack (JDK-8307766) is not in this JDK: it was added in JDK 22, so"
		echo "\`punctual run --slack 1ns\` stands in for it."
	fi
	echo
	echo "| run | call | sleeps | p50 | p99 | p99.9 |"
	echo "|---|---|---:|---:|---:|---:|"
	for call in "0 100000" "1 0"; do
		set -- $call
		taskset -c 0 java -cp "$tmp" SleepJ "java" "$1" "$2" 2000
		if [ $ts -eq 1 ]; then
			taskset -c 0 java -XX:+UnlockExperimentalVMOptions -XX:TimerSlack=1 -cp "$tmp" \
				SleepJ "java -XX:TimerSlack=1" "$1" "$2" 2000
		fi
		taskset -c 0 "$PN" run --slack 1ns -- java -cp "$tmp" SleepJ "punctual run --slack 1ns -- java" "$1" "$2" 2000
		taskset -c 0 "$PN" run --precise=1us -- java -cp "$tmp" SleepJ "punctual run --precise=1us -- java" "$1" "$2" 2000
	done
	echo
else
	echo "No JDK here: the Thread.sleep comparison is skipped."
	echo
fi
