#!/bin/bash
# SPDX-License-Identifier: MIT
# bench_default.sh BUILD_DIR: whether punctual's default is the best of what it measures
# (bench_default.c): every variant the probe has, alternating sleep by sleep, idle and beside
# two CPU hogs per CPU, at 0.1, 1, 3 and 10 ms; DEFAULT_N sleeps per variant and length (at
# most 2 s of sleeps), default 400, in DEFAULT_ROUNDS rounds, default 3. Prints Markdown.
set -eu
B=$1
N=${DEFAULT_N:-400}
R=${DEFAULT_ROUNDS:-3}
echo "## The default against every variant (bench_default)"
echo
echo "Every variant \`punctual probe\` measures, each in a thread of its own (its own EEVDF"
echo "lag), the threads taking turns sleep by sleep, beside the hogs all on the last CPU"
echo "(tools/punctual/measure/frontier.c): the kernel alone at 1 ns slack, a plain"
echo "program (50 us slack), the kernel with a 100 us EEVDF slice, fixed margins of 125 and"
echo "500 us then a spin, pn_sleep_until at budgets of 5 to 50% and at its default (the"
echo "library's, its learned slice included), and a pure spin (the floor). $N sleeps per"
echo "variant and length (at most 2 s of sleeps), $R rounds; idle at a precision of 1 us,"
echo "then beside two CPU hogs per CPU at 10 us (\`run --precise\`'s). p99 in us over the rounds"
echo "(least, median, most); CPU % the median round's. Then, per length, the rounds in which"
echo "the default's p99 was within the noise (1.5x + 5 us idle, + 20 us shared)"
echo "of every variant that spent no more CPU, and at or below them."
echo
"$B/bench/bench_default" idle "$N" "$R" || true
"$B/bench/bench_default" shared "$N" "$R" || true
