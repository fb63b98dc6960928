package agent

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"

	"github.com/nodelet/nodelet/internal/nodeshutdown"
	"github.com/nodelet/nodelet/internal/podconfig"
)

// fakeLogind is logind with a long enough InhibitDelayMaxSec: it hands out inhibitors (pipes
// whose other end tells whether nodelet closed them) and sends the shutdown signal.
type fakeLogind struct {
	mu      sync.Mutex
	writers []*os.File
	events  chan bool
}

var _ nodeshutdown.Logind = (*fakeLogind)(nil)

func (f *fakeLogind) InhibitDelay() (time.Duration, error)  { return time.Hour, nil }
func (f *fakeLogind) RaiseInhibitDelay(time.Duration) error { return nil }
func (f *fakeLogind) WatchShutdown() (<-chan bool, error)   { return f.events, nil }
func (f *fakeLogind) Close() error                          { return nil }

func (f *fakeLogind) Inhibit() (*os.File, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.writers = append(f.writers, w)
	return r, nil
}

// held says whether nodelet still holds the newest inhibitor: writing to a pipe whose read end
// is closed fails.
func (f *fakeLogind) held() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.writers) == 0 {
		return false
	}
	_, err := f.writers[len(f.writers)-1].Write([]byte{0})
	return err == nil
}

// released waits, at most timeout, for nodelet to close the newest inhibitor: the pipe's write
// end then polls POLLERR.
func (f *fakeLogind) released(timeout time.Duration) bool {
	f.mu.Lock()
	w := f.writers[len(f.writers)-1]
	f.mu.Unlock()
	fds := []unix.PollFd{{Fd: int32(w.Fd()), Events: 0}}
	for {
		n, err := unix.Poll(fds, int(timeout.Milliseconds()))
		if err == unix.EINTR {
			continue
		}
		return err == nil && n == 1 && fds[0].Revents&unix.POLLERR != 0
	}
}

// TestGracefulShutdownWiring: with shutdownGracePeriod set, nodelet takes logind's inhibitor;
// on PrepareForShutdown the running pod is terminated with upstream's status (Failed,
// Terminated, the shutdown message, DisruptionTarget), the node is not ready, a new pod is
// refused (NodeShutdown), and the inhibitor is released.
func TestGracefulShutdownWiring(t *testing.T) {
	_, endpoint := fakeCRI(t)
	dir := t.TempDir()
	manifests := filepath.Join(dir, "manifests")
	if err := os.MkdirAll(manifests, 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := loadConfig(t, dir, "--pod-manifest-path", manifests, "--container-runtime-endpoint", endpoint,
		"--hostname-override", "node-a", "--read-only-port", "0")
	cfg.ShutdownPeriods = nodeshutdown.Periods(20*time.Second, 5*time.Second, nil)
	l := &fakeLogind{events: make(chan bool)}
	n := startNode(t, cfg, Deps{Clock: clock.RealClock{}, Reporter: podconfig.LogReporter{}, Cgroups: &cgroupRecorder{},
		Logind: func() (nodeshutdown.Logind, error) { return l, nil }})
	if err := os.WriteFile(filepath.Join(manifests, "web.yaml"), []byte(busybox), 0o644); err != nil {
		t.Fatal(err)
	}
	waitForStatus(t, n, "web-node-a", func(st v1.PodStatus) bool { return st.Phase == v1.PodRunning })
	if !l.held() {
		t.Fatal("no logind inhibitor held while the node runs")
	}

	l.events <- true
	st := waitForStatus(t, n, "web-node-a", func(st v1.PodStatus) bool { return st.Phase == v1.PodFailed })
	if st.Reason != nodeshutdown.Reason || st.Message != nodeshutdown.Message {
		t.Errorf("status reason %q message %q, want %q %q", st.Reason, st.Message, nodeshutdown.Reason, nodeshutdown.Message)
	}
	if !slices.ContainsFunc(st.Conditions, func(c v1.PodCondition) bool {
		return c.Type == v1.DisruptionTarget && c.Status == v1.ConditionTrue && c.Reason == v1.PodReasonTerminationByKubelet
	}) {
		t.Errorf("conditions %+v, want DisruptionTarget True (TerminationByKubelet)", st.Conditions)
	}
	if errs := n.readiness(); !slices.ContainsFunc(errs, func(e error) bool { return e.Error() == "node is shutting down" }) {
		t.Errorf("readiness %v, want 'node is shutting down'", errs)
	}
	late := strings.Replace(busybox, "name: web,", "name: late,", 1)
	if err := os.WriteFile(filepath.Join(manifests, "late.yaml"), []byte(late), 0o644); err != nil {
		t.Fatal(err)
	}
	st = waitForStatus(t, n, "late-node-a", func(st v1.PodStatus) bool { return st.Phase == v1.PodFailed })
	// As upstream's rejectPod, the admission message follows "Pod was rejected: ".
	if want := "Pod was rejected: " + nodeshutdown.AdmitMessage; st.Reason != nodeshutdown.AdmitReason || st.Message != want {
		t.Errorf("a pod during the shutdown: reason %q message %q, want %q %q", st.Reason, st.Message, nodeshutdown.AdmitReason, want)
	}
	if !l.released(wiringDeadline) {
		t.Fatal("logind's inhibitor still held after the pods were terminated")
	}
}
