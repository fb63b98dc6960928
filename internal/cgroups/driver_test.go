package cgroups

import (
	"errors"
	"strings"
	"testing"
)

func TestDriver(t *testing.T) {
	for _, tc := range []struct {
		name, configured, fromRuntime string
		systemd                       bool // systemd runs on the host
		want                          string
		refusal                       error
		says                          string // a part of the refusal
	}{
		{name: "the runtime's cgroupfs", configured: "cgroupfs", fromRuntime: "cgroupfs", want: "cgroupfs"},
		{name: "no runtime answer: the configured cgroupfs", configured: "cgroupfs", want: "cgroupfs"},
		{name: "the runtime's systemd, on systemd", configured: "systemd", fromRuntime: "systemd", systemd: true, want: "systemd"},
		{name: "the runtime's systemd wins over the default cgroupfs", configured: "cgroupfs", fromRuntime: "systemd", systemd: true, want: "systemd"},
		{name: "no runtime answer: the configured systemd, on systemd", configured: "systemd", systemd: true, want: "systemd"},
		{name: "the runtime's cgroupfs wins over the configured systemd, as upstream", configured: "systemd", fromRuntime: "cgroupfs", want: "cgroupfs"},
		{name: "the runtime's systemd without systemd", configured: "cgroupfs", fromRuntime: "systemd",
			refusal: ErrNoSystemd, says: "the container runtime's cgroup driver"},
		{name: "the configured systemd without systemd", configured: "systemd",
			refusal: ErrNoSystemd, says: "cgroupDriver: systemd"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Driver(tc.configured, tc.fromRuntime, tc.systemd)
			if tc.refusal == nil {
				if err != nil || got != tc.want {
					t.Errorf("Driver(%q, %q, %v) = %q, %v; want %q", tc.configured, tc.fromRuntime, tc.systemd, got, err, tc.want)
				}
				return
			}
			if !errors.Is(err, tc.refusal) || !strings.Contains(err.Error(), tc.says) {
				t.Errorf("Driver(%q, %q, %v) = %q, %v; want %v saying %q", tc.configured, tc.fromRuntime, tc.systemd, got, err, tc.refusal, tc.says)
			}
		})
	}
}
