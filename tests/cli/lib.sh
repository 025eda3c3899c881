# SPDX-License-Identifier: MIT
# lib.sh: helpers for the CLI tests. Each test script sources this, gets the tool's path
# as $1, and calls the checks below; each failure prints a message, and finish exits 1
# if any check failed, 77 (ctest's skip) if every part was skipped and nothing was checked.
set -u
PN=${1:?usage: $0 PATH_TO_PUNCTUAL}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
# python3: the interpreter PATH names (ctest's PUNCTUAL_TEST_PYTHON3, or found here once)
# put first on PATH: a version manager's shim, as pyenv's shell script, costs several times
# the CPU of a check's own program. A link, so that python3 is a program still: in the
# background, its $! is its.
PY3=${PUNCTUAL_TEST_PYTHON3:-}
[ -x "$PY3" ] || PY3=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null)
if [ -x "$PY3" ]; then
	mkdir "$TMP/path" && ln -s "$PY3" "$TMP/path/python3" && PATH=$TMP/path:$PATH
fi
FAILS=0
PASSES=0
SKIPS=0
NRUN=0
declare -A STATUS # the exit status of the run that wrote each stdout file
declare -A VALID  # stdout files already found to hold exactly one JSON document

fail() {
	echo "FAIL: $*" >&2
	FAILS=$((FAILS + 1))
}

pass() {
	PASSES=$((PASSES + 1))
}

# skip REASON: a part that cannot run here says why (and counts towards exit 77).
skip() {
	echo "SKIP: $*"
	SKIPS=$((SKIPS + 1))
}

# run ARGS...: runs the tool; sets RC, OUT (stdout file), ERR (stderr file). Each run
# gets files of its own, so OUT stays the output of that run (and its status is known).
run() {
	run_cmd "$PN" "$@"
}

# run_cmd CMD ARGS...: like run, for any command (the tool under setpriv, in a cgroup).
run_cmd() {
	jq_flush
	NRUN=$((NRUN + 1))
	OUT=$TMP/out.$NRUN ERR=$TMP/err.$NRUN
	"$@" >"$OUT" 2>"$ERR"
	RC=$?
	STATUS[$OUT]=$RC
}

# unit_confined SERVICE DIR CMD...: runs CMD (like run_cmd: RC, OUT, ERR) as the systemd
# unit file SERVICE confines it, as far as a test can without systemd: root with only the
# unit's CapabilityBoundingSet=, no new privileges, the unit's UMask=, the file system
# read-only but DIR (ProtectSystem=strict, ReadWritePaths=DIR). RC 125: this machine
# cannot set that up. Needs root, unshare and setpriv (util-linux).
unit_confined() {
	local svc=$1 dir=$2 caps=+all mask
	shift 2
	if grep -q '^CapabilityBoundingSet=' "$svc"; then
		caps=-all$(sed -n 's/^CapabilityBoundingSet=//p' "$svc" | tr ' ' '\n' |
			sed -n 's/^CAP_\(.*\)$/,+\L\1/p' | tr -d '\n')
	fi
	mask=$(sed -n 's/^UMask=//p' "$svc" | tail -n 1)
	run_cmd unshare --mount --propagation private sh -c '
		dir=$1 mask=$2 caps=$3
		shift 3
		mount --bind "$dir" "$dir" && mount -o remount,bind,ro / || exit 125
		umask "$mask" || exit 125
		exec setpriv --no-new-privs --inh-caps=-all --bounding-set="$caps" -- "$@"' \
		sh "$dir" "${mask:-0022}" "$caps" "$@"
}

# usage_error PATTERN ARGS...: exit 2, exactly one line on stderr matching PATTERN,
# nothing on stdout.
usage_error() {
	pat=$1
	shift
	run "$@"
	if [ "$RC" -ne 2 ]; then
		fail "'$*': exit $RC, expected 2"
	elif [ -s "$OUT" ]; then
		fail "'$*': printed on stdout: $(head -c 200 "$OUT")"
	elif [ "$(wc -l <"$ERR")" -ne 1 ]; then
		fail "'$*': expected one line on stderr, got: $(cat "$ERR")"
	elif ! grep -q -- "$pat" "$ERR"; then
		fail "'$*': stderr '$(cat "$ERR")' lacks '$pat'"
	else
		pass
	fi
}

