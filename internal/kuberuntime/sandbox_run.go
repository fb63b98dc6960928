package kuberuntime

import (
	"context"
	"fmt"
	"os"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/klog/v2"

	"github.com/nodelet/nodelet/internal/cgroups"
	"github.com/nodelet/nodelet/internal/kuberuntime/criconfig"
)

// sandboxConfig builds the pod's sandbox config for an attempt.
func (m *Manager) sandboxConfig(pod *v1.Pod, attempt uint32) (*runtimeapi.PodSandboxConfig, error) {
	dns, warning := criconfig.DNSConfig(pod, m.cfg.HostResolv, m.cfg.ClusterDNS)
	if warning != "" {
		klog.InfoS("DNS: "+warning, "pod", klog.KObj(pod))
		m.deps.Recorder.Eventf(pod, v1.EventTypeWarning, "MissingClusterDNS", "%s", warning)
	}
	cfg, err := criconfig.Sandbox(pod, criconfig.SandboxOptions{
		Attempt: attempt, PodLogsDir: m.cfg.PodLogsDir, CgroupParent: m.cgroupNames().Literal(cgroups.PodCgroup(m.cfg.CgroupRoot, pod)), DNS: dns,
	})
	if err != nil {
		return nil, fmt.Errorf("sandbox config of pod %s: %w", klog.KObj(pod), err)
	}
	return cfg, nil
}

// QoSUpdater sets the QoS cgroups from the active pods (cgroups.QoSManager).
type QoSUpdater interface {
	Update() error
}

// PodCgroups creates a cgroup where missing and sets its resources, and removes one through
// the systemd driver (cgroups.Manager). Names are in cgroupfs form (cgroups.PodCgroup).
type PodCgroups interface {
	Set(name string, r cgroups.Resources) error
	Destroy(name string) error
}

// CgroupNames is the cgroup driver's naming (cgroups.Layout).
type CgroupNames interface {
	// Literal is the driver's name of a cgroup (cgroupfs form in): the CRI cgroup_parent, the
	// path under each cgroup hierarchy.
	Literal(name string) string
	// PodUID is the UID of a pod cgroup's directory name.
	PodUID(dir string) (types.UID, bool)
	// Systemd says the cgroups are systemd's units, removed through it.
	Systemd() bool
}

// cgroupNames is Deps.CgroupNames, the cgroupfs driver's without it.
func (m *Manager) cgroupNames() CgroupNames {
	if m.deps.CgroupNames != nil {
		return m.deps.CgroupNames
	}
	return cgroups.NewLayout(m.cfg.CgroupRoot, cgroups.DriverCgroupfs)
}

// createSandbox runs a new sandbox and returns its ID, config and IPs.
func (m *Manager) createSandbox(ctx context.Context, pod *v1.Pod, attempt uint32) (string, *runtimeapi.PodSandboxConfig, []string, error) {
	cfg, err := m.sandboxConfig(pod, attempt)
	if err != nil {
		return "", nil, nil, err
	}
	if err := os.MkdirAll(cfg.LogDirectory, 0o755); err != nil {
		return "", nil, nil, fmt.Errorf("create pod log directory %s: %w", cfg.LogDirectory, err)
	}
	handler, err := m.runtimeHandler(pod)
	if err != nil {
		m.deps.Recorder.Eventf(pod, v1.EventTypeWarning, "FailedCreatePodSandBox", "Failed to create pod sandbox: %v", err)
		return "", nil, nil, fmt.Errorf("create sandbox for pod %s: %w", klog.KObj(pod), err)
	}
	if handler != "" {
		klog.V(2).InfoS("Running pod with runtime handler", "pod", klog.KObj(pod), "runtimeHandler", handler)
	}
	if m.deps.QoS != nil {
		if err := m.deps.QoS.Update(); err != nil {
			// As upstream: the pod still starts; the periodic update retries.
			klog.ErrorS(err, "Failed to update the QoS cgroups before a new sandbox; the periodic update retries", "pod", klog.KObj(pod))
		}
	}
	if m.deps.PodCgroups != nil {
		// As upstream (pcm.EnsureExists): the pod does not start without its cgroup.
		r := cgroups.Pod(pod)
		if limit := m.cfg.PodPidsLimit; limit > 0 {
			r.PidsLimit = &limit
		}
		if err := m.deps.PodCgroups.Set(cgroups.PodCgroup(m.cfg.CgroupRoot, pod), r); err != nil {
			m.deps.Recorder.Eventf(pod, v1.EventTypeWarning, "FailedToCreatePodContainer", "unable to ensure pod container exists: %v", err)
			return "", nil, nil, fmt.Errorf("failed to ensure that the pod: %v cgroups exist and are correctly applied: %w", pod.UID, err)
		}
	}
	id, err := m.deps.Sandboxes.RunPodSandbox(ctx, cfg, handler)
	if err != nil {
		m.deps.Recorder.Eventf(pod, v1.EventTypeWarning, "FailedCreatePodSandBox", "Failed to create pod sandbox: %v", err)
		return "", nil, nil, fmt.Errorf("create sandbox for pod %s: %w", klog.KObj(pod), err)
	}
	resp, err := m.deps.Sandboxes.PodSandboxStatus(ctx, id, false)
	if err != nil {
		return "", nil, nil, fmt.Errorf("status of new sandbox %s of pod %s: %w", id, klog.KObj(pod), err)
	}
	ips := sandboxIPs(resp.GetStatus())
	klog.V(2).InfoS("Created pod sandbox", "pod", klog.KObj(pod), "sandbox", id, "ips", ips, "attempt", attempt)
	return id, cfg, ips, nil
}

// runtimeHandler is the CRI runtime handler of the pod's RuntimeClass, "" (the runtime's
// default) for none. Without a resolver (standalone mode) a pod that names a class is an error:
// admission refuses such pods, so this only guards against running one with the wrong handler.
func (m *Manager) runtimeHandler(pod *v1.Pod) (string, error) {
	name := pod.Spec.RuntimeClassName
	if name == nil || *name == "" {
		return "", nil
	}
	if m.deps.RuntimeClasses == nil {
		return "", fmt.Errorf("RuntimeClass %q: nodelet has no API server to read RuntimeClasses from", *name)
	}
	return m.deps.RuntimeClasses.LookupRuntimeHandler(name)
}
