#!/bin/bash
# SPDX-License-Identifier: MIT
# run.sh BUILD_DIR: `make test-container`. The image `make image` built from BUILD_DIR
# (punctual:VERSION, packaging/oci) in real containers (podman), and the Kubernetes
# manifests of packaging/kubernetes:
#   - manifests: each document against its kind's schema and fields, and the DaemonSet's
#     promises (check_manifests.mjs, with tests/container/k8s's npm packages installed
#     under build/k8s); a misspelt field must fail them;
#   - the image: its size (at most 40 MB), user (65534), labels;
#   - in a container of 0.5 CPU: `punctual cpus --quiet` 1 where nproc says the host's
#     count, `run --cpus -- nproc` the container's;
#   - `probe --quick --json` valid against docs/probe.schema.json, naming the container
#     runtime (podman); `probe --quick --prom` on standard output passing promtool, here
#     under a 1-CPU quota; SIGTERM ends a probe at once;
#   - README.md's podman run lines as written (with its export of CONTAINERS_CONF);
#   - the DaemonSet's pod, packaging/podman/punctual-probe-pod.yaml (the manifests' checks
#     compare it with the DaemonSet), as `podman kube play` runs it (played_pod.mjs: in a
#     temporary hostPath, every 10 s): probes on its schedule into the hostPath, and stops
#     at once; its non-root form in a directory uid 65534 may write, and the refusal that
#     ends the loop where it may not.
# Each check prints PASS, FAIL or SKIP. Exits 1 if one failed, 77 with one line when this
# machine cannot run containers (and nothing failed), else 0.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)
B=${1:?usage: $0 BUILD_DIR}
VERSION=$(sed -n 's/^CMAKE_PROJECT_VERSION:STATIC=//p' "$B/CMakeCache.txt")
IMAGE=punctual:$VERSION
# podman's settings for this host (runc, no default ulimits) unless the caller has its own
: "${CONTAINERS_CONF:=$TOP/packaging/oci/containers.conf}"
export CONTAINERS_CONF
# the DaemonSet's pod as a user plays it with podman (README.md, docs/KUBERNETES.md)
POD=$TOP/packaging/podman/punctual-probe-pod.yaml
TMP=$(mktemp -d /var/tmp/punctual-container.XXXXXX)
chmod 755 "$TMP"
NAME=pn-test-$$
cleanup() {
	podman rm -f "$NAME-stop" >/dev/null 2>&1
	[ -f "$TMP/pod.yaml" ] && podman kube down "$TMP/pod.yaml" >/dev/null 2>&1
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

PASSES=0 FAILS=0 SKIPS=0
pass() { echo "PASS: $*"; PASSES=$((PASSES + 1)); }
fail() { echo "FAIL: $*"; FAILS=$((FAILS + 1)); }
skip() { echo "SKIP: $*"; SKIPS=$((SKIPS + 1)); }
# now_ms: milliseconds on the boot-time clock (/proc/uptime), which no clock step moves
now_ms() {
	local up _
	read -r up _ </proc/uptime
	echo $((10#${up/./} * 10))
}
START=$(now_ms)
# wait_for SECONDS CMD...: until CMD succeeds (checked every half second); its status
wait_for() {
	local end=$(($(now_ms) + $1 * 1000))
	shift
	until "$@"; do
		[ "$(now_ms)" -lt "$end" ] || return 1
		sleep 0.5
	done
}
# said: what the last pn printed, stderr first, as one line of at most 300 bytes
said() { cat "$ERR" "$OUT" | head -n 4 | tr '\n\t' '  ' | cut -c 1-300; }

# pn PODMAN_RUN_OPTIONS... -- ARGS...: the image in a container of its own, without a
# network; sets RC, OUT (stdout file) and ERR (stderr file).
NRUN=0
pn() {
	local opts=()
	while [ "$1" != -- ]; do opts+=("$1") && shift; done
	shift
	NRUN=$((NRUN + 1))
	OUT=$TMP/out.$NRUN ERR=$TMP/err.$NRUN
	timeout -k 5 120 podman run --rm --network none "${opts[@]}" "$IMAGE" "$@" >"$OUT" 2>"$ERR"
	RC=$?
}

finish() {
	echo "test-container: $PASSES passed, $FAILS failed, $SKIPS skipped"
	echo "test-container: took $((($(now_ms) - START) / 1000)) s"
	[ "$FAILS" -eq 0 ] || exit 1
	exit 0
}

# ---- the manifests ----------------------------------------------------------------------
manifests() {
	local mods=$TOP/build/k8s
	if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
		skip "manifests: node and npm are needed (scripts/bootstrap container)"
		return
	fi
	# the packages tests/container/k8s pins, installed again when its lock changes
	if ! cmp -s "$HERE/k8s/package-lock.json" "$mods/package-lock.json" ||
		[ ! -d "$mods/node_modules" ]; then
		rm -rf "$mods" && mkdir -p "$mods"
		cp "$HERE/k8s/package.json" "$HERE/k8s/package-lock.json" "$mods/"
		if ! (cd "$mods" && npm ci --no-audit --no-fund --loglevel=error) >"$TMP/npm.log" 2>&1; then
			rm -f "$mods/package-lock.json"
			fail "manifests: npm ci: $(tail -n 2 "$TMP/npm.log" | tr '\n' ' ')"
			return
		fi
	fi
	local m=$TOP/packaging/kubernetes
	node "$HERE/check_manifests.mjs" "$mods/node_modules" "$VERSION" "$m"/*.yaml "$POD" \
		>"$TMP/check.log" 2>&1
	local st=$?
	PASSES=$((PASSES + $(grep -c '^PASS' "$TMP/check.log")))
	FAILS=$((FAILS + $(grep -c '^FAIL' "$TMP/check.log")))
	grep -E '^(PASS|FAIL)' "$TMP/check.log"
	[ "$st" -eq 0 ] || [ "$(grep -c '^FAIL' "$TMP/check.log")" -gt 0 ] ||
		fail "manifests: check_manifests.mjs exited $st: $(tail -n 3 "$TMP/check.log" | tr '\n' ' ')"
	# the checker itself: a misspelt field in the DaemonSet must fail it
	sed 's/readOnlyRootFilesystem:/readOnlyRootFileSystem:/' "$m/3-daemonset.yaml" >"$TMP/misspelt.yaml"
	if node "$HERE/check_manifests.mjs" "$mods/node_modules" "$VERSION" "$m/1-namespace.yaml" \
		"$m/2-serviceaccount.yaml" "$TMP/misspelt.yaml" >"$TMP/misspelt.log" 2>&1; then
		fail "manifests: a DaemonSet with readOnlyRootFileSystem (misspelt) passed the check"
	elif grep -q "^FAIL: .*fields: .*readOnlyRootFileSystem" "$TMP/misspelt.log"; then
		pass "manifests: a misspelt field (readOnlyRootFileSystem) fails the check"
	else
		fail "manifests: the misspelt field failed for another reason: $(grep -m1 FAIL "$TMP/misspelt.log")"
	fi
}

# ---- the image --------------------------------------------------------------------------
image() {
	local size user version
	size=$(podman image inspect --format '{{.Size}}' "$IMAGE")
	if [ "$size" -le $((40 * 1048576)) ]; then
		pass "image: $IMAGE is $((size / 1024)) KiB (at most 40 MiB)"
	else
		fail "image: $IMAGE is $((size / 1048576)) MiB, over 40"
	fi
	user=$(podman image inspect --format '{{.Config.User}}' "$IMAGE")
	version=$(podman image inspect --format '{{index .Labels "org.opencontainers.image.version"}}' "$IMAGE")
	if [ "$user" = 65534:65534 ] && [ "$version" = "$VERSION" ]; then
		pass "image: user 65534:65534, org.opencontainers.image.version $version"
	else
		fail "image: user '$user', version label '$version' (expected 65534:65534, $VERSION)"
	fi
	if [ "$(podman image inspect --format '{{.Id}}' "$IMAGE")" = \
		"$(podman image inspect --format '{{.Id}}' punctual:latest)" ]; then
		pass "image: punctual:latest is $IMAGE"
	else
		fail "image: punctual:latest is not $IMAGE"
	fi
	pn -- --version
	if [ "$RC" -eq 0 ] && grep -q "^punctual $VERSION " "$OUT"; then
		pass "image: its entrypoint is punctual ($(head -n 1 "$OUT"))"
	else
		fail "image: punctual --version: exit $RC: $(said)"
	fi
	# the tool's own refusals: --prom FILE is checked before anything is measured
	pn -- probe --prom /nonexistent/punctual.prom
	if [ "$RC" -eq 2 ] && [ ! -s "$OUT" ]; then
		pass "image: probe --prom FILE stays punctual's (exit 2 for a missing directory)"
	else
		fail "image: probe --prom /nonexistent/punctual.prom: exit $RC (expected 2): $(said)"
	fi
}

# ---- the CPU count ----------------------------------------------------------------------
cpus() {
	local host n np
	host=$(nproc)
	pn --cpus=0.5 -- cpus --quiet
	n=$(tr -d '[:space:]' <"$OUT")
	if [ "$RC" -eq 0 ] && [ "$n" = 1 ]; then
		pass "cpus: punctual cpus --quiet prints 1 in a 0.5-CPU container"
	else
		fail "cpus: punctual cpus --quiet in a 0.5-CPU container: exit $RC, '$n': $(said)"
	fi
	pn --cpus=0.5 --entrypoint nproc --
	np=$(tr -d '[:space:]' <"$OUT")
	if [ "$host" -lt 2 ]; then
		skip "cpus: nproc's count cannot differ from punctual's on a host of $host CPU"
	elif [ "$RC" -eq 0 ] && [ "$np" = "$host" ]; then
		pass "cpus: nproc prints $np there (the host's, the affinity mask), punctual 1"
	else
		fail "cpus: nproc in a 0.5-CPU container: exit $RC, '$np' (expected the host's $host)"
	fi
	pn --cpus=0.5 -- run --cpus -- nproc
	np=$(tr -d '[:space:]' <"$OUT")
	if [ "$RC" -eq 0 ] && [ "$np" = 1 ] && [ ! -s "$ERR" ]; then
		pass "cpus: run --cpus -- nproc prints the container's 1, the shim loaded without a word"
	else
		fail "cpus: run --cpus -- nproc in a 0.5-CPU container: exit $RC, '$np': $(said)"
	fi
	if [ "$host" -lt 2 ]; then
		skip "cpus: a 1.5-CPU container needs a host of 2 CPUs"
		return
	fi
	pn --cpus=1.5 -- cpus --json
	if [ "$RC" -eq 0 ] && [ "$(jq -r '"\(.count) \(.limit.cpus)"' "$OUT")" = "2 1.5" ]; then
		pass "cpus: cpus --json in a 1.5-CPU container: count 2, limit 1.5"
	else
		fail "cpus: cpus --json in a 1.5-CPU container: exit $RC: $(jq -c '{count, limit}' "$OUT" 2>/dev/null || said)"
	fi
}

# ---- the probe --------------------------------------------------------------------------
probe() {
	local j p rt t0 ms st
	pn -- probe --quick --json
	j=$OUT
	if [ "$RC" -ne 0 ] || ! jq -e . "$j" >/dev/null 2>&1; then
		fail "probe: probe --quick --json: exit $RC: $(said)"
	else
		if /usr/bin/python3 -c 'import jsonschema' 2>/dev/null; then
			if /usr/bin/python3 -c '
import json, sys, jsonschema
jsonschema.validate(json.load(open(sys.argv[2])), json.load(open(sys.argv[1])),
                    cls=jsonschema.Draft202012Validator)' "$TOP/docs/probe.schema.json" "$j" \
				>"$TMP/schema.log" 2>&1; then
				pass "probe: --json in a container (as uid 65534) is valid against probe.schema.json"
			else
				fail "probe: --json against probe.schema.json: $(tail -n 1 "$TMP/schema.log")"
			fi
		else
			skip "probe: schema: python3-jsonschema is not installed"
		fi
		rt=$(jq -r .host.container "$j")
		if [ "$rt" = podman ]; then
			pass "probe: the system section names the runtime: container \"$rt\""
		else
			fail "probe: .host.container is '$rt', expected podman"
		fi
	fi
	# --prom without a FILE (the last argument): the metrics on stdout, the report on stderr
	pn --cpus=1 -- probe --quick --prom
	p=$OUT
	if [ "$RC" -ne 0 ] || [ ! -s "$p" ]; then
		fail "probe: probe --quick --prom: exit $RC: $(said)"
	elif ! command -v promtool >/dev/null; then
		skip "probe: promtool is not installed (prometheus)"
	elif promtool check metrics <"$p" >"$TMP/promtool.log" 2>&1; then
		pass "probe: --prom on standard output passes promtool ($(grep -vc '^#' "$p") samples; the report on stderr: $(grep -c . "$ERR") lines)"
	else
		fail "probe: promtool check metrics: $(head -n 2 "$TMP/promtool.log" | tr '\n' ' ')"
	fi
	if grep -q '^punctual_host_info{.*container="podman"' "$p" &&
		grep -q '^punctual_cpus{kind="usable"} 1$' "$p" &&
		grep -q '^punctual_cgroup_cfs_periods_total{' "$p"; then
		pass "probe: under a 1-CPU quota: container=\"podman\", usable CPUs 1, the quota's CFS periods"
	else
		fail "probe: the metrics lack container=\"podman\", punctual_cpus{kind=\"usable\"} 1 or the CFS periods"
	fi
	# SIGTERM (podman stop): punctual is PID 1 and ends at its next sample
	if podman run -d --name "$NAME-stop" --network none "$IMAGE" probe >/dev/null 2>"$TMP/stop.err"; then
		sleep 2
		t0=$(now_ms)
		podman stop -t 20 "$NAME-stop" >/dev/null 2>&1
		ms=$(($(now_ms) - t0))
		st=$(podman inspect --format '{{.State.ExitCode}}' "$NAME-stop")
		if [ "$st" = 0 ] && [ "$ms" -lt 5000 ] && podman logs "$NAME-stop" 2>&1 | grep -q 'interrupted by SIGTERM'; then
			pass "probe: podman stop ends it in $ms ms, exit 0, the report says interrupted by SIGTERM"
		else
			fail "probe: podman stop: $ms ms, exit $st: $(podman logs "$NAME-stop" 2>&1 | tail -n 2 | tr '\n' ' ')"
		fi
		podman rm -f "$NAME-stop" >/dev/null 2>&1
	else
		fail "probe: podman run -d: $(head -n 1 "$TMP/stop.err")"
	fi
}

# ---- the DaemonSet's pod ----------------------------------------------------------------
daemonset() {
	local mods=$TOP/build/k8s/node_modules dir=$TMP/textfile
	if [ ! -d "$mods" ]; then
		skip "daemonset: no npm packages in build/k8s (see the manifests' checks)"
		return
	fi
	mkdir -p "$dir"
	node "$HERE/played_pod.mjs" "$mods" "$POD" "$NAME" "$dir" 10 >"$TMP/pod.yaml" ||
		{ fail "daemonset: played_pod.mjs"; return; }
	if ! podman kube play --network none "$TMP/pod.yaml" >"$TMP/play.log" 2>&1; then
		fail "daemonset: podman kube play: $(tail -n 2 "$TMP/play.log" | tr '\n' ' ')"
		return
	fi
	local c=$NAME-probe f=$dir/punctual.prom first hc t0 ms st
	wait_for 30 test -s "$f"
	if [ ! -s "$f" ]; then
		fail "daemonset: no punctual.prom in the hostPath after 30 s: $(podman logs "$c" 2>&1 | tail -n 3 | tr '\n' ' ')"
		return
	fi
	first=$(stat -c %Y.%i "$f")
	if promtool check metrics <"$f" >"$TMP/ds-promtool.log" 2>&1 && [ "$(stat -c %a "$f")" = 644 ]; then
		pass "daemonset: the pod wrote punctual.prom into its hostPath, 0644, passing promtool"
	else
		fail "daemonset: punctual.prom: mode $(stat -c %a "$f"): $(head -n 1 "$TMP/ds-promtool.log")"
	fi
	hc=$(podman inspect --format '{{.HostConfig.ReadonlyRootfs}} {{len .HostConfig.CapAdd}} {{.HostConfig.SecurityOpt}} {{.HostConfig.Memory}} {{.HostConfig.CpuQuota}}' "$c")
	if [ "$hc" = "true 0 [no-new-privileges] 67108864 0" ]; then
		pass "daemonset: as played: read-only root, no capability, no new privileges, 64 MiB, no CPU quota"
	else
		fail "daemonset: the container as played: '$hc'"
	fi
	# the next turn (10 s from the first's start) replaces the file: a new inode
	if wait_for 20 sh -c '[ "$(stat -c %Y.%i "$1")" != "$2" ]' sh "$f" "$first"; then
		pass "daemonset: the next turn replaced punctual.prom"
	else
		fail "daemonset: punctual.prom unchanged 20 s after the first: $(podman logs "$c" 2>&1 | tail -n 2 | tr '\n' ' ')"
	fi
	t0=$(now_ms)
	podman pod stop -t 10 "$NAME" >/dev/null 2>&1
	ms=$(($(now_ms) - t0))
	st=$(podman inspect --format '{{.State.ExitCode}}' "$c")
	if [ "$st" = 0 ] && [ "$ms" -lt 5000 ] &&
		podman logs "$c" 2>&1 | grep -q 'textfile-loop: stopped by a signal'; then
		pass "daemonset: the pod stops in $ms ms, the loop exiting 0"
	else
		fail "daemonset: pod stop took $ms ms, exit $st: $(podman logs "$c" 2>&1 | tail -n 2 | tr '\n' ' ')"
	fi
	podman kube down "$TMP/pod.yaml" >/dev/null 2>&1
	rm -f "$TMP/pod.yaml"
}

# README.md's podman lines as a user types them in the source tree, after the README's own
# export of CONTAINERS_CONF (this script's is taken away): each exits 0, and one whose
# comment starts with a number prints that number.
readme() {
	local exp line want got n=0 dir=$TMP/readme
	exp=$(grep -m 1 '^export CONTAINERS_CONF=' "$TOP/README.md")
	if [ -z "$exp" ]; then
		fail "readme: README.md exports no CONTAINERS_CONF before its podman lines"
		return
	fi
	mkdir -p "$dir"
	while IFS= read -r line; do
		n=$((n + 1))
		want=$(sed -nE 's/.*# ([0-9]+)( .*)?$/\1/p' <<<"$line")
		(unset CONTAINERS_CONF && cd "$TOP" && eval "$exp" && cd "$dir" &&
			timeout -k 5 120 bash -c "$line") >"$dir/out" 2>"$dir/err"
		RC=$? OUT=$dir/out ERR=$dir/err
		got=$(tr -d '[:space:]' <"$dir/out")
		if [ "$RC" -eq 0 ] && { [ -z "$want" ] || [ "$got" = "$want" ]; }; then
			pass "readme: ${line%%#*}"
		else
			fail "readme: ${line%%#*}: exit $RC, '$got' (expected ${want:-any}): $(said)"
		fi
	done < <(grep -E '^podman run ' "$TOP/README.md")
	[ "$n" -gt 0 ] || fail "readme: no podman run line in README.md"
}

# The stricter form docs/KUBERNETES.md describes: uid 65534 in a directory root owns and
# group 65534 may write; and where it may not write, the loop's exit 2.
nonroot() {
	local ok=$TMP/tf-group no=$TMP/tf-root
	mkdir -p "$ok" "$no"
	chgrp 65534 "$ok" && chmod 775 "$ok" && chmod 755 "$no"
	local loop=(--entrypoint /usr/libexec/punctual/textfile-loop -e PUNCTUAL_TEXTFILE_DIR=/textfile
		-e PUNCTUAL_SPLAY=0 --read-only --cap-drop=all --security-opt=no-new-privileges)
	pn "${loop[@]}" -v "$no:/textfile" --
	if [ "$RC" -eq 2 ] && grep -q 'refused its input (exit 2): stopping' "$ERR"; then
		pass "nonroot: uid 65534 where it may not write: the loop ends with 2 at once"
	else
		fail "nonroot: a directory uid 65534 may not write: exit $RC: $(said)"
	fi
	podman run -d --name "$NAME-stop" --network none "${loop[@]}" -v "$ok:/textfile" "$IMAGE" \
		>/dev/null 2>&1
	wait_for 30 test -s "$ok/punctual.prom"
	if [ "$(stat -c %u "$ok/punctual.prom" 2>/dev/null)" = 65534 ]; then
		pass "nonroot: uid 65534 in a root-owned directory its group may write: punctual.prom written"
	else
		fail "nonroot: no punctual.prom from uid 65534: $(podman logs "$NAME-stop" 2>&1 | tail -n 2 | tr '\n' ' ')"
	fi
	podman rm -f "$NAME-stop" >/dev/null 2>&1
}

manifests
if [ "$(id -u)" -ne 0 ]; then
	reason="needs root (podman with runc on this host's cgroups)"
elif ! command -v podman >/dev/null || ! command -v runc >/dev/null; then
	reason="podman or runc is not installed (scripts/bootstrap container)"
elif ! podman info >"$TMP/can" 2>&1; then
	reason="podman does not work here: $(tail -n 1 "$TMP/can")"
elif ! podman image exists "$IMAGE"; then
	reason="no image $IMAGE (make image)"
elif ! timeout 60 podman run --rm --network none "$IMAGE" --version >"$TMP/can" 2>&1; then
	reason="podman cannot run a container here: $(tail -n 1 "$TMP/can")"
fi
if [ -n "${reason:-}" ]; then
	echo "SKIP: test-container: $reason"
	[ "$FAILS" -eq 0 ] || finish
	exit 77
fi
echo "test-container: $IMAGE, $(podman --version), runtime $(podman info --format '{{.Host.OCIRuntime.Name}}'), cgroups $(podman info --format '{{.Host.CgroupsVersion}}')"
image
cpus
probe
readme
daemonset
nonroot
finish
