package server

import (
	"context"
	"net/http"

	v1 "k8s.io/api/core/v1"
)

// RunningPodLister lists the pods the runtime runs, as upstream's GetRunningPods: a pod per
// UID with a ready sandbox or a running container, with only name, namespace, UID and its
// running containers' names and images.
type RunningPodLister interface {
	RunningPods(ctx context.Context) ([]*v1.Pod, error)
}

// runningPodsHandler serves GET /runningpods/ as a v1 PodList.
type runningPodsHandler struct{ pods RunningPodLister }

func (h *runningPodsHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	pods, err := h.pods.RunningPods(r.Context())
	if err != nil {
		httpError(w, r, http.StatusInternalServerError, err.Error())
		return
	}
	writePods(w, r, pods)
}
