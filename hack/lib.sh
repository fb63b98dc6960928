#!/usr/bin/env bash
# lib.sh: helpers shared by hack/testenv.sh, hack/cluster.sh and hack/containerd16.sh (through
# hack/lib/daemons.sh, their common skeleton) and hack/conformance.sh, which source it after
# defining log (each prefixes its own name). Processes are tracked by PID, never by name.

# alive PID: the process exists and is not a zombie.
# shellcheck disable=SC2317 # called through wait_for
alive() {
	local st
	st=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) || return 1
	[[ -n $st && $st != Z ]]
}

# shellcheck disable=SC2317 # called through wait_for
none_alive() {
	local pid
	for pid in "$@"; do alive "$pid" && return 1; done
	return 0
}

# stop_pids SECONDS PID...: SIGTERM, wait, then SIGKILL.
stop_pids() {
	local wait=$1
	shift
	[[ $# -gt 0 ]] || return 0
	kill -TERM "$@" 2>/dev/null || true
	wait_for "$wait" none_alive "$@" && return 0
	log "killing $* (did not exit after SIGTERM)"
	kill -KILL "$@" 2>/dev/null || true
	wait_for 5 none_alive "$@" || log "WARNING: processes $* still exist"
}

# wait_for SECONDS COMMAND...: retry COMMAND until it succeeds.
wait_for() {
	local deadline=$((SECONDS + $1))
	shift
	until "$@" >/dev/null 2>&1; do
		((SECONDS < deadline)) || return 1
		sleep 0.1
	done
}

# installed PACKAGE: the Debian package is installed.
installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }

# install_missing PACKAGE...: apt-get install those not installed yet.
install_missing() {
	local missing=() p
	for p in "$@"; do installed "$p" || missing+=("$p"); done
	[[ ${#missing[@]} -eq 0 ]] && return 0
	log "installing Debian packages: ${missing[*]}"
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
}

# write_file PATH [private]: stdin to PATH, only if it changed (mode 0600 when private).
write_file() {
	local tmp
	if [[ ${2:-} == private ]]; then tmp=$(umask 077 && mktemp "$1.XXXXXX"); else tmp=$(mktemp "$1.XXXXXX"); fi
	cat >"$tmp"
	if cmp -s "$tmp" "$1"; then rm -f "$tmp"; else mv -f "$tmp" "$1"; fi
}

# check_state_dir NAME DIR: dies unless DIR (the value of the variable NAME) is an absolute path
# other than / and outside the git tree.
check_state_dir() {
	[[ $2 == /?* ]] || die "$1 must be an absolute path other than /, got '$2'"
	[[ $2/ != "$REPO_DIR"/* ]] || die "$1 ($2) must not be inside the git tree"
}

# mounts_in DIR: mount points under DIR, deepest first.
mounts_in() {
	awk -v p="$1/" '{ m = $5; gsub(/\\040/, " ", m); if (index(m, p) == 1) print m }' \
		/proc/self/mountinfo | sort -r
}

# unmount_in DIR: unmounts everything under DIR (lazily if busy), deepest first.
unmount_in() {
	local m i
	local -a mounts
	for ((i = 0; i < 3; i++)); do
		mapfile -t mounts < <(mounts_in "$1")
		[[ ${#mounts[@]} -eq 0 ]] && return 0
		for m in "${mounts[@]}"; do
			umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || log "WARNING: cannot unmount $m"
		done
	done
	[[ -z $(mounts_in "$1") ]] || log "WARNING: mounts remain under $1"
}

# runc_roots_in DIR: the runc state directories (one per containerd namespace) of DIR/runc.
runc_roots_in() { [[ -d $1/runc ]] && find "$1/runc" -mindepth 1 -maxdepth 1 -type d; }

# runc_list ROOT: the IDs of the containers runc knows in ROOT.
runc_list() { command -v runc >/dev/null && runc --root "$1" list -q 2>/dev/null; }

# kill_runc_containers DIR: force-deletes the containers left in DIR's runc roots.
kill_runc_containers() {
	local root id
	while read -r root; do
		[[ -n $root ]] || continue
		for id in $(runc_list "$root"); do
			log "force-deleting leftover container $id"
			runc --root "$root" delete -f "$id" 2>/dev/null || log "WARNING: runc delete $id failed"
		done
	done < <(runc_roots_in "$1" || true)
}

# lock_on FILE SECONDS: takes an exclusive lock on FILE as fd 9, waiting at most SECONDS. It
# serializes concurrent invocations (two test binaries calling up); daemons are started with fd 9
# closed so that they never hold it.
lock_on() {
	mkdir -p "$(dirname "$1")"
	exec 9>"$1"
	flock -w "$2" 9 || die "timed out waiting for $1"
}

# recorded_pid PIDFILE NEEDLE: prints the PID in PIDFILE if that process still runs and its
# command line contains NEEDLE (so a reused PID is not taken for ours).
recorded_pid() {
	local pid
	[[ -s $1 ]] || return 1
	pid=$(<"$1")
	[[ $pid =~ ^[0-9]+$ ]] && alive "$pid" || return 1
	tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF -- "$2" || return 1
	echo "$pid"
}

# pids_matching REGEX NEEDLE: PIDs of processes whose command name matches REGEX and whose
# command line contains NEEDLE.
pids_matching() {
	local d pid comm
	for d in /proc/[0-9]*; do
		pid=${d#/proc/}
		comm=$(cat "$d/comm" 2>/dev/null) || continue
		[[ $comm =~ $1 ]] || continue
		tr '\0' ' ' <"$d/cmdline" 2>/dev/null | grep -qF -- "$2" || continue
		echo "$pid"
	done
}
