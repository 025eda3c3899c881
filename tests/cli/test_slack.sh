#!/bin/bash
# SPDX-License-Identifier: MIT
# test_slack.sh: `punctual slack`: this process's slack, another process's (read back
# from /proc/PID/timerslack_ns), every thread of a multithreaded process, setting one
# thread or all of them with units and 'default', valid JSON, and bad input: exit 2 with
# one line and nothing on stdout, the target left unchanged.
. "$(dirname "$0")/lib.sh"
skip_emulated "/proc names the process after the emulator (qemu-aarch64-st), not punctual"

BG=""
cleanup() {
	for p in $BG; do kill "$p" 2>/dev/null; done
	rm -rf "$TMP"
}
trap cleanup EXIT

slack_of() { cat "/proc/$1/timerslack_ns"; }
# Debian's python3 for the targets: a pyenv shim in PATH is a shell script, whose PID is
# not the interpreter's and outlives a kill with it holding the test's output open
py=python3
[ -x /usr/bin/python3 ] && py=/usr/bin/python3

# ---- this process ----------------------------------------------------------------------
ok slack
check "own slack as text" grep -Eq '^pid [0-9]+ \(punctual\): timer slack [0-9]+ ns' "$OUT"
ok slack --json
json_ok "$OUT"
jq_check "own slack as JSON" '.command == "slack" and .comm == "punctual" and .slack_ns >= 0
	and .set_ns == null and .all_threads == false and (.threads | length == 1)
	and .threads[0].tid == .pid' "$OUT"
ok slack --threads --json
json_ok "$OUT"
jq_check "own threads: one" '.all_threads and (.threads | length == 1)' "$OUT"
ok slack --help
check "--help has usage" grep -q '^usage: punctual slack' "$OUT"
ok slack -h
check "-h has usage" grep -q '^usage: punctual slack' "$OUT"
ok slack -j -t
jq_check "-j -t: own threads as JSON" \
	'.command == "slack" and .all_threads and (.threads | length == 1)' "$OUT"

# ---- another process -------------------------------------------------------------------
# Targets live until cleanup kills them, however slow the machine.
sleep infinity &
S=$!
BG="$BG $S"
# Another process's slack, even one's own child's, needs CAP_SYS_NICE.
if orig=$(slack_of "$S" 2>/dev/null); then
	NICE=1
else
	NICE=0
	skip "reading and setting another process need CAP_SYS_NICE"
	usage_error "CAP_SYS_NICE" slack -p "$S"
	usage_error "CAP_SYS_NICE" slack -p "$S" 1ns
	usage_error "CAP_SYS_NICE" slack -p "$S" --threads
fi

if [ "$NICE" -eq 1 ]; then
	ok slack -p "$S"
	check "text names pid, comm and the kernel's value" \
		grep -q "^pid $S (sleep): timer slack $orig ns" "$OUT"
	ok slack --json -p "$S"
	json_ok "$OUT"
	jq_check "JSON matches /proc/$S/timerslack_ns" --argjson p "$S" --argjson v "$orig" \
		'.pid == $p and .comm == "sleep" and .slack_ns == $v and .set_ns == null
		and .threads == [{"tid": $p, "comm": "sleep", "slack_ns": $v}]' "$OUT"

	# the long option, in both forms, with the short ones
	ok slack --pid "$S"
	check "--pid: as -p" grep -q "^pid $S (sleep): timer slack $orig ns" "$OUT"
	ok slack --pid="$S" -j -t
	jq_check "--pid=PID -j -t: every thread as JSON" --argjson p "$S" --argjson v "$orig" \
		'.pid == $p and .all_threads
		and .threads == [{"tid": $p, "comm": "sleep", "slack_ns": $v}]' "$OUT"
	ok slack --pid "$S" 4321ns
	check "--pid PID VALUE sets it" test "$RC" -eq 0 -a "$(slack_of "$S")" = 4321

	ok slack -p "$S" 1234ns
	check "set 1234: the kernel has it" test "$(slack_of "$S")" = 1234
	check "set 1234: printed read back" grep -q "^pid $S (sleep): timer slack 1234 ns" "$OUT"
	for pair in 1ns:1 10ns:10 50us:50000 1.5us:1500 1ms:1000000 2s:2000000000; do
		ok slack -p "$S" "${pair%%:*}"
		check "set ${pair%%:*}: /proc says ${pair#*:}" \
			test "$RC" -eq 0 -a "$(slack_of "$S")" = "${pair#*:}"
	done
	ok slack -p "$S" --json 2us
	json_ok "$OUT"
	jq_check "set with --json: value read back" '.slack_ns == 2000 and .set_ns == 2000
		and .threads[0].slack_ns == 2000' "$OUT"
	ok slack -p "$S" default
	check "'default' restores the value it started with" \
		test "$RC" -eq 0 -a "$(slack_of "$S")" = "$orig"
	ok slack -p "$S" 77ns
	ok slack -p "$S" --json 0
	check "0 restores the default" test "$RC" -eq 0 -a "$(slack_of "$S")" = "$orig"
	jq_check "0 reported as set_ns 0" --argjson v "$orig" \
		'.set_ns == 0 and .slack_ns == $v' "$OUT"

	# ---- every thread of a multithreaded process ---------------------------------------
	# up to 60 s for its threads on a loaded machine
	"$py" -c 'import threading
