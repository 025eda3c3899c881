#!/bin/bash
# SPDX-License-Identifier: MIT
# test_run_stats.sh: `punctual run --stats` measures a program's waits: every timed wait
# counted (the first and the last included), the slack untouched; --explain names causes
# from the documented set; --runs runs it N times, reports each run and the spread, and
# exits with the first failing run's status; bad input exits 2 with one line. Under TSan
# (threads_only): the counts, of one thread and of three.
. "$(dirname "$0")/lib.sh"
skip_emulated "the commands it runs are the host's x86_64 programs, which cannot load the aarch64 shim"
COUNT=${2:?usage: $0 PUNCTUAL WAITS_COUNT}
A=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0
export ASAN_OPTIONS=$A
CAUSES='throttled|preempted|migrated|slack|wakeup'

# usage_error is lib.sh's: exit 2, one line, nothing on stdout
if ! threads_only; then
	usage_error "--runs: 0 is out of range" run --stats --runs 0 -- true
	usage_error "--runs: " run --stats --runs x -- true
	usage_error "--runs needs --stats" run --runs 2 -- true
	usage_error "--explain needs --stats" run --explain -- true
	usage_error "--explain: " run --stats --explain=0 -- true
	usage_error "--explain: " run --stats --explain=5x -- true
fi

# each of 1000 timed waits counted, whatever the call (issue 41: 999 once)
for call in usleep nanosleep clock_nanosleep poll epoll_wait; do
	run run --stats -- "$COUNT" "$call" 1000
	check "$call: exit 0 ($RC: $(head -c 200 "$ERR"))" test "$RC" -eq 0
	check "$call: 1000 waits counted: $(cat "$ERR")" \
		grep -q '^punctual: thread [0-9]*: 1000 waits timed out, ' "$ERR"
done
# per thread: three threads, 200 each, three lines
run run --stats -- "$COUNT" usleep 200 3
check "three threads: three lines of 200: $(cat "$ERR")" \
	test "$(grep -c '^punctual: thread [0-9]*: 200 waits timed out, ' "$ERR")" -eq 3

if threads_only; then # the rest: one thread a program, or the tool's own
	finish
	exit $?
fi

# --explain: the slack untouched, a table whose causes are the documented ones, whose
# counts add up to its header's
run run --stats --explain=1ns -- sh -c "$COUNT usleep 200; cat /proc/\$\$/timerslack_ns"
check "--explain: exit 0 ($RC)" test "$RC" -eq 0
check "--explain: the slack as it was" test "$(cat "$OUT")" = "$(cat /proc/self/timerslack_ns)"
check "--explain=1ns: a table: $(cat "$ERR")" grep -q '^  [0-9]* waits later than 1 ns, why:$' "$ERR"
check "--explain: only documented causes" \
	test "$(grep -c '^    ' "$ERR")" -eq "$(grep -Ec "^    ($CAUSES) +[0-9]+ +[0-9.]+%  max " "$ERR")"
total=$(sed -n 's/^  \([0-9]*\) waits later than.*/\1/p' "$ERR")
sum=$(awk '/^    / {s += $2} END {print s + 0}' "$ERR")
check "--explain: the causes add up ($sum of $total)" test "${total:-x}" = "$sum"
run run --stats --precise --explain -- "$COUNT" usleep 200
check "--precise --explain: exit 0 ($RC: $(head -c 300 "$ERR"))" test "$RC" -eq 0
# (the report breaks a line before an item that would pass 80 columns, as a loaded
# machine's "not saved: p50 786.4 us -> 393.2 us, p99 10.5 ms -> 12.6 ms" does: its lines
# are read joined)
joined=$(tr '\n' ' ' <"$ERR")
check "--precise --stats: the lateness saved and the CPU spun: $(cat "$ERR")" \
	grep -Eq '(^| )((not )?saved: p50 .* -> .*, +p99 .* -> .* +\(kernel -> precise\)|no spin: the kernel woke each wait \(p50 .*, +p99 .*\))' <<<"$joined"
check "--precise --stats: the CPU spun" grep -Eq '(^| )p99\.9 .*; +spin [^,]*, [0-9.]+% of ' <<<"$joined"
check "--precise --explain: only documented causes" \
	test "$(grep -c '^    ' "$ERR")" -eq "$(grep -Ec "^    ($CAUSES) " "$ERR")"
