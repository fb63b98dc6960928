#!/usr/bin/env bash
# cluster.sh: a real Kubernetes control plane (etcd, kube-apiserver, kube-controller-manager,
# kube-scheduler v1.37.1) on loopback, for nodelet's cluster-mode tests and demos. Its build also
# makes kubectl and the upstream kubelet (hack/bench runs that next to nodelet).
#
# Usage (as root, Debian 12):
#   hack/cluster.sh build            build the upstream binaries, kubelet included (cached per
#                                    go.mod/go.sum hash); print their directory
#   hack/cluster.sh up               install packages, build, make certificates and kubeconfigs, start
#                                    the control plane, wait until it serves; print the env to use
#   hack/cluster.sh down             stop every component by PID; keeps certificates and etcd data
#   hack/cluster.sh purge            down, then delete CLUSTER_DIR (certificates, data, logs)
#   hack/cluster.sh status           print what runs; exit 0 only when every component runs
#   hack/cluster.sh check-clean      exit 1 if a component of this cluster still runs
#   hack/cluster.sh env              print `export X=...` lines: KUBECONFIG (admin), KUBECTL, ...
#   hack/cluster.sh kubeconfig NODE  make a client cert for system:node:NODE and print its kubeconfig path
#   hack/cluster.sh stop-apiserver   stop only kube-apiserver (outage tests)
#   hack/cluster.sh start-apiserver  start kube-apiserver again and wait for /readyz
#   hack/cluster.sh ldflags          print the version ldflags of the build (hack/conformance.sh's too)
#
# State lives under CLUSTER_DIR (default /var/lib/nodelet-cluster), never in the git tree: pki/,
# kubeconfigs, etcd data, logs/ and run/ (PID files). Binaries are cached in
# NODELET_K8S_CACHE/k8s-<hash> (default /var/cache/nodelet). One cluster per machine: it owns
# 127.0.0.1:6443 (apiserver), :12379/:12380 (etcd, not Debian's default 2379), :10257 and :10259.
# shellcheck disable=SC2317 # the cmd_* functions are run by main (hack/lib/daemons.sh)
set -euo pipefail

CLUSTER_DIR=${CLUSTER_DIR:-/var/lib/nodelet-cluster}
[[ $CLUSTER_DIR == / ]] || CLUSTER_DIR=${CLUSTER_DIR%/}
K8S_CACHE=${NODELET_K8S_CACHE:-/var/cache/nodelet}
K8S_VERSION=v1.37.1
K8S_BINARIES=(kube-apiserver kube-controller-manager kube-scheduler kubectl kubelet)
PACKAGES=(etcd-server openssl curl iproute2 procps)
REPO_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
K8S_MODULE_DIR=$REPO_DIR/hack/controlplane/k8s

APISERVER_PORT=6443
APISERVER=https://127.0.0.1:$APISERVER_PORT
ETCD_CLIENT=http://127.0.0.1:12379
ETCD_PEER=http://127.0.0.1:12380
KCM_PORT=10257
SCHEDULER_PORT=10259
# 10.88.0.0/16 is testenv's CNI bridge; services get their own range.
SERVICE_CIDR=10.96.0.0/16
SERVICE_IP=10.96.0.1
CLUSTER_NAME=nodelet-cluster
CERT_DAYS=365
CA_DAYS=3650
# What the controller-manager signs CSRs for: short, so that the TLS bootstrap test sees nodelet
# rotate its certificates within a minute or two (issued certificates are backdated 5 minutes,
# so one lives 7 minutes and is renewed at 70-90 % of that). Nothing else here uses CSRs.
CLUSTER_SIGNING_DURATION=2m

PKI=$CLUSTER_DIR/pki
LOG_DIR=$CLUSTER_DIR/logs
RUN_DIR=$CLUSTER_DIR/run
ETCD_DATA=$CLUSTER_DIR/etcd
ADMIN_KUBECONFIG=$CLUSTER_DIR/admin.kubeconfig
# Components in start order; down stops them in reverse.
COMPONENTS=(etcd kube-apiserver kube-controller-manager kube-scheduler)

