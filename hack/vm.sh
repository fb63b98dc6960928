#!/usr/bin/env bash
# vm.sh: a systemd + cgroup v2 Debian 12 VM under QEMU, to test nodelet where real nodes run
# (this host is cgroup v1 without systemd). The suite in test/vm runs inside it.
#
# Usage (as root, Debian 12, after `hack/testenv.sh up`, whose registry the VM pulls from):
#   hack/vm.sh deps         install what the host needs (QEMU, debootstrap)
#   hack/vm.sh build        build the VM's image if it is missing or its recipe changed (cached)
#   hack/vm.sh test         build nodelet and the suite, boot a fresh copy of the image, install
#                           nodelet with hack/install.sh, run test/vm inside; last, its graceful
#                           shutdown test powers the VM off
#   hack/vm.sh boot|stop    boot a fresh copy of the image (ssh: hack/vm.sh ssh CMD) | power it off
#   hack/vm.sh ssh CMD...   run CMD in the booted VM
#   hack/vm.sh check-clean  exit 1 if a VM still runs
#
# Everything lives under VM_DIR (default /var/cache/nodelet/vm): the debootstrapped root, the
# image (disk.img, vmlinuz, initrd.img, key), the copy each boot writes to (run.qcow2, gone after
# stop) and the serial console's log. The guest: Debian 12 (bookworm), systemd as PID 1, cgroup v2
# only, Debian's runc and CNI plugins, containerd $CONTAINERD_VERSION (testenv's binaries) as a
# systemd service pulling docker.io and registry.k8s.io from testenv's registry through QEMU's
# user network (the host's 127.0.0.1 is 10.0.2.2 there). QEMU emulates the CPU (TCG): this host's
# KVM does not boot a stock kernel.
set -euo pipefail

VM_DIR=${VM_DIR:-/var/cache/nodelet/vm}
VM_SSH_PORT=${VM_SSH_PORT:-2229}
VM_MEM=${VM_MEM:-2048}
VM_CPUS=${VM_CPUS:-2}
VM_DISK_SIZE=${VM_DISK_SIZE:-4G}
VM_BOOT_TIMEOUT=${VM_BOOT_TIMEOUT:-300}
VM_TEST_TIMEOUT=${VM_TEST_TIMEOUT:-20m}
BIN_CACHE=${NODELET_BIN_CACHE:-/var/cache/nodelet/bin}
REPO_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PAUSE_IMAGE=registry.k8s.io/pause:3.10
# The guest's packages: systemd and its D-Bus, ssh, a kernel, and what containerd runs pods with.
GUEST_PACKAGES=systemd,systemd-sysv,dbus,udev,libpam-systemd,iproute2,procps,kmod,linux-image-amd64,initramfs-tools,openssh-server,runc,containernetworking-plugins
HOST_PACKAGES=(qemu-system-x86 qemu-utils debootstrap e2fsprogs openssh-client)
ROOTFS=$VM_DIR/rootfs
KEY=$VM_DIR/id_ed25519
SSH_OPTS=(-i "$KEY" -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR
	-o ConnectTimeout=5 -o ServerAliveInterval=10)
LOG_NAME=vm
log() { echo "$LOG_NAME: $*" >&2; }
die() { log "ERROR: $*"; exit 1; }
# shellcheck source=hack/lib.sh
source "$REPO_DIR/hack/lib.sh"

need_root() { [[ $(id -u) -eq 0 ]] || die "must run as root (debootstrap, the image)"; }

# recipe_key: what the image is built from; the image is rebuilt when it changes.
recipe_key() {
	{
		sed -n '/^# ---- recipe/,/^# ---- end of recipe/p' "${BASH_SOURCE[0]}"
		echo "$GUEST_PACKAGES $VM_DISK_SIZE"
		sha256sum "$BIN_CACHE"/containerd "$BIN_CACHE"/containerd-shim-runc-v2 "$BIN_CACHE"/ctr | cut -d' ' -f1
	} | sha256sum | cut -c1-16
}

