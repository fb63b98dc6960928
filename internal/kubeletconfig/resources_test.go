package kubeletconfig

import (
	"strings"
	"testing"
)

func TestResourceList(t *testing.T) {
	got, err := ResourceList("kubeReserved", map[string]string{"cpu": "100m", "memory": "256Mi"})
	if err != nil {
		t.Fatal(err)
	}
	if cpu := got["cpu"]; cpu.MilliValue() != 100 {
		t.Errorf("cpu = %v", cpu.String())
	}
	if mem := got["memory"]; mem.Value() != 256<<20 {
		t.Errorf("memory = %v", mem.String())
	}
	for in, want := range map[string]string{"lots": `kubeReserved[memory]: invalid quantity "lots"`, "-1Gi": `must not be negative`} {
		if _, err := ResourceList("kubeReserved", map[string]string{"memory": in}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want it to contain %q", in, err, want)
		}
	}
}
