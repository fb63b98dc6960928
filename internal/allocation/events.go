package allocation

import (
	"encoding/json"

	v1 "k8s.io/api/core/v1"
)

type containerAllocation struct {
	Name      string                  `json:"name"`
	Resources v1.ResourceRequirements `json:"resources,omitempty"`
}

// resourceSummary is upstream's podResourceSummary: the resize events carry the pod's
// desired resources as JSON.
type resourceSummary struct {
	InitContainers []containerAllocation `json:"initContainers,omitempty"`
	Containers     []containerAllocation `json:"containers,omitempty"`
	Generation     int64                 `json:"generation"`
	Error          string                `json:"error,omitempty"`
}

// resizeMessage is upstream's podResizeMessage: "<prefix>: {json}".
func resizeMessage(pod *v1.Pod, prefix, errMsg string) string {
	s := resourceSummary{Generation: pod.Generation, Error: errMsg}
	for _, c := range pod.Spec.InitContainers {
		s.InitContainers = append(s.InitContainers, containerAllocation{Name: c.Name, Resources: c.Resources})
	}
	for _, c := range pod.Spec.Containers {
		s.Containers = append(s.Containers, containerAllocation{Name: c.Name, Resources: c.Resources})
	}
	data, err := json.Marshal(s)
	if err != nil {
		return prefix
	}
	return prefix + ": " + string(data)
}