for _ in range(3): threading.Thread(target=threading.Event().wait).start()' &
	PY=$!
	BG="$BG $PY"
	for _ in $(seq 1 1200); do
		[ "$(ls "/proc/$PY/task" 2>/dev/null | wc -l)" -ge 4 ] && break
		sleep 0.05
	done
	tasks=$(ls "/proc/$PY/task" | sort -n | tr '\n' ' ')
	check "the target has 4 threads ($tasks)" test "$(echo $tasks | wc -w)" -eq 4
	pyorig=$(slack_of "$PY")

	ok slack -p "$PY" --threads --json
	json_ok "$OUT"
	check "--threads lists every tid of /proc/$PY/task" \
		test "$(jq -r '.threads[].tid' "$OUT" | sort -n | tr '\n' ' ')" = "$tasks"
	jq_check "--threads: names and values" '.all_threads and
		all(.threads[]; (.comm | length > 0) and .slack_ns >= 0)' "$OUT"
	for t in $tasks; do
		jq_check "--threads: tid $t's value is /proc/$t's" --argjson t "$t" \
			--argjson v "$(slack_of "$t")" \
			'any(.threads[]; .tid == $t and .slack_ns == $v)' "$OUT"
	done
	ok slack -p "$PY" --threads
	check "text: a line per thread after the two header lines" \
		test "$(wc -l <"$OUT")" -eq 6
	for t in $tasks; do
		check "text: tid $t listed" grep -Eq "^ *$t  " "$OUT"
	done

	ok slack -p "$PY" --threads 4321ns
	for t in $tasks; do
		check "set --threads: tid $t has 4321" test "$(slack_of "$t")" = 4321
	done
	check "set --threads: every line shows 4321" \
		test "$(grep -c ' 4321  (' "$OUT")" -eq 4
	ok slack -p "$PY" 777ns
	check "set without --threads: the main thread has 777" test "$(slack_of "$PY")" = 777
	TID=$PY # a target whose threads never came: the checks above said so
	for t in $tasks; do
		[ "$t" = "$PY" ] && continue
		check "set without --threads: tid $t kept 4321" test "$(slack_of "$t")" = 4321
		TID=$t
	done
	ok slack -p "$TID" --json
	jq_check "a thread id works as -p" --argjson t "$TID" \
		'.pid == $t and .slack_ns == 4321' "$OUT"
	ok slack -p "$PY" --threads default
	for t in $tasks; do
		check "reset --threads: tid $t back to $pyorig" \
			test "$RC" -eq 0 -a "$(slack_of "$t")" = "$pyorig"
	done

	# a name with a newline, a C1 control (U+009B, a CSI) and bytes that are not UTF-8:
	# still one line, still JSON, inert on a terminal
	"$py" -c 'import ctypes, signal
