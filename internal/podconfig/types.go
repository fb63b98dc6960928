package podconfig

import (
	v1 "k8s.io/api/core/v1"
)

// Op is what a PodUpdate asks the sync loop to do with its pods.
type Op int

const (
	// ADD: pods the sync loop has not seen from this source before.
	ADD Op = iota
	// UPDATE: pods whose spec, labels or annotations changed.
	UPDATE
	// REMOVE: pods that left their source; they are to be terminated and forgotten.
	REMOVE
	// DELETE: pods that gained a deletionTimestamp; they terminate gracefully.
	DELETE
	// RECONCILE: pods whose status alone changed.
	RECONCILE
)

func (o Op) String() string {
	switch o {
	case ADD:
		return "ADD"
	case UPDATE:
		return "UPDATE"
	case REMOVE:
		return "REMOVE"
	case DELETE:
		return "DELETE"
	case RECONCILE:
		return "RECONCILE"
	}
	return "UNKNOWN"
}

// Source names, as the upstream kubelet spells them in the config.source annotation.
const (
	FileSource = "file"
	HTTPSource = "http"
	APISource  = "api"
)

// Annotation keys set on pods by the config layer (upstream's kubetypes).
const (
	ConfigSourceAnnotationKey    = "kubernetes.io/config.source"
	ConfigHashAnnotationKey      = "kubernetes.io/config.hash"
	ConfigFirstSeenAnnotationKey = "kubernetes.io/config.seen"
	ConfigMirrorAnnotationKey    = "kubernetes.io/config.mirror"
)

// PodUpdate is one operation on a set of pods from one source.
type PodUpdate struct {
	Op     Op
	Source string
	Pods   []*v1.Pod
}

// FullName is the pod's name_namespace, the key upstream uses for static pods.
func FullName(pod *v1.Pod) string {
	return pod.Name + "_" + pod.Namespace
}
