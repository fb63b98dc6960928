package server

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"slices"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// containerLogsHandler serves GET /containerLogs/{namespace}/{pod}/{container} as the
// kubelet's getContainerLogs does. It is only safe on loopback: see doc.go.
type containerLogsHandler struct {
	pods  PodSource
	logs  LogLocator
	clock clock.Clock
}

func (h *containerLogsHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	namespace, name, container := r.PathValue("namespace"), r.PathValue("pod"), r.PathValue("container")
	logger := klog.FromContext(r.Context()).WithValues("pod", klog.KRef(namespace, name), "container", container)

	opts, err := parseLogOptions(r.URL.Query(), h.clock.Now())
	if err != nil {
		httpError(w, r, http.StatusBadRequest, err.Error())
		return
	}
	pod := findPod(h.pods.Pods(), namespace, name)
	if pod == nil {
		httpError(w, r, http.StatusNotFound, fmt.Sprintf("pod %q not found in namespace %q", name, namespace))
		return
	}
	if names := containerNames(pod); !slices.Contains(names, container) {
		httpError(w, r, http.StatusNotFound, fmt.Sprintf("container %q not found in pod %q; its containers: %v", container, name, names))
		return
	}
	target, err := logTargetFor(pod, container, opts.previous)
	if err != nil {
		httpError(w, r, http.StatusBadRequest, err.Error())
		return
	}
	dir, ok := h.logs.ContainerLogDir(namespace, name, container)
	if !ok {
		httpError(w, r, http.StatusNotFound, fmt.Sprintf("no log directory for container %q in pod %q", container, name))
		return
	}
	path, err := pickLogFile(dir, target)
	if err != nil {
		code := http.StatusInternalServerError
		if errors.Is(err, errNoLogFile) {
			code = http.StatusNotFound
		}
		httpError(w, r, code, fmt.Sprintf("log of container %q in pod %q: %v in %s", container, name, err, dir))
		return
	}
	f, err := os.Open(path)
	if err != nil {
		code := http.StatusInternalServerError
		if errors.Is(err, os.ErrNotExist) {
			code = http.StatusNotFound
		}
		httpError(w, r, code, fmt.Sprintf("log of container %q in pod %q: %v", container, name, err))
		return
	}
	stream := newLogStream(logger, path, f)
	defer stream.close()

	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	var flush func()
	if opts.follow {
		rc := http.NewResponseController(w)
		flush = func() { _ = rc.Flush() }
		flush() // the client sees the headers before the first line
	}
	logger.V(4).Info("Serving container log", "path", path, "follow", opts.follow, "previous", opts.previous)
	running := func() bool { return h.running(pod.UID, namespace, name, container, target.containerID) }
	if err := streamLog(r.Context(), stream, newLineWriter(w, flush, opts), h.clock, running); err != nil {
		logger.V(2).Info("Container log stream ended early", "path", path, "err", err)
	}
}

// running tells whether the container instance containerID of the pod still runs according
// to the pod source: a followed log ends when it does not.
func (h *containerLogsHandler) running(uid types.UID, namespace, name, container, containerID string) bool {
	pod := findPod(h.pods.Pods(), namespace, name)
	if pod == nil || pod.UID != uid || containerID == "" {
		return false
	}
	st := containerStatus(pod, container)
	return st != nil && st.State.Running != nil && st.ContainerID == containerID
}
