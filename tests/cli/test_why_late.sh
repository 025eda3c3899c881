#!/bin/bash
# SPDX-License-Identifier: MIT
# test_why_late.sh: `punctual sleep --periodic --explain` names the cause where it is forced
# (a real v1 cgroup with a 0.3-CPU quota and a busy loop: throttled, naming that cgroup; a
# busy loop on the sleeper's CPU at a better nice: preempted), and invents neither where
# nothing causes them; --smp/--threads/--affinity measure the threads they say; the
# --histogram file parses as cyclictest -h's does; --stop-above exits 3; bad input to every
# new option exits 2 with one line. Test cgroups (pn-late-*) are removed on any exit. Under
# TSan (threads_only): the threads' part alone.
. "$(dirname "$0")/lib.sh"

CG=/sys/fs/cgroup/cpu
TCG=""
HOG=""
cleanup() {
	[ -n "$HOG" ] && kill "$HOG" 2>/dev/null && wait "$HOG" 2>/dev/null
	HOG=""
	[ -z "$TCG" ] || cgroup_remove "$TCG" "$CG" || fail "test cgroup $TCG could not be removed"
	TCG=""
}
trap 'st=$?; unfinished $st; cleanup; rm -rf "$TMP"; exit $st' EXIT
track_lines
trap 'exit 130' INT TERM # through the EXIT trap: the cgroup goes also when ctest kills us

# share CAUSE FILE: the share of late deadlines CAUSE has in the report's "causes"
share() { jq -r --arg c "$1" '[.causes[] | select(.cause == $c) | .share][0] // 0' "$2"; }
# top FILE: the cause with the most late deadlines
top() { jq -r '.causes | max_by(.count) | if .count > 0 then .cause else "none" end' "$1"; }
ge() { python3 -c "import sys; sys.exit(0 if float('$1') >= float('$2') else 1)"; }

# ---- bad input: exit 2, one line, nothing on stdout -----------------------------------
if ! threads_only; then
	usage_error "is not a duration" sleep --periodic --explain=banana
	usage_error "must be positive" sleep --periodic --explain=0
	usage_error "is not a duration" sleep --periodic --explain=-1us
	usage_error "needs --periodic" sleep --explain
	usage_error "needs --periodic" sleep --smp
	usage_error "needs --periodic" sleep --threads 2
	usage_error "needs --periodic" sleep --affinity 0
	usage_error "needs --periodic" sleep --mlock
	usage_error "needs --periodic" sleep --histogram "$TMP/h"
	usage_error "needs --periodic" sleep --stop-above 1ms
	usage_error "excludes" sleep --periodic --smp --threads 2
	usage_error "excludes" sleep --periodic --smp --affinity 0
	usage_error "excludes" sleep --periodic --cpu 0 --smp
	usage_error "excludes" sleep --periodic --cpu 0 --affinity 0
	usage_error "out of range" sleep --periodic --threads 0
	usage_error "is not a number" sleep --periodic --threads two
	usage_error "an empty CPU list" sleep --periodic --affinity ''
	usage_error "is not a CPU list" sleep --periodic --affinity abc
	usage_error "is not a CPU list" sleep --periodic --affinity 0,,1
	usage_error "is not a CPU list" sleep --periodic --affinity 0,
	usage_error "bad range" sleep --periodic --affinity 1-0
	usage_error "bad range" sleep --periodic --affinity 99999
	run_cmd taskset -c 0 "$PN" sleep --periodic --affinity 1023
	check "--affinity outside the allowed CPUs: exit 2 and one line ($RC: $(cat "$ERR"))" \
		test "$RC" -eq 2 -a "$(wc -l <"$ERR")" -eq 1 -a ! -s "$OUT"
	check "--affinity outside the allowed CPUs: says so" grep -q "not one this process may use" "$ERR"
	usage_error "out of range" sleep --periodic --priority 0
	usage_error "out of range" sleep --periodic --priority 100
	usage_error "needs a file name" sleep --periodic --histogram ''
	usage_error "--histogram" sleep --periodic --histogram /nonexistent-dir/h
	usage_error "out of range" sleep --periodic --histogram "$TMP/h" --histogram-max 0
	usage_error "needs --histogram" sleep --periodic --histogram-max 100us
	usage_error "needs --periodic" sleep --histogram-max 100us
	usage_error "must be positive" sleep --periodic --stop-above 0
	usage_error "is not a duration" sleep --periodic --stop-above soon
	usage_error "needs a value" sleep --periodic --stop-above
	usage_error "option '--smp' takes no value" sleep --periodic --smp=1
	check "no histogram file left by refused runs" test ! -e "$TMP/h"
