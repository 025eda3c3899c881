#!/bin/bash
# SPDX-License-Identifier: MIT
# bench_containers.sh [IMAGE_BUILD_DIR]: the CPU count inside podman containers of 0.5,
# 1.5 and 2 CPUs (`podman run --cpus=N`: a CFS quota of N periods on the container's own
# cgroup), and in one whose parent cgroup allows 0.5 CPU (`--cgroup-parent`, as a systemd
# slice with CPUQuota= or a pod's cgroup would). Asked in each: punctual cpus, coreutils'
# nproc and busybox's (from `make image`'s image), and the host's Python (os.cpu_count())
# and JDK (availableProcessors()), run in a container whose root is the host's own under
# an overlay (`--rootfs /:O`) with the same limit; then the same programs under
# `punctual run --cpus`. Prints Markdown; needs root, podman and the image (make image).
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/.." && pwd)
B=${1:-$TOP/build/image}
ROOT=$B/oci/root
: "${CONTAINERS_CONF:=$TOP/packaging/oci/containers.conf}"
export CONTAINERS_CONF
. "$HERE/runtimes.sh"
VERSION=$(sed -n 's/^CMAKE_PROJECT_VERSION:STATIC=//p' "$B/CMakeCache.txt" 2>/dev/null)
IMAGE=punctual:${VERSION:-latest}
tmp=$(mktemp -d /var/tmp/pn-bench-containers.XXXXXX)
PARENT=pn-bench-parent-$$
cleanup() {
	local d
	# podman made the parent in every controller, and conmon's cgroup in it
	for d in /sys/fs/cgroup/*/"$PARENT"; do
		[ -d "$d" ] && find "$d" -depth -type d -exec rmdir {} + 2>/dev/null
	done
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

echo "## CPU count in containers (bench/bench_containers.sh)"
echo
if [ "$(id -u)" -ne 0 ] || ! command -v podman >/dev/null || ! podman image exists "$IMAGE" ||
	[ ! -x "$ROOT/usr/bin/punctual" ]; then
	echo "Skipped: needs root, podman and the image $IMAGE with its root in $ROOT (make image)."
	echo
	exit 0
fi
chmod 755 "$tmp"
"$JAVAC" -d "$tmp" "$HERE/AvailableProcessors.java" || exit 1
PN=$ROOT/usr/bin/punctual # the image's, used in the host-rooted container
jv=$("$JAVA" -version 2>&1 | head -n 1)
pv=$("$PY" --version 2>&1)

# in_image OPTS...: one container of the image: punctual, nproc, busybox nproc, then nproc
# under run --cpus; prints the four counts on one line.
in_image() {
	podman run --rm --network none "$@" --entrypoint sh "$IMAGE" -c \
		'echo $(punctual cpus --quiet) $(nproc) $(busybox nproc) $(punctual run --cpus -- nproc)' \
		2>/dev/null
}
# on_host_root OPTS...: one container on the host's root: Python and the JDK, then both
# under run --cpus; prints the four counts on one line.
on_host_root() {
	local py=("$PY" -c 'import os; print(os.cpu_count())')
	local java=("$JAVA" -cp "$tmp" AvailableProcessors)
	podman run --rm --network none "$@" --rootfs /:O bash -c '
		pn=$1 n=$2; shift 2
		echo $("${@:1:$n}") $("${@:$((n + 1))}") $("$pn" run --cpus -- "${@:1:$n}") \
			$("$pn" run --cpus -- "${@:$((n + 1))}")' \
		bash "$PN" "${#py[@]}" "${py[@]}" "${java[@]}" 2>/dev/null
}

rows=()
# row NAME QUOTA OPTS...: both containers with OPTS, one table row each way
row() {
	local name=$1 quota=$2 i h
	shift 2
	read -r -a i < <(in_image "$@")
	read -r -a h < <(on_host_root "$@")
	rows+=("| $name | $quota | ${i[0]:-?} | ${i[1]:-?} | ${i[2]:-?} | ${h[0]:-?} | ${h[1]:-?} |")
	runs+=("| $name | $quota | ${i[0]:-?} | ${i[3]:-?} | ${i[2]:-?} | ${h[2]:-?} | ${h[3]:-?} |")
}
runs=()
for c in 0.5 1.5 2; do
	row "\`--cpus=$c\`" "$(awk -v c="$c" 'BEGIN { printf "%d/100000 us", c * 100000 }')" --cpus="$c"
done
# a parent allowing 0.5 CPU above the container's own unlimited cgroup (cgroup v1's cpu
# controller, podman's cgroupfs manager)
cpu=$(awk '$0 ~ / - cgroup / && $NF ~ /(^|,)cpu(,|$)/ { print $5; exit }' /proc/self/mountinfo)
if [ -n "$cpu" ] && [ "$(podman info --format '{{.Host.CgroupManager}}')" = cgroupfs ] &&
	mkdir "$cpu/$PARENT" 2>/dev/null && echo 100000 >"$cpu/$PARENT/cpu.cfs_period_us" &&
	echo 50000 >"$cpu/$PARENT/cpu.cfs_quota_us"; then
	row "parent of 0.5 CPU" "none; parent 50000/100000 us" --cgroup-parent="/$PARENT"
fi

echo "Run on $(date -u '+%Y-%m-%d') with $(podman --version) and $(podman info --format \
	'{{.Host.OCIRuntime.Name}}'), cgroup $(podman info --format '{{.Host.CgroupsVersion}}'),"
echo "on a host of $(nproc --all) CPUs. Reproduce with \`make image && bench/bench_containers.sh\`."
echo "Each count is what the program prints inside the container. punctual, coreutils'"
echo "nproc and busybox's come from the image $IMAGE; $pv and the JDK"
echo "($jv) are the host's, in a container with the same limit whose"
echo "root is the host's own under an overlay (\`podman run --rootfs /:O\`). The right answer"
echo "is the quota rounded up, as the JDK, .NET and Go round: 1, 2 and 2. The last row's"
echo "limit is a parent's, outside what the container sees: runc mounts the container's own"
echo "cgroup as the root of its hierarchy (cgroup v2 namespaces do the same), so no program"
echo "inside can count it; punctual's walk up to the parents finds such a limit on a host"
echo "(a systemd slice with CPUQuota=), not across a container's boundary."
echo
echo "| container | its cgroup's quota | punctual cpus | nproc (coreutils) | nproc (busybox) | Python os.cpu_count() | JDK availableProcessors() |"
echo "|---|---|--:|--:|--:|--:|--:|"
printf '%s\n' "${rows[@]}"
echo
echo "The same programs under \`punctual run --cpus --\` (the count punctual found, given to"
echo "the program through the shim's sysconf, OMP_NUM_THREADS and the JDK's"
echo "-XX:ActiveProcessorCount; busybox is static, beyond LD_PRELOAD, and reads no variable):"
echo
echo "| container | its cgroup's quota | punctual cpus | nproc (coreutils) | nproc (busybox) | Python os.cpu_count() | JDK availableProcessors() |"
echo "|---|---|--:|--:|--:|--:|--:|"
printf '%s\n' "${runs[@]}"
echo
