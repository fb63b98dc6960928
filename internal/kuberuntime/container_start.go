package kuberuntime

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/klog/v2"

	"github.com/nodelet/nodelet/internal/admission"
	"github.com/nodelet/nodelet/internal/container"
	"github.com/nodelet/nodelet/internal/kuberuntime/criconfig"
	"github.com/nodelet/nodelet/internal/status"
)

// podContext is what starting any container of a pod needs.
type podContext struct {
	pod         *v1.Pod
	status      *container.PodStatus
	sandboxID   string
	sandboxCfg  *runtimeapi.PodSandboxConfig
	podIPs      []string
	volumePaths map[string]string
}

// backOffKey is upstream's getStableKey: the pod, the container and its spec hash, so a new
// spec starts with a fresh back-off.
func backOffKey(pod *v1.Pod, c *v1.Container) string {
	return fmt.Sprintf("%s_%s_%s_%s_%x", pod.Name, pod.Namespace, pod.UID, c.Name, container.HashContainer(c))
}

// startSpec is what to start: a regular or init container, or an ephemeral container (whose
// common part c is), with the name of the container whose process namespace it targets.
type startSpec struct {
	c      *v1.Container
	target string // targetContainerName of an ephemeral container
}

func regular(c *v1.Container) startSpec { return startSpec{c: c} }

func ephemeral(ec *v1.EphemeralContainer) startSpec {
	return startSpec{c: (*v1.Container)(&ec.EphemeralContainerCommon), target: ec.TargetContainerName}
}

// targetID is upstream's getTargetID: the runtime ID of the container an ephemeral container
// targets ("" for none), which must exist.
func (s startSpec) targetID(ps *container.PodStatus) (string, error) {
	if s.target == "" {
		return "", nil
	}
	cs := ps.FindContainerStatusByName(s.target)
	if cs == nil {
		return "", fmt.Errorf("unable to find target container %v", s.target)
	}
	return cs.ID, nil
}

// startContainer runs upstream's startContainer: back-off check, image, config, create, start.
func (m *Manager) startContainer(ctx context.Context, pc *podContext, spec startSpec) error {
	pod, c := pc.pod, spec.c
	restartCount := 0
	if last := pc.status.FindContainerStatusByName(c.Name); last != nil {
		restartCount = last.RestartCount + 1
	}
	// The back-off runs from the newest exited instance (upstream's doBackOff), even when a
	// newer instance was left "created" by a failed start.
	for _, cs := range pc.status.ContainerStatusesByName(c.Name) {
		if cs.State == container.StateExited {
			if err := m.checkCrashBackOff(pod, c, cs); err != nil {
				return err
			}
			break
		}
	}
	img, err := m.ensureImage(ctx, pod, c, pc.sandboxCfg)
	if err != nil {
		return err
	}
	var imageUID *int64
	if img.GetUid() != nil {
		v := img.GetUid().GetValue()
		imageUID = &v
	}
	if err := criconfig.VerifyRunAsNonRoot(pod, c, imageUID, img.GetUsername()); err != nil {
		return m.configError(pod, c, err)
	}
	targetID, err := spec.targetID(pc.status)
	if err != nil {
		return m.configError(pod, c, err)
	}
	images, err := m.imageVolumes(ctx, pc, c)
	if err != nil {
		return err
	}
	mounts, err := m.deps.Volumes.Mounts(pod, c, pc.volumePaths, images, restartCount, pc.podIPs)
	if err != nil {
		return m.configError(pod, c, err)
	}
	serviceEnv, err := ServiceEnv(pod, m.deps.Services)
	if err != nil {
		return m.configError(pod, c, err)
	}
	cfg, err := criconfig.Container(pod, c, criconfig.ContainerOptions{
		RestartCount: restartCount, QOS: status.QOSClass(pod), MemoryCapacity: m.cfg.MemoryCapacity, OOMGroup: m.cfg.OOMGroup, Mounts: mounts,
		TargetID: targetID, Seccomp: m.cfg.Seccomp, AppArmor: admission.AppArmorProfile(pod, c), HostMaskedPaths: m.cfg.HostMaskedPaths,
		Identity: criconfig.PodIdentity{NodeName: m.cfg.NodeName, PodIPs: pc.podIPs, HostIPs: m.cfg.HostIPs,
			Allocatable: m.cfg.Allocatable, Objects: m.deps.Objects, ServiceEnv: serviceEnv},
	})
	if err != nil {
		return m.configError(pod, c, err)
	}
	logDir := filepath.Join(pc.sandboxCfg.GetLogDirectory(), c.Name)
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		return m.configError(pod, c, fmt.Errorf("create container log directory %s: %w", logDir, err))
	}
	id, err := m.deps.Containers.CreateContainer(ctx, pc.sandboxID, cfg, pc.sandboxCfg)
	if err != nil {
		m.deps.Recorder.Eventf(pod, v1.EventTypeWarning, "Failed", "Error: %v", err)
		return &ContainerError{Container: c.Name, Reason: ReasonCreateContainerError, Message: err.Error(), Err: err}
	}
	m.deps.Recorder.Eventf(pod, v1.EventTypeNormal, "Created", "Created container: %s", c.Name)
	m.recordActuated(pod, c)
	if err := m.deps.Containers.StartContainer(ctx, id); err != nil {
		m.deps.Recorder.Eventf(pod, v1.EventTypeWarning, "Failed", "Error: %v", err)
		return &ContainerError{Container: c.Name, Reason: ReasonRunContainerError, Message: err.Error(), Err: err}
	}
	m.deps.Recorder.Eventf(pod, v1.EventTypeNormal, "Started", "Started container %s", c.Name)
	klog.V(2).InfoS("Started container", "pod", klog.KObj(pod), "container", c.Name, "containerID", id, "restartCount", restartCount)
	return m.runPostStart(ctx, pc, c, id)
}

