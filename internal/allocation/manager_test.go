package allocation

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/nodelet/nodelet/internal/container"
)

// cpuAdmission admits pods whose cpu requests, with the others', fit in capacity millicores,
// in the words of upstream's predicate.
type cpuAdmission struct {
	capacity int64
	rejected []string
}

var _ Admission = (*cpuAdmission)(nil)

func (a *cpuAdmission) Admit(pod *v1.Pod, active []*v1.Pod) (bool, string, string) {
	var used int64
	for _, p := range active {
		used += podCPU(p)
	}
	if want := podCPU(pod); used+want > a.capacity {
		return false, "OutOfcpu", fmt.Sprintf("Node didn't have enough resource: cpu, requested: %d, used: %d, capacity: %d", want, used, a.capacity)
	}
	return true, "", ""
}

func (a *cpuAdmission) Reject(pod *v1.Pod, reason, _ string) {
	a.rejected = append(a.rejected, pod.Name+":"+reason)
}

func podCPU(p *v1.Pod) int64 {
	var n int64
	for _, c := range p.Spec.Containers {
		n += c.Resources.Requests.Cpu().MilliValue()
	}
	return n
}

type events struct {
	mu  sync.Mutex
	got []string
}

func (e *events) Eventf(_ *v1.Pod, eventType, reason, format string, args ...any) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.got = append(e.got, eventType+" "+reason+" "+fmt.Sprintf(format, args...))
}

func (e *events) reasons() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []string
	for _, g := range e.got {
		out = append(out, strings.Fields(g)[1])
	}
	return out
}