fi

# ---- threads ------------------------------------------------------------------------
allowed=$(python3 -c 'import os; print(" ".join(map(str, sorted(os.sched_getaffinity(0)))))')
n=$(echo $allowed | wc -w)
ok sleep --periodic --smp --interval 1ms --duration 400ms --json
jq_check "--smp: one thread per allowed CPU ($allowed)" --argjson n "$n" '(.threads | length) == $n' "$OUT"
jq_check "--smp: each pinned to a different allowed CPU" --arg a "$allowed" \
	'([.threads[].cpu] | sort) == ($a | split(" ") | map(tonumber))' "$OUT"
jq_check "--smp: the totals add the threads" \
	'.cycles == ([.threads[].cycles] | add) and all(.threads[]; .cycles > 0 and .early == 0 and .latency_ns.count == .cycles)' "$OUT"
run_cmd taskset -c 0 "$PN" sleep --periodic --smp --interval 1ms --duration 300ms --json
jq_check "--smp under taskset -c 0: one thread, on CPU 0" '(.threads | length) == 1 and .threads[0].cpu == 0' "$OUT"
ok sleep --periodic --smp --interval 1ms --duration 300ms
check "--smp: one T: line per thread" test "$(grep -c '^T: *[0-9]* (' "$OUT")" -eq "$n"
check "T: lines in cyclictest's format" grep -Eq '^T: ?1 \( *[0-9]+\) P: ?0 I:1000 C: *[0-9]+ Min: *[0-9]+ Act: *[0-9]+ Avg: *[0-9]+ Max: *[0-9]+' "$OUT"
ok sleep --periodic --threads 3 --interval 1ms --duration 300ms --json
jq_check "--threads 3: three unpinned threads" '(.threads | length) == 3 and all(.threads[]; .cpu == null and .cycles > 0)' "$OUT"
ok sleep --periodic --threads 2 --affinity 0 --interval 1ms --duration 300ms --json
jq_check "--threads 2 --affinity 0: both on CPU 0" '[.threads[].cpu] == [0, 0]' "$OUT"
ok sleep --periodic --affinity 0 --interval 1ms --duration 300ms --json
jq_check "--affinity 0: one thread" '(.threads | length) == 1 and .threads[0].cpu == 0' "$OUT"
if [ "$(id -u)" -eq 0 ]; then
	ok sleep --periodic --smp --priority 10 --mlock --interval 1ms --duration 300ms --json
	jq_check "--priority 10 --mlock" '.policy == "SCHED_FIFO" and .priority == 10 and .mlock == true and all(.threads[]; .early == 0)' "$OUT"
else
	skip "--priority/--mlock: not root"
fi

# ---- the histogram file: cyclictest -h's format --------------------------------------
# parse_hist FILE THREADS ROWS: prints "total overflow" per thread, or fails, reading the
# file the way cyclictest's users' scripts do (rows "%06d %06lu\t%06lu...", "# X:" lines)
cat >"$TMP/parse_hist.py" <<'EOF'
import re, sys
path, nthreads, rows = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
lines = open(path).read().split('\n')
assert lines[0] == '# Histogram', lines[0]
body = lines[1:1 + rows]
row = re.compile(r'^\d{6} \d{6}(\t\d{6}){%d}$' % (nthreads - 1))
for i, l in enumerate(body):
    assert row.match(l) and int(l.split()[0]) == i, (i, l)
