#!/bin/bash
# SPDX-License-Identifier: MIT
# test_preload_more.sh PUNCTUAL WAITS_MORE: `punctual run --precise` over select, __select,
# pselect, sem_timedwait, sem_clockwait and sigtimedwait: the same lines (fd_sets and the
# time left, pselect's timespec, the semaphore's value, siginfo, errno) with and without
# libpunctual-preload.so, each call made precise; an event just before any waiting call's
# deadline (in the shim's spin) is never a timeout; 10^4 mixed waits and sleeps of every
# interposed call, none early. (Apart from cli.preload, which runs the shim's other
# programs: each has its own time limit on a loaded machine.)
. "$(dirname "$0")/lib.sh"
skip_emulated "it compares remaining times in ms, which qemu-user's slowness moves with and without the shim alike"
WAITS_MORE=$2
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"

"$WAITS_MORE" >"$TMP/plain" 2>"$TMP/plain.err"
check "runs without the shim, never early ($(head -c 300 "$TMP/plain.err"))" test $? -eq 0
check "printed its cases" test "$(wc -l <"$TMP/plain")" -ge 100
check "no shim without --precise" grep -q '^shim: absent' "$TMP/plain.err"
# the 10^4 mixed waits under the default precision; a tenth of them under the others
for args in "--precise" "--precise=1us --slack 1ns" "--precise=0" "--precise=100ms"; do
	n=2500
	[ "$args" = "--precise" ] || n=250
	# shellcheck disable=SC2086
	"$PN" run $args -- "$WAITS_MORE" $n >"$TMP/shim" 2>"$TMP/shim.err"
	rc=$?
	check "$args: exit 0, never early, no event missed ($rc: $(grep -m3 -E 'EARLY|MISSED' "$TMP/shim.err"))" test $rc -eq 0
	check "$args: every call made precise ($(grep -m3 'not made precise' "$TMP/shim.err"))" \
		sh -c "! grep -q 'not made precise' '$TMP/shim.err'"
	check "$args: the shim was loaded" grep -Eq '^shim: loaded, [1-9][0-9]* calls' "$TMP/shim.err"
	check "$args: the same results as without the shim" diff "$TMP/plain" "$TMP/shim"
done

finish
