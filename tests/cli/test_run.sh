#!/bin/bash
# SPDX-License-Identifier: MIT
# test_run.sh: `punctual run --slack VALUE CMD`: the command, its threads and its children
# run with the slack; the exit status is the command's (127 not found, 126 not runnable,
# like env(1)); options stop at CMD; --precise finds its shim through PUNCTUAL_PRELOAD;
# bad input exits 2 with one line, nothing on stdout.
. "$(dirname "$0")/lib.sh"
skip_emulated "the commands it runs are the host's x86_64 programs, which cannot load the aarch64 shim"

# out_is EXPECTED ARGS...: exit 0 and stdout exactly EXPECTED.
out_is() {
	want=$1
	shift
	run "$@"
	if [ "$RC" -ne 0 ]; then
		fail "'$*': exit $RC: $(cat "$ERR")"
	elif [ "$(cat "$OUT")" != "$want" ]; then
		fail "'$*': printed '$(head -c 200 "$OUT")', expected '$want'"
	else
		pass
	fi
}

# exit_is STATUS PATTERN ARGS...: exit STATUS, one line on stderr matching PATTERN (none
# when PATTERN is empty), nothing on stdout.
exit_is() {
	st=$1 pat=$2
	shift 2
	run "$@"
	if [ "$RC" -ne "$st" ]; then
		fail "'$*': exit $RC, expected $st: $(cat "$ERR")"
	elif [ -s "$OUT" ]; then
		fail "'$*': printed on stdout: $(head -c 200 "$OUT")"
	elif [ -n "$pat" ] && { [ "$(wc -l <"$ERR")" -ne 1 ] || ! grep -q -- "$pat" "$ERR"; }; then
		fail "'$*': stderr '$(cat "$ERR")', expected one line with '$pat'"
	elif [ -z "$pat" ] && [ -s "$ERR" ]; then
		fail "'$*': stderr '$(cat "$ERR")', expected nothing"
	else
		pass
	fi
}

SELF=/proc/self/timerslack_ns
out_is 1 run --slack 1ns -- cat "$SELF"
out_is 1 run --slack 1ns cat "$SELF"
out_is 50000 run --slack 50us -- cat "$SELF"
out_is 1000000 run --slack 1ms cat "$SELF"
out_is 1500 run --slack 1.5us cat "$SELF"
out_is 7 run --slack 7ns cat "$SELF"
out_is 123 run -s 123ns cat "$SELF"
out_is 2 run --slack=2ns cat "$SELF"
out_is 9 run --slack 5ns --slack 9ns cat "$SELF"
# 0 and 'default': the default this process inherited, what a plain child has
def=$(cat "$SELF")
out_is "$def" run --slack 0 cat "$SELF"
out_is "$def" run --slack default cat "$SELF"
# ... also from a parent whose slack is not that default (exec keeps both): a no-op
# would leave the parent's
other=$((def == 777 ? 778 : 777))
out_is "$def" run --slack "${other}ns" "$PN" run --slack 0 cat "$SELF"
out_is "$def" run --slack "${other}ns" "$PN" run --slack default cat "$SELF"
# inherited by the command's children and threads
out_is 3 run --slack 3ns sh -c "cat $SELF"
out_is 4 run --slack 4ns python3 -c 'import threading
def f():
	print(open("/proc/%d/timerslack_ns" % threading.get_native_id()).read().strip())
t = threading.Thread(target=f)
t.start()
t.join()'

# options stop at CMD; what follows is CMD's
out_is "--slack 5ns -x --help" run --slack 1ns echo --slack 5ns -x --help
out_is "-- -n" run --slack 1ns -- echo -- -n
# stdin and stdout are the command's
OUT=$TMP/out
echo hello | "$PN" run --slack 1ns cat >"$OUT" 2>"$TMP/err"
check "stdin passes through" test "$(cat "$OUT")" = hello

# the exit status is the command's
exit_is 0 "" run --slack 1ns true
exit_is 1 "" run --slack 1ns false
exit_is 7 "" run --slack 1ns sh -c 'exit 7'
exit_is 255 "" run --slack 1ns sh -c 'exit 255'
# killed by a signal: the command's own death (waited for in the background, so that
# the shell prints no "Terminated" note)
"$PN" run --slack 1ns sh -c 'kill -TERM $$' >"$TMP/out" 2>"$TMP/err" &
wait $!
rc=$?
check "a command killed by SIGTERM: status 128+15 (got $rc)" test "$rc" -eq 143