counts = [sum(int(l.split()[1 + t]) for l in body) for t in range(nthreads)]
rest = lines[1 + rows:]
def field(name):
    for l in rest:
        if l.startswith('# %s:' % name):
            v = l.split(':', 1)[1].split()
            assert len(v) == nthreads and all(re.match(r'^\d+$', x) for x in v), l
            return [int(x) for x in v]
    raise AssertionError('no "# %s:" line' % name)
total, over = field('Total'), field('Histogram Overflows')
for name in ('Min Latencies', 'Avg Latencies', 'Max Latencies'):
    field(name)
assert total == counts, (total, counts)
assert any(l == '# Histogram Overflow at cycle number:' for l in rest)
for t in range(nthreads):
    assert any(l.startswith('# Thread %d:' % t) for l in rest), t
print(' '.join('%d %d' % (a, b) for a, b in zip(total, over)))
EOF
ok sleep --periodic --smp --interval 1ms --duration 300ms --histogram "$TMP/pn.hist" --histogram-max 200us --json
J=$OUT
if got=$(python3 "$TMP/parse_hist.py" "$TMP/pn.hist" "$n" 200 2>&1); then
	pass
	want=$(jq -r '[.threads[] | "\(.cycles - .histogram_us.overflows) \(.histogram_us.overflows)"] | join(" ")' "$J")
	check "histogram totals and overflows match the JSON ($got vs $want)" test "$got" = "$want"
else
	fail "the --histogram file does not parse as cyclictest's: $got"
fi
jq_check "histogram in the JSON: rows add up to the cycles" \
	'all(.threads[]; ([.histogram_us.counts[][1]] | add // 0) + .histogram_us.overflows == .cycles)' "$J"
if threads_only; then # the rest runs one thread of the tool
	finish
	exit $?
fi
if command -v cyclictest >/dev/null; then
	cyclictest -q -S -i 1000 -D 1 -h 200 --histfile="$TMP/ct.hist" >/dev/null 2>&1
	if got=$(python3 "$TMP/parse_hist.py" "$TMP/ct.hist" "$n" 200 2>&1); then pass; else
		fail "the parser does not read cyclictest's own file: $got"
	fi
else
	skip "cyclictest not installed: the parser is not checked against its file"
fi

# ---- --stop-above: exit 3 with the wakeup and its cause --------------------------------
run sleep --periodic --interval 1ms --duration 2s --stop-above 1ns
check "--stop-above 1ns exits 3 (got $RC)" test "$RC" -eq 3
check "--stop-above: prints the wakeup and its cause" grep -Eq '^stopped: thread 0 woke .* late at cycle 0: (throttled|preempted|migrated|irq|stolen|slack|wakeup)' "$OUT"
run sleep --periodic --interval 1ms --duration 2s --stop-above 1ns --json
check "--stop-above --json exits 3" test "$RC" -eq 3
STATUS[$OUT]=0 # a complete report: validate it
jq_check "--stop-above in JSON" '.stop.hit == true and .stop.late_ns > 1 and (.stop.cause | length) > 0 and .cycles == 1' "$OUT"
ok sleep --periodic --interval 1ms --duration 200ms --stop-above 10s --json
jq_check "--stop-above not hit: exit 0, hit false" '.stop.hit == false' "$OUT"

# ---- --explain D: as the next word or after '=' (a bare number is us) ------------------
ok sleep --periodic --interval 1ms --duration 200ms --explain 500us --json
jq_check "--explain 500us" '.explain.threshold_ns == 500000 and .threads[0].explain_threshold_ns == 500000' "$OUT"
ok sleep --periodic --interval 1ms --duration 200ms --explain=250us --json
jq_check "--explain=250us is 250 us" '.explain.threshold_ns == 250000 and all(.causes[]; .max_ns == 0 or .max_ns > 250000)' "$OUT"

