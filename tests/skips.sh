#!/bin/sh
# SPDX-License-Identifier: MIT
# skips.sh BUILD_DIR: after a ctest run in BUILD_DIR, prints every "SKIP: why" line the
# tests wrote, after the name of the test: ctest lists the entries it skipped but not why,
# and a part skipped inside an entry that passed shows nowhere else.
log=$1/Testing/Temporary/LastTest.log
[ -f "$log" ] || exit 0
awk '/^[0-9]+\/[0-9]+ Testing: / { name = $3 }
	/^SKIP: / && !seen[name, $0]++ { print name ": " $0 }' "$log"
