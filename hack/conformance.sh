#!/usr/bin/env bash
# conformance.sh: the upstream Kubernetes v1.37.1 conformance suite's sig-node specs against a
# real cluster (hack/cluster.sh) whose only node is nodelet, on testenv's containerd.
#
# Usage (as root, Debian 12):
#   hack/conformance.sh build    build e2e.test and the ginkgo CLI (and the control plane) from the
#                                module proxy, cached next to hack/cluster.sh's binaries; print their directory
#   hack/conformance.sh images   testenv up, then build the images the specs run and push them to
#                                its registry under their real names (registry.k8s.io/e2e-test-images/...)
#   hack/conformance.sh run      build, images, control plane up, nodelet as the only node, run the
#                                specs; print the passed and failed specs; stop nodelet and the control plane
#
# Environment: CONFORMANCE_FOCUS and CONFORMANCE_SKIP (ginkgo regexps; default the sig-node
# Conformance specs that are neither Serial, Disruptive nor Flaky), CONFORMANCE_PROCS (parallel
# ginkgo processes, default 3), CONFORMANCE_NODE (the node name, default the host name),
# CONFORMANCE_NODELET (a nodelet binary to run instead of building bin/nodelet).
# Nothing else may run a node agent on testenv's containerd meanwhile: each removes the pods the
# other runs (they are not its own). run refuses to start next to one and warns if one appeared.
# State lives under CONFORMANCE_DIR (default /var/lib/nodelet-conformance): nodelet's root, logs/
# and results/<date>/ (junit.xml, report.json, e2e.log, nodelet.log). Binaries are cached in
# NODELET_K8S_CACHE/e2e-<hash> (default /var/cache/nodelet), <hash> being hack/cluster.sh's.
set -euo pipefail

CONFORMANCE_DIR=${CONFORMANCE_DIR:-/var/lib/nodelet-conformance}
[[ $CONFORMANCE_DIR == / ]] || CONFORMANCE_DIR=${CONFORMANCE_DIR%/}
K8S_CACHE=${NODELET_K8S_CACHE:-/var/cache/nodelet}
FOCUS=${CONFORMANCE_FOCUS:-'\[sig-node\].*\[Conformance\]'}
SKIP=${CONFORMANCE_SKIP:-'\[Serial\]|\[Disruptive\]|\[Flaky\]'}
PROCS=${CONFORMANCE_PROCS:-3}
NODE_NAME=${CONFORMANCE_NODE:-$(hostname | tr '[:upper:]' '[:lower:]')}
NODELET_BIN=${CONFORMANCE_NODELET:-}
PACKAGES=(bash-static jq iproute2 curl bzip2 make gcc libc6-dev)
REPO_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
K8S_MODULE_DIR=$REPO_DIR/hack/controlplane/k8s
CLUSTER=$REPO_DIR/hack/cluster.sh
TESTENV=$REPO_DIR/hack/testenv.sh

# testenv's CNI bridge and the first address of its subnet (hack/testenv.sh BRIDGE, SUBNET). The
# node's address is the bridge's gateway: not loopback, so the API server reaches the kubelet API
# and pod IPs (pods/proxy) as on a real node, and it routes to every pod.
BRIDGE=nodelet0
NODE_IP=10.88.0.1
NODE_IP_PREFIX=16
KUBELET_PORT=10250
# The e2e binary's flags beyond the kubeconfig: no cloud provider, no log dumps over ssh.
E2E_FLAGS=(--provider=skeleton --clean-start=true --dump-logs-on-failure=false
	--allowed-not-ready-nodes=0 --node-os-distro=debian)

LOG_DIR=$CONFORMANCE_DIR/logs
RUN_DIR=$CONFORMANCE_DIR/run
NODE_ROOT=$CONFORMANCE_DIR/root
TOOLS_DIR=$CONFORMANCE_DIR/bin

log() { echo "conformance: $*" >&2; }
# shellcheck source=hack/lib.sh
source "$REPO_DIR/hack/lib.sh"
die() { log "ERROR: $*"; exit 1; }

need_root() { [[ $(id -u) -eq 0 ]] || die "must run as root (testenv, cluster, nodelet)"; }

lock() { lock_on "$CONFORMANCE_DIR/conformance.lock" 60; }