LOG_NAME=cluster
STATE_VAR=CLUSTER_DIR
PROC_NEEDLE=$CLUSTER_DIR/ # pid_alive and our_pids: processes running from CLUSTER_DIR
ROOT_NEEDS="packages, ports, $CLUSTER_DIR"
LOCK_FILE=$CLUSTER_DIR/cluster.lock # daemons start with fd 9 closed so they never hold it
LOCK_WAIT=1200
COMMANDS=(build up down purge status check-clean env kubeconfig stop-apiserver start-apiserver ldflags)
USAGE=2,24
# shellcheck source=hack/lib/daemons.sh
source "$REPO_DIR/hack/lib/daemons.sh"

# elapsed START: seconds since START (an $EPOCHREALTIME value), with milliseconds.
elapsed() { awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.2fs", b - a }'; }

# ---------------------------------------------------------------- processes

# COMPONENT_COMMS matches the command names of the control plane's processes (comm is cut at
# 15 characters: kube-controller-manager shows as kube-controller), for our_pids.
COMPONENT_COMMS='^(etcd|kube-apiserver|kube-controller|kube-scheduler)$'

# stop_component NAME: stop the recorded process of NAME, if it runs.
stop_component() {
	local pid
	if pid=$(pid_alive "$RUN_DIR/$1.pid"); then
		log "stopping $1 (pid $pid)"
		stop_pids 20 "$pid"
	fi
	rm -f "$RUN_DIR/$1.pid"
}

# ---------------------------------------------------------------- install and build

ensure_packages() {
	local had_etcd=yes
	installed etcd-server || had_etcd=
	install_missing "${PACKAGES[@]}"
	[[ -n $had_etcd ]] || disable_distro_etcd
}

# disable_distro_etcd: Debian's etcd-server enables and starts etcd.service (on 2379, data in
# /var/lib/etcd) where systemd or sysvinit runs. We run our own etcd; stop and disable that one.
disable_distro_etcd() {
	if [[ -d /run/systemd/system ]]; then
		systemctl disable --now etcd.service >/dev/null 2>&1 || log "WARNING: cannot disable etcd.service"
	elif [[ -x /etc/init.d/etcd ]]; then
		/etc/init.d/etcd stop >/dev/null 2>&1 || true
		update-rc.d etcd disable >/dev/null 2>&1 || true
	fi
}

# ldflags: the version stamps of the build (without them the binaries report v0.0.0).
ldflags() {
	local v=$K8S_VERSION major minor
	major=${v#v} && major=${major%%.*}
	minor=${v#v*.} && minor=${minor%%.*}
	echo "-s -w -X k8s.io/component-base/version.gitVersion=$v -X k8s.io/component-base/version.gitMajor=$major" \
		"-X k8s.io/component-base/version.gitMinor=$minor -X k8s.io/client-go/pkg/version.gitVersion=$v" \
		"-X k8s.io/component-base/version.gitTreeState=clean"
}

# k8s_bin_dir: the cache directory of the binaries, named by a hash of the build's inputs
# (go.sum, go.mod without comment lines, the ldflags).
k8s_bin_dir() {
	local hash
	hash=$({ cat "$K8S_MODULE_DIR/go.sum" && grep -v '^[[:space:]]*//' "$K8S_MODULE_DIR/go.mod" && ldflags; } |
		sha256sum | cut -c1-12)
	echo "$K8S_CACHE/k8s-$hash"
}

# have_binaries DIR: DIR holds a complete build (the stamp is written last).
have_binaries() {
	[[ -f $1/.complete ]] || return 1
	[[ -z $(missing_binaries "$1") ]]
}

# missing_binaries DIR: the names of K8S_BINARIES that DIR lacks, one a line; all of them when
# DIR has no stamp. A directory built before a binary joined the list keeps the others: they come
# from the same inputs (the hash), and a running cluster may be executing them.
missing_binaries() {
	local b
	for b in "${K8S_BINARIES[@]}"; do
		[[ -f $1/.complete && -x $1/$b ]] || echo "$b"
	done
}

ensure_binaries() {
	local dir
	dir=$(k8s_bin_dir)
	have_binaries "$dir" || build_binaries "$dir"
}

# cmd_build: build (if needed), then print the binaries' directory.
cmd_build() { ensure_binaries && k8s_bin_dir; }

# build_binaries DIR: build the binaries DIR lacks into a temporary directory, move them in,
# then write the stamp.
build_binaries() {
	local dir=$1 tmp start
	command -v go >/dev/null || die "go is needed to build Kubernetes $K8S_VERSION"
	mkdir -p "$K8S_CACHE"
	exec 8>"$K8S_CACHE/.k8s-build.lock"
	flock -w 3600 8 || die "timed out waiting for $K8S_CACHE/.k8s-build.lock"
	# Someone may be building the same binaries by hand: two builds do not fit on 2 cores.
	local i
	for ((i = 0; i < 3600; i++)); do
		pgrep -f 'go build .*k8s\.io/kubernetes/cmd/kube' >/dev/null || break
		((i % 60 == 0)) && log "waiting for a running Kubernetes build to finish"
		sleep 1
	done
	local -a missing
	mapfile -t missing < <(missing_binaries "$dir")
	if ((${#missing[@]} > 0)); then
		log "building Kubernetes $K8S_VERSION (${missing[*]}) into $dir (~10 min cold on 2 cores for all)"
		start=$EPOCHREALTIME
		tmp=$dir.tmp.$$
		rm -rf "$tmp" && mkdir -p "$tmp"
		local -a pkgs=("${missing[@]/#/k8s.io/kubernetes/cmd/}")
		if ! (cd "$K8S_MODULE_DIR" && go build -trimpath -ldflags "$(ldflags)" -o "$tmp/" "${pkgs[@]}") \
			>"$K8S_CACHE/k8s-build.log" 2>&1; then
			tail -n 20 "$K8S_CACHE/k8s-build.log" >&2 || true
			rm -rf "$tmp"
			die "building Kubernetes failed, see $K8S_CACHE/k8s-build.log"
		fi
		if [[ -f $dir/.complete ]]; then
			# One rename per binary: the ones already there (maybe running) stay untouched, and
			# one missing after a crash here is built by the next run.
			local b
			for b in "${missing[@]}"; do mv -f "$tmp/$b" "$dir/$b"; done
			rm -rf "$tmp"
		else
			touch "$tmp/.complete"
			rm -rf "$dir" && mv "$tmp" "$dir"
		fi
		log "built Kubernetes $K8S_VERSION in $(elapsed "$start")"
	fi
	exec 8>&-
	have_binaries "$dir" || die "Kubernetes binaries missing in $dir after the build"
}

# ---------------------------------------------------------------- certificates

# valid CA CERT: CERT exists, is signed by PKI/CA.crt and is valid for at least another day.
valid() {
	[[ -s $2 && -s ${2%.crt}.key ]] &&
		openssl verify -CAfile "$PKI/$1.crt" "$2" >/dev/null 2>&1 &&
		openssl x509 -in "$2" -noout -checkend 86400 >/dev/null 2>&1
}

new_key() { (umask 077 && openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null); }

# ensure_ca NAME: a self-signed CA in PKI/NAME.{crt,key}, replaced 30 days before it expires.
ensure_ca() {
	local ca=$PKI/$1
	if [[ -s $ca.crt && -s $ca.key ]]; then
		openssl x509 -in "$ca.crt" -noout -checkend $((30 * 86400)) >/dev/null 2>&1 && return 0
		log "replacing CA $ca.crt, which expires within 30 days: every certificate it signed is reissued"
	else
		log "creating CA $ca.crt"
	fi
	new_key "$ca.key.tmp"
	openssl req -x509 -new -key "$ca.key.tmp" -sha256 -days "$CA_DAYS" -subj "/CN=$CLUSTER_NAME-$1" \
		-addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign,digitalSignature" \
		-out "$ca.crt.tmp" 2>/dev/null
	mv -f "$ca.key.tmp" "$ca.key" && mv -f "$ca.crt.tmp" "$ca.crt"
}

# issue CA NAME SUBJECT USAGE [SAN]: PKI/NAME.{key,crt} signed by PKI/CA.{crt,key}, unless still
# valid. USAGE is serverAuth or clientAuth; SAN an openssl subjectAltName value.
issue() {
	local ca=$PKI/$1 name=$2 subject=$3 usage=$4 san=${5:-}
	valid "$1" "$PKI/$name.crt" && return 0
	local tmp=$PKI/$name.tmp
	new_key "$tmp.key"
	openssl req -new -key "$tmp.key" -subj "$subject" -out "$tmp.csr" 2>/dev/null
	{
		echo "basicConstraints=critical,CA:FALSE"
		echo "keyUsage=critical,digitalSignature,keyEncipherment"
		echo "extendedKeyUsage=$usage"
		[[ -z $san ]] || echo "subjectAltName=$san"
	} >"$tmp.ext"
	openssl x509 -req -in "$tmp.csr" -CA "$ca.crt" -CAkey "$ca.key" -sha256 -days "$CERT_DAYS" \
		-set_serial "0x$(openssl rand -hex 16)" -extfile "$tmp.ext" -out "$tmp.crt" 2>/dev/null ||
		die "signing the certificate for $subject failed"
	mv -f "$tmp.key" "$PKI/$name.key" && mv -f "$tmp.crt" "$PKI/$name.crt"
	rm -f "$tmp.csr" "$tmp.ext"
}

ensure_service_account_key() {
	[[ -s $PKI/sa.key && -s $PKI/sa.pub ]] && return 0
	new_key "$PKI/sa.key"
	openssl pkey -in "$PKI/sa.key" -pubout -out "$PKI/sa.pub"
}

# b64 FILE: base64 of FILE on one line (kubeconfig *-data fields).
b64() { base64 -w0 "$1"; }

# write_kubeconfig PATH USER CERTNAME: a kubeconfig for USER with PKI/CERTNAME.{crt,key} embedded.
write_kubeconfig() {
	write_file "$1" private <<EOF
apiVersion: v1
kind: Config
clusters:
- name: $CLUSTER_NAME
  cluster:
    server: $APISERVER
    certificate-authority-data: $(b64 "$PKI/ca.crt")
users:
- name: $2
  user:
    client-certificate-data: $(b64 "$PKI/$3.crt")
    client-key-data: $(b64 "$PKI/$3.key")
contexts:
- name: $2@$CLUSTER_NAME
  context:
    cluster: $CLUSTER_NAME
    user: $2
current-context: $2@$CLUSTER_NAME
EOF
}

ensure_pki() {
	mkdir -p "$PKI" && chmod 0700 "$PKI"
	ensure_ca ca
	# The apiserver's front proxy (aggregation) identity, and what kube-controller-manager and
	# kube-scheduler trust for requestheader authentication: its own CA, as kubeadm does.
	ensure_ca front-proxy-ca
	issue front-proxy-ca front-proxy-client "/CN=front-proxy-client" clientAuth
	local sans="IP:127.0.0.1,IP:$SERVICE_IP,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default"
	sans+=",DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local"
	issue ca apiserver "/CN=kube-apiserver" serverAuth "$sans"
	issue ca apiserver-kubelet-client "/O=system:masters/CN=kube-apiserver-kubelet-client" clientAuth
	issue ca admin "/O=system:masters/CN=kubernetes-admin" clientAuth
	issue ca controller-manager "/CN=system:kube-controller-manager" clientAuth
	issue ca scheduler "/CN=system:kube-scheduler" clientAuth
	ensure_service_account_key
	write_kubeconfig "$ADMIN_KUBECONFIG" kubernetes-admin admin
	write_kubeconfig "$CLUSTER_DIR/controller-manager.kubeconfig" system:kube-controller-manager controller-manager
	write_kubeconfig "$CLUSTER_DIR/scheduler.kubeconfig" system:kube-scheduler scheduler
}

# ---------------------------------------------------------------- daemons

# Health checks (SC2317: called through wait_for and launch).
# api PATH: GET PATH from the apiserver as the admin; fails unless the status is 2xx.
# shellcheck disable=SC2317
api() {
	curl -sf --max-time 5 --cacert "$PKI/ca.crt" --cert "$PKI/admin.crt" --key "$PKI/admin.key" "$APISERVER$1"
}
# shellcheck disable=SC2317
etcd_ok() { curl -sf --max-time 2 "$ETCD_CLIENT/health" | grep -q '"health":"true"'; }
# shellcheck disable=SC2317
apiserver_ok() { api /readyz >/dev/null; }
# shellcheck disable=SC2317
healthz_ok() { curl -skf --max-time 2 "https://127.0.0.1:$1/healthz" >/dev/null; }
# shellcheck disable=SC2317
kcm_ok() { healthz_ok "$KCM_PORT"; }
# shellcheck disable=SC2317
scheduler_ok() { healthz_ok "$SCHEDULER_PORT"; }
# port_busy PORT: something listens on 127.0.0.1:PORT (or on every address).
port_busy() { [[ -n $(ss -Hltn "sport = :$1" 2>/dev/null) ]]; }

# launch NAME CHECK PORT TIMEOUT COMMAND...: start COMMAND in the background unless the recorded
# NAME runs with the same command line and passes CHECK; record its PID and wait until CHECK passes.
launch() {
	local name=$1 check=$2 port=$3 timeout=$4 pid start
	shift 4
	if pid=$(pid_alive "$RUN_DIR/$name.pid"); then
		if [[ $(tr '\0' '\n' <"/proc/$pid/cmdline") != "$(printf '%s\n' "$@")" ]]; then
			log "$name (pid $pid) runs with other flags; restarting it"
		elif wait_for 10 "$check"; then
			return 0
		else
			log "$name (pid $pid) is not healthy; restarting it"
		fi
		stop_pids 20 "$pid"
	fi
	! port_busy "$port" || die "127.0.0.1:$port is in use by a process that is not this cluster's $name (ss -ltnp 'sport = :$port')"
	start=$EPOCHREALTIME
	# 9>&-: the daemon must not inherit (and hold) the cluster lock.
	setsid nohup "$@" >>"$LOG_DIR/$name.log" 2>&1 </dev/null 9>&- &
	echo $! >"$RUN_DIR/$name.pid"
	if ! wait_for "$timeout" "$check"; then
		tail -n 20 "$LOG_DIR/$name.log" >&2 || true
		die "$name did not become healthy in ${timeout}s; see $LOG_DIR/$name.log"
	fi
	log "$name ready in $(elapsed "$start") (pid $(<"$RUN_DIR/$name.pid"))"
}

start_etcd() {
	mkdir -p "$ETCD_DATA" && chmod 0700 "$ETCD_DATA"
	launch etcd etcd_ok "${ETCD_CLIENT##*:}" 60 etcd --name "$CLUSTER_NAME" --data-dir "$ETCD_DATA" \
		--listen-client-urls "$ETCD_CLIENT" --advertise-client-urls "$ETCD_CLIENT" \
		--listen-peer-urls "$ETCD_PEER" --initial-advertise-peer-urls "$ETCD_PEER" \
		--initial-cluster "$CLUSTER_NAME=$ETCD_PEER" --initial-cluster-state new --logger=zap --log-outputs=stderr
}

# start_apiserver: flags from the environment notes. --shutdown-send-retry-after makes it stop in
# ~1s (drain short requests, answer 429, then close watches) instead of waiting up to 60s for them.
start_apiserver() {
	local bin
	bin=$(k8s_bin_dir)
	mkdir -p "$CLUSTER_DIR/apiserver-certs"
	launch kube-apiserver apiserver_ok "$APISERVER_PORT" 120 "$bin/kube-apiserver" \
		--bind-address=127.0.0.1 --secure-port="$APISERVER_PORT" \
		--cert-dir="$CLUSTER_DIR/apiserver-certs" \
		--tls-cert-file="$PKI/apiserver.crt" --tls-private-key-file="$PKI/apiserver.key" \
		--client-ca-file="$PKI/ca.crt" \
		--enable-bootstrap-token-auth=true \
		--etcd-servers="$ETCD_CLIENT" \
		--endpoint-reconciler-type=none \
		--authorization-mode=Node,RBAC \
		--enable-admission-plugins=NodeRestriction \
		--service-cluster-ip-range="$SERVICE_CIDR" \
		--allow-privileged=true \
		--service-account-issuer=https://kubernetes.default.svc.cluster.local \
		--service-account-key-file="$PKI/sa.pub" \
		--service-account-signing-key-file="$PKI/sa.key" \
		--kubelet-client-certificate="$PKI/apiserver-kubelet-client.crt" \
		--kubelet-client-key="$PKI/apiserver-kubelet-client.key" \
		--kubelet-preferred-address-types=InternalIP,Hostname \
		--shutdown-send-retry-after=true \
		--requestheader-client-ca-file="$PKI/front-proxy-ca.crt" \
		--requestheader-allowed-names=front-proxy-client \
		--requestheader-username-headers=X-Remote-User --requestheader-group-headers=X-Remote-Group \
		--requestheader-extra-headers-prefix=X-Remote-Extra- \
		--proxy-client-cert-file="$PKI/front-proxy-client.crt" --proxy-client-key-file="$PKI/front-proxy-client.key" \
		--profiling=false
}

start_controller_manager() {
	local bin kc=$CLUSTER_DIR/controller-manager.kubeconfig
	bin=$(k8s_bin_dir)
	launch kube-controller-manager kcm_ok "$KCM_PORT" 60 "$bin/kube-controller-manager" \
		--kubeconfig="$kc" --authentication-kubeconfig="$kc" --authorization-kubeconfig="$kc" \
		--bind-address=127.0.0.1 --secure-port="$KCM_PORT" \
		--use-service-account-credentials=true \
		--root-ca-file="$PKI/ca.crt" \
		--service-account-private-key-file="$PKI/sa.key" \
		--cluster-signing-cert-file="$PKI/ca.crt" --cluster-signing-key-file="$PKI/ca.key" \
		--cluster-signing-duration="$CLUSTER_SIGNING_DURATION" \
		--leader-elect=false --allocate-node-cidrs=false \
		--profiling=false
}

start_scheduler() {
	local bin kc=$CLUSTER_DIR/scheduler.kubeconfig
	bin=$(k8s_bin_dir)
	launch kube-scheduler scheduler_ok "$SCHEDULER_PORT" 60 "$bin/kube-scheduler" \
		--kubeconfig="$kc" --authentication-kubeconfig="$kc" --authorization-kubeconfig="$kc" \
		--bind-address=127.0.0.1 --secure-port="$SCHEDULER_PORT" \
		--leader-elect=false --profiling=false
}

# default_namespace_ready: what the controller-manager creates for pods in namespace default.
# shellcheck disable=SC2317 # called through wait_for
default_namespace_ready() {
	api /api/v1/namespaces/default/serviceaccounts/default >/dev/null &&
		api /api/v1/namespaces/default/configmaps/kube-root-ca.crt >/dev/null
}

# ensure_bootstrap_rbac: what kubeadm init binds for TLS bootstrap and certificate rotation:
# bootstrap tokens (group system:bootstrappers:kubeadm:default-node-token) may create node
# client CSRs, which the controller-manager then approves, and nodes may renew their own.
ensure_bootstrap_rbac() {
	local group=system:bootstrappers:kubeadm:default-node-token
	"$(k8s_bin_dir)/kubectl" --kubeconfig "$ADMIN_KUBECONFIG" apply -f - >/dev/null <<EOF
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: "kubeadm:kubelet-bootstrap"}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: "system:node-bootstrapper"}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: Group, name: "$group"}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: "kubeadm:node-autoapprove-bootstrap"}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: "system:certificates.k8s.io:certificatesigningrequests:nodeclient"}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: Group, name: "$group"}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: "kubeadm:node-autoapprove-certificate-rotation"}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: "system:certificates.k8s.io:certificatesigningrequests:selfnodeclient"}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: Group, name: "system:nodes"}]
EOF
}

