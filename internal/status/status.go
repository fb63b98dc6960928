package status

import (
	"net"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	netutils "k8s.io/utils/net"

	"github.com/nodelet/nodelet/internal/container"
	"github.com/nodelet/nodelet/internal/prober/probeview"
)

// Reasons and messages, spelled as upstream spells them.
const (
	ReasonContainerCreating        = "ContainerCreating"
	ReasonPodInitializing          = "PodInitializing"
	ReasonContainerStatusUnknown   = "ContainerStatusUnknown"
	ReasonCompleted                = "Completed"
	ReasonError                    = "Error"
	ReasonUnknownContainerStatuses = "UnknownContainerStatuses"
	ReasonPodCompleted             = "PodCompleted"
	ReasonPodFailed                = "PodFailed"
	ReasonContainersNotReady       = "ContainersNotReady"
	ReasonContainersNotInitialized = "ContainersNotInitialized"
	ReasonReadinessGatesNotReady   = "ReadinessGatesNotReady"
	ReasonPodSandboxNotReady       = "PodSandboxNotReady"
	ReasonDeadlineExceeded         = "DeadlineExceeded"

	MessageDeadlineExceeded = "Pod was active on the node longer than the specified deadline"

	// DefaultRuntimeName is the containerID scheme when Input.RuntimeName is empty.
	DefaultRuntimeName = "containerd"

	// maxPodTerminationMessageLength is upstream's MaxPodTerminationMessageLogLength: the
	// termination messages of all of a pod's containers share it equally.
	maxPodTerminationMessageLength = 1024 * 12
)

// WaitingReason is why the last sync could not start a container (upstream's reasonCache
// entry), e.g. {"CrashLoopBackOff", "back-off 10s restarting failed container=app pod=..."}.
type WaitingReason struct{ Reason, Message string }

// Input is everything Generate needs.
type Input struct {
	// Pod is the desired pod. Its Status is the status the API holds (for static pods usually
	// empty); as upstream, a terminal phase there is never left, its non-kubelet conditions are
	// kept, and it stands in for Old when Old is empty.
	Pod *v1.Pod
	// Runtime is what the runtime says; nil or empty before the first sandbox exists.
	Runtime *container.PodStatus
	// Old is the previous status Generate returned for this pod (zero on the first sync).
	Old v1.PodStatus
	// Waiting holds the reasons the last sync recorded per container name.
	Waiting map[string]WaitingReason
	// Probes are the prober's results for the pod's current container instances. A running,
	// started container with no readiness probe is ready; with one and no true Ready result it
	// is not. With no Started result, a running container is started if its previous status
	// said so or it has no startup probe. Upstream keys results by container ID: the caller
	// must drop a container's results when it restarts (prober.Manager.Results does).
	Probes probeview.View
	// HostIPs are the node's IPs, primary first (at most two are reported).
	HostIPs []string
	// PodIsTerminal says the pod worker decided the pod is finished (syncTerminatedPod).
	PodIsTerminal bool
	// RuntimeName is the containerID scheme; DefaultRuntimeName when empty.
	RuntimeName string
	// SupportsRecursiveReadOnly says the pod's runtime handler supports recursive read-only
	// mounts (volumeMounts[].recursiveReadOnly of the status).
	SupportsRecursiveReadOnly bool
	// ResizeConditions are the pod's PodResizePending and PodResizeInProgress conditions
	// (internal/allocation), with their own observedGeneration.
	ResizeConditions []v1.PodCondition
	// Now is the time of this generation.
	Now time.Time
}

