package criconfig

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// ErrNeedsAPIServer is returned for references to API objects (configMapKeyRef, secretKeyRef,
// envFrom) when no Objects can resolve them (standalone mode).
var ErrNeedsAPIServer = errors.New("references to ConfigMaps and Secrets need the API server (cluster mode)")

// Objects reads the configMaps and secrets of a pod's namespace (apiobjects.Manager in cluster
// mode). A missing object is an apierrors NotFound error; the objects returned are not modified.
type Objects interface {
	GetConfigMap(namespace, name string) (*v1.ConfigMap, error)
	GetSecret(namespace, name string) (*v1.Secret, error)
}

// PodIdentity is the runtime facts the downward API exposes, and where the API objects the
// environment references come from.
type PodIdentity struct {
	NodeName string
	PodIPs   []string
	HostIPs  []string
	// Allocatable is the node's allocatable cpu and memory: the value of a resourceFieldRef to a
	// limit the container does not set, as upstream.
	Allocatable v1.ResourceList
	// Objects resolves configMapKeyRef, secretKeyRef and envFrom. Nil (standalone mode) makes
	// them fail with ErrNeedsAPIServer.
	Objects Objects
	// ServiceEnv holds the pod's service variables (ServiceEnv): $(VAR) in env values may
	// reference them, and those the container does not define itself are added after its own.
	// Empty in standalone mode, as upstream.
	ServiceEnv map[string]string
}

// Env resolves the container's environment as upstream's makeEnvironmentVariables: first the
// envFrom sources (configMaps and secrets, each key with the source's prefix), then env, which
// overrides them; each value may reference the variables defined before it with $(VAR).
// Variables come out in the order they are first defined, envFrom keys sorted per source; the
// service variables the container does not define come last, sorted.
//
// As upstream, a missing configMap or secret fails with the getter's NotFound error
// (`configmap "x" not found`) and a missing key with `couldn't find key k in ConfigMap ns/x`,
// unless the reference is optional: then the variable (or the whole source) is left out.
func Env(pod *v1.Pod, c *v1.Container, id PodIdentity) ([]*runtimeapi.KeyValue, error) {
	if len(c.EnvFrom) > 0 && id.Objects == nil {
		return nil, fmt.Errorf("envFrom: %w", ErrNeedsAPIServer)
	}
	refs := &objectRefs{pod: pod, objects: id.Objects}
	values := map[string]string{}
	var order []string
	set := func(k, v string) {
		if _, seen := values[k]; !seen {
			order = append(order, k)
		}
		values[k] = v
	}
	for _, from := range c.EnvFrom {
		data, err := refs.envFrom(from)
		if err != nil {
			return nil, err
		}
		for _, k := range sortedKeys(data) {
			set(from.Prefix+k, data[k])
		}
	}
	for i, e := range c.Env {
		var v string
		switch {
		case e.ValueFrom == nil:
			v = Expand(e.Value, func(k string) (string, bool) {
				if s, ok := values[k]; ok {
					return s, true
				}
				s, ok := id.ServiceEnv[k]
				return s, ok
			})
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
		case e.ValueFrom.ConfigMapKeyRef != nil || e.ValueFrom.SecretKeyRef != nil:
			if id.Objects == nil {
				return nil, fmt.Errorf("env[%d] %s: %w", i, e.Name, ErrNeedsAPIServer)
			}
			var (
				found bool
				err   error
			)
			if ref := e.ValueFrom.ConfigMapKeyRef; ref != nil {
				v, found, err = refs.configMapKey(ref)
			} else {
				v, found, err = refs.secretKey(e.ValueFrom.SecretKeyRef)
			}
			if err != nil {
				return nil, err
			}
			if !found {
				continue // optional
			}
		default:
			return nil, fmt.Errorf("env[%d] %s: unsupported valueFrom", i, e.Name)
		}
		set(e.Name, v)
	}
	for _, k := range sortedKeys(id.ServiceEnv) {
		if _, own := values[k]; !own {
			set(k, id.ServiceEnv[k])
		}
	}
	out := make([]*runtimeapi.KeyValue, 0, len(order))
	for _, k := range order {
		out = append(out, &runtimeapi.KeyValue{Key: k, Value: []byte(values[k])})
	}
	return out, nil
}

