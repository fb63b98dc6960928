package mirrorpods

import (
	"cmp"
	"slices"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/utils/ptr"

	"github.com/nodelet/nodelet/internal/podconfig"
)

// Action is what Sync does for a static pod.
type Action int

const (
	// Keep: the mirror pod matches the static pod.
	Keep Action = iota
	// Create: there is no mirror pod.
	Create
	// Recreate: the mirror pod is outdated or being deleted; delete it and create a fresh one.
	Recreate
)

func (a Action) String() string {
	switch a {
	case Keep:
		return "Keep"
	case Create:
		return "Create"
	case Recreate:
		return "Recreate"
	}
	return "Unknown"
}

// Decide is upstream's tryReconcileMirrorPods decision for a static pod and its mirror pod
// (nil when there is none).
func Decide(static, mirror *v1.Pod) Action {
	switch {
	case mirror == nil:
		return Create
	case mirror.DeletionTimestamp != nil || !IsMirrorOf(mirror, static):
		return Recreate
	}
	return Keep
}

// IsMirrorOf is upstream's IsMirrorPodOf: same name and namespace, and the mirror annotation is
// the static pod's config.hash.
func IsMirrorOf(mirror, static *v1.Pod) bool {
	if mirror.Name != static.Name || mirror.Namespace != static.Namespace {
		return false
	}
	hash, ok := mirror.Annotations[podconfig.ConfigMirrorAnnotationKey]
	return ok && hash == static.Annotations[podconfig.ConfigHashAnnotationKey]
}

// MirrorOf builds the mirror pod of a static pod, as upstream's CreateMirrorPod: a copy of the
// static pod with the mirror annotation set to its config.hash and a controller owner reference
// to this Node (what NodeRestriction requires; blockOwnerDeletion unset, which it forbids). The
// fields the API server sets on create (UID, resourceVersion, creation time, status...) are
// cleared.
func MirrorOf(static *v1.Pod, nodeName string, nodeUID types.UID) *v1.Pod {
	m := static.DeepCopy()
	m.UID, m.ResourceVersion, m.Generation, m.ManagedFields = "", "", 0, nil
	m.CreationTimestamp, m.DeletionTimestamp, m.DeletionGracePeriodSeconds = metav1.Time{}, nil, nil
	m.OwnerReferences = []metav1.OwnerReference{{APIVersion: v1.SchemeGroupVersion.String(), Kind: "Node",
		Name: nodeName, UID: nodeUID, Controller: ptr.To(true)}}
	if m.Annotations == nil {
		m.Annotations = map[string]string{}
	}
	m.Annotations[podconfig.ConfigMirrorAnnotationKey] = static.Annotations[podconfig.ConfigHashAnnotationKey]
	m.Status = v1.PodStatus{}
	return m
}

// Changed lists, sorted, the pods whose mirror pod appeared, disappeared, or changed in
// what Sync looks at (UID, mirror annotation, deletion) between two views; a change of status
// alone (the status syncer's own writes) is not one.
func Changed(before, after map[types.NamespacedName]*v1.Pod) []types.NamespacedName {
	var out []types.NamespacedName
	for name, b := range before {
		if a, ok := after[name]; !ok || differ(b, a) {
			out = append(out, name)
		}
	}
	for name := range after {
		if _, ok := before[name]; !ok {
			out = append(out, name)
		}
	}
	sortKeys(out)
	return out
}

func differ(a, b *v1.Pod) bool {
	return a.UID != b.UID ||
		a.Annotations[podconfig.ConfigMirrorAnnotationKey] != b.Annotations[podconfig.ConfigMirrorAnnotationKey] ||
		(a.DeletionTimestamp == nil) != (b.DeletionTimestamp == nil)
}

// keyOf is the pod's namespaced name, which keys static and mirror pods.
func keyOf(p *v1.Pod) types.NamespacedName {
	return types.NamespacedName{Namespace: p.Namespace, Name: p.Name}
}

// sortKeys sorts by namespace, then name.
func sortKeys(keys []types.NamespacedName) {
	slices.SortFunc(keys, func(a, b types.NamespacedName) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
}

// sortedKeys is the set's keys, sorted.
func sortedKeys(set sets.Set[types.NamespacedName]) []types.NamespacedName {
	out := set.UnsortedList()
	sortKeys(out)
	return out
}
