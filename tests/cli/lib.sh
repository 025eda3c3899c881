# SPDX-License-Identifier: MIT
# lib.sh: helpers for the CLI tests. Each test script sources this, gets the tool's path
# as $1, and calls the checks below; the first failure exits 1 with a message.
set -u
PN=${1:?usage: $0 PATH_TO_PUNCTUAL}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
FAILS=0
PASSES=0

fail() {
	echo "FAIL: $*" >&2
	FAILS=$((FAILS + 1))
}

pass() {
	PASSES=$((PASSES + 1))
}

# run ARGS...: runs the tool; sets RC, OUT (stdout file), ERR (stderr file).
run() {
	OUT=$TMP/out ERR=$TMP/err
	"$PN" "$@" >"$OUT" 2>"$ERR"
	RC=$?
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

# json_ok FILE: parses with both jq and python's json module.
json_ok() {
	if ! jq -e . "$1" >/dev/null 2>&1; then
		fail "jq cannot parse $1: $(head -c 300 "$1")"
	elif ! python3 -m json.tool "$1" >/dev/null 2>&1; then
		fail "python3 -m json.tool cannot parse $1"
	else
		pass
	fi
}

# check DESCRIPTION COMMAND...: the command must succeed.
check() {
	d=$1
	shift
	if "$@"; then pass; else fail "$d"; fi
}

finish() {
	echo "$PASSES passed, $FAILS failed"
	[ "$FAILS" -eq 0 ]
}
