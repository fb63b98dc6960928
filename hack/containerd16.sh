#!/usr/bin/env bash
# containerd16.sh: a second container runtime for the end-to-end tests: Debian's containerd 1.6
# (no CRI container events: GetContainerEvents is Unimplemented before 1.7, and so is
# RuntimeConfig), to show that nodelet falls back to relisting on it.
#
# Usage (as root, Debian 12, after `hack/testenv.sh up`, whose registry it pulls from):
#   hack/containerd16.sh up           install Debian's containerd if missing, start it, print the env
#   hack/containerd16.sh down         remove every pod through CRI, stop containerd and its shims,
#                                     unmount, delete the bridge; keeps images (warm next up)
#   hack/containerd16.sh status       print what runs; exit 0 only when containerd 1.6 answers
#   hack/containerd16.sh check-clean  exit 1 if a daemon, shim, container, mount or the bridge remains
#   hack/containerd16.sh purge        down, then delete CONTAINERD16_DIR entirely
#   hack/containerd16.sh env          print the environment variables to use
#
# Everything lives under CONTAINERD16_DIR (default /var/lib/nodelet-containerd16): root, state,
# socket, runc root, CNI config and IPAM, logs. It is deliberately not inside testenv's
# TESTENV_DIR: testenv's down and check-clean claim every process and mount that names that
# directory. Pods get their own bridge and subnet (nodelet16, 10.89.0.0/16), so neither
# environment's teardown touches the other's network. Binaries are the package's /usr/bin ones
# (containerd, containerd-shim-runc-v2, ctr), found through a PATH set here, never testenv's.
# shellcheck disable=SC2317 # the cmd_* functions are run by main (hack/lib/daemons.sh)
set -euo pipefail

CONTAINERD16_DIR=${CONTAINERD16_DIR:-/var/lib/nodelet-containerd16}
[[ $CONTAINERD16_DIR == / ]] || CONTAINERD16_DIR=${CONTAINERD16_DIR%/}
DIR=$CONTAINERD16_DIR
REGISTRY_ADDR=127.0.0.1:5000
PAUSE_IMAGE=registry.k8s.io/pause:3.10
BRIDGE=nodelet16
SUBNET=10.89.0.0/16
CNI_NETWORK=nodelet-containerd16
REPO_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# The daemon and its shims see only the system's directories: /usr/bin/containerd-shim-runc-v2
# (the package's), /usr/sbin/runc.
DAEMON_PATH=/usr/bin:/usr/sbin:/bin:/sbin
CONTAINERD=/usr/bin/containerd
CTR=/usr/bin/ctr

SOCK=$DIR/containerd.sock
CONFIG=$DIR/config.toml
CNI_CONF_DIR=$DIR/cni/net.d
LOG=$DIR/logs/containerd.log
PIDFILE=$DIR/run/containerd.pid
TOOLS_DIR=$DIR/bin

LOG_NAME=containerd16
STATE_VAR=CONTAINERD16_DIR
# our_pids: processes whose command line references DIR (shims carry
# `-address DIR/containerd.sock`, runc `--root DIR/runc/...`).
PROC_NEEDLE=$DIR/
ROOT_NEEDS="containerd, mounts, bridge"
LOCK_FILE=$DIR/containerd16.lock
LOCK_WAIT=600
COMMANDS=(up down purge status check-clean env)
USAGE=2,20
# shellcheck source=hack/lib/daemons.sh
source "$REPO_DIR/hack/lib/daemons.sh"

