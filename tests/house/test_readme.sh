#!/bin/bash
# SPDX-License-Identifier: MIT
# test_readme.sh SOURCE_DIR: what a newcomer follows in README.md leads somewhere. The
# README's first screen (before its first section) says where `make run` leaves the tool
# and names `make install`, whose target installs the release build into PREFIX,
# /usr/local by default.
SRC=$1
fails=0
fail() {
	echo "FAIL: $*"
	fails=$((fails + 1))
}
README=$SRC/README.md

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

[ "$fails" -eq 0 ] || exit 1
echo "house.readme: README.md holds"
