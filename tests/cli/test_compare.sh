#!/bin/bash
# SPDX-License-Identifier: MIT
# test_compare.sh: `punctual probe --compare` on a real pair of reports from this host,
# the same probe under `punctual run --slack 50us` and `--slack 1ns`: the timer slack is
# the fact that differs, every clock compared (and, on clock figures the test sets, the
# same or, one 3x dearer, worse), the reverse comparison's verdicts swapped, a worse row
# status 3 with --fail-on-worse (whether a live pair shows the slack's effect is a
# measurement: cli.compare_noise asserts it on a recorded pair); a report against itself
# is all "same"; reports with different cells, workloads or sections compare on what they
# share and list what they skipped; bad input exits 2 with one line (not JSON, with the
# line and column; a member named twice; invalid UTF-8; every truncation of a report;
# nesting past 64 levels; over 16 MiB). Two --quick probes in all, reused by every check.
# A tool built without jansson skips it all (needs_compare).
. "$(dirname "$0")/lib.sh"
skip_emulated "it compares vDSO clock costs, and qemu-user has no vDSO"

needs_compare

run_cmd "$PN" run --slack 50us -- "$PN" probe --quick --json
check "probe under --slack 50us (got $RC: $(head -c 200 "$ERR"))" test "$RC" -eq 0
A=$TMP/a.json
cp "$OUT" "$A"
run_cmd "$PN" run --slack 1ns -- "$PN" probe --quick --json
check "probe under --slack 1ns (got $RC: $(head -c 200 "$ERR"))" test "$RC" -eq 0
B=$TMP/b.json
cp "$OUT" "$B"

ok probe --compare "$A" "$B"
T=$OUT
check "the text names the slack as the fact that differs" grep -q '^  host slack_self_ns  *50000 -> 1$' "$T"
check "the text has a row per section" grep -q '^clocks ' "$T"
check "... and the summary line" grep -Eq '^[0-9]+ better, [0-9]+ worse, [0-9]+ the same' "$T"

ok probe --compare --json "$A" "$B"
J=$OUT
json_ok "$J"
jq_check "command and sides" '.command == "probe --compare" and .before.file != null and .after.file != null' "$J"
jq_check "the slack is among the facts" 'any(.facts[]; .name == "host slack_self_ns" and .before == "50000" and .after == "1")' "$J"
jq_check "every figure has a known verdict and rule, context never judged" \
	'all(.figures[]; (.verdict | IN("better","worse","same","context","varies")) and (.rule | IN("quantile","range","count","factor","exact","context"))
	     and ((.rule == "context") == (.verdict == "context")))' "$J"
# a --quick cell's p99 from fewer than 100 sleeps is skipped with the reason, not compared
jq_check "clock costs, sleep cells (p50, p99), timers and CPUs are compared" \
	'([.figures[].section] | unique) as $s | ($s | contains(["clocks","sleeps","timers","cpus"]))
	 and any(.figures[]; .figure | endswith("overshoot_ns p50"))
	 and (any(.figures[]; .figure | endswith("overshoot_ns p99"))
	      or any(.skipped[]; (.figure | endswith("overshoot_ns p99")) and (.reason | test("needs 100"))))' "$J"
# every figure both reports have joins: the frontier's variants under each length (the same
# variant at three lengths is three figures), and the shared run's
jq_check "two reports of this host: the frontier and the shared run joined, no pid compared" \
	'([.figures[] | select(.section == "frontier")] | length) > 27
	 and all(.skipped[]; .section != "frontier" and .section != "shared")
	 and all(.figures[]; .figure | test("(^|[ ._])pid([ ._]|$)") | not)' "$J"
# Whether the slack's effect is found is a measurement, not asserted on this live pair (a
# loaded machine can hide it): cli.compare_noise asserts it on a recorded pair, and the
# --fail-on-worse status below.
jq_check "sleeps at the process's slack are compared" \
	'any(.figures[]; .section == "sleeps" and (.figure | test("process slack")))' "$J"
