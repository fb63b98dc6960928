package podconfig

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"strings"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// MakeStatic gives a decoded, defaulted pod the identity of a static pod, as upstream's
// applyDefaults does: a UID derived from the pod, the node and where it came from (the file path
// or the URL) unless the manifest sets one; the name suffixed with the node name; the default
// namespace; spec.nodeName; the config.hash annotation; for files, a toleration of every
// NoExecute taint; phase Pending.
//
// The UID is the FNV-128a hash of the pod's JSON encoding followed by the source, as upstream
// hashes the pod followed by the source. Upstream hashes a Go-internal printing of its internal
// type, which cannot be reproduced outside k8s.io/kubernetes, so the values differ from
// upstream's while having the same properties: the same manifest at the same place on the same
// node always gets the same UID, and any change to it gets a new one.
func MakeStatic(pod *v1.Pod, origin string, isFile bool, nodeName string) error {
	if pod.Name == "" {
		return fmt.Errorf("metadata.name: Required value: name is needed for the pod")
	}
	if pod.UID == "" {
		h := fnv.New128a()
		js, err := json.Marshal(pod)
		if err != nil {
			return fmt.Errorf("hash pod: %w", err)
		}
		h.Write(js)
		if isFile {
			fmt.Fprintf(h, "host:%s", nodeName)
			fmt.Fprintf(h, "file:%s", origin)
		} else {
			fmt.Fprintf(h, "url:%s", origin)
		}
		pod.UID = types.UID(hex.EncodeToString(h.Sum(nil)))
	}
	pod.Name = fmt.Sprintf("%s-%s", pod.Name, strings.ToLower(nodeName))
	if pod.Namespace == "" {
		pod.Namespace = metav1.NamespaceDefault
	}
	pod.Spec.NodeName = nodeName
	if pod.Annotations == nil {
		pod.Annotations = map[string]string{}
	}
	pod.Annotations[ConfigHashAnnotationKey] = string(pod.UID)
	if isFile {
		addOrUpdateToleration(&pod.Spec, v1.Toleration{Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoExecute})
	}
	pod.Status.Phase = v1.PodPending
	return nil
}

// addOrUpdateToleration adds t unless an identical toleration is already there.
func addOrUpdateToleration(spec *v1.PodSpec, t v1.Toleration) {
	for i := range spec.Tolerations {
		if spec.Tolerations[i].MatchToleration(&t) {
			if spec.Tolerations[i] == t {
				return
			}
			spec.Tolerations[i] = t
			return
		}
	}
	spec.Tolerations = append(spec.Tolerations, t)
}
