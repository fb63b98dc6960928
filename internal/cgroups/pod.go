package cgroups

import (
	v1 "k8s.io/api/core/v1"
	resourcehelper "k8s.io/component-helpers/resource"

	"github.com/nodelet/nodelet/internal/kuberuntime/criconfig"
	"github.com/nodelet/nodelet/internal/status"
)

// Pod is what upstream sets on a pod's cgroup (cm.ResourceConfigForPod, with the CFS quota
// enforced, the default 100 ms period, pod-level resources and no memory QoS): cpu shares from
// the pod's cpu requests; for a Guaranteed pod the cpu quota and the memory limit from its
// limits; for a Burstable one each only when every container declares that limit (or the pod
// does); a BestEffort pod gets MinShares. The pod's overhead counts.
func Pod(pod *v1.Pod) Resources {
	reqs := resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
	limits := resourcehelper.PodLimits(pod, resourcehelper.PodResourcesOptions{})
	cpuDeclared, memDeclared := true, true
	for _, cs := range [][]v1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for _, c := range cs {
			if c.Resources.Limits.Cpu().IsZero() {
				cpuDeclared = false
			}
			if c.Resources.Limits.Memory().IsZero() {
				memDeclared = false
			}
		}
	}
	if resourcehelper.IsPodLevelResourcesSet(pod) {
		cpuDeclared = cpuDeclared || !pod.Spec.Resources.Limits.Cpu().IsZero()
		memDeclared = memDeclared || !pod.Spec.Resources.Limits.Memory().IsZero()
	}
	shares := uint64(criconfig.MilliCPUToShares(reqs.Cpu().MilliValue()))
	quota := criconfig.MilliCPUToQuota(limits.Cpu().MilliValue(), criconfig.QuotaPeriod)
	period := uint64(criconfig.QuotaPeriod)
	memory := limits.Memory().Value()

	var r Resources
	switch status.QOSClass(pod) {
	case v1.PodQOSGuaranteed:
		r = Resources{CPUShares: &shares, CPUQuota: &quota, CPUPeriod: &period, Memory: &memory}
	case v1.PodQOSBurstable:
		r.CPUShares = &shares
		if cpuDeclared {
			r.CPUQuota, r.CPUPeriod = &quota, &period
		}
		if memDeclared {
			r.Memory = &memory
		}
	default:
		min := uint64(MinShares)
		r.CPUShares = &min
	}
	return r
}

// Larger is, of two settings of one cgroup, the one that limits less, field by field: what a
// pod's cgroup is set to before its containers are resized from a to b (or b to a), so that no
// container's new limit is ever above its pod's (cgroup v1 refuses a cpu quota above the
// parent's). A field either leaves unset is left unset.
func Larger(a, b Resources) Resources {
	var r Resources
	if a.CPUShares != nil && b.CPUShares != nil {
		r.CPUShares = ptrMax(a.CPUShares, b.CPUShares)
	}
	if a.CPUQuota != nil && b.CPUQuota != nil && a.CPUPeriod != nil && b.CPUPeriod != nil && *a.CPUPeriod == *b.CPUPeriod {
		r.CPUQuota, r.CPUPeriod = ptrMax(a.CPUQuota, b.CPUQuota), a.CPUPeriod
	}
	if a.Memory != nil && b.Memory != nil {
		r.Memory = ptrMax(a.Memory, b.Memory)
	}
	return r
}

func ptrMax[T int64 | uint64](a, b *T) *T {
	if *a >= *b {
		return a
	}
	return b
}
