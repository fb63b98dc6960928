package agent

import (
	"context"
	"fmt"
	"sort"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/nodelet/nodelet/internal/container"
	"github.com/nodelet/nodelet/internal/podconfig"
	"github.com/nodelet/nodelet/internal/server"
)

// runtimeLister lists the runtime's pods (runtime.Manager.GetPods).
type runtimeLister interface {
	GetPods(ctx context.Context) ([]*container.Pod, error)
}

// streamingClient is the CRI client's streaming and exec verbs.
type streamingClient interface {
	server.Streaming
	server.Runner
}

// runtimeTargets backs the kubelet API's debugging handlers: the desired pods, the runtime's
// pods and the CRI client's streaming verbs.
type runtimeTargets struct {
	pods   podByName
	lister runtimeLister
	client streamingClient
}

var (
	_ server.Targets          = (*runtimeTargets)(nil)
	_ server.Streaming        = (*runtimeTargets)(nil)
	_ server.Runner           = (*runtimeTargets)(nil)
	_ server.RunningPodLister = (*runtimeTargets)(nil)
)

// runtimePod finds the pod in the runtime by name and namespace, and by UID when given, as
// upstream's findContainer. The desired pod's UID is used when uid is empty, so that a pod
// re-created under the same name is not confused with its predecessor.
func (t *runtimeTargets) runtimePod(ctx context.Context, namespace, name string, uid types.UID) (*container.Pod, *v1.Pod, error) {
	desired, ok := t.pods.ByFullName(name, namespace)
	if !ok {
		return nil, nil, fmt.Errorf("pod %s/%s: %w", namespace, name, server.ErrNotFound)
	}
	// A static pod is known to the API server by its mirror pod's UID: accept it (upstream
	// translates mirror UIDs the same way).
	if uid != "" && uid != desired.UID && !podconfig.IsStaticPod(desired) {
		return nil, nil, fmt.Errorf("pod %s/%s with UID %s: %w", namespace, name, uid, server.ErrNotFound)
	}
	pods, err := t.lister.GetPods(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("list the runtime's pods: %w", err)
	}
	for _, p := range pods {
		if p.ID == desired.UID {
			return p, desired, nil
		}
	}
	return nil, nil, fmt.Errorf("pod %s/%s has no sandbox or container in the runtime: %w", namespace, name, server.ErrNotFound)
}

func (t *runtimeTargets) RunningContainer(ctx context.Context, namespace, pod string, uid types.UID, name string) (server.ContainerTarget, error) {
	p, desired, err := t.runtimePod(ctx, namespace, pod, uid)
	if err != nil {
		return server.ContainerTarget{}, err
	}
	for _, c := range p.Containers {
		if c.Name == name && c.State == container.StateRunning {
			return server.ContainerTarget{ID: c.ID, TTY: specTTY(desired, name)}, nil
		}
	}
	return server.ContainerTarget{}, fmt.Errorf("container %q is not running in pod %s/%s: %w", name, namespace, pod, server.ErrNotFound)
}

// specTTY is the tty setting of the named container (init, sidecar or regular) in the spec.
func specTTY(pod *v1.Pod, name string) bool {
	for _, list := range [][]v1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range list {
			if list[i].Name == name {
				return list[i].TTY
			}
		}
	}
	return false
}

func (t *runtimeTargets) Sandbox(ctx context.Context, namespace, pod string, uid types.UID) (string, error) {
	p, _, err := t.runtimePod(ctx, namespace, pod, uid)
	if err != nil {
		return "", err
	}
	sandboxes := append([]*container.Container(nil), p.Sandboxes...)
	sort.SliceStable(sandboxes, func(i, j int) bool { return sandboxes[i].CreatedAt > sandboxes[j].CreatedAt })
	for _, s := range sandboxes {
		if s.State == container.StateRunning {
			return s.ID, nil
		}
	}
	return "", fmt.Errorf("pod %s/%s has no ready sandbox: %w", namespace, pod, server.ErrNotFound)
}

// RunningPods is upstream's GetRunningPods: pods with a ready sandbox or a running container.
func (t *runtimeTargets) RunningPods(ctx context.Context) ([]*v1.Pod, error) {
	pods, err := t.lister.GetPods(ctx)
	if err != nil {
		return nil, fmt.Errorf("list the runtime's pods: %w", err)
	}
	var out []*v1.Pod
	for _, p := range pods {
		api := &v1.Pod{}
		api.UID, api.Name, api.Namespace = p.ID, p.Name, p.Namespace
		running := false
		for _, s := range p.Sandboxes {
			running = running || s.State == container.StateRunning
		}
		for _, c := range p.Containers {
			if c.State == container.StateRunning {
				running = true
				api.Spec.Containers = append(api.Spec.Containers, v1.Container{Name: c.Name, Image: c.Image})
			}
		}
		if running {
			out = append(out, api)
		}
	}
	return out, nil
}

func (t *runtimeTargets) Exec(ctx context.Context, req *runtimeapi.ExecRequest) (*runtimeapi.ExecResponse, error) {
	return t.client.Exec(ctx, req)
}

func (t *runtimeTargets) Attach(ctx context.Context, req *runtimeapi.AttachRequest) (*runtimeapi.AttachResponse, error) {
	return t.client.Attach(ctx, req)
}

func (t *runtimeTargets) PortForward(ctx context.Context, req *runtimeapi.PortForwardRequest) (*runtimeapi.PortForwardResponse, error) {
	return t.client.PortForward(ctx, req)
}

func (t *runtimeTargets) ExecSync(ctx context.Context, id string, cmd []string, timeout time.Duration) ([]byte, []byte, int32, error) {
	return t.client.ExecSync(ctx, id, cmd, timeout)
}
