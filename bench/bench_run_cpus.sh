#!/bin/bash
# SPDX-License-Identifier: MIT
# bench_run_cpus.sh BUILD_DIR: `punctual run --cpus`. What the shim adds to
# sysconf(_SC_NPROCESSORS_ONLN), beside the cached pn_cpu_count() in the same process
# (bench/cpus_sysconf.c); then, as root with a v1 cpu controller, a JDK program sizing a
# ForkJoinPool from availableProcessors() (bench/ForkJoinThrottle.java) in a cgroup
# allowing 0.5 CPU above an unlimited child, without and with --cpus, one run each, with
# the parent's cpu.stat throttling. The cgroups (pn-cpus-bench-*) are removed on exit.
# Prints Markdown.
set -u
B=$1
PN=$B/punctual
tmp=$(mktemp -d)
P=""
cleanup() {
	for d in ${P:+"$P/child" "$P"}; do
		[ -d "$d" ] || continue
		for p in $(cat "$d/cgroup.procs" 2>/dev/null); do echo "$p" >"$origin/cgroup.procs"; done
		rmdir "$d"
	done
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

echo "## The CPU count without recompiling: punctual run --cpus"
echo
echo "sysconf(_SC_NPROCESSORS_ONLN) as a program calls it, beside pn_cpu_count() (cached,"
echo "called from libpunctual.so) in the same process, blocks of 2000 calls alternating;"
echo "ns per call, the median of 201 blocks. Target: the shim's sysconf at most 1.1x"
echo "pn_cpu_count(). (In the plain row each slow sysconf block outlasts pn_cpu_count()'s"
echo "20 ms cache, so its blocks include a refresh.)"
echo
echo "| run | sysconf answers | sysconf ns | pn_cpu_count() ns | sysconf / pn_cpu_count() |"
echo "|---|---:|---:|---:|---:|"
row() {
	local name=$1 r
	shift
	r=$("$@" "$B/bench/cpus_sysconf") || { echo "| $name | failed | | | |"; return; }
	set -- $r
	echo "| $name | $1 | $2 | $4 | $(awk -v a="$2" -v b="$4" 'BEGIN { printf "%.2fx", a / b }') |"
}
row "plain (glibc reads /sys/devices/system/cpu/online)"
row "punctual run --cpus=1 (the shim)" "$PN" run --cpus=1 --
echo

mnt=$(awk '$0 ~ / - cgroup / && $NF ~ /(^|,)cpu(,|$)/ { print $4 " " $5; exit }' /proc/self/mountinfo)
self=$(awk -F: '$2 ~ /(^|,)cpu(,|$)/ { sub(/^[^:]*:[^:]*:/, ""); print; exit }' /proc/self/cgroup)
if ! command -v javac >/dev/null || ! command -v java >/dev/null; then
	echo "No JDK here: the ForkJoinPool demo is skipped."
	echo
	exit 0
fi
if [ "$(id -u)" -ne 0 ] || [ -z "$mnt" ] || [ -z "$self" ] || [ "${mnt%% *}" != "/" ]; then
	echo "The ForkJoinPool demo needs root and a v1 cpu controller mounted from its root: skipped."
	echo
	exit 0
fi
origin=${mnt#* }${self%/}
P=$origin/pn-cpus-bench-$$
mkdir -p "$P/child" || exit 0
echo 100000 >"$P/cpu.cfs_period_us"
echo 50000 >"$P/cpu.cfs_quota_us"
echo -1 >"$P/child/cpu.cfs_quota_us"
javac -d "$tmp" "$(dirname "$0")/ForkJoinThrottle.java" || exit 0
jv=$(java -version 2>&1 | head -n 1)
tasks=16 iters=40000000
echo "The JDK ($jv) in a v1 cgroup allowing 0.5 CPU (quota 50 ms"
echo "per 100 ms) above an unlimited child that runs it: new"
echo "ForkJoinPool(availableProcessors()) runs $tasks busy tasks; the parent's cpu.stat"
echo "before and after the work. One run each."
echo
echo "| run | pool workers | wall ms | periods throttled | throttled ms |"
echo "|---|---:|---:|---:|---:|"
for how in plain cpus; do
	pre=() name="java (availableProcessors() as the JDK counts)"
	[ $how = cpus ] && pre=("$PN" run --cpus --) name="punctual run --cpus -- java"
	r=$(sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' sh "$P/child" "${pre[@]}" \
		java -cp "$tmp" ForkJoinThrottle "$P/cpu.stat" $tasks $iters 2>/dev/null | tail -n 1)
	set -- $r
	echo "| $name | ${1:-failed} | ${2:-} | ${3:-} | ${4:-} |"
done
echo
