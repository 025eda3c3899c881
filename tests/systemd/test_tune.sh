#!/bin/bash
# SPDX-License-Identifier: MIT
# test_tune.sh (run.sh starts it): `punctual tune UNIT` under a real systemd, as a systemd
# administrator counts on it. The unit is bin/sleep_loop (1 ms sleeps, no signal handler:
# SIGTERM ends it by the default action) with TimerSlackNSec=20ms. Checked:
# - a dry run measures it (its records survive the default action), leaves no drop-in and
#   the unit running with its own settings; --pid MAINPID does the same;
# - --apply keeps a drop-in systemd applies and systemd-analyze verify accepts (the shim's
#   path resolved), no runtime drop-in left;
# - SIGHUP, SIGINT and SIGTERM mid-measure put the unit back, the kept drop-in untouched;
#   SIGKILL leaves the measuring drop-in, which --revert --dry-run names and the next tune
#   removes, saying so;
# - two tunes of one unit at once: the second refuses; the lock is in a directory root
#   alone may write (/run/punctual, never a link): another user's file in /run/lock stops
#   nothing, and a lock that holds no PID is said to be held without its bytes;
# - the records are the service user's, 0600, in the unit's runtime directory
#   (/run/punctual-tune-UNIT, which systemd makes and tune removes, also after a signal
#   and after a killed tune), none in /run itself;
# - --revert --dry-run changes nothing (no restart); --revert brings the unit's slack back;
# - an administrator's 50-punctual-tune.conf is neither replaced nor removed;
# - the unit's own LD_PRELOAD is kept before the shim's; a shim path with '%' reaches the
#   service as it is (systemd reads '%%');
# - a hardened unit (DynamicUser=, ProtectSystem=strict, PrivateTmp=) is measured, with
#   CAP_SYS_NICE tried (AmbientCapabilities=) as it runs unprivileged; not where its
#   bounding set lacks it, nor for a unit run as root;
# - a service with no timed wait is reported after its first run.
# The stand-in systemctl of earlier tests is gone: nothing here is a stand-in.
. "$(dirname "$0")/lib.sh"
U=pnt-loop.service
D=/etc/systemd/system/$U.d
R=/run/systemd/system/$U.d

# unit NAME BODY: writes /etc/systemd/system/NAME, reloads, starts it.
unit() {
	box sh -c "cat >/etc/systemd/system/$1" <<<"$2"
	inbox_ok "$1 started" sh -c "systemctl daemon-reload && systemctl start $1"
}
show() { box systemctl show "$U" -p TimerSlackNSec -p Environment -p ActiveState | tr '\n' ' '; }
active() { box systemctl is-active -q "${1:-$U}"; }
no_runtime() { ! box sh -c "ls $R/* 2>/dev/null" | grep -q .; }
# no records left: no runtime directory of tune's, no records file in /run
no_records() { ! box sh -c 'ls -d /run/punctual-tune* 2>/dev/null' | grep -q .; }
# records_seen UNIT: while a tune of UNIT measures, the first records file seen: "UID MODE
# regular DIR_UID ENV" ("other" for no regular file; ENV "yes" where the service sees a
# RUNTIME_DIRECTORY, which tune's directory must not give it; empty where none is seen
# within 8 s)
records_seen() {
	box sh -c 'd=/run/punctual-tune-$1
	for i in $(seq 40); do
		for f in $d/records.*; do
			[ -e "$f" ] || continue
			t=other
			[ -f "$f" ] && [ ! -h "$f" ] && t=regular
			e=no
			pid=$(systemctl show -P MainPID "$1")
			tr "\0" "\n" <"/proc/$pid/environ" 2>/dev/null | grep -q ^RUNTIME_DIRECTORY= && e=yes
			echo "$(stat -c "%u %a" "$f") $t $(stat -c %u "$d") $e"
			exit 0
		done
		sleep 0.2
	done' sh "$1"
}

unit $U "[Unit]
Description=punctual test: 1 ms sleeps
[Service]
ExecStart=/opt/punctual/bin/sleep_loop 1000
TimerSlackNSec=20ms"
before=$(show)

# a dry run
inbox punctual tune --for=4s --json $U
check "dry run: exit 0 ($(said))" test "$RC" -eq 0
check "dry run: the unit's waits counted as it is, though SIGTERM's default action ends it" \
	test "$(jq '.runs[0].waits > 0' "$OUT" 2>/dev/null)" = true