# without --explain: no table
run run --stats -- "$COUNT" usleep 50
check "no --explain, no table" test "$(grep -c 'why:' "$ERR")" -eq 0

# the run lines of $ERR, each joined with its continued lines; then "widest W", the widest
# of those lines
runs_text() {
	awk '/^punctual: run / {if (b != "") print b; b = $0; w = length > w ? length : w; next}
	     /^  / && b != "" {b = b " " substr($0, 3); w = length > w ? length : w; next}
	     {if (b != "") print b; b = ""} END {if (b != "") print b; print "widest " w + 0}' "$ERR"
}
# --runs: a line per run, the spread, the counts exact; the records file removed
TMPDIR=$TMP run run --stats --runs 3 -- "$COUNT" poll 100 2
check "--runs 3: exit 0 ($RC)" test "$RC" -eq 0
check "--runs 3: three run lines of 200 waits: $(cat "$ERR")" \
	test "$(grep -Ec '^punctual: run [1-3]/3: 200 waits, late p50 ' "$ERR")" -eq 3
check "--runs 3: the spread" grep -q '^  waits          200.0 ± 0.0 ' "$ERR"
check "--runs 3: p50, p99, max" test "$(grep -Ec '^  late (p50|p99|max) ' "$ERR")" -eq 3
check "--runs: the records file is gone" test -z "$(ls "$TMP" | grep punctual-runs)"
check "--runs: within 80 columns" test "$(awk 'length > 80' "$ERR" | wc -l)" -eq 0
check "--runs: nothing on stdout" test ! -s "$OUT"
# a run's line is wrapped to COLUMNS (the widest: a long count, figures in ms, a status)
COLUMNS=40 run run --stats --runs 2 -- sh -c "$COUNT poll 100 2; exit 4"
check "--runs, COLUMNS=40: the run's lines within 40: $(runs_text)" \
	test "$(runs_text | sed -n 's/^widest //p')" -le 40
check "--runs, COLUMNS=40: every figure of the run: $(runs_text)" \
	grep -Eq '^punctual: run 1/2: 200 waits, late p50 [^,]+, p99 [^,]+, max [^,]+, exit 4$' \
	<(runs_text)
# a failing run stops the series with its status
run run --stats --runs 5 -- sh -c "$COUNT usleep 10; exit 3"
check "--runs: the failing run's status ($RC)" test "$RC" -eq 3
check "--runs: stopped at the first: $(cat "$ERR")" \
	test "$(runs_text | grep -c '^punctual: run 1/5: .*, exit 3$')" -eq 1 -a "$(grep -c '^punctual: run ' "$ERR")" -eq 1
# --explain over the runs: one table whose counts are the threads' tables' sums, cause by
# cause, after the spread (a threshold given, and --precise's P); none without --explain
sums() { # "sum" where the table over the runs is the threads' tables summed, given $1
	awk -v h1="$1" '$0 == "punctual: over the 2 runs, " $6 " waits later than " h1 ", why:" {o = 1; t = $6; next}
	$0 ~ "^  [0-9]+ waits later than " h1 ", why:$" {h += $1; next}
	/^    [a-z]+ / {if (o) s[$1] -= $2; else s[$1] += $2; n[$1]; next}
	END {bad = (t == "" || t != h); for (c in n) if (s[c]) bad = 1; print bad ? "differ" : "sum"}' "$ERR"
}
run run --stats --explain=1ns --runs 2 -- sh -c "$COUNT usleep 100; $COUNT nanosleep 50"
check "--runs --explain: exit 0 ($RC)" test "$RC" -eq 0
check "--runs --explain: the table over the runs sums the threads': $(cat "$ERR")" \
	test "$(sums '1 ns')" = sum
check "--runs --explain: documented causes only" \
	test "$(grep -c '^    ' "$ERR")" -eq "$(grep -Ec "^    ($CAUSES) +[0-9]+ +[0-9.]+%  max " "$ERR")"
