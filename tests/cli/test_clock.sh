#!/bin/bash
# SPDX-License-Identifier: MIT
# test_clock.sh: `punctual clock`: valid JSON with every source, invariants (no backward
# step for ordered sources), the text table, the cycle-counter fallback, and
# --clocksources refused without root (its switching: test_clocksources.sh).
. "$(dirname "$0")/lib.sh"

IDS="libc:CLOCK_REALTIME syscall:CLOCK_REALTIME libc:CLOCK_MONOTONIC syscall:CLOCK_MONOTONIC
libc:CLOCK_MONOTONIC_RAW syscall:CLOCK_MONOTONIC_RAW libc:CLOCK_BOOTTIME syscall:CLOCK_BOOTTIME
libc:CLOCK_TAI syscall:CLOCK_TAI libc:CLOCK_REALTIME_COARSE syscall:CLOCK_REALTIME_COARSE
libc:CLOCK_MONOTONIC_COARSE syscall:CLOCK_MONOTONIC_COARSE libc:CLOCK_PROCESS_CPUTIME_ID
syscall:CLOCK_PROCESS_CPUTIME_ID libc:CLOCK_THREAD_CPUTIME_ID syscall:CLOCK_THREAD_CPUTIME_ID
gettimeofday time pn_now pn_now_coarse pn_cycles pn_cycles_ordered"

ok clock --json --duration 300ms
J=$OUT
json_ok "$J"
# The counter's own rows, for the machine the tool runs on (the kernel string's last word:
# under an emulator it is the emulated one, where uname -m would name the host's).
case "$(jq -r '.host.kernel | split(" ") | last' "$J")" in
x86_64) IDS="$IDS rdtsc rdtscp lfence_rdtsc mfence_rdtsc" ;;
aarch64) IDS="$IDS cntvct isb_cntvct" ;;
esac
for id in $IDS; do
	jq_check "source $id in the JSON" --arg id "$id" 'any(.sources[]; .id == $id)' "$J"
done
jq_check "no backward step in one thread, any source" \
	'all(.sources[]; .backward.same_thread == 0)' "$J"
jq_check "no backward step across CPUs for ordered sources" \
	'all(.sources[] | select(.ordered); .backward.cross_cpu == 0)' "$J"
jq_check "raw system calls are system calls" \
	'all(.sources[] | select(.via == "syscall"); .path == "syscall")' "$J"
# qemu-user gives the emulated program no vDSO: there the libc clocks' path is unknown.
if [ -n "${PUNCTUAL_EMULATOR:-}" ]; then
	skip "vDSO paths: $PUNCTUAL_EMULATOR gives the program no vDSO"
else
	jq_check "CPU-time clocks are system calls (no vDSO serves them)" \
		'all(.sources[] | select(.name | test("CPUTIME")); .path == "syscall")' "$J"
fi
jq_check "every source has a positive cost and a rank" \
	'all(.sources[]; .ns_per_read.min > 0 and .ns_per_read.median >= .ns_per_read.min and .rank >= 1)' "$J"
# Coarse: its resolution is a tick's (clock_getres), and it moves. Its steps are mostly a
# tick, but not all: timekeeping updates it out of turn too (a clock set or adjusted, a CPU
# leaving idle under NO_HZ), and under load Linux 6.18 showed steps under 1 us in two runs
# of the suite (make test-load, CI), so no step size is asserted.
jq_check "the coarse clock is coarse, and moves" \
	'.sources[] | select(.id == "pn_now_coarse") | .resolution_ns.getres >= 1000000 and .resolution_ns.smallest_step > 0' "$J"
jq_check "host facts" '.host.kernel and .host.clocksource and (.host.available_clocksources | length > 0) and .host.tick_hz_estimate > 0' "$J"
jq_check "sources measured once without --clocksources" '.clocksources == null' "$J"

COLUMNS=80 ok clock --duration 100ms
check "clock fits 80 columns at COLUMNS=80 ($(awk 'length > 80' "$OUT" | head -c 200))" \
	sh -c "awk 'length > 80 {exit 1}' '$OUT'"
check "clock says which columns it left out" grep -q -- '--wide shows all' "$OUT"
COLUMNS=200 ok clock --duration 100ms --wide
check "clock --wide shows every column" grep -q 'getres' "$OUT"
check "table header" grep -q '^rank  source' "$OUT"
check "table has a pn_now row" grep -q ' pn_now  ' "$OUT"
check "no progress noise on stderr when it is not a terminal" test "$RC" -eq 0 -a ! -s "$ERR"

# The cycle counter falls back to pn_now when told to (or when untrusted), and says so.
PUNCTUAL_CYCLES=clock ok clock --json --duration 100ms
jq_check "fallback named in the JSON" '.cycles.source == "clock_monotonic" and .cycles.reason == "PUNCTUAL_CYCLES=clock"' "$OUT"
[ -n "${PUNCTUAL_EMULATOR:-}" ] ||
	jq_check "pn_cycles served by the vDSO in fallback" '.sources[] | select(.id == "pn_cycles") | .path == "vdso"' "$OUT"

# --clocksources needs root.
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null; then
	run_cmd setpriv --reuid=65534 --regid=65534 --clear-groups "$PN" clock --clocksources
	check "--clocksources as nobody exits 2" test "$RC" -eq 2
	check "--clocksources as nobody: one line naming root" grep -q 'needs root' "$ERR"
	check "--clocksources as nobody: nothing on stdout" test "$RC" -eq 2 -a ! -s "$OUT"
elif [ "$(id -u)" -ne 0 ]; then
	usage_error "needs root" clock --clocksources
fi


# SIGINT or SIGTERM: what was measured until then (one round of costs at least), marked,
# exit 0; to its end: not interrupted.
interrupt INT clock --json --duration 20s
check "SIGINT: exit 0 ($RC: $(head -c 200 "$ERR"))" test "$RC" -eq 0
jq_check "SIGINT: interrupted, every source's cost" \
	'.interrupted == true and ([.sources[].ns_per_read.rounds] | min > 0)' "$OUT"
interrupt TERM clock --duration 20s
check "SIGTERM: exit 0 ($RC)" test "$RC" -eq 0
check "SIGTERM: said" grep -q '^interrupted by SIGTERM' "$OUT"
ok clock --json --duration 10ms
jq_check "to its end: not interrupted" '.interrupted == false' "$OUT"

finish
