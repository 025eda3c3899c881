#!/bin/bash
# SPDX-License-Identifier: MIT
# test_cpus.sh: `punctual cpus`: the count and its explanation as text and valid JSON,
# agreeing with the affinity set; PUNCTUAL_CPU_COUNT and PUNCTUAL_CPU_ROUNDING (valid
# ones honoured, invalid ones ignored and reported); --rounding; --quiet; --bench; --watch ending
# cleanly on SIGINT with one line (or one JSON object) per change; bad input: exit 2, one
# line on stderr, nothing on stdout; and, as root with a writable v1 cpu controller, a
# parent cgroup allowing 0.5 CPU above an unlimited leaf (count 1, the parent named),
# removed afterwards.
. "$(dirname "$0")/lib.sh"

CG=""
W=""
cleanup() {
	# a --watch still running (in the cgroup) goes first: a cgroup with a process stays
	if [ -n "$W" ]; then
		kill "$W" 2>/dev/null
		wait "$W" 2>/dev/null
	fi
	if [ -n "$CG" ]; then
		rmdir "$CG/leaf" "$CG" 2>/dev/null
	fi
	rm -rf "$TMP"
}
trap cleanup EXIT

AFF=$(nproc)

# ---- the count and why -----------------------------------------------------------------
ok cpus
check "first line is the count" grep -Eq '^cpus: [0-9]+$' "$OUT"
N=$(sed -n 's/^cpus: //p' "$OUT")
check "count within 1..affinity ($N of $AFF)" test "$N" -ge 1 -a "$N" -le "$AFF"
check "text explains why" grep -q '^  why: ' "$OUT"
check "text shows the affinity" grep -q "^  affinity: $AFF CPU" "$OUT"

ok cpus --json
json_ok "$OUT"
jq_check "JSON: command, count, reason, levels" --argjson n "$N" --argjson a "$AFF" \
	'.command == "cpus" and .count == $n and .affinity == $a and (.reason | length > 0)
	and (.cgroup.levels | type == "array") and .override == null and .bench == null
	and .rounding == "ceil"' "$OUT"

ok cpus --help
check "--help has usage" grep -q '^usage: punctual cpus' "$OUT"

# ---- environment -----------------------------------------------------------------------
PUNCTUAL_CPU_COUNT=3 run cpus --json
check "PUNCTUAL_CPU_COUNT=3 exits 0" test "$RC" -eq 0
json_ok "$OUT"
jq_check "PUNCTUAL_CPU_COUNT=3 overrides" '.count == 3 and .override == 3' "$OUT"
PUNCTUAL_CPU_COUNT=3 ok cpus
check "override shown as text" grep -q '^  override: PUNCTUAL_CPU_COUNT=3' "$OUT"
for bad in abc 0 -2 1048576 " 3" 2x; do
	PUNCTUAL_CPU_COUNT="$bad" run cpus --json
	jq_check "PUNCTUAL_CPU_COUNT='$bad' ignored" --argjson n "$N" --arg b "$bad" \
		'.count == $n and .override == null and .override_invalid == $b' "$OUT"
done
PUNCTUAL_CPU_COUNT=abc ok cpus
check "invalid override reported as text" grep -q "PUNCTUAL_CPU_COUNT='abc' ignored" "$OUT"
PUNCTUAL_CPU_ROUNDING=floor run cpus --json
jq_check "PUNCTUAL_CPU_ROUNDING=floor" '.rounding == "floor"' "$OUT"
PUNCTUAL_CPU_ROUNDING=sideways run cpus --json
jq_check "PUNCTUAL_CPU_ROUNDING=sideways ignored" \
	'.rounding == "ceil" and .rounding_invalid == "sideways"' "$OUT"
PUNCTUAL_CPU_ROUNDING=floor run cpus --json --rounding nearest
jq_check "--rounding wins over the environment" '.rounding == "nearest"' "$OUT"

# ---- --quiet: the bare count, like nproc ------------------------------------------------
ok cpus -q
check "-q prints the count alone ($(cat "$OUT"))" test "$(cat "$OUT")" = "$N"
ok cpus --quiet
check "--quiet prints the count alone" test "$(cat "$OUT")" = "$N"
PUNCTUAL_CPU_COUNT=3 ok cpus -q
check "-q honours PUNCTUAL_CPU_COUNT" test "$(cat "$OUT")" = 3
check "-q: nothing on stderr" test ! -s "$ERR"

# ---- --bench ---------------------------------------------------------------------------
ok cpus --bench --json
json_ok "$OUT"
jq_check "--bench reports both rates" '.bench.cached_calls_per_s > 0
	and .bench.fresh_calls_per_s > 0 and .bench.fresh_us_per_call > 0' "$OUT"
ok cpus --bench
check "--bench as text" grep -q '^  bench:    cached .* fresh ' "$OUT"

