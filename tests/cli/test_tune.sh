#!/bin/bash
# SPDX-License-Identifier: MIT
# test_tune.sh PUNCTUAL WAITS_COUNT: `punctual tune`. Bad input exits 2 with one line;
# tune -- CMD runs a command under each fix, judges it, leaves no file behind, and its
# --json is valid; tune --unit-file prints a drop-in that systemd-analyze verify accepts.
# --pid refuses a process in no service unit; a quota of fewer CPUs than online is advice.
# Where systemd is PID 1 and we are root, a throwaway service is tuned, applied and
# reverted; elsewhere tune UNIT refuses with one line, and that part is skipped.
. "$(dirname "$0")/lib.sh"
skip_emulated "the commands it runs are the host's x86_64 programs, which cannot load the aarch64 shim"
COUNT=${2:?usage: $0 PUNCTUAL WAITS_COUNT}
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0
mkdir "$TMP/t"
export TMPDIR=$TMP/t

usage_error "give one of UNIT" tune
usage_error "give one of UNIT" tune a.service -- true
usage_error "--apply needs a UNIT" tune --apply -- true
usage_error "--apply and --dry-run" tune --apply --dry-run a.service
usage_error "--revert takes only UNIT" tune --revert --budget=5% a.service
usage_error "template" tune 'pn-x@.service'
usage_error "not a unit name" tune a/b
usage_error "takes a service" tune a.socket
usage_error "--for: " tune --for=1ms -- true
usage_error "--budget: " tune --budget=200% -- true
usage_error "missing the command" tune --
printf '[Unit]\nDescription=t\n' >"$TMP/none.service"
usage_error "no ExecStart=" tune --unit-file "$TMP/none.service"
printf '[Service]\nExecStart=/bin/true %%i\n' >"$TMP/spec.service"
usage_error "specifiers" tune --unit-file "$TMP/spec.service"
usage_error "cannot be run" tune -- "$TMP/no-such-program"
usage_error "--pid: 'abc' is not a process ID" tune --pid abc
usage_error "--pid: '-3' is not a process ID" tune --pid -3
usage_error "no such process" tune --pid 2147483647
usage_error "give one of UNIT" tune --pid 1 a.service
# A shell in a service would be that unit's to restart: only a plain process is tried.
if grep -q '\.service' /proc/$$/cgroup; then
	skip "--pid of a plain process: this shell runs in a service unit"
else
	usage_error "is in no service unit; the shim must be loaded" tune --pid $$
fi

# a command: 300 waits of 1 ms a run, each setting judged against the first
run tune --json -- "$COUNT" nanosleep 300
check "tune -- CMD --json: exit 0 ($RC: $(head -c 300 "$ERR"))" test "$RC" -eq 0
json_ok "$OUT"
jq_check "three or four runs of 300 waits each, a verdict each" \
	'(.runs | length) >= 3 and (.runs | length) <= 4 and
	 all(.runs[]; .waits == 300 and (.verdict | type) == "string")' "$OUT"
jq_check "the first is the program as it is, the others with a ratio and its interval" \
	'.runs[0].setting == "as it is" and .runs[0].ratio == 1 and
	 all(.runs[1:][]; (.ratio | type) == "number" and (.ratio_interval | length) == 2
	     and all(.ratio_interval[]; type == "number"))' "$OUT"
jq_check "the short slice tried, or a note why not" \
	'any(.runs[]; .setting == "--slack 1ns --slice=100us") or
	 any(.notes[]; startswith("--slice=100us not tried: "))' "$OUT"
jq_check "CPU-count advice only with a reason, never measured" \
	'.cpus == null or (.cpus.measured == false and (.cpus.reason | test("^quota allows")))' \
	"$OUT"
jq_check "a best setting only if it measured better" \
	'.best as $b | $b == null or any(.runs[]; .setting == $b and .verdict == "better")' "$OUT"
