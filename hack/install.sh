#!/usr/bin/env bash
# install.sh: install nodelet as a systemd service, the way an operator runs it.
#
# Usage (as root, on a host with systemd and a CRI runtime such as containerd):
#   hack/install.sh [--binary PATH] [--prefix DIR] [--no-start]
#
# Installs PATH (default bin/nodelet, built by `make build`) as PREFIX/bin/nodelet (default
# /usr/local), the unit deploy/systemd/nodelet.service as /etc/systemd/system/nodelet.service,
# and deploy/config.yaml as /etc/nodelet/config.yaml unless that file exists (an operator's
# configuration is never overwritten); creates /etc/nodelet/manifests; then enables the unit
# and (re)starts it unless --no-start. `make install` runs it.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
binary=$here/bin/nodelet prefix=/usr/local start=1
while (($#)); do
	case $1 in
	--binary) binary=${2:?--binary needs a path}; shift 2 ;;
	--prefix) prefix=${2:?--prefix needs a directory}; shift 2 ;;
	--no-start) start=0; shift ;;
	*) sed -n '4,5p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
	esac
done
die() { echo "install.sh: $*" >&2; exit 1; }
[[ $(id -u) -eq 0 ]] || die "must run as root (it writes /etc and $prefix/bin)"
[[ -x $binary ]] || die "no nodelet binary at $binary: run 'make build' first, or pass --binary"
[[ -d /run/systemd/system ]] || die "systemd is not running here (no /run/systemd/system): start $binary yourself"

install -D -m 0755 "$binary" "$prefix/bin/nodelet"
sed "s|/usr/local/bin/nodelet|$prefix/bin/nodelet|" "$here/deploy/systemd/nodelet.service" >/etc/systemd/system/nodelet.service.tmp
mv -f /etc/systemd/system/nodelet.service.tmp /etc/systemd/system/nodelet.service
install -d -m 0755 /etc/nodelet /etc/nodelet/manifests
if [[ ! -e /etc/nodelet/config.yaml ]]; then
	install -m 0644 "$here/deploy/config.yaml" /etc/nodelet/config.yaml
else
	echo "install.sh: keeping the existing /etc/nodelet/config.yaml"
fi
systemctl daemon-reload
systemctl enable nodelet.service
if ((start)); then
	systemctl restart nodelet.service
	echo "install.sh: nodelet started; 'journalctl -u nodelet -f' follows its log"
fi
