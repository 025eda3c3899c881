# SPDX-License-Identifier: MIT
# lib.sh: what each tests/systemd/test_*.sh sources. The test runs on the host, started by
# run.sh with the box already booted and the .deb installed in it; it acts inside through
# `box CMD...` (box.sh), finds the bound work dir at $BOX_WORK on the host and
# /opt/punctual inside, and reports one line per check: PASS, FAIL or SKIP. finish
# prints the counts and returns 1 if any check failed, 77 if all were skipped.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/box.sh"
if [ -z "${BOX_LEADER:-}" ] || [ -z "${BOX_WORK:-}" ]; then
	echo "FAIL: $(basename "$0"): run it through tests/systemd/run.sh (no box)" >&2
	exit 1
fi
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
PASSES=0 FAILS=0 SKIPS=0

pass() {
	echo "PASS: $*"
	PASSES=$((PASSES + 1))
}

fail() {
	echo "FAIL: $*"
	FAILS=$((FAILS + 1))
}

# skip REASON: a part that cannot run here says why.
skip() {
	echo "SKIP: $*"
	SKIPS=$((SKIPS + 1))
}

# check DESCRIPTION COMMAND...: passes when the command succeeds.
check() {
	local d=$1
	shift
	if "$@"; then pass "$d"; else fail "$d"; fi
}

# inbox ARGS...: runs `box ARGS...`; sets RC, OUT (its stdout file) and ERR (stderr).
NRUN=0
inbox() {
	NRUN=$((NRUN + 1))
	OUT=$TMP/out.$NRUN ERR=$TMP/err.$NRUN
	box "$@" >"$OUT" 2>"$ERR"
	RC=$?
}

# said: what the last inbox printed, stderr first, as one line of at most 400 bytes.
said() {
	cat "$ERR" "$OUT" | head -n 5 | tr '\n\t' '  ' | cut -c 1-400 | sed 's/ *$//'
}

# inbox_ok DESCRIPTION ARGS...: inbox ARGS must exit 0; a failure says what it printed.
inbox_ok() {
	local d=$1
	shift
	inbox "$@"
	if [ "$RC" -eq 0 ]; then pass "$d"; else fail "$d: exit $RC: $(said)"; fi
}

finish() {
	echo "$(basename "$0"): $PASSES passed, $FAILS failed, $SKIPS skipped"
	[ "$FAILS" -eq 0 ] || return 1
	[ "$PASSES" -eq 0 ] && [ "$SKIPS" -gt 0 ] && return 77
	return 0
}
