#!/bin/bash
# SPDX-License-Identifier: MIT
# test_run_cpus.sh PUNCTUAL PROBE CXX_PROBE JAVA_SRC STATIC: `punctual run --cpus[=N]`.
# Every channel the documented table (punctual(1), README) names answers N: the JDK's
# availableProcessors() (tests/preload/AvailableProcessors.java, so its common
# ForkJoinPool too), CPython's os.cpu_count() (the pyenv python3 on PATH and
# /usr/bin/python3), coreutils nproc, a C program's sysconf(_SC_NPROCESSORS_ONLN) and
# get_nprocs(), a C++ program's std::thread::hardware_concurrency(); the environment
# variables are set and inherited; what stays the machine's (_SC_NPROCESSORS_CONF,
# get_nprocs_conf, the affinity mask) does; values the user set are kept and reported in
# one line; without --cpus nothing changes, the shim loaded or not; bad values exit 2 with
# one line. Under TSan (threads_only): the forced count alone.
# Then in real nested cgroups (v1 here; the v2 variant skips when the v2 mount has no cpu
# controller): a parent allowing 0.5 CPU above an unlimited child holding the process,
# where each channel prints today's answer without --cpus and pn_cpu_count()'s with it.
# The cgroups (pn-cpus-*) are removed on exit, also on failure or a signal.
. "$(dirname "$0")/lib.sh"
skip_emulated "python3, java and nproc are the host's x86_64 programs, which cannot load the aarch64 shim"
PROBE=$2 CXX=${3:-} JAVASRC=$4 STATIC=$5
SHIM=$(cd "$(dirname "$PN")" && pwd)/libpunctual-preload.so
# A sanitized probe has its runtime as a dependency; the preloaded shim comes before it.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
# The channels must not be set already by whoever runs the suite.
unset GOMAXPROCS OMP_NUM_THREADS OMP_THREAD_LIMIT DOTNET_PROCESSOR_COUNT PYTHON_CPU_COUNT \
	JAVA_TOOL_OPTIONS JDK_JAVA_OPTIONS _JAVA_OPTIONS PUNCTUAL_CPU_COUNT PUNCTUAL_CPUS \
	PUNCTUAL_PRECISION LD_PRELOAD

