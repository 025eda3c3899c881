#!/bin/bash
# SPDX-License-Identifier: MIT
# test_preload_clients.sh PUNCTUAL BENCH_DIR: real event-loop clients, unmodified, under
# `punctual run --precise`: Python's selectors and asyncio (bench/aio_loop.py), Node.js
# timers and sockets (bench/timers.js), the JDK's ScheduledThreadPoolExecutor and
# Selector (bench/LoopTimers.java) print the same stdout with and without the shim
# (counts, order of callbacks, results; never a time), and none wakes before its runtime
# guarantees (each counts its own early wakeups against its own clock: "early: 0"). The
# shim must really be in them (stderr). A runtime that is absent is skipped.
. "$(dirname "$0")/lib.sh"
skip_emulated "python3, node and java are the host's x86_64 programs, which cannot load the aarch64 shim"
BENCH=${2:?usage: $0 PUNCTUAL BENCH_DIR}
# shellcheck source=bench/runtimes.sh
. "$BENCH/runtimes.sh"

# same NAME SHIMLINE CMD...: CMD's stdout plain and under each precision is the same,
# ends with "early: 0", and under the shim stderr has SHIMLINE (a grep -E pattern).
same() {
	name=$1 shimline=$2
	shift 2
	run_cmd "$@"
	plain=$OUT
	if [ "$RC" -ne 0 ]; then
		fail "$name plain: exit $RC: $(head -c 400 "$ERR")"
		return
	fi
	check "$name plain: never early ($(tail -n 1 "$plain"))" test "$(tail -n 1 "$plain")" = "early: 0"
	for args in "--precise" "--precise=1us --slack 1ns"; do
		# shellcheck disable=SC2086
		run run $args -- "$@"
		if [ "$RC" -ne 0 ]; then
			fail "$name $args: exit $RC: $(head -c 400 "$ERR")"
			continue
		fi
		check "$name $args: the shim is in use ($(grep '^shim:' "$ERR"))" grep -Eq "$shimline" "$ERR"
		check "$name $args: the same output as without the shim: $(diff "$plain" "$OUT" | head -n 6)" \
			cmp -s "$plain" "$OUT"
	done
}

if command -v "$PY" >/dev/null; then
	same "python3 selectors and asyncio" '^shim: loaded, [1-9][0-9]* calls made precise' \
		"$PY" "$BENCH/aio_loop.py" check
else
	skip "no python3"
fi

if command -v "$NODE" >/dev/null; then
	# libuv's loop clock is CLOCK_MONOTONIC truncated to ms, or CLOCK_MONOTONIC_COARSE
	# (clock id 6) where its resolution is <= 1 ms: a timer can run that much sooner than
	# setTimeout's call + its delay, measured on hrtime.
	tol=$("$PY" -c 'import time; print(1 if time.clock_getres(6) > 0.001 else 2)' 2>/dev/null || echo 2)
	same "node setTimeout, setInterval, net" '^shim: mapped' "$NODE" "$BENCH/timers.js" check "$tol"
else
	skip "no node"
fi

if command -v "$JAVAC" >/dev/null && command -v "$JAVA" >/dev/null; then
	if "$JAVAC" -d "$TMP" "$BENCH/LoopTimers.java" 2>"$TMP/javac.err"; then
		same "java ScheduledThreadPoolExecutor, Selector" '^shim: mapped' "$JAVA" -cp "$TMP" LoopTimers check
	else
		fail "javac LoopTimers.java: $(head -c 400 "$TMP/javac.err")"
	fi
else
	skip "no JDK (javac, java)"
fi

finish
