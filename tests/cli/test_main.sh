#!/bin/bash
# SPDX-License-Identifier: MIT
# test_main.sh: top-level behaviour and bad input common to every subcommand.
. "$(dirname "$0")/lib.sh"

ok --help
check "--help lists clock" grep -q '^  clock' "$OUT"
ok --version
check "--version names the version" grep -Eq '^punctual [0-9]+\.[0-9]+\.[0-9]+' "$OUT"
ok --version --json
jq_check "--version --json: the tool's and the library's versions" \
	'.tool == "punctual" and .command == "--version" and (.version | test("^[0-9]+\\.[0-9]+\\.[0-9]+")) and (.libpunctual | length) > 0' "$OUT"
usage_error "takes only --json" --version --csv
ok clock --help
check "clock --help has usage" grep -q '^usage: punctual clock' "$OUT"

usage_error "unknown command 'bogus'" bogus
usage_error "unknown option '--bogus'" --bogus
usage_error "unknown option '--bogus'" clock --bogus
usage_error "unknown option '-x'" clock -x
usage_error "needs a value" clock --duration
usage_error "unexpected argument 'extra'" clock extra
usage_error "try 'punctual clock --help'" clock --nope
# durations: malformed, negative, overflowing, out of range
for bad in "" abc -1 -5ms 5x 1e3 1.2.3 ms 0x10 " 5"; do
	usage_error "is not a duration" clock --duration "$bad"
done
for big in 99999999999999999999 9223372036854775808ns 9999999999s; do
	usage_error "too large" clock --duration "$big"
done
usage_error "out of range" clock --duration 0
usage_error "out of range" clock --duration 1ms
usage_error "is not a duration" clock --duration 2x
usage_error "out of range" clock --duration 2h
# durations take m and h, and terms ("1m30s")
ok clock --duration 0.0005m --json
# help, suggestions, options alone are probe's
ok help sleep
check "help sleep prints sleep's help" grep -q -- '--periodic' "$OUT"
usage_error "did you mean 'probe'" prbe
usage_error "did you mean 'sleep'" help slep
usage_error "did you mean '--interval'" sleep --interal 1ms
usage_error "punctual probe: unknown option '--bogus'" --bogus
# one unit rule: every option that takes a duration refuses a bare number (but 0)
for c in "clock --duration" "sleep --duration" "sleep --interval" "sleep --slack" \
	"sleep --periodic --explain=" "sleep --periodic --stop-above" \
	"sleep --periodic --histogram h --histogram-max" "sleep --dma-latency" "cpus --watch --interval" \
	"run --slack" "run --precise=" "timers --precision" "timers --duration" "timers --delay fixed:" \
	"slack -p $$"; do
	# shellcheck disable=SC2086
	case $c in *=|*:) usage_error "needs a unit" ${c}1000 ;; *) usage_error "needs a unit" $c 1000 ;; esac
done
ok sleep --periodic --interval 1ms --duration 0.05s --stop-above 0.5s
# every help fits 80 columns: the top level's, that of each command it lists, and
# probe --compare's
run --help
cmds=$(sed -n '/^commands:$/,/^$/s/^  \([a-z][a-z]*\) .*/\1/p' "$OUT")
check "--help lists the seven commands, or more (got: $(tr '\n' ' ' <<<"$cmds"))" \
	test "$(wc -l <<<"$cmds")" -ge 7
for args in "" $cmds "probe --compare"; do
	# shellcheck disable=SC2086
	run_cmd env -u COLUMNS "$PN" $args --help
	wide=$(awk 'length > 80 { printf "\n  %d: %s", length, $0 }' "$OUT")
	if [ "$RC" -ne 0 ] || [ ! -s "$OUT" ]; then
		fail "'punctual $args --help': exit $RC: $(cat "$ERR")"
	else
		check "'punctual $args --help' has lines over 80 columns:$wide" test -z "$wide"
	fi
done
# a short option means one thing in every command
# shellcheck disable=SC2086
for c in $cmds; do "$PN" $c --help; done |
	grep -oE '^ +-[a-zA-Z], --[a-z-]+' | sed 's/^ *//' | sort -u >"$TMP/shorts"
check "each short option names one long option ($(cut -c1-2 "$TMP/shorts" | uniq -d | tr '\n' ' '))" \
	test -z "$(cut -c1-2 "$TMP/shorts" | uniq -d)"
check "the short options were found" test "$(wc -l <"$TMP/shorts")" -ge 10
usage_error "out of range" clock --duration 3601s

# output that cannot reach stdout is exit 1 and one line, for the help and the version as
# for reports (issue 15)
for args in --help --version "clock --help" "timers --help"; do
	"$PN" $args >/dev/full 2>"$TMP/full.err"
	rc=$?
	check "'$args' >/dev/full exits 1 (got $rc)" test "$rc" -eq 1
	check "'$args' >/dev/full: one line on stderr" test "$(wc -l <"$TMP/full.err")" -eq 1
done

finish
