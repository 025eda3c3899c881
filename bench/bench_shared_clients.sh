#!/bin/bash
# SPDX-License-Identifier: MIT
# bench_shared_clients.sh BUILD_DIR: programs that know nothing of libpunctual, plain and
# under `punctual run --precise` (default budget), on an oversubscribed host: stress-ng
# --cpu 2N on N CPUs, unpinned, the program on the last CPU. A C nanosleep loop
# (sleep_loop.c) at 1, 3 and 10 ms, plain, --precise and the kernel with a 100 us slice,
# SHARED_C_ROUNDS rounds (default 4); Python asyncio (aio_loop.py), Node.js timers
# (timers.js) and the JDK's scheduler and selector (LoopTimers.java), plain and --precise
# alternating, SHARED_ROUNDS rounds (default 2). Prints Markdown.
set -eu
B=$1
PN=$B/punctual
HERE=$(dirname "$0")
ROUNDS=${SHARED_ROUNDS:-2}
# shellcheck source=bench/runtimes.sh
. "$HERE/runtimes.sh"
echo "### Real clients beside the hogs"
echo
command -v stress-ng >/dev/null || { echo "(stress-ng is not installed: not measured)"; echo; exit 0; }
N=$(nproc)
CPU=$((N - 1))
tmp=$(mktemp -d)
stress-ng --cpu $((2 * N)) --quiet &
hog=$!
trap 'kill $hog 2>/dev/null; wait $hog 2>/dev/null; rm -rf "$tmp"' EXIT
sleep 0.5

# the hogs' CPU time (ticks), all of stress-ng's workers
ticks() {
	local t=0 p
	for p in $(pgrep -P $hog); do
		t=$((t + $(awk '{print $14 + $15}' "/proc/$p/stat" 2>/dev/null || echo 0)))
	done
	echo $t
}
# run_rows OUT COL LABEL CMD...: CMD's rows, column COL (1-based) renamed LABEL, each with
# the hogs' share of their CPUs during it
run_rows() {
	local out=$1 col=$2 label=$3 t0 w0 t1 w1 share
	shift 3
	t0=$(ticks) w0=$(date +%s%N)
	taskset -c $CPU "$@" >"$tmp/rows" 2>/dev/null || true
	t1=$(ticks) w1=$(date +%s%N)
	share=$(((t1 - t0) * 100000000000 / $(getconf CLK_TCK) / (w1 - w0) / N))
	grep '^|' "$tmp/rows" | awk -F'|' -v OFS='|' -v c=$((col + 1)) -v l="$label" -v s="$share" \
		'{$c = " " l " "; $NF = " " s " |"; print}' >>"$out"
}
# client NAME COL HEADER CMD...: ROUNDS rounds of plain, then --precise, CMD's rows each
# (COL: the column that names the run)
client() {
	local name=$1 col=$2 header=$3 r
	shift 3
	: >"$tmp/$name"
	for r in $(seq "$ROUNDS"); do
		run_rows "$tmp/$name" "$col" "plain, round $r" "$@"
		run_rows "$tmp/$name" "$col" "--precise, round $r" "$PN" run --precise -- "$@"
	done
	echo "$header"
	echo "$header" | awk -F'|' '{s = "|"; for (i = 2; i < NF; i++) s = s (i <= 3 ? "---|" : "---:|"); print s}'
	# the rows of one loop together (a run-named table stays in run order)
	if [ "$col" = 2 ]; then sort -t'|' -k2,2 -s "$tmp/$name"; else cat "$tmp/$name"; fi
	echo
}

