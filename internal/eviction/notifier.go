package eviction

import (
	"context"

	"k8s.io/klog/v2"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// notifier wakes the manager when memory usage crosses a memory threshold.
type notifier interface {
	update(summary *statsapi.Summary) error
	description() string
	close()
}

// startNotifiers starts one memory notifier per memory threshold when kernelMemcgNotification
// is on and the host has cgroup v1's memory.usage_in_bytes events (on cgroup v2 there are none:
// the period alone observes memory, as upstream).
func (m *Manager) startNotifiers(ctx context.Context) []notifier {
	if !m.cfg.KernelMemcgNotification {
		return nil
	}
	var out []notifier
	for _, t := range m.cfg.Thresholds {
		if !isMemorySignal(t.Signal) {
			continue
		}
		n, err := newMemcgNotifier(ctx, t, m.cfg.MemoryCgroupRoot, m.cfg.PodsCgroup, m.wake)
		if err != nil {
			klog.InfoS("Eviction manager: kernel memory notifications are unavailable; memory is observed every period only",
				"threshold", t.String(), "err", err)
			continue
		}
		out = append(out, n)
	}
	return out
}
