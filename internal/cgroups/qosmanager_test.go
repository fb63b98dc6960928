package cgroups

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/clock"
)

type fakeCgroups struct {
	mu      sync.Mutex
	sets    []string // "name shares memory"
	fail    error
	missing []string
}

var _ Writer = (*fakeCgroups)(nil)

func (f *fakeCgroups) Destroy(string) error { return nil }

// SetExisting records "existing <name> ..."; missing names the cgroups that do not exist.
func (f *fakeCgroups) SetExisting(name string, r Resources) error {
	if slices.Contains(f.missing, name) {
		return errors.New("cgroup " + name + " does not exist")
	}
	return f.Set("existing "+name, r)
}

func (f *fakeCgroups) Set(name string, r Resources) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := name
	if r.CPUShares != nil {
		s += " shares=" + resource.NewQuantity(int64(*r.CPUShares), resource.DecimalSI).String()
	}
	if r.Memory != nil {
		s += " memory=" + resource.NewQuantity(*r.Memory, resource.BinarySI).String()
	}
	if r.PidsLimit != nil {
		s += " pids=" + resource.NewQuantity(*r.PidsLimit, resource.DecimalSI).String()
	}
	f.sets = append(f.sets, s)
	return f.fail
}

func (f *fakeCgroups) took() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := f.sets
	f.sets = nil
	return out
}

func TestQoSManager(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		active := []*v1.Pod{pod("be", v1.ResourceRequirements{})}
		cg := &fakeCgroups{}
		q, err := NewQoSManager(QoSConfig{PodsCgroup: "/nodelet/kubepods", Reservations: Reservations{Enforce: []string{EnforcePods},
			Capacity: v1.ResourceList{v1.ResourceCPU: resource.MustParse("2"), v1.ResourceMemory: resource.MustParse("4Gi")}}},
			QoSDeps{Clock: clock.RealClock{}, Cgroups: cg, ActivePods: func() []*v1.Pod { mu.Lock(); defer mu.Unlock(); return active }})
		if err != nil {
			t.Fatal(err)
		}
		if err := q.Start(); err != nil {
			t.Fatal(err)
		}
		want := []string{"/nodelet/kubepods shares=2048 memory=4Gi", "/nodelet/kubepods/burstable shares=2", "/nodelet/kubepods/besteffort shares=2"}
		if got := cg.took(); !slices.Equal(got, want) {
			t.Errorf("start set %q, want %q", got, want)
		}

		// A Burstable pod becomes active: the next Update (before its sandbox) counts it.
		mu.Lock()
		active = append(active, pod("b", v1.ResourceRequirements{Requests: rl("500m", "")}))
		mu.Unlock()
		if err := q.Update(); err != nil {
			t.Fatal(err)
		}
		if got := cg.took(); !slices.Equal(got, []string{"/nodelet/kubepods/burstable shares=512", "/nodelet/kubepods/besteffort shares=2"}) {
			t.Errorf("update set %q", got)
		}

		// Every minute, without a pod change.
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { q.Run(ctx); close(done) }()
		time.Sleep(time.Minute + time.Second)
		synctest.Wait()
		if got := cg.took(); len(got) != 2 {
			t.Errorf("a minute later set %q, want the two QoS cgroups once", got)
		}
		// A failure is reported by Update and logged by Run, which keeps going.
		cg.fail = errors.New("read-only file system")
		if err := q.Update(); err == nil {
			t.Error("Update hid the failure")
		}
		cancel()
		<-done
	})
}

func TestNewQoSManagerChecks(t *testing.T) {
	deps := QoSDeps{Clock: clock.RealClock{}, Cgroups: &fakeCgroups{}, ActivePods: func() []*v1.Pod { return nil }}
	if _, err := NewQoSManager(QoSConfig{PodsCgroup: "kubepods"}, deps); err == nil {
		t.Error("a relative pods' cgroup was accepted")
	}
	if _, err := NewQoSManager(QoSConfig{PodsCgroup: "/kubepods"}, QoSDeps{}); err == nil {
		t.Error("missing dependencies were accepted")
	}
}

type nodeEvents struct{ list []string }

func (e *nodeEvents) NodeEventf(eventType, reason, format string, args ...any) {
	e.list = append(e.list, eventType+" "+reason+": "+fmt.Sprintf(format, args...))
}

// TestQoSManagerReservedCgroups: enforceNodeAllocatable's reservations go on their existing
// cgroups at start, with upstream's events; a reserved cgroup that does not exist ends the
// start with upstream's message.
func TestQoSManagerReservedCgroups(t *testing.T) {
	res := Reservations{Enforce: []string{EnforcePods, EnforceSystemReserved},
		Capacity:             v1.ResourceList{v1.ResourceCPU: resource.MustParse("2"), v1.ResourceMemory: resource.MustParse("4Gi")},
		SystemReserved:       v1.ResourceList{v1.ResourceCPU: resource.MustParse("500m"), v1.ResourceMemory: resource.MustParse("1Gi"), ResourcePIDs: resource.MustParse("100")},
		SystemReservedCgroup: "/system.slice"}
	cg, ev := &fakeCgroups{}, &nodeEvents{}
	deps := QoSDeps{Clock: clock.RealClock{}, Cgroups: cg, Recorder: ev, ActivePods: func() []*v1.Pod { return nil }}
	q, err := NewQoSManager(QoSConfig{PodsCgroup: "/kubepods", Reservations: res}, deps)
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Start(); err != nil {
		t.Fatal(err)
	}
	want := []string{"/kubepods shares=1536 memory=3Gi", "existing /system.slice shares=512 memory=1Gi pids=100",
		"/kubepods/burstable shares=2", "/kubepods/besteffort shares=2"}
	if got := cg.took(); !slices.Equal(got, want) {
		t.Errorf("start set %q, want %q", got, want)
	}
	wantEvents := []string{"Normal SuccessfulNodeAllocatableEnforcement: Updated Node Allocatable limit across pods",
		"Normal SuccessfulNodeAllocatableEnforcement: Updated limits on system reserved cgroup /system.slice"}
	if !slices.Equal(ev.list, wantEvents) {
		t.Errorf("events %q, want %q", ev.list, wantEvents)
	}

	cg.missing = []string{"/system.slice"}
	err = q.Start()
	if err == nil || err.Error() != `Failed to enforce System Reserved Cgroup Limits on "/system.slice": cgroup /system.slice does not exist` {
		t.Errorf("Start with the reserved cgroup missing = %v", err)
	}
}