run tune --budget=5% -- "$COUNT" nanosleep 300
check "tune --budget: exit 0 ($RC: $(head -c 300 "$ERR"))" test "$RC" -eq 0
check "... tries --precise --budget=5%" grep -q -- '--precise --budget=5%' "$OUT"
check "... prints a command line, or that nothing measured better" \
	grep -Eq '^  punctual run |^no fix measured better' "$OUT"
check "... and leaves no records file" test -z "$(ls "$TMP/t")"

# a unit file: its ExecStart= measured here, the drop-in printed
printf '[Unit]\nDescription=t\n[Service]\nExecStart=%s nanosleep 300\n' "$(realpath "$COUNT")" \
	>"$TMP/pn-tune-test.service"
run tune --unit-file "$TMP/pn-tune-test.service"
check "tune --unit-file: exit 0 ($RC: $(head -c 300 "$ERR"))" test "$RC" -eq 0
check "... names where the drop-in goes" grep -q "$TMP/pn-tune-test.service.d/50-punctual-tune.conf" "$OUT"
mkdir "$TMP/pn-tune-test.service.d"
drop=$TMP/pn-tune-test.service.d/50-punctual-tune.conf
awk '/^# Written by punctual tune/ { p = 1 } p && /^$/ { exit } p' "$OUT" >"$drop"
check "... a drop-in with a [Service] section" grep -q '^\[Service\]$' "$drop"
if ! command -v systemd-analyze >/dev/null; then
	skip "systemd-analyze verify: not installed (Debian: systemd)"
else
	run_cmd systemd-analyze verify "$TMP/pn-tune-test.service"
	check "systemd-analyze verify accepts the unit and its drop-in ($RC: $(head -c 300 "$ERR"))" \
		test "$RC" -eq 0 -a ! -s "$ERR"
	printf '[Service]\nNoSuchKey=1\n' >"$TMP/pn-tune-test.service.d/99-bad.conf"
	run_cmd systemd-analyze verify "$TMP/pn-tune-test.service"
	check "... and reads the drop-in directory (a bad key there is named)" grep -q NoSuchKey "$ERR"
	rm "$TMP/pn-tune-test.service.d/99-bad.conf"
fi

run tune --dry-run --json --unit-file "$TMP/pn-tune-test.service"
check "tune --dry-run --unit-file --json: exit 0 ($RC: $(head -c 300 "$ERR"))" test "$RC" -eq 0
json_ok "$OUT"
jq_check "... each run a ratio and its interval, and the drop-in" \
	'.runs[0].setting == "as it is" and all(.runs[1:][]; (.ratio_interval | length) == 2)
	 and (.drop_in | startswith("# Written by punctual tune")) and .applied == false' "$OUT"
jq_check "... a slice's drop-in has the shim set it, and never replaces ExecStart=" \
	'((.drop_in | test("--slice=")) == (.drop_in | test("\nEnvironment=LD_PRELOAD=[^ ]+ PUNCTUAL_PROCESS_SLICE=100us\n")))
	 and (.drop_in | test("ExecStart") | not)' "$OUT"

# A quota of 1 CPU of the online ones (v1 cpu controller, or v2's where enabled): tune
# adds run --cpus as advice with its reason.
quota_cgroup() {
	local v1 self v2
	v1=$(awk '$0 ~ / - cgroup / && $NF ~ /(^|,)cpu(,|$)/ && $4 == "/" { print $5; exit }' \
		/proc/self/mountinfo)
	self=$(awk -F: '$2 ~ /(^|,)cpu(,|$)/ { sub(/^[^:]*:[^:]*:/, ""); print; exit }' \
		/proc/self/cgroup)
	if [ -n "$v1" ] && [ -n "$self" ]; then
		CG=$v1${self%/}/pn-tune-$$
		mkdir "$CG" && echo 100000 >"$CG/cpu.cfs_period_us" &&
			echo 100000 >"$CG/cpu.cfs_quota_us"
		return
	fi
	v2=$(awk '$0 ~ / - cgroup2 / { print $5; exit }' /proc/self/mountinfo)
	self=$(sed -n 's/^0:://p' /proc/self/cgroup)
	grep -qw cpu "$v2${self%/}/cgroup.subtree_control" 2>/dev/null || return 1
	CG=$v2${self%/}/pn-tune-$$
	mkdir "$CG" && echo "100000 100000" >"$CG/cpu.max"
}
if [ "$(id -u)" -ne 0 ] || [ "$(getconf _NPROCESSORS_ONLN)" -lt 2 ]; then
	skip "CPU-count advice: needs root and 2 CPUs online"