CGS=() # "DIR ORIGIN": the cgroups created, innermost first, and where the test started
cleanup() {
	local e
	# a process still inside goes back where the test started
	for e in "${CGS[@]}"; do
		cgroup_remove "${e%% *}" "${e#* }" || echo "FAIL: could not remove ${e%% *}" >&2
	done
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# get VAR CMD...: VAR = the last line CMD prints on stdout (the JDK prints "Picked up
# JAVA_TOOL_OPTIONS" on stderr); a failing CMD is a failure.
get() {
	local var=$1 o rc
	shift
	o=$("$@" 2>"$TMP/get.err")
	rc=$?
	[ "$rc" -eq 0 ] || fail "'$*': exit $rc: $(head -c 300 "$TMP/get.err")"
	printf -v "$var" '%s' "$(printf '%s\n' "$o" | tail -n 1)"
}

# field NAME LINE: NAME's value in the probe's "name=value ..." line.
field() {
	printf '%s\n' "$2" | tr ' ' '\n' | sed -n "s/^$1=//p"
}

# channels PREFIX...: every channel's count, the command run under PREFIX (which may be
# empty); sets C_JAVA C_FJP C_PY C_SYSPY C_NPROC C_ONLN C_NPROCS C_CXX and C_PROBE.
PYCOUNT='import os; print(os.cpu_count())'
channels() {
	local j="- -"
	[ -n "$JAVA" ] && get j "$@" "${JPROBE[@]}"
	C_JAVA=${j%% *} C_FJP=${j#* }
	get C_PY "$@" python3 -c "$PYCOUNT"
	get C_SYSPY "$@" /usr/bin/python3 -c "$PYCOUNT"
	get C_NPROC "$@" nproc
	get C_PROBE "$@" "$PROBE"
	C_ONLN=$(field onln "$C_PROBE") C_NPROCS=$(field nprocs "$C_PROBE")
	C_CXX=-
	[ -n "$CXX" ] && get C_CXX "$@" "$CXX"
}

# all_are WANT WHAT: every channel (but the JDK's, when WANT is "-") says WANT.
all_are() {
	local want=$1 what=$2 got
	got="java=$C_JAVA python3=$C_PY /usr/bin/python3=$C_SYSPY nproc=$C_NPROC"
	got="$got sysconf=$C_ONLN get_nprocs=$C_NPROCS hardware_concurrency=$C_CXX"
	echo "$what: $got"
	for v in $C_PY $C_SYSPY $C_NPROC $C_ONLN $C_NPROCS; do
		[ "$v" = "$want" ] || { fail "$what: want $want everywhere: $got"; return; }
	done
	[ -z "$CXX" ] || [ "$C_CXX" = "$want" ] || { fail "$what: want $want: $got"; return; }
	pass
}

JAVA=$(command -v java)
[ -n "$JAVA" ] || skip "the JDK: no java on PATH (scripts/bootstrap installs openjdk-17-jdk-headless)"
# JPROBE: the JDK's probe, compiled once where javac is (java FILE.java compiles it in every
# run: 1 s of CPU each, against 0.2 s for the JVM alone), else run from its source.
JPROBE=(java "$JAVASRC")
if [ -n "$JAVA" ] && command -v javac >/dev/null && javac -d "$TMP/java" "$JAVASRC"; then
	JPROBE=(java -cp "$TMP/java" AvailableProcessors)
fi
# jcheck DESCRIPTION COMMAND...: a check of the JDK's answer, when there is a JDK.
jcheck() {
	[ -z "$JAVA" ] || check "$@"
}

# The machine's answers, without the shim.
get PLAIN "$PROBE"
get BASE_PY python3 -c "$PYCOUNT"
check "the probe runs: $PLAIN" test -n "$(field onln "$PLAIN")"
[ -n "$CXX" ] || skip "hardware_concurrency: no C++ compiler at build time (scripts/bootstrap installs g++)"

# ---- forced: --cpus=3 -------------------------------------------------------------------
channels "$PN" run --cpus=3 --
all_are 3 "run --cpus=3"
jcheck "run --cpus=3: the JDK says 3 ($C_JAVA)" test "$C_JAVA" = 3
jcheck "run --cpus=3: the common ForkJoinPool is sized from it ($C_FJP)" test "$C_FJP" = 2
for f in conf nprocs_conf affinity page; do
	check "run --cpus=3 leaves $f alone ($C_PROBE vs $PLAIN)" \
		test "$(field $f "$C_PROBE")" = "$(field $f "$PLAIN")"
done
get c "$PN" run --cpus=1 -- "$PROBE"
check "run --cpus=1: $c" test "$(field onln "$c")/$(field nprocs "$c")" = 1/1
get c "$PN" run --cpus=1048575 -- "$PROBE"
check "run --cpus=1048575: $c" test "$(field onln "$c")" = 1048575
get c "$PN" run --cpus=3 -- sh -c "python3 -c '$PYCOUNT'; nproc"
check "children inherit it" test "$c" = 3
get c "$PN" run --cpus=2 -- "$PN" run --cpus=4 -- "$PROBE"
check "an inner run --cpus=4 answers 4 through the shim ($c)" test "$(field onln "$c")" = 4

# the environment: set, nothing said on stderr
run run --cpus=3 -- env
check "run --cpus=3 env: exit 0" test "$RC" -eq 0
for v in GOMAXPROCS=3 OMP_NUM_THREADS=3 DOTNET_PROCESSOR_COUNT=3 PYTHON_CPU_COUNT=3 \
	JAVA_TOOL_OPTIONS=-XX:ActiveProcessorCount=3 PUNCTUAL_CPUS=3 PUNCTUAL_CPU_COUNT=3 \
	"LD_PRELOAD=$SHIM"; do
	check "run --cpus=3 sets $v" grep -qx -- "$v" "$OUT"
done
check "run --cpus=3: nothing kept, nothing said" test ! -s "$ERR"
check "run --cpus=3: no precision for the sleeps" sh -c "! grep -q '^PUNCTUAL_PRECISION=' '$OUT'"
LD_PRELOAD=/nonexistent-pn-cpus.so run run --cpus=3 -- env
check "LD_PRELOAD is appended to" grep -qx -- "LD_PRELOAD=/nonexistent-pn-cpus.so:$SHIM" "$OUT"
GOMAXPROCS="" run run --cpus=3 -- env
check "an empty variable counts as unset" grep -qx GOMAXPROCS=3 "$OUT"

if threads_only; then # the forced count is the threaded programs' (the JDK) case
	finish
	exit $?
fi

# ---- the default: pn_cpu_count()'s answer --------------------------------------------------
get Q "$PN" cpus -q
check "cpus -q prints a bare count ($Q)" grep -Eqx '[1-9][0-9]*' <<<"$Q"
channels "$PN" run --cpus --
all_are "$Q" "run --cpus (pn_cpu_count() says $Q)"
jcheck "run --cpus: the JDK says $Q ($C_JAVA)" test "$C_JAVA" = "$Q"
run run --cpus -- env
check "run --cpus leaves PUNCTUAL_CPU_COUNT to the library" \
	sh -c "! grep -q '^PUNCTUAL_CPU_COUNT=' '$OUT'"
check "run --cpus sets GOMAXPROCS=$Q" grep -qx "GOMAXPROCS=$Q" "$OUT"
PUNCTUAL_CPU_COUNT=5 run run --cpus -- "$PROBE"
check "PUNCTUAL_CPU_COUNT=5 is the default's answer" test "$(field onln "$(cat "$OUT")")" = 5

# ---- values the user set: kept, and said in one line ----------------------------------------
OMP_NUM_THREADS=4 run run --cpus=3 -- nproc
check "a user's OMP_NUM_THREADS=4 is kept (nproc $(cat "$OUT"))" test "$(cat "$OUT")" = 4
check "... and reported in one line ($(cat "$ERR"))" \
	test "$(wc -l <"$ERR")" -eq 1 -a "$(grep -c 'kept .*OMP_NUM_THREADS=4' "$ERR")" -eq 1
OMP_NUM_THREADS=4 run run --cpus=3 -- "$PROBE"
check "... the shim still answers 3" test "$(field onln "$(cat "$OUT")")" = 3
OMP_NUM_THREADS=4 GOMAXPROCS=5 run run --cpus=3 -- env
check "two kept values: one line ($(cat "$ERR"))" \
	test "$(wc -l <"$ERR")" -eq 1 -a "$(grep -c 'GOMAXPROCS=5.*OMP_NUM_THREADS=4' "$ERR")" -eq 1
check "... the others still set" grep -qx PYTHON_CPU_COUNT=3 "$OUT"
OMP_NUM_THREADS=$'4\nsecond line' run run --cpus=3 -- true
check "a kept value with a newline still makes one line ($(cat "$ERR"))" \
	test "$(wc -l <"$ERR")" -eq 1
if [ -n "$JAVA" ]; then
	JAVA_TOOL_OPTIONS=-Dpn.cpus.test=kept run run --cpus=3 -- "${JPROBE[@]}" pn.cpus.test
	check "a user's JAVA_TOOL_OPTIONS is kept, the count appended ($(cat "$OUT"))" \
		test "$(tail -n 1 "$OUT")" = "3 2 kept"
	check "... and nothing to report (only the JDK's own line: $(cat "$ERR"))" \
		sh -c "! grep -q '^punctual' '$ERR'"
	JAVA_TOOL_OPTIONS="-Dpn.cpus.test=kept" run run --cpus=3 -- env
	check "JAVA_TOOL_OPTIONS appended to" \
		grep -qx -- "JAVA_TOOL_OPTIONS=-Dpn.cpus.test=kept -XX:ActiveProcessorCount=3" "$OUT"
	JAVA_TOOL_OPTIONS="-Dpn.cpus.test=kept -XX:ActiveProcessorCount=2" run run --cpus=3 -- \
		"${JPROBE[@]}"
	check "a user's -XX:ActiveProcessorCount=2 wins ($(cat "$OUT"))" test "$(tail -n 1 "$OUT")" = "2 1"
	check "... and is reported in one line ($(cat "$ERR"))" \
		test "$(grep -c '^punctual run: .*kept .*JAVA_TOOL_OPTIONS=.*-XX:ActiveProcessorCount=2' "$ERR")" -eq 1
fi
PUNCTUAL_CPU_COUNT=7 run run --cpus=3 -- env
check "a user's PUNCTUAL_CPU_COUNT is kept under --cpus=3" grep -qx PUNCTUAL_CPU_COUNT=7 "$OUT"

# ---- without --cpus: what they say today ----------------------------------------------------
channels
all_are "$BASE_PY" "plain"
check "plain: the probe as before" test "$C_PROBE" = "$PLAIN"
channels "$PN" run --precise --
all_are "$BASE_PY" "run --precise (the shim loaded, --cpus not given)"
check "run --precise: the probe as plain" test "$C_PROBE" = "$PLAIN"
run run --precise -- env
check "run --precise sets none of the count variables" \
	sh -c "! grep -Eq '^(GOMAXPROCS|OMP_NUM_THREADS|PUNCTUAL_CPUS|JAVA_TOOL_OPTIONS)=' '$OUT'"
for bad in abc 0 -1 "" " 3" 3x 1048576; do
	PUNCTUAL_CPUS="$bad" LD_PRELOAD="$SHIM" run_cmd "$PROBE"
	check "PUNCTUAL_CPUS='$bad' straight to the shim: inert" test "$(cat "$OUT")" = "$PLAIN"
done

# ---- with the other settings ------------------------------------------------------------------
get c "$PN" run --cpus=3 --precise --slack 7ns -- sh -c "cat /proc/self/timerslack_ns; $PROBE"
check "--cpus with --precise and --slack: slack 7 ($c)" \
	test "$("$PN" run --cpus=3 --precise --slack 7ns -- cat /proc/self/timerslack_ns)" = 7
check "--cpus with --precise and --slack: 3 CPUs ($c)" test "$(field onln "$c")" = 3
run run --precise=50us --cpus=3 -- env
check "--precise and --cpus: one shim in LD_PRELOAD" grep -qx "LD_PRELOAD=$SHIM" "$OUT"
check "--precise and --cpus: both configured" \
	sh -c "grep -qx PUNCTUAL_PRECISION=50000 '$OUT' && grep -qx PUNCTUAL_CPUS=3 '$OUT'"
run run --cpus=3 -- "$STATIC" 5
check "a static program runs, its status passes through" test "$RC" -eq 5
check "... and is reported ($(cat "$ERR"))" grep -q 'statically linked.*--cpus cannot apply' "$ERR"

# ---- bad input -------------------------------------------------------------------------------
for bad in 0 -1 abc "" 1048576 99999999999999999999 2.5 " 3" 0x10; do
	usage_error "--cpus" run --cpus="$bad" -- true
done
usage_error "give the count as --cpus=3" run --cpus 3 true
usage_error "nothing to do" run -- true
usage_error "missing the command" run --cpus
run run --cpus=2 -- /nonexistent/pn-cpus-cmd
check "a command not found: 127 ($RC)" test "$RC" -eq 127

# ---- real nested cgroups: a 0.5-CPU parent above an unlimited child ---------------------------
# Rust's std reads the cgroup files itself, walking up to the parents: already right.
RUST=""
if command -v rustc >/dev/null; then
	echo 'fn main() { println!("{}", std::thread::available_parallelism().unwrap()); }' \
		>"$TMP/ap.rs"
	if rustc -O -o "$TMP/ap" "$TMP/ap.rs" 2>"$TMP/rustc.err"; then
		RUST=$TMP/ap
	else
		fail "rustc cannot build a probe: $(head -c 300 "$TMP/rustc.err")"
	fi
else
	skip "Rust's available_parallelism(): no rustc on PATH"
fi
# in_cg DIR CMD...: CMD run inside cgroup DIR (the subshell moves itself in, then execs).
in_cg() {
	sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' sh "$@"
}

# nested_case NAME PARENT CHILD: the channels in CHILD, without and with --cpus.
nested_case() {
	local name=$1 child=$3 q
	get q in_cg "$child" "$PN" cpus -q
	check "$name: pn_cpu_count() counts the parent's 0.5 CPU as 1 ($q)" test "$q" = 1
	channels in_cg "$child"
	all_are "$BASE_PY" "$name, without --cpus (today)"
	echo "$name, without --cpus: the JDK says $C_JAVA (JDK 17 misses the parent's quota)"
	channels in_cg "$child" "$PN" run --cpus --
	all_are "$q" "$name, under run --cpus"
	jcheck "$name, under run --cpus: the JDK says $q ($C_JAVA)" test "$C_JAVA" = "$q"
	if [ -n "$RUST" ]; then
		get r in_cg "$child" "$RUST"
		check "$name: Rust's available_parallelism() is right without --cpus ($r)" \
			test "$r" = "$q"
	fi
	channels in_cg "$child" "$PN" run --cpus=3 --
	all_are 3 "$name, under run --cpus=3"
}

mnt=$(awk '$0 ~ / - cgroup / && $NF ~ /(^|,)cpu(,|$)/ { print $4 " " $5; exit }' /proc/self/mountinfo)
self=$(awk -F: '$2 ~ /(^|,)cpu(,|$)/ { sub(/^[^:]*:[^:]*:/, ""); print; exit }' /proc/self/cgroup)
if [ "$(id -u)" -ne 0 ]; then
	skip "v1 nested cgroups: needs root"
elif [ -z "$mnt" ] || [ -z "$self" ]; then
	skip "v1 nested cgroups: no v1 cpu controller mounted"
elif [ "${mnt%% *}" != "/" ]; then
	skip "v1 nested cgroups: the cpu hierarchy is mounted from ${mnt%% *}, not its root"
else
	origin=${mnt#* }${self%/}
	P=$origin/pn-cpus-$$
	mkdir "$P" && CGS=("$P $origin" "${CGS[@]}")
	if ! mkdir "$P/child"; then
		fail "v1 nested cgroups: cannot create $P/child"
	else
		CGS=("$P/child $origin" "${CGS[@]}")
		echo 100000 >"$P/cpu.cfs_period_us"
		echo 50000 >"$P/cpu.cfs_quota_us"
		echo -1 >"$P/child/cpu.cfs_quota_us"
		nested_case "v1 (quota 50000/100000 on the parent)" "$P" "$P/child"
	fi
fi

v2=$(awk '$0 ~ / - cgroup2 / { print $5; exit }' /proc/self/mountinfo)
v2self=$(sed -n 's/^0:://p' /proc/self/cgroup)
if [ -z "$v2" ]; then
	skip "v2 nested cgroups: no cgroup2 mount"
elif ! grep -qw cpu "$v2/cgroup.controllers" 2>/dev/null; then
	skip "v2 nested cgroups: the v2 mount ($v2) has no cpu controller (it is v1's here)"
elif [ "$(id -u)" -ne 0 ]; then
	skip "v2 nested cgroups: needs root"
elif ! grep -qw cpu "$v2${v2self%/}/cgroup.subtree_control" 2>/dev/null; then
	skip "v2 nested cgroups: cpu is not enabled for the children of $v2${v2self%/}"
else
	origin=$v2${v2self%/}
	P=$origin/pn-cpus-v2-$$
	if ! mkdir "$P"; then
		fail "v2 nested cgroups: cannot create $P"
	else
		CGS=("$P $origin" "${CGS[@]}")
		if ! echo +cpu >"$P/cgroup.subtree_control" || ! mkdir "$P/child"; then
			fail "v2 nested cgroups: cannot enable cpu under $P"
		else
			CGS=("$P/child $origin" "${CGS[@]}")
			echo "50000 100000" >"$P/cpu.max"
			echo "max 100000" >"$P/child/cpu.max"
			nested_case "v2 (cpu.max 50000 100000 on the parent)" "$P" "$P/child"
		fi
	fi
fi

finish
