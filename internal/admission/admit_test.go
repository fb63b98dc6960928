package admission

import (
	goruntime "runtime"
	"testing"

	v1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/nodelet/nodelet/internal/podconfig"
)

const nodeName = "node-a"

func rl(pairs ...string) v1.ResourceList {
	out := v1.ResourceList{}
	for i := 0; i < len(pairs); i += 2 {
		out[v1.ResourceName(pairs[i])] = resource.MustParse(pairs[i+1])
	}
	return out
}

func testNode(mods ...func(*v1.Node)) *v1.Node {
	n := &v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: nodeName, Labels: map[string]string{
			v1.LabelHostname: nodeName, v1.LabelOSStable: goruntime.GOOS, "zone": "a",
		}},
		Status: v1.NodeStatus{Allocatable: rl("cpu", "2", "memory", "4Gi", "ephemeral-storage", "10Gi", "pods", "3",
			"example.com/gpu", "1", "hugepages-2Mi", "0")},
	}
	for _, m := range mods {
		m(n)
	}
	return n
}

// testPod returns a pod with one container requesting the given resources.
func testPod(name string, requests v1.ResourceList, mods ...func(*v1.Pod)) *v1.Pod {
	p := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID(name + "-uid")},
		Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c", Image: "busybox",
			Resources: v1.ResourceRequirements{Requests: requests}}}},
	}
	for _, m := range mods {
		m(p)
	}
	return p
}

func phase(ph v1.PodPhase) func(*v1.Pod) { return func(p *v1.Pod) { p.Status.Phase = ph } }

func static(p *v1.Pod) {
	p.Annotations = map[string]string{podconfig.ConfigSourceAnnotationKey: podconfig.FileSource}
}

func hostPorts(ports ...v1.ContainerPort) func(*v1.Pod) {
	return func(p *v1.Pod) { p.Spec.Containers[0].Ports = ports }
}

