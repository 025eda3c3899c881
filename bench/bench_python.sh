#!/bin/sh
# SPDX-License-Identifier: MIT
# bench_python.sh BUILD_DIR: the Python package's sleeps beside Python's own
# (bench_python.py): builds the package's wheel into BUILD_DIR/python (as make test does,
# python/tests/run.sh) and runs the benchmark against it with the system's python3, then
# again beside two CPU hogs per CPU (stress-ng, when installed). Prints Markdown.
set -eu
B=$1
HERE=$(cd "$(dirname "$0")" && pwd)
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
"$HERE/../python/tests/run.sh" build "$HERE/.." "$B/python" >/dev/null
PYTHONPATH="$B/python/site" "$PY" "$HERE/bench_python.py" 2000
command -v stress-ng >/dev/null || exit 0
stress-ng --cpu $((2 * $(nproc))) --quiet &
hog=$!
trap 'kill $hog 2>/dev/null; wait $hog 2>/dev/null' EXIT
sleep 0.5
PYTHONPATH="$B/python/site" "$PY" "$HERE/bench_python.py" 2000 --beside-hogs
