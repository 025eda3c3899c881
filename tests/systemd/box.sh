# SPDX-License-Identifier: MIT
# box.sh (sourced, bash): a minimal Debian 12 with systemd as PID 1, booted under
# systemd-nspawn, for the tests that need a real systemd. The root is made once by
# debootstrap and cached in $BOX_CACHE/root; each boot runs on a throwaway overlay of it
# (--volatile=overlay), so every boot starts clean and leaves nothing behind.
#   box_start NAME SRC DST   boot, SRC bound read-only at DST; wait until systemd is up
#   box CMD...               run CMD inside (stdin, stdout, stderr and status are CMD's)
#   box_stop                 power off (then kill); box_start makes it the EXIT trap,
#                            which then runs $BOX_ON_EXIT (the caller's own cleanup)
# box_start returns 77 with one line on stderr when nspawn cannot boot on this machine.
# Needs root, debootstrap, systemd-nspawn (scripts/bootstrap systemd), flock, nsenter.

BOX_CACHE=${BOX_CACHE:-/var/tmp/punctual-box-bookworm}
BOX_SUITE=bookworm
BOX_PACKAGES=systemd,systemd-sysv,dbus
# What the cached root is made of: a root whose stamp says otherwise is built anew.
BOX_RECIPE="1 debootstrap --variant=minbase --include=$BOX_PACKAGES $BOX_SUITE"
BOX_PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

# box_mirror: the host's Debian mirror (deb822 URIs: first, then sources.list), not the
# security archive; deb.debian.org when there is none.
box_mirror() {
	local uri
	uri=$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null |
		awk '$1 == "URIs:" { for (i = 2; i <= NF; i++) print $i }' | grep -v security | head -n 1)
	if [ -z "$uri" ]; then
		uri=$(awk '$1 == "deb" { for (i = 2; i <= NF; i++) if ($i ~ /^[a-z]+:\/\//) { print $i; break } }' \
			/etc/apt/sources.list 2>/dev/null | grep -v security | head -n 1)
	fi
	echo "${uri:-http://deb.debian.org/debian}"
}

# _box_discard DIR: removes a root that debootstrap left, unmounting what it mounted
# inside (proc, sys, devpts stay mounted when it is killed) before deleting anything.
_box_discard() {
	local dir=$1 m
	[ -e "$dir" ] || return 0
	awk -v d="$dir/" 'index($5, d) == 1 { print $5 }' /proc/self/mountinfo | sort -r |
		while read -r m; do umount -l "$m"; done
	rm -rf --one-file-system "$dir"
}

# _box_build: debootstrap into a temporary directory, renamed to root only when it
# succeeded; the stamp is written last, so a root without its stamp is never used.
_box_build() {
	local tmp=$BOX_CACHE/root.new.$$ mirror st
	mirror=$(box_mirror)
	for st in "$BOX_CACHE"/root.new.*; do _box_discard "$st"; done
	rm -f "$BOX_CACHE/stamp"
	_box_discard "$BOX_CACHE/root"
	echo "box: debootstrap $BOX_SUITE from $mirror into $BOX_CACHE (once; about a minute)" >&2
	if ! debootstrap --variant=minbase --include="$BOX_PACKAGES" "$BOX_SUITE" "$tmp" "$mirror" \
		>"$BOX_CACHE/debootstrap.log" 2>&1; then
		echo "box: debootstrap failed: $(tail -n 3 "$BOX_CACHE/debootstrap.log")" >&2
		_box_discard "$tmp"
		return 1
	fi
	mv "$tmp" "$BOX_CACHE/root" && echo "$BOX_RECIPE" >"$BOX_CACHE/stamp"
}

# box_root: the cached root, built if missing or of another recipe (BOX_BUILT=1 then).
# Leaves the cache locked (shared) on fd BOX_LOCK for as long as this shell and its
# children live: runs boot it side by side, and none rebuilds it under another's box
# (a rebuild takes the lock exclusive).
box_root() {
	BOX_BUILT=0
	mkdir -p "$BOX_CACHE" || return 1
	exec {BOX_LOCK}>"$BOX_CACHE/lock" || return 1
	_box_lock -s || return 1
	_box_ready && return 0
	_box_lock -x || return 1
	if ! _box_ready; then
		_box_build || return 1
		BOX_BUILT=1
	fi
	_box_lock -s
}

_box_ready() {
	[ "$(cat "$BOX_CACHE/stamp" 2>/dev/null)" = "$BOX_RECIPE" ] && [ -d "$BOX_CACHE/root" ]
}

_box_lock() {
	flock -w 900 "$1" "$BOX_LOCK" && return 0
	echo "box: another run held $BOX_CACHE/lock for 15 min" >&2
	return 1
}

