package volumes

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/nodelet/nodelet/internal/kuberuntime/criconfig"
)

// Objects is what the API-backed volumes (configMap, secret, projected) need of the API
// server. In cluster mode it is internal/apiobjects' Manager; in standalone mode there is none
// and those volumes fail with ErrNeedsClusterMode.
type Objects interface {
	// GetConfigMap returns the ConfigMap, or an error matching apierrors.IsNotFound.
	GetConfigMap(namespace, name string) (*v1.ConfigMap, error)
	// GetSecret returns the Secret, or an error matching apierrors.IsNotFound.
	GetSecret(namespace, name string) (*v1.Secret, error)
	// GetServiceAccountToken returns a token of the pod's service account bound to the pod,
	// for the projection's audience and expirationSeconds, refreshed before it expires.
	GetServiceAccountToken(pod *v1.Pod, p *v1.ServiceAccountTokenProjection) (string, error)
}

// ErrNeedsClusterMode is returned for volumes whose content comes from the API server when
// nodelet runs without one.
var ErrNeedsClusterMode = errors.New("needs the API server (run nodelet in cluster mode, with --kubeconfig)")

// defaultFileMode is upstream's default for defaultMode of configMap, secret, projected and
// downwardAPI volumes (the API server sets it; a static pod may leave it unset).
const defaultFileMode int32 = 0o644

// itemMode is the item's mode, else the volume's defaultMode, else 0644.
func itemMode(defaultMode, mode *int32) os.FileMode {
	switch {
	case mode != nil:
		return os.FileMode(*mode).Perm()
	case defaultMode != nil:
		return os.FileMode(*defaultMode).Perm()
	}
	return os.FileMode(defaultFileMode)
}

// getConfigMap fetches a ConfigMap; a missing one is an empty ConfigMap when optional.
func getConfigMap(objs Objects, namespace, name string, optional bool) (*v1.ConfigMap, error) {
	cm, err := objs.GetConfigMap(namespace, name)
	if apierrors.IsNotFound(err) && optional {
		return &v1.ConfigMap{}, nil
	}
	if err == nil && cm == nil {
		err = errors.New("no object returned")
	}
	if err != nil {
		return nil, fmt.Errorf("getting ConfigMap %s/%s: %w", namespace, name, err)
	}
	return cm, nil
}

// getSecret fetches a Secret; a missing one is an empty Secret when optional.
func getSecret(objs Objects, namespace, name string, optional bool) (*v1.Secret, error) {
	s, err := objs.GetSecret(namespace, name)
	if apierrors.IsNotFound(err) && optional {
		return &v1.Secret{}, nil
	}
	if err == nil && s == nil {
		err = errors.New("no object returned")
	}
	if err != nil {
		return nil, fmt.Errorf("getting Secret %s/%s: %w", namespace, name, err)
	}
	return s, nil
}

// configMapPayload is upstream's configmap.MakePayload: every key of data and binaryData
// with defaultMode, or with items only the listed keys at their paths (a missing key is an
// error unless optional, then skipped).
func configMapPayload(items []v1.KeyToPath, cm *v1.ConfigMap, defaultMode *int32, optional bool) (map[string]fileProjection, error) {
	out := make(map[string]fileProjection, len(cm.Data)+len(cm.BinaryData))
	if len(items) == 0 {
		for k, v := range cm.Data {
			out[k] = fileProjection{data: []byte(v), mode: itemMode(defaultMode, nil)}
		}
		for k, v := range cm.BinaryData {
			out[k] = fileProjection{data: v, mode: itemMode(defaultMode, nil)}
		}
		return out, nil
	}
	for _, it := range items {
		var data []byte
		if s, ok := cm.Data[it.Key]; ok {
			data = []byte(s)
		} else if b, ok := cm.BinaryData[it.Key]; ok {
			data = b
		} else if optional {
			continue
		} else {
			return nil, fmt.Errorf("configmap references non-existent config key: %s", it.Key)
		}
		out[it.Path] = fileProjection{data: data, mode: itemMode(defaultMode, it.Mode)}
	}
	return out, nil
}

// secretPayload is upstream's secret.MakePayload, configMapPayload for a Secret's data.
func secretPayload(items []v1.KeyToPath, s *v1.Secret, defaultMode *int32, optional bool) (map[string]fileProjection, error) {
	out := make(map[string]fileProjection, len(s.Data))
	if len(items) == 0 {
		for k, v := range s.Data {
			out[k] = fileProjection{data: v, mode: itemMode(defaultMode, nil)}
		}
		return out, nil
	}
	for _, it := range items {
		data, ok := s.Data[it.Key]
		if !ok {
			if optional {
				continue
			}
			return nil, fmt.Errorf("references non-existent secret key: %s", it.Key)
		}
		out[it.Path] = fileProjection{data: data, mode: itemMode(defaultMode, it.Mode)}
	}
	return out, nil
}

