package status

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func TestQOSClass(t *testing.T) {
	type res = v1.ResourceRequirements
	cases := []struct {
		name       string
		containers []res
		init       []res
		podLevel   *res
		recorded   v1.PodQOSClass
		want       v1.PodQOSClass
	}{
		{name: "nothing set", containers: []res{{}, {}}, want: v1.PodQOSBestEffort},
		{name: "equal requests and limits", containers: []res{resources("500m", "500m", "1Gi", "1Gi")}, want: v1.PodQOSGuaranteed},
		{name: "guaranteed init and main", init: []res{resources("1", "1", "1Gi", "1Gi")},
			containers: []res{resources("2", "2", "2Gi", "2Gi")}, want: v1.PodQOSGuaranteed},
		{name: "limits above requests", containers: []res{resources("500m", "1", "1Gi", "1Gi")}, want: v1.PodQOSBurstable},
		{name: "cpu only", containers: []res{resources("1", "1", "", "")}, want: v1.PodQOSBurstable},
		{name: "requests only", containers: []res{resources("1", "", "1Gi", "")}, want: v1.PodQOSBurstable},
		{name: "guaranteed and best effort mixed", containers: []res{resources("1", "1", "1Gi", "1Gi"), {}}, want: v1.PodQOSBurstable},
		{name: "best effort init, guaranteed main", init: []res{{}}, containers: []res{resources("1", "1", "1Gi", "1Gi")}, want: v1.PodQOSBurstable},
		{name: "only ephemeral storage", containers: []res{{Requests: v1.ResourceList{v1.ResourceEphemeralStorage: resource.MustParse("1Gi")}}}, want: v1.PodQOSBestEffort},
		{name: "pod-level guaranteed wins", containers: []res{{}}, podLevel: ptr(resources("1", "1", "1Gi", "1Gi")), want: v1.PodQOSGuaranteed},
		{name: "pod-level burstable wins", containers: []res{resources("1", "1", "1Gi", "1Gi")}, podLevel: ptr(resources("1", "2", "", "")), want: v1.PodQOSBurstable},
		{name: "pod-level without cpu, memory or hugepages is ignored",
			containers: []res{resources("1", "1", "1Gi", "1Gi")},
			podLevel:   &res{Requests: v1.ResourceList{v1.ResourceEphemeralStorage: resource.MustParse("1Gi")}}, want: v1.PodQOSGuaranteed},
		{name: "recorded class is kept", containers: []res{{}}, recorded: v1.PodQOSGuaranteed, want: v1.PodQOSGuaranteed},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pod := podOf(v1.RestartPolicyAlways)
			for i, r := range tc.init {
				pod.Spec.InitContainers = append(pod.Spec.InitContainers, v1.Container{Name: "i" + string(rune('0'+i)), Resources: r})
			}
			for i, r := range tc.containers {
				pod.Spec.Containers = append(pod.Spec.Containers, v1.Container{Name: "c" + string(rune('0'+i)), Resources: r})
			}
			pod.Spec.Resources = tc.podLevel
			pod.Status.QOSClass = tc.recorded
			if got := QOSClass(pod); got != tc.want {
				t.Errorf("QOSClass = %s, want %s", got, tc.want)
			}
		})
	}
}
