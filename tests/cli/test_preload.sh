#!/bin/bash
# SPDX-License-Identifier: MIT
# test_preload.sh PUNCTUAL CALLS STATIC STALL WAITS: `punctual run --precise`: a program
# using every interposed sleep, and one using every interposed event-loop wait, behave the
# same with and without libpunctual-preload.so (return
# values, errno, remaining times, mutex held, timer slack), never early, and the shim was
# really in use; the slack --slack set stays the command's; a stall does not stay the
# learned margin; LD_PRELOAD is appended to; the exit status passes through; static,
# setuid and setcap programs are reported; bad input exits 2.
. "$(dirname "$0")/lib.sh"
skip_emulated "the calls program's cond and semaphore cases hang in qemu-user's futex emulation, with and without the shim; and qemu 7.2 has no epoll_pwait2, which the waits program then sees refused, while the shim's falls back to epoll_pwait (smoke.waits checks nanosleep, poll and epoll_wait)"
CALLS=$2 STATIC=$3 STALL=$4 WAITS=$5
# A sanitized CALLS has its runtime as a dependency; the preloaded shim comes before it.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"

"$CALLS" >"$TMP/plain.out" 2>"$TMP/plain.err"
check "the calls program runs without the shim, never early" test $? -eq 0
"$PN" run --precise -- "$CALLS" >"$TMP/shim.out" 2>"$TMP/shim.err"
rc=$?
check "the calls program runs under the shim, never early (status $rc: $(head -c 300 "$TMP/shim.err"))" test $rc -eq 0
check "same return values, errno and remaining times with and without the shim $(grep '^slack after' "$TMP/shim.err")" \
	diff "$TMP/plain.out" "$TMP/shim.out"
check "the shim was loaded and made calls precise" grep -Eq '^shim: loaded, [1-9][0-9]* calls' "$TMP/shim.err"
check "no shim without --precise" grep -q '^shim: absent' "$TMP/plain.err"
# The other precisions: the same output, exit 0 (calls exits 1 after an EARLY line), and
# no EARLY report on stderr.
for args in "--precise=1us --slack 1ns" "--precise=0" "--precise=100ms"; do
	# shellcheck disable=SC2086
	"$PN" run $args -- "$CALLS" >"$TMP/shimp.out" 2>"$TMP/shimp.err"
	rc=$?
	check "$args: exit 0 ($rc: $(head -c 300 "$TMP/shimp.err"))" test $rc -eq 0
	check "$args: no early return" sh -c "! grep -q EARLY '$TMP/shimp.err'"
	check "$args: the shim was loaded" grep -Eq '^shim: loaded, [1-9][0-9]* calls' "$TMP/shimp.err"
	check "$args: same contract as without the shim $(grep '^slack after' "$TMP/shimp.err")" \
		diff "$TMP/plain.out" "$TMP/shimp.out"
done

# The event-loop waits (poll, ppoll, epoll_wait, epoll_pwait, epoll_pwait2, __poll_chk,
# __ppoll_chk): the same lines with and without the shim, never early, made precise.
"$WAITS" >"$TMP/waits.plain" 2>"$TMP/waits.plain.err"
check "the waits program runs without the shim, never early ($(head -c 300 "$TMP/waits.plain.err"))" test $? -eq 0
check "the waits program printed its cases" test "$(wc -l <"$TMP/waits.plain")" -ge 49
for args in "--precise" "--precise=1us --slack 1ns" "--precise=0"; do
	# shellcheck disable=SC2086
	"$PN" run $args -- "$WAITS" >"$TMP/waits.shim" 2>"$TMP/waits.shim.err"
	rc=$?
	check "waits $args: exit 0, never early ($rc: $(head -c 300 "$TMP/waits.shim.err"))" test $rc -eq 0
	check "waits $args: made precise" grep -Eq '^shim: loaded, [1-9][0-9]* calls' "$TMP/waits.shim.err"
	check "waits $args: the same results as without the shim" diff "$TMP/waits.plain" "$TMP/waits.shim"
