#!/bin/bash
# SPDX-License-Identifier: MIT
# bench_reaction.sh BUILD_DIR: four programs that know nothing of punctual (ticks/: a C
# nanosleep loop, a Python asyncio call_at task, a Node.js setTimeout loop, a JVM
# scheduleAtFixedRate task), unpinned, a 1 ms tick with a little work each, their own
# lateness taken after their runtime has run the tick. Idle as root, then beside stress-ng
# --cpu 2N (unpinned) as root, as uid 65534 with CAP_SYS_NICE (ambient, as a unit's
# AmbientCapabilities= gives it) and as uid 65534 without; plain and `punctual run
# --precise` alternating, REACTION_ROUNDS rounds (default 5) of REACTION_TICKS ticks (2000).
# Prints Markdown: per program and mode, each figure's range over the rounds, plain ->
# --precise, and the rounds that met issue 59's target.
set -eu
B=$(cd "$1" && pwd)
PN=$B/punctual
HERE=$(cd "$(dirname "$0")" && pwd)
ROUNDS=${REACTION_ROUNDS:-5}
TICKS=${REACTION_TICKS:-2000}
# shellcheck source=bench/runtimes.sh
. "$HERE/runtimes.sh"
echo "### Real programs' reaction, unpinned"
echo
command -v stress-ng >/dev/null || { echo "(stress-ng is not installed: not measured)"; exit 0; }
N=$(nproc)
W=$(mktemp -d)
chmod 755 "$W"
hog=""
trap '[ -z "$hog" ] || kill $hog 2>/dev/null; rm -rf "$W"' EXIT
cc -O2 -o "$W/tick" "$HERE/ticks/tick.c"
cp "$HERE/ticks/tick_aio.py" "$HERE/ticks/tick.js" "$W/"
have_java=0
"$JAVAC" -d "$W" "$HERE/ticks/Tick.java" 2>/dev/null && have_java=1
chmod -R a+rX "$W"
command -v "$NODE" >/dev/null || NODE=""
cmd() {
	case $1 in
	c) echo "$W/tick 1000000 $TICKS" ;;
	spin) echo "$W/tick 1000000 $TICKS spin" ;;
	asyncio) echo "$PY $W/tick_aio.py 1000000 $TICKS" ;;
	node) echo "$NODE $W/tick.js 1000000 $TICKS" ;;
	jvm) echo "$JAVA -XX:TieredStopAtLevel=1 -cp $W Tick 1000000 $TICKS" ;;
	esac
}
as() {
	case $1 in
	root) shift; "$@" ;;
	cap) shift; setpriv --reuid 65534 --regid 65534 --clear-groups --inh-caps +sys_nice \
		--ambient-caps +sys_nice "$@" ;;
	nobody) shift; setpriv --reuid 65534 --regid 65534 --clear-groups "$@" ;;
	esac
}
ticks() {
	local t=0 p
	[ -n "$hog" ] || { echo 0; return; }
	for p in $(pgrep -P "$hog"); do
		t=$((t + $(awk '{print $14 + $15}' "/proc/$p/stat" 2>/dev/null || echo 0)))
	done
	echo $t
}
# one WHO PROG [PREFIX...]: "p50 p99 p999 cpu early hogs%"
one() {
	local who=$1 prog=$2 t0 w0 out t1 w1
	shift 2
	t0=$(ticks)
	w0=$(date +%s%N)
	# shellcheck disable=SC2046
	out=$(cd "$W" && as "$who" "$@" $(cmd "$prog") 2>/dev/null) || return 1
	t1=$(ticks)
	w1=$(date +%s%N)
	echo "$out $(((t1 - t0) * 1000000000 / $(getconf CLK_TCK) * 100 / (w1 - w0) / N))"
}
range() { sort -n | awk 'NR == 1 {lo = $1} {hi = $1} END {printf(lo == hi ? "%s" : "%s-%s", lo, hi)}'; }
us() { awk '{printf("%d\n", $1 / 1000)}'; }
# mode WHO LABEL RULE: ROUNDS rounds of each program, alternating plain and --precise
mode() {
	local who=$1 label=$2 rule=$3 prog r f p a met
	for prog in c asyncio node jvm; do
		[ $prog != node ] || [ -n "$NODE" ] || continue
		[ $prog != jvm ] || [ $have_java = 1 ] || continue
		: >"$W/plain" && : >"$W/precise"
		[ $prog != c ] || : >"$W/spin"
		met=0
		for _ in $(seq "$ROUNDS"); do
			p=$(one "$who" $prog) || continue
			a=$(one "$who" $prog "$PN" run --precise --) || continue
			echo "$p" >>"$W/plain"
			echo "$a" >>"$W/precise"
			# the floor, in the same minute: a pure spin to the same deadlines
			[ $prog != c ] || one "$who" spin >>"$W/spin" || :
			met=$((met + $(echo "$p $a" | awk -v rule="$rule" '{
				pp50 = $1; pp99 = $2; pcpu = $4; phog = $6; ap50 = $7; ap99 = $8; acpu = $10; ahog = $12
				if (rule == "idle") ok = ap50 <= pp50 && ap99 <= 1.1 * pp99 + 50000 && acpu <= pcpu + 10
				else if (rule == "rt") ok = ap99 <= (pp99 / 4 > 200000 ? pp99 / 4 : 200000) && acpu <= pcpu + 5 && ahog >= 0.9 * phog
				else ok = ap99 <= 1.1 * pp99 + 50000 && acpu <= pcpu + 5
				print ok ? 1 : 0 }')))
		done
		printf "| %s | %s |" "$prog" "$label"
		for f in 1 2 3; do
			printf " %s -> %s |" "$(cut -d' ' -f$f "$W/plain" | us | range)" \
				"$(cut -d' ' -f$f "$W/precise" | us | range)"
		done
		printf " %s -> %s |" "$(cut -d' ' -f4 "$W/plain" | range)" "$(cut -d' ' -f4 "$W/precise" | range)"
		if [ "$rule" = idle ]; then
			printf " - |"
		else
			printf " %s -> %s |" "$(cut -d' ' -f6 "$W/plain" | range)" \
				"$(cut -d' ' -f6 "$W/precise" | range)"
		fi
		printf " %s of %s |\n" "$met" "$(wc -l <"$W/plain")"
		[ $prog = c ] && [ -s "$W/spin" ] || continue
		printf "| spin floor | %s |" "$label"
		for f in 1 2 3; do
			printf " %s |" "$(cut -d' ' -f$f "$W/spin" | us | range)"
		done
		printf " %s | %s | - |\n" "$(cut -d' ' -f4 "$W/spin" | range)" \
			"$(if [ "$rule" = idle ]; then echo -; else cut -d' ' -f6 "$W/spin" | range; fi)"
	done
}
echo "$(uname -r), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), $N CPUs,"
echo "clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource);" \
	"$ROUNDS rounds of $TICKS ticks of 1 ms, plain and --precise alternating. Lateness in us"
echo "(plain -> --precise, the range over the rounds), CPU in % of one CPU, the hogs' share"
echo "of all CPUs in %; \"met\": rounds that met issue 59's target for the mode. \"spin floor\":"
echo "a pure spin to the same deadlines, in the same rounds: what no waiter beats here."
echo
echo "| program | mode | p50 | p99 | p99.9 | CPU % | hogs % | met |"
echo "|---|---|---|---|---|---|---|---|"
mode root "idle, root" idle
stress-ng --cpu $((2 * N)) --quiet &
hog=$!
sleep 0.5
mode root "hogs, root" rt
mode cap "hogs, CAP_SYS_NICE" rt
mode nobody "hogs, uid 65534" plain
echo