ctypes.CDLL(None).prctl(15, b"x\ny\xffz\xc2\x9b\xe2\x82", 0, 0, 0); signal.pause()' &
	ODD=$!
	BG="$BG $ODD"
	for _ in $(seq 1 200); do
		grep -q '^x' "/proc/$ODD/comm" 2>/dev/null && break
		sleep 0.05
	done
	ok slack -p "$ODD" --threads --json
	json_ok "$OUT"
	jq_check "odd name cleaned" '.comm == "x?y?z????" and .threads[0].comm == "x?y?z????"' \
		"$OUT"
	ok slack -p "$ODD" --threads
	check "odd name: one line for the thread" test "$(wc -l <"$OUT")" -eq 3
fi # NICE

# ---- bad input: exit 2, one line, nothing on stdout, nothing changed ---------------------
[ "$NICE" -eq 1 ] && ok slack -p "$S" 4444ns
true &
DEAD=$!
wait "$DEAD"
usage_error "is not a number" slack -p abc
usage_error "is not a number" slack -p 12abc
usage_error "out of range" slack -p 0
usage_error "out of range" slack -p -5
usage_error "no process $DEAD" slack -p "$DEAD"
usage_error "no process $DEAD" slack -p "$DEAD" 1000ns
usage_error "no process $DEAD" slack -p "$DEAD" --threads
usage_error "must not be negative" slack -p "$S" -5
usage_error "must not be negative" slack -p "$S" -1ms
usage_error "is not a duration" slack -p "$S" -- -5
for bad in 5x 1.5parsecs ms "" 1e3 0x10 " 5" defaults; do
	usage_error "is not a duration" slack -p "$S" "$bad"
done
usage_error "too large" slack -p "$S" 99999999999999999999
usage_error "unknown option '--bogus'" slack --bogus
usage_error "unknown option '-x'" slack -p "$S" -x
usage_error "needs a value" slack -p
usage_error "unexpected argument '2'" slack -p "$S" 1ns 2
usage_error "punctual run --slack" slack 1234ns
usage_error "needs -p PID" slack --threads 1234ns
[ "$NICE" -eq 1 ] && check "bad input left the target unchanged" test "$(slack_of "$S")" = 4444

# ---- without CAP_SYS_NICE --------------------------------------------------------------
nobody() {
	run_cmd setpriv --reuid=65534 --regid=65534 --clear-groups "$PN" "$@"
	check "as nobody, '$*': exit 2 (got $RC)" test "$RC" -eq 2
	check "as nobody, '$*': one line naming CAP_SYS_NICE" \
		test "$(wc -l <"$ERR")" -eq 1 -a -n "$(grep CAP_SYS_NICE "$ERR")"
	check "as nobody, '$*': nothing on stdout" test "$RC" -eq 2 -a ! -s "$OUT"
}
if [ "$(id -u)" -eq 0 ] && [ "$NICE" -eq 1 ] && command -v setpriv >/dev/null; then
	nobody slack -p 1
	nobody slack -p "$S"
	nobody slack -p "$S" 1ns
	nobody slack -p "$PY" --threads 1ns
	check "a refused set changed nothing" test "$(slack_of "$S")" = 4444
	# its own slack needs no privilege
	setpriv --reuid=65534 --regid=65534 --clear-groups "$PN" slack >"$TMP/out" 2>&1
	check "as nobody, own slack readable" test $? -eq 0
elif [ "$NICE" -eq 0 ]; then
	usage_error "CAP_SYS_NICE" slack -p 1
fi

# a long option given a value names itself (issue 15)
usage_error "option '--threads' takes no value" slack --threads=1

# a slack that is not a whole number of ns is refused, not rounded to 0 (the default),
# and the target keeps its slack (issue 15)
if [ -r "/proc/$S/timerslack_ns" ]; then
	before=$(slack_of "$S")
	usage_error "is not a whole number of ns" slack -p "$S" 0.5ns
	usage_error "needs a unit" slack -p "$S" 10
	usage_error "is not a whole number of ns" slack -p "$S" 1.0005us
	check "a refused fraction changed nothing" test "$RC" -eq 2 -a "$(slack_of "$S")" = "$before"
fi

finish
