#!/bin/bash
# SPDX-License-Identifier: MIT
# test_compare_scale.sh: `punctual probe --compare` on generated reports of 40000 figures
# and on absurd values. Every figure is joined to its namesake (an array of cells, one wide
# object with "_min" ranges, a wide host section), a parameter shared by all N cells
# skips them all once, duplicate names join first to first; the verdicts and counts are
# exact. Absurd values (1e300, 48-digit integers, infinite ratios) keep the table's columns
# and the JSON valid. No speed is asserted (docs/DESIGN.md has the join's n log n against
# the per-figure scan it replaced): N is as large as the entry can be under ASan within a
# tenth of its TIMEOUT. A tool built without jansson skips it (needs_compare).
. "$(dirname "$0")/lib.sh"

needs_compare

N=40000

# gen KIND SIDE N FILE: a probe report of kind cells, wide, params or dups, side a or b.
gen() {
	python3 - "$@" <<'EOF'
import json, sys
kind, side, n, path = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
b = side == "b"
doc = {"tool": "punctual", "command": "probe", "version": "x", "host": {"kernel": "k"}}
if kind == "cells":
    # cell i: count i+1 in a; in b, every 10th is 10x (worse for a count), the last
    # cell is only in a, one more only in b
    cells = [{"mechanism": "m%d" % i, "interval_ns": 1000 * (i % 7 + 1),
              "count": (i + 1) * (10 if b and i % 10 == 0 else 1)} for i in range(n - 1)]
    cells.append({"mechanism": ("b" if b else "a") + "-only", "count": 1})
    doc["sleeps"] = {"cells": cells}
elif kind == "wide":
    # one object: k<i>_ns with its k<i>_ns_min, the same in both but for k0 (3x dearer
    # in b, range too); and a host section of n facts, one of which differs
    w = {}
    for i in range(n // 2):
        v = 100.0 + i
        if b and i == 0:
            v *= 3
        w["k%d_ns" % i] = v
        w["k%d_ns_min" % i] = v * 0.9
    doc["clocks"] = w
    doc["host"] = {"f%d" % i: i for i in range(n)}
    if b:
        doc["host"]["f7"] = -7
elif kind == "params":
    # n cells of one identity whose run differs (samples 1 -> 2): skipped, once each
    doc["timers"] = {"cells": [{"id": "x", "samples": 1 + b, "count": 5, "lost": i}
                               for i in range(n)]}
    doc["cpus"] = {"usable": 2}
elif kind == "dups":
    # n cells of one identity in each: the first pair joins, the rest are only in a
    doc["why_late"] = {"causes": [{"cause": "irq", "count": 3} for _ in range(n)]}
with open(path, "w") as f:
    json.dump(doc, f)
EOF
}

for kind in cells wide params dups; do
	gen $kind a $N "$TMP/$kind-a.json"
	gen $kind b $N "$TMP/$kind-b.json"
done

run probe --compare --json "$TMP/cells-a.json" "$TMP/cells-b.json"
# cells 0, 10, ..., N-10 are 10x in b: N/10, less cell 0 (1 -> 10 is within its noise)
jq_check "cells: every shared cell joined, every 10th worse, the rest the same" --argjson n $N \
	'(.figures | length) == $n - 1 and .summary.worse == $n / 10 - 1
	 and .summary.same == $n - $n / 10
	 and .summary.better == 0' "$OUT"
jq_check "cells: a row is its own cell's (m12345 the same, m12340 10x worse)" \
	'any(.figures[]; .figure == "m12345 5 us count" and .before == 12346 and .after == 12346)
	 and any(.figures[]; .figure == "m12340 7 us count" and .before == 12341 and .after == 123410
	         and .verdict == "worse")' "$OUT"
jq_check "cells: the cell only in one report is skipped, once each" \
	'[.skipped[].figure] | sort == ["a-only count", "b-only count"]' "$OUT"

run probe --compare --json "$TMP/wide-a.json" "$TMP/wide-b.json"
jq_check "wide object: every figure a range, only the 3x dearer one worse" --argjson n $N \
	'(.figures | length) == $n / 2 and all(.figures[]; .rule == "range")
	 and ([.figures[] | select(.verdict != "same") | .figure] == ["k0_ns"])
	 and .summary.worse == 1' "$OUT"
jq_check "wide host section: the one fact that differs" \
	'.facts == [{"name": "host f7", "before": "7", "after": "-7"}]' "$OUT"

run probe --compare --json "$TMP/params-a.json" "$TMP/params-b.json"
jq_check "a differing parameter in $N cells: each cell's figures skipped once, with why" \
	--argjson n $N \
	'(.skipped | length) == 2 * $n
	 and all(.skipped[]; .reason == "different runs: x samples 1 -> 2")
	 and (.figures | map(.figure)) == ["usable"]' "$OUT"

run probe --compare --json "$TMP/dups-a.json" "$TMP/dups-b.json"
jq_check "$N duplicate names: first joins first, the rest are only in the first report" \
	--argjson n $N \
	'(.figures | length) == 1 and (.skipped | length) == $n - 1
	 and all(.skipped[]; .reason | startswith("only in"))' "$OUT"

# Absurd values: kept in their columns (verdicts start at one offset, no value wider than
# its column), the ratio of opposite huge values too; the JSON stays valid.
cat >"$TMP/abs-a.json" <<'EOF'
{"tool": "punctual", "command": "probe", "clocks": {"sources": [
  {"id": "big", "ns_per_read": 3e56}, {"id": "neg", "ns_per_read": -1e300},
  {"id": "tiny", "ns_per_read": 1e-300}, {"id": "plain", "ns_per_read": 25.5}]},
 "why_late": {"causes": [{"cause": "huge", "count": 1.5e300},
  {"cause": "wide", "count": -123456789012345678901234567890123456789012345678},
  {"cause": "max", "count": 1.7e308}, {"cause": "plain", "count": 40}]}}
EOF
cat >"$TMP/abs-b.json" <<'EOF'
{"tool": "punctual", "command": "probe", "clocks": {"sources": [
  {"id": "big", "ns_per_read": -8e300}, {"id": "neg", "ns_per_read": 2.67e294},
  {"id": "tiny", "ns_per_read": 5e300}, {"id": "plain", "ns_per_read": 25.5}]},
 "why_late": {"causes": [{"cause": "huge", "count": -4e294},
  {"cause": "wide", "count": 123456789012345678901234567890123456789012345678},
  {"cause": "max", "count": -1.7e308}, {"cause": "plain", "count": 40}]}}
EOF
COLUMNS= ok probe --compare "$TMP/abs-a.json" "$TMP/abs-b.json"
T=$OUT
check "absurd values: within 80 columns" sh -c '! awk "length > 80" "$1" | grep -q .' sh "$T"
# a row at 80 columns: 2 + 39 name, then 1 + 10 + 1 + 10 + 1 + 7 right-aligned, 2 spaces,
# the verdict (7 wide: "context")
ROWS=$(grep -cE '^  [^ ].* (same|better|worse)$' "$T")
check "absurd values: 8 rows (got $ROWS)" test "$ROWS" -eq 8
check "absurd values: every verdict in its column" awk '
	/^  [^ ].* (same|better|worse)$/ {
		v = substr($0, 74); h = substr($0, 42, 32)
		if (v !~ /^(same|better|worse)$/ || h !~ /^ +[^ ]+( [a-z]+)? +[^ ]+( [a-z]+)? +[^ ]+  $/)
			bad = bad "\n" $0
	}
	END { if (bad != "") { print "misaligned:" bad > "/dev/stderr"; exit 1 } }' "$T"
check "absurd values: no 13-digit run anywhere" sh -c '! grep -qE "[0-9]{13}" "$1"' sh "$T"
check "absurd values: 1e-300 ns shows as such, not as 0.0 ns" grep -q '1e-300 ns' "$T"
check "absurd values: a plain row is untouched" grep -qE '^  plain ns_per_read +25\.5 ns +25\.5 ns +1  same$' "$T"
run probe --compare --json "$TMP/abs-a.json" "$TMP/abs-b.json"
jq_check "absurd values: valid JSON, an infinite ratio as null" \
	'(.figures | length) == 8 and any(.figures[]; .figure == "tiny ns_per_read" and .ratio == null)' \
	"$OUT"

finish