run run --precise=2ns --stats --explain --runs 2 -- sh -c "$COUNT usleep 100; $COUNT poll 50"
check "--precise --runs --explain: the threads' tables summed: $(cat "$ERR")" \
	test "$(sums '2 ns')" = sum
run run --stats --runs 2 -- "$COUNT" usleep 20
check "--runs without --explain: no causes" test "$(grep -c 'over the\|why:' "$ERR")" -eq 0
run run --stats --runs 2 -- "$TMP/missing"
check "--runs: a command not found: 127 ($RC)" test "$RC" -eq 127
# children's waits count in the run (two processes)
run run --stats --runs 2 -- sh -c "$COUNT usleep 10; $COUNT nanosleep 15"
check "--runs: children's waits counted: $(cat "$ERR")" \
	test "$(grep -c '^punctual: run [12]/2: 25 waits, ' "$ERR")" -eq 2
# a timeout in whole ms (poll, epoll_wait) has its true deadline rounded away: no spin
for call in poll epoll_wait; do
	run run --precise --stats -- "$COUNT" $call 300
	check "--precise: $call's ms timeouts wait in the kernel, no spin: $(cat "$ERR")" \
		grep -Eq '; spin 0, 0\.0% of ' "$ERR"
done

# PUNCTUAL_STATS_FILE: the shim writes and maps only a regular file of its euid's that no
# one else may write, never through a link (another user's link in /tmp once grew a
# root-owned file by a page), else keeps no records and the program runs on as without
# the variable; a file that does not exist is created 0600.
# size FILE: its size in bytes.
size() { stat -c %s "$1"; }
sf() { # sf FILE ARGS...: run ARGS with PUNCTUAL_STATS_FILE=FILE, 60 s at most
	local f=$1
	shift
	run_cmd env PUNCTUAL_STATS_FILE="$f" timeout 60 "$PN" "$@"
}
sf "$TMP/new-records" run --precise --stats -- "$COUNT" usleep 10
check "a stats file that does not exist: exit 0 ($RC: $(head -c 200 "$ERR"))" test "$RC" -eq 0
check "... created 0600, the user's, with records" \
	test "$(stat -c '%a %u' "$TMP/new-records" 2>&1)" = "600 $(id -u)" -a \
	"$(size "$TMP/new-records" 2>/dev/null || echo 0)" -gt 0
: >"$TMP/open-records"
chmod 0666 "$TMP/open-records"
sf "$TMP/open-records" run --precise --stats -- "$COUNT" usleep 10
check "a stats file others may write: exit 0, no record in it ($RC)" \
	test "$RC" -eq 0 -a "$(size "$TMP/open-records")" -eq 0
mkfifo "$TMP/fifo-records"
sf "$TMP/fifo-records" run --stats -- "$COUNT" usleep 10
check "a FIFO as the stats file: the program runs to its end ($RC)" test "$RC" -eq 0
ln -s "$TMP/open-records" "$TMP/own-link"
chmod 0600 "$TMP/open-records"
sf "$TMP/own-link" run --stats -- "$COUNT" usleep 10
check "a link as the stats file: exit 0, not followed ($RC)" \
	test "$RC" -eq 0 -a "$(size "$TMP/open-records")" -eq 0
if [ "$(id -u)" -ne 0 ] || ! command -v setpriv >/dev/null; then
	skip "another user's link and file as the stats file: needs root and setpriv"
else
	# the issue's case: root runs with a path in a 1777 directory where nobody planted a link
	chmod 0755 "$TMP"
	mkdir -m 0755 "$TMP/x" && mkdir -m 1777 "$TMP/x/sf"
	: >"$TMP/x/victim" # empty: a whole number of pages, which the shim would append to
	cp "$TMP/x/victim" "$TMP/victim.was"
	setpriv --reuid=65534 --regid=65534 --clear-groups ln -s "$TMP/x/victim" "$TMP/x/sf/stats"
	sf "$TMP/x/sf/stats" run --precise --stats -- "$COUNT" usleep 10
	check "root, nobody's link to a root file: runs to its end ($RC: $(head -c 200 "$ERR"))" \
		test "$RC" -eq 0
	check "... and the root file is unchanged" cmp -s "$TMP/x/victim" "$TMP/victim.was"
	setpriv --reuid=65534 --regid=65534 --clear-groups touch "$TMP/x/sf/theirs"
	sf "$TMP/x/sf/theirs" run --precise --stats -- "$COUNT" usleep 10
	check "root, nobody's file: exit 0, never written (nobody could cut it under the mapping)" \
		test "$RC" -eq 0 -a "$(size "$TMP/x/sf/theirs")" -eq 0