// objectRefs resolves a container's references to configMaps and secrets, reading each object
// once.
type objectRefs struct {
	pod        *v1.Pod
	objects    Objects
	configMaps map[string]*v1.ConfigMap
	secrets    map[string]*v1.Secret
}

// configMap returns the named configMap of the pod's namespace; nil without error when it does
// not exist and the reference is optional.
func (r *objectRefs) configMap(name string, optional bool) (*v1.ConfigMap, error) {
	if cm, ok := r.configMaps[name]; ok {
		return cm, nil
	}
	cm, err := r.objects.GetConfigMap(r.pod.Namespace, name)
	if err != nil {
		if optional && apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, err
	}
	if r.configMaps == nil {
		r.configMaps = map[string]*v1.ConfigMap{}
	}
	r.configMaps[name] = cm
	return cm, nil
}

// secret is configMap for secrets.
func (r *objectRefs) secret(name string, optional bool) (*v1.Secret, error) {
	if s, ok := r.secrets[name]; ok {
		return s, nil
	}
	s, err := r.objects.GetSecret(r.pod.Namespace, name)
	if err != nil {
		if optional && apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, err
	}
	if r.secrets == nil {
		r.secrets = map[string]*v1.Secret{}
	}
	r.secrets[name] = s
	return s, nil
}

// envFrom returns the keys and values of an envFrom source (without its prefix); none for a
// missing optional source.
func (r *objectRefs) envFrom(from v1.EnvFromSource) (map[string]string, error) {
	switch {
	case from.ConfigMapRef != nil:
		cm, err := r.configMap(from.ConfigMapRef.Name, isTrue(from.ConfigMapRef.Optional))
		if err != nil || cm == nil {
			return nil, err
		}
		return cm.Data, nil
	case from.SecretRef != nil:
		s, err := r.secret(from.SecretRef.Name, isTrue(from.SecretRef.Optional))
		if err != nil || s == nil {
			return nil, err
		}
		data := make(map[string]string, len(s.Data))
		for k, v := range s.Data {
			data[k] = string(v)
		}
		return data, nil
	}
	return nil, nil
}

// configMapKey resolves a configMapKeyRef; found is false when an optional reference misses.
func (r *objectRefs) configMapKey(ref *v1.ConfigMapKeySelector) (v string, found bool, err error) {
	optional := isTrue(ref.Optional)
	cm, err := r.configMap(ref.Name, optional)
	if err != nil || cm == nil {
		return "", false, err
	}
	v, ok := cm.Data[ref.Key]
	if !ok && !optional {
		return "", false, fmt.Errorf("couldn't find key %v in ConfigMap %v/%v", ref.Key, r.pod.Namespace, ref.Name)
	}
	return v, ok, nil
}

// secretKey resolves a secretKeyRef; found is false when an optional reference misses.
func (r *objectRefs) secretKey(ref *v1.SecretKeySelector) (v string, found bool, err error) {
	optional := isTrue(ref.Optional)
	s, err := r.secret(ref.Name, optional)
	if err != nil || s == nil {
		return "", false, err
	}
	b, ok := s.Data[ref.Key]
	if !ok && !optional {
		return "", false, fmt.Errorf("couldn't find key %v in Secret %v/%v", ref.Key, r.pod.Namespace, ref.Name)
	}
	return string(b), ok, nil
}

func isTrue(b *bool) bool { return b != nil && *b }

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// EnvMap is Env as a lookup, for expanding command and args.
func EnvMap(kvs []*runtimeapi.KeyValue) func(string) (string, bool) {
	m := make(map[string]string, len(kvs))
	for _, kv := range kvs {
		m[kv.Key] = string(kv.Value)
	}
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

// fieldRef resolves an env fieldRef: pod metadata as the downward API volumes do
// (PodMetadataField, upstream's formatting), plus the paths only the environment offers.
func fieldRef(pod *v1.Pod, path string, id PodIdentity) (string, error) {
	switch path {
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
	return PodMetadataField(pod, path)
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
	return ContainerResourceFieldValue(c, ref, id.Allocatable)
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
