#!/bin/bash
# SPDX-License-Identifier: MIT
# test_package.sh SRC WORK CC: `make package`'s .deb as a fleet deploys it: built (CPack,
# prefix /usr), its contents and declared dependencies checked, installed with dpkg -i,
# then `punctual --version`, `man -w punctual`, a pkg-config build of the README example
# against the installed files and systemd-analyze verify of the installed units, then
# purged (dpkg -P), leaving the system as found. A file of the package that is already
# on the system and no package owns (another copy, e.g. `make install PREFIX=/usr`) is
# moved aside and put back afterwards, also on failure; a file another package owns, or
# a punctual package someone else installed, makes the test skip, saying so.
set -u
SRC=$1 WORK=$2 CC=$3
if [ -n "${PUNCTUAL_EMULATOR:-}" ]; then
	echo "SKIP: under $PUNCTUAL_EMULATOR: it installs the cross build on this host and runs it"
	exit 77
fi
fail() {
	echo "FAIL: $*" >&2
	exit 1
}
skip() {
	echo "SKIP: $*"
	exit 77
}
[ "$(id -u)" -eq 0 ] || skip "dpkg -i needs root"
for t in dpkg dpkg-deb dpkg-shlibdeps cpack man pkg-config; do
	command -v "$t" >/dev/null || skip "$t is not installed (scripts/bootstrap installs it)"
done

# one package test at a time on this machine (ctest -j, other checkouts)
exec 9>/run/lock/punctual-package-test.lock || fail "cannot open the lock file"
flock -w 900 9 || fail "another package test held /run/lock/punctual-package-test.lock for 15 min"

st=$(dpkg-query -W -f='${Status}' punctual 2>/dev/null)
case "$st" in
*" installed" | *unpacked* | *half*) skip "a punctual package is already on this system ($st): not replacing it" ;;
esac

rm -rf "$WORK"
mkdir -p "$WORK/aside"
cmake -S "$SRC" -B "$WORK/build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=/usr \
	-DPUNCTUAL_TESTS=OFF -DPUNCTUAL_BENCH=OFF -DCMAKE_C_COMPILER="$CC" >/dev/null || fail "cmake"
cmake --build "$WORK/build" -j 2 >"$WORK/build.log" 2>&1 || fail "build: $(tail -n 3 "$WORK/build.log")"
(cd "$WORK/build" && cpack -G DEB >"$WORK/cpack.log" 2>&1) || fail "cpack: $(tail -n 3 "$WORK/cpack.log")"
DEB=$(ls "$WORK"/build/punctual_*.deb 2>/dev/null | head -n 1)
[ -s "$DEB" ] || fail "cpack made no .deb"

# what it holds and what it declares
dpkg-deb -c "$DEB" | awk '{print $6}' | sed 's|^\./|/|' >"$WORK/files"
for f in /usr/bin/punctual /usr/include/punctual/punctual.h /usr/include/punctual/wheel.h \
	/usr/share/man/man1/punctual.1 /usr/share/man/man3/libpunctual.3 \
	/usr/share/bash-completion/completions/punctual /usr/share/punctual/probe.schema.json \
	/usr/lib/systemd/system/punctual-probe.service /usr/lib/systemd/system/punctual-probe.timer \
	/usr/lib/tmpfiles.d/punctual-probe.conf; do
	grep -qx "$f" "$WORK/files" || fail "the package lacks $f"
done
for f in libpunctual.so libpunctual.so.0 libpunctual.a libpunctual-preload.so pkgconfig/punctual.pc \
	cmake/punctual/punctualConfig.cmake; do
	grep -q "^/usr/lib/.*/$f$\|^/usr/lib/$f$" "$WORK/files" || fail "the package lacks lib/.../$f"
done
dpkg-deb -f "$DEB" Depends | grep -q 'libc6' || fail "the package declares no dependency on libc6"

# files already there: owned by a package -> skip; another copy -> moved aside, put back
moved=()
while read -r f; do
	[ -e "$f" ] || [ -L "$f" ] || continue
	[ -d "$f" ] && [ ! -L "$f" ] && continue
	if owner=$(dpkg -S "$f" 2>/dev/null); then
		skip "$f belongs to the installed package ${owner%%:*}: not replacing it"
	fi
	mkdir -p "$WORK/aside$(dirname "$f")"
	mv "$f" "$WORK/aside$f" || fail "cannot move $f aside"
	moved+=("$f")