# ok ARGS...: exit 0 and something on stdout.
ok() {
	run "$@"
	if [ "$RC" -ne 0 ]; then
		fail "'$*': exit $RC: $(cat "$ERR")"
	elif [ ! -s "$OUT" ]; then
		fail "'$*': nothing on stdout"
	else
		pass
	fi
}

# json_doc FILE: true when FILE is the stdout of a run (run, run_cmd) that exited 0 and
# holds exactly one JSON document that both jq and python's json module parse; else sets
# WHY. (jq 1.6 exits 0 on an empty file, whatever the filter: never trust jq -e alone.)
json_doc() {
	WHY=""
	if [ -z "${STATUS[$1]+set}" ]; then
		WHY="$1 is not the output of a run"
	elif [ "${STATUS[$1]}" -ne 0 ]; then
		WHY="the run that wrote $1 exited ${STATUS[$1]}"
	elif [ -n "${VALID[$1]+set}" ]; then
		return 0
	elif [ "$(jq -s length "$1" 2>/dev/null)" != 1 ]; then
		WHY="$1 is not exactly one JSON document: $(head -c 300 "$1")"
	elif ! python3 -I -S -c 'import json, sys; json.load(open(sys.argv[1]))' "$1" >/dev/null 2>&1; then
		WHY="python3's json.load cannot parse $1"
	else
		VALID[$1]=1
		return 0
	fi
	return 1
}

# json_ok FILE: the check that json_doc holds.
json_ok() {
	if json_doc "$1"; then pass; else fail "$WHY"; fi
}