fi

# A shared thread without real time (uid 65534, RLIMIT_RTPRIO 0, beside two hogs on its one
# CPU): the default waits as the program would alone on most waits and its plan on a share
# of them (src/wait/arms.c); a timeout in whole ms (poll, epoll_wait) always as the program
# would, through the program's own call. Every wait counted.
if [ "$(id -u)" -ne 0 ] || ! command -v setpriv >/dev/null || ! command -v prlimit >/dev/null; then
	skip "the comparison with the program's own calls: needs root, setpriv and prlimit"
else
	cpu=$(($(nproc) - 1))
	hogs=""
	trap 'kill $hogs 2>/dev/null; rm -rf "$TMP"' EXIT
	trap 'exit 130' INT TERM # through the EXIT trap: the hogs go also when ctest kills us
	for _ in 1 2; do
		taskset -c "$cpu" sh -c 'exec timeout 120 sh -c "while :; do :; done"' &
		hogs="$hogs $!"
	done
	nobody() {
		run_cmd "$@" taskset -c "$cpu" prlimit --rtprio=0 setpriv --reuid=65534 \
			--regid=65534 --clear-groups --inh-caps=-all "$PN" run --precise --stats -- \
			"$COUNT" "$call" 600
		joined=$(tr '\n' ' ' <"$ERR" | tr -s ' ')
		plan=$(echo "$joined" | sed -n 's/.* plan p99 [^(]*(\([0-9]*\) waits).*/\1/p')
		own=$(echo "$joined" | sed -n 's/.* as the program alone [^(]*(\([0-9]*\) waits).*/\1/p')
		rounded=$(echo "$joined" | sed -n 's/.* \([0-9]*\) waits in whole ms left to the.*/\1/p')
	}
	for call in epoll_wait poll nanosleep; do
		nobody
		check "$call unprivileged beside hogs: exit 0 ($RC: $(head -c 200 "$ERR"))" test "$RC" -eq 0
		check "$call: 600 waits counted: $(head -1 "$ERR")" \
			grep -q '^punctual: thread [0-9]*: 600 waits, ' "$ERR"
		check "$call: real time denied, said why" grep -q '^  real time denied (EPERM' "$ERR"
		if [ "$call" = nanosleep ]; then
			check "$call: both ways, plan ${plan:-none} + own ${own:-none} <= 600: $joined" \
				test "${plan:-0}" -gt 0 -a "${own:-0}" -gt 0 -a \
				"$((${plan:-0} + ${own:-0}))" -le 600
		else
			check "$call: whole ms, left to the program (${rounded:-none}), never compared: $joined" \
				test "${rounded:-0}" -gt 0 -a -z "$plan$own"
		fi
	done
	# the program's own way is its own call: epoll_wait itself, not the plan's epoll_pwait2
	call=epoll_wait
	if command -v strace >/dev/null; then
		# LeakSanitizer cannot run under ptrace
		nobody env ASAN_OPTIONS="$A:detect_leaks=0" strace -f -qq -e trace=epoll_wait \
			-o "$TMP/strace"
		if [ "$RC" -eq 0 ] && [ -s "$TMP/strace" ]; then
			calls=$(grep -c 'epoll_wait(.*, 1, 1)' "$TMP/strace")
			check "epoll_wait: the ${rounded:-no} waits left to the program are its $calls calls" \
				test "${rounded:-0}" -gt 0 -a "$calls" -ge "${rounded:-1}"
		else
			skip "the program's own calls: strace could not trace ($RC: $(head -c 200 "$ERR"))"
		fi
	else
		skip "the program's own calls: needs strace"
	fi
	# shellcheck disable=SC2086
	kill $hogs 2>/dev/null
	wait 2>/dev/null
	trap 'rm -rf "$TMP"' EXIT
	trap - INT TERM
fi

finish
