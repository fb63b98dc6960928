#!/usr/bin/env bash
# daemons.sh: the skeleton shared by hack/testenv.sh, hack/cluster.sh and hack/containerd16.sh,
# which source it (it sources hack/lib.sh): logging, the root check, the lock, process lookup,
# check-clean and the command dispatch (main); and, for the two containerd environments
# (testenv, containerd16), their teardown, purge and the leftovers of their pods.
#
# A script sets, before sourcing it:
#   LOG_NAME     the prefix of its log lines ("testenv")
#   STATE_VAR    the name of the variable that holds its state directory ("TESTENV_DIR")
#   PROC_NEEDLE  what the command line of its processes contains (pid_alive, our_pids)
#   ROOT_NEEDS   what root is needed for (need_root's message)
#   LOCK_FILE, LOCK_WAIT  the lock that serializes invocations, and the seconds to wait for it
#   COMMANDS     the commands main accepts: command c runs function cmd_c (dashes as underscores)
#   USAGE        the lines of the script's header comment (sed range) that main prints otherwise
# and defines leftovers (what check-clean reports, through found). A containerd environment
# also sets SOCK, TOOLS_DIR, BRIDGE and CNI_NETWORK, and defines containerd_pid and
# containerd_ok.

log() { echo "$LOG_NAME: $*" >&2; }
# shellcheck source=hack/lib.sh
source "$REPO_DIR/hack/lib.sh"
die() { log "ERROR: $*"; exit 1; }

# state_dir: the script's state directory.
state_dir() { echo "${!STATE_VAR}"; }

# check_dir: dies unless the state directory is an absolute path other than / and outside the
# git tree. A script may redefine it to check more.
check_dir() { check_state_dir "$STATE_VAR" "${!STATE_VAR}"; }

need_root() { [[ $(id -u) -eq 0 ]] || die "must run as root ($ROOT_NEEDS)"; }

lock() { lock_on "$LOCK_FILE" "$LOCK_WAIT"; }

# ---------------------------------------------------------------- processes

# pid_alive PIDFILE: prints the PID if the recorded process still runs as the script's.
pid_alive() { recorded_pid "$1" "$PROC_NEEDLE"; }

# our_pids REGEX: PIDs of processes whose command name matches REGEX and whose command line
# contains PROC_NEEDLE.
our_pids() { pids_matching "$1" "$PROC_NEEDLE"; }

# ---------------------------------------------------------------- inspection

# found WHAT LIST: in check-clean, report LIST (if not empty) as left over.
found() {
	[[ -z ${2// /} ]] && return 0
	echo "dirty: $1: $2"
	dirty=1
}

# cmd_check_clean: exit 1 if the script's leftovers found anything.
cmd_check_clean() {
	local dirty=0
	leftovers
	[[ $dirty -eq 0 ]] && echo "clean"
	return $dirty
}

# main COMMAND [ARG...]: checks the state directory, then runs cmd_COMMAND with the ARGs if
# COMMAND is one of COMMANDS; otherwise prints the usage and exits 2.
main() {
	check_dir
	local c=${1:-}
	if [[ -n $c && " ${COMMANDS[*]} " == *" $c "* ]]; then
		shift
		"cmd_${c//-/_}" "$@"
		return
	fi
	sed -n "${USAGE}p" "${BASH_SOURCE[-1]}" | sed 's/^# \{0,1\}//' >&2
	exit 2
}

# ---------------------------------------------------------------- containerd environments

mounts_under() { mounts_in "$(state_dir)"; }
runc_roots() { runc_roots_in "$(state_dir)"; }
shim_pids() { our_pids '^containerd-shim'; }

# cri_clean: removes every pod through CRI (hack/cri-clean), before containerd is stopped.
cri_clean() {
	if (cd "$REPO_DIR" && GOFLAGS=-buildvcs=false go build -o "$TOOLS_DIR/cri-clean" ./hack/cri-clean); then
		"$TOOLS_DIR/cri-clean" -endpoint "unix://$SOCK" -timeout 2m ||
			log "WARNING: removing pods through CRI failed; forcing cleanup"
	else
		log "WARNING: building hack/cri-clean failed; forcing cleanup"
	fi
}

# runtime_down PIDFILE...: down's teardown of a containerd environment: every pod through CRI,
# containerd, the containers and shims left, the script's stop_others (other daemons, if it
# defines one), the PID files, the sockets, the mounts, network namespaces and IP leases of
# pods, containerd's state and the bridge. Images and content are kept.
runtime_down() {
	local pid dir
	local -a shims
	dir=$(state_dir)
	if containerd_pid >/dev/null && containerd_ok >/dev/null 2>&1; then cri_clean; fi
	if pid=$(containerd_pid); then log "stopping containerd (pid $pid)" && stop_pids 15 "$pid"; fi
	kill_runc_containers "$dir"
	mapfile -t shims < <(shim_pids)
	[[ ${#shims[@]} -eq 0 ]] || { log "stopping shims ${shims[*]}" && stop_pids 5 "${shims[@]}"; }
	if declare -F stop_others >/dev/null; then stop_others; fi
	rm -f "$@" "$SOCK" "$SOCK.ttrpc"
	unmount_in "$dir"
	# netns bind-mount targets and host-local IP leases of pods that are gone.
	find "$dir/state" -path '*/netns/cni-*' -delete 2>/dev/null || true
	rm -rf "${dir:?}/cni/ipam/$CNI_NETWORK" /var/lib/cni/results/"$CNI_NETWORK"-* 2>/dev/null || true
	# state is containerd's /run: wipe it like a reboot would, but never across a mount.
	[[ -n $(mounts_under) ]] || rm -rf --one-file-system "$dir/state"
	if ip link show "$BRIDGE" >/dev/null 2>&1; then
		log "deleting bridge $BRIDGE"
		ip link del "$BRIDGE" || log "WARNING: cannot delete bridge $BRIDGE"
	fi
	log "down"
}

# cmd_purge: down, then delete the state directory entirely.
cmd_purge() {
	local dir
	cmd_down
	dir=$(state_dir)
	[[ -d $dir ]] || return 0
	[[ -z $(mounts_under) ]] || die "mounts remain under $dir; not deleting it"
	log "deleting $dir"
	rm -rf --one-file-system "$dir"
}

# host_status: status's lines on what pods leave on the host.
host_status() {
	echo "mounts under $(state_dir): $(mounts_under | wc -l)"
	echo "bridge $BRIDGE: $(ip -br link show "$BRIDGE" 2>/dev/null || echo absent)"
}

# runtime_leftovers: check-clean's findings on what pods leave: mounts, runc containers, the
# bridge and network namespaces.
runtime_leftovers() {
	local root dir
	dir=$(state_dir)
	found "mounts under $dir" "$(mounts_under | tr '\n' ' ')"
	while read -r root; do
		[[ -n $root ]] && found "runc containers in $root" "$(runc_list "$root" | tr '\n' ' ' || true)"
	done < <(runc_roots || true)
	found "bridge" "$(ip -br link show "$BRIDGE" 2>/dev/null || true)"
	found "network namespaces" "$(find "$dir/state" -path '*/netns/cni-*' 2>/dev/null | tr '\n' ' ' || true)"
}