# elapsed START: seconds since START (an $EPOCHREALTIME value).
elapsed() { awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.0fs", b - a }'; }

# poll SECONDS COMMAND...: wait_for at a pace fit for kubectl (every 2 s).
poll() {
	local deadline=$((SECONDS + $1))
	shift
	until "$@" >/dev/null 2>&1; do
		((SECONDS < deadline)) || return 1
		sleep 2
	done
}

# ---------------------------------------------------------------- build

# e2e_bin_dir: the cache directory of e2e.test and ginkgo, keyed like hack/cluster.sh's binaries
# (the wrapper module's go.mod and go.sum, the ldflags). Builds the control plane if needed.
e2e_bin_dir() {
	local k8s_dir
	k8s_dir=$(bash "$CLUSTER" build) || die "hack/cluster.sh build failed"
	echo "$K8S_CACHE/e2e-${k8s_dir##*/k8s-}"
}

cmd_build() {
	local dir start tmp
	dir=$(e2e_bin_dir)
	[[ -f $dir/.complete && -x $dir/e2e.test && -x $dir/ginkgo ]] && { echo "$dir"; return 0; }
	# hack/cluster.sh's build lock: one Kubernetes build at a time on 2 cores.
	exec 8>"$K8S_CACHE/.k8s-build.lock"
	flock -w 3600 8 || die "timed out waiting for $K8S_CACHE/.k8s-build.lock"
	log "building e2e.test and ginkgo into $dir (~20 min cold on 2 cores)"
	start=$EPOCHREALTIME
	tmp=$dir.tmp.$$
	rm -rf "$tmp" && mkdir -p "$tmp"
	if ! (cd "$K8S_MODULE_DIR" &&
		go test -c -trimpath -ldflags "$(bash "$CLUSTER" ldflags)" -o "$tmp/e2e.test" k8s.io/kubernetes/test/e2e &&
		go build -trimpath -ldflags "-s -w" -o "$tmp/ginkgo" github.com/onsi/ginkgo/v2/ginkgo) \
		>"$K8S_CACHE/e2e-build.log" 2>&1; then
		tail -n 20 "$K8S_CACHE/e2e-build.log" >&2 || true
		rm -rf "$tmp"
		die "building e2e.test failed, see $K8S_CACHE/e2e-build.log"
	fi
	touch "$tmp/.complete"
	rm -rf "$dir" && mv "$tmp" "$dir"
	exec 8>&-
	log "built e2e.test and ginkgo in $(elapsed "$start")"
	echo "$dir"
}

# ---------------------------------------------------------------- images

# The images hack/testimages pushes for the specs (its conformanceCatalog).
IMAGES=(registry.k8s.io/pause:3.10.2 registry.k8s.io/e2e-test-images/{agnhost:2.66.1,agnhost:2.55,kitten:1.8}
	registry.k8s.io/e2e-test-images/{nonewprivs:1.4,busybox:1.37.0-2,nginx:1.27.0-2,nginx:1.28.0-2})

# Upstream's busybox for e2e-test-images/busybox, built from Debian's copy of its release
# tarball: its ash keeps environment variables whose names are no shell identifiers (envFrom's
# data-1), which Debian's busybox-static (1.35 and 1.37) drops, and prints ash's error texts.
BUSYBOX_VERSION=1.37.0
BUSYBOX_URL=http://deb.debian.org/debian/pool/main/b/busybox/busybox_$BUSYBOX_VERSION.orig.tar.bz2
BUSYBOX_SHA256=3311dff32e746499f4df0d5df04d7eb396382d7e108bb9250e7b519b837043a4

# ash_busybox builds it once (about 2 minutes), cached in K8S_CACHE, checks its ash keeps such a
# variable, and prints its path.
ash_busybox() {
	local dir=$K8S_CACHE/busybox-$BUSYBOX_VERSION
	if [[ ! -x $dir/busybox ]]; then
		log "building busybox $BUSYBOX_VERSION from source (once)"
		local tmp
		tmp=$(mktemp -d)
		curl -fsSL --retry 3 -o "$tmp/src.tar.bz2" "$BUSYBOX_URL" || die "downloading $BUSYBOX_URL failed"
		echo "$BUSYBOX_SHA256  $tmp/src.tar.bz2" | sha256sum -c --quiet - || die "$BUSYBOX_URL: checksum mismatch"
		tar -xjf "$tmp/src.tar.bz2" -C "$tmp"
		# Static, and without tc, which does not build against current kernel headers.
		(cd "$tmp/busybox-$BUSYBOX_VERSION" && make defconfig >/dev/null &&
			sed -i 's/^# CONFIG_STATIC is not set/CONFIG_STATIC=y/; s/^CONFIG_TC=y/# CONFIG_TC is not set/' .config &&
			make -j"$(nproc)" >"$tmp/build.log" 2>&1) || { tail -n 30 "$tmp/build.log" >&2; die "building busybox failed"; }
		mkdir -p "$dir"
		cp "$tmp/busybox-$BUSYBOX_VERSION/busybox" "$dir/busybox.tmp" && mv "$dir/busybox.tmp" "$dir/busybox"
		rm -rf "$tmp"
	fi
	env 'data-1=kept' "$dir/busybox" ash -c env | grep -qx 'data-1=kept' ||
		die "$dir/busybox: its ash drops variables that are no shell identifiers"
	echo "$dir/busybox"
}

# testenv_env: hack/testenv.sh's environment (CONTAINER_RUNTIME_ENDPOINT, TESTENV_REGISTRY...).
testenv_env() { bash "$TESTENV" env; }

cmd_images() {
	install_missing "${PACKAGES[@]}"
	bash "$TESTENV" up >/dev/null || die "hack/testenv.sh up failed"
	local registry
	registry=$(testenv_env | sed -n 's/^TESTENV_REGISTRY=//p')
	mkdir -p "$TOOLS_DIR"
	(cd "$REPO_DIR" && GOFLAGS=-buildvcs=false go build -o "$TOOLS_DIR/testimages" ./hack/testimages) ||
		die "building hack/testimages failed"
	local ash_bb
	ash_bb=$(ash_busybox)
	log "building and pushing the conformance images to $registry (agnhost is a Go build: minutes when cold)"
	"$TOOLS_DIR/testimages" -registry "$registry" -src "$REPO_DIR/hack/testimages" -busybox /bin/busybox -ash-busybox "$ash_bb" \
		-k8s-module "$K8S_MODULE_DIR" -bash /bin/bash-static -curl /usr/bin/curl -workdir "$CONFORMANCE_DIR/tmp" -timeout 60m ||
		die "pushing the conformance images failed"
	# Pods pull IfNotPresent: forget the copies containerd holds, which may predate the push.
	local ctr sock
	ctr=$(testenv_env | sed -n 's/^CONTAINERD_BIN_DIR=//p')/ctr
	sock=$(testenv_env | sed -n 's/^CONTAINER_RUNTIME_ENDPOINT=unix:\/\///p')
	"$ctr" -a "$sock" -n k8s.io images rm "${IMAGES[@]}" >/dev/null 2>&1 || true
}

# ---------------------------------------------------------------- the node

# ensure_bridge: testenv's bridge with the gateway address, before any pod makes it: the node's
# address must exist when nodelet registers. The bridge CNI plugin accepts it as it is.
ensure_bridge() {
	if ! ip link show "$BRIDGE" >/dev/null 2>&1; then
		log "creating bridge $BRIDGE with $NODE_IP/$NODE_IP_PREFIX"
		ip link add "$BRIDGE" type bridge
	fi
	ip -4 addr show dev "$BRIDGE" | grep -qF " $NODE_IP/$NODE_IP_PREFIX " ||
		ip addr add "$NODE_IP/$NODE_IP_PREFIX" dev "$BRIDGE"
	ip link set "$BRIDGE" up
}

nodelet_pid() { recorded_pid "$RUN_DIR/nodelet.pid" "$NODE_ROOT"; }

# other_agents ENDPOINT: PIDs of node agents (nodelet, kubelet) on ENDPOINT's containerd but ours.
other_agents() {
	local pid ours
	ours=$(nodelet_pid || true)
	for pid in $(pids_matching '^(nodelet|kubelet)$' "${1#unix://}"); do
		[[ $pid == "$ours" ]] || echo "$pid"
	done
}

# watch_agents ENDPOINT FILE: every 5 s, append to FILE the other node agents on ENDPOINT's
# containerd (with their command lines); runs until killed.
watch_agents() {
	local pid
	while sleep 5; do
		for pid in $(other_agents "$1"); do
			grep -qx "$pid .*" "$2" 2>/dev/null || echo "$pid $(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | cut -c1-200)" >>"$2"
		done
	done
}

# kubectl ARGS...: our kubectl v1.37.1 as the cluster admin.
kubectl() { "$KUBECTL" --kubeconfig "$KUBECONFIG" "$@"; }

# node_ready: the Node is Ready (SC2317: called through poll).
# shellcheck disable=SC2317
node_ready() {
	[[ $(kubectl get node "$NODE_NAME" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}') == True ]]
}

# start_nodelet: bin/nodelet as node NODE_NAME at NODE_IP, on testenv's containerd.
start_nodelet() {
	local endpoint node_kubeconfig start pid
	! pid=$(nodelet_pid) || die "nodelet (pid $pid) from an earlier run still runs; stop it first"
	! ss -Hltn "sport = :$KUBELET_PORT" | grep -q . || die "port $KUBELET_PORT is in use (ss -ltnp 'sport = :$KUBELET_PORT')"
	endpoint=$(testenv_env | sed -n 's/^CONTAINER_RUNTIME_ENDPOINT=//p')
	[[ -z $(other_agents "$endpoint") ]] ||
		die "other node agents run on $endpoint (pids $(other_agents "$endpoint" | tr '\n' ' ')): they would remove the specs' pods"
	node_kubeconfig=$(bash "$CLUSTER" kubeconfig "$NODE_NAME")
	if [[ -z $NODELET_BIN ]]; then
		log "building bin/nodelet"
		(cd "$REPO_DIR" && make -s build) || die "building nodelet failed"
		NODELET_BIN=$REPO_DIR/bin/nodelet
	fi
	ensure_bridge
	# Nodes left by earlier runs (etcd data is kept): ours would keep its old pods and addresses,
	# another (an end-to-end run cut short) stays NotReady and e2e.test waits for every node to
	# be ready before its first spec. nodelet is to be the cluster's only node.
	kubectl delete nodes --all --wait=true >/dev/null
	mkdir -p "$NODE_ROOT" "$LOG_DIR" "$RUN_DIR"
	write_file "$CONFORMANCE_DIR/kubelet-config.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
failCgroupV1: false
podLogsDir: $CONFORMANCE_DIR/pods
EOF
	start=$EPOCHREALTIME
	log "starting nodelet as node $NODE_NAME ($NODE_IP), log $LOG_DIR/nodelet.log"
	# 9>&-: nodelet must not hold the conformance lock.
	setsid nohup env -u KUBECONFIG "$NODELET_BIN" --config "$CONFORMANCE_DIR/kubelet-config.yaml" \
		--kubeconfig "$node_kubeconfig" --client-ca-file "$CLUSTER_CA" \
		--hostname-override "$NODE_NAME" --node-ip "$NODE_IP" --port "$KUBELET_PORT" \
		--root-dir "$NODE_ROOT" --container-runtime-endpoint "$endpoint" -v 2 \
		>"$LOG_DIR/nodelet.log" 2>&1 </dev/null 9>&- &
	echo $! >"$RUN_DIR/nodelet.pid"
	if ! poll 120 node_ready; then
		tail -n 30 "$LOG_DIR/nodelet.log" >&2 || true
		die "node $NODE_NAME not Ready after 120s; see $LOG_DIR/nodelet.log"
	fi
	log "node $NODE_NAME Ready in $(elapsed "$start")"
}

# node_pods: the pods bound to the node, one namespace/name a line.
node_pods() {
	kubectl get pods -A --field-selector "spec.nodeName=$NODE_NAME" --no-headers \
		-o custom-columns=NS:.metadata.namespace,NAME:.metadata.name 2>/dev/null
}

# shellcheck disable=SC2317 # called through poll
no_node_pods() { [[ -z $(node_pods) ]]; }

# stop_nodelet: after the test namespaces are gone (nodelet stops their pods), stop nodelet.
stop_nodelet() {
	local pid left
	pid=$(nodelet_pid) || return 0
	if [[ -n ${KUBECTL:-} ]]; then
		kubectl delete namespaces -l e2e-framework --ignore-not-found --wait=false >/dev/null 2>&1 || true
		poll 180 no_node_pods || true
		left=$(node_pods | tr '\n' ' ')
		[[ -z $left ]] || log "WARNING: pods still bound to $NODE_NAME after 180s: $left"
	fi
	log "stopping nodelet (pid $pid)"
	stop_pids 30 "$pid"
	rm -f "$RUN_DIR/nodelet.pid"
}

# ---------------------------------------------------------------- run

# summary REPORT: the specs of ginkgo's JSON report that ran: "passed NAME" lines, "flaky NAME"
# lines (passed at the second attempt: --flake-attempts), then "failed NAME" lines (or timedout,
# panicked...), each followed by the first line of its failure.
summary() {
	jq -r '[.[].SpecReports[] | select(.LeafNodeType == "It" and .State != "skipped" and .State != "pending")
		| {state: (if .State == "passed" and (.NumAttempts // 1) > 1 then "flaky" else .State end),
		   name: ((.ContainerHierarchyTexts + [.LeafNodeText]) | join(" ")),
		   msg: (.Failure.Message // "" | split("\n") | map(select(test("\\S")) | sub("^\\s+"; "")) | .[0] // "" | .[0:200])}]
		| sort_by(.state != "passed", .state != "flaky", .name)[]
		| if .state == "passed" then "passed  \(.name)"
		  elif .state == "flaky" then "flaky   \(.name)\n          failed its first attempt, passed its second (e2e.log has both)"
		  else "\(.state)  \(.name)\n          \(.msg)" end' "$1"
}

# cleanup_run: on exit, stop what run started; testenv stays up only if it ran before.
cleanup_run() {
	local rc=$?
	set +e
	[[ -z ${WATCHER:-} ]] || kill "$WATCHER" 2>/dev/null
	stop_nodelet
	bash "$CLUSTER" down
	[[ -n ${TESTENV_WAS_UP:-} ]] || bash "$TESTENV" down
	return $rc
}

cmd_run() {
	local dir results start rc=0
	need_root
	lock
	dir=$(cmd_build)
	TESTENV_WAS_UP=
	if bash "$TESTENV" status >/dev/null 2>&1; then TESTENV_WAS_UP=yes; fi
	trap cleanup_run EXIT
	cmd_images
	local cluster_env
	cluster_env=$(bash "$CLUSTER" up) || die "hack/cluster.sh up failed"
	eval "$cluster_env"
	start_nodelet
	results=$CONFORMANCE_DIR/results/$(date +%Y%m%d-%H%M%S)
	mkdir -p "$results"
	log "running the specs matching '$FOCUS' but not '$SKIP' on $PROCS processes; log $results/e2e.log"
	watch_agents "$(testenv_env | sed -n 's/^CONTAINER_RUNTIME_ENDPOINT=//p')" "$results/other-agents.txt" &
	WATCHER=$!
	start=$EPOCHREALTIME
	# --flake-attempts=2: a spec that fails once is run again and, if it passes then, reported
	# as flaky below (the API server's watches here, on etcd 3.4 and 2 busy cores, sometimes
	# close early: "RuntimeClass should support RuntimeClasses API operations", 2026-11-27).
	"$dir/ginkgo" --procs="$PROCS" --focus="$FOCUS" --skip="$SKIP" --timeout=3h -v --no-color --flake-attempts=2 \
		--output-dir="$results" --junit-report=junit.xml --json-report=report.json \
		"$dir/e2e.test" -- --kubeconfig="$KUBECONFIG" --kubectl-path="$KUBECTL" --report-dir="$results" \
		"${E2E_FLAGS[@]}" >"$results/e2e.log" 2>&1 || rc=$?
	log "the specs ran in $(elapsed "$start") (ginkgo exit status $rc)"
	kill "$WATCHER" 2>/dev/null && WATCHER=
	[[ ! -s $results/other-agents.txt ]] ||
		log "WARNING: other node agents ran on testenv's containerd during the run and removed pods they did not own; results are not reliable: $(cat "$results/other-agents.txt")"
	[[ -s $results/report.json ]] || { tail -n 30 "$results/e2e.log" >&2; die "no report in $results"; }
	local specs
	specs=$(summary "$results/report.json")
	echo "$specs"
	echo "passed: $(grep -c '^passed' <<<"$specs") flaky (passed at the second attempt): $(grep -c '^flaky' <<<"$specs") failed: $(grep -cv '^\(passed\|flaky\| \)' <<<"$specs")"
	echo "results: $results (junit.xml, report.json, e2e.log); nodelet log: $results/nodelet.log"
	stop_nodelet
	cp "$LOG_DIR/nodelet.log" "$results/nodelet.log"
	return $rc
}

main() {
	check_state_dir CONFORMANCE_DIR "$CONFORMANCE_DIR"
	case ${1:-} in
	build) need_root && cmd_build ;;
	images) need_root && cmd_images ;;
	run) cmd_run ;;
	*)
		sed -n '2,21p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
		exit 2
		;;
	esac
}

# On one line: bash must not read past it if the file is edited while running.
main "$@"; exit $?
