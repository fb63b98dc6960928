package kuberuntime

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/klog/v2"

	"github.com/nodelet/nodelet/internal/container"
	"github.com/nodelet/nodelet/internal/crilog"
)

// GetPodStatus asks the runtime about one pod: its sandboxes (newest first, with their network
// status) and containers (newest first, with states, exit codes, reasons and termination
// messages). The pod cache stores it with the time taken before the first call.
func (m *Manager) GetPodStatus(ctx context.Context, uid types.UID, name, namespace string) (*container.PodStatus, error) {
	byUID := map[string]string{container.PodUIDLabel: string(uid)}
	sandboxes, err := m.deps.Sandboxes.ListPodSandbox(ctx, &runtimeapi.PodSandboxFilter{LabelSelector: byUID})
	if err != nil {
		return nil, fmt.Errorf("list sandboxes of pod %s/%s: %w", namespace, name, err)
	}
	sort.Slice(sandboxes, func(i, j int) bool { return sandboxes[i].CreatedAt > sandboxes[j].CreatedAt })
	ps := &container.PodStatus{ID: uid, Name: name, Namespace: namespace}
	for i, s := range sandboxes {
		resp, err := m.deps.Sandboxes.PodSandboxStatus(ctx, s.Id, false)
		if err != nil {
			if isNotFound(err) {
				continue // removed since the listing
			}
			return nil, fmt.Errorf("status of sandbox %s of pod %s/%s: %w", s.Id, namespace, name, err)
		}
		st := resp.GetStatus()
		ps.SandboxStatuses = append(ps.SandboxStatuses, st)
		if i == 0 && st.GetState() == runtimeapi.PodSandboxState_SANDBOX_READY {
			ps.IPs = sandboxIPs(st)
		}
	}
	containers, err := m.deps.Reader.ListContainers(ctx, &runtimeapi.ContainerFilter{LabelSelector: byUID})
	if err != nil {
		return nil, fmt.Errorf("list containers of pod %s/%s: %w", namespace, name, err)
	}
	sort.Slice(containers, func(i, j int) bool { return containers[i].CreatedAt > containers[j].CreatedAt })
	// The active sandbox is the newest one if it is ready (upstream's): a dead sandbox has no
	// active containers, so its init containers run again in the next one.
	newestSandbox := ""
	if len(ps.SandboxStatuses) > 0 && ps.SandboxStatuses[0].GetState() == runtimeapi.PodSandboxState_SANDBOX_READY {
		newestSandbox = ps.SandboxStatuses[0].GetId()
	}
	actuated := m.actuated(uid) // once per pod: what each container was told
	for _, c := range containers {
		resp, err := m.deps.Reader.ContainerStatus(ctx, c.Id, false)
		if err != nil {
			if isNotFound(err) {
				continue
			}
			return nil, fmt.Errorf("status of container %s of pod %s/%s: %w", c.Id, namespace, name, err)
		}
		cs := m.toStatus(uid, c, resp.GetStatus(), actuated)
		ps.ContainerStatuses = append(ps.ContainerStatuses, cs)
		if newestSandbox != "" && cs.SandboxID == newestSandbox {
			ps.ActiveContainerStatuses = append(ps.ActiveContainerStatuses, cs)
		}
	}
	return ps, nil
}

func (m *Manager) toStatus(uid types.UID, c *runtimeapi.Container, s *runtimeapi.ContainerStatus, actuated map[string]v1.ResourceRequirements) *container.Status {
	annotations := s.GetAnnotations()
	if len(annotations) == 0 {
		annotations = c.Annotations
	}
	cs := &container.Status{
		ID: s.GetId(), SandboxID: c.PodSandboxId, Name: c.Labels[container.ContainerNameLabel],
		State:     container.StateFromCRI(s.GetState()),
		CreatedAt: nanos(s.GetCreatedAt()), StartedAt: nanos(s.GetStartedAt()), FinishedAt: nanos(s.GetFinishedAt()),
		ExitCode: int(s.GetExitCode()), Image: c.GetImage().GetUserSpecifiedImage(), ImageRef: s.GetImageRef(),
		Hash: hashOf(annotations), RestartCount: restartCountOf(annotations),
		Reason: s.GetReason(), Message: s.GetMessage(), Resources: container.ResourcesFromCRI(s.GetResources()),
	}
	if interruptedStart(cs) {
		// Not the container's failure: its start was cut off (nodelet killed while it waited
		// for StartContainer, which the runtime then cancels). It never ran, so it is started
		// again as one that was only created; the dead instance is garbage collected.
		klog.V(2).InfoS("A container's start was interrupted; it is started again", "podUID", uid, "container", cs.Name,
			"containerID", cs.ID, "message", cs.Message)
		cs.State, cs.ExitCode, cs.Reason, cs.Message, cs.FinishedAt = container.StateCreated, 0, "", "", time.Time{}
	}
	fillFromActuated(actuated, cs)
	if cs.Image == "" {
		cs.Image = s.GetImage().GetImage()
	}
	if cs.State == container.StateExited {
		m.addTerminationMessage(uid, cs, annotations[container.ContainerTerminationMessagePolicyAnnotation], s.GetLogPath())
	}
	return cs
}