// runPostStart runs the container's postStart hook, if any, as upstream's startContainer: the
// sync waits for it (only ctx bounds it); when it fails, the container is killed and the start
// fails with PostStartHookError and the hook's message, so the container restarts per the
// restart policy with the crash back-off. As upstream, the event does not carry the message
// (an exec hook's output may hold secrets); the status and the logs do.
func (m *Manager) runPostStart(ctx context.Context, pc *podContext, c *v1.Container, id string) error {
	if c.Lifecycle == nil || c.Lifecycle.PostStart == nil {
		return nil
	}
	pod := pc.pod
	if m.deps.Hooks == nil {
		klog.InfoS("No lifecycle hook runner: postStart hook not run", "pod", klog.KObj(pod), "container", c.Name)
		return nil
	}
	podIP := ""
	if len(pc.podIPs) > 0 {
		podIP = pc.podIPs[0]
	}
	msg, err := m.deps.Hooks.Run(ctx, pod, c, id, c.Lifecycle.PostStart, podIP)
	if err == nil {
		return nil
	}
	klog.ErrorS(err, "Failed to execute PostStartHook", "pod", klog.KObj(pod), "podUID", pod.UID,
		"container", c.Name, "containerID", id, "message", msg)
	m.deps.Recorder.Eventf(pod, v1.EventTypeWarning, "FailedPostStartHook", "PostStartHook failed")
	if kerr := m.killContainer(ctx, pod, id, c.Name, "FailedPostStartHook", "FailedPostStartHook", nil); kerr != nil {
		klog.ErrorS(kerr, "Failed to kill container", "pod", klog.KObj(pod), "podUID", pod.UID, "container", c.Name, "containerID", id)
	}
	return &ContainerError{Container: c.Name, Reason: ReasonPostStartHookError, Message: msg, Err: err}
}

// checkCrashBackOff is upstream's doBackOff: a container that exited less than its back-off ago
// waits in CrashLoopBackOff; otherwise the back-off grows (10 s, 20 s, 40 s ... 300 s) and
// resets once the container has run for 2 × 300 s.
func (m *Manager) checkCrashBackOff(pod *v1.Pod, c *v1.Container, last *container.Status) error {
	key := backOffKey(pod, c)
	if m.crashBackOff.IsInBackOffSince(key, last.FinishedAt) {
		msg := fmt.Sprintf("back-off %s restarting failed container=%s pod=%s(%s)", m.crashBackOff.Get(key), c.Name, klog.KObj(pod), pod.UID)
		m.deps.Recorder.Eventf(pod, v1.EventTypeWarning, "BackOff", "Back-off restarting failed container %s in pod %s", c.Name, klog.KObj(pod))
		return &ContainerError{Container: c.Name, Reason: ReasonCrashLoopBackOff, Message: msg, Until: last.FinishedAt.Add(m.crashBackOff.Get(key))}
	}
	m.crashBackOff.Next(key, last.FinishedAt)
	m.recordBackOff(pod.UID, key)
	return nil
}

func (m *Manager) configError(pod *v1.Pod, c *v1.Container, err error) error {
	m.deps.Recorder.Eventf(pod, v1.EventTypeWarning, "Failed", "Error: %v", err)
	return &ContainerError{Container: c.Name, Reason: ReasonCreateContainerConfigError, Message: err.Error(), Err: err}
}
