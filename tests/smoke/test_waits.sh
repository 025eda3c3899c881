#!/bin/bash
# SPDX-License-Identifier: MIT
# test_waits.sh PUNCTUAL WAITS: a program's nanosleep, poll and epoll_wait give the same
# results with and without `punctual run --precise` (the shim built with the same C library
# as the program: the musl smoke suite), never early, and the shim was in use.
. "$(dirname "$0")/../cli/lib.sh"
WAITS=$2
# A sanitized tool (the ASan suite) preloads the shim before its runtime in WAITS, which has none.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"

"$WAITS" >"$TMP/plain" 2>"$TMP/plain.err"
check "without the shim: exit 0, never early ($(head -c 300 "$TMP/plain.err"))" test $? -eq 0
check "without the shim: no shim" grep -q '^shim: absent' "$TMP/plain.err"
for args in "--precise" "--precise=1us --slack 1ns" "--precise=0"; do
	# shellcheck disable=SC2086
	"$PN" run $args -- "$WAITS" >"$TMP/shim" 2>"$TMP/shim.err"
	rc=$?
	check "$args: exit 0, never early ($rc: $(head -c 300 "$TMP/shim.err"))" test $rc -eq 0
	check "$args: the shim made calls precise" grep -Eq '^shim: loaded, [1-9][0-9]* calls' "$TMP/shim.err"
	check "$args: the same results as without the shim" diff "$TMP/plain" "$TMP/shim"
done
finish
