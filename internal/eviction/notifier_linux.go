//go:build linux

package eviction

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"

	"golang.org/x/sys/unix"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/klog/v2"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// memcgNotifier is upstream's linuxMemoryThresholdNotifier: a cgroup v1 memory threshold event
// (cgroup.event_control with an eventfd on memory.usage_in_bytes) set at capacity minus the
// eviction threshold plus the inactive file pages, so that the kernel wakes the manager when the
// working set crosses the threshold. The threshold is re-armed at each update.
type memcgNotifier struct {
	threshold Threshold
	dir       string
	wake      chan<- struct{}
	ctx       context.Context

	mu   sync.Mutex
	stop func()
}

func newMemcgNotifier(ctx context.Context, t Threshold, root, pods string, wake chan<- struct{}) (*memcgNotifier, error) {
	dir := root
	if t.Signal == SignalAllocatableMemoryAvailable {
		dir = filepath.Join(root, pods)
	}
	if err := unix.Access(filepath.Join(dir, "cgroup.event_control"), unix.W_OK); err != nil {
		return nil, fmt.Errorf("%s: no cgroup v1 memory events: %w", dir, err)
	}
	return &memcgNotifier{threshold: t, dir: dir, wake: wake, ctx: ctx}, nil
}

func (n *memcgNotifier) description() string {
	return fmt.Sprintf("%s memcg notifier on %s", n.threshold.Signal, n.dir)
}

func (n *memcgNotifier) update(summary *statsapi.Summary) error {
	mem := summary.Node.Memory
	if n.threshold.Signal == SignalAllocatableMemoryAvailable {
		mem = nil
		for i := range summary.Node.SystemContainers {
			if c := &summary.Node.SystemContainers[i]; c.Name == statsapi.SystemContainerPods {
				mem = c.Memory
			}
		}
	}
	if mem == nil || mem.UsageBytes == nil || mem.WorkingSetBytes == nil || mem.AvailableBytes == nil {
		return errors.New("no memory stats for the threshold's cgroup")
	}
	capacity := *resource.NewQuantity(int64(*mem.AvailableBytes+*mem.WorkingSetBytes), resource.BinarySI)
	at := capacity.DeepCopy()
	q := n.threshold.Value.Of(capacity)
	at.Sub(q)
	at.Add(*resource.NewQuantity(int64(*mem.UsageBytes-*mem.WorkingSetBytes), resource.BinarySI))
	stop, err := arm(n.ctx, n.dir, at.Value(), n.wake)
	if err != nil {
		return err
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.stop != nil {
		n.stop()
	}
	n.stop = stop
	klog.V(3).InfoS("Eviction manager: memory threshold notifier armed", "cgroup", n.dir, "usageBytes", at.Value())
	return nil
}

func (n *memcgNotifier) close() {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.stop != nil {
		n.stop()
		n.stop = nil
	}
}

// arm registers a usage threshold event on the cgroup and forwards each event to wake until
// the returned stop is called.
func arm(ctx context.Context, dir string, threshold int64, wake chan<- struct{}) (func(), error) {
	watch, err := unix.Open(filepath.Join(dir, "memory.usage_in_bytes"), unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("open memory.usage_in_bytes: %w", err)
	}
	defer unix.Close(watch) // the kernel holds its own reference once registered
	control, err := unix.Open(filepath.Join(dir, "cgroup.event_control"), unix.O_WRONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("open cgroup.event_control: %w", err)
	}
	defer unix.Close(control)
	efd, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		return nil, fmt.Errorf("eventfd: %w", err)
	}
	if _, err := unix.Write(control, []byte(fmt.Sprintf("%d %d %d", efd, watch, threshold))); err != nil {
		unix.Close(efd)
		return nil, fmt.Errorf("register the threshold in cgroup.event_control: %w", err)
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		defer unix.Close(efd)
		buf := make([]byte, 8)
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			default:
			}
			fds := []unix.PollFd{{Fd: int32(efd), Events: unix.POLLIN}}
			if n, err := unix.Poll(fds, 1000); err != nil && !errors.Is(err, unix.EINTR) {
				klog.ErrorS(err, "Eviction manager: polling the memory threshold eventfd failed; memory is observed every period only")
				return
			} else if n == 0 {
				continue
			}
			if _, err := unix.Read(efd, buf); err != nil {
				continue
			}
			select {
			case wake <- struct{}{}:
			default:
			}
		}
	}()
	var once sync.Once
	return func() { once.Do(func() { close(done); <-finished }) }, nil
}