func TestAdmit(t *testing.T) {
	tests := []struct {
		name     string
		node     *v1.Node
		pod      *v1.Pod
		admitted []*v1.Pod
		want     Result
	}{
		{name: "empty node", pod: testPod("new", rl("cpu", "1")), want: Result{Admit: true}},
		{name: "best-effort pod", pod: testPod("new", nil), admitted: []*v1.Pod{testPod("a", rl("cpu", "2", "memory", "4Gi"))}, want: Result{Admit: true}},
		{
			name: "fits exactly", pod: testPod("new", rl("cpu", "1", "memory", "3Gi", "ephemeral-storage", "4Gi")),
			admitted: []*v1.Pod{testPod("a", rl("cpu", "1", "memory", "1Gi", "ephemeral-storage", "6Gi"))},
			want:     Result{Admit: true},
		},
		{
			name: "cpu", pod: testPod("new", rl("cpu", "1001m")), admitted: []*v1.Pod{testPod("a", rl("cpu", "1"))},
			want: Result{Reason: "OutOfcpu", Message: "Node didn't have enough resource: cpu, requested: 1001, used: 1000, capacity: 2000"},
		},
		{
			name: "memory", pod: testPod("new", rl("memory", "2Gi")), admitted: []*v1.Pod{testPod("a", rl("memory", "3Gi"))},
			want: Result{Reason: "OutOfmemory", Message: "Node didn't have enough resource: memory, requested: 2147483648, used: 3221225472, capacity: 4294967296"},
		},
		{
			name: "ephemeral-storage", pod: testPod("new", rl("ephemeral-storage", "11Gi")),
			want: Result{Reason: "OutOfephemeral-storage", Message: "Node didn't have enough resource: ephemeral-storage, requested: 11811160064, used: 0, capacity: 10737418240"},
		},
		{
			name: "pods", pod: testPod("new", nil),
			admitted: []*v1.Pod{testPod("a", nil), testPod("b", nil), testPod("c", nil)},
			want:     Result{Reason: "OutOfpods", Message: "Node didn't have enough resource: pods, requested: 1, used: 3, capacity: 3"},
		},
		{
			name: "the pods count is checked first", pod: testPod("new", rl("cpu", "3")),
			admitted: []*v1.Pod{testPod("a", nil), testPod("b", nil), testPod("c", nil)},
			want:     Result{Reason: "OutOfpods", Message: "Node didn't have enough resource: pods, requested: 1, used: 3, capacity: 3"},
		},
		{
			name: "terminal admitted pods are not counted", pod: testPod("new", rl("cpu", "2")),
			admitted: []*v1.Pod{
				testPod("done", rl("cpu", "2"), phase(v1.PodSucceeded)),
				testPod("failed", rl("cpu", "2"), phase(v1.PodFailed)),
				testPod("gone", rl("cpu", "2"), phase(v1.PodFailed)),
				testPod("running", nil, phase(v1.PodRunning)),
			},
			want: Result{Admit: true},
		},
		{
			name: "the pod itself among the admitted is not counted", pod: testPod("new", rl("cpu", "2")),
			admitted: []*v1.Pod{testPod("new", rl("cpu", "2"))},
			want:     Result{Admit: true},
		},
		{
			name: "init containers: the largest one counts",
			pod: testPod("new", rl("cpu", "500m"), func(p *v1.Pod) {
				p.Spec.InitContainers = []v1.Container{{Name: "init", Resources: v1.ResourceRequirements{Requests: rl("cpu", "3")}}}
			}),
			want: Result{Reason: "OutOfcpu", Message: "Node didn't have enough resource: cpu, requested: 3000, used: 0, capacity: 2000"},
		},
		{
			name: "sidecars add to the containers",
			pod: testPod("new", rl("cpu", "1500m"), func(p *v1.Pod) {
				p.Spec.InitContainers = []v1.Container{{Name: "proxy", RestartPolicy: ptr.To(v1.ContainerRestartPolicyAlways),
					Resources: v1.ResourceRequirements{Requests: rl("cpu", "600m")}}}
			}),
			want: Result{Reason: "OutOfcpu", Message: "Node didn't have enough resource: cpu, requested: 2100, used: 0, capacity: 2000"},
		},
		{
			name: "overhead counts",
			pod:  testPod("new", rl("memory", "3Gi"), func(p *v1.Pod) { p.Spec.Overhead = rl("memory", "512Mi") }),
			admitted: []*v1.Pod{testPod("a", rl("memory", "512Mi"), func(p *v1.Pod) {
				p.Spec.Overhead = rl("memory", "1Mi")
			})},
			want: Result{Reason: "OutOfmemory", Message: "Node didn't have enough resource: memory, requested: 3758096384, used: 537919488, capacity: 4294967296"},
		},
		{
			name: "pod-level requests",
			pod: testPod("new", rl("cpu", "100m"), func(p *v1.Pod) {
				p.Spec.Resources = &v1.ResourceRequirements{Requests: rl("cpu", "2500m")}
			}),
			want: Result{Reason: "OutOfcpu", Message: "Node didn't have enough resource: cpu, requested: 2500, used: 0, capacity: 2000"},
		},
		{
			name: "extended resource the node has", pod: testPod("new", rl("example.com/gpu", "2")),
			want: Result{Reason: "OutOfexample.com/gpu", Message: "Node didn't have enough resource: example.com/gpu, requested: 2, used: 0, capacity: 1"},
		},
		{
			name: "huge pages", pod: testPod("new", rl("hugepages-2Mi", "4Mi", "memory", "1Gi")),
			want: Result{Reason: "OutOfhugepages-2Mi", Message: "Node didn't have enough resource: hugepages-2Mi, requested: 4194304, used: 0, capacity: 0"},
		},
		{name: "extended resource the node does not know is not checked", pod: testPod("new", rl("example.com/fpga", "1")), want: Result{Admit: true}},
		{name: "nor for a static pod", pod: testPod("new", rl("example.com/fpga", "1"), static), want: Result{Admit: true}},
		{
			name: "nodeSelector mismatch", pod: testPod("new", nil, func(p *v1.Pod) { p.Spec.NodeSelector = map[string]string{"zone": "b"} }),
			want: Result{Reason: "NodeAffinity", Message: "Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector"},
		},
		{name: "nodeSelector match", pod: testPod("new", nil, func(p *v1.Pod) { p.Spec.NodeSelector = map[string]string{"zone": "a"} }), want: Result{Admit: true}},
		{
			name: "required node affinity mismatch",
			pod: testPod("new", nil, func(p *v1.Pod) {
				p.Spec.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{
					NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchExpressions: []v1.NodeSelectorRequirement{
						{Key: "zone", Operator: v1.NodeSelectorOpNotIn, Values: []string{"a"}},
					}}},
				}}}
			}),
			want: Result{Reason: "NodeAffinity", Message: "Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector"},
		},
		{
			name: "required node affinity on the node's name",
			pod: testPod("new", nil, func(p *v1.Pod) {
				p.Spec.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{
					NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchFields: []v1.NodeSelectorRequirement{
						{Key: "metadata.name", Operator: v1.NodeSelectorOpIn, Values: []string{nodeName}},
					}}},
				}}}
			}),
			want: Result{Admit: true},
		},
		{
			name: "nodeName mismatch", pod: testPod("new", nil, func(p *v1.Pod) { p.Spec.NodeName = "node-b" }),
			want: Result{Reason: "NodeName", Message: "Predicate NodeName failed: node(s) didn't match the requested node name"},
		},
		{name: "nodeName match", pod: testPod("new", nil, func(p *v1.Pod) { p.Spec.NodeName = nodeName }), want: Result{Admit: true}},
		{
			name:     "host port taken on all addresses",
			pod:      testPod("new", nil, hostPorts(v1.ContainerPort{ContainerPort: 80, HostPort: 8080, HostIP: "10.0.0.5"})),
			admitted: []*v1.Pod{testPod("a", nil, hostPorts(v1.ContainerPort{ContainerPort: 80, HostPort: 8080}))},
			want:     Result{Reason: "NodePorts", Message: "Predicate NodePorts failed: node(s) didn't have free ports for the requested pod ports"},
		},
		{
			name: "host port taken by a sidecar",
			pod:  testPod("new", nil, hostPorts(v1.ContainerPort{ContainerPort: 80, HostPort: 9000})),
			admitted: []*v1.Pod{testPod("a", nil, func(p *v1.Pod) {
				p.Spec.InitContainers = []v1.Container{{Name: "proxy", RestartPolicy: ptr.To(v1.ContainerRestartPolicyAlways),
					Ports: []v1.ContainerPort{{ContainerPort: 1, HostPort: 9000, HostIP: "10.0.0.5"}}}}
			})},
			want: Result{Reason: "NodePorts", Message: "Predicate NodePorts failed: node(s) didn't have free ports for the requested pod ports"},
		},
		{
			name:     "same host port, other protocol or address",
			pod:      testPod("new", nil, hostPorts(v1.ContainerPort{HostPort: 8080, Protocol: v1.ProtocolUDP}, v1.ContainerPort{HostPort: 9090, HostIP: "10.0.0.6"})),
			admitted: []*v1.Pod{testPod("a", nil, hostPorts(v1.ContainerPort{HostPort: 8080}, v1.ContainerPort{HostPort: 9090, HostIP: "10.0.0.5"}))},
			want:     Result{Admit: true},
		},
		{
			name:     "host port of a terminal pod is free",
			pod:      testPod("new", nil, hostPorts(v1.ContainerPort{HostPort: 8080})),
			admitted: []*v1.Pod{testPod("a", nil, hostPorts(v1.ContainerPort{HostPort: 8080}), phase(v1.PodSucceeded))},
			want:     Result{Admit: true},
		},
		{
			name: "NoExecute taint not tolerated", node: testNode(noExecuteTaint), pod: testPod("new", nil),
			want: Result{Reason: "TaintToleration", Message: "Predicate TaintToleration failed: node(s) had taints that the pod didn't tolerate"},
		},
		{
			name: "NoExecute taint tolerated", node: testNode(noExecuteTaint),
			pod: testPod("new", nil, func(p *v1.Pod) {
				p.Spec.Tolerations = []v1.Toleration{{Key: "node.kubernetes.io/unreachable", Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoExecute}}
			}),
			want: Result{Admit: true},
		},
		{name: "NoExecute taint and a static pod", node: testNode(noExecuteTaint), pod: testPod("new", nil, static), want: Result{Admit: true}},
		{
			name: "NoSchedule taints are the scheduler's business",
			node: testNode(func(n *v1.Node) {
				n.Spec.Taints = []v1.Taint{{Key: "node.kubernetes.io/unschedulable", Effect: v1.TaintEffectNoSchedule}}
			}),
			pod: testPod("new", nil), want: Result{Admit: true},
		},
		{
			name: "kubernetes.io/os label", pod: testPod("new", nil, func(p *v1.Pod) { p.Labels = map[string]string{v1.LabelOSStable: "plan9"} }),
			want: Result{Reason: "PodOSSelectorNodeLabelDoesNotMatch", Message: "Failed to admit pod as the `kubernetes.io/os` label doesn't match node label"},
		},
		{
			name: "OS field", pod: testPod("new", nil, func(p *v1.Pod) { p.Spec.OS = &v1.PodOS{Name: "plan9"} }),
			want: Result{Reason: "PodOSNotSupported", Message: "Failed to admit pod as the OS field doesn't match node OS"},
		},
		{name: "OS field matches", pod: testPod("new", nil, func(p *v1.Pod) { p.Spec.OS = &v1.PodOS{Name: v1.OSName(goruntime.GOOS)} }), want: Result{Admit: true}},
		{
			name: "strict supplemental groups on a node without support", pod: testPod("new", nil, strictGroups),
			want: Result{Reason: "SupplementalGroupsPolicyNotSupported", Message: "SupplementalGroupsPolicy=Strict is not supported in this node"},
		},
		{
			name: "strict supplemental groups on a node with support", pod: testPod("new", nil, strictGroups),
			node: testNode(func(n *v1.Node) { n.Status.Features = &v1.NodeFeatures{SupplementalGroupsPolicy: ptr.To(true)} }),
			want: Result{Admit: true},
		},
		{name: "node without allocatable", node: &v1.Node{}, pod: testPod("new", nil), want: Result{Reason: "OutOfpods",
			Message: "Node didn't have enough resource: pods, requested: 1, used: 0, capacity: 0"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			node := tc.node
			if node == nil {
				node = testNode()
			}
			nodeBefore, podBefore := node.DeepCopy(), tc.pod.DeepCopy()
			got := Admit(node, tc.pod, tc.admitted)
			if got != tc.want {
				t.Errorf("Admit() = %+v\n want %+v", got, tc.want)
			}
			if !equalObjects(nodeBefore, node) || !equalObjects(podBefore, tc.pod) {
				t.Error("Admit modified its arguments")
			}
		})
	}
}

