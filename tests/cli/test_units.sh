#!/bin/bash
# SPDX-License-Identifier: MIT
# test_units.sh PUNCTUAL UNIT_DIR: the systemd units as this build configures them.
# systemd-analyze verify accepts the service (its ExecStart pointed at this build's
# binary) and the timer; systemd-analyze security --offline rates the service's exposure
# at most MAX_EXPOSURE. The textfile directory is one in the unit and in tmpfiles.d's
# punctual-probe.conf, which creates it when missing and leaves an existing one as it is.
# The service's command, run as the unit confines it (lib.sh unit_confined: its
# capabilities, umask, a read-only system but the textfile directory), exits 0, still
# reads PID 1's timer slack (its one capability, CAP_SYS_NICE), leaves one file that
# another user (node_exporter's) can read, and, traced by strace, makes only system calls
# its SystemCallFilter= allows, opens no socket (RestrictAddressFamilies=none) and maps no
# memory writable and executable, nor makes any executable later (MemoryDenyWriteExecute=).
. "$(dirname "$0")/lib.sh"
skip_emulated "it runs the unit's command (the aarch64 tool) under strace in the unit's confinement: the kernel cannot exec it without a binfmt_misc handler, and strace would see qemu's calls"
UNITS=${2:?usage: $0 PUNCTUAL UNIT_DIR}
SVC=$UNITS/punctual-probe.service
MAX_EXPOSURE=4.5

if ! command -v systemd-analyze >/dev/null; then
	skip "systemd-analyze is not installed (Debian: systemd)"
else
	mkdir "$TMP/units"
	sed "s|^ExecStart=[^ ]*|ExecStart=$(realpath "$PN")|" "$SVC" >"$TMP/units/punctual-probe.service"
	cp "$UNITS/punctual-probe.timer" "$TMP/units/"
	run_cmd systemd-analyze verify "$TMP/units/punctual-probe.service" \
		"$TMP/units/punctual-probe.timer"
	check "systemd-analyze verify accepts both units (got $RC: $(head -c 300 "$ERR"))" \
		test "$RC" -eq 0
	run_cmd systemd-analyze security --offline=yes "$SVC"
	score=$(grep -o 'exposure level for [^:]*: [0-9.]*' "$OUT" | grep -o '[0-9.]*$')
	check "systemd-analyze security rates the service ($(tail -n 1 "$OUT") $(head -c 200 "$ERR"))" \
		test -n "$score"
	check "the service's exposure, ${score:-none}, is at most $MAX_EXPOSURE" \
		awk -v s="$score" -v m="$MAX_EXPOSURE" 'BEGIN { exit !(s != "" && s + 0 <= m + 0) }'
fi

# One textfile directory: the default PUNCTUAL_TEXTFILE_DIR, the one writable path, and
# what tmpfiles.d creates when it is missing (and leaves as it is when it is there).
TMPFILES=$(realpath "$(dirname "$0")/../../packaging/systemd/punctual-probe.tmpfiles")
dir=$(sed -n 's/^Environment=PUNCTUAL_TEXTFILE_DIR=//p' "$SVC")
check "the default textfile directory is the one writable path ($dir)" \
	test "$(sed -n 's/^ReadWritePaths=-\{0,1\}//p' "$SVC")" = "$dir"
check "... and the one tmpfiles.d creates" test "$(awk '$1 == "d" { print $2 }' "$TMPFILES")" = "$dir"
if [ "$(id -u)" -ne 0 ] || ! command -v systemd-tmpfiles >/dev/null; then
	skip "punctual-probe.conf applied: needs root and systemd-tmpfiles"
else
	mkdir "$TMP/root"
	run_cmd systemd-tmpfiles --create --root="$TMP/root" "$TMPFILES"
	check "systemd-tmpfiles applies punctual-probe.conf ($RC: $(head -c 200 "$ERR"))" test "$RC" -eq 0
	check "... a missing directory created root's, 0755" \
		test "$(stat -c '%a %u' "$TMP/root$dir" 2>&1)" = "755 0"
	chown 65534:65534 "$TMP/root$dir"
	chmod 750 "$TMP/root$dir"
	run_cmd systemd-tmpfiles --create --root="$TMP/root" "$TMPFILES"
	check "... an existing one left as it is (owner, mode)" \
		test "$(stat -c '%a %u' "$TMP/root$dir" 2>&1)" = "750 65534"
fi

if [ "$(id -u)" -ne 0 ] || ! command -v unshare >/dev/null || ! command -v setpriv >/dev/null; then
	skip "the confined command: needs root, unshare and setpriv (util-linux)"
	finish
	exit $?
