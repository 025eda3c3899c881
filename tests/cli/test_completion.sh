#!/bin/bash
# SPDX-License-Identifier: MIT
# test_completion.sh PUNCTUAL DIR GEN: the completions generated (GEN/gen.sh) from one table
# (GEN/punctual.options) into DIR. Every subcommand, and every long option of every
# --help, is in the table under its command and in all three; zsh -n and fish -n parse
# theirs (where installed). Bash's offers what each position takes: commands where
# punctual run expects the command it starts, that command's own arguments after it,
# values (never option names) after an option that takes one, also after OPTION=, real
# mechanism names for --mech, subcommands after help.
. "$(dirname "$0")/lib.sh"
DIR=$2 GEN=$3
COMP=$DIR/punctual.bash
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
got punctual run --budget = ''
check "run --budget=: budgets" grep -qx 10% "$TMP/got"
got punctual run --precise = 10us pyth
check "run --precise=P: then the command" grep -qx python3 "$TMP/got"
got punctual slack --threads ''
check "slack --threads takes no value: options" grep -qx -- --json "$TMP/got"

# the table holds every option of every --help under its command, and so do all three
sh "$GEN/gen.sh" "$GEN/punctual.options" list >"$TMP/table"
# help_opts ARGS...: the long options the --help of ARGS lists (the usage lines at the top)
help_opts() {
	"$PN" "$@" --help | grep -Eo '^ +(-[a-zA-Z], )?--[a-z][a-z-]*' | grep -Eo -- '--[a-z-]+'
}
"$PN" --help | sed -n '1,2p' | grep -Eo -- '--[a-z][a-z-]*' | sort -u >"$TMP/opts.top"
"$PN" --help | sed -n '/^commands:/,/^$/p' | awk '/^  [a-z]/ {print $1}' >"$TMP/cmds"
check "the top --help lists commands" test -s "$TMP/cmds"
for c in $(cat "$TMP/cmds"); do
	help_opts "$c" | sort -u >"$TMP/opts.$c"
done
help_opts probe --compare | sort -u >"$TMP/opts.compare"
missing=
for f in "$TMP"/opts.*; do
	c=${f##*/opts.}
	[ -s "$f" ] || { fail "$c: no option in its --help"; continue; }
	# what bash offers as this command's options, asked once
	bash -c '. "$0"; _punctual_opts "$1"' "$COMP" "$c" | tr ' ' '\n' >"$TMP/bash.$c"
	for o in $(cat "$f"); do
		grep -qx -- "$c $o" "$TMP/table" || missing="$missing $c:$o(table)"
		grep -Eqx -- "$o=?" "$TMP/bash.$c" || missing="$missing $c:$o(bash)"
		grep -q -- "'[^']*$o[=+-]*\[" "$DIR/punctual.zsh" || missing="$missing $c:$o(zsh)"
		grep -q -- "-l ${o#--}\b" "$DIR/punctual.fish" || missing="$missing $c:$o(fish)"
	done
done
for c in $(cat "$TMP/cmds"); do
	grep -qx "command $c" "$TMP/table" || missing="$missing $c(table)"
	grep -q "cmds=\"[^\"]*\b$c\b" "$COMP" || missing="$missing $c(bash)"
	grep -q "'$c:" "$DIR/punctual.zsh" || missing="$missing $c(zsh)"
	grep -q -- "-a $c -d" "$DIR/punctual.fish" || missing="$missing $c(fish)"
done
check "every command and option of the --help texts is completed:${missing:- all are}" \
	test -z "$missing"

# zsh and fish parse theirs
for sh in zsh fish; do
	if command -v "$sh" >/dev/null; then
		check "$sh -n parses punctual.$sh" "$sh" -n "$DIR/punctual.$sh"
	else
		skip "$sh is not installed (scripts/bootstrap installs it)"
	fi
done
if command -v fish >/dev/null; then
	# fish alone can be asked what it completes, without a terminal
	fish -c "source '$DIR/punctual.fish'; complete -C 'punctual sleep --interval '" >"$TMP/got"
	check "fish: a duration option offers durations" grep -q '^1ms' "$TMP/got"
	fish -c "source '$DIR/punctual.fish'; complete -C 'punctual run --precise pyth'" >"$TMP/got"
	check "fish: run's command is completed from commands" grep -q '^python3' "$TMP/got"
fi
finish