mirror() { awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || echo http://deb.debian.org/debian; }

# ---- recipe: everything below up to the end marker is part of the image's key.
configure_rootfs() {
	local r=$ROOTFS
	echo vm >"$r/etc/hostname"
	printf '127.0.0.1 localhost\n127.0.1.1 vm\n' >"$r/etc/hosts"
	echo '/dev/vda / ext4 defaults 0 1' >"$r/etc/fstab"
	echo 'nameserver 10.0.2.3' >"$r/etc/resolv.conf"
	chroot "$r" passwd -d root >/dev/null
	printf '[Match]\nName=en* eth*\n[Network]\nDHCP=yes\n' >"$r/etc/systemd/network/10-dhcp.network"
	chroot "$r" systemctl enable systemd-networkd >/dev/null 2>&1
	install -d -m 700 "$r/root/.ssh"
	install -m 600 "$KEY.pub" "$r/root/.ssh/authorized_keys"

	# containerd: testenv's binaries, upstream's unit, a configuration for the CRI.
	install -m 0755 "$BIN_CACHE"/containerd "$BIN_CACHE"/containerd-shim-runc-v2 "$BIN_CACHE"/ctr "$r/usr/local/bin/"
	cat >"$r/etc/systemd/system/containerd.service" <<'EOF'
[Unit]
Description=containerd container runtime
After=network.target local-fs.target dbus.service

[Service]
ExecStartPre=-/sbin/modprobe overlay
ExecStart=/usr/local/bin/containerd
Type=notify
Delegate=yes
KillMode=process
Restart=always
RestartSec=5
LimitNPROC=infinity
LimitCORE=infinity
TasksMax=infinity
OOMScoreAdjust=-999

[Install]
WantedBy=multi-user.target
EOF
	chroot "$r" systemctl enable containerd.service >/dev/null 2>&1
	mkdir -p "$r/etc/containerd" "$r/etc/cni/net.d"
	cat >"$r/etc/containerd/config.toml" <<EOF
version = 3
[plugins]
  [plugins.'io.containerd.cri.v1.images']
    snapshotter = 'overlayfs'
    [plugins.'io.containerd.cri.v1.images'.pinned_images]
      sandbox = '$PAUSE_IMAGE'
    [plugins.'io.containerd.cri.v1.images'.registry]
      config_path = '/etc/containerd/certs.d'
  [plugins.'io.containerd.cri.v1.runtime']
    [plugins.'io.containerd.cri.v1.runtime'.containerd]
      default_runtime_name = 'runc'
      [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]
        runtime_type = 'io.containerd.runc.v2'
        [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]
          SystemdCgroup = false
    [plugins.'io.containerd.cri.v1.runtime'.cni]
      bin_dirs = ['/usr/lib/cni']
      conf_dir = '/etc/cni/net.d'
      max_conf_num = 1
  [plugins.'io.containerd.transfer.v1.local']
    config_path = '/etc/containerd/certs.d'
EOF
	local host server
	for host in registry.k8s.io docker.io; do
		server=https://$host
		[[ $host == docker.io ]] && server=https://registry-1.docker.io
		mkdir -p "$r/etc/containerd/certs.d/$host"
		printf 'server = "%s"\n\n[host."http://10.0.2.2:5000"]\n  capabilities = ["pull", "resolve"]\n' "$server" \
			>"$r/etc/containerd/certs.d/$host/hosts.toml"
	done
	cat >"$r/etc/cni/net.d/10-nodelet.conflist" <<'EOF'
{
  "cniVersion": "1.0.0",
  "name": "nodelet-vm",
  "plugins": [
    {"type": "bridge", "bridge": "nodelet0", "isGateway": true, "ipMasq": false, "hairpinMode": true,
     "ipam": {"type": "host-local", "ranges": [[{"subnet": "10.88.0.0/16"}]], "routes": [{"dst": "0.0.0.0/0"}]}}
  ]
}
EOF
}
# ---- end of recipe

cmd_deps() {
	need_root
	install_missing "${HOST_PACKAGES[@]}"
}

cmd_build() {
	cmd_deps
	[[ -x $BIN_CACHE/containerd ]] || die "no containerd in $BIN_CACHE: run 'hack/testenv.sh up' first"
	mkdir -p "$VM_DIR"
	local key
	key=$(recipe_key)
	if [[ -f $VM_DIR/disk.img && $(cat "$VM_DIR/image.key" 2>/dev/null) == "$key" ]]; then
		log "image $key is up to date ($VM_DIR/disk.img)"
		return 0
	fi
	log "building image $key in $VM_DIR (debootstrap from $(mirror): a few minutes)"
	rm -f "$VM_DIR/image.key"
	[[ -f $KEY ]] || ssh-keygen -q -t ed25519 -N '' -f "$KEY"
	if [[ ! -x $ROOTFS/sbin/init || $(cat "$VM_DIR/rootfs.packages" 2>/dev/null) != "$GUEST_PACKAGES" ]]; then
		rm -rf "$ROOTFS"
		debootstrap --variant=minbase --include="$GUEST_PACKAGES" bookworm "$ROOTFS" "$(mirror)" >"$VM_DIR/debootstrap.log" 2>&1 ||
			{ tail -n 30 "$VM_DIR/debootstrap.log"; die "debootstrap failed (the whole log: $VM_DIR/debootstrap.log)"; }
		echo "$GUEST_PACKAGES" >"$VM_DIR/rootfs.packages"
	fi
	configure_rootfs
	cp "$ROOTFS"/boot/vmlinuz-* "$VM_DIR/vmlinuz"
	cp "$ROOTFS"/boot/initrd.img-* "$VM_DIR/initrd.img"
	rm -f "$VM_DIR/disk.img"
	mkfs.ext4 -q -F -L root -d "$ROOTFS" "$VM_DIR/disk.img" "$VM_DISK_SIZE"
	echo "$key" >"$VM_DIR/image.key"
	log "image $key built"
}

qemu_pid() { recorded_pid "$VM_DIR/qemu.pid" "$VM_DIR/" || true; }

vm_ssh() { ssh -p "$VM_SSH_PORT" "${SSH_OPTS[@]}" root@127.0.0.1 "$@"; }

cmd_ssh() { vm_ssh "$@"; }

cmd_boot() {
	need_root
	[[ -f $VM_DIR/image.key ]] || die "no image: run 'hack/vm.sh build' first"
	[[ -z $(qemu_pid) ]] || die "a VM runs already (pid $(qemu_pid)): hack/vm.sh stop"
	rm -f "$VM_DIR/console.log" "$VM_DIR/qemu.pid" "$VM_DIR/run.qcow2"
	# Every boot starts from the image as built: its writes go to a copy-on-write overlay.
	qemu-img create -q -f qcow2 -b "$VM_DIR/disk.img" -F raw "$VM_DIR/run.qcow2"
	qemu-system-x86_64 -accel tcg,thread=multi -cpu max -m "$VM_MEM" -smp "$VM_CPUS" \
		-kernel "$VM_DIR/vmlinuz" -initrd "$VM_DIR/initrd.img" \
		-append 'root=/dev/vda rw console=ttyS0 systemd.unified_cgroup_hierarchy=1 quiet' \
		-drive file="$VM_DIR/run.qcow2",format=qcow2,if=virtio \
		-netdev user,id=n0,hostfwd=tcp:127.0.0.1:"$VM_SSH_PORT"-:22 -device virtio-net-pci,netdev=n0 \
		-display none -serial file:"$VM_DIR/console.log" -monitor none \
		-daemonize -pidfile "$VM_DIR/qemu.pid"
	local t0=$SECONDS
	until vm_ssh true 2>/dev/null; do
		[[ -n $(qemu_pid) ]] || { tail -n 50 "$VM_DIR/console.log"; die "qemu exited while booting"; }
		if ((SECONDS - t0 >= VM_BOOT_TIMEOUT)); then
			tail -n 50 "$VM_DIR/console.log"
			kill -9 "$(qemu_pid)" 2>/dev/null || true
			die "no ssh within ${VM_BOOT_TIMEOUT}s (qemu killed)"
		fi
		sleep 2
	done
	log "booted: ssh after $((SECONDS - t0))s (qemu pid $(qemu_pid), console $VM_DIR/console.log)"
}

cmd_stop() {
	local pid
	pid=$(qemu_pid)
	if [[ -n $pid ]]; then
		vm_ssh systemctl poweroff >/dev/null 2>&1 || true
		if wait_for 90 none_alive "$pid"; then
			log "the VM powered off"
		else
			log "the VM did not power off within 90 s: killing qemu $pid"
			kill -9 "$pid" 2>/dev/null || true
		fi
	fi
	rm -f "$VM_DIR/qemu.pid" "$VM_DIR/run.qcow2"
}

cmd_check_clean() {
	local pid
	pid=$(qemu_pid)
	if [[ -n $pid ]]; then
		echo "dirty: a VM runs (qemu pid $pid)"
		return 1
	fi
	echo "clean"
}

# cmd_test: the suite in test/vm, inside a fresh VM; its output here; the VM powered off after,
# whatever happened.
cmd_test() {
	need_root
	cmd_build
	local out=$VM_DIR/stage
	rm -rf "$out" && mkdir -p "$out"
	(cd "$REPO_DIR" && make -s build BIN="$out/nodelet" &&
		CGO_ENABLED=0 go test -c -tags vmguest -o "$out/vm.test" ./test/vm)
	cp -r "$REPO_DIR/deploy" "$out/"
	mkdir -p "$out/hack" && cp "$REPO_DIR/hack/install.sh" "$out/hack/"
	trap cmd_stop EXIT
	cmd_boot
	tar -C "$out" -cf - . | vm_ssh 'rm -rf /root/nodelet && mkdir -p /root/nodelet && tar -C /root/nodelet -xf -'
	vm_ssh 'set -e; systemctl is-system-running --wait >/dev/null || systemctl --failed --no-pager;
		cd /root/nodelet && bash hack/install.sh --binary ./nodelet --no-start'
	local rc=0
	vm_ssh "cd /root/nodelet && ./vm.test -test.v -test.count=1 -test.timeout $VM_TEST_TIMEOUT -test.run '^TestPodsOnCgroupV2\$'" || rc=$?
	if ((rc != 0)); then
		log "the suite failed (exit $rc); nodelet's and containerd's logs in the VM:"
		vm_ssh 'journalctl --no-pager -o short-precise -u nodelet | tail -n 300; journalctl --no-pager -u containerd | tail -n 100' || true
		return "$rc"
	fi
	shutdown_test
}

# shutdown_test: TestGracefulShutdown powers the VM off with a pod running and checks the pod's
# termination while the shutdown is held back; then the VM must power off, within 2 minutes.
# The ssh session may end with the machine: the result is read from the test's output.
shutdown_test() {
	local out t0=$SECONDS pid
	pid=$(qemu_pid)
	[[ -n $pid ]] || { log "no VM runs for the graceful shutdown test"; return 1; }
	out=$(vm_ssh "cd /root/nodelet && ./vm.test -test.v -test.count=1 -test.timeout 10m -test.run '^TestGracefulShutdown\$'" 2>&1) || true
	echo "$out"
	if ! grep -q -- '--- PASS: TestGracefulShutdown' <<<"$out"; then
		log "graceful node shutdown failed; nodelet's log in the VM:"
		vm_ssh 'journalctl --no-pager -o short-precise -u nodelet | tail -n 200' || true
		return 1
	fi
	if ! wait_for 120 none_alive "$pid"; then
		log "the VM did not power off within 2 minutes of the graceful shutdown"
		tail -n 40 "$VM_DIR/console.log"
		return 1
	fi
	log "the VM powered off $((SECONDS - t0))s after the graceful shutdown test started"
}

c=${1:-}
case $c in
deps | build | boot | stop | ssh | test | check-clean) shift; "cmd_${c//-/_}" "$@" ;;
*) sed -n '2,14p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
esac
