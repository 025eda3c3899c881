#!/bin/bash
# SPDX-License-Identifier: MIT
# test_readme.sh SOURCE_DIR: what a newcomer follows in README.md and docs/KUBERNETES.md
# leads somewhere. The README's first screen (before its first section) says where
# `make run` leaves the tool and names `make install`, whose target installs the release
# build into PREFIX, /usr/local by default. Every sh block that runs a container (podman
# run, podman kube play) sets CONTAINERS_CONF to packaging/oci/containers.conf before it,
# as tests/container does. Every `podman kube play` names a Pod file, not a DaemonSet, and
# the one tests/container plays.
SRC=$1
fails=0
fail() {
	echo "FAIL: $*"
	fails=$((fails + 1))
}
README=$SRC/README.md KUBE=$SRC/docs/KUBERNETES.md

# the first screen: what comes before the first section (## )
first=$(awk '/^## /{exit} {print}' "$README")
grep -q 'build/release/punctual' <<<"$first" ||
	fail "README.md's first screen does not say where make run leaves the tool (build/release/punctual)"
grep -q 'make install' <<<"$first" || fail "README.md's first screen does not name make install"
# make install: the release build into PREFIX (dry run: nothing is built)
dry=$(make -s -C "$SRC" -n install 2>&1)
grep -q '^cmake --install build/release --prefix /usr/local$' <<<"$dry" ||
	fail "make install does not install build/release into /usr/local by default: $dry"
dry=$(make -s -C "$SRC" -n install PREFIX=/opt/x 2>&1)
grep -q '^cmake --install build/release --prefix /opt/x$' <<<"$dry" ||
	fail "make install PREFIX=/opt/x does not install there: $dry"

# each sh block: a podman line that makes a container comes after the export
conf='export CONTAINERS_CONF=$PWD/packaging/oci/containers.conf'
for doc in "$README" "$KUBE"; do
	while IFS= read -r bad; do
		fail "${doc#"$SRC"/}: without CONTAINERS_CONF set before it in its block: $bad"
	done < <(awk -v conf="$conf" '
		/^```/ { inblock = !inblock; set = 0; next }
		inblock && index($0, conf) == 1 { set = 1 }
		inblock && /^podman (run|kube play) / && !set { print }' "$doc")
done

# podman kube play: the Pod file tests/container plays
played=$(sed -n 's|^POD=\$TOP/||p' "$SRC/tests/container/run.sh")
[ -n "$played" ] || fail "tests/container/run.sh names no POD it plays"
n=0
while read -r doc file; do
	n=$((n + 1))
	if [ "$file" != "$played" ]; then
		fail "$doc: podman kube play $file, but tests/container plays $played"
	elif ! grep -q '^kind: Pod$' "$SRC/$file" || grep -q '^kind: DaemonSet$' "$SRC/$file"; then
		fail "$doc: $file is not a Pod (podman kube play refuses a DaemonSet)"
	fi
done < <(for doc in "$README" "$KUBE"; do
	sed -nE "s|^podman kube play ([^ ]+).*|${doc#"$SRC"/} \1|p" "$doc"
done)
[ "$n" -ge 2 ] || fail "README.md and docs/KUBERNETES.md: $n podman kube play lines (one each expected)"

[ "$fails" -eq 0 ] || exit 1
echo "house.readme: README.md and docs/KUBERNETES.md hold"
