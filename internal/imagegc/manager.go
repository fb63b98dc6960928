package imagegc

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/klog/v2"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	"k8s.io/utils/clock"
)

// DefaultPeriod is upstream's ImageGCPeriod.
const DefaultPeriod = 5 * time.Minute

// Policy is the kubelet configuration's image GC settings.
type Policy struct {
	HighThresholdPercent int           // imageGCHighThresholdPercent
	LowThresholdPercent  int           // imageGCLowThresholdPercent
	MinAge               time.Duration // imageMinimumGCAge
	MaxAge               time.Duration // imageMaximumGCAge; 0: no removal by age
	// Period is how often the collector runs (DefaultPeriod when zero).
	Period time.Duration
}

// Validate returns upstream's errors for thresholds out of range.
func (p Policy) Validate() error {
	switch {
	case p.HighThresholdPercent < 0 || p.HighThresholdPercent > 100:
		return fmt.Errorf("invalid HighThresholdPercent %d, must be in range [0-100]", p.HighThresholdPercent)
	case p.LowThresholdPercent < 0 || p.LowThresholdPercent > 100:
		return fmt.Errorf("invalid LowThresholdPercent %d, must be in range [0-100]", p.LowThresholdPercent)
	case p.LowThresholdPercent > p.HighThresholdPercent:
		return fmt.Errorf("LowThresholdPercent %d can not be higher than HighThresholdPercent %d", p.LowThresholdPercent, p.HighThresholdPercent)
	case p.MinAge < 0 || p.MaxAge < 0:
		return errors.New("imageMinimumGCAge and imageMaximumGCAge must not be negative")
	case p.MaxAge != 0 && p.MaxAge < p.MinAge:
		return fmt.Errorf("imageMaximumGCAge %v must be greater than imageMinimumGCAge %v", p.MaxAge, p.MinAge)
	}
	return nil
}

// Images is the CRI image service as the collector uses it.
type Images interface {
	ListImages(ctx context.Context, filter *runtimeapi.ImageFilter) ([]*runtimeapi.Image, error)
	RemoveImage(ctx context.Context, image *runtimeapi.ImageSpec) error
}

// Containers lists every container the runtime has and its status (for image volumes).
type Containers interface {
	ListContainers(ctx context.Context, filter *runtimeapi.ContainerFilter) ([]*runtimeapi.Container, error)
	ContainerStatus(ctx context.Context, containerID string, verbose bool) (*runtimeapi.ContainerStatusResponse, error)
}

// FsStats gives the image filesystem's capacity and free space (the stats provider).
type FsStats interface {
	ImageFsStats(ctx context.Context) (*statsapi.FsStats, error)
}

// Recorder records node events (FreeDiskSpaceFailed, InvalidDiskCapacity, ImageGCFailed).
type Recorder interface {
	NodeEventf(eventType, reason, messageFmt string, args ...any)
}

// Deps are the collector's collaborators.
type Deps struct {
	Images     Images
	Containers Containers
	Fs         FsStats
	Recorder   Recorder
	Clock      clock.Clock
}

// Manager is the image garbage collector.
type Manager struct {
	policy Policy
	deps   Deps

	mu      sync.Mutex
	records map[string]Record
	began   time.Time
}

// New checks the policy and returns the collector; Run starts it.
func New(policy Policy, deps Deps) (*Manager, error) {
	if err := policy.Validate(); err != nil {
		return nil, err
	}
	if deps.Images == nil || deps.Containers == nil || deps.Fs == nil || deps.Recorder == nil || deps.Clock == nil {
		return nil, errors.New("imagegc: Images, Containers, Fs, Recorder and Clock are required")
	}
	if policy.Period == 0 {
		policy.Period = DefaultPeriod
	}
	return &Manager{policy: policy, deps: deps, records: map[string]Record{}}, nil
}

// Disabled is upstream's rule: a high threshold of 100% and no maximum age collect nothing.
func (p Policy) Disabled() bool { return p.HighThresholdPercent == 100 && p.MaxAge == 0 }

// Run collects every period until ctx ends, starting now, as upstream's
// StartGarbageCollection: a failure twice in a row is an ImageGCFailed node event (the first may
// be the stats not being ready yet).
func (m *Manager) Run(ctx context.Context) {
	if m.policy.Disabled() {
		klog.V(2).InfoS("ImageGCHighThresholdPercent is set 100 and ImageMaximumGCAge is 0, Disable image GC")
		return
	}
	m.mu.Lock()
	m.began = m.deps.Clock.Now()
	m.mu.Unlock()
	failedBefore := false
	for {
		if err := m.GarbageCollect(ctx); err != nil {
			if failedBefore {
				m.deps.Recorder.NodeEventf(v1.EventTypeWarning, "ImageGCFailed", "%s", err.Error())
			}
			klog.ErrorS(err, "Image garbage collection failed; it runs again after the period", "period", m.policy.Period)
			failedBefore = true
		} else {
			failedBefore = false
		}
		select {
		case <-ctx.Done():
			return
		case <-m.deps.Clock.After(m.policy.Period):
		}
	}
}

