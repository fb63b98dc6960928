package agent

import (
	"path/filepath"

	v1 "k8s.io/api/core/v1"

	"github.com/nodelet/nodelet/internal/kuberuntime/criconfig"
)

// podByName finds a desired pod by name and namespace (the pod manager).
type podByName interface {
	ByFullName(name, namespace string) (*v1.Pod, bool)
}

// logLocator maps a container to its CRI log directory, <podLogsDir>/<ns>_<name>_<uid>/<c>.
type logLocator struct {
	podLogsDir string
	pods       podByName
}

func (l logLocator) ContainerLogDir(namespace, podName, container string) (string, bool) {
	pod, ok := l.pods.ByFullName(podName, namespace)
	if !ok {
		return "", false
	}
	return filepath.Join(criconfig.PodLogDir(l.podLogsDir, pod), container), true
}