// Generate computes the API status of in.Pod. It never modifies its input.
func Generate(in Input) v1.PodStatus {
	pod := in.Pod
	rt := in.Runtime
	if rt == nil {
		rt = &container.PodStatus{}
	}
	// As upstream: the status manager's copy, else the API's.
	old := in.Old.DeepCopy()
	if isEmpty(old) {
		old = pod.Status.DeepCopy()
	}
	apiStatus := pod.Status.DeepCopy()

	var s v1.PodStatus
	for _, ip := range sortPodIPs(runtimePodIPs(rt), in.HostIPs) {
		s.PodIPs = append(s.PodIPs, v1.PodIP{IP: ip})
	}
	if len(s.PodIPs) > 0 {
		s.PodIP = s.PodIPs[0].IP
	}
	s.QOSClass = QOSClass(pod)

	g := newGenerator(in, rt)
	hasInit := len(pod.Spec.InitContainers) > 0
	s.ContainerStatuses = g.containerStatuses(old.ContainerStatuses, pod.Spec.Containers, hasInit, false)
	s.InitContainerStatuses = g.containerStatuses(old.InitContainerStatuses, pod.Spec.InitContainers, hasInit, true)
	var ephemeral []v1.Container
	for i := range pod.Spec.EphemeralContainers {
		ephemeral = append(ephemeral, v1.Container(pod.Spec.EphemeralContainers[i].EphemeralContainerCommon))
	}
	s.EphemeralContainerStatuses = g.containerStatuses(old.EphemeralContainerStatuses, ephemeral, hasInit, false)

	all := append(append([]v1.ContainerStatus{}, s.ContainerStatuses...), s.InitContainerStatuses...)
	s.Phase = phase(pod, all, in.PodIsTerminal, g.anyActiveRegularContainer())

	// Three-way merge: a terminal phase, once reported, stays.
	if !IsPhaseTerminal(s.Phase) {
		switch {
		case IsPhaseTerminal(old.Phase):
			s.Phase = old.Phase
		case IsPhaseTerminal(apiStatus.Phase):
			s.Phase = apiStatus.Phase
		}
	}
	if s.Phase == old.Phase {
		s.Reason, s.Message = old.Reason, old.Message
		if s.Reason == "" {
			s.Reason = apiStatus.Reason
		}
		if s.Message == "" {
			s.Message = apiStatus.Message
		}
	}
	if PastActiveDeadline(pod, *old, in.Now) {
		s.Phase, s.Reason, s.Message = v1.PodFailed, ReasonDeadlineExceeded, MessageDeadlineExceeded
	}
	if IsPhaseTerminal(apiStatus.Phase) {
		s.Phase = apiStatus.Phase
	}

	g.applyProbeResults(&s)

	s.Conditions = append(conditions(pod, old, apiStatus, rt, &s), in.ResizeConditions...)

	if len(in.HostIPs) > 0 {
		s.HostIP = in.HostIPs[0]
		s.HostIPs = []v1.HostIP{{IP: s.HostIP}}
		if len(in.HostIPs) > 1 {
			s.HostIPs = append(s.HostIPs, v1.HostIP{IP: in.HostIPs[1]})
		}
		// Host-network pods inherit the node's IPs.
		if pod.Spec.HostNetwork {
			if s.PodIP == "" {
				s.PodIP = in.HostIPs[0]
				s.PodIPs = []v1.PodIP{{IP: s.PodIP}}
			}
			if len(in.HostIPs) > 1 && len(s.PodIPs) == 1 &&
				netutils.IPFamilyOfString(s.PodIPs[0].IP) != netutils.IPFamilyOfString(in.HostIPs[1]) {
				s.PodIPs = append(s.PodIPs, v1.PodIP{IP: in.HostIPs[1]})
			}
		}
	}

	// What upstream's status manager adds on SetPodStatus.
	s.ObservedGeneration = max(pod.Generation, old.ObservedGeneration)
	for _, t := range []v1.PodConditionType{v1.ContainersReady, v1.PodReady, v1.PodInitialized,
		v1.PodReadyToStartContainers, v1.PodScheduled, v1.DisruptionTarget} {
		updateLastTransitionTime(&s, old, t, in.Now)
	}
	if old.StartTime != nil && !old.StartTime.IsZero() {
		s.StartTime = old.StartTime.DeepCopy()
	} else {
		now := metav1.NewTime(in.Now)
		s.StartTime = &now
	}
	normalize(pod, &s)
	return s
}

// isEmpty says no status was ever generated into s.
func isEmpty(s *v1.PodStatus) bool {
	return s.Phase == "" && len(s.Conditions) == 0 && s.StartTime == nil &&
		len(s.ContainerStatuses) == 0 && len(s.InitContainerStatuses) == 0
}

// IsPhaseTerminal says the phase is Succeeded or Failed.
func IsPhaseTerminal(p v1.PodPhase) bool {
	return p == v1.PodSucceeded || p == v1.PodFailed
}

// IsTerminal says the status is terminal: its phase is Succeeded or Failed.
func IsTerminal(s v1.PodStatus) bool { return IsPhaseTerminal(s.Phase) }

