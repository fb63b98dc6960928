package cgroups

import (
	"errors"
	"strings"
	"testing"
)

func TestDriver(t *testing.T) {
	for _, tc := range []struct {
		name, configured, fromRuntime string
		want                          string
		refusal                       string // "" when accepted; else a part of the error
	}{
		{name: "the runtime's cgroupfs", configured: "cgroupfs", fromRuntime: "cgroupfs", want: "cgroupfs"},
		{name: "the runtime's cgroupfs wins over the configured systemd", configured: "systemd", fromRuntime: "cgroupfs", want: "cgroupfs"},
		{name: "no runtime answer: the configured cgroupfs", configured: "cgroupfs", want: "cgroupfs"},
		{name: "the runtime's systemd", configured: "cgroupfs", fromRuntime: "systemd", refusal: "SystemdCgroup = false"},
		{name: "no runtime answer: the configured systemd", configured: "systemd", refusal: "cgroupDriver: systemd"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Driver(tc.configured, tc.fromRuntime)
			if tc.refusal == "" {
				if err != nil || got != tc.want {
					t.Errorf("Driver(%q, %q) = %q, %v; want %q", tc.configured, tc.fromRuntime, got, err, tc.want)
				}
				return
			}
			if !errors.Is(err, ErrSystemdDriver) || !strings.Contains(err.Error(), tc.refusal) {
				t.Errorf("Driver(%q, %q) = %q, %v; want the refusal saying %q", tc.configured, tc.fromRuntime, got, err, tc.refusal)
			}
		})
	}
}
