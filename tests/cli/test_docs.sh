#!/bin/bash
# SPDX-License-Identifier: MIT
# test_docs.sh PUNCTUAL SRC MANDIR STATIC SHARED CC [CFLAGS]: the docs a user follows
# work. libpunctual(3)'s EXAMPLE, as the page shows it, compiles (CC, CFLAGS, the STATIC
# library) without a warning and runs, and its figures keep the invariants it states: the
# sleep never early, the counter's figure never below the clock's. run --help points to
# punctual(1)'s sections on --precise. Every function the SHARED library exports has a
# page in MANDIR (the build's man tree) that names it.
. "$(dirname "$0")/lib.sh"
SRC=$2 MANDIR=$3 STATIC=$4 SHARED=$5 CC=$6 CFLAGS=${7:-}
skip_emulated "the example is compiled and run on this host"

sh "$SRC/tests/cli/man_example.sh" "$SRC/docs/libpunctual.3.scd" >"$TMP/example.c"
check "libpunctual(3) has an EXAMPLE code block" test -s "$TMP/example.c"
# shellcheck disable=SC2086 # CFLAGS: the build's sanitizer flags, one word each
if "$CC" -std=gnu11 -Wall -Wextra -Werror -I"$SRC/include" -o "$TMP/example" \
	"$TMP/example.c" "$STATIC" -lpthread $CFLAGS 2>"$TMP/cc.err"; then
	pass
	run_cmd "$TMP/example"
	check "the example exits 0 ($(cat "$ERR"))" test "$RC" -eq 0
	# slept A ns, B ns late; C ns by the counter
	read -r a b c < <(sed -En 's/^slept (-?[0-9]+) ns, (-?[0-9]+) ns late; (-?[0-9]+) ns by the counter$/\1 \2 \3/p' "$OUT")
	if [ -z "${c:-}" ] || [ "$(wc -l <"$OUT")" -ne 1 ]; then
		fail "the example's output is not its one line: $(head -c 300 "$OUT")"
	else
		check "never early: slept $a ns of 1 ms" test "$a" -ge 1000000
		check "late $b ns is slept - 1 ms" test "$b" -eq $((a - 1000000))
		# the counter's reads enclose the clock's; 1% covers its calibration's error
		# and CLOCK_MONOTONIC's slewing against the raw clock (at most 500 ppm)
		check "the counter's $c ns is not below the clock's $a ns" \
			test "$c" -ge $((a - a / 100))
	fi
else
	fail "the example does not compile: $(head -n 5 "$TMP/cc.err")"
fi

# run --help points to punctual(1)'s sections on --precise, which exist
run run --help
check "run --help names the sections \"run --precise: ...\"" grep -q 'sections "run --precise: \.\.\."' "$OUT"
for sec in "the calls" "event loops and signals" "timer slack and learning" "shared CPUs" "limits"; do
	check "punctual(1) has the section \"run --precise: $sec\"" \
		grep -qx "## run --precise: $sec" "$SRC/docs/punctual.1.scd"
done

# every exported function has a page, which names it
if [ ! -d "$MANDIR/man3" ]; then
	skip "no man pages built (no scdoc: scripts/bootstrap installs it)"
	finish
	exit $?
fi
syms=$(nm -D --defined-only "$SHARED" | awk '$2 == "T" {print $3}' | grep '^pn_')
check "the shared library exports functions" test -n "$syms"
for s in $syms; do
	page=$MANDIR/man3/$s.3
	if [ ! -s "$page" ]; then
		fail "$s: no page $page"
		continue
	fi
	# a link page (.so man3/libpunctual.3) stands for the page it names
	so=$(sed -n 's/^\.so //p' "$page")
	[ -n "$so" ] && page=$MANDIR/$so
	if sed 's/\\f[BIR]//g; s/\\&//g' "$page" 2>/dev/null | grep -Eq "(^|[^a-z0-9_])$s([^a-z0-9_]|$)"; then
		pass
	else
		fail "$s: $page does not mention it"
	fi
done
finish
