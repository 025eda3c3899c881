#!/bin/bash
# SPDX-License-Identifier: MIT
# test_sleep.sh: `punctual sleep`: the matrix is valid JSON with every mechanism, interval
# and slack value and no early return; CSV; the seeds' ladders; --periodic with its
# cyclictest line; --fifo; bad input exits 2 with one line.
. "$(dirname "$0")/lib.sh"

MECHS="nanosleep clock_nanosleep clock_nanosleep_abs usleep select pselect poll ppoll epoll_wait
epoll_pwait2 timerfd_read timerfd_epoll futex sigtimedwait cond_timedwait io_uring spin syscall"

ok sleep --list
for m in $MECHS precise:PRECISION precise-poll:P precise-epoll:P; do
	check "--list names $m" grep -q "^$m " "$OUT"
done

# from a parent whose slack, 12345 ns, is none that the matrix sets: it must come back
ok run --slack 12345ns -- "$PN" sleep --json --duration 2s --slack 50us,1ns --interval 0,1us,100us
J=$OUT
json_ok "$J"
jq_check "every mechanism, pn_sleep_until at 1 us and 50 us, pn_poll_until and pn_epoll_wait_until at 1 us" '(.mechanisms | length) == 22 and ([.mechanisms[].id] | contains(["precise:1us", "precise:50us", "precise-poll:1us", "precise-epoll:1us"]))' "$J"
jq_check "one cell per mechanism x slack x interval" '(.cells | length) == (.mechanisms | length) * 2 * 3' "$J"
# (the cells' identities read once, each looked up: one jq, not one per cell)
declare -A CELL
if json_doc "$J"; then
	while read -r c; do
		CELL[$c]=1
	done < <(jq -r '.cells[] | "\(.mechanism) \(.slack_ns) \(.interval_ns)"' "$J")
fi
for m in $MECHS precise:1us precise:50us; do
	for s in 50000 1; do
		for i in 0 1000 100000; do
			check "cell $m slack $s interval $i" test -n "${CELL[$m $s $i]+set}"
		done
	done
done
jq_check "no early return anywhere" '.early_total == 0 and all(.cells[]; .early == null or .early == 0)' "$J"
jq_check "supported cells have samples and histograms that add up" \
	'all(.cells[] | select(.supported); .samples >= 1 and ([.duration_ns.histogram[][2]] | add) == .samples)' "$J"
jq_check "durations are at least the interval (never early)" \
	'all(.cells[] | select(.supported and .mechanism != "syscall"); .duration_ns.min >= .interval_ns)' "$J"
jq_check "unsupported mechanisms say why" \
	'all(.mechanisms[] | select(.supported | not); .unsupported_reason | length > 0)' "$J"
jq_check "the starting slack was recorded" '.slack_before_ns > 0' "$J"
jq_check "the slack was put back" '.slack_before_ns == 12345 and .slack_after_ns == 12345' "$J"

# --samples N: at most N per cell, at least one round; a budget that lets every cell
# reach N (the matrix then ends early)
ok sleep --json --samples 5 --duration 4s --slack 50us,1ns --interval 0,10us --mech nanosleep,poll
jq_check "--samples 5: 1 to 5 samples per cell, and 5 where the budget allowed" \
	'(.cells | length) == 8 and all(.cells[] | select(.supported); .samples >= 1 and .samples <= 5)
	and any(.cells[]; .samples == 5)' "$OUT"

ok sleep --csv --duration 300ms --slack 1ns --interval 0,10us --mech nanosleep,poll
check "csv header" grep -q '^mechanism,slack_ns,interval_ns,supported,samples,early' "$OUT"
check "csv rows: 2 mechanisms x 2 intervals" test "$(wc -l <"$OUT")" -eq 5

