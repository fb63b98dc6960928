package cli

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

var now = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func ago(d time.Duration) metav1.Time { return metav1.NewTime(now.Add(-d)) }

// States and statuses for the table below.
var (
	running = v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: ago(time.Hour)}}
	waiting = func(reason string) v1.ContainerState {
		return v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: reason}}
	}
	terminated = func(reason string, code int32) v1.ContainerState {
		return v1.ContainerState{Terminated: &v1.ContainerStateTerminated{Reason: reason, ExitCode: code}}
	}
	crashedAgo = func(d time.Duration) v1.ContainerState {
		return v1.ContainerState{Terminated: &v1.ContainerStateTerminated{Reason: "Error", ExitCode: 1, FinishedAt: ago(d)}}
	}
)

func cs(name string, state v1.ContainerState, ready bool, restarts int32, last v1.ContainerState) v1.ContainerStatus {
	return v1.ContainerStatus{Name: name, State: state, Ready: ready, RestartCount: restarts, LastTerminationState: last}
}

// pod builds a pod created 3h ago with one container per status given (named after them)
// and init containers named after the init statuses.
func pod(phase v1.PodPhase, inits []v1.ContainerStatus, statuses ...v1.ContainerStatus) *v1.Pod {
	p := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default", CreationTimestamp: ago(3 * time.Hour)},
		Status:     v1.PodStatus{Phase: phase, InitContainerStatuses: inits, ContainerStatuses: statuses},
	}
	for _, s := range inits {
		p.Spec.InitContainers = append(p.Spec.InitContainers, v1.Container{Name: s.Name})
	}
	for _, s := range statuses {
		p.Spec.Containers = append(p.Spec.Containers, v1.Container{Name: s.Name})
	}
	if len(statuses) == 0 {
		p.Spec.Containers = []v1.Container{{Name: "app"}}
	}
	return p
}

func withConditions(p *v1.Pod, conds ...v1.PodCondition) *v1.Pod {
	p.Status.Conditions = conds
	return p
}

func deleted(p *v1.Pod) *v1.Pod {
	p.DeletionTimestamp = ptr.To(ago(time.Minute))
	return p
}

var (
	readyTrue       = v1.PodCondition{Type: v1.PodReady, Status: v1.ConditionTrue}
	initializedTrue = v1.PodCondition{Type: v1.PodInitialized, Status: v1.ConditionTrue}
	none            = v1.ContainerState{}
)

