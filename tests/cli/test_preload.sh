#!/bin/bash
# SPDX-License-Identifier: MIT
# test_preload.sh PUNCTUAL CALLS STATIC: `punctual run --precise`: a program using every
# interposed call behaves the same with and without libpunctual-preload.so (return
# values, errno, remaining times, mutex held), never early, and the shim was really in
# use; LD_PRELOAD is appended to; the exit status passes through; static and setuid
# programs are reported; bad input exits 2.
. "$(dirname "$0")/lib.sh"
CALLS=$2 STATIC=$3
# A sanitized CALLS has its runtime as a dependency; the preloaded shim comes before it.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"

"$CALLS" >"$TMP/plain.out" 2>"$TMP/plain.err"
check "the calls program runs without the shim, never early" test $? -eq 0
"$PN" run --precise -- "$CALLS" >"$TMP/shim.out" 2>"$TMP/shim.err"
rc=$?
check "the calls program runs under the shim, never early (status $rc: $(head -c 300 "$TMP/shim.err"))" test $rc -eq 0
check "same return values, errno and remaining times with and without the shim" \
	diff "$TMP/plain.out" "$TMP/shim.out"
check "the shim was loaded and made calls precise" grep -Eq '^shim: loaded, [1-9][0-9]* calls' "$TMP/shim.err"
check "no shim without --precise" grep -q '^shim: absent' "$TMP/plain.err"
"$PN" run --precise=1us --slack 1 -- "$CALLS" >"$TMP/shim1.out" 2>/dev/null
check "precision 1us with slack 1: same contract, never early" diff "$TMP/plain.out" "$TMP/shim1.out"
"$PN" run --precise=0 -- "$CALLS" >"$TMP/shim0.out" 2>/dev/null
check "precision 0: same contract, never early" diff "$TMP/plain.out" "$TMP/shim0.out"

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

usage_error "is not a duration" run --precise=abc -- /bin/true
usage_error "is not a duration" run --precise=-1us -- /bin/true
usage_error "nothing to set" run -- /bin/true
usage_error "missing the command" run --precise

finish