func simplePod(uid, cpu string) *v1.Pod {
	p := &v1.Pod{Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c", Resources: req(cpu, "100Mi")}}}}
	p.UID, p.Name, p.Generation = types.UID(uid), uid, 1
	return p
}

func resized(p *v1.Pod, cpu string) *v1.Pod {
	out := p.DeepCopy()
	out.Spec.Containers[0].Resources = req(cpu, "100Mi")
	out.Generation++
	return out
}

func newManager(t *testing.T, dir string, adm Admission, ev *events) *Manager {
	t.Helper()
	m, err := New(Config{RootDir: dir}, Deps{Admission: adm, Recorder: ev, Clock: testingclock.NewFakeClock(time.Unix(1000, 0))})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func cond(m *Manager, uid types.UID, ct v1.PodConditionType) *v1.PodCondition {
	for _, c := range m.ResizeConditions(uid) {
		if c.Type == ct {
			return &c
		}
	}
	return nil
}

func TestManagerResizeLifecycle(t *testing.T) {
	dir := t.TempDir()
	adm, ev := &cpuAdmission{capacity: 2000}, &events{}
	m := newManager(t, dir, adm, ev)
	a, b := simplePod("a", "500m"), simplePod("b", "1")
	for _, p := range []*v1.Pod{a, b} {
		if ok, reason, msg := m.Admit(p, []*v1.Pod{a, b}[:0]); !ok {
			t.Fatalf("admit %s: %s %s", p.Name, reason, msg)
		}
	}

	// a grows within the node: allocated, in progress, ResizeStarted.
	a2 := resized(a, "800m")
	if !m.HandleResize(a2, []*v1.Pod{b}) {
		t.Error("an allocated resize must sync the pod")
	}
	if got := m.Apply(a2); !SameCPUMemory(got.Spec.Containers[0].Resources, req("800m", "100Mi")) {
		t.Errorf("allocation after the resize: %+v", got.Spec.Containers[0].Resources)
	}
	if c := cond(m, "a", v1.PodResizeInProgress); c == nil || c.ObservedGeneration != 2 || c.Reason != "" {
		t.Errorf("PodResizeInProgress %+v, want set at generation 2", c)
	}
	// The runtime has not applied it: still in progress; once applied, completed.
	ps := &container.PodStatus{ContainerStatuses: []*container.Status{{Name: "c", State: container.StateRunning}}}
	m.InitActuated(a) // the first sync recorded the old resources
	if m.SyncInProgress(m.Apply(a2), ps, "") || cond(m, "a", v1.PodResizeInProgress) == nil {
		t.Error("not applied yet: the condition stays, unchanged")
	}
	if m.SyncInProgress(m.Apply(a2), ps, "failed to update memory of container \"c\": boom"); cond(m, "a", v1.PodResizeInProgress).Reason != v1.PodReasonError {
		t.Errorf("a failed update: %+v, want reason Error", cond(m, "a", v1.PodResizeInProgress))
	}
	if err := m.SetActuated("a", "c", req("800m", "100Mi")); err != nil {
		t.Fatal(err)
	}
	if !m.SyncInProgress(m.Apply(a2), ps, "") || cond(m, "a", v1.PodResizeInProgress) != nil {
		t.Error("applied: the condition goes")
	}

	// b grows beyond what is left: Deferred, with admission's message, once.
	b2 := resized(b, "1500m")
	if !m.HandleResize(b2, []*v1.Pod{a2}) {
		t.Error("a new Pending condition must sync the pod")
	}
	c := cond(m, "b", v1.PodResizePending)
	if c == nil || c.Reason != v1.PodReasonDeferred || c.Message != "Node didn't have enough resource: cpu, requested: 1500, used: 800, capacity: 2000" {
		t.Errorf("PodResizePending %+v", c)
	}
	if m.HandleResize(b2, []*v1.Pod{a2}) {
		t.Error("the same deferral again: nothing changed")
	}
	if got := m.Apply(b2); !SameCPUMemory(got.Spec.Containers[0].Resources, req("1", "100Mi")) {
		t.Errorf("a deferred resize changed the allocation: %+v", got.Spec.Containers[0].Resources)
	}
	if !m.HasPending() {
		t.Error("a deferred resize waits")
	}

	// nodelet restarts: both records are read back.
	m = newManager(t, dir, adm, ev)
	if got := m.Apply(a); !SameCPUMemory(got.Spec.Containers[0].Resources, req("800m", "100Mi")) {
		t.Errorf("after a restart a's allocation is %+v, want 800m", got.Spec.Containers[0].Resources)
	}
	if got := m.Actuated("a")["c"]; !SameCPUMemory(got, req("800m", "100Mi")) {
		t.Errorf("after a restart a's actuated resources are %+v", got)
	}
	if ok, _, _ := m.Admit(b2, []*v1.Pod{a2}); !ok {
		t.Error("after a restart b is admitted with its allocation (1), not its spec (1500m)")
	}
	m.HandleResize(b2, []*v1.Pod{a2})
	// a shrinks: b's deferred resize now fits when retried.
	a3 := resized(a2, "200m")
	m.HandleResize(a3, []*v1.Pod{b2})
	got := m.RetryPending(func(uid types.UID) (*v1.Pod, []*v1.Pod, bool) {
		if uid != "b" {
			return nil, nil, false
		}
		return b2, []*v1.Pod{a3}, true
	})
	if len(got) != 1 || got[0] != "b" || cond(m, "b", v1.PodResizePending) != nil || m.HasPending() {
		t.Errorf("retry: %v, pending %+v", got, cond(m, "b", v1.PodResizePending))
	}
	want := []string{"ResizeStarted", "ResizeError", "ResizeCompleted", "ResizeDeferred", "ResizeDeferred", "ResizeStarted", "ResizeStarted"}
	if r := ev.reasons(); strings.Join(r, ",") != strings.Join(want, ",") {
		t.Errorf("events %v, want %v", r, want)
	}
	if !strings.Contains(ev.got[0], `Pod resize started: {"containers":[{"name":"c","resources":{"limits":{"cpu":"800m","memory":"100Mi"},"requests":{"cpu":"800m","memory":"100Mi"}}}],"generation":2}`) {
		t.Errorf("ResizeStarted message %q", ev.got[0])
	}

	// Pods that are gone are forgotten, in memory and on disk.
	m.RemoveOrphans(func(uid types.UID) bool { return uid == "b" })
	m = newManager(t, dir, adm, ev)
	if m.Actuated("a") != nil || m.Apply(a) != a {
		t.Error("a removed pod's records survived")
	}
}

func TestManagerInfeasibleIsNotRetried(t *testing.T) {
	m := newManager(t, t.TempDir(), &cpuAdmission{capacity: 4000}, &events{})
	p := testPod()
	if ok, _, _ := m.Admit(p, nil); !ok {
		t.Fatal("not admitted")
	}
	p2 := p.DeepCopy()
	p2.Spec.InitContainers[0].Resources = req("1", "1Gi")
	m.HandleResize(p2, nil)
	if c := cond(m, p.UID, v1.PodResizePending); c == nil || c.Reason != v1.PodReasonInfeasible || m.HasPending() {
		t.Errorf("PodResizePending %+v, pending %v: want Infeasible and no retry", c, m.HasPending())
	}
}

func TestCheckpointCorruptStartsEmpty(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, AllocatedFile), []byte(`{"pods":{"x":{}},"checksum":1}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ActuatedFile), []byte(`not json`), 0o600); err != nil {
		t.Fatal(err)
	}
	m := newManager(t, dir, &cpuAdmission{capacity: 1000}, &events{})
	if p := simplePod("x", "1"); m.Apply(p) != p || m.Actuated("x") != nil {
		t.Error("a corrupt checkpoint was trusted")
	}
	if _, err := New(Config{}, Deps{}); err == nil {
		t.Error("New without its dependencies: no error")
	}
}