# ---- idle: no throttling without a quota, preemption only when something runs ----------
ok sleep --periodic --interval 1ms --duration 2s --explain --json
J=$OUT
jq_check "--explain: a causes table with every cause" \
	'.threads[0].attributed and [.causes[].cause] == ["throttled","preempted","migrated","irq","stolen","slack","wakeup"] and .explain.late_deadlines == ([.causes[].count] | add)' "$J"
if jq -e '.explain.cgroup.quota_levels == []' "$J" >/dev/null; then
	jq_check "idle, no quota anywhere: nothing throttled" '([.causes[] | select(.cause == "throttled") | .count][0]) == 0' "$J"
else
	skip "this test runs under a CFS quota ($(jq -c '.explain.cgroup.quota_levels[0].path' "$J")): throttling possible"
fi
# How many of an idle loop's late wakeups were preempted is the machine's, not the tool's:
# a quiet guest here had 3 of 12, 6 of 29, and 19 of 31 in a run minutes later (kernel
# threads: kworkers, kdamond), so it is printed, not asserted. The attribution itself is
# checked beside a hog below (and in unit.causes).
ok sleep --periodic --interval 1ms --duration 2s --explain --dma-latency off --json
echo "note: idle loop: $(jq '[.causes[] | select(.cause == "preempted") | .count][0] // 0' "$OUT") of $(jq '.explain.late_deadlines' "$OUT") late wakeups preempted (loadavg $(cut -d' ' -f1 /proc/loadavg))"
json_ok "$OUT"

# ---- preempted: a busy loop on the sleeper's CPU, the sleeper at nice 10 ---------------
# (between SCHED_IDLE tasks, as under `chrt -i`, nice weighs nothing: no hog preempts)
policy=$(chrt -p $$ 2>/dev/null | sed -n 's/.*current scheduling policy: //p')
if [ "$policy" = SCHED_IDLE ]; then
	skip "preempted: the suite runs under SCHED_IDLE (chrt -i), where nice 10 leaves the" \
		"sleeper no weaker than the hog"
else
	cpu0=${allowed%% *}
	taskset -c "$cpu0" sh -c 'exec timeout 30 sh -c "while :; do :; done"' &
	HOG=$!
	sleep 0.2
	run_cmd nice -n 10 "$PN" sleep --periodic --interval 1ms --duration 3s --cpu "$cpu0" --explain --json
	J=$OUT
	run_cmd nice -n 10 "$PN" sleep --periodic --interval 1ms --duration 1s --cpu "$cpu0" --explain
	cleanup
	# the text: where the table has preempted wakeups, a line says what would show whether a
	# short slice wins them
	if grep -Eq '^preempted +[0-9]' "$OUT"; then
		check "preempted: the slice hint ($(grep '^preempted' "$OUT"))" \
			grep -q '^preempted: behind tasks with longer slices; --slice 100us' "$OUT"
	fi
	json_ok "$J"
	t=$(top "$J")
	check "busy loop on CPU $cpu0: the top cause is preempted (got $t: $(jq -c '[.causes[] | select(.count > 0) | {cause, count}]' "$J" 2>/dev/null))" test "$t" = preempted
	jq_check "preempted: its wakeups waited" '[.causes[] | select(.cause == "preempted") | .max_ns][0] > 0' "$J"
fi

# ---- throttled: a real v1 cgroup allowing 0.3 CPU with a busy loop inside --------------
# cpu.shares at its maximum makes the group win CPU time from other load when its quota
# allows it, so that its quota, not a neighbour, is what delays it (make test-load).
throttle_case() { # DIR: run the sleeper in the cgroup DIR; sets J
	sh -c "echo \$\$ > $1/cgroup.procs; exec timeout 30 sh -c 'while :; do :; done'" &
	HOG=$!
	sleep 0.3
	run_cmd sh -c "echo \$\$ > $1/cgroup.procs; exec \"$PN\" sleep --periodic --interval 1ms --duration 3s --explain --json"
	J=$OUT
}
if [ "$(id -u)" -ne 0 ] || [ ! -w $CG ]; then
	skip "throttled (v1): needs root and a writable $CG"
