#!/bin/bash
# SPDX-License-Identifier: MIT
# test_files.sh: the files the tool writes besides stdout (--prom, --histogram, --plot), as
# root among other users (issue 29): another user's symbolic link, last in the path or
# within it, is never followed and a directory another user owns is never written in
# (exit 2 before measuring, nothing written through); the caller's own link is followed;
# a replaced file keeps its mode and owner, a new one is 0644 whatever the umask; a hard
# link or a FIFO is never written through by a rename; --plot's gnuplot writes through no
# link planted in DIR. The second user is uid 65534, by setpriv. Most cases write sleep
# --periodic's short --histogram: the same code as --prom.
. "$(dirname "$0")/lib.sh"

if [ "$(id -u)" -ne 0 ] || ! command -v setpriv >/dev/null; then
	skip "another user's links and directories: needs root and setpriv"
	finish
	exit $?
fi
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
hist() { echo sleep --periodic --duration 50ms --histogram "$1"; }
# same FILE TEXT: FILE holds exactly TEXT (a line)
same() { test "$(cat "$1" 2>/dev/null)" = "$2"; }

chmod 755 "$TMP" # the second user reaches the directories below
SECRET=$TMP/secret
echo secret >"$SECRET"
chmod 600 "$SECRET"
S=$TMP/shared # /tmp's kind: root's, sticky, anyone may add a name
mkdir -m 1777 "$S"
THEIRS=$TMP/theirs # a directory the second user owns
mkdir "$THEIRS"
chown 65534:65534 "$THEIRS"

# ---- another user's link as the last name: refused before measuring, nothing written
as_nobody ln -s "$SECRET" "$S/link.prom"
usage_error "$S/link.prom is a symbolic link owned by uid 65534" probe --quick --prom "$S/link.prom"
check "--prom: the secret the link points to is untouched" same "$SECRET" secret
check "... and its mode" test "$(stat -c %a "$SECRET")" = 600
# shellcheck disable=SC2046 # hist gives words
usage_error "symbolic link owned by uid 65534" $(hist "$S/link.prom")
check "--histogram: the secret is untouched" same "$SECRET" secret
check "... and the link is still that link" test "$(readlink "$S/link.prom")" = "$SECRET"
run probe --quick --plot "$S/link.prom"
check "--plot through another user's link to a directory: exit 2 (got $RC)" test "$RC" -eq 2

# ---- another user's link within the path (a directory of root's behind it)
mkdir "$TMP/rootdir"
as_nobody ln -s "$TMP/rootdir" "$S/dirlink"
# shellcheck disable=SC2046
usage_error "$S/dirlink is a symbolic link owned by uid 65534" $(hist "$S/dirlink/h")
check "... nothing written behind it" test -z "$(ls "$TMP/rootdir")"

# ---- a directory another user owns: refused, whatever is in it
as_nobody ln -s "$SECRET" "$THEIRS/clock_cost.dat"
as_nobody ln -s "$SECRET" "$THEIRS/overshoot_cdf.png"
# shellcheck disable=SC2046
usage_error "directory $THEIRS is owned by uid 65534" $(hist "$THEIRS/h")
usage_error "directory $THEIRS is owned by uid 65534" probe --quick --prom "$THEIRS/p.prom"
usage_error "directory $THEIRS is owned by uid 65534" probe --quick --plot "$THEIRS"
usage_error "directory $THEIRS is owned by uid 65534" probe --quick --plot "$THEIRS/new"
check "... the secret is untouched" same "$SECRET" secret
check "... nothing created there" test "$(ls "$THEIRS" | wc -l)" -eq 2

# ---- what is allowed: a new name in a shared directory, the caller's own link
# shellcheck disable=SC2046
ok $(hist "$S/new.hist")
check "a new name in a sticky shared directory is written" grep -q '^# Histogram' "$S/new.hist"
echo old >"$TMP/target"
ln -s "$TMP/target" "$S/mine"
# shellcheck disable=SC2046
ok $(hist "$S/mine")
check "the caller's link is followed: its target has the histogram" grep -q '^# Histogram' "$TMP/target"
check "... and the link stays a link to it" test -L "$S/mine" -a "$(readlink "$S/mine")" = "$TMP/target"

# ---- a replaced file keeps its mode and owner; a hard link to it keeps the old content
K=$TMP/keep.hist
echo old >"$K"
chown 65534:65534 "$K"
chmod 640 "$K"
ln "$K" "$TMP/keep.hardlink"
# shellcheck disable=SC2046
ok $(hist "$K")
check "a replaced file keeps mode 640 and owner 65534:65534 (got $(stat -c '%a %u:%g' "$K"))" \
	test "$(stat -c '%a %u:%g' "$K")" = "640 65534:65534"
check "... holds the histogram" grep -q '^# Histogram' "$K"
check "... and its hard link keeps the old content (the name is replaced, not the file)" \
	same "$TMP/keep.hardlink" old
# a hard link to a file of root's, planted in the shared directory: the name is replaced,
# the file it shared is not written
ln "$SECRET" "$S/hard.hist"
# shellcheck disable=SC2046
ok $(hist "$S/hard.hist")
check "a hard link's other name is untouched" same "$SECRET" secret
check "... the replaced name keeps its mode 600" test "$(stat -c %a "$S/hard.hist")" = 600
# a new file: 0644 whatever the umask, so that a collector run as another user reads it
# shellcheck disable=SC2046
run_cmd bash -c 'umask 077 && exec "$@"' umask077 "$PN" $(hist "$TMP/umask.hist")
check "under umask 077: exit 0 (got $RC: $(head -c 200 "$ERR"))" test "$RC" -eq 0
check "... a new file is 0644 (got $(stat -c %a "$TMP/umask.hist" 2>&1))" \
	test "$(stat -c %a "$TMP/umask.hist" 2>/dev/null)" = 644

