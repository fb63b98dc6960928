package eviction

import (
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	resourcehelper "k8s.io/component-helpers/resource"
)

// Upstream's messages (pkg/kubelet/eviction/helpers.go).
const (
	nodeLowMessageFmt                   = "The node was low on resource: %v. "
	nodeConditionMessageFmt             = "The node had condition: %v. "
	containerMessageFmt                 = "Container %s was using %s, request is %s, has larger consumption of %v. "
	podMessageFmt                       = "Pod %s was using %s, request is %s, has larger consumption of %v. "
	containerEphemeralStorageMessageFmt = "Container %s exceeded its local ephemeral storage limit %q. "
	podEphemeralStorageMessageFmt       = "Pod ephemeral local storage usage exceeds the total limit of containers %s. "
	emptyDirMessageFmt                  = "Usage of EmptyDir volume %q exceeds the limit %q. "
	thresholdMetMessageFmt              = "Threshold quantity: %v, available: %v. "
)

// Annotation keys of the eviction event, as upstream's.
const (
	OffendingContainersKey      = "offending_containers"
	OffendingContainersUsageKey = "offending_containers_usage"
	OffendingPodKey             = "offending_pod"
	OffendingPodUsageKey        = "offending_pod_usage"
	StarvedResourceKey          = "starved_resource"
)

// Message is upstream's evictionMessage: why the pod is evicted for the resource (the threshold
// and what was available, the containers using more than they request), and the event's
// annotations.
func Message(r v1.ResourceName, pod *v1.Pod, stats PodStats, act []Threshold, obs Observations) (string, map[string]string) {
	annotations := map[string]string{}
	msg := fmt.Sprintf(nodeLowMessageFmt, r)
	for _, t := range act {
		if tr, _ := resourceOf(t.Signal); tr == r {
			if o, ok := obs[t.Signal]; ok {
				q, avail := t.Value.Of(o.Capacity), o.Available
				msg += fmt.Sprintf(thresholdMetMessageFmt, &q, &avail)
				break
			}
		}
	}
	ps, ok := stats(string(pod.UID))
	if !ok {
		return msg, annotations
	}
	if r == v1.ResourceMemory && resourcehelper.IsPodLevelResourcesSet(pod) {
		if req, ok := pod.Spec.Resources.Requests[r]; ok && ps.Memory != nil {
			used := memoryOf(pod, ps)
			msg += fmt.Sprintf(podMessageFmt, pod.Name, used.String(), req.String(), r)
			annotations[OffendingPodKey], annotations[OffendingPodUsageKey] = pod.Name, used.String()
		}
	}
	containers := append(append([]v1.Container{}, pod.Spec.Containers...), pod.Spec.InitContainers...)
	var names, usages []string
	for _, cs := range ps.Containers {
		for _, c := range containers {
			if c.Name != cs.Name {
				continue
			}
			req := c.Resources.Requests[r]
			var used *resource.Quantity
			switch r {
			case v1.ResourceEphemeralStorage:
				if cs.Rootfs != nil && cs.Rootfs.UsedBytes != nil && cs.Logs != nil && cs.Logs.UsedBytes != nil {
					used = resource.NewQuantity(int64(*cs.Rootfs.UsedBytes+*cs.Logs.UsedBytes), resource.BinarySI)
				}
			case v1.ResourceMemory:
				if cs.Memory != nil && cs.Memory.WorkingSetBytes != nil {
					used = resource.NewQuantity(int64(*cs.Memory.WorkingSetBytes), resource.BinarySI)
				}
			}
			if used != nil && used.Cmp(req) > 0 {
				msg += fmt.Sprintf(containerMessageFmt, c.Name, used.String(), req.String(), r)
				names, usages = append(names, c.Name), append(usages, used.String())
			}
			break
		}
	}
	annotations[OffendingContainersKey] = strings.Join(names, ",")
	annotations[OffendingContainersUsageKey] = strings.Join(usages, ",")
	annotations[StarvedResourceKey] = string(r)
	return msg, annotations
}
