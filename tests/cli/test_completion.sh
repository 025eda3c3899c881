#!/bin/bash
# SPDX-License-Identifier: MIT
# test_completion.sh PUNCTUAL COMPLETION: docs/punctual.bash-completion offers what each
# position takes: commands where punctual run expects the command it starts, that
# command's own arguments after it, values (never option names) after an option that takes
# one, real mechanism names for --mech, subcommands after help.
. "$(dirname "$0")/lib.sh"
COMP=$2
# the completion runs `punctual sleep --list`: this build's, by that name (under an
# emulator, PN is a wrapper with another name)
mkdir -p "$TMP/bin" && ln -s "$(realpath "$PN")" "$TMP/bin/punctual"
PATH=$TMP/bin:$PATH
cd "$TMP" || exit 1
mkdir -p scratch && touch scratch/notes.txt
# offers WORDS...: what the completion offers for the last of WORDS (set -- '' for a new one)
offers() {
	bash -c '
		[ -f /usr/share/bash-completion/bash_completion ] &&
			. /usr/share/bash-completion/bash_completion 2>/dev/null
		. "$0"
		COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
		_punctual
		printf "%s\n" "${COMPREPLY[@]}"' "$COMP" "$@"
}
# got WORDS...: what is offered for the last of WORDS, into $TMP/got
got() { offers "$@" >"$TMP/got"; }
got punctual run --precise pyth
check "run: the command to start is completed from commands" grep -qx python3 "$TMP/got"
got punctual run --precise -- pyth
check "run: after --, the command to start too" grep -qx python3 "$TMP/got"
got punctual run --precise -- python3 scr
check "run: then the started command's own arguments (files here)" grep -Eqx 'scratch/?' "$TMP/got"
got punctual run --bu
check "run: its options before the command" grep -qx -- '--budget=' "$TMP/got"
got punctual sleep --interval ''
check "a duration option offers durations" grep -qx 1ms "$TMP/got"
check "... and no option names" sh -c "! grep -q -- '^--' '$TMP/got'"
got punctual run --slack ''
check "--slack offers values" grep -qx 1ns "$TMP/got"
got punctual sleep --mech precise
check "--mech offers real names, a precision filled in" grep -qx 'precise-poll:1us' "$TMP/got"
check "... and no placeholder" sh -c "! grep -q ':P\$' '$TMP/got'"
got punctual help sl
check "help offers subcommands" test "$(sort "$TMP/got" | tr '\n' ' ')" = "slack sleep "
got punctual --qu
check "options alone at the top: probe's" grep -qx -- --quick "$TMP/got"
finish
