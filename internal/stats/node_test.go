package stats

import "testing"

type sliceNames struct{}

func (sliceNames) Literal(name string) string { return name + ".slice" }

var _ CgroupNames = sliceNames{}

// TestPodsCgroupFollowsTheDriver: the "pods" system container is read where the cgroup driver
// put the pods (/kubepods.slice with systemd), /kubepods without a driver's names.
func TestPodsCgroupFollowsTheDriver(t *testing.T) {
	p := &Provider{cfg: Config{CgroupRoot: "/kubepods"}}
	if got := p.podsCgroup(); got != "/kubepods" {
		t.Errorf("without names: %q", got)
	}
	p.names = sliceNames{}
	if got := p.podsCgroup(); got != "/kubepods.slice" {
		t.Errorf("with the driver's names: %q", got)
	}
}
