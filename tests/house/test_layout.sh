#!/bin/bash
# SPDX-License-Identifier: MIT
# test_layout.sh SOURCE_DIR BUILD_DIR: the house rules of docs/HACKING.md that a machine can
# check: no two object files of the library, the shim or the tool use each other, directly
# or through others (scripts/circles.py); src/'s folders include only what their layer may;
# no file under src/ or tools/ has more than 800 lines, no function over 80; every environment variable the code reads is documented; the
# wait engine is the only driver of a plan and reaches the kernel through one table; the
# tool takes the library's internals through src/contract.h alone, and only those it lists
# (docs/HACKING.md).
SRC=$1 BUILD=$2
fails=0
# python3 looked up once, by ctest where it runs this (a version manager's shim costs
# more than circles.py's work)
PY=${PUNCTUAL_TEST_PYTHON3:-}
[ -x "$PY" ] || PY=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null)
[ -x "$PY" ] || PY=python3
for t in punctual_objects punctual_preload punctual_tool; do
	objs=$(find "$BUILD/CMakeFiles/$t.dir" -name '*.o')
	[ "$t" = punctual_tool ] && objs="$objs $(find "$BUILD/CMakeFiles/punctual_toolkit.dir" -name '*.o')"
	if [ -z "$objs" ]; then
		echo "FAIL: no object files for $t under $BUILD"
		fails=$((fails + 1))
		continue
	fi
	# shellcheck disable=SC2086
	if ! out=$("$PY" "$SRC/scripts/circles.py" $objs); then
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
# the one wait engine: only it drives a plan, only kernel.c makes raw kernel waits, only
# the shim's real.c looks up libc's waits, and the shim reaches the library through a
# handful of internal symbols: the engine's four doors (a precise wait, its cancel, an
# observed wait, the lend of real time), the kernel table's denial and the report's setup
# and its explain step
lib=$(find "$BUILD/CMakeFiles/punctual_objects.dir" "$BUILD/CMakeFiles/punctual_preload.dir" -name '*.o')
# shellcheck disable=SC2086 # the object files, one word each
drivers=$(nm -A -u $lib | awk '$NF ~ /^pn__plan_(make|woke|cancel)$/ {
	sub(/:.*$/, ""); sub(/^.*\//, ""); sub(/\.o$/, ""); print }' | sort -u | tr '\n' ' ')
if [ "$drivers" != "wait.c " ]; then
	echo "FAIL: the plan is driven from '$drivers', not the engine (wait/wait.c) alone"
	fails=$((fails + 1))
fi
raw=$(grep -rlE 'SYS_(clock_nanosleep|ppoll|epoll_pwait2?|pselect6)\b' "$SRC/src" | sed "s#$SRC/##")
if [ "$raw" != "src/kernel.c" ]; then
	echo "FAIL: raw kernel waits outside src/kernel.c: $(echo $raw)"
	fails=$((fails + 1))
fi
real=$(grep -rlE '"(clock_nanosleep|nanosleep|ppoll|epoll_pwait2?|epoll_wait|pselect|select|poll)"' "$SRC/src" | sed "s#$SRC/##")
if [ "$real" != "src/shim/real.c" ]; then
	echo "FAIL: libc's waits looked up outside src/shim/real.c: $(echo $real)"
	fails=$((fails + 1))
fi
shim=$(find "$BUILD/CMakeFiles/punctual_preload.dir" -name '*.o' -path '*/shim/*')
# shellcheck disable=SC2086
own=$(nm --defined-only $shim | awk 'NF == 3 {print $3}' | sort -u)
# shellcheck disable=SC2086
imp=$(nm -u $shim | awk '$1 == "U" && $2 ~ /^pn__/ {print $2}' | sort -u | comm -23 - <(echo "$own"))
if [ "$(echo "$imp" | grep -c .)" -gt 8 ]; then
	echo "FAIL: the shim uses $(echo "$imp" | grep -c .) internal symbols of the library (at most 8): $(echo $imp)"
	fails=$((fails + 1))
fi
# src/'s layers by folder (docs/HACKING.md): hist/ and sched/ below the engine and the
# reports; report/ takes a thread's state from wait/, wait/ the record and the causes'
# step from report/. Each folder includes its own headers, src/'s top and what it lists.
declare -A may=([hist]="" [sched]="hist" [wait]="hist sched report/record.h report/why.h"
	[report]="hist sched cpus wait/state.h wait/arms.h")
for dir in "${!may[@]}"; do
	while IFS=: read -r file inc; do
		top=${inc%%/*}
		[ "$top" = "$dir" ] || [ "$top" = "$inc" ] && continue
		case " ${may[$dir]} " in *" $top "* | *" $inc "*) continue ;; esac
		echo "FAIL: ${file#"$SRC/"} includes $inc (src/$dir/ may include: ${may[$dir]:-none})"
		fails=$((fails + 1))
	done < <(grep -oE '^#include "[^"]+"' "$SRC/src/$dir"/*.[ch] | sed 's/#include "//; s/"$//')
done
# the tool's contract with the library: tools/ includes one header of src/ (contract.h),
# and its objects use no internal symbol of the library that the header does not list
srch=$(grep -rhoE '^#include "[^"]+"' "$SRC/tools" | sed 's/#include "//; s/"$//' | sort -u |
	while read -r h; do [ -f "$SRC/src/$h" ] && [ ! -f "$SRC/tools/punctual/$h" ] && echo "$h"; done)
if [ "$srch" != contract.h ]; then
	echo "FAIL: tools/ includes these headers of src/, not contract.h alone: $(echo $srch)"
	fails=$((fails + 1))
fi
tool=$(find "$BUILD/CMakeFiles/punctual_toolkit.dir" "$BUILD/CMakeFiles/punctual_tool.dir" -name '*.o')
# shellcheck disable=SC2086
towned=$(nm --defined-only $tool | awk 'NF == 3 {print $3}' | sort -u)
listed=$(grep -oE 'pn__[a-z0-9_]+' "$SRC/src/contract.h" | sort -u)
# shellcheck disable=SC2086
beyond=$(nm -u $tool | awk '$1 == "U" && $2 ~ /^pn__/ {print $2}' | sort -u |
	comm -23 - <(echo "$towned") | comm -23 - <(echo "$listed"))
if [ -n "$beyond" ]; then
	echo "FAIL: the tool uses internals src/contract.h does not list: $(echo $beyond)"
	fails=$((fails + 1))
fi
# no function over 80 lines (Universal Ctags finds each function's first and last line)
if command -v ctags >/dev/null && ctags --version 2>/dev/null | grep -q Universal; then
	long=$(ctags -x --kinds-C=f --_xformat='%{end} %{line} %F:%{line} %N' -R "$SRC/src" "$SRC/tools" |
		awk '$1 - $2 + 1 > 80 {print $1 - $2 + 1 " lines: " $3 " " $4}' | sed "s#$SRC/##")
	if [ -n "$long" ]; then
		echo "FAIL: functions over 80 lines: $(echo "$long" | tr '\n' ';')"
		fails=$((fails + 1))
	fi
else
	echo "FAIL: Universal Ctags is not installed (scripts/bootstrap installs universal-ctags)"
	fails=$((fails + 1))
fi
top=$(find "$SRC/src" -maxdepth 1 -name '*.c' | wc -l)
if [ "$top" -gt 5 ]; then
	echo "FAIL: $top .c files at the top of src/ (at most 5: the rest by concept, in folders)"
	fails=$((fails + 1))
fi
[ "$fails" -eq 0 ] && echo "no circles, src/ layered by folder, none over 800 lines, every getenv documented, one wait engine"
exit $((fails > 0))