elif ! quota_cgroup; then
	skip "CPU-count advice: no cpu controller to make a cgroup with a quota in"
else
	run_cmd sh -c 'echo $$ >"$1/cgroup.procs" && exec "$2" tune --json -- "$3" nanosleep 300' \
		sh "$CG" "$PN" "$COUNT"
	rmdir "$CG"
	check "tune in a cgroup with a quota of 1 CPU: exit 0 ($RC: $(head -c 300 "$ERR"))" \
		test "$RC" -eq 0
	jq_check "... advises run --cpus=1, its reason, no measurement claimed" \
		".cpus.count == 1 and .cpus.measured == false and
		 .cpus.reason == \"quota allows 1 of $(getconf _NPROCESSORS_ONLN) CPUs\" and
		 (.environment | test(\"PUNCTUAL_CPUS=1 \"))" "$OUT"
fi

if [ ! -d /run/systemd/system ]; then
	run tune --for=1s pn-tune-test.service
	check "without systemd as PID 1, tune UNIT exits 1 ($RC)" test "$RC" -eq 1
	check "... with one line saying so" \
		test "$(wc -l <"$ERR")" -eq 1 -a -n "$(grep 'systemd is not PID 1' "$ERR")"
	skip "a real service tuned, applied and reverted: PID 1 is $(cat /proc/1/comm), not systemd"
	finish
	exit $?
fi
if [ "$(id -u)" -ne 0 ]; then
	skip "a real service tuned, applied and reverted: needs root"
	finish
	exit $?
fi

# A throwaway service: a sleep loop of 1 ms that exits on SIGTERM (the shim writes its
# statistics at exit).
unit=pn-tune-test-$$.service
cat >"/run/systemd/system/$unit" <<UNIT
[Service]
ExecStart=/usr/bin/python3 -c "import signal, sys, time; signal.signal(signal.SIGTERM, lambda *a: sys.exit(0)); [time.sleep(0.001) for _ in iter(int, 1)]"
UNIT
trap 'systemctl stop "$unit"; rm -rf "/run/systemd/system/$unit" "/run/systemd/system/$unit.d" "/etc/systemd/system/$unit.d"; systemctl daemon-reload; rm -rf "$TMP"' EXIT
systemctl daemon-reload
systemctl start "$unit"
run tune --for=2s --json "$unit"
check "tune UNIT (dry run): exit 0 ($RC: $(head -c 300 "$ERR"))" test "$RC" -eq 0
jq_check "... measured the service's waits" '.runs[0].waits > 100' "$OUT"
jq_check "... the short slice tried (the shim sets it), or a note why not" \
	'any(.runs[]; .setting == "--slack 1ns --slice=100us") or
	 any(.notes[]; startswith("--slice=100us not tried: "))' "$OUT"
check "... left nothing behind" test ! -e "/etc/systemd/system/$unit.d/50-punctual-tune.conf" \
	-a ! -e "/run/systemd/system/$unit.d/60-punctual-tune-measure.conf"
check "... and the service running" systemctl is-active -q "$unit"
run tune --for=2s --apply "$unit"
check "tune --apply: exit 0 ($RC: $(head -c 300 "$ERR"))" test "$RC" -eq 0
check "... the service running" systemctl is-active -q "$unit"
run tune --revert "$unit"
check "tune --revert: exit 0 ($RC: $(head -c 300 "$ERR"))" test "$RC" -eq 0
check "... removed tune's drop-in" test ! -e "/etc/systemd/system/$unit.d/50-punctual-tune.conf"
finish
