#!/bin/bash
# SPDX-License-Identifier: MIT
# test_preload_semantics.sh PUNCTUAL SEMANTICS PWAIT2: the cases where the shim once differed from
# the real calls (tests/preload/semantics.c: small stacks, ignored signals, cancellation,
# EINTR after the deadline, epoll_pwait2 denied by seccomp, an epoll fd closed or reused
# mid-wait, sem_clockwait's clock, CLOCK_BOOTTIME and CLOCK_TAI): each prints the same
# with and without `punctual run --precise` (and `run --stats` alone, which only observes),
# and under `run --cpus` alone for the stack.
# With strace: sem_clockwait(CLOCK_MONOTONIC) never waits on the realtime clock, and
# without epoll_pwait2 (ENOSYS or EPERM) the library and the shim each try it once and give
# the same results (tests/preload/pwait2.c).
. "$(dirname "$0")/lib.sh"
skip_emulated "its seccomp cases need filters qemu-user refuses, and its strace cases the kernel's view of calls qemu-user makes for the program"
SEM=$2 PWAIT2=$3
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"

for c in stack sigign cancel "eintr 1000" eperm enosys close reuse semclock clocks; do
	# shellcheck disable=SC2086
	"$SEM" $c >"$TMP/plain" 2>"$TMP/plain.err"
	rc=$?
	check "$c: runs without the shim ($rc: $(head -c 200 "$TMP/plain.err"))" test $rc -eq 0
	check "$c: printed its lines" test -s "$TMP/plain"
	for args in "--precise" "--precise=1us" "--stats"; do
		# shellcheck disable=SC2086
		"$PN" run $args -- "$SEM" $c >"$TMP/shim" 2>"$TMP/shim.err"
		rc=$?
		check "$c $args: exit 0, never early ($rc: $(head -c 200 "$TMP/shim.err"))" test $rc -eq 0
		check "$c $args: the same as without the shim ($(diff "$TMP/plain" "$TMP/shim" | head -4 | tr '\n' ' '))" \
			diff "$TMP/plain" "$TMP/shim"
	done
done
"$PN" run --cpus -- "$SEM" stack >"$TMP/cpus" 2>&1
check "stack under run --cpus: $(cat "$TMP/cpus")" diff - "$TMP/cpus" <<-EOF2
	stack: pthread_create 0
	stack: sleeps and waits on it 0
	EOF2
# the shim makes BOOTTIME and TAI sleeps precise, relative and absolute
"$PN" run --precise=1us -- "$SEM" clocks >/dev/null 2>"$TMP/clocks.err"
check "BOOTTIME and TAI sleeps made precise ($(tr '\n' ' ' <"$TMP/clocks.err"))" \
	test "$(grep -c ': 50 of 50 made precise' "$TMP/clocks.err")" -eq 4

if command -v strace >/dev/null; then
	# its one 20 ms wait spins whole where the thread's first probes met wakeups later
	# than that (a loaded machine, under TSan): up to three tries for one with a kernel part
	for try in 1 2 3; do
		strace -f -qq -e trace=futex -o "$TMP/sem.st" "$PN" run --precise=1us -- "$SEM" semclock monotonic >/dev/null
		grep -q 'FUTEX_WAIT' "$TMP/sem.st" && break
	done
	check "sem_clockwait(CLOCK_MONOTONIC) under the shim waits in a futex (3 tries)" grep -q 'FUTEX_WAIT' "$TMP/sem.st"
	check "sem_clockwait(CLOCK_MONOTONIC) under the shim never waits on the realtime clock" \
		sh -c "! grep -q 'FUTEX_CLOCK_REALTIME' '$TMP/sem.st'"
	strace -f -qq -e trace=epoll_pwait2 -o "$TMP/nosys.st" "$PN" run --precise=1us -- "$SEM" enosys >/dev/null
	n=$(grep -c 'epoll_pwait2' "$TMP/nosys.st")
	check "without epoll_pwait2 the shim tries it once ($n)" test "$n" -eq 1
	strace -f -qq -e trace=epoll_pwait2 -o "$TMP/perm.st" "$PN" run --precise=1us -- "$SEM" eperm >/dev/null
	n=$(grep -c 'epoll_pwait2' "$TMP/perm.st")
	check "with epoll_pwait2 denied (EPERM) the shim tries it once ($n)" test "$n" -eq 1
	# the library and the shim: one attempt each, then epoll_pwait; the same results (the
	# program is sanitized: LeakSanitizer cannot run under ptrace)
	export ASAN_OPTIONS="$ASAN_OPTIONS:detect_leaks=0"
	for e in ENOSYS EPERM; do
		strace -f -qq -e trace=epoll_pwait2 -o "$TMP/lib.st" "$PWAIT2" lib $e >"$TMP/lib.out"
		check "$e: the library's waits run, never early" test $? -eq 0
		n=$(grep -c 'epoll_pwait2' "$TMP/lib.st")
		check "$e: the library tries epoll_pwait2 once ($n)" test "$n" -eq 1
		strace -f -qq -e trace=epoll_pwait2 -o "$TMP/shim.st" "$PN" run --precise=1us -- \
			"$PWAIT2" shim $e >"$TMP/shim.out"
		check "$e: the shim's waits run, never early" test $? -eq 0
		n=$(grep -c 'epoll_pwait2' "$TMP/shim.st")
		check "$e: the shim tries epoll_pwait2 once ($n)" test "$n" -eq 1
		check "$e: the library and the shim give the same results" diff "$TMP/lib.out" "$TMP/shim.out"
		check "$e: 11 waits reported" test "$(wc -l <"$TMP/lib.out")" -eq 11
	done
else
	skip "strace is not installed: the futex clock and the epoll_pwait2 attempts are not checked"
fi
finish
