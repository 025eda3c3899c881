#!/bin/bash
# SPDX-License-Identifier: MIT
# test_clocksources.sh: `punctual clock --clocksources` switches the system clocksource to
# each available one in turn: one table per clocksource, the original first, and the
# clocksource restored after a run, on SIGINT and on SIGTERM. An entry of its own
# (cli.clocksources), so that a host where it cannot run (not root, a read-only sysfs, or
# one clocksource: nothing to switch to) reports it skipped.
. "$(dirname "$0")/lib.sh"

CS=/sys/devices/system/clocksource/clocksource0/current_clocksource
AVAIL=/sys/devices/system/clocksource/clocksource0/available_clocksource
if [ "$(id -u)" -ne 0 ] || [ ! -w "$CS" ]; then
	skip "--clocksources switching needs root and a writable $CS"
	finish
	exit $?
fi
navail=$(wc -w <"$AVAIL")
if [ "$navail" -lt 2 ]; then
	skip "--clocksources switching needs a second clocksource; this host has only $(cat "$AVAIL")"
	finish
	exit $?
fi

orig=$(cat "$CS")
# never leave the machine changed, even when the test is killed
trap '[ "$(cat "$CS")" = "$orig" ] || echo "$orig" >"$CS"; rm -rf "$TMP"' EXIT
ok clock --clocksources --json --duration 100ms
json_ok "$OUT"
jq_check "one table per available clocksource" --argjson n "$navail" '.clocksources | length == $n' "$OUT"
jq_check "the first table is the original clocksource" --arg o "$orig" '.clocksources[0].clocksource == $o and .measured_clocksource == $o' "$OUT"
check "clocksource restored after a run" test "$RC" -eq 0 -a "$(cat "$CS")" = "$orig"

# Interrupted while another clocksource is in force: the runs so far, marked, exit 0
# (SIGINT, SIGTERM; SIGHUP ends it by the signal), restored on the way out either way.
for sig in INT TERM HUP; do
	"$PN" clock --clocksources --duration 3s >"$TMP/cs.out" 2>/dev/null &
	pid=$!
	switched=0
	for _ in $(seq 1 400); do
		if [ "$(cat "$CS")" != "$orig" ]; then switched=1; break; fi
		sleep 0.05
	done
	kill -s "$sig" "$pid" 2>/dev/null
	wait "$pid"
	rc=$?
	check "SIG$sig: the run had switched the clocksource" test "$switched" -eq 1
	if [ "$sig" = HUP ]; then
		check "SIGHUP: died of the signal (status $rc)" test "$rc" -gt 128
	else
		check "SIG$sig: exit 0 (status $rc)" test "$rc" -eq 0
		check "SIG$sig: the runs so far, marked" grep -q "^interrupted by SIG$sig" "$TMP/cs.out"
	fi
	check "SIG$sig: clocksource restored to $orig" \
		test "$switched" -eq 1 -a "$(cat "$CS")" = "$orig"
	# never leave the machine changed, whatever the checks said
	[ "$(cat "$CS")" = "$orig" ] || echo "$orig" >"$CS"
done

finish