# env(1)'s statuses when CMD cannot be run (a PATH with no directory we may not search:
# execvp reports EACCES, 126, when it met one)
PATH=/usr/bin:/bin exit_is 127 "^punctual run: no-such-command-here: No such file or directory$" \
	run --slack 1ns no-such-command-here
exit_is 127 "^punctual run: $TMP/missing: No such file or directory$" \
	run --slack 1ns "$TMP/missing" arg
printf '#!/bin/sh\necho hi\n' >"$TMP/noexec"
chmod 644 "$TMP/noexec"
exit_is 126 "^punctual run: $TMP/noexec: Permission denied$" run --slack 1ns "$TMP/noexec"
exit_is 126 "^punctual run: $TMP: Permission denied$" run --slack 1ns "$TMP"

# --precise takes the shim from a non-empty $PUNCTUAL_PRELOAD (a copy, where it would
# not look otherwise), and fails with one line, status 1, when that cannot be read; an
# empty one is unset (the shim beside the binary). A sanitized shim is preloaded into
# unsanitized commands: its runtime cannot come first.
SHIM=$(realpath "$(dirname "$PN")/libpunctual-preload.so")
cp "$SHIM" "$TMP/copy-preload.so"
A=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0
ASAN_OPTIONS=$A PUNCTUAL_PRELOAD=$TMP/copy-preload.so \
	out_is "$TMP/copy-preload.so" run --precise -- sh -c 'echo "$LD_PRELOAD"'
ASAN_OPTIONS=$A PUNCTUAL_PRELOAD= out_is "$SHIM" run --precise -- sh -c 'echo "$LD_PRELOAD"'
PUNCTUAL_PRELOAD=$TMP/missing.so exit_is 1 "libpunctual-preload.so not found" \
	run --precise -- true

# bad input
exit_is 2 "nothing to do" run cat "$SELF"
exit_is 2 "nothing to do" run -- cat "$SELF"
exit_is 2 "missing the command" run --slack 1ns
exit_is 2 "missing the command" run --slack 1ns --
exit_is 2 "needs a value" run --slack
for bad in -5 -1ms 5x 1.5parsecs "" ms 1e3 0x10 defaults; do
	exit_is 2 "is not a duration" run --slack "$bad" cat "$SELF"
done
exit_is 2 "too large" run --slack 99999999999999999999ns cat "$SELF"
exit_is 2 "unknown option '--bogus'" run --slack 1ns --bogus cat "$SELF"
exit_is 2 "unknown option '-x'" run -x --slack 1ns cat "$SELF"
exit_is 2 "try 'punctual run --help'" run --nope

# --budget and --slice: passed on to the shim (PUNCTUAL_BUDGET, PUNCTUAL_SLICE) in their
# checked form; bad values and either without --precise exit 2 with one line
ASAN_OPTIONS=$A out_is "auto 250us" run --precise --budget=auto --slice=250us -- \
	sh -c 'echo "$PUNCTUAL_BUDGET $PUNCTUAL_SLICE"'
ASAN_OPTIONS=$A out_is "10.0000% off" run --precise --budget=10 --slice=off -- \
	sh -c 'echo "$PUNCTUAL_BUDGET $PUNCTUAL_SLICE"'
for bad in 101% -1% x% ""; do
	exit_is 2 "^punctual run: --budget: " run --precise --budget="$bad" -- true
done
for bad in 10us 1s 250 fast ""; do
	exit_is 2 "^punctual run: --slice: " run --precise --slice="$bad" -- true
done
exit_is 2 "--budget needs --precise" run --budget=10% -- true
# --slice alone: CMD's own slice (chrt -o -T), a duration; auto and off are the shim's
exit_is 2 "--slice=auto needs --precise" run --slice=auto -- true
exit_is 2 "--slice=off needs --precise" run --slice=off -- true
exit_is 2 "^punctual run: --slice: 10us is out of" run --slice=10us -- true
run run --slice=1ms -- true
policy=$(chrt -p $$ 2>/dev/null | sed -n 's/.*current scheduling policy: //p')
if [ "$RC" -eq 1 ] && grep -q "does not keep a slice" "$ERR"; then
	skip "--slice alone: $(cat "$ERR")"
elif [ "$policy" != SCHED_OTHER ] && [ "$policy" != SCHED_BATCH ]; then
	check "--slice alone under ${policy:-another policy}: exit 2, one line ($RC: $(cat "$ERR"))" \
		test "$RC" -eq 2 -a "$(wc -l <"$ERR")" -eq 1
	skip "--slice alone: the suite runs under ${policy:-another policy} (chrt), and a slice" \
		"is SCHED_OTHER's or SCHED_BATCH's"