// downwardAPIPayload is upstream's downwardapi.CollectData: each item's fieldRef (pod
// metadata) or resourceFieldRef (a container's requests or limits, an unset limit reading as
// the node's allocatable) at its cleaned path. Every failing item is reported.
func downwardAPIPayload(items []v1.DownwardAPIVolumeFile, pod *v1.Pod, defaultMode *int32, allocatable v1.ResourceList) (map[string]fileProjection, error) {
	out := make(map[string]fileProjection, len(items))
	var errs []error
	for _, it := range items {
		f := fileProjection{mode: itemMode(defaultMode, it.Mode)}
		var (
			v   string
			err error
		)
		switch {
		case it.FieldRef != nil:
			v, err = criconfig.PodMetadataField(pod, it.FieldRef.FieldPath)
		case it.ResourceFieldRef != nil:
			v, err = criconfig.ResourceFieldValue(pod, it.ResourceFieldRef.ContainerName, it.ResourceFieldRef, allocatable)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("item %q: %w", it.Path, err))
			continue
		}
		f.data = []byte(v)
		out[filepath.Clean(it.Path)] = f
	}
	return out, errors.Join(errs...)
}

// projectedPayload is upstream's projected collectData: the payloads of the sources merged in
// order (a later source wins a path). Service account tokens get mode 0600 and the pod's
// fsUser as owner when the pod has an fsUser or fsGroup (fsGroup then adds group read), as
// upstream. clusterTrustBundle and podCertificate sources are not supported. Every failing
// source is reported.
func projectedPayload(objs Objects, pod *v1.Pod, src *v1.ProjectedVolumeSource, allocatable v1.ResourceList) (map[string]fileProjection, error) {
	out := map[string]fileProjection{}
	var errs []error
	merge := func(i int, what string, p map[string]fileProjection, err error) {
		if err != nil {
			errs = append(errs, fmt.Errorf("sources[%d] %s: %w", i, what, err))
			return
		}
		for k, v := range p {
			out[k] = v
		}
	}
	needObjects := func(i int, what string) bool {
		if objs == nil {
			errs = append(errs, fmt.Errorf("sources[%d] %s: %w", i, what, ErrNeedsClusterMode))
		}
		return objs != nil
	}
	for i := range src.Sources {
		s := &src.Sources[i]
		switch {
		case s.ConfigMap != nil:
			if !needObjects(i, "configMap") {
				continue
			}
			optional := s.ConfigMap.Optional != nil && *s.ConfigMap.Optional
			cm, err := getConfigMap(objs, pod.Namespace, s.ConfigMap.Name, optional)
			if err != nil {
				merge(i, "configMap", nil, err)
				continue
			}
			p, err := configMapPayload(s.ConfigMap.Items, cm, src.DefaultMode, optional)
			merge(i, "configMap "+s.ConfigMap.Name, p, err)
		case s.Secret != nil:
			if !needObjects(i, "secret") {
				continue
			}
			optional := s.Secret.Optional != nil && *s.Secret.Optional
			sec, err := getSecret(objs, pod.Namespace, s.Secret.Name, optional)
			if err != nil {
				merge(i, "secret", nil, err)
				continue
			}
			p, err := secretPayload(s.Secret.Items, sec, src.DefaultMode, optional)
			merge(i, "secret "+s.Secret.Name, p, err)
		case s.DownwardAPI != nil:
			p, err := downwardAPIPayload(s.DownwardAPI.Items, pod, src.DefaultMode, allocatable)
			merge(i, "downwardAPI", p, err)
		case s.ServiceAccountToken != nil:
			if !needObjects(i, "serviceAccountToken") {
				continue
			}
			tp := s.ServiceAccountToken
			token, err := objs.GetServiceAccountToken(pod, tp)
			if err != nil {
				merge(i, "serviceAccountToken", nil, fmt.Errorf("requesting a token for service account %s/%s: %w",
					pod.Namespace, pod.Spec.ServiceAccountName, err))
				continue
			}
			f := fileProjection{data: []byte(token), mode: itemMode(src.DefaultMode, nil), uid: podFSUser(pod)}
			if f.uid != nil || fsGroup(pod) != nil {
				f.mode = 0o600
			}
			out[tp.Path] = f
		case s.ClusterTrustBundle != nil:
			errs = append(errs, fmt.Errorf("sources[%d]: clusterTrustBundle projections are not supported by nodelet", i))
		case s.PodCertificate != nil:
			errs = append(errs, fmt.Errorf("sources[%d]: podCertificate projections are not supported by nodelet", i))
		}
	}
	return out, errors.Join(errs...)
}

// podFSUser is upstream's FsUserFrom: the effective runAsUser shared by every container of
// the pod (init and ephemeral ones included), or nil when one has none or two differ.
func podFSUser(pod *v1.Pod) *int64 {
	var podUser *int64
	if sc := pod.Spec.SecurityContext; sc != nil {
		podUser = sc.RunAsUser
	}
	var user *int64
	same := func(sc *v1.SecurityContext) bool {
		u := podUser
		if sc != nil && sc.RunAsUser != nil {
			u = sc.RunAsUser
		}
		if u == nil || (user != nil && *user != *u) {
			return false
		}
		user = u
		return true
	}
	for _, cs := range [][]v1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range cs {
			if !same(cs[i].SecurityContext) {
				return nil
			}
		}
	}
	for i := range pod.Spec.EphemeralContainers {
		if !same(pod.Spec.EphemeralContainers[i].SecurityContext) {
			return nil
		}
	}
	if user == nil {
		return nil
	}
	u := *user
	return &u
}
