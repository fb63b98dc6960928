package agent

import (
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nodelet/nodelet/internal/podworkers"
	"github.com/nodelet/nodelet/internal/server"
)

// podList is what GET /pods lists: the desired pods with their statuses, and the pods no
// source wants any more that are still terminating (a removed static pod), marked with a
// deletionTimestamp so that `nodelet get pods` shows them as Terminating until they stop.
type podList struct {
	desired interface {
		Pods() []*v1.Pod
		GetPodStatus(uid types.UID) (v1.PodStatus, bool)
	}
	workers interface {
		TerminatingPods() []podworkers.Terminating
	}
}

var _ server.PodSource = podList{}

func (l podList) Pods() []*v1.Pod {
	return withTerminating(l.desired.Pods(), l.workers.TerminatingPods(), l.desired.GetPodStatus)
}

// withTerminating adds to pods (pure) each terminating pod they lack, with its last status,
// deletionTimestamp the time its termination was requested and its grace period.
func withTerminating(pods []*v1.Pod, terminating []podworkers.Terminating, status func(types.UID) (v1.PodStatus, bool)) []*v1.Pod {
	have := make(map[types.UID]bool, len(pods))
	for _, p := range pods {
		have[p.UID] = true
	}
	for _, t := range terminating {
		if have[t.Pod.UID] {
			continue
		}
		p := t.Pod.DeepCopy()
		if p.DeletionTimestamp == nil {
			since := metav1.NewTime(t.Since)
			grace := t.GracePeriod
			p.DeletionTimestamp, p.DeletionGracePeriodSeconds = &since, &grace
		}
		if st, ok := status(p.UID); ok {
			p.Status = st
		}
		pods = append(pods, p)
	}
	return pods
}