# _box_leader: the container's PID 1 on the host, nspawn's child, once it runs systemd
# (/proc/PID/stat after the command's closing paren: the state, then the parent).
_box_leader() {
	local stat rest comm
	for stat in /proc/[0-9]*/stat; do
		{ read -r rest <"$stat"; } 2>/dev/null || continue
		rest=${rest##*) }
		case $rest in ?" $BOX_NSPAWN "*) ;; *) continue ;; esac
		{ read -r comm <"${stat%stat}comm"; } 2>/dev/null || continue
		[ "$comm" = systemd ] && echo "${stat//[!0-9]/}" && return 0
	done
	return 1
}

# box_start NAME SRC DST: boots the cached root as machine NAME-PID (the shell's), SRC
# bound read-only at DST. Sets BOX_NSPAWN, BOX_LEADER (exported: tests run as child
# processes act through it) and BOX_LOG (nspawn's output). 0 once
# `systemctl is-system-running` says running or degraded (within 90 s), 77 when nspawn
# cannot boot here, 1 when the boot does not finish.
box_start() {
	local name=$1-$$ src=$2 dst=$3 i state
	trap '_box_exit' EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
	box_root || return 1
	BOX_LOG=$(mktemp /tmp/punctual-box.XXXXXX)
	systemd-nspawn -q -D "$BOX_CACHE/root" -b -M "$name" --register=no --keep-unit \
		--console=passive --volatile=overlay --bind-ro="$src:$dst" </dev/null >"$BOX_LOG" 2>&1 &
	BOX_NSPAWN=$!
	BOX_LEADER=""
	for i in $(seq 300); do
		if ! kill -0 "$BOX_NSPAWN" 2>/dev/null; then
			echo "systemd-nspawn cannot boot here: $(grep . "$BOX_LOG" | tail -n 1)" >&2
			return 77
		fi
		BOX_LEADER=$(_box_leader) && break
		sleep 0.1
	done
	if [ -z "$BOX_LEADER" ]; then
		echo "systemd-nspawn cannot boot here: no systemd in the container after 30 s: $(grep . "$BOX_LOG" | tail -n 1)" >&2
		return 77
	fi
	export BOX_LEADER
	for i in $(seq 180); do
		state=$(box systemctl is-system-running 2>/dev/null)
		case "$state" in running | degraded) return 0 ;; esac
		sleep 0.5
	done
	echo "box: systemd inside did not finish booting in 90 s (state '$state'; failed units:" \
		"$(box systemctl --failed --plain --no-legend 2>&1 | awk '{print $1}' | tr '\n' ' '))" >&2
	return 1
}

# box CMD...: runs CMD inside the box, in all of its namespaces but the network (nspawn
# shares the host's), with a clean environment.
box() {
	nsenter -t "${BOX_LEADER:?box: no box started}" -m -u -i -p -C -r -w \
		env -i PATH="$BOX_PATH" "$@"
}

# box_stop: powers the box off and waits up to 20 s, then has nspawn end it (SIGTERM, 5 s),
# then kills it; the overlay goes with nspawn. Safe to call twice, and with no box.
box_stop() {
	[ -n "${BOX_NSPAWN:-}" ] || return 0
	if [ -n "${BOX_LEADER:-}" ] && kill -0 "$BOX_NSPAWN" 2>/dev/null; then
		timeout 10 nsenter -t "$BOX_LEADER" -m -u -i -p -C -r -w \
			env -i PATH="$BOX_PATH" systemctl poweroff >/dev/null 2>&1
		_box_gone 200
	fi
	kill -TERM "$BOX_NSPAWN" 2>/dev/null && _box_gone 50
	if kill -0 "$BOX_NSPAWN" 2>/dev/null; then
		# the container's PID 1 takes every process of its PID namespace with it
		[ -n "${BOX_LEADER:-}" ] && kill -KILL "$BOX_LEADER" 2>/dev/null
		kill -KILL "$BOX_NSPAWN" 2>/dev/null
	fi
	wait "$BOX_NSPAWN" 2>/dev/null
	BOX_NSPAWN="" BOX_LEADER=""
	rm -f "$BOX_LOG"
}

# _box_gone N: waits up to N tenths of a second for nspawn to exit.
_box_gone() {
	for _ in $(seq "$1"); do
		kill -0 "$BOX_NSPAWN" 2>/dev/null || return 0
		sleep 0.1
	done
	return 1
}

_box_exit() {
	box_stop
	[ -z "${BOX_ON_EXIT:-}" ] || eval "$BOX_ON_EXIT"
}
