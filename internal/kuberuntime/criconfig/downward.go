package criconfig

// Downward API values shared by the environment and the downwardAPI/projected volumes
// (internal/volumes), written to match upstream's pkg/fieldpath and pkg/api/v1/resource
// byte for byte.

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
)

// PodMetadataField is upstream's fieldpath.ExtractFieldPathAsString for a pod: the value of
// metadata.name, metadata.namespace, metadata.uid, metadata.labels, metadata.annotations (the
// whole map, see FormatFieldMap), metadata.labels['key'] or metadata.annotations['key'] (a
// missing key is ""). These are the fieldRefs a downwardAPI volume may use; the environment's
// extra ones (spec.nodeName, status.podIP, ...) are not pod metadata and are resolved by Env.
// Errors use upstream's messages.
func PodMetadataField(pod *v1.Pod, fieldPath string) (string, error) {
	if path, key, ok := splitSubscript(fieldPath); ok {
		switch path {
		case "metadata.annotations":
			if errs := validation.IsQualifiedName(strings.ToLower(key)); len(errs) != 0 {
				return "", fmt.Errorf("invalid key subscript in %s: %s", fieldPath, strings.Join(errs, ";"))
			}
			return pod.Annotations[key], nil
		case "metadata.labels":
			if errs := validation.IsQualifiedName(key); len(errs) != 0 {
				return "", fmt.Errorf("invalid key subscript in %s: %s", fieldPath, strings.Join(errs, ";"))
			}
			return pod.Labels[key], nil
		default:
			return "", fmt.Errorf("fieldPath %q does not support subscript", fieldPath)
		}
	}
	switch fieldPath {
	case "metadata.annotations":
		return FormatFieldMap(pod.Annotations), nil
	case "metadata.labels":
		return FormatFieldMap(pod.Labels), nil
	case "metadata.name":
		return pod.Name, nil
	case "metadata.namespace":
		return pod.Namespace, nil
	case "metadata.uid":
		return string(pod.UID), nil
	}
	return "", fmt.Errorf("unsupported fieldPath: %v", fieldPath)
}

// splitSubscript is upstream's SplitMaybeSubscriptedPath: "metadata.labels['k']" is
// ("metadata.labels", "k", true); a path without a subscript is (path, "", false).
func splitSubscript(fieldPath string) (path, key string, ok bool) {
	s, found := strings.CutSuffix(fieldPath, "']")
	if !found {
		return fieldPath, "", false
	}
	path, key, found = strings.Cut(s, "['")
	if !found || path == "" {
		return fieldPath, "", false
	}
	return path, key, true
}

// FormatFieldMap is upstream's fieldpath.FormatMap: one key="value" line per entry (the value
// Go-quoted), sorted by key, lines separated by "\n" with no newline after the last one.
func FormatFieldMap(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b []byte
	for _, k := range keys {
		if len(b) > 0 {
			b = append(b, '\n')
		}
		b = append(b, k...)
		b = append(b, '=')
		b = strconv.AppendQuote(b, m[k])
	}
	return string(b)
}

// ResourceFieldValue is upstream's ExtractResourceValueByContainerNameAndNodeAllocatable: the
// value of ref for the pod's container (or init container) named containerName, an error
// "container <name> not found" when there is none. See ContainerResourceFieldValue.
func ResourceFieldValue(pod *v1.Pod, containerName string, ref *v1.ResourceFieldSelector, allocatable v1.ResourceList) (string, error) {
	for _, cs := range [][]v1.Container{pod.Spec.Containers, pod.Spec.InitContainers} {
		for i := range cs {
			if cs[i].Name == containerName {
				return ContainerResourceFieldValue(&cs[i], ref, allocatable)
			}
		}
	}
	return "", fmt.Errorf("container %s not found", containerName)
}

// ContainerResourceFieldValue is upstream's ExtractContainerResourceValue after
// MergeContainerResourceLimits: limits.cpu, limits.memory, limits.ephemeral-storage, the
// matching requests.* and {limits,requests}.hugepages-<size>, divided by ref.Divisor (1 when
// unset) and rounded up. A cpu, memory or ephemeral-storage limit the container does not set
// (or sets to zero) reads as the node's allocatable; an unset request reads "0".
func ContainerResourceFieldValue(c *v1.Container, ref *v1.ResourceFieldSelector, allocatable v1.ResourceList) (string, error) {
	divisor := ref.Divisor
	if divisor.Cmp(resource.Quantity{}) == 0 {
		divisor = resource.MustParse("1")
	}
	kind, name, _ := strings.Cut(ref.Resource, ".")
	rn := v1.ResourceName(name)
	var list v1.ResourceList
	switch {
	case kind == "limits" && (rn == v1.ResourceCPU || rn == v1.ResourceMemory || rn == v1.ResourceEphemeralStorage):
		list = c.Resources.Limits
		if q, ok := list[rn]; !ok || q.IsZero() {
			if a, ok := allocatable[rn]; ok {
				list = v1.ResourceList{rn: a}
			}
		}
	case kind == "requests" && (rn == v1.ResourceCPU || rn == v1.ResourceMemory || rn == v1.ResourceEphemeralStorage):
		list = c.Resources.Requests
	case kind == "limits" && strings.HasPrefix(name, v1.ResourceHugePagesPrefix):
		list = c.Resources.Limits
	case kind == "requests" && strings.HasPrefix(name, v1.ResourceHugePagesPrefix):
		list = c.Resources.Requests
	default:
		return "", fmt.Errorf("unsupported container resource : %v", ref.Resource)
	}
	q := list[rn]
	if rn == v1.ResourceCPU {
		if divisor.MilliValue() == 0 {
			return "", fmt.Errorf("invalid divisor %s for %s", divisor.String(), ref.Resource)
		}
		return strconv.FormatInt(int64(math.Ceil(float64(q.MilliValue())/float64(divisor.MilliValue()))), 10), nil
	}
	if divisor.Value() == 0 {
		return "", fmt.Errorf("invalid divisor %s for %s", divisor.String(), ref.Resource)
	}
	return strconv.FormatInt(int64(math.Ceil(float64(q.Value())/float64(divisor.Value()))), 10), nil
}