ok sleep --json --ladder jdk --mech syscall --duration 200ms
jq_check "jdk ladder: 0, 1 ns .. 1 s" '.intervals_ns == [0,1,10,100,1000,10000,100000,1000000,10000000,100000000,1000000000]' "$OUT"
ok sleep --json --ladder freebsd --mech syscall --duration 200ms
jq_check "freebsd ladder" '.intervals_ns == [1000,300000,3000000,30000000,300000000]' "$OUT"

ok sleep --json --duration 300ms --interval 0,10us,200us --mech precise:5us,precise:0,nanosleep
jq_check "--mech precise:PRECISION" '[.mechanisms[].id] == ["precise:5us","precise:0","nanosleep"] and .early_total == 0' "$OUT"
ok sleep --duration 300ms --interval 10us --mech nanosleep,syscall
check "table has the nanosleep row" grep -q '^nanosleep ' "$OUT"
check "table reports early returns" grep -q '^early returns: 0' "$OUT"
# a slack far past the budget: the budget is kept whatever the mechanism (a signal, a
# cond broadcast or a futex wake ends the sample in progress), the sample cut is counted
for m in nanosleep cond_timedwait futex sigtimedwait epoll_wait timerfd_read io_uring; do
	t0=$(date +%s%N)
	ok sleep --json --slack 1h --duration 300ms --interval 1ms --mech $m
	took=$((($(date +%s%N) - t0) / 1000000))
	check "$m: --slack 1h --duration 300ms ends near its budget (${took} ms)" test "$took" -lt 5000
	# (timerfd and io_uring timers take no slack here: their samples run as usual)
	jq_check "$m: a cut sample counted, or samples that took no slack; none early" \
		'(.cells[0].cut >= 1 or .cells[0].samples > 10 or (.cells[0].supported | not))
		and .cells[0].early == 0' "$OUT"
done

# --periodic: cyclictest's loop and summary line
ok sleep --periodic --interval 1ms --duration 300ms
check "cyclictest-style line" grep -Eq '^T: 0 \( *[0-9]+\) P: ?0 I:1000 C: *[0-9]+ Min: *[0-9]+ Act: *[0-9]+ Avg: *[0-9]+ Max: *[0-9]+' "$OUT"
ok sleep --periodic --interval 500us --duration 300ms --json
json_ok "$OUT"
jq_check "periodic JSON" '.cycles > 0 and .early == 0 and .missed_periods >= 0 and .interval_ns == 500000 and .latency_ns.count == .cycles' "$OUT"
# --periodic --slack V: the loop runs with that slack (read back), one value only
ok sleep --periodic --interval 1ms --duration 200ms --slack 7us --json
jq_check "--periodic --slack 7us: the loop's slack" '.slack_ns == 7000 and .cycles > 0 and .early == 0' "$OUT"
ok sleep --periodic --interval 1ms --duration 200ms --slack 3ns
check "--periodic --slack as text" grep -q 'slack 3 ns' "$OUT"

# --slice D: every measuring thread asks for that slice (recorded in --json and the text);
# without it, the kernel's own: slice_ns 0. A kernel before 6.12 refuses it in one line.
ok sleep --periodic --interval 1ms --duration 100ms --json
jq_check "--periodic without --slice: the kernel's" '.slice_ns == 0' "$OUT"
run sleep --periodic --interval 1ms --duration 100ms --threads 2 --slice 250us --json
if [ "$RC" -eq 2 ] && grep -q "keeps its own slice" "$ERR"; then
	pass
else
	check "--periodic --slice: exit $RC $(cat "$ERR")" test "$RC" -eq 0
	jq_check "--periodic --slice 250us: recorded, never early" '.slice_ns == 250000 and .early == 0' "$OUT"
	ok sleep --slice 100us --duration 300ms --interval 100us --mech nanosleep,precise:1us --json
	jq_check "--slice 100us: the matrix's" '.slice_ns == 100000 and .early_total == 0' "$OUT"
	ok sleep --slice 100us --duration 200ms --interval 100us --mech nanosleep
	check "--slice as text" grep -q 'slice 100 us' "$OUT"