fi

# The service's command, its environment's defaults substituted (systemd splits $VAR too).
TF=$TMP/textfile
mkdir -p "$TF"
chmod 711 "$TMP"
line=$(sed -n 's/^ExecStart=//p' "$SVC")
args=${line#* }
args=${args//'$PUNCTUAL_PROBE_OPTIONS'/--quick}
args=${args//'${PUNCTUAL_TEXTFILE_DIR}'/$TF}
STRACE=$(command -v strace)
# strace writes through descriptor 3, opened out here: the system is read-only in there.
# A sanitized build's LeakSanitizer cannot stop the world under a tracer: no leak check.
[ -n "$STRACE" ] && export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
exec 3>"$TMP/strace.log"
# shellcheck disable=SC2086
unit_confined "$SVC" "$TF" ${STRACE:+"$STRACE" -f -qq -o /dev/fd/3} "$PN" $args
exec 3>&-
if [ "$RC" -eq 125 ]; then
	skip "the confined command: cannot make the file system read-only here ($(head -c 200 "$ERR"))"
	finish
	exit $?
fi
check "the confined command exits 0 (got $RC: $(head -c 300 "$ERR"))" test "$RC" -eq 0
check "... and leaves exactly punctual.prom in the textfile directory" \
	test "$(ls "$TF")" = punctual.prom
check "... which another user (node_exporter's) can read" \
	setpriv --reuid=65534 --regid=65534 --clear-groups cat "$TF/punctual.prom" >/dev/null
# Root reads PID 1's slack with CAP_SYS_NICE; where even unconfined root cannot, no check.
if head -c 1 /proc/1/timerslack_ns >/dev/null 2>&1; then
	check "... with PID 1's timer slack, measured with the unit's one capability" \
		grep -q '^punctual_timer_slack_seconds{process="pid1"} ' "$TF/punctual.prom"
fi

if [ -z "$STRACE" ]; then
	skip "the command's system calls: strace is not installed (scripts/bootstrap installs it)"
	finish
	exit $?
fi
# The unit's SystemCallFilter= lines in order (an allow list, then ~ removals), expanded
# with systemd-analyze's own groups; every call the command made must be in it.
systemd-analyze syscall-filter >"$TMP/groups" 2>/dev/null
sed -n 's/^SystemCallFilter=//p' "$SVC" >"$TMP/filter"
check "the command makes only the system calls SystemCallFilter= allows" \
	python3 - "$TMP/groups" "$TMP/filter" "$TMP/strace.log" <<'PY'
import re, sys
groups, cur = {}, None
for line in open(sys.argv[1]):
    if line.startswith('@'):
        cur = groups.setdefault(line.split()[0], [])
    elif cur is not None and line.startswith('    ') and not line.strip().startswith('#'):
        cur.append(line.strip())
def expand(name):
    if not name.startswith('@'):
        return {name}
    if name not in groups:
        sys.exit(f'systemd-analyze does not know {name}')
    return set().union(*[expand(m) for m in groups[name]])
# An allow list when the first line is one (names join it, ~names leave it); otherwise a
# deny list (~names join it, names leave it); no line: no filter.
lines = open(sys.argv[2]).read().split('\n')[:-1]
allow_list = bool(lines) and not lines[0].startswith('~')
listed = set()
for line in lines:
    names = set().union(*[expand(n) for n in line.lstrip('~').split()])
    if line.startswith('~') != allow_list:
        listed |= names
    else:
        listed -= names
calls = set()
for line in open(sys.argv[3]):
    m = re.match(r'^\d+\s+([a-z0-9_]+)\(', line)
    if m:
        calls.add(m.group(1))
if len(calls) < 10:
    sys.exit(f'strace saw only {sorted(calls)}')
bad = sorted(calls - listed if allow_list else calls & listed)
if bad:
    sys.exit(f'not allowed by SystemCallFilter=: {bad}')
PY
check "... opens no socket (RestrictAddressFamilies=none)" \
	sh -c '! grep -Eq "^[0-9]+ +socket(pair)?\(" "$1"' sh "$TMP/strace.log"
check "... and no memory writable and executable, nor made executable (MemoryDenyWriteExecute=)" \
	sh -c '! grep -Eq "PROT_WRITE\|PROT_EXEC|^[0-9]+ +(pkey_)?mprotect\(.*PROT_EXEC" "$1"' \
	sh "$TMP/strace.log"

finish
