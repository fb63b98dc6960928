package apiobjects

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
)

// Visitor is called with the name of each object a pod references; returning false stops the
// visit.
type Visitor func(name string) (shouldContinue bool)

func skipEmptyNames(visit Visitor) Visitor {
	return func(name string) bool { return name == "" || visit(name) }
}

// containers visits every container of the pod, init and ephemeral ones included, until visit
// returns false.
func containers(spec *v1.PodSpec, visit func(*v1.Container) bool) bool {
	for i := range spec.InitContainers {
		if !visit(&spec.InitContainers[i]) {
			return false
		}
	}
	for i := range spec.Containers {
		if !visit(&spec.Containers[i]) {
			return false
		}
	}
	for i := range spec.EphemeralContainers {
		if !visit((*v1.Container)(&spec.EphemeralContainers[i].EphemeralContainerCommon)) {
			return false
		}
	}
	return true
}

// VisitPodSecretNames visits the name of every secret the pod references, as upstream's
// pkg/api/v1/pod VisitPodSecretNames: imagePullSecrets, envFrom and secretKeyRef of every
// container, secret and projected volumes and the secretRefs of volume plugins. Transitive
// references (pod → PVC → PV → secret) are not visited. It returns false when visit stopped it.
func VisitPodSecretNames(pod *v1.Pod, visit Visitor) bool {
	visit = skipEmptyNames(visit)
	for _, ref := range pod.Spec.ImagePullSecrets {
		if !visit(ref.Name) {
			return false
		}
	}
	if !containers(&pod.Spec, func(c *v1.Container) bool { return visitContainerSecretNames(c, visit) }) {
		return false
	}
	for i := range pod.Spec.Volumes {
		if !visitVolumeSecretNames(&pod.Spec.Volumes[i].VolumeSource, visit) {
			return false
		}
	}
	return true
}

func visitContainerSecretNames(c *v1.Container, visit Visitor) bool {
	for _, from := range c.EnvFrom {
		if from.SecretRef != nil && !visit(from.SecretRef.Name) {
			return false
		}
	}
	for _, e := range c.Env {
		if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil && !visit(e.ValueFrom.SecretKeyRef.Name) {
			return false
		}
	}
	return true
}

func visitVolumeSecretNames(src *v1.VolumeSource, visit Visitor) bool {
	ref := func(r *v1.LocalObjectReference) bool { return r == nil || visit(r.Name) }
	switch {
	case src.AzureFile != nil:
		return src.AzureFile.SecretName == "" || visit(src.AzureFile.SecretName)
	case src.CephFS != nil:
		return ref(src.CephFS.SecretRef)
	case src.Cinder != nil:
		return ref(src.Cinder.SecretRef)
	case src.FlexVolume != nil:
		return ref(src.FlexVolume.SecretRef)
	case src.Projected != nil:
		for _, p := range src.Projected.Sources {
			if p.Secret != nil && !visit(p.Secret.Name) {
				return false
			}
		}
	case src.RBD != nil:
		return ref(src.RBD.SecretRef)
	case src.Secret != nil:
		return visit(src.Secret.SecretName)
	case src.ScaleIO != nil:
		return ref(src.ScaleIO.SecretRef)
	case src.ISCSI != nil:
		return ref(src.ISCSI.SecretRef)
	case src.StorageOS != nil:
		return ref(src.StorageOS.SecretRef)
	case src.CSI != nil:
		return ref(src.CSI.NodePublishSecretRef)
	}
	return true
}

// VisitPodConfigMapNames visits the name of every configMap the pod references, as upstream's
// VisitPodConfigmapNames: envFrom and configMapKeyRef of every container, configMap and
// projected volumes. It returns false when visit stopped it.
func VisitPodConfigMapNames(pod *v1.Pod, visit Visitor) bool {
	visit = skipEmptyNames(visit)
	if !containers(&pod.Spec, func(c *v1.Container) bool { return visitContainerConfigMapNames(c, visit) }) {
		return false
	}
	for i := range pod.Spec.Volumes {
		src := &pod.Spec.Volumes[i].VolumeSource
		switch {
		case src.Projected != nil:
			for _, p := range src.Projected.Sources {
				if p.ConfigMap != nil && !visit(p.ConfigMap.Name) {
					return false
				}
			}
		case src.ConfigMap != nil:
			if !visit(src.ConfigMap.Name) {
				return false
			}
		}
	}
	return true
}

func visitContainerConfigMapNames(c *v1.Container, visit Visitor) bool {
	for _, from := range c.EnvFrom {
		if from.ConfigMapRef != nil && !visit(from.ConfigMapRef.Name) {
			return false
		}
	}
	for _, e := range c.Env {
		if e.ValueFrom != nil && e.ValueFrom.ConfigMapKeyRef != nil && !visit(e.ValueFrom.ConfigMapKeyRef.Name) {
			return false
		}
	}
	return true
}

// referencedObjects is the set of objects of each kind the pod references.
func referencedObjects(pod *v1.Pod) map[kind]sets.Set[string] {
	out := map[kind]sets.Set[string]{configMaps: sets.New[string](), secrets: sets.New[string]()}
	VisitPodConfigMapNames(pod, func(name string) bool { out[configMaps].Insert(name); return true })
	VisitPodSecretNames(pod, func(name string) bool { out[secrets].Insert(name); return true })
	return out
}
