#!/usr/bin/env bash
# testenv.sh: the real container runtime test environment for nodelet.
#
# Usage (as root, Debian 12):
#   hack/testenv.sh up           install packages, build containerd if missing, start containerd,
#                                a local registry and one that requires credentials, push the test
#                                images, print the env to use
#   hack/testenv.sh down         remove every pod through CRI, stop daemons and shims, unmount,
#                                delete the bridge; keeps images and containerd content (warm next up)
#   hack/testenv.sh status       print what runs; exit 0 only when containerd and both registries run
#   hack/testenv.sh check-clean  exit 1 if a daemon, shim, container, mount or the bridge remains
#   hack/testenv.sh purge        down, then delete TESTENV_DIR entirely
#   hack/testenv.sh env          print the environment variables to use
#
# Everything lives under TESTENV_DIR (default /var/lib/nodelet-testenv), never in the git tree.
# containerd binaries are cached in NODELET_BIN_CACHE (default /var/cache/nodelet/bin).
# One environment per machine: it owns 127.0.0.1:5000, 127.0.0.1:5001, the bridge nodelet0 and
# 10.88.0.0/16. The registry on 5001 requires HTTP basic auth (AUTH_REGISTRY_USER/PASSWORD in `env`,
# fixed test values) and holds 127.0.0.1:5001/private/busybox:1.35, for image pull secret tests.
# shellcheck disable=SC2317 # the cmd_* functions are run by main (hack/lib/daemons.sh)
set -euo pipefail

TESTENV_DIR=${TESTENV_DIR:-/var/lib/nodelet-testenv}
[[ $TESTENV_DIR == / ]] || TESTENV_DIR=${TESTENV_DIR%/}
BIN_CACHE=${NODELET_BIN_CACHE:-/var/cache/nodelet/bin}
CONTAINERD_VERSION=v2.4.2
REGISTRY_ADDR=127.0.0.1:5000
AUTH_REGISTRY_ADDR=127.0.0.1:5001
# Fixed credentials of the auth registry: loopback-only test data, not a secret.
AUTH_REGISTRY_USER=nodelet
AUTH_REGISTRY_PASSWORD=nodelet-testenv-password
AUTH_REGISTRY_IMAGE=$AUTH_REGISTRY_ADDR/private/busybox:1.35
BRIDGE=nodelet0
SUBNET=10.88.0.0/16
CNI_NETWORK=nodelet-testenv
PAUSE_IMAGE=registry.k8s.io/pause:3.10
PACKAGES=(runc containernetworking-plugins docker-registry busybox-static iproute2 iptables
	curl gcc libc6-dev apache2-utils)
REPO_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

SOCK=$TESTENV_DIR/containerd.sock
CTRD_CONFIG=$TESTENV_DIR/containerd/config.toml
REG_CONFIG=$TESTENV_DIR/registry/config.yml
AUTH_REG_DIR=$TESTENV_DIR/registry-auth
CNI_CONF_DIR=$TESTENV_DIR/cni/net.d
LOG_DIR=$TESTENV_DIR/logs
RUN_DIR=$TESTENV_DIR/run
TOOLS_DIR=$TESTENV_DIR/bin

LOG_NAME=testenv
STATE_VAR=TESTENV_DIR
PROC_NEEDLE=$TESTENV_DIR # pid_alive and our_pids: processes running from TESTENV_DIR
ROOT_NEEDS="containerd, mounts, bridge"
LOCK_FILE=$TESTENV_DIR/testenv.lock
LOCK_WAIT=1200
COMMANDS=(up down purge status check-clean env)
USAGE=2,19
# shellcheck source=hack/lib/daemons.sh
source "$REPO_DIR/hack/lib/daemons.sh"

containerd_pid() { pid_alive "$RUN_DIR/containerd.pid"; }

# ---------------------------------------------------------------- install

ensure_packages() { install_missing "${PACKAGES[@]}"; }

have_containerd() {
	local b
	for b in containerd containerd-shim-runc-v2 ctr; do
		[[ -x $BIN_CACHE/$b ]] || return 1
	done
	"$BIN_CACHE/containerd" --version 2>/dev/null | grep -qE " v?${CONTAINERD_VERSION#v}([+ ]|$)"
}

