//go:build linux

package host

import (
	"os"
	"testing"

	"github.com/nodelet/nodelet/internal/testharness/ci"
)

// TestRealNode reads this machine's /proc and /sys/fs/cgroup (v1 or v2) and checks that the
// node's CPU and memory are there.
func TestRealNode(t *testing.T) {
	r := NewReader("/")
	if _, err := os.Stat("/sys/fs/cgroup"); err != nil {
		ci.Skip(t, "no cgroup filesystem: %v", err)
	}
	c, err := r.Cgroup("/")
	if err != nil {
		t.Fatalf("Cgroup(/) on a cgroup v2=%v host: %v", r.CgroupV2(), err)
	}
	if c.CPU.UsageNanosecs == 0 {
		t.Error("root cgroup CPU time is 0")
	}
	m := c.Memory
	if m.Usage == 0 || m.WorkingSet == 0 || m.Limit == nil || *m.Limit == 0 || m.WorkingSet > m.Usage {
		t.Errorf("root cgroup memory: %+v", m)
	}
	mi, err := r.MemInfo()
	if err != nil || mi.MemTotal == 0 {
		t.Errorf("MemInfo = %+v, %v", mi, err)
	}
	if _, err := r.NetDev(); err != nil {
		t.Errorf("NetDev: %v", err)
	}
	if bt, err := r.BootTime(); err != nil || bt.IsZero() {
		t.Errorf("BootTime = %v, %v", bt, err)
	}
	if rl := r.Rlimit(); rl.MaxPID == nil || rl.Tasks == nil || *rl.Tasks == 0 {
		t.Errorf("Rlimit = %+v", rl)
	}
	if p, err := r.Self(); err != nil || p.CPUUsageNanosecs == 0 && p.RSS == 0 {
		t.Errorf("Self = %+v, %v", p, err)
	}
	if fs, err := r.Statfs("/"); err != nil || fs.Capacity == 0 {
		t.Errorf("Statfs(/) = %+v, %v", fs, err)
	}
	t.Logf("cgroup v2=%v cpu=%dns memory=%+v", r.CgroupV2(), c.CPU.UsageNanosecs, m)
}