elif [ ! -r /proc/self/sched ]; then
	skip "--slice alone: no /proc/self/sched to read a slice from"
else
	check "--slice=1ms alone runs CMD (exit $RC: $(cat "$ERR"))" test "$RC" -eq 0
	slice='awk "/^se.slice/ {print \$3}" /proc/$$/sched'
	out_is 1000000 run --slice=1ms -- sh -c "$slice"
	out_is "250000 1" run --slice=250us --slack 1ns -- sh -c "echo \$($slice) \$(cat /proc/\$\$/timerslack_ns)"
	out_is 400000 run --slice=400us -- sh -c "sh -c '$slice'" # a child's, inherited
	# the shim sets PUNCTUAL_PROCESS_SLICE as it loads (tune UNIT's slice): the process's
	# and, inherited, its children's; malformed, auto or off: the slice as it was
	was=$(sh -c "$slice")
	run_cmd env ASAN_OPTIONS="$A" LD_PRELOAD="$SHIM" PUNCTUAL_PROCESS_SLICE=300us \
		sh -c "$slice; sh -c '$slice'"
	check "PUNCTUAL_PROCESS_SLICE=300us: the shim set it, a child inherited it ($(tr '\n' ' ' <"$OUT"))" \
		test "$(tr '\n' ' ' <"$OUT")" = "300000 300000 "
	for v in bogus auto off 10us; do
		run_cmd env ASAN_OPTIONS="$A" LD_PRELOAD="$SHIM" PUNCTUAL_PROCESS_SLICE=$v sh -c "$slice"
		check "PUNCTUAL_PROCESS_SLICE=$v: the slice as it was ($was: $(cat "$OUT"))" \
			test "$(cat "$OUT")" = "$was" -a "$RC" -eq 0
	done
	n=$(nice -n 7 "$PN" run --slice=1ms -- sh -c 'cut -d" " -f19 /proc/$$/stat' 2>&1)
	check "--slice keeps the nice value (nice 7: got '$n')" test "$n" = 7
	if command -v chrt >/dev/null && chrt -f 1 true 2>/dev/null; then
		chrt -f 1 "$PN" run --slice=1ms -- true >"$TMP/out" 2>"$TMP/err"
		rc=$?
		check "--slice under SCHED_FIFO: exit 2, one line (got $rc: $(cat "$TMP/err"))" \
			test "$rc" -eq 2 -a "$(wc -l <"$TMP/err")" -eq 1 -a ! -s "$TMP/out"
		check "... naming the policy" grep -q "SCHED_FIFO" "$TMP/err"
	else
		skip "--slice under SCHED_FIFO: chrt -f is not permitted here"
	fi
fi
# --stats names the slice the waits ran with: the one given where the kernel takes one
# (6.12+), else the kernel's own
ASAN_OPTIONS=$A run run --precise --stats --slice=2ms -- \
	python3 -c 'import time; [time.sleep(0.001) for i in range(20)]'
check "--slice=2ms: the stats line names a slice: $(tail -1 "$ERR")" grep -Eq '^  budget .*, slice (2 ms|the kernel.s)(;|$)' "$ERR"

# --stats alone measures the program as it is: its slack untouched, each timed wait against
# the deadline it asked for, waits an event ended counted apart; a line per thread even
# where the program closes stderr in an exit handler (coreutils' sleep)
ASAN_OPTIONS=$A run run --stats -- sh -c 'sleep 0.01; sleep 0.02; cat /proc/$$/timerslack_ns'
check "--stats alone: exit 0 ($RC: $(head -c 200 "$ERR"))" test "$RC" -eq 0
check "--stats alone: the slack as it was ($(cat "$OUT"))" test "$(cat "$OUT")" = "$(cat /proc/self/timerslack_ns)"
check "--stats alone: one line per sleep process, one wait each: $(tr '\n' ' ' <"$ERR")" \
	test "$(grep -c '^punctual: thread [0-9]*: 1 waits timed out, late p50 ' "$ERR")" -eq 2 &&
	test "$(grep -c "^  p99.9 .*; slack .* as made$" "$ERR")" -eq 2
ASAN_OPTIONS=$A run run --stats -- python3 -c '
import os, select, time
r, w = os.pipe()
os.write(w, b"x")
for i in range(5):
    select.select([r], [], [], 1)
for i in range(20):
    time.sleep(0.001)