func TestPrintPod(t *testing.T) {
	sidecar := pod(v1.PodRunning,
		[]v1.ContainerStatus{{Name: "proxy", State: running, Ready: true, Started: ptr.To(true), RestartCount: 1,
			LastTerminationState: crashedAgo(30 * time.Second)}},
		cs("app", running, true, 0, none))
	sidecar.Spec.InitContainers[0].RestartPolicy = ptr.To(v1.ContainerRestartPolicyAlways)

	evicted := pod(v1.PodFailed, nil)
	evicted.Status.Reason = "Evicted"
	lost := deleted(pod(v1.PodRunning, nil, cs("app", running, true, 0, none)))
	lost.Status.Reason = "NodeLost"

	cases := []struct {
		name                    string
		pod                     *v1.Pod
		ready, status, restarts string
	}{
		{"pending, no status yet", pod(v1.PodPending, nil), "0/1", "Pending", "0"},
		{"container creating", pod(v1.PodPending, nil, cs("app", waiting("ContainerCreating"), false, 0, none)), "0/1", "ContainerCreating", "0"},
		{"first init container running", pod(v1.PodPending,
			[]v1.ContainerStatus{cs("i1", running, false, 0, none), cs("i2", waiting("PodInitializing"), false, 0, none)},
			cs("app", waiting("PodInitializing"), false, 0, none)), "0/1", "Init:0/2", "0"},
		{"second init container running", pod(v1.PodPending,
			[]v1.ContainerStatus{cs("i1", terminated("Completed", 0), false, 0, none), cs("i2", running, false, 0, none)},
			cs("app", waiting("PodInitializing"), false, 0, none)), "0/1", "Init:1/2", "0"},
		{"init crash loop", pod(v1.PodPending,
			[]v1.ContainerStatus{cs("i1", waiting("CrashLoopBackOff"), false, 3, crashedAgo(10*time.Second))},
			cs("app", waiting("PodInitializing"), false, 0, none)), "0/1", "Init:CrashLoopBackOff", "3 (10s ago)"},
		{"init error", pod(v1.PodPending,
			[]v1.ContainerStatus{cs("i1", terminated("Error", 1), false, 0, none)},
			cs("app", waiting("PodInitializing"), false, 0, none)), "0/1", "Init:Error", "0"},
		{"init exit code", pod(v1.PodPending,
			[]v1.ContainerStatus{cs("i1", terminated("", 2), false, 0, none)},
			cs("app", waiting("PodInitializing"), false, 0, none)), "0/1", "Init:ExitCode:2", "0"},
		{"pod initializing", pod(v1.PodPending,
			[]v1.ContainerStatus{cs("i1", terminated("Completed", 0), false, 0, none)},
			cs("app", waiting("PodInitializing"), false, 0, none)), "0/1", "PodInitializing", "0"},
		{"running", pod(v1.PodRunning, nil, cs("app", running, true, 0, none)), "1/1", "Running", "0"},
		{"running, not ready", pod(v1.PodRunning, nil, cs("app", running, false, 0, none), cs("b", running, true, 0, none)), "1/2", "Running", "0"},
		{"crash loop", pod(v1.PodRunning, nil, cs("app", waiting("CrashLoopBackOff"), false, 5, crashedAgo(2*time.Minute))),
			"0/1", "CrashLoopBackOff", "5 (2m ago)"},
		{"completed", pod(v1.PodSucceeded, nil, cs("app", terminated("Completed", 0), false, 0, none)), "0/1", "Completed", "0"},
		{"error", pod(v1.PodFailed, nil, cs("app", terminated("Error", 1), false, 0, none)), "0/1", "Error", "0"},
		{"oom killed", pod(v1.PodRunning, nil, cs("app", terminated("OOMKilled", 137), false, 1, crashedAgo(5*time.Second))),
			"0/1", "OOMKilled", "1 (5s ago)"},
		{"signal", pod(v1.PodFailed, nil, cs("app", v1.ContainerState{Terminated: &v1.ContainerStateTerminated{Signal: 9, ExitCode: 137}}, false, 0, none)),
			"0/1", "Signal:9", "0"},
		{"exit code", pod(v1.PodFailed, nil, cs("app", terminated("", 3), false, 0, none)), "0/1", "ExitCode:3", "0"},
		{"image pull error", pod(v1.PodPending, nil, cs("app", waiting("ErrImagePull"), false, 0, none)), "0/1", "ErrImagePull", "0"},
		{"image pull back-off", pod(v1.PodPending, nil, cs("app", waiting("ImagePullBackOff"), false, 0, none)), "0/1", "ImagePullBackOff", "0"},
		{"terminating", deleted(pod(v1.PodRunning, nil, cs("app", running, true, 0, none))), "1/1", "Terminating", "0"},
		{"deleted but succeeded", deleted(pod(v1.PodSucceeded, nil, cs("app", terminated("Completed", 0), false, 0, none))), "0/1", "Completed", "0"},
		{"node lost", lost, "1/1", "Unknown", "0"},
		{"completed container, another running, pod not ready", pod(v1.PodRunning, nil,
			cs("a", terminated("Completed", 0), false, 0, none), cs("b", running, true, 0, none)), "1/2", "NotReady", "0"},
		{"completed container, another running, pod ready", withConditions(pod(v1.PodRunning, nil,
			cs("a", terminated("Completed", 0), false, 0, none), cs("b", running, true, 0, none)), readyTrue), "1/2", "Running", "0"},
		{"completed container, another failed", pod(v1.PodFailed, nil,
			cs("a", terminated("Completed", 0), false, 0, none), cs("b", terminated("Error", 1), false, 0, none)), "0/2", "Error", "0"},
		{"sidecar counts in READY, its restarts only", sidecar, "2/2", "Running", "1 (30s ago)"},
		// Initialized: the containers are counted (READY, RESTARTS without the init's), but a
		// running container does not override the init reason, as in kubectl.
		{"init failed but pod initialized", withConditions(pod(v1.PodRunning,
			[]v1.ContainerStatus{cs("i1", terminated("Error", 1), false, 2, crashedAgo(time.Hour))},
			cs("app", running, true, 0, none)), initializedTrue), "1/1", "Init:Error", "0"},
		{"evicted", evicted, "0/1", "Evicted", "0"},
		{"scheduling gated", withConditions(pod(v1.PodPending, nil),
			v1.PodCondition{Type: v1.PodScheduled, Status: v1.ConditionFalse, Reason: v1.PodReasonSchedulingGated}), "0/1", "SchedulingGated", "0"},
		{"restarts without a termination time", pod(v1.PodRunning, nil, cs("app", running, true, 4, none)), "1/1", "Running", "4"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := printPod(tc.pod, now)
			if r.ready != tc.ready || r.status != tc.status || r.restarts != tc.restarts {
				t.Errorf("READY STATUS RESTARTS = %q %q %q, want %q %q %q", r.ready, r.status, r.restarts, tc.ready, tc.status, tc.restarts)
			}
			if r.age != "3h" {
				t.Errorf("AGE %q, want 3h", r.age)
			}
		})
	}
}

func TestPrintPodWideColumns(t *testing.T) {
	p := pod(v1.PodRunning, nil, cs("app", running, true, 0, none))
	r := printPod(p, now)
	if r.ip != "<none>" || r.node != "<none>" || r.nominatedNode != "<none>" || r.readinessGates != "<none>" {
		t.Errorf("empty wide columns: %+v", r)
	}
	p.Status.PodIPs = []v1.PodIP{{IP: "10.88.0.5"}, {IP: "fd00::5"}}
	p.Spec.NodeName = "node-1"
	p.Status.NominatedNodeName = "node-2"
	p.Spec.ReadinessGates = []v1.PodReadinessGate{{ConditionType: "a"}, {ConditionType: "b"}}
	p.Status.Conditions = []v1.PodCondition{{Type: "a", Status: v1.ConditionTrue}, {Type: "b", Status: v1.ConditionFalse}}
	r = printPod(p, now)
	if r.ip != "10.88.0.5" || r.node != "node-1" || r.nominatedNode != "node-2" || r.readinessGates != "1/2" {
		t.Errorf("wide columns: %+v", r)
	}
	p.CreationTimestamp = metav1.Time{}
	if r := printPod(p, now); r.age != "<unknown>" {
		t.Errorf("AGE without creation time %q", r.age)
	}
}
