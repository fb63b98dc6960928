package criconfig

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// ErrNeedsAPIServer is returned for references to API objects (configMapKeyRef, secretKeyRef,
// envFrom) that only cluster mode can resolve.
var ErrNeedsAPIServer = errors.New("references to ConfigMaps and Secrets need the API server (cluster mode)")

// PodIdentity is the runtime facts the downward API exposes.
type PodIdentity struct {
	NodeName string
	PodIPs   []string
	HostIPs  []string
	// Allocatable is the node's allocatable cpu and memory: the value of a resourceFieldRef to a
	// limit the container does not set, as upstream.
	Allocatable v1.ResourceList
}

// Env resolves the container's environment as upstream's makeEnvironmentVariables: each value
// may reference the variables defined before it with $(VAR).
func Env(pod *v1.Pod, c *v1.Container, id PodIdentity) ([]*runtimeapi.KeyValue, error) {
	if len(c.EnvFrom) > 0 {
		return nil, fmt.Errorf("envFrom: %w", ErrNeedsAPIServer)
	}
	values := map[string]string{}
	var order []string
	for i, e := range c.Env {
		var v string
		switch {
		case e.ValueFrom == nil:
			v = Expand(e.Value, func(k string) (string, bool) { s, ok := values[k]; return s, ok })
		case e.ValueFrom.FieldRef != nil:
			var err error
			if v, err = fieldRef(pod, e.ValueFrom.FieldRef.FieldPath, id); err != nil {
				return nil, fmt.Errorf("env[%d] %s: %w", i, e.Name, err)
			}
		case e.ValueFrom.ResourceFieldRef != nil:
			var err error
			if v, err = resourceFieldRef(pod, c, e.ValueFrom.ResourceFieldRef, id); err != nil {
				return nil, fmt.Errorf("env[%d] %s: %w", i, e.Name, err)
			}
		default:
			return nil, fmt.Errorf("env[%d] %s: %w", i, e.Name, ErrNeedsAPIServer)
		}
		if _, seen := values[e.Name]; !seen {
			order = append(order, e.Name)
		}
		values[e.Name] = v
	}
	out := make([]*runtimeapi.KeyValue, 0, len(order))
	for _, k := range order {
		out = append(out, &runtimeapi.KeyValue{Key: k, Value: []byte(values[k])})
	}
	return out, nil
}

// EnvMap is Env as a lookup, for expanding command and args.
func EnvMap(kvs []*runtimeapi.KeyValue) func(string) (string, bool) {
	m := make(map[string]string, len(kvs))
	for _, kv := range kvs {
		m[kv.Key] = string(kv.Value)
	}
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func fieldRef(pod *v1.Pod, path string, id PodIdentity) (string, error) {
	if k, ok := subscript(path, "metadata.labels"); ok {
		return pod.Labels[k], nil
	}
	if k, ok := subscript(path, "metadata.annotations"); ok {
		return pod.Annotations[k], nil
	}
	switch path {
	case "metadata.name":
		return pod.Name, nil
	case "metadata.namespace":
		return pod.Namespace, nil
	case "metadata.uid":
		return string(pod.UID), nil
	case "metadata.labels":
		return formatMap(pod.Labels), nil
	case "metadata.annotations":
		return formatMap(pod.Annotations), nil
	case "spec.nodeName":
		return id.NodeName, nil
	case "spec.serviceAccountName":
		return pod.Spec.ServiceAccountName, nil
	case "status.hostIP":
		return first(id.HostIPs), nil
	case "status.hostIPs":
		return strings.Join(id.HostIPs, ","), nil
	case "status.podIP":
		return first(id.PodIPs), nil
	case "status.podIPs":
		return strings.Join(id.PodIPs, ","), nil
	}
	return "", fmt.Errorf("unsupported fieldRef %q", path)
}

// subscript parses metadata.labels['key'].
func subscript(path, prefix string) (string, bool) {
	rest, ok := strings.CutPrefix(path, prefix+"['")
	if !ok || !strings.HasSuffix(rest, "']") {
		return "", false
	}
	return strings.TrimSuffix(rest, "']"), true
}

func formatMap(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sortStrings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s=%q\n", k, m[k])
	}
	return b.String()
}

func first(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}

// resourceFieldRef as upstream's ExtractContainerResourceValue: the value divided by the
// divisor, rounded up; a limit the container does not set reads as the node's allocatable.
func resourceFieldRef(pod *v1.Pod, self *v1.Container, ref *v1.ResourceFieldSelector, id PodIdentity) (string, error) {
	c := self
	if ref.ContainerName != "" {
		c = findContainer(pod, ref.ContainerName)
		if c == nil {
			return "", fmt.Errorf("resourceFieldRef: no container %q", ref.ContainerName)
		}
	}
	divisor := ref.Divisor
	if divisor.IsZero() {
		divisor = resource.MustParse("1")
	}
	kind, name, ok := strings.Cut(ref.Resource, ".")
	if !ok || (kind != "limits" && kind != "requests") {
		return "", fmt.Errorf("unsupported resourceFieldRef %q", ref.Resource)
	}
	list := c.Resources.Limits
	if kind == "requests" {
		list = c.Resources.Requests
	}
	q, set := list[v1.ResourceName(name)]
	if !set && kind == "limits" {
		q, set = id.Allocatable[v1.ResourceName(name)]
	}
	if !set {
		return "0", nil
	}
	if name == "cpu" {
		return strconv.FormatInt(int64(math.Ceil(float64(q.MilliValue())/float64(divisor.MilliValue()))), 10), nil
	}
	return strconv.FormatInt(int64(math.Ceil(float64(q.Value())/float64(divisor.Value()))), 10), nil
}

func findContainer(pod *v1.Pod, name string) *v1.Container {
	for _, cs := range [][]v1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range cs {
			if cs[i].Name == name {
				return &cs[i]
			}
		}
	}
	return nil
}
