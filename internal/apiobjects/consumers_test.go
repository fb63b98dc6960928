package apiobjects

import v1 "k8s.io/api/core/v1"

// The Manager plugs into its consumers: the method sets of internal/volumes.Objects,
// internal/kuberuntime.APIObjects and criconfig.Objects (copied here so that this package's tests do
// not build those packages).
type (
	volumeObjects interface {
		GetConfigMap(namespace, name string) (*v1.ConfigMap, error)
		GetSecret(namespace, name string) (*v1.Secret, error)
		GetServiceAccountToken(pod *v1.Pod, p *v1.ServiceAccountTokenProjection) (string, error)
	}
	runtimeObjects interface {
		GetConfigMap(namespace, name string) (*v1.ConfigMap, error)
		GetSecret(namespace, name string) (*v1.Secret, error)
	}
	podRegistry interface {
		RegisterPod(pod *v1.Pod)
		UnregisterPod(pod *v1.Pod)
	}
)

var (
	_ volumeObjects  = (*Manager)(nil)
	_ runtimeObjects = (*Manager)(nil)
	_ podRegistry    = (*Manager)(nil)
)
