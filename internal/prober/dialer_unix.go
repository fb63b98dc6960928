//go:build unix

package prober

import (
	"net"
	"syscall"
)

// probeDialer is upstream's probe.ProbeDialer: SO_LINGER of one second, so that the sockets of
// frequent probes do not pile up in TIME-WAIT (https://issues.k8s.io/89898).
func probeDialer() *net.Dialer {
	return &net.Dialer{
		Control: func(_, _ string, c syscall.RawConn) error {
			return c.Control(func(fd uintptr) {
				_ = syscall.SetsockoptLinger(int(fd), syscall.SOL_SOCKET, syscall.SO_LINGER, &syscall.Linger{Onoff: 1, Linger: 1})
			})
		},
	}
}
