package podconfig

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// MaxManifestBytes bounds one manifest file or HTTP body, as upstream's maxConfigLength (10 MiB).
const MaxManifestBytes = 10 << 20

// ErrEmptyManifest is returned for a manifest holding no object.
var ErrEmptyManifest = errors.New("empty manifest: no object to decode")

// Decoded is one pod decoded from a manifest, or the reason it could not be.
type Decoded struct {
	Pod *v1.Pod
	// Index is the pod's position in a PodList (0 for a single Pod).
	Index int
	Err   error
}

// Decode reads a YAML or JSON manifest holding a v1 Pod or, when allowList is set, a v1 PodList.
// Decoding is strict: an unknown or duplicated field is an error naming the field's path. The
// returned error is for the manifest as a whole; per-item errors of a PodList are in Decoded.Err
// so that one bad item does not hide the good ones.
func Decode(data []byte, allowList bool) ([]Decoded, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, ErrEmptyManifest
	}
	if len(data) > MaxManifestBytes {
		return nil, fmt.Errorf("manifest is %d bytes, larger than the %d bytes allowed", len(data), MaxManifestBytes)
	}
	js := data
	if !json.Valid(data) { // JSON is decoded as it is, so duplicate keys are seen
		var err error
		if js, err = yaml.YAMLToJSON(data); err != nil {
			return nil, fmt.Errorf("not valid YAML or JSON: %w", err)
		}
	}
	if bytes.Equal(bytes.TrimSpace(js), []byte("null")) {
		return nil, ErrEmptyManifest
	}
	var tm metav1.TypeMeta
	if err := json.Unmarshal(js, &tm); err != nil {
		return nil, fmt.Errorf("not an object: %w", err)
	}
	switch {
	case tm.Kind == "":
		return nil, errors.New("kind: Required value: the manifest must say kind: Pod")
	case tm.APIVersion == "":
		return nil, errors.New("apiVersion: Required value: the manifest must say apiVersion: v1")
	case tm.APIVersion != "v1":
		return nil, fmt.Errorf("apiVersion: Unsupported value: %q: supported values: \"v1\"", tm.APIVersion)
	}
	switch tm.Kind {
	case "Pod":
		pod, err := decodePod(js)
		if err != nil {
			return nil, err
		}
		return []Decoded{{Pod: pod}}, nil
	case "PodList", "List":
		if !allowList {
			return nil, fmt.Errorf("kind: Unsupported value: %q: a manifest file holds one Pod", tm.Kind)
		}
		return decodeList(js)
	default:
		return nil, fmt.Errorf("kind: Unsupported value: %q: supported values: \"Pod\"", tm.Kind)
	}
}

func decodeList(js []byte) ([]Decoded, error) {
	var list struct {
		metav1.TypeMeta `json:",inline"`
		metav1.ListMeta `json:"metadata,omitempty"`
		Items           []json.RawMessage `json:"items"`
	}
	if err := strictUnmarshal(js, &list); err != nil {
		return nil, err
	}
	out := make([]Decoded, 0, len(list.Items))
	for i, raw := range list.Items {
		d := Decoded{Index: i}
		d.Pod, d.Err = decodePod(raw)
		if d.Err != nil {
			d.Err = fmt.Errorf("items[%d]: %w", i, d.Err)
		} else if d.Pod.Kind != "" && d.Pod.Kind != "Pod" {
			d.Pod, d.Err = nil, fmt.Errorf("items[%d].kind: Unsupported value: %q", i, d.Pod.Kind)
		}
		out = append(out, d)
	}
	return out, nil
}

func decodePod(js []byte) (*v1.Pod, error) {
	pod := &v1.Pod{}
	if err := strictUnmarshal(js, pod); err != nil {
		return nil, err
	}
	return pod, nil
}

// strictUnmarshal decodes JSON as the API server does with fieldValidation=Strict: case-sensitive
// keys, unknown and duplicate fields are errors naming their path.
func strictUnmarshal(js []byte, into any) error {
	strictErrs, err := sigsjson.UnmarshalStrict(js, into)
	if err != nil {
		return err
	}
	if len(strictErrs) > 0 {
		return errors.Join(strictErrs...)
	}
	return nil
}
