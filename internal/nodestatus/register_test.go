package nodestatus

import (
	"context"
	"errors"
	goruntime "runtime"
	"testing"
	"testing/synctest"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/utils/clock"
	testingclock "k8s.io/utils/clock/testing"
)

func TestRegisterNewNode(t *testing.T) {
	env := newTestEnv(t, testingclock.NewFakeClock(t0))
	if before := env.m.Node(); before.Name != testNode || before.Labels["role"] != "worker" {
		t.Fatalf("Node() before registration = %+v, want the locally built node", before.ObjectMeta)
	}
	if !env.m.registerWithAPIServer(context.Background()) {
		t.Fatal("registration failed")
	}
	node, err := env.client.CoreV1().Nodes().Get(context.Background(), testNode, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get node: %v", err)
	}
	wantLabels := map[string]string{
		v1.LabelHostname: testNode, v1.LabelOSStable: goruntime.GOOS, v1.LabelArchStable: goruntime.GOARCH,
		betaLabelOS: goruntime.GOOS, betaLabelArch: goruntime.GOARCH, "role": "worker",
	}
	check(t, "labels", wantLabels, node.Labels)
	check(t, "addresses", []v1.NodeAddress{{Type: v1.NodeInternalIP, Address: "10.0.0.5"}, {Type: v1.NodeHostName, Address: testNode}}, node.Status.Addresses)
	if c := condition(node, v1.NodeReady); c.Status != v1.ConditionTrue || c.Reason != "KubeletReady" || !c.LastTransitionTime.Time.Equal(t0) {
		t.Errorf("Ready = %+v", c)
	}
	if got := node.Status.NodeInfo.ContainerRuntimeVersion; got != "containerd://2.4.2" {
		t.Errorf("containerRuntimeVersion = %q", got)
	}
	if got := env.m.Node(); got.UID != testUID {
		t.Errorf("Node() after registration has UID %q, want the API server's %q", got.UID, testUID)
	}
	wantEvents := []string{
		"Node/node-a Normal NodeHasSufficientMemory: Node node-a status is now: NodeHasSufficientMemory",
		"Node/node-a Normal NodeHasNoDiskPressure: Node node-a status is now: NodeHasNoDiskPressure",
		"Node/node-a Normal NodeHasSufficientPID: Node node-a status is now: NodeHasSufficientPID",
	}
	check(t, "events", wantEvents, env.recorder.list())
}

func TestRegisterExistingNode(t *testing.T) {
	existing := &v1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name: testNode, UID: "old-uid",
			Labels: map[string]string{v1.LabelHostname: "stale", "role": "from-admin", "team": "x"},
		},
		Spec: v1.NodeSpec{Taints: []v1.Taint{{Key: "admin", Effect: v1.TaintEffectNoSchedule}}, PodCIDR: "10.244.1.0/24"},
	}
	env := newTestEnv(t, testingclock.NewFakeClock(t0), existing)
	if !env.m.registerWithAPIServer(context.Background()) {
		t.Fatal("registration failed")
	}
	node, err := env.client.CoreV1().Nodes().Get(context.Background(), testNode, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get node: %v", err)
	}
	if node.UID != "old-uid" {
		t.Errorf("UID = %q: the existing node was replaced", node.UID)
	}
	if node.Labels[v1.LabelHostname] != testNode || node.Labels[v1.LabelOSStable] != goruntime.GOOS {
		t.Errorf("default labels not reconciled: %v", node.Labels)
	}
	if node.Labels["role"] != "from-admin" || node.Labels["team"] != "x" {
		t.Errorf("labels others set were changed: %v", node.Labels)
	}
	if node.Annotations[controllerManagedAttachAnnotation] != "true" {
		t.Errorf("annotations = %v", node.Annotations)
	}
	if _, ok := node.Status.Capacity[v1.ResourceCPU]; !ok {
		t.Errorf("capacity not reconciled: %v", node.Status.Capacity)
	}
	check(t, "taints", existing.Spec.Taints, node.Spec.Taints)
	if got := countActions(env.client, "patch", "nodes", "status"); got != 1 {
		t.Errorf("status patches = %d, want 1", got)
	}
	if got := env.m.Node(); got.UID != "old-uid" || got.Spec.PodCIDR != "10.244.1.0/24" {
		t.Errorf("Node() = %+v, want the API server's node", got.ObjectMeta)
	}
}

func TestRegisterExistingNodeUpToDateIsNotPatched(t *testing.T) {
	env := newTestEnv(t, testingclock.NewFakeClock(t0))
	if !env.m.registerWithAPIServer(context.Background()) {
		t.Fatal("first registration failed")
	}
	env.client.ClearActions()
	if !env.m.registerWithAPIServer(context.Background()) { // as after a restart
		t.Fatal("second registration failed")
	}
	if got := countActions(env.client, "patch", "nodes", "status"); got != 0 {
		t.Errorf("status patches = %d, want 0 for an up-to-date node", got)
	}
}

func TestRegisterRetriesWithBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		env := newTestEnv(t, clock.RealClock{})
		failures := 3
		env.client.PrependReactor("create", "nodes", func(clienttesting.Action) (bool, runtime.Object, error) {
			if failures > 0 {
				failures--
				return true, nil, apierrors.NewServiceUnavailable("apiserver is starting")
			}
			return false, nil, nil
		})
		start := time.Now()
		if !env.m.registerWithAPIServer(context.Background()) {
			t.Fatal("registration failed")
		}
		// 100ms + 200ms + 400ms of back-off.
		if got := time.Since(start); got != 700*time.Millisecond {
			t.Errorf("registered after %v, want 700ms", got)
		}
		if got := countActions(env.client, "create", "nodes", ""); got != 4 {
			t.Errorf("creates = %d, want 4", got)
		}
	})
}

func TestRegisterForbiddenCreateFallsBackToGet(t *testing.T) {
	existing := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: testNode, UID: "uid-1"}}
	env := newTestEnv(t, testingclock.NewFakeClock(t0), existing)
	env.client.PrependReactor("create", "nodes", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(v1.Resource("nodes"), testNode, errors.New("no"))
	})
	if !env.m.registerWithAPIServer(context.Background()) {
		t.Fatal("registration failed")
	}
	if got := env.m.Node(); got.UID != "uid-1" {
		t.Errorf("Node() UID = %q, want uid-1", got.UID)
	}
}

func TestRegisterStopsWithContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		env := newTestEnv(t, clock.RealClock{})
		env.client.PrependReactor("create", "nodes", func(clienttesting.Action) (bool, runtime.Object, error) {
			return true, nil, apierrors.NewServiceUnavailable("down")
		})
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if env.m.registerWithAPIServer(ctx) {
			t.Fatal("registered while the API server is down")
		}
		// Tries at 0, 0.1, 0.3, 0.7, 1.5, 3.1, 6.3 and 12.7s, then every 7s until the minute is over.
		if got := countActions(env.client, "create", "nodes", ""); got != 14 {
			t.Errorf("creates = %d, want 14", got)
		}
	})
}
