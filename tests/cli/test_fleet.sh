#!/bin/bash
# SPDX-License-Identifier: MIT
# test_fleet.sh PUNCTUAL UNIT_DIR: the fleet path end to end, with the real engines on
# loopback: the command of punctual-probe.service (ExecStart, from UNIT_DIR, the build's
# configured unit), confined as the unit confines it, writes the metrics into a textfile
# directory; Debian's prometheus-node-exporter, with only its textfile collector and run
# by another user than root, serves every punctual_ sample with its labels and value;
# Debian's prometheus scrapes that node_exporter every second, and every query of the
# Grafana dashboard (docs/grafana/punctual.json), its $instance substituted, returns data.
# Both servers are started here on free ports and always stopped (trap), their data in the
# test's temporary directory.
. "$(dirname "$0")/lib.sh"
UNITS=${2:?usage: $0 PUNCTUAL UNIT_DIR}
DASH=$(dirname "$0")/../../docs/grafana/punctual.json
NE=$(command -v prometheus-node-exporter)
PROM=$(command -v prometheus)
if [ -z "$NE" ] || [ -z "$PROM" ]; then
	skip "prometheus-node-exporter or prometheus is not installed (scripts/bootstrap installs both)"
	finish
	exit $?
fi

pids=()
stop() {
	for p in "${pids[@]}"; do
		kill "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	pids=()
}
trap 'stop; rm -rf "$TMP"' EXIT
trap 'exit 130' INT TERM

free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# wait_http URL SECONDS: until URL answers 200 (or the time is up)
wait_http() {
	local i
	for ((i = 0; i < $2 * 10; i++)); do
		curl -sf -o /dev/null "$1" && return 0
		sleep 0.1
	done
	return 1
}

