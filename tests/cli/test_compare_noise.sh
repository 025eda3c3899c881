#!/bin/bash
# SPDX-License-Identifier: MIT
# test_compare_noise.sh: `punctual probe --compare` on recorded reports of this tool
# (tests/fixtures/compare/, recommendations cut): three A/A pairs (two back-to-back
# `probe --quick --json` of one busy host) and a real change (the same probe under
# `punctual run --slack 50us`, then `--slack 1ns`). Invariants: on each A/A pair at most
# 5% of the judged rows are worse; the real change's sleeps at the process's slack come
# out better; no identifier or sample count is judged; a quantile the report cannot
# support (a p99 of fewer than 100 samples) is skipped, saying so, never judged; an
# adaptive wait's figures "vary"; the headline ratios hold their values in their
# intervals; the background load is stated, and a difference in it warned of; 80 columns.
. "$(dirname "$0")/lib.sh"
needs_compare
F=$(cd "$(dirname "$0")/../fixtures/compare" && pwd)

for p in aa01 aa02 aa03; do
	ok probe --compare --json "$F/$p-a.json" "$F/$p-b.json"
	json_ok "$OUT"
	jq_check "$p (A/A): at most 5% of the judged rows worse" \
		'.summary as $s | ($s.better + $s.worse + $s.same) as $n | $n > 100 and $s.worse * 20 <= $n' "$OUT"
	jq_check "$p: no sample count, CPU of others or cause's share judged" \
		'all(.figures[] | select(.figure | test("(^| )(n|cycles|cpus|processes|runnable|share|budget_ppm|margin_ns|max_ns)$"));
		     .verdict == "context")' "$OUT"
	jq_check "$p: a p99 of fewer than 100 samples is skipped, never judged" \
		'any(.skipped[]; .reason | test("^p99 of [0-9]+ samples (before|after) \\(needs 100\\)$"))
		 and all(.figures[] | select(.section == "sleeps" and (.figure | test(" (100 us|1 ms),.* p99$"))); false)' "$OUT"
	jq_check "$p: an adaptive wait's figures vary, never better or worse" \
		'[.figures[] | select(.figure | test("^(precise:|(100 us|1 ms|10 ms) (budget|default))"))] as $f
		 | ($f | length) > 0 and all($f[]; .verdict == "varies" or .verdict == "context")' "$OUT"
	jq_check "$p: the headlines' ratios hold their values" \
		'(.headlines | length) >= 2 and all(.headlines[]; .ratio_interval[0] <= .ratio and (.ratio_interval[1] == null or .ratio <= .ratio_interval[1]))' "$OUT"
	jq_check "$p: both reports' background load stated" \
		'.load.before_cpus >= 0 and .load.after_cpus >= 0 and (.load.differs == ((.load.before_cpus - .load.after_cpus) | fabs >= 0.5))' "$OUT"
	run_cmd env -u COLUMNS "$PN" probe --compare "$F/$p-a.json" "$F/$p-b.json"
	check "$p: the table fits 80 columns" test "$(awk 'length > 80' "$OUT" | wc -l)" -eq 0
	check "$p: the headline summary" grep -q '^  1 ms loop, p99 lateness .* x ' "$OUT"
done
# aa01's loads differ (0.70 and 4.46 CPUs): the text warns
run probe --compare "$F/aa01-a.json" "$F/aa01-b.json"
check "different background loads: a warning" grep -q '^warning: the background load differed' "$OUT"
jq 'del(.why_late.others)' "$F/aa01-b.json" >"$TMP/noload.json"
run probe --compare "$F/aa01-a.json" "$TMP/noload.json"
check "a report without the load: said" grep -q "^note: AFTER records no background load" "$OUT"

# the real change: 50 us of timer slack to 1 ns
ok probe --compare --json "$F/slack-50us.json" "$F/slack-1ns.json"
json_ok "$OUT"
jq_check "slack 50 us -> 1 ns: nanosleep's median at the process's slack better" \
	'any(.figures[]; .figure == "nanosleep 1 us, process slack overshoot_ns p50" and .verdict == "better")' "$OUT"
jq_check "... no sleep at the process's slack worse, and nothing worse at all" \
	'.summary.worse == 0' "$OUT"
ok probe --compare --json "$F/slack-1ns.json" "$F/slack-50us.json"
jq_check "reversed: that median worse" \
	'any(.figures[]; .figure == "nanosleep 1 us, process slack overshoot_ns p50" and .verdict == "worse")' "$OUT"
finish