# ---- a FIFO is written in place and stays a FIFO
mkfifo "$TMP/fifo"
cat "$TMP/fifo" >"$TMP/fifo.out" &
reader=$!
# shellcheck disable=SC2046
ok $(hist "$TMP/fifo")
wait "$reader"
check "a FIFO is written in place" grep -q '^# Histogram' "$TMP/fifo.out"
check "... and stays a FIFO" test -p "$TMP/fifo"

# ---- --plot: links planted in a shared directory of root's are not written through;
# --prom in the same run keeps the mode and owner of the file it replaces.
if command -v gnuplot >/dev/null; then
	P=$TMP/plots
	mkdir -m 1777 "$P"
	as_nobody ln -s "$SECRET" "$P/overshoot_cdf.png"
	as_nobody ln -s "$SECRET" "$P/clock_cost.dat"
	KP=$TMP/keep.prom
	echo old >"$KP"
	chown 65534:65534 "$KP"
	chmod 640 "$KP"
	run probe --quick --prom "$KP" --plot "$P"
	check "--plot onto another user's link: exit 1 (got $RC)" test "$RC" -eq 1
	check "... one line naming the file" \
		test "$(wc -l <"$ERR")" -eq 1 -a "$(grep -c 'overshoot_cdf.png: Permission denied' "$ERR")" -eq 1
	check "... the secret is untouched" same "$SECRET" secret
	check "... the links are still those links" \
		test "$(readlink "$P/overshoot_cdf.png")" = "$SECRET" -a "$(readlink "$P/clock_cost.dat")" = "$SECRET"
	check "... no temporary file left" test -z "$(find "$P" -name '*.tmp.*')"
	check "--prom in that run kept mode 640 and owner 65534 (got $(stat -c '%a %u' "$KP"))" \
		test "$(stat -c '%a %u' "$KP")" = "640 65534"
	check "... and holds the metrics" grep -q '^punctual_host_info{' "$KP"
else
	skip "--plot: gnuplot is not installed"
fi

# ---- --plot is all or nothing: a full disk leaves no file, a signal no temporary file
if command -v gnuplot >/dev/null && [ "$(id -u)" = 0 ] && mkdir "$TMP/small" &&
	mount -t tmpfs -o size=96k tmpfs "$TMP/small" 2>/dev/null; then
	run probe --quick --plot "$TMP/small/plots"
	left=$(find "$TMP/small/plots" -type f | wc -l)
	umount "$TMP/small"
	check "--plot on a full disk: exit 1 (got $RC: $(head -c 200 "$ERR"))" test "$RC" -eq 1
	check "... one line naming what failed" test "$(wc -l <"$ERR")" -eq 1
	check "... no file of the charts left behind ($left)" test "$left" -eq 0
else
	skip "--plot on a full disk: needs gnuplot, root and a tmpfs mount"
fi
# a gnuplot that takes its time: the data files are staged meanwhile, SIGTERM removes them
mkdir -p "$TMP/slowbin" "$TMP/sigplots"
printf '#!/bin/sh\necho $$ >%s/gnuplot.pid\nexec sleep 60\n' "$TMP" >"$TMP/slowbin/gnuplot"
chmod +x "$TMP/slowbin/gnuplot"
PATH="$TMP/slowbin:$PATH" "$PN" probe --quick --plot "$TMP/sigplots" >/dev/null 2>&1 &
pid=$!
for _ in $(seq 600); do
	[ -n "$(find "$TMP/sigplots" -name '*.tmp.*' 2>/dev/null)" ] && break
	sleep 0.1
done
staged=$(find "$TMP/sigplots" -name '*.tmp.*' | wc -l)
kill -TERM "$pid"
wait "$pid"
rc=$?
[ -s "$TMP/gnuplot.pid" ] && kill "$(cat "$TMP/gnuplot.pid")" 2>/dev/null
check "--plot: files staged while gnuplot runs ($staged)" test "$staged" -gt 0
check "--plot: SIGTERM ends it by the signal (got $rc)" test "$rc" -eq 143
check "... and leaves no temporary file ($(find "$TMP/sigplots" -name '*.tmp.*' | head -3))" \
	test -z "$(find "$TMP/sigplots" -name '*.tmp.*')"


# --plot DIR where no directory can be: bad input, exit 2, before measuring.
usage_error "/proc/x: No such file or directory" probe --quick --plot /proc/x
check "--plot /proc/x: no trial directory left" test ! -e /proc/x

# gnuplot's warnings stay its own while it succeeds; when it fails, its first line, once.
mkdir -p "$TMP/warnbin" "$TMP/failbin"
printf '#!/bin/sh
echo "warning: noisy font" >&2
cat >/dev/null
echo chart
' \
	>"$TMP/warnbin/gnuplot"
printf '#!/bin/sh
printf "\\nline 1: boom\\nline 2: more\\n" >&2
exit 1
' >"$TMP/failbin/gnuplot"
chmod +x "$TMP/warnbin/gnuplot" "$TMP/failbin/gnuplot"
PATH="$TMP/warnbin:$PATH" run probe --quick --plot "$TMP/warnplots"
check "--plot, gnuplot warns: exit 0 ($RC)" test "$RC" -eq 0
check "--plot, gnuplot warns: not on our stderr" test -z "$(grep warning "$ERR")"
PATH="$TMP/failbin:$PATH" run probe --quick --plot "$TMP/failplots"
check "--plot, gnuplot fails: exit 1 ($RC)" test "$RC" -eq 1
check "--plot, gnuplot fails: its first line, once" \
	test "$(grep -c 'gnuplot: line 1: boom$' "$ERR")" -eq 1 -a -z "$(grep 'line 2' "$ERR")"

finish