else
	TCG=$CG/pn-late-$$
	mkdir "$TCG"
	echo 100000 >"$TCG/cpu.cfs_period_us"
	echo 30000 >"$TCG/cpu.cfs_quota_us"
	echo 262144 >"$TCG/cpu.shares"
	throttle_case "$TCG"
	cleanup
	json_ok "$J"
	s=$(share throttled "$J")
	# throttling is the cause named first, most of the late deadlines' (the machine's own
	# load preempts some too: make test-load runs this beside 8 hogs)
	check "0.3-CPU cgroup with a busy loop: throttled first, share $s >= 0.5 ($(jq -c '[.causes[] | select(.count > 0) | {cause, count, wakeups}]' "$J" 2>/dev/null))" \
		test "$(top "$J")" = throttled -a -n "$(ge "$s" 0.5 && echo y)"
	jq_check "throttled names the cgroup and its quota" --arg p "/pn-late-$$" \
		'[.causes[] | select(.cause == "throttled")][0] | .cgroup == $p and .quota_us == 30000 and .period_us == 100000' "$J"
	jq_check "the cgroup's counters are in the report" --arg p "/pn-late-$$" \
		'.explain.cgroup.version == "v1" and any(.explain.cgroup.quota_levels[]; .path == $p and .nr_throttled > 0 and .throttled_ns > 0)' "$J"
	check "the test cgroup is gone" test ! -d "$CG/pn-late-$$"

	# probe's "why late" section in the same kind of cgroup: the cause, the counters since
	# the cgroup was created, the recommendation that names the quota, and --prom
	TCG=$CG/pn-late-$$
	mkdir "$TCG"
	echo 100000 >"$TCG/cpu.cfs_period_us"
	echo 30000 >"$TCG/cpu.cfs_quota_us"
	echo 262144 >"$TCG/cpu.shares"
	sh -c "echo \$\$ > $TCG/cgroup.procs; exec timeout 60 sh -c 'while :; do :; done'" &
	HOG=$!
	sleep 0.3
	run_cmd sh -c "echo \$\$ > $TCG/cgroup.procs; exec \"$PN\" probe --quick --json --prom \"$TMP/why.prom\""
	cleanup
	J=$OUT
	jq_check "probe: why_late names throttled and the cgroup" --arg p "/pn-late-$$" \
		'(.why_late.causes | max_by(.count)) as $t | $t.cause == "throttled" and $t.cgroup == $p and any(.why_late.cgroup.quota_levels[]; .path == $p and .nr_throttled > 0)' "$J"
	jq_check "probe: the recommendation names the quota" --arg p "/pn-late-$$" \
		'any(.recommendations[]; .kind == "throttling" and (.text | startswith("CFS throttling") and contains($p)))' "$J"
	check "probe --prom: throttled periods of the cgroup" \
		grep -Eq "^punctual_cgroup_cfs_throttled_periods_total\{cgroup=\"/pn-late-$$\"\} [1-9]" "$TMP/why.prom"
	check "probe --prom: late deadlines by cause" grep -Eq '^punctual_late_deadlines\{cause="throttled"\} [1-9]' "$TMP/why.prom"
fi
V2=/sys/fs/cgroup/unified
if [ -f $V2/cgroup.controllers ] && grep -qw cpu $V2/cgroup.controllers; then
	skip "throttled (v2): the v2 cpu controller is here but this test drives v1 only"
else
	skip "throttled (v2): the v2 hierarchy has no cpu controller here ($V2/cgroup.controllers: '$(cat $V2/cgroup.controllers 2>/dev/null)')"
fi

finish
