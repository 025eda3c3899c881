#!/bin/bash
# SPDX-License-Identifier: MIT
# bench_tune_systemd.sh DEB_DIR [REPS]: `punctual tune --apply` on three services under a
# real systemd (tests/systemd/box.sh: Debian 12 booted with systemd-nspawn, the .deb of
# DEB_DIR installed with apt), REPS times each (default 3), as a Markdown section: tune's
# verdict (the fix kept), how long it took, and the service's own lateness from its own
# log before and after (each logs p50/p99/max of its sleeps every 2 s; the rows give the
# median of its reports over 10 s). The services:
#   c-slack    a C loop of 1 ms nanosleeps (bench/sleep_loop.c), TimerSlackNSec=20ms
#   python     a Python loop of time.sleep(0.001), no SIGTERM handler
#   tuned      the C loop already under `punctual run --precise`: it needs no fix
# Needs root and Debian's archive (python3 is installed in the box).
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
DEB_DIR=${1:?usage: $0 DEB_DIR [REPS]}
REPS=${2:-3}
DEB=$(ls -t "$DEB_DIR"/punctual_*.deb 2>/dev/null | head -n 1)
section() {
	echo "## tune under a real systemd"
	echo
	echo "$*"
	echo
}
[ "$(id -u)" -eq 0 ] || { section "Not run: needs root."; exit 0; }
[ -n "$DEB" ] || { section "Not run: no .deb in $DEB_DIR (make package)."; exit 0; }
. "$HERE/../tests/systemd/box.sh"
BOX_WORK=$(mktemp -d /var/tmp/punctual-bench.XXXXXX)
BOX_ON_EXIT='rm -rf "$BOX_WORK"'
trap 'rm -rf "$BOX_WORK"' EXIT
chmod 755 "$BOX_WORK"
mkdir "$BOX_WORK/bin"
cp "$DEB" "$BOX_WORK/"
cc -O2 -o "$BOX_WORK/bin/sleep_loop" "$HERE/sleep_loop.c" || exit 1
cat >"$BOX_WORK/bin/py_loop.py" <<'PY'
import time
late, nxt = [], time.monotonic() + 2
while True:
    t0 = time.monotonic_ns()
    time.sleep(0.001)
    t1 = time.monotonic_ns()
    late.append(t1 - t0 - 1000000)
    if t1 / 1e9 >= nxt:
        late.sort()
        n = len(late)
        print(f"late p50 {late[n // 2] / 1e3:.1f} us p99 {late[n * 99 // 100] / 1e3:.1f} us "
              f"max {late[-1] / 1e3:.1f} us over {n} sleeps", flush=True)
        late, nxt = [], t1 / 1e9 + 2
PY
box_start pn-bench "$BOX_WORK" /opt/punctual >/dev/null 2>&1 || { section "Not run: the box did not boot."; exit 0; }
box sh -c 'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
	--no-install-recommends /opt/punctual/punctual_*.deb python3-minimal' >"$BOX_WORK/install.log" 2>&1 ||
	{ section "Not run: apt in the box failed: $(tail -n 2 "$BOX_WORK/install.log" | tr '\n' ' ')"; exit 0; }

declare -A EXEC SLACK
EXEC[c-slack]="/opt/punctual/bin/sleep_loop 1000 2"
SLACK[c-slack]="TimerSlackNSec=20ms"
EXEC[python]="/usr/bin/python3 /opt/punctual/bin/py_loop.py"
SLACK[python]=""
EXEC[tuned]="/usr/bin/punctual run --precise -- /opt/punctual/bin/sleep_loop 1000 2"
SLACK[tuned]=""

# own UNIT SINCE: the median of the unit's own reports since SINCE (epoch s): "p50 / p99 / max".
own() {
	box journalctl -q -u "$1" --since "@$2" -o cat | awk '/^late p50/ {a[n] = $3; b[n] = $6; c[n] = $9; n++}
	function med(v,   i, j, t, m) { m = 0; for (i in v) m++; for (i = 0; i < m; i++) for (j = i + 1; j < m; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t } return v[int(m / 2)] }
	END { if (n) printf "%s / %s / %s", med(a), med(b), med(c); else printf "-" }'
}

section "\`punctual tune --apply UNIT\` (default --for=60s), then the service as the drop-in left it;
each service's own lateness in us, p50 / p99 / max, the median of its 2-s reports over 10 s
before the tune and 10 s after it. $REPS repetitions, a fresh unit each, on $(nproc) CPUs,
Debian 12 in systemd-nspawn (bench/bench_tune_systemd.sh)."
echo "| service | rep | kept | tune took (s) | rounds | own p50 / p99 / max before (us) | after (us) |"
echo "|---|---:|---|---:|---:|---|---|"
for svc in c-slack python tuned; do
	U=pnb-$svc.service
	for r in $(seq "$REPS"); do
		box sh -c "printf '[Service]\nExecStart=%s\n%s\n' '${EXEC[$svc]}' '${SLACK[$svc]}' >/etc/systemd/system/$U &&
			rm -rf /etc/systemd/system/$U.d && systemctl daemon-reload && systemctl restart $U"
		t0=$(box date +%s)
		sleep 11
		before=$(own "$U" "$t0")
		s=$(date +%s)
		box punctual tune --apply --json "$U" >"$BOX_WORK/tune.json" 2>"$BOX_WORK/tune.err"
		rc=$?
		took=$(($(date +%s) - s))
		if [ "$rc" -eq 0 ]; then
			kept=$(jq -r '.kept // "none"' "$BOX_WORK/tune.json")
			rounds=$(jq -r .rounds "$BOX_WORK/tune.json")
		else
			kept="exit $rc: $(head -c 80 "$BOX_WORK/tune.err")"
			rounds=-
		fi
		t1=$(box date +%s)
		sleep 11
		after=$(own "$U" "$t1")
		echo "| $svc | $r | $kept | $took | $rounds | $before | $after |"
		box punctual tune --revert "$U" >/dev/null 2>&1
		box systemctl stop "$U"
	done
done
echo
box_stop >/dev/null 2>&1
