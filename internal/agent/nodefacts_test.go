package agent

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestThermalThrottlePaths(t *testing.T) {
	sys := t.TempDir()
	for _, d := range []string{"devices/system/cpu/cpu0/thermal_throttle", "devices/system/cpu/cpu12/thermal_throttle",
		"devices/system/cpu/cpu1/topology", "devices/system/cpu/cpufreq/thermal_throttle"} {
		if err := os.MkdirAll(filepath.Join(sys, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	got := thermalThrottlePaths(sys)
	want := []string{"/sys/devices/system/cpu/cpu0/thermal_throttle", "/sys/devices/system/cpu/cpu12/thermal_throttle"}
	if !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if got := thermalThrottlePaths(filepath.Join(sys, "missing")); len(got) != 0 {
		t.Errorf("no /sys: %v", got)
	}
}
