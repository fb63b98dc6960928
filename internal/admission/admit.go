package admission

import (
	"fmt"
	goruntime "runtime"

	v1 "k8s.io/api/core/v1"
	"k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	"github.com/nodelet/nodelet/internal/podconfig"
	"github.com/nodelet/nodelet/internal/status"
)

// Rejection reasons, as upstream's pkg/kubelet/lifecycle/predicate.go spells them.
const (
	InvalidNodeInfo                      = "InvalidNodeInfo"
	PodOSSelectorNodeLabelDoesNotMatch   = "PodOSSelectorNodeLabelDoesNotMatch"
	PodOSNotSupported                    = "PodOSNotSupported"
	SupplementalGroupsPolicyNotSupported = "SupplementalGroupsPolicyNotSupported"

	// InsufficientResourcePrefix + resource name is the reason for a resource that does not fit.
	InsufficientResourcePrefix = "OutOf"
	OutOfCPU                   = "OutOfcpu"
	OutOfMemory                = "OutOfmemory"
	OutOfEphemeralStorage      = "OutOfephemeral-storage"
	OutOfPods                  = "OutOfpods"

	// The scheduler plugins whose failures are the reason (upstream's PredicateName).
	NodeAffinity    = "NodeAffinity"
	NodeName        = "NodeName"
	NodePorts       = "NodePorts"
	TaintToleration = "TaintToleration"
)

// The scheduler plugins' failure descriptions.
const (
	nodeAffinityReason    = "node(s) didn't match Pod's node affinity/selector"
	nodeNameReason        = "node(s) didn't match the requested node name"
	nodePortsReason       = "node(s) didn't have free ports for the requested pod ports"
	taintTolerationReason = "node(s) had taints that the pod didn't tolerate"
)

// Result is upstream's PodAdmitResult.
type Result struct {
	Admit   bool
	Reason  string
	Message string
}

// Admit decides whether pod may run on node next to the pods already admitted, as upstream's
// predicate admit handler does: the pod's kubernetes.io/os label and OS field, the
// SupplementalGroupsPolicy, then the scheduler's general predicates (resources fit, required
// node affinity and nodeSelector, nodeName, host ports) and, except for static pods, the
// node's NoExecute taints. Admitted pods that are terminal (Succeeded or Failed) or are pod
// itself are not counted. Only the first failure is reported. Extended resources the node
// does not know are not checked (cluster-level resources), as upstream.
//
// Unlike upstream, a critical pod that does not fit is not made room for by evicting others;
// and a node affinity failure is not retried with a fresh Node (callers pass the latest one).
func Admit(node *v1.Node, pod *v1.Pod, admitted []*v1.Pod) Result {
	if node == nil {
		return Result{Reason: InvalidNodeInfo, Message: "Kubelet cannot get node info."}
	}
	if osLabel, ok := pod.Labels[v1.LabelOSStable]; ok && osLabel != goruntime.GOOS {
		// Upstream compares with the node's label after forcing it to the node's OS.
		return Result{Reason: PodOSSelectorNodeLabelDoesNotMatch,
			Message: "Failed to admit pod as the `kubernetes.io/os` label doesn't match node label"}
	}
	if pod.Spec.OS != nil && string(pod.Spec.OS.Name) != goruntime.GOOS {
		return Result{Reason: PodOSNotSupported, Message: "Failed to admit pod as the OS field doesn't match node OS"}
	}
	if rejectSupplementalGroupsPolicy(pod, node) {
		return Result{Reason: SupplementalGroupsPolicyNotSupported,
			Message: fmt.Sprintf("SupplementalGroupsPolicy=%s is not supported in this node", v1.SupplementalGroupsPolicyStrict)}
	}

	others := activeOthers(pod, admitted)
	if r, failed := generalFilter(node, withoutMissingExtendedResources(pod, node), others); failed {
		return r
	}
	return Result{Admit: true}
}

// RejectedStatus is the status upstream's rejectPod gives a pod it did not admit.
func RejectedStatus(pod *v1.Pod, reason, message string) v1.PodStatus {
	return v1.PodStatus{
		QOSClass: status.QOSClass(pod),
		Phase:    v1.PodFailed,
		Reason:   reason,
		Message:  "Pod was rejected: " + message,
	}
}

// generalFilter runs the checks in upstream's order and returns the first failure.
func generalFilter(node *v1.Node, pod *v1.Pod, others []*v1.Pod) (Result, bool) {
	if insufficient := fits(pod, node, others); len(insufficient) > 0 {
		return insufficient[0].result(), true
	}
	if matches, _ := nodeaffinity.GetRequiredNodeAffinity(pod).Match(node); !matches {
		return predicateFailure(NodeAffinity, nodeAffinityReason), true
	}
	if pod.Spec.NodeName != "" && pod.Spec.NodeName != node.Name {
		return predicateFailure(NodeName, nodeNameReason), true
	}
	if !portsFit(pod, others) {
		return predicateFailure(NodePorts, nodePortsReason), true
	}
	if !podconfig.IsStaticPod(pod) {
		_, untolerated := corev1.FindMatchingUntoleratedTaint(klog.Background(), node.Spec.Taints, pod.Spec.Tolerations,
			func(t *v1.Taint) bool { return t.Effect == v1.TaintEffectNoExecute }, false)
		if untolerated {
			return predicateFailure(TaintToleration, taintTolerationReason), true
		}
	}
	return Result{}, false
}

// predicateFailure is upstream's PredicateFailureError as a result.
func predicateFailure(name, desc string) Result {
	return Result{Reason: name, Message: fmt.Sprintf("Predicate %s failed: %s", name, desc)}
}

// activeOthers are the admitted pods that count: not terminal and not pod itself.
func activeOthers(pod *v1.Pod, admitted []*v1.Pod) []*v1.Pod {
	out := make([]*v1.Pod, 0, len(admitted))
	for _, p := range admitted {
		if p == nil || p.Status.Phase == v1.PodSucceeded || p.Status.Phase == v1.PodFailed {
			continue
		}
		if pod.UID != "" && p.UID == pod.UID {
			continue
		}
		out = append(out, p)
	}
	return out
}

// rejectSupplementalGroupsPolicy is upstream's (the feature is GA): a pod asking for the
// Strict policy needs a node that reports supporting it.
func rejectSupplementalGroupsPolicy(pod *v1.Pod, node *v1.Node) bool {
	sc := pod.Spec.SecurityContext
	if sc == nil || sc.SupplementalGroupsPolicy == nil || *sc.SupplementalGroupsPolicy != v1.SupplementalGroupsPolicyStrict {
		return false
	}
	return node.Status.Features == nil || !ptr.Deref(node.Status.Features.SupplementalGroupsPolicy, false)
}