# ---- --watch ---------------------------------------------------------------------------
# wait_lines FILE N: until FILE has N lines (at most 20 s: a loaded machine is slow, and a
# SIGINT before the first line would come before the handler).
wait_lines() {
	for _ in $(seq 200); do
		[ -f "$1" ] && [ "$(wc -l <"$1")" -ge "$2" ] && return 0
		sleep 0.1
	done
	return 1
}
watch_run() {
	"$PN" cpus --watch --interval 50ms "$@" >"$TMP/w.out" 2>"$TMP/w.err" &
	W=$!
	wait_lines "$TMP/w.out" 1
	sleep 0.3 # a few more intervals: nothing changes, nothing more is printed
	kill -INT "$W"
	wait "$W"
	WRC=$?
}
watch_run
check "--watch ends with status 0 on SIGINT" test "$WRC" -eq 0
check "--watch printed the first state" grep -Eq '^[0-9T:-]+Z cpus [0-9]+: ' "$TMP/w.out"
check "--watch prints only changes" test "$(wc -l <"$TMP/w.out")" -eq 1
check "--watch nothing on stderr" test "$WRC" -eq 0 -a ! -s "$TMP/w.err"
watch_run --json
check "--watch --json ends with status 0" test "$WRC" -eq 0
check "--watch --json: each line is JSON" jq -e -s 'length == 1 and .[0].count >= 1
	and (.[0].time | type == "string")' "$TMP/w.out" >/dev/null

# ---- bad input -------------------------------------------------------------------------
usage_error "rounding" cpus --rounding sideways
usage_error "needs a value" cpus --rounding
usage_error "unknown option" cpus --bogus
usage_error "unknown option" cpus -x
usage_error "unexpected argument" cpus 3
usage_error "do not go together" cpus --watch --bench
usage_error "needs --watch" cpus --interval 1s
usage_error "interval" cpus --watch --interval 0
usage_error "interval" cpus --watch --interval soon
usage_error "not with --json" cpus -q --json
usage_error "not with --json" cpus --quiet --watch
usage_error "not with --json" cpus -q --bench

# ---- a real cgroup: a parent allowing 0.5 CPU above an unlimited leaf -----------------
# Our own place in the v1 cpu hierarchy, from /proc/self/cgroup and mountinfo.
home=""
mnt=$(awk '$0 ~ / - cgroup / && $NF ~ /(^|,)cpu(,|$)/ { print $4 " " $5; exit }' /proc/self/mountinfo)
self=$(awk -F: '$2 ~ /(^|,)cpu(,|$)/ { sub(/^[^:]*:[^:]*:/, ""); print; exit }' /proc/self/cgroup)
if [ "$(id -u)" -ne 0 ]; then
	skip "real cgroup: needs root"
elif [ -z "$mnt" ] || [ -z "$self" ]; then
	skip "real cgroup: no v1 cpu controller"
elif [ "${mnt%% *}" != "/" ]; then
	skip "real cgroup: the cpu hierarchy is mounted from ${mnt%% *}, not its root"
else
	home=${mnt#* }${self%/}
	CG=$home/pn_cli_$$
	if ! mkdir "$CG" 2>/dev/null || ! mkdir "$CG/leaf"; then
		skip "real cgroup: cannot create $CG"
	else
		echo 100000 >"$CG/cpu.cfs_period_us"
		echo 50000 >"$CG/cpu.cfs_quota_us"
		run_cmd sh -c 'echo $$ >"$1/leaf/cgroup.procs" && exec "$2" cpus --json' sh "$CG" "$PN"
		check "in the cgroup: exit 0" test "$RC" -eq 0
		json_ok "$OUT"
		jq_check "parent 0.5 CPU, unlimited leaf: count 1, the parent named" \
			--arg p "${self%/}/pn_cli_$$" '.count == 1 and .limit.path == $p
			and .limit.cpus == 0.5 and .cgroup.path == $p + "/leaf"' "$OUT"
		run_cmd sh -c 'echo $$ >"$1/leaf/cgroup.procs" && exec "$2" cpus -q' sh "$CG" "$PN"
		check "in the cgroup: cpus -q prints 1 ($(cat "$OUT"))" test "$(cat "$OUT")" = 1
		# --watch in the leaf sees the parent's quota change (0.5 -> 1.5 CPUs)
		sh -c 'echo $$ >"$1/leaf/cgroup.procs" && exec "$2" cpus --watch --interval 50ms' \
			sh "$CG" "$PN" >"$TMP/cgw.out" 2>"$TMP/cgw.err" &
		W=$!
		wait_lines "$TMP/cgw.out" 1
		echo 150000 >"$CG/cpu.cfs_quota_us"
		wait_lines "$TMP/cgw.out" 2
		sleep 0.2
		kill -INT "$W"
		wait "$W"
		check "--watch in the cgroup ends with 0" test $? -eq 0
		check "--watch: the first line says 1" grep -q ' cpus 1: cgroup ' "$TMP/cgw.out"
		check "--watch: one more line after the quota change" \
			test "$(wc -l <"$TMP/cgw.out")" -eq 2
		check "--watch: the new line names 1.5 CPUs" grep -q 'limits to 1.5 CPUs\|limit at .* (1.5 CPUs' "$TMP/cgw.out"
		rmdir "$CG/leaf" "$CG"
		check "cgroups removed" test ! -e "$CG"
		CG=""
	fi
fi

finish
