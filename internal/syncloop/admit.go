package syncloop

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
)

// admit runs admission for a pod the node has not seen, as upstream's HandlePodAdditions: the
// pod is checked against the active pods admitted before it (pods arrive sorted by creation
// time). A pod whose worker already exists (a restart re-lists running pods) is admitted again
// by the same rule, so pods that fit keep running. It reports whether the pod may start.
func (d *Dispatcher) admit(pod *v1.Pod) bool {
	// As upstream, a pod that already finished is not admitted again: after a restart a
	// completed Job pod must stay Succeeded even if the node changed meanwhile.
	if d.admission == nil || pod.Status.Phase == v1.PodSucceeded || pod.Status.Phase == v1.PodFailed {
		return true
	}
	ok, reason, message := d.admission.Admit(pod, d.activePods(pod.UID))
	if ok {
		return true
	}
	d.mu.Lock()
	d.rejected[pod.UID] = true
	d.mu.Unlock()
	klog.InfoS("Pod rejected by admission; it will not run on this node", "pod", klog.KObj(pod), "podUID", pod.UID,
		"reason", reason, "message", message)
	d.admission.Reject(pod, reason, message)
	return false
}

// ActivePods are the desired pods that were admitted and have not terminated: the pods the
// eviction manager may evict (upstream's GetActivePods).
func (d *Dispatcher) ActivePods() []*v1.Pod { return d.activePods("") }

// activePods are the desired pods that were admitted and have not terminated, except self.
func (d *Dispatcher) activePods(self types.UID) []*v1.Pod {
	var out []*v1.Pod
	for _, p := range d.desired.Pods() {
		if p.UID == self || d.isRejected(p.UID) || d.workers.IsPodKnownTerminated(p.UID) {
			continue
		}
		if p.Status.Phase == v1.PodSucceeded || p.Status.Phase == v1.PodFailed {
			continue
		}
		out = append(out, p)
	}
	return out
}

func (d *Dispatcher) isRejected(uid types.UID) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.rejected[uid]
}
