#!/bin/bash
# SPDX-License-Identifier: MIT
# test_preload_hostile.sh PUNCTUAL HOSTILE LIBPUNCTUAL_SO [clocks]: the fourth reliability
# round (tests/preload/hostile.c). Each case prints the same with and without `punctual run
# --precise`: the program's fd 2 survives an epoll wait during which the daemon reopens its
# log there; with ppoll denied by seccomp every interposed wait gives the real call's result;
# a key destructor that sleeps leaves no state behind; a clock stepped back during a wait
# costs no CPU. Under `run --precise --stats`: a fork()ed child reports only its own thread,
# and 400 threads exiting beside the process's exit never crash it. dlclose of libpunctual,
# then a thread's exit, does not crash. With "clocks", the clock steps alone; without, the
# rest.
. "$(dirname "$0")/lib.sh"
skip_emulated "its seccomp filters and clock steps need the kernel's view, not qemu-user's"
HOSTILE=$2 SO=$3 PART=${4:-}
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"

# noppoll K: the K-th wait meets the filter first (nanosleep, poll, epoll_wait,
# sem_timedwait, sigtimedwait, pthread_cond_timedwait)
cases="stdio dup2 noppoll noppoll:3 noppoll:7 noppoll:9 noppoll:10 noppoll:11 keydtor"
# the clock steps change the machine's clocks for a few seconds (put back at the end):
# root only, and ctest runs their entry alone (cli.preload_hostile.clocks, RUN_SERIAL)
if [ "$PART" = clocks ]; then
	if [ "$(id -u)" != 0 ]; then
		skip "the clock steps: root sets the clocks"
		finish
		exit $?
	fi
	cases="taistep rtstep"
fi
for c in $cases; do
	args=${c/:/ }
	# shellcheck disable=SC2086
	"$HOSTILE" $args >"$TMP/plain" 2>"$TMP/plain.err"
	rc=$?
	if [ $rc = 77 ]; then
		skip "$c: $(grep SKIP "$TMP/plain")"
		continue
	fi
	check "$c: runs without the shim ($rc: $(head -c 200 "$TMP/plain.err"))" test $rc -eq 0
	check "$c: printed its lines" test -s "$TMP/plain"
	# shellcheck disable=SC2086
	"$PN" run --precise=1us -- "$HOSTILE" $args >"$TMP/shim" 2>"$TMP/shim.err"
	rc=$?
	check "$c under the shim: exit 0, never early ($rc: $(head -c 200 "$TMP/shim.err"))" \
		test $rc -eq 0
	check "$c: the same as without the shim ($(diff "$TMP/plain" "$TMP/shim" | head -6 | tr '\n' ' '))" \
		diff "$TMP/plain" "$TMP/shim"
done
if [ "$PART" = clocks ]; then
	finish
	exit $?
fi
"$HOSTILE" noppoll >"$TMP/plain" 2>&1
check "noppoll: plain, only ppoll fails ($(grep EPERM "$TMP/plain" | tr '\n' ' '))" \
	test "$(grep -c 'EPERM' "$TMP/plain")" -eq 1

# a fork()ed child reports its own thread, its one wait
"$PN" run --precise --stats -- "$HOSTILE" fork >"$TMP/fork" 2>"$TMP/fork.err"
check "fork: runs under run --stats" grep -q 'fork: parent' "$TMP/fork"
child=$(sed -n 's/^fork: child \([0-9]*\) slept once$/\1/p' "$TMP/fork")
n=$(grep -c '^punctual: thread' "$TMP/fork.err")
check "fork: one line per thread, 3 in all ($n: $(tr '\n' ' ' <"$TMP/fork.err" | head -c 400))" \
	test "$n" -eq 3
check "fork: the child's line counts its own wait" \
	grep -q "^punctual: thread $child: 1 waits" "$TMP/fork.err"

# --explain's reads: the program closes every descriptor and opens its own as a thread
# that waited exits; the shim keeps none, so it closes none of the program's
"$PN" run --precise --stats --explain -- "$HOSTILE" explainfd >"$TMP/xfd" 2>"$TMP/xfd.err"
rc=$?
check "explainfd: exit 0, the program's descriptor kept ($rc: $(cat "$TMP/xfd"))" \
	test $rc -eq 0 -a -n "$(grep 'still the program' "$TMP/xfd")"
"$PN" run --stats --explain -- "$HOSTILE" explainfd >"$TMP/xfd" 2>"$TMP/xfd.err"
rc=$?
check "explainfd, observing: exit 0, the program's descriptor kept ($rc: $(cat "$TMP/xfd"))" \
	test $rc -eq 0 -a -n "$(grep 'still the program' "$TMP/xfd")"

# the report at exit while 400 threads exit
crashed=0
for i in $(seq 40); do
	"$PN" run --precise --stats -- "$HOSTILE" exits >/dev/null 2>&1
	[ $? -ge 128 ] && crashed=$((crashed + 1))
done
check "exits: PUNCTUAL_STATS at exit beside 400 exiting threads crashed $crashed of 40 runs" \
	test $crashed -eq 0

# a library built with TSan cannot be dlopened by a program without it (its runtime needs
# static TLS at load), nor one with clang's UBSan (its runtime is the executable's)
needed=$(readelf -d "$SO" 2>/dev/null | grep NEEDED)
if grep -q libtsan <<<"$needed" || { ! grep -q libubsan <<<"$needed" &&
	nm -D --undefined-only "$SO" 2>/dev/null | grep -q '__ubsan_'; }; then
	skip "dlclose: $SO is built with a sanitizer whose runtime a plain program lacks"
else
	"$HOSTILE" dlclose "$SO" >"$TMP/dl" 2>&1
	rc=$?
	check "dlclose then a thread's exit: exit 0 ($rc: $(tr '\n' ' ' <"$TMP/dl"))" test $rc -eq 0
	check "dlclose: the thread slept and exited" grep -q 'the thread exited' "$TMP/dl"
fi
finish