echo "The same programs as \"Event-loop waits under run --precise\", on an oversubscribed"
echo "host: stress-ng --cpu $((2 * N)) on $N CPUs, unpinned, each program pinned to CPU $CPU,"
echo "plain and under \`punctual run --precise\` (default budget, learned slice) in turn,"
echo "$ROUNDS rounds. Lateness in us against the instant the program asked for; CPU % as"
echo "there; hogs % = stress-ng's share of the CPUs during that run. On this host plain"
echo "waits are late by whole scheduler slices (ms) at the p99 (the hogs' turn), and a"
echo "wait the shim spins through loses the CPU the same way: punctual's rule there is no"
echo "spin (the thread's run-queue wait, or a spin that lost the CPU to the run queue, says"
echo "the CPU is shared) and a short EEVDF slice (Linux 6.12+), so that the wakeup"
echo "preempts a hog. Target (issue 40): never worse than plain at the p99."
echo
# The C loop: each length's table in run order, a round's three runs together (the hogs'
# placement changes between rounds and moves every variant's tail alike), then how many
# rounds met the targets.
C_ROUNDS=${SHARED_C_ROUNDS:-4}
TAIL=300000
echo "A C loop of nanosleep(L) (sleep_loop.c), at 1, 3 and 10 ms (2000, 1000 and 1000"
echo "sleeps), $C_ROUNDS rounds of three runs: plain (50 us slack, the kernel's own slice),"
echo "\`run --precise\` (the default), and the kernel at 1 ns slack with a 100 us slice"
echo "(\`run --slack 1ns --slice=100us\`, no shim: the best fixed slice). late > 0.3 ms ="
echo "the share of sleeps a scheduler turn delayed: the p99 falls in that tail when the"
echo "share is over 1%."
echo
for len in 1000000:2000 3000000:1000 10000000:1000; do
	iv=${len%:*} n=${len#*:}
	: >"$tmp/c"
	for r in $(seq "$C_ROUNDS"); do
		run_rows "$tmp/c" 1 "plain, round $r" "$B/bench/sleep_loop" c "$iv" "$n" $TAIL
		run_rows "$tmp/c" 1 "--precise, round $r" "$PN" run --precise -- \
			"$B/bench/sleep_loop" c "$iv" "$n" $TAIL
		run_rows "$tmp/c" 1 "slice 100 us, round $r" "$PN" run --slack 1ns --slice=100us \
			-- "$B/bench/sleep_loop" c "$iv" "$n" $TAIL
	done
	echo "#### C loop, $((iv / 1000000)) ms sleeps"
	echo
	echo "| run | n | p50 | p99 | p99.9 | max | early | late > 0.3 ms % | CPU % | hogs % |"
	echo "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"
	cat "$tmp/c"
	echo
	# rows come as plain, --precise, slice for each round: p99 is field 5
	awk -F'|' -v R="$C_ROUNDS" '
		NR % 3 == 1 { pl = $5 + 0 } NR % 3 == 2 { pr = $5 + 0 }
		NR % 3 == 0 { sl = $5 + 0; a += (pr <= pl); b += (pr <= pl / 2); c += (pr <= sl) }
		END { printf("--precise p99 <= plain in %d of %d rounds, <= plain/2 in %d, " \
		             "<= the 100 us slice in %d.\n\n", a, R, b, c) }' "$tmp/c"
done
# Why the 1 ms rows: where in the tick the late wakeups' deadlines fall, and how the loop's
# period moves their share (docs/DESIGN.md, "When the CPU is shared": the tick).
echo "Where the 1 ms tail comes from (tick_phase.c: the same loop, each deadline's phase"
echo "in the scheduler tick noted in bins of a twentieth of a tick): plain, the kernel at"
echo "1 ns slack with a 100 us slice (what a precise wait without a spin does here) at 1 ms"
echo "and at 1.05 ms, and \`run --precise\`; 2000 sleeps, $C_ROUNDS rounds. worst bin = the"
echo "bin whose deadlines were most often later than 0.3 ms (its start, us past the"
echo "coarse clock's tick); in it / late there / late elsewhere: the share of the"
echo "deadlines that fell in it, of those later than 0.3 ms, of the others."
echo
: >"$tmp/t"
for r in $(seq "$C_ROUNDS"); do
	run_rows "$tmp/t" 1 "plain, round $r" "$B/bench/tick_phase" c 1000000 2000 $TAIL
	run_rows "$tmp/t" 1 "slice 100 us, round $r" "$PN" run --slack 1ns --slice=100us -- \
		"$B/bench/tick_phase" c 1000000 2000 $TAIL
	run_rows "$tmp/t" 1 "slice 100 us, round $r" "$PN" run --slack 1ns --slice=100us -- \
		"$B/bench/tick_phase" c 1050000 2000 $TAIL
	run_rows "$tmp/t" 1 "--precise, round $r" "$PN" run --precise -- \
		"$B/bench/tick_phase" c 1000000 2000 $TAIL
done
echo "| run | period us | n | p50 | p99 | late > 0.3 ms % | worst bin us | in it % | late there % | late elsewhere % | CPU % | hogs % |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
cat "$tmp/t"
echo
if command -v "$PY" >/dev/null; then
	echo "Python asyncio: 1000 waits at 1 ms, 150 at 10 ms, after 50."
	echo
	client py 2 "| loop | run | p50 | p99 | CPU % | hogs % |" "$PY" "$HERE/aio_loop.py" bench python
fi
if command -v "$NODE" >/dev/null; then
	echo "Node.js setTimeout chains: 1000 at 1 ms, 150 at 10 ms, after 50."
	echo
	client node 2 "| timer | run | vs asked p50 | p99 | vs its deadline p50 | p99 | CPU % | hogs % |" \
		"$NODE" "$HERE/timers.js" bench node
fi
if command -v "$JAVAC" >/dev/null && command -v "$JAVA" >/dev/null; then
	"$JAVAC" -d "$tmp" "$HERE/LoopTimers.java"
	echo "The JDK: ScheduledThreadPoolExecutor.schedule(1 ms) and Selector.select(1), 1000"
	echo "each after 200."
	echo
	client java 2 "| timer | run | vs asked p50 | p99 | vs its deadline p50 | p99 | CPU % | hogs % |" \
		"$JAVA" -cp "$tmp" LoopTimers bench java
fi
