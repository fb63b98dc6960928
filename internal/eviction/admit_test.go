package eviction

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

func TestAdmit(t *testing.T) {
	tolerating := pod("tolerating", 0, nil, nil)
	tolerating.Spec.Tolerations = []v1.Toleration{{Key: v1.TaintNodeMemoryPressure, Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoSchedule}}
	memory := []v1.NodeConditionType{v1.NodeMemoryPressure}
	disk := []v1.NodeConditionType{v1.NodeDiskPressure}
	both := []v1.NodeConditionType{v1.NodeDiskPressure, v1.NodeMemoryPressure}
	systemCritical := pod("critical", 0, nil, nil)
	systemCritical.Spec.Priority = ptr.To[int32](2000001000)
	tests := []struct {
		name       string
		pod        *v1.Pod
		critical   bool
		conditions []v1.NodeConditionType
		qos        v1.PodQOSClass
		want       string // "" admitted, else the message
	}{
		{"no pressure", pod("a", 0, nil, nil), false, nil, v1.PodQOSBestEffort, ""},
		{"BestEffort under memory pressure", pod("a", 0, nil, nil), false, memory, v1.PodQOSBestEffort, "The node had condition: [MemoryPressure]. "},
		{"Burstable under memory pressure", pod("a", 0, nil, nil), false, memory, v1.PodQOSBurstable, ""},
		{"BestEffort tolerating the memory-pressure taint", tolerating, false, memory, v1.PodQOSBestEffort, ""},
		{"Guaranteed under disk pressure", pod("a", 0, nil, nil), false, disk, v1.PodQOSGuaranteed, "The node had condition: [DiskPressure]. "},
		{"Burstable under memory and disk pressure", pod("a", 0, nil, nil), false, both, v1.PodQOSBurstable, "The node had condition: [DiskPressure MemoryPressure]. "},
		{"static or mirror pod under disk pressure", pod("a", 0, nil, nil), true, disk, v1.PodQOSBestEffort, ""},
		{"system-critical priority under disk pressure", systemCritical, IsCritical(systemCritical, false), disk, v1.PodQOSBestEffort, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ok, reason, msg := Admit(tt.pod, tt.critical, tt.conditions, tt.qos)
			if ok != (tt.want == "") || msg != tt.want || (!ok && reason != "Evicted") {
				t.Errorf("Admit = %v %q %q, want %q", ok, reason, msg, tt.want)
			}
		})
	}
}