ensure_containerd() {
	have_containerd && return 0
	command -v go >/dev/null || die "go is needed to build containerd $CONTAINERD_VERSION"
	mkdir -p "$BIN_CACHE" "$LOG_DIR"
	# Someone else (another up, or a manual go install) may be building right now.
	exec 8>"$BIN_CACHE/.build.lock"
	flock -w 1200 8 || die "timed out waiting for $BIN_CACHE/.build.lock"
	local i
	for ((i = 0; i < 1200; i++)); do
		pgrep -f 'go install .*containerd/v2/cmd/' >/dev/null || break
		((i % 30 == 0)) && log "waiting for a running containerd build to finish"
		sleep 1
	done
	if ! have_containerd; then
		log "building containerd $CONTAINERD_VERSION into $BIN_CACHE (a few minutes on 2 cores)"
		local start=$SECONDS
		local pkg=github.com/containerd/containerd/v2/cmd
		GOBIN=$BIN_CACHE GOFLAGS=-buildvcs=false go install -tags no_btrfs \
			"$pkg/containerd@$CONTAINERD_VERSION" "$pkg/containerd-shim-runc-v2@$CONTAINERD_VERSION" \
			"$pkg/ctr@$CONTAINERD_VERSION" >"$LOG_DIR/containerd-build.log" 2>&1 ||
			die "containerd build failed, see $LOG_DIR/containerd-build.log"
		log "built containerd in $((SECONDS - start))s"
	fi
	exec 8>&-
	have_containerd || die "containerd $CONTAINERD_VERSION missing in $BIN_CACHE after build"
}

# ---------------------------------------------------------------- config

