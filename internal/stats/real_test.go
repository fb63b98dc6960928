//go:build linux

package stats

import (
	"context"
	"os"
	"testing"

	"github.com/nodelet/nodelet/internal/stats/statstest"
	"github.com/nodelet/nodelet/internal/testharness/ci"
)

// TestRealNode reads this machine's /proc and /sys/fs/cgroup (cgroup v1 or v2) through the
// provider, with a runtime that has no pods.
func TestRealNode(t *testing.T) {
	if _, err := os.Stat("/sys/fs/cgroup"); err != nil {
		ci.Skip(t, "no cgroup filesystem: %v", err)
	}
	p, err := New(Config{NodeName: "real", RootDir: t.TempDir()}, Deps{Runtime: &statstest.Runtime{}, Images: &statstest.Runtime{}})
	if err != nil {
		t.Fatal(err)
	}
	s, err := p.CPUAndMemorySummary(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	n := s.Node
	if n.CPU == nil || deref(n.CPU.UsageCoreNanoSeconds) == uint64(0) {
		t.Errorf("node cpu: %s", dump(n.CPU))
	}
	if n.Memory == nil || deref(n.Memory.WorkingSetBytes) == uint64(0) || deref(n.Memory.AvailableBytes) == uint64(0) {
		t.Errorf("node memory: %s", dump(n.Memory))
	}
	if n.StartTime.IsZero() {
		t.Error("node startTime is zero")
	}
	if len(n.SystemContainers) == 0 || n.SystemContainers[0].Name != "kubelet" || deref(n.SystemContainers[0].Memory.WorkingSetBytes) == uint64(0) {
		t.Errorf("system containers: %s", dump(n.SystemContainers))
	}
	if len(s.Pods) != 0 {
		t.Errorf("pods: %s", dump(s.Pods))
	}
	t.Logf("node cpu %s memory %s", dump(n.CPU), dump(n.Memory))
}
