package prober

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/nodelet/nodelet/internal/prober/probeview"
)

// The worker tests run in a synctest bubble on a fake clock: after clock.Step, synctest.Wait
// returns once every worker has handled its tick and is waiting for the next one.

type fakeStatuses struct {
	mu sync.Mutex
	m  map[types.UID]v1.PodStatus
}

var _ StatusGetter = (*fakeStatuses)(nil)

func (f *fakeStatuses) GetPodStatus(uid types.UID) (v1.PodStatus, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	st, ok := f.m[uid]
	return *st.DeepCopy(), ok
}

func (f *fakeStatuses) set(uid types.UID, st v1.PodStatus) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.m[uid] = st
}

type fakeRecorder struct {
	mu     sync.Mutex
	events []string
}

var _ Recorder = (*fakeRecorder)(nil)

func (f *fakeRecorder) Eventf(pod *v1.Pod, eventType, reason, messageFmt string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.events = append(f.events, eventType+" "+reason+" "+fmt.Sprintf(messageFmt, args...))
}

func (f *fakeRecorder) take() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	ev := f.events
	f.events = nil
	return ev
}

// scriptExec answers exec probes by the command's first word, and notes when it was called.
type scriptExec struct {
	mu    sync.Mutex
	clock *clocktesting.FakeClock
	codes map[string]int32 // exit code by command; 0 when absent
	err   error
	block bool // wait for the caller to give up
	calls []probeCall
}

type probeCall struct {
	cmd, id string
	at      time.Duration // since t0
}

var _ Execer = (*scriptExec)(nil)

func (s *scriptExec) ExecSync(ctx context.Context, id string, cmd []string, _ time.Duration) ([]byte, []byte, int32, error) {
	s.mu.Lock()
	s.calls = append(s.calls, probeCall{cmd[0], id, s.clock.Since(t0)})
	code, err, block := s.codes[cmd[0]], s.err, s.block
	s.mu.Unlock()
	if block {
		<-ctx.Done()
		return nil, nil, 0, ctx.Err()
	}
	if err != nil {
		return nil, nil, 0, err
	}
	return []byte(cmd[0] + " says " + fmt.Sprint(code)), nil, code, nil
}

func (s *scriptExec) setCode(cmd string, code int32) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.codes[cmd] = code
}

func (s *scriptExec) setBlock() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.block = true
}

func (s *scriptExec) setErr(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.err = err
}

// taken returns the calls since the last look.
func (s *scriptExec) taken() []probeCall {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.calls
	s.calls = nil
	return c
}

type fixture struct {
	metrics  *fakeMetrics
	t        *testing.T
	clock    *clocktesting.FakeClock
	statuses *fakeStatuses
	exec     *scriptExec
	rec      *fakeRecorder
	m        *Manager
}

// newFixture must run in a synctest bubble; jitter is what Config.Rand returns.
func newFixture(t *testing.T, jitter float64) *fixture {
	clk := clocktesting.NewFakeClock(t0)
	f := &fixture{t: t, clock: clk, statuses: &fakeStatuses{m: map[types.UID]v1.PodStatus{}},
		exec: &scriptExec{clock: clk, codes: map[string]int32{}}, rec: &fakeRecorder{}, metrics: &fakeMetrics{}}
	f.m = NewManager(Config{Clock: clk, Rand: func() float64 { return jitter }},
		Deps{Statuses: f.statuses, Exec: f.exec, Recorder: f.rec, Metrics: f.metrics})
	t.Cleanup(f.m.Stop)
	return f
}

func (f *fixture) advance(d time.Duration) {
	f.clock.Step(d)
	synctest.Wait()
}

// updates counts the UIDs Updates delivers now.
func (f *fixture) updates() int {
	synctest.Wait()
	n := 0
	for {
		select {
		case <-f.m.Updates():
			n++
			synctest.Wait()
		default:
			return n
		}
	}
}

func (f *fixture) results(pod *v1.Pod, ids map[string]string) probeview.View {
	return f.m.results(pod, ids, false)
}

func (m *Manager) workerCount() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.workers)
}

func execProbeOf(cmd string, period, success, failure, delay int32) *v1.Probe {
	return &v1.Probe{ProbeHandler: v1.ProbeHandler{Exec: &v1.ExecAction{Command: []string{cmd}}},
		PeriodSeconds: period, SuccessThreshold: success, FailureThreshold: failure, InitialDelaySeconds: delay, TimeoutSeconds: 1}
}

func newPod(containers ...v1.Container) *v1.Pod {
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "uid-1", Namespace: "ns", Name: "web"},
		Spec: v1.PodSpec{Containers: containers}}
}

// runningStatus: container app, instance id, running since at.
func runningStatus(id string, at time.Time, started bool) v1.PodStatus {
	return v1.PodStatus{Phase: v1.PodRunning, PodIP: "10.0.0.1", ContainerStatuses: []v1.ContainerStatus{{
		Name: "app", ContainerID: id, Started: ptr.To(started),
		State: v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: metav1.NewTime(at)}}}}}
}

func sinceT0(calls []probeCall) []time.Duration {
	var d []time.Duration
	for _, c := range calls {
		d = append(d, c.at)
	}
	return d
}

// fakeMetrics records "type/pod/container/result" per probe and "forget type/pod/container".
type fakeMetrics struct {
	mu  sync.Mutex
	log []string
}

var _ Metrics = (*fakeMetrics)(nil)

func (f *fakeMetrics) ObserveProbe(probeType string, pod *v1.Pod, container, result string, _ time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.log = append(f.log, probeType+"/"+pod.Name+"/"+container+"/"+result)
}

func (f *fakeMetrics) ForgetProbe(probeType string, pod *v1.Pod, container string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.log = append(f.log, "forget "+probeType+"/"+pod.Name+"/"+container)
}

func (f *fakeMetrics) take() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := f.log
	f.log = nil
	return out
}