// PastActiveDeadline says the pod has an activeDeadlineSeconds and has been active on the node
// (since the start time of status) at least that long: upstream's activeDeadlineHandler, which
// fails the pod with DeadlineExceeded.
func PastActiveDeadline(pod *v1.Pod, status v1.PodStatus, now time.Time) bool {
	if pod.Spec.ActiveDeadlineSeconds == nil || status.StartTime.IsZero() {
		return false
	}
	return now.Sub(status.StartTime.Time) >= time.Duration(*pod.Spec.ActiveDeadlineSeconds)*time.Second
}

// runtimePodIPs returns the IPs of the newest sandbox if it is ready (upstream's
// determinePodSandboxIPs), or rt.IPs when the view carries no sandbox statuses.
func runtimePodIPs(rt *container.PodStatus) []string {
	if len(rt.SandboxStatuses) == 0 {
		return rt.IPs
	}
	sb := rt.SandboxStatuses[0]
	if sb.GetState() != runtimeapi.PodSandboxState_SANDBOX_READY || sb.GetNetwork() == nil {
		return nil
	}
	var ips []string
	if ip := sb.Network.Ip; ip != "" {
		if netutils.ParseIPSloppy(ip) == nil {
			return nil
		}
		ips = append(ips, ip)
	}
	for _, ip := range sb.Network.AdditionalIps {
		if netutils.ParseIPSloppy(ip.GetIp()) == nil {
			return nil
		}
		ips = append(ips, ip.GetIp())
	}
	return ips
}

// sortPodIPs keeps the first IP of the node's primary family, then the first of the other
// family, re-stringified (upstream's sortPodIPs; the node's family is that of hostIPs[0], IPv4
// when unknown).
func sortPodIPs(podIPs, hostIPs []string) []string {
	primary, secondary := netutils.IsIPv4, netutils.IsIPv6
	if len(hostIPs) > 0 && netutils.IsIPv6String(hostIPs[0]) {
		primary, secondary = netutils.IsIPv6, netutils.IsIPv4
	}
	var out []string
	for _, family := range []func(net.IP) bool{primary, secondary} {
		for _, s := range podIPs {
			if ip := netutils.ParseIPSloppy(s); family(ip) {
				out = append(out, ip.String())
				break
			}
		}
	}
	return out
}

// updateLastTransitionTime keeps the old condition's transition time while its status holds.
func updateLastTransitionTime(s, old *v1.PodStatus, t v1.PodConditionType, now time.Time) {
	c := findCondition(s.Conditions, t)
	if c == nil {
		return
	}
	c.LastTransitionTime = metav1.NewTime(now)
	if o := findCondition(old.Conditions, t); o != nil && o.Status == c.Status {
		c.LastTransitionTime = o.LastTransitionTime
	}
}

func findCondition(cs []v1.PodCondition, t v1.PodConditionType) *v1.PodCondition {
	for i := range cs {
		if cs[i].Type == t {
			return &cs[i]
		}
	}
	return nil
}

// normalize is upstream's normalizeStatus: timestamps at second precision (what the API
// server stores, so that comparing with a stored status works) and termination messages capped
// to the pod's share.
func normalize(pod *v1.Pod, s *v1.PodStatus) {
	perStatus := maxPodTerminationMessageLength
	if n := len(pod.Spec.Containers) + len(pod.Spec.InitContainers) + len(pod.Spec.EphemeralContainers); n > 0 {
		perStatus /= n
	}
	ts := func(t *metav1.Time) { *t = t.Rfc3339Copy() }
	state := func(c *v1.ContainerState) {
		if c.Running != nil {
			ts(&c.Running.StartedAt)
		}
		if c.Terminated != nil {
			ts(&c.Terminated.StartedAt)
			ts(&c.Terminated.FinishedAt)
			if len(c.Terminated.Message) > perStatus {
				c.Terminated.Message = c.Terminated.Message[:perStatus]
			}
		}
	}
	if s.StartTime != nil {
		ts(s.StartTime)
	}
	for i := range s.Conditions {
		ts(&s.Conditions[i].LastProbeTime)
		ts(&s.Conditions[i].LastTransitionTime)
	}
	for _, list := range [][]v1.ContainerStatus{s.ContainerStatuses, s.InitContainerStatuses, s.EphemeralContainerStatuses} {
		for i := range list {
			state(&list[i].State)
			state(&list[i].LastTerminationState)
		}
	}
}
