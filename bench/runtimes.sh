# SPDX-License-Identifier: MIT
# Sourced by bench/bench_loops.sh and tests/cli/test_preload_clients.sh: the system's
# runtimes (Debian's python3, nodejs, openjdk-17: scripts/bootstrap), not whatever a
# user's PATH puts first (pyenv, nvm). Sets PY, NODE, JAVA, JAVAC.
PY=python3 NODE=node
[ -x /usr/bin/python3 ] && PY=/usr/bin/python3
[ -x /usr/bin/node ] && NODE=/usr/bin/node
JAVA=java JAVAC=javac
for j in /usr/lib/jvm/java-17-openjdk-*/bin; do
	[ -x "$j/javac" ] && JAVA=$j/java JAVAC=$j/javac
done
