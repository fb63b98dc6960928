package podconfig

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
)

// Parsed is the outcome of reading one manifest: the static pods it yields and what was wrong.
type Parsed struct {
	Pods []*v1.Pod
	Errs []error
}

// ParseManifest runs the whole read path of a static pod manifest: strict decoding, the API
// server's defaults, the static-pod identity and validation. origin is the file path or URL and
// is hashed into the UID. Errors name the field; the caller adds the source and origin.
func ParseManifest(data []byte, origin string, isFile bool, nodeName string) Parsed {
	decoded, err := Decode(data, !isFile)
	if err != nil {
		return Parsed{Errs: []error{err}}
	}
	var out Parsed
	seen := map[string]int{}
	for _, d := range decoded {
		if d.Err != nil {
			out.Errs = append(out.Errs, d.Err)
			continue
		}
		pod, err := finishPod(d.Pod, origin, isFile, nodeName)
		if err != nil {
			if len(decoded) > 1 {
				err = fmt.Errorf("items[%d] (%s): %w", d.Index, d.Pod.Name, err)
			}
			out.Errs = append(out.Errs, err)
			continue
		}
		if first, dup := seen[FullName(pod)]; dup {
			out.Errs = append(out.Errs, fmt.Errorf("items[%d].metadata.name: Duplicate value: %q is also items[%d]", d.Index, pod.Name, first))
			continue
		}
		seen[FullName(pod)] = d.Index
		out.Pods = append(out.Pods, pod)
	}
	return out
}

func finishPod(pod *v1.Pod, origin string, isFile bool, nodeName string) (*v1.Pod, error) {
	SetDefaults(pod)
	if err := MakeStatic(pod, origin, isFile, nodeName); err != nil {
		return nil, fmt.Errorf("invalid pod: %w", err)
	}
	if errs := Validate(pod); len(errs) > 0 {
		return nil, fmt.Errorf("invalid pod %q: %w", pod.Name, errs.ToAggregate())
	}
	return pod, nil
}