done
# The call time: the counter read at the entry, converted after (with the TSC the kernel
# trusts), or the clock read there (PUNCTUAL_CYCLES=clock, or no trusted counter).
src=$("$PN" clock --json --duration 10ms | jq -r .cycles.source)
want=counter
[ "$src" = clock_monotonic ] && want=clock
check "waits: the call time is the $want's (cycles: $src; $(grep -m1 '^call time' "$TMP/waits.shim.err"))" \
	grep -q "^call time: $want\$" "$TMP/waits.shim.err"
PUNCTUAL_CYCLES=clock "$PN" run --precise -- "$WAITS" >"$TMP/waits.shim" 2>"$TMP/waits.shim.err"
rc=$?
check "waits, PUNCTUAL_CYCLES=clock: exit 0, never early ($rc: $(head -c 300 "$TMP/waits.shim.err"))" test $rc -eq 0
check "waits, PUNCTUAL_CYCLES=clock: the call time is the clock's" grep -q '^call time: clock$' "$TMP/waits.shim.err"
check "waits, PUNCTUAL_CYCLES=clock: the same results as without the shim" diff "$TMP/waits.plain" "$TMP/waits.shim"

# The slack: --slack's value stays the command's whatever slack the shim's own waits use
# (precision 1ms sleeps in the kernel with a large slack), and without --slack the
# command keeps the one it inherited.
mine=$(cat /proc/self/timerslack_ns)
for v in 1 5000 "$mine"; do
	[ "$v" = "$mine" ] && args="" || args="--slack ${v}ns"
	# shellcheck disable=SC2086
	got=$("$PN" run $args --precise=1ms -- "$CALLS" slack 2>"$TMP/slack.err")
	check "run ${args:-(no --slack)} --precise=1ms: slack after sleeps is $v, not the shim's ($got)" \
		test "$got" = "$v"
done

# A 50 ms stop (SIGSTOP/SIGCONT) in the first 3 ms sleep is an outlier: after 64 more
# sleeps the class's margin is not the stall (it would have stayed, spinning, before).
"$PN" run --precise -- "$STALL" >"$TMP/stall.out" 2>"$TMP/stall.err"
check "the stall program runs under the shim ($(cat "$TMP/stall.err"))" test $? -eq 0
margin=$(sed -n 's/^3ms class: margin \([0-9]*\) ns.*/\1/p' "$TMP/stall.out")
check "the stall program read the shim's stats: $(cat "$TMP/stall.out")" test -n "$margin"
check "a 50 ms stall is not the 3 ms class's margin ($margin ns)" test "${margin:-99999999999}" -lt 50000000
# 1 + 1 + 64 nanosleeps, 50 more and 50 epoll_waits: each counted once, none early (the
# shim ends the last stretch of a spin in its wrapper and counts it at the next call)
check "the shim counts each of 166 sleeps once, none early: $(cat "$TMP/stall.out")" \
	grep -qx 'counted 166 early 0' "$TMP/stall.out"
"$STALL" >"$TMP/stall0.out"
check "no shim, no stats" grep -q '^no shim$' "$TMP/stall0.out"

# It survives fork and exec: a shell's child still has it, active.
"$PN" run --precise -- sh -c "\"$CALLS\" >/dev/null" 2>"$TMP/child.err"
check "a child of a child is still precise" grep -Eq '^shim: loaded, [1-9][0-9]* calls' "$TMP/child.err"

# The shim is inert unless PUNCTUAL_PRECISION is set.
SHIM=$(dirname "$PN")/libpunctual-preload.so
LD_PRELOAD=$SHIM "$CALLS" >"$TMP/inert.out" 2>"$TMP/inert.err"
check "inert without PUNCTUAL_PRECISION" grep -q '^shim: loaded, 0 calls' "$TMP/inert.err"

