#!/bin/bash
# SPDX-License-Identifier: MIT
# bench_shared.sh BUILD_DIR: precise waits when the CPU is shared (bench_shared.c): beside
# two CPU hogs per CPU, unpinned (an oversubscribed host), then beside one hog pinned to the
# sleeper's CPU; SHARED_N sleeps per variant at 1 and 3 ms (a quarter at 10 ms), default
# 1000. Prints Markdown.
set -eu
B=$1
N=${SHARED_N:-1000}
echo "## Precise when the CPU is shared (bench_shared)"
echo
echo "Sleeps of 1, 3 and 10 ms beside CPU hogs the run starts itself (threads of the"
echo "measuring process, tools/punctual/measure/frontier.c), every variant in turn, sleep by"
echo "sleep, on the last CPU: a plain program (clock_nanosleep at the default 50 us slack and"
echo "the kernel's own EEVDF slice), the kernel alone at 1 ns slack, the same with a 100 us"
echo "slice (sched_setattr, Linux 6.12+), fixed margins of 125 and 500 us then a spin,"
echo "pn_sleep_until(deadline, 10 us) at its default (its learned slice; no spin while the"
echo "CPU is shared) and at a 10% budget, the default at SCHED_FIFO 10 (\`run --rt\`; root"
echo "here), and a pure spin. $N sleeps per variant at 1 and 3 ms, $((N / 4)) at 10 ms."
echo "Lateness in us; CPU % = the sleeper's CPU time over its sleeps' time; hogs % = the"
echo "hogs' share of their CPUs; fair % = their CPU time against what the sleeper left them"
echo "(100: it took only its own)."
echo
echo "### Oversubscribed: two hogs per CPU, unpinned"
echo
"$B/bench/bench_shared" shared "$N" || true
echo "### One hog pinned to the sleeper's CPU"
echo
"$B/bench/bench_shared" pinned "$N" || true