print(open("/proc/self/timerslack_ns").read().strip())'
check "--stats alone, python: exit 0 ($RC: $(head -c 200 "$ERR"))" test "$RC" -eq 0
check "--stats alone, python: 20 timed out, 5 ended by their event: $(tail -1 "$ERR")" \
	grep -q ': 20 waits timed out, ' "$ERR" && grep -q '^  5 ended by their event, 0 past at the call$' "$ERR"
check "--stats alone, python: the slack as it was" test "$(cat "$OUT")" = "$(cat /proc/self/timerslack_ns)"

# --rt: SCHED_FIFO with reset-on-fork for each waiting thread, RLIMIT_RTTIME bounded; refused
# with one line where not permitted, and without --precise or out of range
exit_is 2 "--rt needs --precise" run --rt -- true
for bad in 0 100 x ""; do
	exit_is 2 "^punctual run: --rt" run --precise --rt="$bad" -- true
done
# (three sleeps: one whose deadline passed before the shim saw it, on a loaded machine,
# is no wait and takes no real time)
RTPROBE='import os, time, resource
for _ in range(3):
    time.sleep(0.02)
pid = os.fork()
if pid == 0:
    os._exit(os.sched_getscheduler(0))
child = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
print(os.sched_getscheduler(0) & 0xff, os.sched_getparam(0).sched_priority,
      resource.getrlimit(resource.RLIMIT_RTTIME)[0], child)'
if [ "$(id -u)" -eq 0 ]; then
	ASAN_OPTIONS=$A out_is "1 20 1000000 0" run --precise --rt=20 -- python3 -c "$RTPROBE"
	# a tighter RLIMIT_RTTIME of the caller's is kept
	ASAN_OPTIONS=$A run_cmd prlimit --rttime=50000:50000 "$PN" run --precise --rt -- \
		python3 -c "$RTPROBE"
	check "--rt keeps a tighter RLIMIT_RTTIME: $(cat "$OUT") $(cat "$ERR")" \
		test "$(cat "$OUT")" = "1 10 50000 0"
	if command -v setpriv >/dev/null; then
		run_cmd setpriv --reuid=65534 --regid=65534 --clear-groups "$PN" run --precise --rt \
			-- true
		check "--rt refused as nobody: exit $RC, $(cat "$ERR")" \
			test "$RC" -eq 2 -a "$(wc -l <"$ERR")" -eq 1 -a ! -s "$OUT"
		check "--rt refused as nobody says why" grep -q "SCHED_FIFO is not permitted" "$ERR"
	fi
fi

ok run --help
check "--help has usage" grep -q '^usage: punctual run \[--slack VALUE\] \[--precise' "$OUT"

# a slack that is not a whole number of ns is refused, not rounded to 0 (the default)
# (issue 15); a zero written any way is the default
for bad in 0.5ns 1.5ns 1.0005us 0.0000000015s; do
	exit_is 2 "is not a whole number of ns" run --slack "$bad" cat "$SELF"
done
out_is 1500 run --slack 1.500us cat "$SELF"
out_is "$def" run --slack 0.0 cat "$SELF"

# --precise from a directory whose path has a space or a colon, which the loader splits
# LD_PRELOAD at (issue 15): refused with one line, exit 1, not run without the shim; a
# PUNCTUAL_PRELOAD copy elsewhere works
SHIM=$(dirname "$PN")/libpunctual-preload.so
loaded='grep -q libpunctual-preload /proc/self/maps && echo loaded || echo "not loaded"'
if [ -r "$SHIM" ]; then
	out_is loaded run --precise sh -c "$loaded"
	for appdir in "$TMP/my apps" "$TMP/a:b"; do
		mkdir -p "$appdir"
		cp "$PN" "$SHIM" "$appdir/"
		"$appdir/punctual" run --precise sh -c "$loaded" >"$TMP/out" 2>"$TMP/err"
		rc=$?
		check "--precise from '$appdir': exit 1 (got $rc, printed '$(cat "$TMP/out")')" test "$rc" -eq 1
		check "... one line naming the spaces and colons" test "$(wc -l <"$TMP/err")" -eq 1 -a "$(grep -c 'spaces and colons' "$TMP/err")" -eq 1
		check "... and the command did not run" test "$rc" -eq 1 -a ! -s "$TMP/out"
		PUNCTUAL_PRELOAD=$SHIM "$appdir/punctual" run --precise sh -c "$loaded" >"$TMP/out" 2>"$TMP/err"
		check "... with PUNCTUAL_PRELOAD at a clean path the shim is loaded" test "$(cat "$TMP/out")" = loaded
	done
else
	skip "--precise from a path with a space: no $SHIM"
fi

finish
