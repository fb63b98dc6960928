package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// cgroupValue reads a cgroup file from inside a container (its own cgroup, as runc mounts it).
func (cn *clusterNode) cgroupValue(t *testing.T, pod, ctr, file string) string {
	t.Helper()
	return strings.TrimSpace(cn.cp.kubectl(t, "exec", pod, "-c", ctr, "--", "cat", file))
}

// waitCgroup polls a container's cgroup file until it holds want.
func (cn *clusterNode) waitCgroup(t *testing.T, pod, ctr, file, want string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	got := ""
	for time.Now().Before(deadline) {
		if got = cn.cgroupValue(t, pod, ctr, file); got == want {
			return
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Fatalf("%s of container %s: %q after %v, want %q", file, ctr, got, timeout, want)
}

func (cn *clusterNode) resize(t *testing.T, pod, patch string) {
	t.Helper()
	if _, err := cn.cp.client.CoreV1().Pods("default").Patch(context.Background(), pod, types.StrategicMergePatchType,
		[]byte(patch), metav1.PatchOptions{}, "resize"); err != nil {
		t.Fatalf("resize %s: %v", pod, err)
	}
}

func condition(p *v1.Pod, ct v1.PodConditionType) *v1.PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == ct {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

// resized is the status of a pod whose resize is done: observed, no resize condition.
func resized(p *v1.Pod) bool {
	return p != nil && p.Status.ObservedGeneration >= p.Generation && condition(p, v1.PodResizePending) == nil &&
		condition(p, v1.PodResizeInProgress) == nil && isRunningReady(p)
}

const (
	cpuQuota = "/sys/fs/cgroup/cpu/cpu.cfs_quota_us"
	cpuShare = "/sys/fs/cgroup/cpu/cpu.shares"
	memLimit = "/sys/fs/cgroup/memory/memory.limit_in_bytes"
)

// Issue 13: in-place pod resize. A resize through the resize subresource reaches the running
// container's cgroup (CRI UpdateContainerResources) without a restart, and the status shows
// what is applied; resizePolicy RestartContainer restarts the container; the allocation
// survives a SIGKILL of nodelet without being applied a second time; a resize the node cannot
// fit waits as PodResizePending/Deferred, the pod undisturbed.
func TestClusterInPlaceResize(t *testing.T) {
	cn := startClusterNode(t)
	cn.waitNodeReady(60 * time.Second)
	name := cn.applyPod(t, "resize", `  containers:
  - name: app
    image: docker.io/library/busybox:1.35
    command: [sleep, '3600']
    resources:
      requests: {cpu: 100m, memory: 32Mi}
      limits: {cpu: 200m, memory: 64Mi}
  - name: restarter
    image: docker.io/library/busybox:1.35
    command: [sleep, '3600']
    resizePolicy:
    - {resourceName: memory, restartPolicy: RestartContainer}
    resources:
      requests: {cpu: 50m, memory: 16Mi}
      limits: {cpu: 100m, memory: 32Mi}
`)
	pod := cn.waitAPIPod("default", name, 90*time.Second, "Running", func(p *v1.Pod) bool { return p != nil && isRunningReady(p) })
	appID := containerStatus(pod, "app").ContainerID
	if got := cn.cgroupValue(t, name, "app", cpuQuota); got != "20000" {
		t.Fatalf("before the resize: cpu.cfs_quota_us %q, want 20000", got)
	}

	// cpu and memory of app, in place (resizePolicy NotRequired, the default).
	start := time.Now()
	cn.resize(t, name, `{"spec":{"containers":[{"name":"app","resources":{"requests":{"cpu":"150m","memory":"48Mi"},"limits":{"cpu":"300m","memory":"96Mi"}}}]}}`)
	cn.waitCgroup(t, name, "app", cpuQuota, "30000", 20*time.Second)
	cn.waitCgroup(t, name, "app", memLimit, "100663296", 10*time.Second)
	cn.waitCgroup(t, name, "app", cpuShare, "153", 10*time.Second)
	t.Logf("cgroups of app resized %v after the patch", time.Since(start).Round(100*time.Millisecond))
	pod = cn.waitAPIPod("default", name, 30*time.Second, "resize done", resized)
	app := containerStatus(pod, "app")
	if app.ContainerID != appID || app.RestartCount != 0 {
		t.Errorf("app was restarted by a NotRequired resize: %+v", app)
	}
	want := v1.ResourceRequirements{
		Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("150m"), v1.ResourceMemory: resource.MustParse("48Mi")},
		Limits:   v1.ResourceList{v1.ResourceCPU: resource.MustParse("300m"), v1.ResourceMemory: resource.MustParse("96Mi")}}
	if app.Resources == nil || !sameResources(*app.Resources, want) || !sameList(app.AllocatedResources, want.Requests) {
		t.Errorf("app status resources %v, allocated %v; want %v", app.Resources, app.AllocatedResources, want)
	}
	out := cn.cp.kubectl(t, "get", "pod", name, "-o", "jsonpath={.status.containerStatuses[?(@.name=='app')].resources.limits.memory}")
	if out != "96Mi" {
		t.Errorf("kubectl get pod: app's memory limit %q, want 96Mi", out)
	}

	// memory of restarter: its resizePolicy restarts it.
	cn.resize(t, name, `{"spec":{"containers":[{"name":"restarter","resources":{"requests":{"memory":"24Mi"},"limits":{"memory":"48Mi"}}}]}}`)
	pod = cn.waitAPIPod("default", name, 60*time.Second, "restarter restarted and resize done", func(p *v1.Pod) bool {
		cs := containerStatus(p, "restarter")
		return resized(p) && cs != nil && cs.RestartCount == 1 && cs.State.Running != nil
	})
	if got := cn.cgroupValue(t, name, "restarter", memLimit); got != "50331648" {
		t.Errorf("restarter's memory limit after its restart: %s, want 50331648", got)
	}
	if c := containerStatus(pod, "app"); c.ContainerID != appID {
		t.Errorf("app was restarted by restarter's resize")
	}

	// SIGKILL nodelet and restart it: the resize is neither applied again nor forgotten.
	for _, f := range []string{"allocated_pods_state", "actuated_pods_state"} {
		data, err := os.ReadFile(filepath.Join(cn.rootDir, f))
		if err != nil || !strings.Contains(string(data), string(pod.UID)) {
			t.Errorf("checkpoint %s: %v, want the pod's record", f, err)
		}
	}
	cn.kill9()
	cn.start()
	cn.waitNodeReady(60 * time.Second)
	time.Sleep(5 * time.Second) // a few syncs of the adopted pod
	pod = cn.waitAPIPod("default", name, 30*time.Second, "resize done", resized)
	if c := containerStatus(pod, "app"); c.ContainerID != appID || c.RestartCount != 0 || !sameResources(*c.Resources, want) {
		t.Errorf("after the restart of nodelet, app: %+v", c)
	}
	if n := len(cn.logs.matching("Resized container")); n != 0 {
		t.Errorf("after the restart of nodelet the resize was applied again (%d times)", n)
	}
	if got := cn.cgroupValue(t, name, "app", cpuQuota); got != "30000" {
		t.Errorf("after the restart of nodelet: cpu.cfs_quota_us %q, want 30000", got)
	}

	// A resize the node cannot fit next to another pod: Deferred (upstream 1.37's reason for
	// any admission refusal but an infeasible one), nothing applied; it goes through once the
	// other pod is gone.
	node, err := cn.cp.client.CoreV1().Nodes().Get(context.Background(), cn.name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	half := resource.NewQuantity(node.Status.Allocatable.Memory().Value()*6/10, resource.BinarySI).String()
	hog := cn.applyPod(t, "hog", "  containers:\n  - name: c\n    image: docker.io/library/busybox:1.35\n    command: [sleep, '3600']\n"+
		"    resources: {requests: {memory: "+half+"}}\n")
	cn.waitAPIPod("default", hog, 90*time.Second, "Running", func(p *v1.Pod) bool { return p != nil && isRunningReady(p) })
	cn.resize(t, name, `{"spec":{"containers":[{"name":"app","resources":{"requests":{"memory":"`+half+`"},"limits":{"memory":"`+half+`"}}}]}}`)
	pod = cn.waitAPIPod("default", name, 30*time.Second, "PodResizePending", func(p *v1.Pod) bool {
		return p != nil && condition(p, v1.PodResizePending) != nil
	})
	if c := condition(pod, v1.PodResizePending); c.Reason != v1.PodReasonDeferred || !strings.Contains(c.Message, "Node didn't have enough resource: memory") ||
		c.ObservedGeneration != pod.Generation {
		t.Errorf("PodResizePending %+v, want Deferred naming memory at generation %d", c, pod.Generation)
	}
	if c := containerStatus(pod, "app"); c.ContainerID != appID || !sameResources(*c.Resources, want) || !sameList(c.AllocatedResources, want.Requests) {
		t.Errorf("a deferred resize changed app: %+v", c)
	}
	if !cn.hasAPIEvent(name, "ResizeDeferred") {
		t.Error("no ResizeDeferred event")
	}
	if err := cn.cp.client.CoreV1().Pods("default").Delete(context.Background(), hog, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	pod = cn.waitAPIPod("default", name, 60*time.Second, "the deferred resize done once the other pod went", resized)
	if c := containerStatus(pod, "app"); c.ContainerID != appID || !c.AllocatedResources.Memory().Equal(resource.MustParse(half)) {
		t.Errorf("after the other pod went, app: %+v", c)
	}

	// An impossible value: a memory limit below what the container uses. The runtime refuses
	// it; PodResizeInProgress says why (reason Error), the containers keep running.
	restarterID := containerStatus(pod, "restarter").ContainerID
	cn.resize(t, name, `{"spec":{"containers":[{"name":"app","resources":{"requests":{"memory":"64Ki"},"limits":{"memory":"64Ki"}}}]}}`)
	pod = cn.waitAPIPod("default", name, 30*time.Second, "PodResizeInProgress with an error", func(p *v1.Pod) bool {
		c := condition(p, v1.PodResizeInProgress)
		return c != nil && c.Reason == v1.PodReasonError
	})
	if c := condition(pod, v1.PodResizeInProgress); !strings.Contains(c.Message, `failed to update memory of container "app"`) {
		t.Errorf("PodResizeInProgress %+v, want the runtime's refusal naming the container", c)
	}
	t.Logf("impossible resize: %s", condition(pod, v1.PodResizeInProgress).Message)
	if !cn.hasAPIEvent(name, "ResizeError") {
		t.Error("no ResizeError event")
	}
	if a, r := containerStatus(pod, "app"), containerStatus(pod, "restarter"); a.ContainerID != appID || a.State.Running == nil ||
		r.ContainerID != restarterID || r.State.Running == nil {
		t.Errorf("a refused resize disturbed the containers: %+v %+v", a, r)
	}
	cn.resize(t, name, `{"spec":{"containers":[{"name":"app","resources":{"requests":{"memory":"48Mi"},"limits":{"memory":"96Mi"}}}]}}`)
	cn.waitAPIPod("default", name, 60*time.Second, "resize done after the impossible one was taken back", resized)
	cn.waitCgroup(t, name, "app", memLimit, "100663296", 10*time.Second)
}

// hasAPIEvent reports whether the API server holds an event with the reason for the pod.
func (cn *clusterNode) hasAPIEvent(pod, reason string) bool {
	evs, err := cn.cp.client.CoreV1().Events("default").List(context.Background(), metav1.ListOptions{FieldSelector: "involvedObject.name=" + pod})
	if err != nil {
		return false
	}
	for _, e := range evs.Items {
		if e.Reason == reason {
			return true
		}
	}
	return false
}

func sameList(a, b v1.ResourceList) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || !v.Equal(w) {
			return false
		}
	}
	return true
}

func sameResources(a, b v1.ResourceRequirements) bool {
	return sameList(a.Requests, b.Requests) && sameList(a.Limits, b.Limits)
}
