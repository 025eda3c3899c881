#!/bin/bash
# SPDX-License-Identifier: MIT
# bench_sleep.sh PUNCTUAL: `punctual sleep --periodic` beside cyclictest (rt-tests), same
# interval, duration and policy, one after the other in this run; then an excerpt of the
# sleep matrix with the default slack and with 1 ns. Prints Markdown.
set -eu
PN=$1
DUR=${BENCH_SLEEP_DURATION:-5}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "## Periodic wakeups: punctual sleep --periodic vs cyclictest"
echo
if ! command -v cyclictest >/dev/null; then
	echo "cyclictest is not installed (Debian rt-tests; scripts/bootstrap installs it): skipped."
	echo
else
	echo "Interval 1 ms, ${DUR} s each, one thread, run one after the other. Latency = wake-up"
	echo "time - deadline, in us. Both hold /dev/cpu_dma_latency at 0 by default (cyclictest"
	echo "unless --laptop, punctual unless --dma-latency off); each policy is shown both ways."
	echo "cyclictest skips overrun periods silently; punctual counts them (missed)."
	echo
	echo "| policy | cpu_dma_latency | tool | cycles | min | avg | p99 | max | missed |"
	echo "|---|---|---|---:|---:|---:|---:|---:|---:|"
	run_pair() { # policy prio dma(0|none)
		local pol=$1 prio=$2 dma=$3 ctargs=() pnargs=()
		if [ "$pol" = fifo ]; then
			ctargs+=(-p "$prio" --policy=fifo)
			pnargs+=(--fifo "$prio")
		else
			ctargs+=(-p 0 --policy=other)
		fi
		[ "$dma" = none ] && ctargs+=(--laptop)
		[ "$dma" = none ] && pnargs+=(--dma-latency off)
		cyclictest -q -D "$DUR" -i 1000 -h 20000 "${ctargs[@]}" --json="$tmp/ct.json" >/dev/null 2>&1
		python3 - "$tmp/ct.json" "$pol" "$dma" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
t = d["thread"]["0"]
h = {int(k): v for k, v in t.get("histogram", {}).items()}
n, acc, p99 = sum(h.values()), 0, None
for us in sorted(h):
    acc += h[us]
    if p99 is None and acc >= 0.99 * n:
        p99 = us
print(f"| {sys.argv[2]} | {sys.argv[3]} | cyclictest | {t['cycles']} | {t['min']} | {t['avg']:.0f} | {p99} | {t['max']} | (not counted) |")
PY
		"$PN" sleep --periodic --interval 1ms --duration "${DUR}s" "${pnargs[@]}" --json >"$tmp/pn.json"
		jq -r --arg pol "$pol" --arg dma "$dma" '"| \($pol) | \($dma) | punctual | \(.cycles) | \(.latency_ns.min / 1000 | floor) | \(.latency_ns.mean / 1000 | round) | \(.latency_ns.p99 / 1000 | floor) | \(.latency_ns.max / 1000 | floor) | \(.missed_periods) |"' "$tmp/pn.json"
	}
	run_pair other 0 0
	run_pair other 0 none
	if [ "$(id -u)" -eq 0 ]; then
		run_pair fifo 90 0
		run_pair fifo 90 none
	fi
	echo
	echo "Reproduce one row: \`cyclictest -q -D $DUR -i 1000 -p 0 --policy=other\` and"
	echo "\`punctual sleep --periodic --interval 1ms --duration ${DUR}s --dma-latency 0\`."
	echo
fi

echo "## Sleep overshoot by timer slack (punctual sleep)"
echo
MECHS=nanosleep,clock_nanosleep_abs,select,epoll_wait,epoll_pwait2,timerfd_read,futex,io_uring
"$PN" sleep --json --slack 50us,1ns --interval 0,1us,100us,1ms --mech $MECHS --duration 12s >"$tmp/m.json"
echo "\`punctual sleep --slack 50us,1ns --interval 0,1us,100us,1ms --mech $MECHS --duration 12s\`:"
echo "median overshoot past the deadline in us (p99 in parentheses), $(jq -r '[.cells[].samples] | min' "$tmp/m.json")"
echo "samples or more per cell; early returns in the whole run: $(jq -r .early_total "$tmp/m.json")."
echo
echo "| mechanism | interval | slack 50 us | slack 1 ns |"
echo "|---|---:|---:|---:|"
jq -r '
  [.cells[] | select(.supported)] | group_by(.mechanism + "/" + (.interval_ns | tostring))
  | sort_by(.[0].interval_ns) | .[]
  | (map(select(.slack_ns == 50000))[0]) as $d | (map(select(.slack_ns == 1))[0]) as $s
  | "| \($d.mechanism) | \($d.interval_ns / 1000) us | \($d.overshoot_ns.p50 / 1000 * 10 | round / 10) (\($d.overshoot_ns.p99 / 1000 * 10 | round / 10)) | \($s.overshoot_ns.p50 / 1000 * 10 | round / 10) (\($s.overshoot_ns.p99 / 1000 * 10 | round / 10)) |"' "$tmp/m.json"
echo