cmd_up() {
	need_root
	local start=$EPOCHREALTIME t
	lock
	ensure_packages
	ensure_binaries
	mkdir -p "$LOG_DIR" "$RUN_DIR"
	chmod 0711 "$CLUSTER_DIR"
	t=$EPOCHREALTIME
	ensure_pki
	log "certificates and kubeconfigs ready in $(elapsed "$t")"
	start_etcd
	start_apiserver
	start_controller_manager
	start_scheduler
	t=$EPOCHREALTIME
	wait_for 60 default_namespace_ready ||
		die "no ServiceAccount default or ConfigMap kube-root-ca.crt in namespace default after 60s; see $LOG_DIR/kube-controller-manager.log"
	log "ServiceAccount default and ConfigMap kube-root-ca.crt ready in $(elapsed "$t")"
	ensure_bootstrap_rbac || die "binding the bootstrap token group (TLS bootstrap) failed"
	log "up in $(elapsed "$start"): $APISERVER; logs in $LOG_DIR"
	print_env
}

cmd_start_apiserver() {
	need_root
	lock
	have_binaries "$(k8s_bin_dir)" || die "Kubernetes binaries are not built; run: $0 up"
	if ! pid_alive "$RUN_DIR/etcd.pid" >/dev/null || ! etcd_ok; then die "etcd does not run; run: $0 up"; fi
	start_apiserver
}

