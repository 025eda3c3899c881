#!/bin/bash
# SPDX-License-Identifier: MIT
# test_install.sh SRC WORK CC BUILD [CFLAGS]: installs BUILD, the suite's own build tree,
# into WORK/prefix (cmake --install: nothing built again) and checks what a user gets: the
# shared and static library exporting only the public pn_ API, the headers, the tool, man
# pages, and a consumer built with find_package(punctual) and with pkg-config (CC, with
# CFLAGS: the tree's sanitizer flags, which its libraries need).
set -eu
SRC=$1 WORK=$2 CC=$3 BUILD=$4 CFLAGS=${5:-}
if [ -n "${PUNCTUAL_EMULATOR:-}" ]; then
	echo "SKIP: under $PUNCTUAL_EMULATOR: it installs the cross build on this host and runs it"
	exit 77
fi
rm -rf "$WORK"
mkdir -p "$WORK"
P=$WORK/prefix
fail() { echo "FAIL: $*" >&2; exit 1; }

# configured for one prefix (the tree's), installed to another (cmake --install --prefix):
# the systemd unit names the binary of the prefix it is installed to
cmake --install "$BUILD" --prefix "$P" >/dev/null

LIB=$(dirname "$(find "$P" -name 'libpunctual.so' | head -n 1)")
[ -n "$LIB" ] && [ -d "$LIB" ] || fail "no libpunctual.so installed"
for f in "$LIB/libpunctual.a" "$LIB/pkgconfig/punctual.pc" \
	"$LIB/cmake/punctual/punctualConfig.cmake" "$LIB/cmake/punctual/punctualConfigVersion.cmake" \
	"$P/include/punctual/punctual.h" "$P/include/punctual/clock.h" "$P/include/punctual/hist.h" \
	"$P/include/punctual/version.h" "$P/include/punctual/cpus.h" "$P/bin/punctual"; do
	[ -e "$f" ] || fail "not installed: $f"
done
[ -e "$P/include/punctual/wheel.h" ] || fail "not installed: $P/include/punctual/wheel.h"
if command -v scdoc >/dev/null; then
	[ -s "$P/share/man/man1/punctual.1" ] || fail "punctual.1 not installed"
	[ -s "$P/share/man/man3/libpunctual.3" ] || fail "libpunctual.3 not installed"
	# `man FUNC` for every function the library exports: a page (man-db follows the link
	# pages' .so) that names it. man -w says which page man shows for FUNC; each page is
	# formatted once (groff is the cost: 0.2 s of CPU a page) and searched for each name.
	declare -A shown
	for s in $(nm -D --defined-only "$LIB/libpunctual.so" | awk '$2 == "T" {print $3}'); do
		[ -s "$P/share/man/man3/$s.3" ] || fail "no man page for $s"
		if command -v man >/dev/null; then
			page=$(man -w -M "$P/share/man" 3 "$s" 2>/dev/null) || fail "man -w $s finds no page"
			[ -n "${shown[$page]+set}" ] ||
				shown[$page]=$(MANWIDTH=200 man -M "$P/share/man" -P cat 3 "$s" 2>/dev/null || true)
			grep -qw "$s" <<<"${shown[$page]}" || fail "man $s does not name it"
		fi
	done
fi

# -fvisibility=hidden: only pn_* without the internal pn__ prefix is exported.
bad=$(nm -D --defined-only "$LIB/libpunctual.so" | awk '$2 ~ /[TDBR]/ {print $3}' |
	grep -v '^pn_[a-z]' || true)
[ -z "$bad" ] || fail "exported beyond the public API: $bad"
nm -D --defined-only "$LIB/libpunctual.so" | grep -q ' pn_now$' || fail "pn_now not exported"

# find_package(punctual), shared and static
cmake -S "$SRC/tests/install/consumer" -B "$WORK/consumer" -DCMAKE_PREFIX_PATH="$P" \
	-DCMAKE_C_COMPILER="$CC" -DCMAKE_C_FLAGS="$CFLAGS" >/dev/null
cmake --build "$WORK/consumer" >/dev/null
LD_LIBRARY_PATH=$LIB "$WORK/consumer/consumer_shared" || fail "consumer_shared failed"
"$WORK/consumer/consumer_static" || fail "consumer_static failed"
ldd "$WORK/consumer/consumer_static" | grep -q libpunctual && fail "static consumer links the .so"