# jq_check DESCRIPTION JQ_ARGS... FILE: FILE passes json_doc, and jq -e JQ_ARGS FILE is
# true. A check with a filter alone waits in a queue: jq_flush evaluates a file's queued
# filters in one jq (the next run, check or finish calls it): one jq costs 30 ms here, and
# a report has tens of checks.
JQ_DESC=() JQ_FILTER=() JQ_FILE=()
jq_check() {
	if [ $# -eq 3 ] && [ "${2:0:1}" != - ]; then
		JQ_DESC+=("$1") JQ_FILTER+=("$2") JQ_FILE+=("$3")
		return
	fi
	jq_check_now "$@"
}

jq_check_now() {
	d=$1
	shift
	if ! json_doc "${!#}"; then
		fail "$d: $WHY"
	elif jq -e "$@" >/dev/null 2>&1; then
		pass
	else
		fail "$d"
	fi
}

# jq_flush: the queued checks, a jq for each file: each filter's last output neither false
# nor null, as jq -e has it, an error false. Where that jq's output is not one answer a
# filter (one that does not compile), each runs alone.
jq_flush() {
	local n=${#JQ_DESC[@]} i j f prog
	local -a desc=("${JQ_DESC[@]}") filter=("${JQ_FILTER[@]}") file=("${JQ_FILE[@]}") got
	local -A seen=()
	JQ_DESC=() JQ_FILTER=() JQ_FILE=()
	for ((i = 0; i < n; i++)); do
		f=${file[i]}
		[ -n "${seen[$f]+set}" ] && continue
		seen[$f]=1
		local -a idx=()
		prog=""
		for ((j = i; j < n; j++)); do
			[ "${file[j]}" = "$f" ] || continue
			idx+=("$j")
			prog+="${prog:+, }(try ([${filter[j]}] | length > 0 and (last | . != false and . != null)) catch false)"
		done
		if ! json_doc "$f"; then
			for j in "${idx[@]}"; do fail "${desc[j]}: $WHY"; done
			continue
		fi
		mapfile -t got < <(jq -c "$prog" "$f" 2>/dev/null)
		if [ ${#got[@]} -ne ${#idx[@]} ]; then
			for j in "${idx[@]}"; do jq_check_now "${desc[j]}" "${filter[j]}" "$f"; done
			continue
		fi
		for ((j = 0; j < ${#idx[@]}; j++)); do
			if [ "${got[j]}" = true ]; then pass; else fail "${desc[${idx[j]}]}"; fi
		done
	done
}

# interrupt SIG ARGS...: runs the tool (RC, OUT, ERR), sends SIG once it has run
# $INTERRUPT_AFTER s (default 0.3) with its handlers in place (SigCgt: SIGINT is bit 1,
# SIGTERM bit 14 of the caught mask), not on a timer a loaded machine could beat; with
# INTERRUPT_TWICE=1, SIG again 0.5 s later. PID: the tool's process id.
interrupt() {
	local sig=$1 i
	shift
	jq_flush
	NRUN=$((NRUN + 1))
	OUT=$TMP/out.$NRUN ERR=$TMP/err.$NRUN
	"$PN" "$@" >"$OUT" 2>"$ERR" &
	PID=$!
	for i in $(seq 200); do
		[ $(((0x$(awk '/^SigCgt/ {print $2}' /proc/$PID/status 2>/dev/null || echo 0)) & 0x4002)) = $((0x4002)) ] && break
		sleep 0.05
	done
	sleep "${INTERRUPT_AFTER:-0.3}"
	kill -"$sig" $PID 2>/dev/null
	if [ "${INTERRUPT_TWICE:-0}" = 1 ]; then
		sleep 0.5
		kill -"$sig" $PID 2>/dev/null
	fi
	wait $PID
	RC=$?
	STATUS[$OUT]=$RC
}

# check DESCRIPTION COMMAND...: the command must succeed.
check() {
	jq_flush
	d=$1
	shift
	if "$@"; then pass; else fail "$d"; fi
}

# needs_compare: a tool built without jansson (a musl build) has no probe --compare: it
# exits 1 with one line saying so, and the calling test ends here, skipped.
needs_compare() {
	printf '{}' >"$TMP/needs_compare.json"
	run probe --compare "$TMP/needs_compare.json" "$TMP/needs_compare.json"
	grep -q "needs punctual built with jansson" "$ERR" || return 0
	if [ "$RC" -ne 1 ] || [ -s "$OUT" ] || [ "$(wc -l <"$ERR")" -ne 1 ]; then
		fail "built without jansson: expected exit 1 and one line, got $RC: $(cat "$ERR")"
	else
		skip "punctual built without jansson: probe --compare says so and exits 1"
	fi
	finish
	exit $?
}

# skip_emulated REASON: under an emulator (PUNCTUAL_EMULATOR, set by the cross build's
# tests), a test of what it does not reproduce skips whole, saying why; never on hardware.
skip_emulated() {
	if [ -n "${PUNCTUAL_EMULATOR:-}" ]; then
		echo "SKIP: under ${PUNCTUAL_EMULATOR}: $*"
		exit 77
	fi
}

# threads_only: true in the TSan tree (PN_SANITIZER=thread, tests/CMakeLists.txt), where a
# script runs only its parts in which threads of the tool or the shim run; the ASan tree
# runs every part.
threads_only() {
	[ "${PN_SANITIZER:-}" = thread ]
}

# cgroup_remove DIR BACK: removes the test cgroup DIR, moving any process still inside to
# BACK first (rmdir fails on a cgroup with a process); non-zero where DIR stays.
cgroup_remove() {
	local p
	[ -d "$1" ] || return 0
	for p in $(cat "$1/cgroup.procs" 2>/dev/null); do
		echo "$p" >"$2/cgroup.procs" 2>/dev/null
	done
	rmdir "$1" 2>/dev/null
}

# unfinished: for a test's EXIT trap (set after track_lines): a script that ends before
# finish (a command that killed it, set -u, a signal) says where and with which status, so
# that a failure a log keeps nothing else of still says why.
track_lines() {
	trap 'LAST_LINE=$LINENO LAST_CMD=$BASH_COMMAND' DEBUG
}
unfinished() {
	local st=$1
	[ -n "${FINISHED:-}" ] && return 0
	trap - DEBUG
	echo "FAIL: $(basename "$0") ended before its last check, status $st, at line" \
		"${LAST_LINE:-?}: ${LAST_CMD:-?} ($PASSES passed, $FAILS failed so far)" >&2
}

finish() {
	jq_flush
	FINISHED=1
	echo "$PASSES passed, $FAILS failed, $SKIPS skipped"
	[ "$FAILS" -eq 0 ] || return 1
	[ "$PASSES" -eq 0 ] && [ "$SKIPS" -gt 0 ] && return 77
	return 0
}