cmd_stop_apiserver() {
	need_root
	lock
	stop_component kube-apiserver
}

# ---------------------------------------------------------------- node identities

# cmd_kubeconfig NODE: print the path of a kubeconfig for system:node:NODE (group system:nodes).
cmd_kubeconfig() {
	local node=${1:-}
	[[ $node =~ ^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$ ]] ||
		die "usage: $0 kubeconfig NODE (NODE a lowercase DNS subdomain, e.g. \$(hostname | tr A-Z a-z)), got '$node'"
	need_root
	lock
	ensure_pki
	mkdir -p "$CLUSTER_DIR/nodes"
	issue ca "node-$node" "/O=system:nodes/CN=system:node:$node" clientAuth
	write_kubeconfig "$CLUSTER_DIR/nodes/$node.kubeconfig" "system:node:$node" "node-$node"
	echo "$CLUSTER_DIR/nodes/$node.kubeconfig"
}

# ---------------------------------------------------------------- teardown

# stop_all: stop every component, newest first, then any unrecorded leftover of this cluster.
stop_all() {
	local i
	for ((i = ${#COMPONENTS[@]} - 1; i >= 0; i--)); do stop_component "${COMPONENTS[i]}"; done
	local -a left
	mapfile -t left < <(our_pids "$COMPONENT_COMMS")
	[[ ${#left[@]} -eq 0 ]] || { log "stopping unrecorded processes ${left[*]}" && stop_pids 10 "${left[@]}"; }
}

cmd_down() {
	need_root
	lock
	stop_all
	log "down (certificates and etcd data kept in $CLUSTER_DIR; purge deletes them)"
}

cmd_purge() {
	need_root
	lock
	stop_all
	log "deleting $CLUSTER_DIR"
	rm -rf --one-file-system "$CLUSTER_DIR"
}

# ---------------------------------------------------------------- inspection

print_env() {
	cat <<EOF
export KUBECONFIG=$ADMIN_KUBECONFIG
export KUBECTL=$(k8s_bin_dir)/kubectl
export CLUSTER_SIGNING_DURATION=$CLUSTER_SIGNING_DURATION
export CLUSTER_DIR=$CLUSTER_DIR
export APISERVER=$APISERVER
export CLUSTER_CA=$PKI/ca.crt
EOF
}

cmd_status() {
	local rc=0 name pid check
	for name in "${COMPONENTS[@]}"; do
		case $name in
		etcd) check=etcd_ok ;;
		kube-apiserver) check=apiserver_ok ;;
		kube-controller-manager) check=kcm_ok ;;
		kube-scheduler) check=scheduler_ok ;;
		esac
		if pid=$(pid_alive "$RUN_DIR/$name.pid") && "$check" >/dev/null 2>&1; then
			echo "$name: running (pid $pid)"
		elif [[ -n ${pid:-} ]]; then
			echo "$name: running (pid $pid) but not healthy; see $LOG_DIR/$name.log"
			rc=1
		else
			echo "$name: not running"
			rc=1
		fi
		pid=
	done
	echo "apiserver: $APISERVER (admin kubeconfig $ADMIN_KUBECONFIG)"
	echo "binaries: $(k8s_bin_dir) ($(have_binaries "$(k8s_bin_dir)" && echo built || echo not built))"
	return "$rc"
}

cmd_env() { print_env; }
cmd_ldflags() { ldflags; }

# leftovers: what check-clean reports.
leftovers() {
	local name port
	found "processes running from $CLUSTER_DIR" "$(our_pids "$COMPONENT_COMMS" | tr '\n' ' ')"
	for name in "${COMPONENTS[@]}"; do
		found "recorded $name still running" "$(pid_alive "$RUN_DIR/$name.pid" || true)"
	done
	for port in "$APISERVER_PORT" "${ETCD_CLIENT##*:}" "${ETCD_PEER##*:}" "$KCM_PORT" "$SCHEDULER_PORT"; do
		found "something listens on port $port" "$(ss -Hltnp "sport = :$port" 2>/dev/null | tr '\n' ' ' || true)"
	done
}

# On one line: bash must not read past it if the file is edited while running.
main "$@"; exit $?
