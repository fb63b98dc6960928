package testharness

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"path/filepath"

	"github.com/nodelet/nodelet/internal/volumes"
)

// FreePort is a TCP port free on 127.0.0.1 when FreePort returns.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// RandomHex is n random bytes in hexadecimal (node names, UIDs).
func RandomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return hex.EncodeToString(b)
}

// MountsUnder lists the mount points at or under dir, innermost first (none when dir does not
// exist).
func MountsUnder(dir string) []string {
	m, _ := volumes.MountPointsUnder(dir)
	return m
}

// PodCgroups lists the pod-level cgroup directories pod<uid> of the pod that exist, in the
// cgroupfs layout under /kubepods, any QoS class: in every cgroup v1 hierarchy, then v2.
func PodCgroups(uid string) []string {
	var out []string
	for _, pattern := range []string{"/sys/fs/cgroup/*/kubepods/pod", "/sys/fs/cgroup/*/kubepods/*/pod",
		"/sys/fs/cgroup/kubepods/pod", "/sys/fs/cgroup/kubepods/*/pod"} {
		found, _ := filepath.Glob(pattern + uid) // the patterns are valid
		out = append(out, found...)
	}
	return out
}
