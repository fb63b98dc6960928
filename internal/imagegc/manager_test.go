package imagegc

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	testingclock "k8s.io/utils/clock/testing"
)

type fakeCRI struct {
	mu         sync.Mutex
	images     []*runtimeapi.Image
	containers []*runtimeapi.Container
	mounts     map[string][]*runtimeapi.Mount
	removed    []string
	removeErr  error
	capacity   uint64
	available  uint64
	events     []string
}

var (
	_ Images     = (*fakeCRI)(nil)
	_ Containers = (*fakeCRI)(nil)
	_ FsStats    = (*fakeCRI)(nil)
	_ Recorder   = (*fakeCRI)(nil)
)

func (f *fakeCRI) ListImages(context.Context, *runtimeapi.ImageFilter) ([]*runtimeapi.Image, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.images), nil
}

func (f *fakeCRI) RemoveImage(_ context.Context, spec *runtimeapi.ImageSpec) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.removeErr != nil {
		return f.removeErr
	}
	f.removed = append(f.removed, spec.GetImage())
	f.images = slices.DeleteFunc(f.images, func(i *runtimeapi.Image) bool {
		if i.GetId() == spec.GetImage() {
			f.available += i.GetSize()
			return true
		}
		return false
	})
	return nil
}

func (f *fakeCRI) ListContainers(context.Context, *runtimeapi.ContainerFilter) ([]*runtimeapi.Container, error) {
	return f.containers, nil
}

func (f *fakeCRI) ContainerStatus(_ context.Context, id string, _ bool) (*runtimeapi.ContainerStatusResponse, error) {
	return &runtimeapi.ContainerStatusResponse{Status: &runtimeapi.ContainerStatus{Id: id, Mounts: f.mounts[id]}}, nil
}

func (f *fakeCRI) ImageFsStats(context.Context) (*statsapi.FsStats, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, a := f.capacity, f.available
	return &statsapi.FsStats{CapacityBytes: &c, AvailableBytes: &a}, nil
}

func (f *fakeCRI) NodeEventf(eventType, reason, format string, args ...any) {
	f.events = append(f.events, eventType+" "+reason+" "+fmt.Sprintf(format, args...))
}

func img(id string, size uint64) *runtimeapi.Image { return &runtimeapi.Image{Id: id, Size: size} }

func newFake() *fakeCRI {
	return &fakeCRI{
		images: []*runtimeapi.Image{img("pause", 1), img("app", 100), img("volume", 100), img("exited-app", 100),
			img("old", 300), img("older", 300)},
		containers: []*runtimeapi.Container{{Id: "c1", ImageRef: "app"}, {Id: "c2", ImageId: "exited-app", ImageRef: "x"}},
		mounts:     map[string][]*runtimeapi.Mount{"c1": {{Image: &runtimeapi.ImageSpec{Image: "volume"}}}},
		capacity:   10000, available: 5000,
	}
}

func newManager(t *testing.T, f *fakeCRI, p Policy, clk *testingclock.FakeClock) *Manager {
	t.Helper()
	f.images[0].Pinned = true
	m, err := New(p, Deps{Images: f, Containers: f, Fs: f, Recorder: f, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	m.began = clk.Now()
	return m
}

func TestGarbageCollectByAge(t *testing.T) {
	f, clk := newFake(), testingclock.NewFakeClock(t0)
	m := newManager(t, f, Policy{HighThresholdPercent: 85, LowThresholdPercent: 80, MinAge: time.Minute, MaxAge: time.Hour}, clk)
	if err := m.GarbageCollect(context.Background()); err != nil || len(f.removed) != 0 {
		t.Fatalf("nodelet just started: removed %v, err %v", f.removed, err)
	}
	clk.Step(2 * time.Hour)
	if err := m.GarbageCollect(context.Background()); err != nil {
		t.Fatal(err)
	}
	slices.Sort(f.removed)
	if want := []string{"old", "older"}; !slices.Equal(f.removed, want) {
		t.Errorf("removed %v, want %v (in use by a container, an exited one or an image volume, and pinned, stay)", f.removed, want)
	}
}

func TestGarbageCollectByThreshold(t *testing.T) {
	f, clk := newFake(), testingclock.NewFakeClock(t0)
	f.available = 1400 // 86% used: free down to 80% (2000 available): 600 bytes
	m := newManager(t, f, Policy{HighThresholdPercent: 85, LowThresholdPercent: 80, MinAge: time.Minute}, clk)
	if err := m.GarbageCollect(context.Background()); err == nil || !strings.Contains(err.Error(), "Insufficient free disk space") {
		t.Errorf("images too young: %v, want FreeDiskSpaceFailed", err)
	}
	if len(f.removed) != 0 || len(f.events) != 1 || !strings.HasPrefix(f.events[0], "Warning FreeDiskSpaceFailed Insufficient free disk space on the node's image filesystem (86% of 10000 bytes used)") {
		t.Fatalf("removed %v, events %q", f.removed, f.events)
	}
	clk.Step(2 * time.Minute)
	if err := m.GarbageCollect(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(f.removed) != 2 || f.available != 2000 {
		t.Errorf("removed %v, available %d; want two 300-byte images, 2000 available", f.removed, f.available)
	}

	f.images = append(f.images, img("spare", 50))
	f.available = 100
	_ = m.GarbageCollect(context.Background()) // detects spare, too young to go
	clk.Step(2 * time.Minute)
	f.removeErr = errors.New("read-only file system")
	if err := m.GarbageCollect(context.Background()); err == nil || !strings.Contains(err.Error(), "read-only file system") {
		t.Errorf("removal errors: %v", err)
	}
}

func TestGarbageCollectInvalidCapacityAndDisabled(t *testing.T) {
	f, clk := newFake(), testingclock.NewFakeClock(t0)
	f.capacity = 0
	m := newManager(t, f, Policy{HighThresholdPercent: 85, LowThresholdPercent: 80}, clk)
	if err := m.GarbageCollect(context.Background()); err == nil || len(f.events) != 1 || !strings.Contains(f.events[0], "InvalidDiskCapacity") {
		t.Errorf("capacity 0: %v %q", err, f.events)
	}
	if !(Policy{HighThresholdPercent: 100}).Disabled() || (Policy{HighThresholdPercent: 100, MaxAge: time.Hour}).Disabled() {
		t.Error("Disabled: 100% and no maximum age only")
	}
	if _, err := New(Policy{HighThresholdPercent: 85, LowThresholdPercent: 90}, Deps{}); err == nil {
		t.Error("an invalid policy was accepted")
	}
}