func TestAdmitWithoutNode(t *testing.T) {
	want := Result{Reason: "InvalidNodeInfo", Message: "Kubelet cannot get node info."}
	if got := Admit(nil, testPod("new", nil), nil); got != want {
		t.Errorf("Admit(nil node) = %+v, want %+v", got, want)
	}
}

func TestRejectedStatus(t *testing.T) {
	tests := []struct {
		name string
		pod  *v1.Pod
		qos  v1.PodQOSClass
	}{
		{name: "best effort", pod: testPod("p", nil), qos: v1.PodQOSBestEffort},
		{name: "burstable", pod: testPod("p", rl("cpu", "1")), qos: v1.PodQOSBurstable},
		{name: "recorded class kept", pod: testPod("p", nil, func(p *v1.Pod) { p.Status.QOSClass = v1.PodQOSGuaranteed }), qos: v1.PodQOSGuaranteed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := RejectedStatus(tc.pod, "OutOfcpu", "Node didn't have enough resource: cpu, requested: 3000, used: 0, capacity: 2000")
			want := v1.PodStatus{
				Phase: v1.PodFailed, Reason: "OutOfcpu", QOSClass: tc.qos,
				Message: "Pod was rejected: Node didn't have enough resource: cpu, requested: 3000, used: 0, capacity: 2000",
			}
			if !equalObjects(&want, &got) {
				t.Errorf("RejectedStatus() = %+v\n want %+v", got, want)
			}
		})
	}
}

func noExecuteTaint(n *v1.Node) {
	n.Spec.Taints = []v1.Taint{{Key: "node.kubernetes.io/unreachable", Effect: v1.TaintEffectNoExecute}}
}

func strictGroups(p *v1.Pod) {
	p.Spec.SecurityContext = &v1.PodSecurityContext{SupplementalGroupsPolicy: ptr.To(v1.SupplementalGroupsPolicyStrict)}
}

func equalObjects(a, b any) bool { return apiequality.Semantic.DeepEqual(a, b) }
