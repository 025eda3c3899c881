#!/bin/sh
# SPDX-License-Identifier: MIT
# run.sh build SOURCE_DIR DIR: builds the package's wheel with pip (as `pip wheel ./python`
#   does; a wheel built in every `make test`) into DIR/dist and unpacks it into DIR/site.
#   The library is built into DIR/lib without sanitizers, whatever the preset: an
#   extension loaded by an unsanitized python3 cannot carry ASan.
# run.sh test SOURCE_DIR DIR FILE: runs python/tests/FILE (unittest) against DIR/site;
#   exit 77 ("SKIP: why") where the file says it cannot run here. PUNCTUAL_BUILD_DIR is
#   the build's DIR/build, where an editable install finds the library built
#   (test_install.py) rather than build it again.
# Both use the system's python3 (/usr/bin/python3 where it exists).
set -eu
mode=$1 SRC=$2 DIR=$3
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
case $mode in
build)
	"$PY" -c 'import sysconfig, os, sys; sys.exit(not os.path.isfile(sysconfig.get_paths()["include"] + "/Python.h"))' ||
		{ echo "SKIP: no Python.h for $PY (Debian: python3-dev; scripts/bootstrap)"; exit 77; }
	rm -rf "$DIR/dist" "$DIR/site"
	mkdir -p "$DIR/dist"
	export PUNCTUAL_BUILD_DIR="$DIR/build"
	if "$PY" -m pip --version >/dev/null 2>&1; then
		"$PY" -m pip wheel -q --no-deps --no-index -w "$DIR/dist" "$SRC/python"
	else # no pip: the backend itself, as pip would call it
		(cd "$SRC/python" && "$PY" -c 'import sys; sys.path.insert(0, "build_backend")
import punctual_build; print(punctual_build.build_wheel(sys.argv[1]))' "$DIR/dist")
	fi
	whl=$(ls "$DIR"/dist/punctual-*.whl)
	"$PY" -m zipfile -e "$whl" "$DIR/site"
	echo "built $(basename "$whl")"
	;;
test)
	[ -d "$DIR/site" ] || { echo "SKIP: the package was not built here (python.build)"; exit 77; }
	cd "$SRC/python/tests"
	PUNCTUAL_BUILD_DIR="$DIR/build" PYTHONPATH="$DIR/site" exec "$PY" "$4" -v
	;;
*) echo "run.sh build|test ..." >&2; exit 2 ;;
esac