# The clock rows' verdicts, on figures the test sets: two probes' own clock costs differ
# by whatever the machine does between them (beside CPU hogs a vDSO read can cost 2x in
# one of them), so the slack pair's clock rows are not asserted. The slack-1 report with
# the slack-50 report's clocks: every clock row the same; with one vDSO clock 3x dearer
# (its range too): that row worse, the others the same.
jq --slurpfile a "$A" '.clocks = $a[0].clocks' "$B" >"$TMP/b_clocks.json"
run probe --compare --json "$A" "$TMP/b_clocks.json"
json_ok "$OUT"
jq_check "the same clock figures: every clock row the same" \
	'[.figures[] | select(.section == "clocks")] as $c | ($c | length) > 0 and all($c[]; .verdict == "same")' "$OUT"
jq '(first(.clocks.sources[] | select(.path == "vdso"))) |= (.ns_per_read.median *= 3 | .ns_per_read.min *= 3)' \
	"$TMP/b_clocks.json" >"$TMP/b_slow.json"
SLOW=$(jq -r 'first(.clocks.sources[] | select(.path == "vdso")) | .id + " ns_per_read"' "$A")
run probe --compare --json "$A" "$TMP/b_slow.json"
json_ok "$OUT"
jq_check "one vDSO clock 3x dearer: that row worse, the other clock rows the same" --arg slow "$SLOW" \
	'[.figures[] | select(.section == "clocks")] as $c
	 | any($c[]; .figure == $slow and .verdict == "worse")
	 and all($c[] | select(.figure != $slow); .verdict == "same")' "$OUT"
jq_check "every clock both have is compared" --slurpfile a "$A" \
	'([.figures[] | select(.section == "clocks")] | length) == ($a[0].clocks.sources | length)' "$J"
jq_check "quantile and range rows carry their intervals, which hold their values" \
	'all(.figures[] | select(.rule == "quantile" or .rule == "range"); .before_interval[0] <= .before and (.before_interval[1] == null or .before <= .before_interval[1]) and .after_interval[0] <= .after and (.after_interval[1] == null or .after <= .after_interval[1]))' "$J"
jq_check "the summary counts the rows" \
	'.summary.better + .summary.worse + .summary.same + .summary.context + .summary.varies == (.figures | length)' "$J"

# the reverse: better and worse swap places; --fail-on-worse turns a worse row into status
# 3 (on the recorded slack pair, whose nanosleep median is worse reversed: a live pair may
# have none)
run probe --compare --json "$B" "$A"
json_ok "$OUT"
jq_check "reversed: as many worse as there were better" --slurpfile j "$J" \
	'.summary.worse == $j[0].summary.better and .summary.better == $j[0].summary.worse' "$OUT"
FX=$(dirname "$0")/../fixtures/compare
run probe --compare --fail-on-worse "$FX/slack-1ns.json" "$FX/slack-50us.json"
check "--fail-on-worse with a worse row: status 3 (got $RC)" test "$RC" -eq 3
check "... and the table still printed" grep -q 'worse' "$OUT"

# a report against itself: every row the same, --fail-on-worse exits 0; stdin as -
run_cmd sh -c '"$0" probe --compare --json --fail-on-worse - "$1" <"$1"' "$PN" "$A"
json_ok "$OUT"
jq_check "itself (one side from stdin): every row the same, no fact differs" \
	'.summary.better == 0 and .summary.worse == 0 and (.facts | length) == 0 and .before.file == "-"' "$OUT"

# different cells, workloads, sections: compared on what they share, the rest listed
jq 'del(.timers) | .sleeps.cells |= map(select(.mechanism != "select")) | .why_late = {causes: [{cause: "throttled", count: 3}]}' "$A" >"$TMP/c.json"
jq '.timers.count = 300 | .why_late = {causes: [{cause: "throttled", count: 3}, {cause: "irq", count: 1}]} | .sleeps.cells[0].supported = false' "$B" >"$TMP/d.json"
run probe --compare --json "$TMP/c.json" "$TMP/d.json"
json_ok "$OUT"
jq_check "cells only one report has are skipped, named" \
	'any(.skipped[]; (.figure | startswith("select ")) and (.reason | startswith("only in")))' "$OUT"
