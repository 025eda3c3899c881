#!/bin/sh
# SPDX-License-Identifier: MIT
# bench_python.sh BUILD_DIR: the Python package's sleeps beside Python's own
# (bench_python.py): builds the package's wheel into BUILD_DIR/python (as make test does,
# python/tests/run.sh) and runs the benchmark against it with the system's python3.
# Prints Markdown.
set -eu
B=$1
HERE=$(cd "$(dirname "$0")" && pwd)
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
"$HERE/../python/tests/run.sh" build "$HERE/.." "$B/python" >/dev/null
PYTHONPATH="$B/python/site" "$PY" "$HERE/bench_python.py" 2000