# pkg-config
PKG_CONFIG_PATH=$LIB/pkgconfig
export PKG_CONFIG_PATH
"$CC" $CFLAGS -o "$WORK/pc" "$SRC/tests/install/consumer/main.c" $(pkg-config --cflags --libs punctual)
LD_LIBRARY_PATH=$LIB "$WORK/pc" || fail "pkg-config consumer failed"

# the README's library example, as a user would paste it
awk '/<!-- example:begin -->/{on=1; next} /<!-- example:end -->/{on=0} on' "$SRC/README.md" |
	sed '/^```/d' >"$WORK/example.c"
[ -s "$WORK/example.c" ] || fail "no library example in README.md"
"$CC" $CFLAGS -o "$WORK/example" "$WORK/example.c" $(pkg-config --cflags --libs punctual)
LD_LIBRARY_PATH=$LIB "$WORK/example" >"$WORK/example.out" || fail "README example failed"
[ -s "$WORK/example.out" ] || fail "README example printed nothing"

# libpunctual(3)'s example, as a user would paste it
sh "$SRC/tests/cli/man_example.sh" "$SRC/docs/libpunctual.3.scd" >"$WORK/man_example.c"
"$CC" $CFLAGS -o "$WORK/man_example" "$WORK/man_example.c" $(pkg-config --cflags --libs punctual)
LD_LIBRARY_PATH=$LIB "$WORK/man_example" | grep -q '^slept ' || fail "libpunctual(3) example failed"

# the preload shim, the probe's JSON schema and the completions are installed
[ -e "$LIB/libpunctual-preload.so" ] || fail "libpunctual-preload.so not installed"
[ -s "$P/share/punctual/probe.schema.json" ] || fail "probe.schema.json not installed"
[ -s "$P/share/bash-completion/completions/punctual" ] || fail "bash completion not installed"
[ -s "$P/share/zsh/site-functions/_punctual" ] || fail "zsh completion not installed"
[ -s "$P/share/fish/vendor_completions.d/punctual.fish" ] || fail "fish completion not installed"
PUNCTUAL_PRELOAD= "$P/bin/punctual" run --precise -- sh -c 'echo "$LD_PRELOAD"' |
	grep -q "libpunctual-preload.so" || fail "installed punctual run --precise"

# the systemd units: installed under the prefix, naming the installed binary, and valid
U=$P/lib/systemd/system
for u in punctual-probe.service punctual-probe.timer; do
	[ -s "$U/$u" ] || fail "not installed: $U/$u"
done
# and the tmpfiles.d entry that creates the service's one writable directory
grep -q '^d /var/lib/prometheus/node-exporter ' "$P/lib/tmpfiles.d/punctual-probe.conf" ||
	fail "not installed: $P/lib/tmpfiles.d/punctual-probe.conf"
grep -qx "ExecStart=$P/bin/punctual probe \$PUNCTUAL_PROBE_OPTIONS --prom \${PUNCTUAL_TEXTFILE_DIR}/punctual.prom" \
	"$U/punctual-probe.service" || fail "punctual-probe.service: ExecStart is not the installed punctual probe --prom"
grep -q '^Type=oneshot$' "$U/punctual-probe.service" || fail "punctual-probe.service is not a oneshot"
grep -q '^EnvironmentFile=-/etc/default/punctual-probe$' "$U/punctual-probe.service" ||
	fail "punctual-probe.service reads no environment file"
grep -q '^OnUnitActiveSec=15min$' "$U/punctual-probe.timer" && grep -q '^RandomizedDelaySec=' "$U/punctual-probe.timer" ||
	fail "punctual-probe.timer: not every 15 min with a randomized delay"
if command -v systemd-analyze >/dev/null; then
	systemd-analyze verify "$U/punctual-probe.service" "$U/punctual-probe.timer" >"$WORK/verify.log" 2>&1 ||
		fail "systemd-analyze verify: $(head -n 3 "$WORK/verify.log")"
else
	echo "SKIP: systemd-analyze verify: systemd-analyze is not installed"
fi

# the installed tool runs
"$P/bin/punctual" --version | grep -q '^punctual ' || fail "installed tool"
echo "install: 1 passed, 0 failed"