check "dry run: its 20 ms of slack seen as it is ($(jq -c '.runs[0]' "$OUT" 2>/dev/null))" \
	test "$(jq '.runs[0].p50_ns > 10000000' "$OUT" 2>/dev/null)" = true
check "dry run: a fix kept, with its drop-in" \
	test "$(jq '.kept != null and (.drop_in | startswith("# Written by punctual tune"))' "$OUT" 2>/dev/null)" = true
check "dry run: every setting's CPU known" \
	test "$(jq 'all(.runs[]; .cpu_pct != null)' "$OUT" 2>/dev/null)" = true
check "dry run: the unit as it was ($(show))" test "$(show)" = "$before"
check "dry run: no drop-in left" test -z "$(box sh -c "ls $D $R 2>/dev/null")"
pid=$(box systemctl show -P MainPID $U)
inbox punctual tune --for=2s --json --pid "$pid"
check "--pid $pid: exit 0, its unit tuned ($(said))" test "$RC" -eq 0

# --apply
inbox punctual tune --for=4s --apply $U
check "--apply: exit 0 ($(said))" test "$RC" -eq 0
check "--apply: a drop-in kept" box test -f $D/50-punctual-tune.conf
after=$(show)
check "--apply: systemd applies it ($after)" test "$after" != "$before"
check "--apply: the unit active" active
check "--apply: no runtime drop-in left" no_runtime
box cat $D/50-punctual-tune.conf >"$TMP/kept.conf"
check "--apply: the shim's path resolved ($(grep LD_PRELOAD "$TMP/kept.conf"))" \
	test -z "$(grep -E 'LD_PRELOAD=[^ ]*/\.\./' "$TMP/kept.conf")"
inbox systemd-analyze verify /etc/systemd/system/$U
check "systemd-analyze verify accepts the unit with the kept drop-in ($(said))" \
	test "$RC" -eq 0 -a ! -s "$ERR"
kept() { box cat $D/50-punctual-tune.conf 2>/dev/null | cmp -s - "$TMP/kept.conf"; }

# signals mid-measure: the unit put back, the kept drop-in as it was
for sig in HUP INT TERM; do
	inbox sh -c "punctual tune --for=6s --apply $U & p=\$!; sleep 2; kill -$sig \$p; wait \$p"
	check "SIG$sig mid --apply: exit 1, interrupted ($(said))" \
		test "$RC" -eq 1 -a -n "$(grep interrupted "$ERR")"
	check "SIG$sig mid --apply: the kept drop-in as it was" kept
	check "SIG$sig mid --apply: no runtime drop-in left" no_runtime
	check "SIG$sig mid --apply: the unit active" active
	check "SIG$sig mid --apply: no records left" no_records
done
inbox sh -c "punctual tune --for=6s --apply $U & p=\$!; sleep 2; kill -KILL \$p; wait \$p"
check "SIGKILL mid --apply: the kept drop-in as it was" kept
check "SIGKILL mid --apply: the measuring drop-in left (only a later tune can remove it)" \
	box test -f $R/60-punctual-tune-measure.conf
inbox punctual tune --revert --dry-run $U
check "--revert --dry-run names what the killed tune left ($(said))" \
	grep -q "would remove $R/60-punctual-tune-measure.conf" "$OUT"
check "... and removes nothing" box test -f $R/60-punctual-tune-measure.conf

# two at once: the second refuses; the first removes what the killed one left
inbox sh -c "punctual tune --for=4s $U >/tmp/first.out 2>/tmp/first.err & p=\$!; sleep 1;
	punctual tune --for=4s $U; r=\$?; wait \$p; echo first \$?; exit \$r"
check "two tunes at once: the second exits 1, saying why ($(said))" \
	test "$RC" -eq 1 -a -n "$(grep 'another punctual tune of' "$ERR")"
check "... the first exits 0 ($(said))" grep -q 'first 0' "$OUT"
inbox cat /tmp/first.err
check "... and removed what the killed tune left, saying so ($(said))" \
	grep -q 'which an interrupted tune left' "$OUT"
check "... none left now" no_runtime
check "... no records left either" no_records
check "... the kept drop-in as it was" kept

# the lock: another user's file in the 1777 /run/lock, held, stops no tune
holder=$(box sh -c "setpriv --reuid=65534 --regid=65534 --clear-groups \
	flock /run/lock/punctual-tune-$U.lock sleep 60 >/dev/null 2>&1 & echo \$!")