# The environment the command gets.
ok run --precise -- sh -c 'echo "$LD_PRELOAD $PUNCTUAL_PRECISION"'
check "LD_PRELOAD and the default precision (10 us)" grep -Eq '^/.*libpunctual-preload\.so 10000$' "$OUT"
OUT=$TMP/env.out
LD_PRELOAD=libm.so.6 "$PN" run --precise=50us -- sh -c 'echo "$LD_PRELOAD $PUNCTUAL_PRECISION"' >"$OUT"
check "an existing LD_PRELOAD is kept and appended to" grep -Eq '^libm\.so\.6:/.*libpunctual-preload\.so 50000$' "$OUT"

# Exit status passes through.
"$PN" run --precise -- /bin/true
check "run --precise -- /bin/true exits 0" test $? -eq 0
"$PN" run --precise -- sh -c 'exit 3'
check "exit status 3 passes through" test $? -eq 3
"$PN" run --precise -- /nonexistent/cmd 2>/dev/null
check "127 when the command is missing" test $? -eq 127

# Programs the shim cannot reach are reported, and still run.
"$PN" run --precise -- "$STATIC" 5 2>"$TMP/static.err"
check "a static program still runs (status passes through)" test $? -eq 5
check "a static program is reported" grep -q 'statically linked' "$TMP/static.err"
check "one line about it" test "$(wc -l <"$TMP/static.err")" -eq 1
if [ "$(id -u)" -eq 0 ]; then
	cp /bin/true "$TMP/suid"
	chown 65534 "$TMP/suid"
	chmod 4755 "$TMP/suid"
	"$PN" run --precise -- "$TMP/suid" 2>"$TMP/suid.err"
	check "a setuid program still runs" test $? -eq 0
	check "a setuid program is reported" grep -q 'setuid' "$TMP/suid.err"
fi
# A program with file capabilities (setcap) runs in secure mode for a user other than
# root: the loader drops LD_PRELOAD (env shows it), and punctual says so. Root's exec
# is not secure: the shim reaches it, and nothing is said.
if [ "$(id -u)" -ne 0 ] || ! command -v setpriv >/dev/null || ! command -v setcap >/dev/null; then
	skip "setcap program: needs root, setpriv and setcap (Debian: libcap2-bin)"
else
	mkdir "$TMP/caps"
	chmod 711 "$TMP"
	chmod 755 "$TMP/caps"
	cp /usr/bin/env "$TMP/caps/capd"
	if ! setcap cap_net_raw+ep "$TMP/caps/capd" 2>"$TMP/setcap.err"; then
		skip "setcap program: setcap failed here: $(head -c 200 "$TMP/setcap.err")"
	else
		(cd "$TMP/caps" && setpriv --reuid=65534 --regid=65534 --clear-groups \
			"$PN" run --precise -- ./capd) >"$TMP/cap.out" 2>"$TMP/cap.err"
		check "a setcap program run by another user still runs" test $? -eq 0
		check "... and is reported, in one line ($(cat "$TMP/cap.err"))" \
			sh -c 'grep -q "capabilit" "$1" && test "$(wc -l <"$1")" -eq 1' sh "$TMP/cap.err"
		check "... where the loader did drop LD_PRELOAD" \
			sh -c '! grep -q "^LD_PRELOAD=" "$1"' sh "$TMP/cap.out"
		"$PN" run --precise -- "$TMP/caps/capd" >"$TMP/caproot.out" 2>"$TMP/caproot.err"
		check "run by root: not reported ($(head -c 200 "$TMP/caproot.err"))" \
			sh -c '! grep -q "capabilit" "$1"' sh "$TMP/caproot.err"
		check "... and the shim reaches it" \
			grep -q '^LD_PRELOAD=.*libpunctual-preload\.so' "$TMP/caproot.out"
	fi
fi

usage_error "is not a duration" run --precise=abc -- /bin/true
usage_error "is not a duration" run --precise=-1us -- /bin/true
usage_error "nothing to do" run -- /bin/true
usage_error "missing the command" run --precise

finish
