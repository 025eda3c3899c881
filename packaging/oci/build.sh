#!/bin/bash
# SPDX-License-Identifier: MIT
# build.sh BUILD_DIR: the OCI image punctual:VERSION and punctual:latest in podman's local
# store (`make image`), from BUILD_DIR, a Release build configured for the prefix /usr
# and the library directory lib. Nothing comes from a registry: the Containerfile is
# FROM scratch, and its root, staged in BUILD_DIR/oci/root, holds
#   - what `cmake --install --strip` installs of the tool: punctual, the shim
#     libpunctual-preload.so (for run --cpus and run --precise) and the probe's schema;
#   - from this machine's Debian packages: the shared libraries those need and the loader
#     (libc6, libjansson4, liburing2), coreutils' nproc (a glibc program, so that
#     `run --cpus -- nproc` shows the shim's and OMP_NUM_THREADS's count; busybox's
#     counts the affinity mask alone and ignores both), busybox-static as /usr/bin/sh
#     (the DaemonSet's loop is a shell script), and each package's
#     copyright file, with their versions in /usr/share/doc/punctual/image-packages;
#   - packaging/oci's textfile-loop, and an /etc/passwd naming root and
#     nobody (65534), the image's user.
# Prints one line: the image, its ID and its size.
set -euo pipefail
B=${1:?usage: $0 BUILD_DIR}
HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)
VERSION=$(sed -n 's/^CMAKE_PROJECT_VERSION:STATIC=//p' "$B/CMakeCache.txt")
[ -n "$VERSION" ] || { echo "build.sh: no project version in $B/CMakeCache.txt" >&2; exit 1; }
STAGE=$B/oci
ROOT=$STAGE/root
LOG=$STAGE/log
# podman's settings for this host (runc, no default ulimits) unless the caller has its own
: "${CONTAINERS_CONF:=$TOP/packaging/oci/containers.conf}"
export CONTAINERS_CONF

die() {
	echo "build.sh: $*" >&2
	exit 1
}

# copy_host FILE: a file of this machine into the root at the same path (following links
# to their content), its Debian package remembered for the copyright files.
copy_host() {
	local f=$1 pkg
	mkdir -p "$ROOT$(dirname "$f")"
	cp -L "$f" "$ROOT$f"
	pkg=$(dpkg -S "$f" 2>/dev/null || dpkg -S "$(readlink -f "$f")" 2>/dev/null) ||
		die "$f belongs to no Debian package"
	echo "${pkg%%:*}" >>"$STAGE/packages"
}

# libs_of ELF...: the shared libraries and the loader the loader would map for them here.
libs_of() {
	ldd "$@" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }' | sort -u
}

stage_root() {
	rm -rf "$STAGE"
	mkdir -p "$ROOT"/usr/{bin,lib,lib64,libexec/punctual,share/punctual,share/doc/punctual} \
		"$ROOT"/{etc,tmp,proc,sys,dev}
	chmod 1777 "$ROOT/tmp"
	# Debian's merged /usr: the loader's path (/lib64/...) and dpkg's (/lib/...) both work
	for d in bin lib lib64; do ln -s "usr/$d" "$ROOT/$d"; done
	: >"$STAGE/packages"

	DESTDIR=$STAGE/install cmake --install "$B" --strip >"$LOG" 2>&1 ||
		die "cmake --install failed: $(tail -n 3 "$LOG")"
	local inst=$STAGE/install/usr
	install -m 755 "$inst/bin/punctual" "$ROOT/usr/bin/punctual"
	install -m 644 "$inst/lib/libpunctual-preload.so" "$ROOT/usr/lib/"
	install -m 644 "$inst/share/punctual/probe.schema.json" "$ROOT/usr/share/punctual/"
	install -m 755 "$HERE/textfile-loop" "$ROOT/usr/libexec/punctual/"

	command -v busybox >/dev/null || die "no busybox (scripts/bootstrap container)"
	copy_host "$(command -v nproc)"
	copy_host /bin/busybox
	ln -s busybox "$ROOT/usr/bin/sh"
	local f
	for f in $(libs_of "$ROOT/usr/bin/punctual" "$ROOT/usr/lib/libpunctual-preload.so" \
		"$ROOT/usr/bin/nproc"); do
		copy_host "$f"
	done

	printf '%s\n' 'root:x:0:0:root:/root:/usr/bin/sh' \
		'nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin' >"$ROOT/etc/passwd"
	printf '%s\n' 'root:x:0:' 'nogroup:x:65534:' >"$ROOT/etc/group"

	local p
	sort -u "$STAGE/packages" | while read -r p; do
		mkdir -p "$ROOT/usr/share/doc/$p"
		cp "/usr/share/doc/$p/copyright" "$ROOT/usr/share/doc/$p/"
		dpkg-query -W -f '${Package} ${Version}\n' "$p" >>"$ROOT/usr/share/doc/punctual/image-packages"
	done
}

build_image() {
	local rev created old new size
	rev=$(git -C "$TOP" describe --always --dirty 2>/dev/null || echo unknown)
	# the commit's time, for the label and every file's time: the same tree gives the
	# same image
	created=$(git -C "$TOP" log -1 --format=%ct 2>/dev/null || date +%s)
	old=$(podman image inspect --format '{{.Id}}' punctual:latest 2>/dev/null || true)
	podman build --pull=never --layers=false --timestamp "$created" -f "$HERE/Containerfile" \
		--build-arg VERSION="$VERSION" --build-arg REVISION="$rev" \
		--build-arg CREATED="$(date -u -d "@$created" +%Y-%m-%dT%H:%M:%SZ)" \
		-t "punctual:$VERSION" -t punctual:latest "$STAGE" >>"$LOG" 2>&1 ||
		die "podman build failed: $(tail -n 5 "$LOG")"
	new=$(podman image inspect --format '{{.Id}}' punctual:latest)
	# the image this one replaced, if nothing else names or runs it
	if [ -n "$old" ] && [ "$old" != "$new" ] &&
		[ "$(podman image inspect --format '{{len .RepoTags}}' "$old" 2>/dev/null)" = 0 ]; then
		podman rmi "$old" >/dev/null 2>&1 || true
	fi
	size=$(podman image inspect --format '{{.Size}}' punctual:latest)
	echo "image: punctual:$VERSION and punctual:latest, ${new:0:12}," \
		"$(awk -v s="$size" 'BEGIN { printf "%.1f MB", s / 1048576 }')" \
		"(revision $rev; log: $LOG)"
}

stage_root
build_image
