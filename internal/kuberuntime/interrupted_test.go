package kuberuntime

import (
	"testing"
	"time"

	"github.com/nodelet/nodelet/internal/container"
)

// A container whose start was cancelled (nodelet killed during StartContainer) did not fail:
// it is started again. Every other exit stays an exit.
func TestInterruptedStart(t *testing.T) {
	cancelled := "failed to create containerd task: failed to create shim task: context canceled"
	for _, tc := range []struct {
		name string
		cs   container.Status
		want bool
	}{
		{"start cancelled", container.Status{State: container.StateExited, ExitCode: 128, Message: cancelled}, true},
		{"ran, then exited 128", container.Status{State: container.StateExited, ExitCode: 128, Message: cancelled, StartedAt: time.Unix(100, 0)}, false},
		{"a start that failed on its own", container.Status{State: container.StateExited, ExitCode: 128,
			Message: `failed to create containerd task: exec: "nope": executable file not found in $PATH`}, false},
		{"exited 1 without running", container.Status{State: container.StateExited, ExitCode: 1, Message: cancelled}, false},
		{"created", container.Status{State: container.StateCreated}, false},
		{"running", container.Status{State: container.StateRunning, StartedAt: time.Unix(100, 0)}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := interruptedStart(&tc.cs); got != tc.want {
				t.Errorf("interruptedStart = %v, want %v", got, tc.want)
			}
		})
	}
}
