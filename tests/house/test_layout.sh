#!/bin/bash
# SPDX-License-Identifier: MIT
# test_layout.sh SOURCE_DIR BUILD_DIR: the house rules of docs/HACKING.md that a machine can
# check: no two object files of the library, the shim or the tool use each other, directly
# or through others (scripts/circles.py), and no file under src/ or tools/ has more than 800
# lines; and every environment variable the code reads is documented.
SRC=$1 BUILD=$2
fails=0
for t in punctual_objects punctual_preload punctual_tool; do
	objs=$(find "$BUILD/CMakeFiles/$t.dir" -name '*.o')
	if [ -z "$objs" ]; then
		echo "FAIL: no object files for $t under $BUILD"
		fails=$((fails + 1))
		continue
	fi
	# shellcheck disable=SC2086
	if ! out=$(python3 "$SRC/scripts/circles.py" $objs); then
		echo "FAIL: $t: $out"
		fails=$((fails + 1))
	fi
done
big=$(find "$SRC/src" "$SRC/tools" -name '*.[ch]' -exec wc -l {} + |
	awk '$2 != "total" && $1 > 800 {print $2 " (" $1 " lines)"}')
if [ -n "$big" ]; then
	echo "FAIL: over 800 lines: $big"
	fails=$((fails + 1))
fi
# every environment variable the library or the tool reads is in punctual(1)'s ENVIRONMENT
env_doc=$(awk '/^# /{e=($0=="# ENVIRONMENT")} e' "$SRC/docs/punctual.1.scd")
for v in $(grep -rhoE 'getenv\("[A-Z_]+"\)' "$SRC/src" "$SRC/tools" | grep -oE '[A-Z_]+' | sort -u); do
	case $v in PATH | LD_PRELOAD | JAVA_TOOL_OPTIONS) continue ;; esac # the system's
	if ! grep -q "\*$v\*" <<<"$env_doc"; then
		echo "FAIL: $v is read but not in punctual(1)'s ENVIRONMENT"
		fails=$((fails + 1))
	fi
done
[ "$fails" -eq 0 ] && echo "no circles among the library's, the shim's and the tool's files; none over 800 lines"
exit $((fails > 0))
