#!/bin/bash
# SPDX-License-Identifier: MIT
# test_probe_timer.sh (run.sh starts it): the .deb's units under a real systemd, set up as
# the README's Fleets section says: punctual-probe.service and .timer are loaded and pass
# systemd-analyze verify, the tmpfiles.d entry makes the textfile directory, the timer is
# enabled and waiting, and one run of the service by hand succeeds, writes punctual.prom
# there (promtool check metrics accepts it) and its report goes to the journal. The tool
# itself runs too: punctual --version and punctual cpus; probe names the container as
# systemd-detect-virt does.
. "$(dirname "$0")/lib.sh"
UNITS=/usr/lib/systemd/system
PROM=/var/lib/prometheus/node-exporter/punctual.prom

inbox_ok "punctual --version" punctual --version
grep -q '^punctual [0-9]' "$OUT" || fail "punctual --version printed: $(said)"
inbox_ok "punctual cpus" punctual cpus
inbox_ok "punctual cpus -q" punctual cpus -q
grep -qx '[1-9][0-9]*' "$OUT" || fail "punctual cpus -q printed: $(said)"

for u in punctual-probe.service punctual-probe.timer; do
	inbox_ok "systemctl cat $u" systemctl cat "$u"
	# Debian's systemd looks in /lib/systemd/system first: the same directory (merged /usr)
	grep -Eq "^# (/usr)?/lib/systemd/system/$u\$" "$OUT" ||
		fail "systemctl cat $u: not the package's file: $(head -n 1 "$OUT")"
	inbox systemctl show -P LoadState "$u"
	check "$u is loaded (LoadState: $(said))" test "$(cat "$OUT")" = loaded
done
inbox_ok "systemd-analyze verify accepts both units" \
	systemd-analyze verify "$UNITS/punctual-probe.service" "$UNITS/punctual-probe.timer"
[ -s "$ERR" ] && echo "   (systemd-analyze verify said: $(said))"

inbox_ok "systemd-tmpfiles --create punctual-probe.conf" systemd-tmpfiles --create punctual-probe.conf
inbox_ok "the textfile directory exists" test -d "${PROM%/*}"

inbox_ok "systemctl enable --now punctual-probe.timer" systemctl enable --now punctual-probe.timer
inbox systemctl is-enabled punctual-probe.timer
check "the timer is enabled ($(said))" test "$(cat "$OUT")" = enabled
inbox systemctl is-active punctual-probe.timer
check "the timer is active ($(said))" test "$(cat "$OUT")" = active
# In a container OnBootSec= counts from the manager's start (systemd.timer(5)): the first
# run is due 5 min after it, plus RandomizedDelaySec= (up to 5 min) and AccuracySec= (1 min).
next=$(box busctl get-property org.freedesktop.systemd1 \
	/org/freedesktop/systemd1/unit/punctual_2dprobe_2etimer org.freedesktop.systemd1.Timer \
	NextElapseUSecMonotonic | awk '{print $2}')
began=$(box systemctl show -P UserspaceTimestampMonotonic)
due=$(((${next:-0} - ${began:-0}) / 1000000))
check "the timer's first run is due 5 to 11 min after the box's systemd started (${due} s)" \
	test "$due" -ge 300 -a "$due" -le 660

# a oneshot: start returns when the probe has ended (--quick, a few seconds)
start=$(date +%s)
inbox_ok "systemctl start punctual-probe.service" systemctl start punctual-probe.service
took=$(($(date +%s) - start))
inbox systemctl show -P Result punctual-probe.service
check "the probe's Result is success ($(said), ${took} s)" test "$(cat "$OUT")" = success
if box test -s "$PROM"; then
	pass "the probe wrote $PROM"
	box cat "$PROM" >"$TMP/punctual.prom"
	n=$(grep -c '^punctual_' "$TMP/punctual.prom")
	check "punctual_ metric lines in punctual.prom ($n)" test "$n" -gt 0
	if command -v promtool >/dev/null; then
		if promtool check metrics <"$TMP/punctual.prom" >"$TMP/promtool" 2>&1; then
			pass "promtool check metrics accepts punctual.prom"
		else
			fail "promtool check metrics: $(head -n 3 "$TMP/promtool" | tr '\n' ' ')"
		fi
	else
		skip "promtool is not installed on the host (scripts/bootstrap installs prometheus)"
	fi
else
	fail "the probe wrote no $PROM: $(box journalctl -u punctual-probe.service --no-pager -n 5 2>&1 | tr '\n' ' ')"
fi
inbox journalctl -u punctual-probe.service --no-pager -o cat
check "the probe's report is in the journal" grep -q '^recommendations' "$OUT"
inbox ls -A /var/lib/prometheus/node-exporter
check "nothing but punctual.prom left in the textfile directory ($(said))" \
	test "$(cat "$OUT")" = punctual.prom
# the container, named as systemd-detect-virt names it (here systemd-nspawn)
inbox systemd-detect-virt --container
want=$(cat "$OUT")
inbox punctual probe --quick --json
check "probe --json names the container as systemd-detect-virt does ($want)" \
	test "$(jq -r .host.container "$OUT" 2>/dev/null)" = "$want"
if [ -s "$TMP/punctual.prom" ]; then
	check "... and the metrics carry it" grep -q "container=\"$want\"" "$TMP/punctual.prom"
fi
finish