# 1. the service's command, as systemd would run it with the unit's environment and, as
# root, confined as the unit confines it (lib.sh unit_confined)
TF=$TMP/textfile
mkdir -p "$TF"
line=$(sed -n 's/^ExecStart=//p' "$UNITS/punctual-probe.service")
check "punctual-probe.service has an ExecStart" test -n "$line"
args=${line#* }
args=${args//'$PUNCTUAL_PROBE_OPTIONS'/--quick}
args=${args//'${PUNCTUAL_TEXTFILE_DIR}'/$TF}
ROOT=0
if [ "$(id -u)" -eq 0 ] && command -v unshare >/dev/null && command -v setpriv >/dev/null; then
	ROOT=1
	chmod 711 "$TMP" # node_exporter runs as another user below
	# shellcheck disable=SC2086 # systemd splits $VAR into words too
	unit_confined "$UNITS/punctual-probe.service" "$TF" "$PN" $args
fi
if [ "$ROOT" -eq 0 ] || [ "$RC" -eq 125 ]; then
	skip "the service's command unconfined: needs root, unshare, setpriv and mounts"
	# shellcheck disable=SC2086
	run $args
fi
check "the service's command ($args) exits 0 (got $RC: $(head -c 300 "$ERR"))" test "$RC" -eq 0
check "... and writes punctual.prom into the textfile directory" test -s "$TF/punctual.prom"
check "... and nothing else there (no temporary file)" test "$(ls "$TF")" = punctual.prom

# 2. node_exporter, only its textfile collector; as root, run by another user, as Debian
# runs it (user prometheus): the file must be readable to it
ne_port=$(free_port)
as_user=()
[ "$ROOT" -eq 1 ] && as_user=(setpriv --reuid=65534 --regid=65534 --clear-groups)
"${as_user[@]}" "$NE" --web.listen-address="127.0.0.1:$ne_port" --collector.disable-defaults \
	--collector.textfile --collector.textfile.directory="$TF" >"$TMP/ne.log" 2>&1 &
pids+=($!)
if ! wait_http "http://127.0.0.1:$ne_port/metrics" 20; then
	fail "node_exporter did not answer on 127.0.0.1:$ne_port: $(tail -n 3 "$TMP/ne.log")"
	finish
	exit 1
fi
curl -sf "http://127.0.0.1:$ne_port/metrics" >"$TMP/scrape.txt"
check "node_exporter read the file without an error" \
	test "$(grep -c '^node_textfile_scrape_error 0$' "$TMP/scrape.txt")" -eq 1
check "node_exporter serves every punctual_ sample of the file, labels and value" python3 - "$TF/punctual.prom" "$TMP/scrape.txt" <<'PY'
import re, sys
SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)",?')
def samples(path):
    out = {}
    for line in open(path, encoding='utf-8'):
        line = line.rstrip('\n')
        if not line.startswith('punctual_'):
            continue
        m = SAMPLE.match(line)
        if not m:
            sys.exit(f'unparsable sample: {line}')
        labels = frozenset(LABEL.findall(m.group(2) or ''))
        out[(m.group(1), labels)] = float(m.group(3))
    return out
want, got = samples(sys.argv[1]), samples(sys.argv[2])
if not want:
    sys.exit('no punctual_ sample in the file')
fams = {k[0] for k in want}
for k, v in want.items():
    if k not in got:
        sys.exit(f'missing from node_exporter: {k[0]} {sorted(k[1])}')
    if abs(got[k] - v) > 1e-9 * max(1.0, abs(v)):
        sys.exit(f'{k[0]} {sorted(k[1])}: {got[k]} != {v}')
for f in ('punctual_host_info', 'punctual_sleep_overshoot_seconds', 'punctual_clock_read_seconds',
          'punctual_cpus', 'punctual_timer_wakeups', 'punctual_timer_slack_seconds',
          'punctual_sleep_early_returns', 'punctual_probe_duration_seconds', 'punctual_tick_hertz'):
    if f not in fams:
        sys.exit(f'the probe wrote no {f}')
over = [k for k in want if k[0] == 'punctual_sleep_overshoot_seconds']
if not all({l[0] for l in k[1]} == {'mechanism', 'interval_seconds', 'slack_seconds', 'percentile'} for k in over):
    sys.exit('punctual_sleep_overshoot_seconds lacks a label')
PY

# 3. prometheus scraping it every second, then every dashboard query
p_port=$(free_port)
cat >"$TMP/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: punctual
    static_configs:
      - targets: ['127.0.0.1:$ne_port']
EOF
"$PROM" --config.file="$TMP/prometheus.yml" --storage.tsdb.path="$TMP/tsdb" \
	--web.listen-address="127.0.0.1:$p_port" --log.level=warn >"$TMP/prom.log" 2>&1 &
pids+=($!)
if ! wait_http "http://127.0.0.1:$p_port/-/ready" 60; then
	fail "prometheus did not become ready on 127.0.0.1:$p_port: $(tail -n 3 "$TMP/prom.log")"
	finish
	exit 1
fi
check "every query of the dashboard returns data from prometheus" python3 - "$DASH" "127.0.0.1:$p_port" "127.0.0.1:$ne_port" <<'PY'
import json, sys, time, urllib.parse, urllib.request
dash, server, instance = sys.argv[1:]
exprs = []
def walk(o):
    if isinstance(o, dict):
        if isinstance(o.get('expr'), str):
            exprs.append(o['expr'])
        for v in o.values():
            walk(v)
    elif isinstance(o, list):
        for v in o:
            walk(v)
walk(json.load(open(dash)))
if len(exprs) < 4:
    sys.exit(f'only {len(exprs)} queries in the dashboard')
def query(q):
    url = f'http://{server}/api/v1/query?' + urllib.parse.urlencode({'query': q})
    with urllib.request.urlopen(url, timeout=10) as r:
        d = json.load(r)
    if d.get('status') != 'success':
        sys.exit(f'{q}: {d}')
    return d['data']['result']
# the first scrapes: until the instance's host info is in
deadline = time.monotonic() + 60
while not query(f'punctual_host_info{{instance="{instance}"}}'):
    if time.monotonic() > deadline:
        sys.exit('prometheus never scraped punctual_host_info from node_exporter')
    time.sleep(0.5)
empty = []
for e in exprs:
    q = e.replace('${instance}', instance).replace('$instance', instance)
    if '$' in q:
        sys.exit(f'a variable other than $instance in: {e}')
    if not query(q):
        empty.append(e)
if empty:
    sys.exit('no data for: ' + ' | '.join(empty))
print(f'{len(exprs)} dashboard queries returned data')
PY
stop
check "node_exporter and prometheus are stopped" test -z "$(jobs -pr)"

finish