sleep 0.5
inbox punctual tune --for=2s $U
check "another user's lock in /run/lock stops no tune ($(said))" test "$RC" -eq 0
box kill "$holder" 2>/dev/null
# a lock whose file holds no PID: said to be held, its bytes never printed
holder=$(box sh -c "mkdir -p -m 0700 /run/punctual && printf '\033[31m' >/run/punctual/tune-$U.lock &&
	flock /run/punctual/tune-$U.lock sleep 60 >/dev/null 2>&1 & echo \$!")
sleep 0.5
inbox punctual tune --for=2s $U
check "a held lock without a PID: exit 1, one line saying it is held ($(said))" \
	test "$RC" -eq 1 -a "$(wc -l <"$ERR")" -eq 1 -a -n "$(grep 'another punctual tune of' "$ERR")"
check "... the file's bytes not printed (no escape)" test -z "$(grep -F $'\e' "$ERR")"
box kill "$holder" 2>/dev/null
sleep 0.3
# /run/punctual a link: no lock taken through it
box sh -c 'rm -rf /run/punctual /tmp/pn-lock && mkdir /tmp/pn-lock && ln -s /tmp/pn-lock /run/punctual'
inbox punctual tune --for=2s $U
check "/run/punctual a link: exit 1, one line ($(said))" \
	test "$RC" -eq 1 -a "$(wc -l <"$ERR")" -eq 1
check "... nothing created through it" test -z "$(box ls /tmp/pn-lock)"
box sh -c 'rm -f /run/punctual; rm -rf /tmp/pn-lock'

# the records of a unit run as root: root's, 0600, in the runtime directory root owns
box sh -c "punctual tune --for=3s $U >/dev/null 2>&1 & echo \$! >/tmp/tune.pid"
seen=$(records_seen $U)
box sh -c 'while kill -0 $(cat /tmp/tune.pid) 2>/dev/null; do sleep 0.2; done'
check "the records of a root unit: root's, 0600, a regular file; no RUNTIME_DIRECTORY ($seen)" \
	test "$seen" = "0 600 regular 0 no"
check "... none left after the tune" no_records

# --revert --dry-run, then --revert
pid=$(box systemctl show -P MainPID $U)
inbox punctual tune --revert --dry-run $U
check "--revert --dry-run: exit 0, says what it would do ($(said))" \
	test "$RC" -eq 0 -a -n "$(grep 'would remove' "$OUT")"
check "--revert --dry-run: the drop-in kept" kept
check "--revert --dry-run: the unit not restarted" test "$(box systemctl show -P MainPID $U)" = "$pid"
inbox punctual tune --revert $U
check "--revert: exit 0 ($(said))" test "$RC" -eq 0
check "--revert: its drop-in gone" box test ! -e $D/50-punctual-tune.conf
reverted=$(show)
check "--revert: the unit's own 20 ms slack back ($reverted)" \
	test -n "$(echo "$reverted" | grep -E 'TimerSlackNSec=(20ms|20000000) ')"
check "--revert: the unit active" active

# an administrator's file of tune's name
box sh -c "mkdir -p $D && printf '[Service]\nMemoryMax=1G\n' >$D/50-punctual-tune.conf && systemctl daemon-reload"
box cat $D/50-punctual-tune.conf >"$TMP/admin.conf"
inbox punctual tune --for=2s --apply $U
check "--apply over an administrator's file: exit 2, one line ($(said))" \
	test "$RC" -eq 2 -a "$(wc -l <"$ERR")" -eq 1
inbox punctual tune --revert $U
check "--revert beside an administrator's file: exit 0, says it is left ($(said))" \
	test "$RC" -eq 0 -a -n "$(grep 'not written by punctual tune' "$OUT")"
admin() { box cat $D/50-punctual-tune.conf | cmp -s - "$TMP/admin.conf"; }
check "the administrator's file as it was" admin
box sh -c "rm -rf $D && systemctl daemon-reload"

# the unit's own LD_PRELOAD, and a shim path with '%' in it (slack 1 ns already: the fix
# kept, if any, is one of the shim's, which load through LD_PRELOAD)
lib=$(box sh -c 'ls /usr/lib/x86_64-linux-gnu/libm.so.6 /lib/*/libm.so.6 2>/dev/null | head -n 1')
box sh -c "mkdir -p '/var/lib/pn%dir' && cp /usr/lib/*/libpunctual-preload.so '/var/lib/pn%dir/'"
unit $U "[Unit]
Description=punctual test: 1 ms sleeps, a library of its own
[Service]
Environment=LD_PRELOAD=$lib
ExecStart=/opt/punctual/bin/sleep_loop 1000
TimerSlackNSec=1"
inbox env "PUNCTUAL_PRELOAD=/var/lib/pn%dir/libpunctual-preload.so" \
	punctual tune --for=4s --apply --budget=50% $U
check "--apply with the unit's LD_PRELOAD, the shim under '%': exit 0 ($(said))" test "$RC" -eq 0
env=$(box systemctl show -P Environment $U)
if box grep -q LD_PRELOAD $D/50-punctual-tune.conf 2>/dev/null; then
	check "the unit's own LD_PRELOAD first, then the shim's path as it is: $env" \
		test -n "$(echo "$env" | grep -F "LD_PRELOAD=$lib:/var/lib/pn%dir/libpunctual-preload.so")"
	box cat "/proc/$(box systemctl show -P MainPID $U)/maps" >"$TMP/maps"
	check "... the shim loaded in the service" grep -q 'pn%dir/libpunctual-preload.so' "$TMP/maps"
	check "... and its own library too" grep -q libm.so "$TMP/maps"
else
	skip "the unit's own LD_PRELOAD: the fix kept sets none ($(box cat $D/50-punctual-tune.conf | tr '\n' ' '))"
fi
box punctual tune --revert $U >/dev/null 2>&1

# a hardened unit
H=pnt-hardened.service
unit $H "[Unit]
Description=punctual test: 1 ms sleeps, hardened
[Service]
ExecStart=/opt/punctual/bin/sleep_loop 1000
DynamicUser=yes
ProtectSystem=strict
PrivateTmp=yes
NoNewPrivileges=yes"
box sh -c "punctual tune --for=3s --json $H >/tmp/h.json 2>/tmp/h.err; echo \$? >/tmp/h.rc" &
seen=$(records_seen $H)
wait
inbox sh -c 'cat /tmp/h.json; cat /tmp/h.err >&2; exit $(cat /tmp/h.rc)'
check "a hardened unit (DynamicUser=, ProtectSystem=strict): exit 0 ($(said))" test "$RC" -eq 0
set -- $seen
check "... its records its dynamic user's, 0600, a regular file, the directory's owner's ($seen)" \
	test -n "$seen" -a "${1:-0}" != 0 -a "${1:-}" = "${4:-}" -a "${2:-}" = 600 \
	-a "${3:-}" = regular -a "${5:-}" = no
check "... none left after the tune" no_records
check "... its waits counted" test "$(jq '.runs[0].waits > 0 and .runs[1].waits > 0' "$OUT" 2>/dev/null)" = true
check "... as another user, CAP_SYS_NICE tried too, and the unit ran under it" \
	test "$(jq 'any(.runs[]; .setting == "--precise +CAP_SYS_NICE" and .waits > 0)' "$OUT" 2>/dev/null)" = true
check "... and it runs as it was" active $H
box systemctl stop $H
B=pnt-bounded.service
unit $B "[Unit]
Description=punctual test: 1 ms sleeps, no CAP_SYS_NICE in its bounding set
[Service]
ExecStart=/opt/punctual/bin/sleep_loop 1000
DynamicUser=yes
CapabilityBoundingSet=CAP_NET_BIND_SERVICE"
inbox punctual tune --for=2s --json $B
check "a unit whose bounding set lacks CAP_SYS_NICE: exit 0, not tried, a note says why ($(said))" \
	test "$RC" -eq 0 -a "$(jq 'all(.runs[]; .setting != "--precise +CAP_SYS_NICE") and
		any(.notes[]; test("CapabilityBoundingSet"))' "$OUT" 2>/dev/null)" = true
box systemctl stop $B
inbox punctual tune --for=2s --json $U
check "a unit run as root: no CAP_SYS_NICE setting (its waits have it) ($(said))" \
	test "$RC" -eq 0 -a "$(jq 'all(.runs[]; .setting != "--precise +CAP_SYS_NICE")' "$OUT" 2>/dev/null)" = true

# no timed wait: said after the first run, long before --for
C=pnt-busy.service
unit $C "[Unit]
Description=punctual test: no timed wait
[Service]
ExecStart=/bin/sh -c 'while :; do :; done'"
start=$(date +%s)
inbox punctual tune --for=60s $C
took=$(($(date +%s) - start))
check "a service with no timed wait: exit 1, one line ($(said))" \
	test "$RC" -eq 1 -a -n "$(grep 'no timed wait seen as it is' "$ERR")"
check "... after its first run, not after every setting (${took} s)" test "$took" -lt 30
check "... and it runs as it was" active $C
box systemctl stop $C
box systemctl stop $U
finish
