//go:build !unix

package prober

import "net"

// probeDialer is a plain dialer where SO_LINGER cannot be set the unix way.
func probeDialer() *net.Dialer { return &net.Dialer{} }
