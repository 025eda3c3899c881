#!/bin/bash
# SPDX-License-Identifier: MIT
# test_tune_trace.sh (run.sh starts it): `punctual tune UNIT` of a service the shim cannot
# time, traced through eBPF under a real systemd, the tool inside the box's PID namespace.
# The unit is bin/raw_sleep (1 ms sleeps through the system call itself: the shim, loaded,
# sees none). Checked:
# - tune measures it by the trace: exit 0, measured_by "ebpf", waits in every setting's
#   runs, none of the shim's settings tried; the text says it was traced;
# - the unit is left as found: no drop-in, no records, restarted with its own settings;
# - a forking service (a shell that waits for its child, which sleeps) is traced through
#   its child: the main process makes no timed wait, its child's are counted;
# - --pid of the unit's main process does the same.
# Where this box cannot trace (no BTF, no eBPF in the build), each part skips, saying why.
. "$(dirname "$0")/lib.sh"
D=/etc/systemd/system
R=/run/systemd/system

# unit NAME BODY: writes $D/NAME, reloads, starts it.
unit() {
	box sh -c "cat >$D/$1" <<<"$2"
	inbox_ok "$1 started" sh -c "systemctl daemon-reload && systemctl start $1"
}
show() { box systemctl show "$1" -p TimerSlackNSec -p Environment -p ActiveState | tr '\n' ' '; }
# left NAME BEFORE: the unit as it was (its settings, active), no drop-in, no records left
left() {
	check "$1: left with its own settings, active ($(show "$1"))" test "$(show "$1")" = "$2"
	check "$1: no drop-in left" test -z "$(box sh -c "ls $D/$1.d $R/$1.d 2>/dev/null")"
	check "$1: no records left" test -z "$(box sh -c 'ls -d /run/punctual-tune* 2>/dev/null')"
}

inbox punctual why --all --for 10ms
if [ "$RC" -ne 0 ]; then
	skip "tune's tracing: this box cannot trace ($(said))"
	finish
	exit $?
fi

U=pnt-raw.service
unit $U "[Unit]
Description=punctual test: 1 ms sleeps the shim cannot see
[Service]
ExecStart=/opt/punctual/bin/raw_sleep 1000"
before=$(show $U)
pid=$(box systemctl show -P MainPID $U)
inbox punctual tune --for=4s --json $U
check "a unit the shim cannot time: exit 0 ($(said))" test "$RC" -eq 0
check "... measured by the trace" test "$(jq -r .measured_by "$OUT" 2>/dev/null)" = ebpf
check "... each setting's waits counted, as it is first ($(jq -c '[.runs[] | [.setting, .waits]]' "$OUT" 2>/dev/null))" \
	test "$(jq '.runs[0].setting == "as it is" and all(.runs[]; .waits > 0)' "$OUT" 2>/dev/null)" = true
check "... none of the shim's settings tried" \
	test "$(jq 'all(.runs[]; .setting | test("precise|slice") | not)' "$OUT" 2>/dev/null)" = true
left $U "$before"
check "... restarted: a new main process" test "$(box systemctl show -P MainPID $U)" != "$pid"
inbox punctual tune --for=2s $U
check "the text report: exit 0, says the runs were traced ($(said))" \
	test "$RC" -eq 0 -a -n "$(grep 'traced through eBPF' "$OUT")"
left $U "$before"
pid=$(box systemctl show -P MainPID $U)
inbox punctual tune --for=2s --json --pid "$pid"
check "--pid $pid: its unit measured by the trace ($(said))" \
	test "$RC" -eq 0 -a "$(jq -r .measured_by "$OUT" 2>/dev/null)" = ebpf
left $U "$before"
box systemctl stop $U

# a forking service: sh waits for its child (no timer), the child sleeps
F=pnt-fork.service
unit $F "[Unit]
Description=punctual test: a shell whose child sleeps
[Service]
ExecStart=/bin/sh -c '/opt/punctual/bin/raw_sleep 1000 & wait'"
before=$(show $F)
inbox punctual tune --for=4s --json $F
check "a forking unit: exit 0, its child's waits traced ($(said))" \
	test "$RC" -eq 0 -a "$(jq '.measured_by == "ebpf" and all(.runs[]; .waits > 0)' "$OUT" 2>/dev/null)" = true
left $F "$before"
check "... its child running again under its main process" \
	test -n "$(box sh -c "m=\$(systemctl show -P MainPID $F)
		grep -ls \"^PPid:[[:space:]]*\$m\\\$\" /proc/[0-9]*/status")"
box systemctl stop $F
finish