done <"$WORK/files"
[ ${#moved[@]} -eq 0 ] || echo "moved aside for the test, put back after it: ${moved[*]}"

installed=0
restore() {
	if [ "$installed" -eq 1 ]; then
		dpkg -P punctual >"$WORK/purge.log" 2>&1 || echo "FAIL: dpkg -P punctual: $(tail -n 2 "$WORK/purge.log")" >&2
	fi
	for f in "${moved[@]}"; do
		mv "$WORK/aside$f" "$f" || echo "FAIL: could not put $f back (it is in $WORK/aside$f)" >&2
	done
	[ ${#moved[@]} -eq 0 ] || ldconfig
}
trap restore EXIT
trap 'exit 130' INT TERM

# dpkg takes its lock or fails at once: wait for another dpkg (apt) to finish
for i in $(seq 120); do
	dpkg -i "$DEB" >"$WORK/install.log" 2>&1 && break
	grep -q 'lock' "$WORK/install.log" || break
	sleep 1
done
st=$(dpkg-query -W -f='${Status}' punctual 2>/dev/null)
[ -n "$st" ] && [ "$st" != "unknown ok not-installed" ] && installed=1
[ "$st" = "install ok installed" ] || fail "dpkg -i: $(tail -n 3 "$WORK/install.log")"

/usr/bin/punctual --version | grep -q "^punctual $(dpkg-deb -f "$DEB" Version) " ||
	fail "punctual --version: $(/usr/bin/punctual --version 2>&1)"
[ "$(command -v punctual)" = /usr/bin/punctual ] || [ "$(command -v punctual)" = /bin/punctual ] ||
	fail "punctual on PATH is $(command -v punctual), not the package's"
page=$(man -w punctual 2>&1) || fail "man -w punctual: $page"
case "$page" in /usr/share/man/man1/punctual.1*) ;; *) fail "man -w punctual: $page" ;; esac
man -w 3 libpunctual >/dev/null 2>&1 || fail "man -w 3 libpunctual"

# the README's library example, built with pkg-config against the installed files only
awk '/<!-- example:begin -->/{on=1; next} /<!-- example:end -->/{on=0} on' "$SRC/README.md" |
	sed '/^```/d' >"$WORK/example.c"
[ -s "$WORK/example.c" ] || fail "no library example in README.md"
flags=$(env -u PKG_CONFIG_PATH pkg-config --cflags --libs punctual) || fail "pkg-config punctual"
"$CC" -o "$WORK/example" "$WORK/example.c" $flags || fail "the README example does not build"
ldd "$WORK/example" >"$WORK/ldd"
grep -Eq 'libpunctual\.so\.0 => /(usr/)?lib/' "$WORK/ldd" || fail "the example does not find the package's libpunctual.so.0 (ldconfig): $(grep libpunctual "$WORK/ldd")"
"$WORK/example" >"$WORK/example.out" || fail "the README example failed"
[ -s "$WORK/example.out" ] || fail "the README example printed nothing"

if command -v systemd-analyze >/dev/null; then
	systemd-analyze verify /usr/lib/systemd/system/punctual-probe.service \
		/usr/lib/systemd/system/punctual-probe.timer >"$WORK/verify.log" 2>&1 ||
		fail "systemd-analyze verify: $(head -n 3 "$WORK/verify.log")"
fi
shim=$(PUNCTUAL_PRELOAD= /usr/bin/punctual run --precise -- sh -c 'echo "$LD_PRELOAD"')
grep -qx "$(realpath -m "$shim")" "$WORK/files" ||
	fail "punctual run --precise preloads $shim, not the package's shim"

# removed: nothing of it left
dpkg -P punctual >"$WORK/purge.log" 2>&1 || fail "dpkg -P punctual: $(tail -n 3 "$WORK/purge.log")"
installed=0
dpkg-query -W -f='${Status}' punctual 2>/dev/null | grep -q ' installed' && fail "still installed after dpkg -P"
while read -r f; do
	[ -d "$f" ] && [ ! -L "$f" ] && continue
	if [ -e "$f" ] || [ -L "$f" ]; then
		printf '%s\n' "${moved[@]}" | grep -qx "$f" || fail "left behind after dpkg -P: $f"
	fi
done <"$WORK/files"
echo "package: 1 passed, 0 failed"