check_dir() {
	check_state_dir CONTAINERD16_DIR "$DIR"
	local testenv=${TESTENV_DIR:-/var/lib/nodelet-testenv}
	[[ $DIR/ != "${testenv%/}"/* && ${testenv%/}/ != "$DIR"/* ]] ||
		die "CONTAINERD16_DIR ($DIR) must not be inside TESTENV_DIR ($testenv) nor contain it"
}

# ---------------------------------------------------------------- processes

# containerd_pid: prints containerd's PID if the recorded process still runs with our config.
containerd_pid() { recorded_pid "$PIDFILE" "$CONFIG"; }

containerd_ok() { [[ -S $SOCK ]] && "$CTR" -a "$SOCK" version; }

# cri_ok: the CRI plugin loaded (containerd serves without it when its config is wrong).
cri_ok() { "$CTR" -a "$SOCK" plugins ls 2>/dev/null | grep -qE '^io\.containerd\.grpc\.v1 +cri +.* ok *$'; }

# ---------------------------------------------------------------- install and config

# ensure_package: Debian's containerd, installed without starting the package's service (a
# policy-rc.d that refuses, only while installing and only if the machine has none).
ensure_package() {
	if ! installed containerd; then
		local guard=""
		if [[ ! -e /usr/sbin/policy-rc.d ]]; then
			guard=/usr/sbin/policy-rc.d
			printf '#!/bin/sh\n# Temporary, from nodelet hack/containerd16.sh: start no service.\nexit 101\n' >"$guard"
			chmod 0755 "$guard"
		fi
		local rc=0
		install_missing containerd || rc=$?
		[[ -z $guard ]] || rm -f "$guard"
		[[ $rc -eq 0 ]] || die "installing Debian's containerd failed"
	fi
	local b
	for b in "$CONTAINERD" /usr/bin/containerd-shim-runc-v2 "$CTR"; do
		[[ -x $b ]] || die "$b missing: is Debian's containerd package installed?"
	done
	"$CONTAINERD" --version | grep -qE ' 1\.6\.' ||
		die "$CONTAINERD is not containerd 1.6: $("$CONTAINERD" --version)"
}

# need_registry: testenv's registry answers and holds the pause image.
need_registry() {
	curl -sf -o /dev/null --max-time 5 "http://$REGISTRY_ADDR/v2/" ||
		die "nothing answers on http://$REGISTRY_ADDR: run hack/testenv.sh up first"
	curl -sf -o /dev/null --max-time 5 -H 'Accept: application/vnd.oci.image.index.v1+json' \
		-H 'Accept: application/vnd.oci.image.manifest.v1+json' \
		-H 'Accept: application/vnd.docker.distribution.manifest.v2+json' \
		"http://$REGISTRY_ADDR/v2/pause/manifests/${PAUSE_IMAGE##*:}" ||
		die "the registry on $REGISTRY_ADDR has no pause image: run hack/testenv.sh up first"
}

write_configs() {
	mkdir -p "$DIR"/{root,state,runc,opt,logs,run,bin,cni/ipam} "$CNI_CONF_DIR" "$DIR/certs.d"
	chmod 0711 "$DIR"

	write_file "$CNI_CONF_DIR/10-nodelet16.conflist" <<EOF
{
  "cniVersion": "1.0.0",
  "name": "$CNI_NETWORK",
  "plugins": [
    {"type": "bridge", "bridge": "$BRIDGE", "isGateway": true, "ipMasq": false, "hairpinMode": true,
     "ipam": {"type": "host-local", "dataDir": "$DIR/cni/ipam",
              "ranges": [[{"subnet": "$SUBNET"}]], "routes": [{"dst": "0.0.0.0/0"}]}},
    {"type": "portmap", "capabilities": {"portMappings": true}}
  ]
}
EOF

	write_file "$CONFIG" <<EOF
# Generated by hack/containerd16.sh. containerd 1.6 configuration (version 2).
version = 2
root = "$DIR/root"
state = "$DIR/state"
oom_score = 0

[grpc]
  address = "$SOCK"

[ttrpc]
  address = "$SOCK.ttrpc"

[debug]
  level = "info"

[plugins]
  [plugins."io.containerd.grpc.v1.cri"]
    sandbox_image = "$PAUSE_IMAGE"
    # REQUIRED here: root lacks CAP_SYS_RESOURCE, negative oom_score_adj breaks runc create.
    restrict_oom_score_adj = true
    netns_mounts_under_state_dir = true
    disable_tcp_service = true
    stream_server_address = "127.0.0.1"
    stream_server_port = "0"
    [plugins."io.containerd.grpc.v1.cri".containerd]
      snapshotter = "overlayfs"
      default_runtime_name = "runc"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
        runtime_type = "io.containerd.runc.v2"
        [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
          SystemdCgroup = false
          Root = "$DIR/runc"
    [plugins."io.containerd.grpc.v1.cri".cni]
      bin_dir = "/usr/lib/cni"
      conf_dir = "$CNI_CONF_DIR"
      max_conf_num = 1
    [plugins."io.containerd.grpc.v1.cri".registry]
      config_path = "$DIR/certs.d"

  [plugins."io.containerd.internal.v1.opt"]
    path = "$DIR/opt"
EOF

	# Public names resolve from the local registry only (as in testenv); the registry itself
	# is plain HTTP.
	local host server
	for host in registry.k8s.io docker.io; do
		server=https://$host
		[[ $host == docker.io ]] && server=https://registry-1.docker.io
		mkdir -p "$DIR/certs.d/$host"
		write_file "$DIR/certs.d/$host/hosts.toml" <<EOF
server = "$server"

[host."http://$REGISTRY_ADDR"]
  capabilities = ["pull", "resolve"]
EOF
	done
	mkdir -p "$DIR/certs.d/$REGISTRY_ADDR"
	write_file "$DIR/certs.d/$REGISTRY_ADDR/hosts.toml" <<<"server = \"http://$REGISTRY_ADDR\""
}

start_containerd() {
	if containerd_pid >/dev/null && containerd_ok >/dev/null 2>&1 && cri_ok; then return 0; fi
	local old
	if old=$(containerd_pid); then
		log "containerd (pid $old) does not answer or has no CRI plugin; restarting it"
		stop_pids 10 "$old"
	fi
	log "starting $("$CONTAINERD" --version | awk '{print $3}') on $SOCK"
	rm -f "$SOCK" "$SOCK.ttrpc"
	env -u CONTAINERD_ADDRESS -u CONTAINERD_NAMESPACE PATH="$DAEMON_PATH" setsid nohup "$CONTAINERD" \
		--config "$CONFIG" >>"$LOG" 2>&1 </dev/null 9>&- &
	echo $! >"$PIDFILE"
	if ! wait_for 60 containerd_ok || ! wait_for 10 cri_ok; then
		tail -n 20 "$LOG" >&2 || true
		die "containerd 1.6 did not answer on $SOCK with its CRI plugin; see $LOG"
	fi
}

print_env() {
	cat <<EOF
CONTAINERD16_ENDPOINT=unix://$SOCK
CONTAINERD16_DIR=$DIR
CONTAINERD16_SUBNET=$SUBNET
EOF
}

cmd_up() {
	need_root
	lock
	ensure_package
	need_registry
	write_configs
	start_containerd
	log "up: containerd $("$CONTAINERD" --version | awk '{print $3}') (pid $(<"$PIDFILE"))"
	print_env
}

# ---------------------------------------------------------------- teardown

cmd_down() {
	need_root
	[[ -d $DIR ]] || { log "down (nothing here)"; return 0; }
	lock
	runtime_down "$PIDFILE"
}

# ---------------------------------------------------------------- inspection

cmd_env() { print_env; }

cmd_status() {
	local rc=0 pid s
	if pid=$(containerd_pid) && containerd_ok >/dev/null 2>&1; then
		echo "containerd 1.6: running (pid $pid), socket $SOCK, CRI plugin $(if cri_ok; then echo ok; else echo MISSING; fi)"
		cri_ok || rc=1
		echo "containers (sandboxes included): $("$CTR" -a "$SOCK" -n k8s.io c ls -q 2>/dev/null | wc -l)"
	else
		echo "containerd 1.6: not running or not answering (pid ${pid:-none})"
		rc=1
	fi
	for s in $(shim_pids); do echo "shim: pid $s, $(readlink "/proc/$s/exe" 2>/dev/null || echo gone)"; done
	host_status
	return "$rc"
}

# leftovers: what check-clean reports.
leftovers() {
	found "processes running from $DIR" "$(our_pids '^(containerd|runc)' | tr '\n' ' ' || true)"
	found "recorded containerd still running" "$(containerd_pid || true)"
	found "socket" "$(if [[ -S $SOCK ]]; then echo "$SOCK"; fi)"
	runtime_leftovers
}

# On one line: bash must not read past it if the file is edited while running.
main "$@"; exit $?