write_configs() {
	mkdir -p "$TESTENV_DIR"/{containerd,root,state,registry/data,registry-auth/data,cni/ipam,opt} \
		"$CNI_CONF_DIR" "$LOG_DIR" "$RUN_DIR" "$TOOLS_DIR" "$TESTENV_DIR/certs.d"
	chmod 0711 "$TESTENV_DIR"

	write_file "$CNI_CONF_DIR/10-nodelet.conflist" <<EOF
{
  "cniVersion": "1.0.0",
  "name": "$CNI_NETWORK",
  "plugins": [
    {"type": "bridge", "bridge": "$BRIDGE", "isGateway": true, "ipMasq": false, "hairpinMode": true,
     "ipam": {"type": "host-local", "dataDir": "$TESTENV_DIR/cni/ipam",
              "ranges": [[{"subnet": "$SUBNET"}]], "routes": [{"dst": "0.0.0.0/0"}]}},
    {"type": "portmap", "capabilities": {"portMappings": true}}
  ]
}
EOF

	# Shim sockets default to /run/containerd/s; keep them here when the path is short
	# enough (containerd allows 38 characters).
	local shim_sockets="" s_dir=$TESTENV_DIR/s
	if [[ ${#s_dir} -le 38 ]]; then
		mkdir -p "$s_dir" && chmod 0700 "$s_dir"
		shim_sockets="socket_dir = '$s_dir'"
	fi
	write_file "$CTRD_CONFIG" <<EOF
# Generated by hack/testenv.sh. containerd 2.x configuration (version 3).
version = 3
root = '$TESTENV_DIR/root'
state = '$TESTENV_DIR/state'
imports = []

[grpc]
  address = '$SOCK'

[ttrpc]
  address = '$SOCK.ttrpc'

[plugins]
  [plugins.'io.containerd.cri.v1.images']
    snapshotter = 'overlayfs'
    [plugins.'io.containerd.cri.v1.images'.pinned_images]
      sandbox = '$PAUSE_IMAGE'
    [plugins.'io.containerd.cri.v1.images'.registry]
      config_path = '$TESTENV_DIR/certs.d'

  [plugins.'io.containerd.cri.v1.runtime']
    # REQUIRED here: root lacks CAP_SYS_RESOURCE, negative oom_score_adj breaks runc create.
    restrict_oom_score_adj = true
    netns_mounts_under_state_dir = true
    [plugins.'io.containerd.cri.v1.runtime'.containerd]
      default_runtime_name = 'runc'
      [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]
        runtime_type = 'io.containerd.runc.v2'
        [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]
          SystemdCgroup = false
          Root = '$TESTENV_DIR/runc'
      # A second handler for RuntimeClass tests (same runc, same state root).
      [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.nodelet-alt]
        runtime_type = 'io.containerd.runc.v2'
        [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.nodelet-alt.options]
          SystemdCgroup = false
          Root = '$TESTENV_DIR/runc'
    [plugins.'io.containerd.cri.v1.runtime'.cni]
      bin_dirs = ['/usr/lib/cni']
      conf_dir = '$CNI_CONF_DIR'
      max_conf_num = 1

  [plugins.'io.containerd.grpc.v1.cri']
    disable_tcp_service = true
    stream_server_address = '127.0.0.1'
    stream_server_port = '0'

  [plugins.'io.containerd.internal.v1.opt']
    path = '$TESTENV_DIR/opt'

  [plugins.'io.containerd.nri.v1.nri']
    disable = true

  [plugins.'io.containerd.shim.v1.manager']
    $shim_sockets

  [plugins.'io.containerd.transfer.v1.local']
    config_path = '$TESTENV_DIR/certs.d'
EOF

	local host
	for host in registry.k8s.io docker.io; do
		mkdir -p "$TESTENV_DIR/certs.d/$host"
		local server=https://$host
		[[ $host == docker.io ]] && server=https://registry-1.docker.io
		write_file "$TESTENV_DIR/certs.d/$host/hosts.toml" <<EOF
# Resolve $host from the local test registry only.
server = "$server"

[host."http://$REGISTRY_ADDR"]
  capabilities = ["pull", "resolve"]
EOF
	done
	mkdir -p "$TESTENV_DIR/certs.d/$REGISTRY_ADDR"
	write_file "$TESTENV_DIR/certs.d/$REGISTRY_ADDR/hosts.toml" <<EOF
server = "http://$REGISTRY_ADDR"
EOF

	write_file "$REG_CONFIG" <<EOF
# Generated by hack/testenv.sh.
version: 0.1
log:
  level: warn
  accesslog:
    disabled: true
storage:
  filesystem:
    rootdirectory: $TESTENV_DIR/registry/data
  delete:
    enabled: true
http:
  addr: $REGISTRY_ADDR
  secret: nodelet-testenv-local-only
EOF
	write_auth_registry_config
}

# write_auth_registry_config: the second registry, which requires HTTP basic auth (htpasswd,
# bcrypt), and the containerd hosts.toml that reaches it over plain HTTP.
write_auth_registry_config() {
	mkdir -p "$TESTENV_DIR/certs.d/$AUTH_REGISTRY_ADDR"
	write_file "$TESTENV_DIR/certs.d/$AUTH_REGISTRY_ADDR/hosts.toml" <<EOF
# Plain HTTP; credentials come from the pull request (image pull secrets).
server = "http://$AUTH_REGISTRY_ADDR"
EOF
	if ! htpasswd -vb "$AUTH_REG_DIR/htpasswd" "$AUTH_REGISTRY_USER" "$AUTH_REGISTRY_PASSWORD" >/dev/null 2>&1; then
		htpasswd -Bbc "$AUTH_REG_DIR/htpasswd" "$AUTH_REGISTRY_USER" "$AUTH_REGISTRY_PASSWORD" 2>/dev/null ||
			die "cannot write $AUTH_REG_DIR/htpasswd"
	fi
	write_file "$AUTH_REG_DIR/config.yml" <<EOF
# Generated by hack/testenv.sh.
version: 0.1
log:
  level: warn
  accesslog:
    disabled: true
storage:
  filesystem:
    rootdirectory: $AUTH_REG_DIR/data
  delete:
    enabled: true
auth:
  htpasswd:
    realm: nodelet-testenv
    path: $AUTH_REG_DIR/htpasswd
http:
  addr: $AUTH_REGISTRY_ADDR
  secret: nodelet-testenv-auth-local-only
EOF
}

# ---------------------------------------------------------------- daemons

registry_ok() { curl -sf -o /dev/null "http://$REGISTRY_ADDR/v2/"; }
# http_status URL [CURL ARGS...]: the HTTP status code of a GET (000 when nothing answers).
http_status() { curl -s -o /dev/null -w '%{http_code}' --max-time 5 "$@" || true; }
# auth_registry_ok: the auth registry refuses anonymous requests (401) and accepts ours.
# shellcheck disable=SC2317 # called through wait_for
auth_registry_ok() {
	[[ $(http_status "http://$AUTH_REGISTRY_ADDR/v2/") == 401 ]] &&
		[[ $(http_status "http://$AUTH_REGISTRY_ADDR/v2/" -u "$AUTH_REGISTRY_USER:$AUTH_REGISTRY_PASSWORD") == 200 ]]
}
containerd_ok() { [[ -S $SOCK ]] && "$BIN_CACHE/ctr" -a "$SOCK" version; }

start_registry() {
	if pid_alive "$RUN_DIR/registry.pid" >/dev/null && registry_ok; then return 0; fi
	! registry_ok || die "$REGISTRY_ADDR answers but is not this environment's registry (ss -ltnp sport = :5000)"
	log "starting docker-registry on $REGISTRY_ADDR"
	# 9>&-: the daemon must not inherit (and hold) the testenv lock.
	setsid nohup docker-registry serve "$REG_CONFIG" >>"$LOG_DIR/registry.log" 2>&1 </dev/null 9>&- &
	echo $! >"$RUN_DIR/registry.pid"
	wait_for 30 registry_ok || die "registry did not answer; see $LOG_DIR/registry.log"
}

start_auth_registry() {
	if pid_alive "$RUN_DIR/registry-auth.pid" >/dev/null && auth_registry_ok; then return 0; fi
	[[ $(http_status "http://$AUTH_REGISTRY_ADDR/v2/") == 000 ]] ||
		die "$AUTH_REGISTRY_ADDR answers but is not this environment's auth registry (ss -ltnp sport = :${AUTH_REGISTRY_ADDR##*:})"
	log "starting docker-registry with htpasswd auth on $AUTH_REGISTRY_ADDR"
	setsid nohup docker-registry serve "$AUTH_REG_DIR/config.yml" >>"$LOG_DIR/registry-auth.log" 2>&1 </dev/null 9>&- &
	echo $! >"$RUN_DIR/registry-auth.pid"
	wait_for 30 auth_registry_ok || die "auth registry did not answer as expected; see $LOG_DIR/registry-auth.log"
}

# check_private_image: the private image is there for authenticated pulls only.
check_private_image() {
	local repo=${AUTH_REGISTRY_IMAGE#*/} manifest anon authed
	manifest=http://$AUTH_REGISTRY_ADDR/v2/${repo%:*}/manifests/${repo##*:}
	local -a accept=(-H 'Accept: application/vnd.oci.image.manifest.v1+json'
		-H 'Accept: application/vnd.docker.distribution.manifest.v2+json')
	anon=$(http_status "$manifest" "${accept[@]}")
	authed=$(http_status "$manifest" "${accept[@]}" -u "$AUTH_REGISTRY_USER:$AUTH_REGISTRY_PASSWORD")
	[[ $anon == 401 && $authed == 200 ]] ||
		die "$AUTH_REGISTRY_IMAGE: anonymous pull got HTTP $anon (want 401), authenticated got $authed (want 200)"
}

start_containerd() {
	if pid_alive "$RUN_DIR/containerd.pid" >/dev/null && containerd_ok >/dev/null 2>&1; then return 0; fi
	local old
	if old=$(pid_alive "$RUN_DIR/containerd.pid"); then
		log "containerd (pid $old) does not answer; restarting it"
		stop_pids 10 "$old"
	fi
	log "starting containerd $CONTAINERD_VERSION on $SOCK"
	rm -f "$SOCK" "$SOCK.ttrpc"
	PATH=$BIN_CACHE:$PATH setsid nohup "$BIN_CACHE/containerd" --config "$CTRD_CONFIG" \
		>>"$LOG_DIR/containerd.log" 2>&1 </dev/null 9>&- &
	echo $! >"$RUN_DIR/containerd.pid"
	if ! wait_for 60 containerd_ok; then
		tail -n 20 "$LOG_DIR/containerd.log" >&2 || true
		die "containerd did not answer on $SOCK; see $LOG_DIR/containerd.log"
	fi
}

# go_tool NAME: build ./hack/NAME into TOOLS_DIR (cached by the go build cache).
go_tool() {
	(cd "$REPO_DIR" && GOFLAGS=-buildvcs=false go build -o "$TOOLS_DIR/$1" "./hack/$1") ||
		die "building hack/$1 failed"
}

push_images() {
	go_tool testimages
	TESTIMAGES_AUTH_PASSWORD=$AUTH_REGISTRY_PASSWORD "$TOOLS_DIR/testimages" -registry "$REGISTRY_ADDR" \
		-auth-registry "$AUTH_REGISTRY_ADDR" -auth-user "$AUTH_REGISTRY_USER" -src "$REPO_DIR/hack/testimages" \
		-busybox /bin/busybox -workdir "$TESTENV_DIR/tmp" || die "pushing test images failed"
	check_private_image
}

print_env() {
	cat <<EOF
CONTAINER_RUNTIME_ENDPOINT=unix://$SOCK
IMAGE_SERVICE_ENDPOINT=unix://$SOCK
TESTENV_DIR=$TESTENV_DIR
TESTENV_REGISTRY=$REGISTRY_ADDR
CONTAINERD_BIN_DIR=$BIN_CACHE
AUTH_REGISTRY=$AUTH_REGISTRY_ADDR
AUTH_REGISTRY_USER=$AUTH_REGISTRY_USER
AUTH_REGISTRY_PASSWORD=$AUTH_REGISTRY_PASSWORD
AUTH_REGISTRY_IMAGE=$AUTH_REGISTRY_IMAGE
EOF
}

cmd_up() {
	need_root
	lock
	ensure_packages
	ensure_containerd
	write_configs
	start_registry
	start_auth_registry
	start_containerd
	push_images
	log "up: containerd $CONTAINERD_VERSION (pid $(<"$RUN_DIR/containerd.pid")), registry (pid $(<"$RUN_DIR/registry.pid")), auth registry (pid $(<"$RUN_DIR/registry-auth.pid"))"
	print_env
}

# ---------------------------------------------------------------- teardown

# stop_others: runtime_down's step for the registries.
stop_others() {
	local pid
	if pid=$(pid_alive "$RUN_DIR/registry.pid"); then log "stopping registry (pid $pid)" && stop_pids 10 "$pid"; fi
	if pid=$(pid_alive "$RUN_DIR/registry-auth.pid"); then log "stopping auth registry (pid $pid)" && stop_pids 10 "$pid"; fi
}

cmd_down() {
	need_root
	lock
	runtime_down "$RUN_DIR"/*.pid
}

# ---------------------------------------------------------------- inspection

cmd_env() { print_env; }

cmd_status() {
	local rc=0 pid
	if pid=$(containerd_pid) && containerd_ok >/dev/null 2>&1; then
		echo "containerd: running (pid $pid), socket $SOCK"
		echo "containers (sandboxes included): $("$BIN_CACHE/ctr" -a "$SOCK" -n k8s.io c ls -q 2>/dev/null | wc -l)"
		"$BIN_CACHE/ctr" -a "$SOCK" -n k8s.io images ls -q 2>/dev/null | grep -v '^sha256:' | sed 's/^/image: /' || true
	else
		echo "containerd: not running or not answering (pid ${pid:-none})"
		rc=1
	fi
	if pid=$(pid_alive "$RUN_DIR/registry.pid") && registry_ok; then
		echo "registry: running (pid $pid) on http://$REGISTRY_ADDR"
	else
		echo "registry: not running or not answering (pid ${pid:-none})"
		rc=1
	fi
	if pid=$(pid_alive "$RUN_DIR/registry-auth.pid") && auth_registry_ok; then
		echo "auth registry: running (pid $pid) on http://$AUTH_REGISTRY_ADDR (user $AUTH_REGISTRY_USER)"
	else
		echo "auth registry: not running or not answering as expected (pid ${pid:-none})"
		rc=1
	fi
	echo "shims: $(shim_pids | wc -l)"
	host_status
	return "$rc"
}

# leftovers: what check-clean reports.
leftovers() {
	found "processes running from $TESTENV_DIR" "$(our_pids '^(containerd|docker-registry|runc)' | tr '\n' ' ' || true)"
	found "recorded daemons still running" "$(containerd_pid || true) $(pid_alive "$RUN_DIR/registry.pid" || true) $(pid_alive "$RUN_DIR/registry-auth.pid" || true)"
	found "something answers on http://$REGISTRY_ADDR" "$(if registry_ok; then echo registry; fi)"
	found "something answers on http://$AUTH_REGISTRY_ADDR" "$(if [[ $(http_status "http://$AUTH_REGISTRY_ADDR/v2/") != 000 ]]; then echo registry; fi)"
	runtime_leftovers
}

# On one line: bash must not read past it if the file is edited while running.
main "$@"; exit $?
