#!/bin/bash
# SPDX-License-Identifier: MIT
# run.sh DEB_DIR: the tests that need a real systemd (`make test-systemd`). Boots a Debian
# 12 box (box.sh: systemd as PID 1 under systemd-nspawn) with a work dir bound read-only
# at /opt/punctual: the newest punctual_*.deb of DEB_DIR, and in bin/ the helper programs
# (bench/sleep_loop.c, the service's loop, and any tests/systemd/*.c), compiled here before
# the boot. Installs the .deb inside with apt, then runs each tests/systemd/test_*.sh on the
# host (lib.sh: they act through `box`), one at a time. Exits 1 if any failed, 77 with one
# line when this machine cannot run them (not root, no nspawn, a box that cannot boot), else
# 0; its last line says how many passed and how long it took.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
DEB_DIR=${1:?usage: $0 DEB_DIR}
# seconds since START, to a tenth
START=$(date +%s%N)
since() {
	local ns=$(($(date +%s%N) - START))
	printf '%d.%d' $((ns / 1000000000)) $((ns / 100000000 % 10))
}

cannot() {
	echo "SKIP: test-systemd: $*"
	exit 77
}
[ "$(id -u)" -eq 0 ] || cannot "needs root (debootstrap, systemd-nspawn)"
for t in debootstrap systemd-nspawn nsenter flock cc; do
	command -v "$t" >/dev/null || cannot "$t is not installed (scripts/bootstrap systemd installs it)"
done
DEB=$(ls -t "$DEB_DIR"/punctual_*.deb 2>/dev/null | head -n 1)
if [ -z "$DEB" ]; then
	echo "FAIL: test-systemd: no punctual_*.deb in $DEB_DIR (make package)"
	exit 1
fi

. "$HERE/box.sh"
# the bound dir: world-readable, so that apt's unprivileged user reads the .deb
BOX_WORK=$(mktemp -d /var/tmp/punctual-systemd.XXXXXX)
export BOX_WORK
BOX_ON_EXIT='rm -rf "$BOX_WORK"'
trap 'rm -rf "$BOX_WORK"' EXIT
chmod 755 "$BOX_WORK"
mkdir "$BOX_WORK/bin" "$BOX_WORK/log"
cp "$DEB" "$BOX_WORK/" || exit 1
for c in "$HERE/../../bench/sleep_loop.c" "$HERE"/*.c; do
	[ -e "$c" ] || continue
	if ! cc -O2 -Wall -Wextra -Werror -o "$BOX_WORK/bin/$(basename "$c" .c)" "$c"; then
		echo "FAIL: test-systemd: $c does not build"
		exit 1
	fi
done

box_start pn-box "$BOX_WORK" /opt/punctual 2>"$BOX_WORK/log/boot"
st=$?
if [ "$st" -eq 77 ]; then
	cannot "$(tail -n 1 "$BOX_WORK/log/boot")"
elif [ "$st" -ne 0 ]; then
	echo "FAIL: test-systemd: the box did not boot:"
	cat "$BOX_WORK/log/boot"
	exit 1
fi
BOOTED=$(since)
[ "$BOX_BUILT" -eq 0 ] || root=" with the root's debootstrap"
echo "test-systemd: booted Debian $(box cat /etc/debian_version), systemd" \
	"$(box systemctl --version | awk 'NR == 1 {print $2}'), in $BOOTED s${root:-};" \
	"installing $(basename "$DEB")"
if ! box sh -c 'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
	--no-install-recommends /opt/punctual/punctual_*.deb' >"$BOX_WORK/log/install" 2>&1; then
	echo "FAIL: test-systemd: installing the .deb in the box:"
	tail -n 20 "$BOX_WORK/log/install"
	exit 1
fi
INSTALLED=$(since)

passed=0 failed=0 skipped=0 checks_failed=0
for t in "$HERE"/test_*.sh; do
	name=$(basename "$t")
	echo "== $name"
	# no test outlives 10 min; --foreground keeps it in reach of a ^C
	timeout --foreground -k 10 600 bash "$t" 2>&1 | tee "$BOX_WORK/log/$name"
	st=${PIPESTATUS[0]}
	checks_failed=$((checks_failed + $(grep -c '^FAIL' "$BOX_WORK/log/$name")))
	case $st in
	# a ^C or a TERM that ended the test ends the run (the box is stopped on the way out)
	130 | 143) echo "test-systemd: interrupted in $name"; exit "$st" ;;
	0) passed=$((passed + 1)) ;;
	77) skipped=$((skipped + 1)) ;;
	*)
		failed=$((failed + 1))
		[ "$st" -eq 1 ] || echo "FAIL: $name exited $st"
		;;
	esac
done
END=$(since)
echo "test-systemd: $passed passed, $failed failed ($checks_failed checks), $skipped skipped;" \
	"$END s (booted at $BOOTED s${root:-}, installed at $INSTALLED s)"
[ "$failed" -eq 0 ] || exit 1
[ "$passed" -eq 0 ] && [ "$skipped" -gt 0 ] && exit 77
exit 0