// inUse lists the images of every container the runtime has, and of their image volumes.
func (m *Manager) inUse(ctx context.Context) (sets.Set[string], error) {
	ctrs, err := m.deps.Containers.ListContainers(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("list containers: %w", err)
	}
	used := sets.New[string]()
	for _, c := range ctrs {
		if id := c.GetImageId(); id != "" {
			used.Insert(id)
		}
		used.Insert(c.GetImageRef())
		st, err := m.deps.Containers.ContainerStatus(ctx, c.GetId(), false)
		if err != nil {
			continue // removed meanwhile
		}
		for _, mnt := range st.GetStatus().GetMounts() {
			if img := mnt.GetImage().GetImage(); img != "" {
				used.Insert(img)
			}
		}
	}
	return used, nil
}

// GarbageCollect is upstream's GarbageCollect: images unused for longer than the maximum age,
// then, over the high threshold, the least recently used until the low threshold.
func (m *Manager) GarbageCollect(ctx context.Context) error {
	order, now, err := m.detect(ctx)
	if err != nil {
		return err
	}
	m.mu.Lock()
	began := m.began
	m.mu.Unlock()

	old, order := OldImages(order, now, began, m.policy.MaxAge)
	var errs []error
	for _, c := range old {
		if err := m.remove(ctx, c, "unused for longer than imageMaximumGCAge"); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("wanted to free images older than %v, encountered errors in image deletion: %w", m.policy.MaxAge, errors.Join(errs...))
	}

	fs, err := m.deps.Fs.ImageFsStats(ctx)
	if err != nil {
		return fmt.Errorf("image filesystem stats: %w", err)
	}
	var capacity, available int64
	if fs.CapacityBytes != nil {
		capacity = int64(*fs.CapacityBytes)
	}
	if fs.AvailableBytes != nil {
		available = int64(*fs.AvailableBytes)
	}
	if capacity == 0 {
		err := errors.New("invalid capacity 0 on image filesystem")
		m.deps.Recorder.NodeEventf(v1.EventTypeWarning, "InvalidDiskCapacity", "%s", err.Error())
		return err
	}
	usage, toFree := Usage(capacity, available, m.policy.HighThresholdPercent, m.policy.LowThresholdPercent)
	if toFree <= 0 {
		return nil
	}
	klog.InfoS("Disk usage on image filesystem is over the high threshold, trying to free bytes down to the low threshold",
		"usage", usage, "highThreshold", m.policy.HighThresholdPercent, "amountToFree", toFree, "lowThreshold", m.policy.LowThresholdPercent)
	freed := int64(0)
	for _, c := range FreeSpace(order, toFree, now, m.policy.MinAge) {
		if err := m.remove(ctx, c, "disk usage over imageGCHighThresholdPercent"); err != nil {
			errs = append(errs, err)
			continue
		}
		freed += c.Size
	}
	if len(errs) > 0 {
		return fmt.Errorf("wanted to free %d bytes, but freed %d bytes space with errors in image deletion: %w", toFree, freed, errors.Join(errs...))
	}
	if freed < toFree {
		msg := fmt.Sprintf("Insufficient free disk space on the node's image filesystem (%d%% of %d bytes used). "+
			"Failed to free sufficient space by deleting unused images (freed %d bytes). "+
			"Investigate disk usage, as it could be used by active images, logs, volumes, or other data.", usage, capacity, freed)
		m.deps.Recorder.NodeEventf(v1.EventTypeWarning, "FreeDiskSpaceFailed", "%s", msg)
		return errors.New(msg)
	}
	return nil
}

// detect lists the images and the images in use, records when each was first detected and last
// used, and returns the unused ones, least recently used first.
func (m *Manager) detect(ctx context.Context) ([]Candidate, time.Time, error) {
	images, err := m.deps.Images.ListImages(ctx, nil)
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("list images: %w", err)
	}
	used, err := m.inUse(ctx)
	if err != nil {
		return nil, time.Time{}, err
	}
	now := m.deps.Clock.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	m.records = Detect(m.records, images, used, now)
	return EvictionOrder(m.records, used), now, nil
}

// DeleteUnusedImages removes every unused image detected longer than imageMinimumGCAge ago,
// least recently used first: upstream's reclaim of the image filesystem under disk pressure,
// which the eviction manager runs before it evicts pods.
func (m *Manager) DeleteUnusedImages(ctx context.Context) error {
	order, now, err := m.detect(ctx)
	if err != nil {
		return err
	}
	var errs []error
	for _, c := range FreeSpace(order, math.MaxInt64, now, m.policy.MinAge) {
		if err := m.remove(ctx, c, "the eviction manager reclaims disk space"); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (m *Manager) remove(ctx context.Context, c Candidate, why string) error {
	klog.InfoS("Removing image to free bytes", "imageID", c.ID, "size", c.Size, "reason", why)
	if err := m.deps.Images.RemoveImage(ctx, &runtimeapi.ImageSpec{Image: c.ID}); err != nil {
		return fmt.Errorf("remove image %s: %w", c.ID, err)
	}
	m.mu.Lock()
	delete(m.records, c.ID)
	m.mu.Unlock()
	return nil
}
