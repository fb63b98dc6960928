package kuberuntime

import (
	"context"
	"fmt"
	"sort"
	"strconv"

	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/nodelet/nodelet/internal/container"
)

// GetPods lists every pod the runtime has a sandbox or container for, exited ones included,
// grouped by the io.kubernetes.pod.uid label. Objects without that label are not nodelet's (or
// the kubelet's) and are left out. PLEG diffs these listings.
func (m *Manager) GetPods(ctx context.Context) ([]*container.Pod, error) {
	sandboxes, err := m.deps.Sandboxes.ListPodSandbox(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("list pod sandboxes: %w", err)
	}
	containers, err := m.deps.Reader.ListContainers(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("list containers: %w", err)
	}
	pods := map[types.UID]*container.Pod{}
	get := func(labels map[string]string) *container.Pod {
		uid := types.UID(labels[container.PodUIDLabel])
		if uid == "" {
			return nil
		}
		p := pods[uid]
		if p == nil {
			p = &container.Pod{ID: uid, Name: labels[container.PodNameLabel], Namespace: labels[container.PodNamespaceLabel]}
			pods[uid] = p
		}
		return p
	}
	for _, s := range sandboxes {
		if p := get(s.Labels); p != nil {
			state := container.StateExited
			if s.State == runtimeapi.PodSandboxState_SANDBOX_READY {
				state = container.StateRunning
			}
			p.Sandboxes = append(p.Sandboxes, &container.Container{ID: s.Id, State: state, CreatedAt: s.CreatedAt})
		}
	}
	for _, c := range containers {
		if p := get(c.Labels); p != nil {
			p.Containers = append(p.Containers, &container.Container{ID: c.Id, Name: c.Labels[container.ContainerNameLabel],
				State: container.StateFromCRI(c.State), Hash: hashOf(c.Annotations), Image: c.GetImage().GetImage(), CreatedAt: c.CreatedAt})
		}
	}
	out := make([]*container.Pod, 0, len(pods))
	for _, p := range pods {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

func hashOf(annotations map[string]string) uint64 {
	h, _ := strconv.ParseUint(annotations[container.ContainerHashAnnotation], 16, 64)
	return h
}

func restartCountOf(annotations map[string]string) int {
	n, _ := strconv.Atoi(annotations[container.ContainerRestartCountAnnotation])
	return n
}