// interruptedStart reports (pure) whether an exited container never ran because its start was
// cancelled: containerd marks a container whose task creation was cancelled exited with 128
// and "failed to create containerd task: ...: context canceled".
func interruptedStart(cs *container.Status) bool {
	return cs.State == container.StateExited && cs.StartedAt.IsZero() && cs.ExitCode == 128 &&
		strings.Contains(cs.Message, "context canceled")
}

// The end of the log that FallbackToLogsOnError makes the termination message: upstream's
// kubecontainer.MaxContainerTerminationMessageLogLines and MaxContainerTerminationMessageLogLength.
const (
	terminationMessageLogLines  = 80
	terminationMessageLogLength = 2048
)

// addTerminationMessage sets the message of an exited container as upstream's
// convertToKubeContainerStatus does. The runtime does not carry the termination message:
// it is the file nodelet mounted, or, with terminationMessagePolicy FallbackToLogsOnError,
// for a container that failed (exit code not 0, and it did run: the reason is not
// ContainerCannotRun) and left no message in the file (empty or absent), the end of its log
// (the last 80 lines, at most 2048 bytes, upstream's readLastStringFromContainerLogs).
//
// What it finds is appended to the runtime's own message after ": ", as upstream does.
func (m *Manager) addTerminationMessage(uid types.UID, cs *container.Status, policy, logPath string) {
	fallbackToLogs := policy == string(v1.TerminationMessageFallbackToLogsOnError) &&
		cs.ExitCode != 0 && cs.Reason != "ContainerCannotRun"
	msg, err := m.deps.Volumes.ReadTerminationMessage(uid, cs.Name, cs.RestartCount)
	if err != nil {
		klog.V(4).InfoS("No termination message", "podUID", uid, "container", cs.Name, "err", err)
	}
	// As upstream: fall back when the file is empty or absent, not when it cannot be read (msg
	// then says why: "Error on reading termination log ...").
	checkLogs := fallbackToLogs && msg == "" && (err == nil || errors.Is(err, fs.ErrNotExist))
	if checkLogs {
		tail, err := crilog.Tail(logPath, terminationMessageLogLines, terminationMessageLogLength)
		if err != nil {
			klog.V(4).InfoS("Cannot read the end of the log for the termination message", "podUID", uid, "container", cs.Name, "path", logPath, "err", err)
			tail = fmt.Sprintf("Error on reading termination message from logs: %v", err)
		}
		msg = tail
	}
	if msg != "" {
		if cs.Message != "" {
			cs.Message += ": "
		}
		cs.Message += msg
	}
}

func sandboxIPs(st *runtimeapi.PodSandboxStatus) []string {
	n := st.GetNetwork()
	if n == nil || n.GetIp() == "" {
		return nil
	}
	ips := []string{n.GetIp()}
	for _, ip := range n.GetAdditionalIps() {
		ips = append(ips, ip.GetIp())
	}
	return ips
}

func nanos(ns int64) time.Time {
	if ns == 0 {
		return time.Time{}
	}
	return time.Unix(0, ns)
}

// fillFromActuated completes what the runtime reports of a container's resources with the
// actuated record, as upstream's toKubeContainerStatus: the memory request (which no cgroup
// holds), or everything when the runtime reports nothing.
func fillFromActuated(actuated map[string]v1.ResourceRequirements, cs *container.Status) {
	if cs.Resources != nil && cs.Resources.MemoryRequest != nil {
		return
	}
	a, ok := actuated[cs.Name]
	if !ok {
		return
	}
	if cs.Resources == nil {
		cs.Resources = &container.Resources{CPURequest: nonZero(a.Requests.Cpu()), CPULimit: nonZero(a.Limits.Cpu()),
			MemoryRequest: nonZero(a.Requests.Memory()), MemoryLimit: nonZero(a.Limits.Memory())}
		return
	}
	if q := a.Requests[v1.ResourceMemory]; !q.IsZero() {
		cs.Resources.MemoryRequest = &q
	}
}

func nonZero(q *resource.Quantity) *resource.Quantity {
	if q.IsZero() {
		return nil
	}
	return q
}