fi

# SIGINT or SIGTERM ends --periodic as its duration would: the figures so far, said to be
# interrupted, exit 0 (as cyclictest); --duration 0 runs until then. The signal is sent
# once the tool catches it (SigCgt), not on a timer a loaded machine could beat.
interrupt INT sleep --periodic --duration 20s
check "--periodic, SIGINT: exit 0 ($RC: $(head -c 200 "$ERR"))" test "$RC" -eq 0
check "--periodic, SIGINT: its T: line" grep -q '^T: 0 ' "$OUT"
check "--periodic, SIGINT: said" grep -q '^interrupted by SIGINT after' "$OUT"
interrupt TERM sleep --periodic --duration 0 --threads 2 --json
check "--periodic --duration 0, SIGTERM: exit 0 ($RC)" test "$RC" -eq 0
jq_check "--duration 0 until SIGTERM: interrupted, every thread's cycles, never early" \
	'.interrupted == true and .duration_ns == 0 and .cycles > 0 and .early == 0' "$OUT"
ok sleep --periodic --duration 50ms --json
jq_check "--periodic to its end: not interrupted" '.interrupted == false' "$OUT"

# The matrix too: the cells measured until the signal, marked, exit 0; the timer slack put
# back; --csv's rows as measured, the mark on stderr. A second signal (0.5 s later) ends
# it at once, by that signal: a cond wait, which signals do not interrupt, holds the first.
interrupt INT sleep
check "matrix, SIGINT: exit 0 ($RC: $(head -c 200 "$ERR"))" test "$RC" -eq 0
check "matrix, SIGINT: said" grep -q '^interrupted by SIGINT after' "$OUT"
check "matrix, SIGINT: its table" grep -q '^interval 0 ' "$OUT"
interrupt INT sleep --json --interval 1ms,100ms
jq_check "matrix --json, SIGINT: interrupted, never early, slack put back" \
	'.interrupted == true and .early_total == 0 and .slack_after_ns == .slack_before_ns' "$OUT"
INTERRUPT_AFTER=1.5 interrupt TERM sleep --csv
check "matrix --csv, SIGTERM: exit 0 ($RC)" test "$RC" -eq 0
check "matrix --csv, SIGTERM: its header" grep -q '^mechanism,slack_ns,' "$OUT"
check "matrix --csv, SIGTERM: said on stderr" grep -q 'interrupted by SIGTERM after' "$ERR"
INTERRUPT_TWICE=1 interrupt INT sleep --mech cond_timedwait --interval 5s --duration 20s
check "matrix, a second SIGINT: ends by it at once ($RC)" test "$RC" -eq 130
ok sleep --json --interval 1ms --duration 100ms --mech nanosleep
jq_check "matrix to its end: not interrupted" '.interrupted == false' "$OUT"

# No figure from fewer than 100 sleeps: a 100 ms cell of a 1 s run shows its n and "-".
ok sleep --interval 100ms --duration 1s --mech nanosleep --slack 1ns
check "a cell of fewer than 100 sleeps: n, then no figure" \
	grep -Eq '^nanosleep +ns \| +[0-9] +- +- ' "$OUT"