jq_check "an unsupported cell is skipped as such" 'any(.skipped[]; .reason | startswith("unsupported in"))' "$OUT"
jq_check "a section it does not know is compared too (why_late)" \
	'any(.figures[]; .section == "why_late" and .figure == "throttled count" and .verdict == "same")' "$OUT"
jq_check "... and its member only one has is skipped" 'any(.skipped[]; .figure == "irq count")' "$OUT"
jq '.timers.count = 300' "$B" >"$TMP/e.json"
run probe --compare --json "$B" "$TMP/e.json"
jq_check "a different workload (timers 100 -> 300) skips that section, saying why" \
	'(all(.figures[]; .section != "timers")) and any(.skipped[]; .section == "timers" and (.reason | test("different runs: timers 100 -> 300")))' "$OUT"

# schema version 1 wrote the clocks' sources, the CPU count and the timer demo flat;
# version 2 writes them as clock, cpus and timers --json do. A report of either version
# compares with one of the other: this report brought down to version 1's members (as
# version 1 wrote them) compares with itself row for row, every row the same; a recorded
# version 1 report (the fixtures) compares with this one in those three sections
jq '.clocks.sources |= map({id, path, ns_per_read: .ns_per_read.median,
	ns_per_read_min: .ns_per_read.min, rank,
	backward: (.backward.same_thread + (if .ordered then .backward.cross_cpu else 0 end))})
    | .cpus |= {count, online, affinity, affinity_list, cgroup_version: .cgroup.version,
	cgroup_path: (.cgroup.path // ""), limit: (.limit.cpus // 0), reason}
    | .timers |= {timers: .count, min_delay_ns: .delay.a_ns, max_delay_ns: .delay.b_ns,
	precision_percent, wakeups_without_window: .uncoalesced_wakeups,
	wakeups_with_window: .wakeups, offline_optimum, past_window, early,
	late_p99_ns: .lateness_ns.p99}' "$A" >"$TMP/v1.json"
check "the report is version 2: clock costs, the cgroup and the delays are objects" \
	jq -e '(.clocks.sources[0].ns_per_read | type) == "object" and (.cpus.cgroup | type) == "object"
	 and (.timers.delay | type) == "object"' "$A"
run probe --compare --json "$TMP/v1.json" "$A"
json_ok "$OUT"
jq_check "version 1 against version 2 of one report: every row the same, no fact differs" \
	--slurpfile j "$A" '.summary.better == 0 and .summary.worse == 0 and (.facts | length) == 0
	 and ([.figures[] | select(.section == "clocks")] | length) == ($j[0].clocks.sources | length)
	 and any(.figures[]; .section == "timers" and .figure == "wakeups_with_window")
	 and any(.figures[]; .section == "timers" and .figure == "late_p99_ns")
	 and any(.figures[]; .section == "cpus" and .figure == "count")
	 and all(.figures[]; .verdict | IN("same", "context", "varies"))' "$OUT"
run probe --compare --json "$FX/aa01-a.json" "$A"
json_ok "$OUT"
jq_check "a recorded version 1 report against this one: clocks, CPUs and timers compared" \
	'any(.figures[]; .section == "clocks" and .figure == "libc:CLOCK_MONOTONIC ns_per_read"
	     and .rule == "range")
	 and any(.figures[]; .section == "cpus" and .figure == "count")
	 and any(.figures[]; .section == "timers" and .figure == "wakeups_with_window")
	 and all(.skipped[]; .section != "clocks" and .section != "cpus")' "$OUT"

# bad input: exit 2, one line, nothing on stdout
printf '{"tool": "punctual", "command": "probe", "sleeps": [1,]}' >"$TMP/trailing.json"
printf '{"tool": "punctual",' >"$TMP/cut.json"
printf '\xff' >"$TMP/bytes.json"
: >"$TMP/empty.json"
printf '[1, 2]' >"$TMP/array.json"
printf '{"tool": "punctual", "command": "probe", "notes": "x"}' >"$TMP/nothing.json"
run cpus --json
cp "$OUT" "$TMP/cpus.json"
run probe --compare --json "$A" "$A"
cp "$OUT" "$TMP/cmp.json"
usage_error "No such file or directory" probe --compare "$A" "$TMP/missing.json"
usage_error "not valid JSON: line 1, column 55: unexpected token near ']'" probe --compare "$TMP/trailing.json" "$A"
usage_error "not valid JSON" probe --compare "$A" "$TMP/cut.json"
usage_error "not valid JSON" probe --compare "$A" "$TMP/bytes.json"
usage_error "not valid JSON" probe --compare "$A" "$TMP/empty.json"
usage_error "not a punctual report" probe --compare "$A" "$TMP/array.json"
usage_error "a report of 'punctual cpus'" probe --compare "$TMP/cpus.json" "$A"
usage_error "a report of 'punctual probe --compare'" probe --compare "$A" "$TMP/cmp.json"
usage_error "no figure in common" probe --compare "$A" "$TMP/nothing.json"
usage_error "needs two reports" probe --compare "$A"
usage_error "needs two reports" probe --compare "$A" "$B" "$B"
usage_error "only one report can come from standard input" probe --compare - -
usage_error "unknown option '--quick'" probe --compare --quick "$A" "$B"
usage_error "Is a directory" probe --compare "$A" "$TMP"

# what the reader refuses (jansson, strict): where it stops being JSON, by line and column;
# a member named twice; bytes that are not UTF-8 in a string; every truncation of a report
printf '{"tool": "punctual",\n "command": "probe",\n "x": [1,\n 2 3]}' >"$TMP/where.json"
usage_error "where.json: not valid JSON: line 4, column 4: " probe --compare "$A" "$TMP/where.json"
printf '{"tool": "punctual", "command": "probe", "tool": "punctual"}' >"$TMP/twice.json"
usage_error "twice.json: not valid JSON: line 1, column 47: duplicate object key" \
	probe --compare "$TMP/twice.json" "$A"
printf '{"tool": "punctual", "command": "probe", "note": "a\xc3\x28"}' >"$TMP/utf8.json"
usage_error "utf8.json: not valid JSON: line 1, column 51: unable to decode byte 0xc3" \
	probe --compare "$A" "$TMP/utf8.json"
SMALL='{"tool": "punctual", "command": "probe", "cpus": {"count": 2, "s": "\u00e9 \u20ac"}}'
printf '%s' "$SMALL" >"$TMP/small.json"
ok probe --compare "$TMP/small.json" "$TMP/small.json"
for ((k = 0; k < ${#SMALL}; k++)); do
	printf '%s' "${SMALL:0:k}" >"$TMP/prefix.json"
	usage_error "prefix.json: not valid JSON: line 1, column " probe --compare "$A" "$TMP/prefix.json"
done
# nesting: 64 levels are read (and compared), 65 are refused before the walk recurses
deep() {
	python3 -c 'import json, sys
d = {"tool": "punctual", "command": "probe", "cpus": {"count": 2}}
x = d["cpus"]
for _ in range(int(sys.argv[1]) - 3):
    x["n"] = {}
    x = x["n"]
x["v"] = [1]
print(json.dumps(d))' "$1"
}
deep 64 >"$TMP/deep64.json"
deep 65 >"$TMP/deep65.json"
ok probe --compare --json "$TMP/deep64.json" "$TMP/deep64.json"
jq_check "64 levels: read and compared" '.summary.same == 2' "$OUT"
usage_error "deep65.json: nested deeper than 64 levels" probe --compare "$TMP/deep65.json" "$A"
# a file over 16 MiB is refused before it is parsed
head -c $((16 << 20)) /dev/zero | tr '\0' ' ' >"$TMP/big.json"
printf '{}' >>"$TMP/big.json"
usage_error "big.json: larger than 16 MiB, not a probe report" probe --compare "$A" "$TMP/big.json"
rm -f "$TMP/big.json"

# --prom into a directory that does not exist: one line, before anything is measured
# (no progress, no report: the status and stderr say it)
usage_error "directory $TMP/none does not exist" probe --quick --prom "$TMP/none/p.prom"

finish