if [ "$(id -u)" -eq 0 ]; then
	ok sleep --fifo 10 --cpu 0 --json --duration 200ms --interval 10us --mech nanosleep
	jq_check "SCHED_FIFO run" '.policy == "SCHED_FIFO" and .priority == 10 and .cpu == 0 and .early_total == 0' "$OUT"
	if [ -e /dev/cpu_dma_latency ]; then
		ok sleep --periodic --dma-latency 0 --duration 200ms --json
		jq_check "--dma-latency recorded" '.dma_latency_us == 0' "$OUT"
		# --periodic holds 0 by default where permitted, as cyclictest does
		ok sleep --periodic --duration 100ms --json
		jq_check "--periodic: cpu_dma_latency 0 by default" '.dma_latency_us == 0 and .dma_latency_note == null' "$OUT"
		ok sleep --periodic --duration 100ms --dma-latency off
		check "--dma-latency off: said in the summary" grep -q 'cpu_dma_latency off$' "$OUT"
		if command -v setpriv >/dev/null; then
			run_cmd setpriv --reuid=65534 --regid=65534 --clear-groups "$PN" sleep --periodic --duration 100ms --json
			check "--periodic unprivileged: runs without it ($RC)" test "$RC" -eq 0
			jq_check "--periodic unprivileged: not held, and why" '.dma_latency_us == -1 and (.dma_latency_note | startswith("not permitted"))' "$OUT"
		fi
	fi
	if command -v setpriv >/dev/null; then
		setpriv --reuid=65534 --regid=65534 --clear-groups "$PN" sleep --fifo 10 --duration 100ms >"$TMP/o" 2>"$TMP/e"
		check "--fifo unprivileged exits 2" test $? -eq 2
		check "--fifo unprivileged: one line" test "$(wc -l <"$TMP/e")" -eq 1
	fi
fi

usage_error "unknown mechanism 'bogus'" sleep --mech bogus
usage_error "unknown mechanism 'bogus'" sleep --mech nanosleep,bogus
usage_error "is not a duration" sleep --mech precise:abc
usage_error "is not a duration" sleep --mech precise:-1us
usage_error "is not a duration" sleep --interval abc
usage_error "is not a duration" sleep --interval -1us
usage_error "is not a duration" sleep --interval 1us,,x
usage_error "over 10s" sleep --interval 11s
usage_error "too large" sleep --interval 99999999999999999999
usage_error "is not a duration" sleep --slack fast
usage_error "is not a duration" sleep --slack -50us
usage_error "give it in ns" sleep --slack 0
usage_error "unknown ladder" sleep --ladder foo
usage_error "out of range" sleep --samples 0
usage_error "is not a number" sleep --samples ten
usage_error "out of range" sleep --fifo 0
usage_error "out of the kernel's range" sleep --slice 50us
usage_error "out of the kernel's range" sleep --slice 1s
usage_error "not a duration" sleep --slice auto
usage_error "not a duration" sleep --slice fast
usage_error "excludes --fifo" sleep --slice 1ms --fifo 5
usage_error "out of range" sleep --fifo 100
usage_error "out of range" sleep --cpu 99999
usage_error "exclude each other" sleep --json --csv
usage_error "one --interval" sleep --periodic --interval 1ms,2ms
usage_error "one --slack value" sleep --periodic --slack 1us,2us
usage_error "must be positive" sleep --periodic --interval 0
usage_error "no --csv or --mech" sleep --periodic --mech nanosleep
usage_error "needs --periodic" sleep --duration 0
usage_error "out of range" sleep --periodic --duration 0.5ms
usage_error "not a duration" sleep --dma-latency -1
usage_error "not a whole number of us" sleep --dma-latency 1.5us
usage_error "needs a value" sleep --interval
usage_error "unexpected argument" sleep now

# a long option given a value names itself, in full even when abbreviated (issue 15)
usage_error "option '--list' takes no value" sleep --list=1
usage_error "option '--list' takes no value" sleep --li=1

# --list to a full device is exit 1 and one line (issue 15)
"$PN" sleep --list >/dev/full 2>"$TMP/full.err"
rc=$?
check "sleep --list >/dev/full exits 1 (got $rc)" test "$rc" -eq 1
check "sleep --list >/dev/full: one line on stderr" test "$(wc -l <"$TMP/full.err")" -eq 1

# one rule for slack values everywhere: a fraction of a ns is refused (issue 15)
usage_error "is not a whole number of ns" sleep --slack 0.5ns
usage_error "is not a whole number of ns" sleep --slack 1ns,1.5ns

finish
