package nodestatus

import (
	"context"
	"errors"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clienttesting "k8s.io/client-go/testing"
	testingclock "k8s.io/utils/clock/testing"
)

func registered(t *testing.T, env *testEnv) {
	t.Helper()
	if !env.m.registerWithAPIServer(context.Background()) {
		t.Fatal("registration failed")
	}
	env.client.ClearActions()
}

func apiNode(t *testing.T, env *testEnv) *v1.Node {
	t.Helper()
	node, err := env.client.CoreV1().Nodes().Get(context.Background(), testNode, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get node: %v", err)
	}
	return node
}

// TestStatusPatchedOnChangeOrReportFrequency walks one node through upstream's rules: the first
// update after start is reported, heartbeats alone are not, the status is re-reported after
// ReportFrequency, and a change is reported at once with its transition time.
func TestStatusPatchedOnChangeOrReportFrequency(t *testing.T) {
	clk := testingclock.NewFakeClock(t0)
	env := newTestEnv(t, clk)
	registered(t, env)
	ctx := context.Background()

	steps := []struct {
		name      string
		advance   time.Duration
		readiness []error
		wantPatch bool
		// checked on the API server's node after the step
		wantHeartbeat  time.Time
		wantTransition time.Time
		wantReady      v1.ConditionStatus
	}{
		{name: "first update after start", advance: 10 * time.Second, wantPatch: true,
			wantHeartbeat: t0.Add(10 * time.Second), wantTransition: t0, wantReady: v1.ConditionTrue},
		{name: "heartbeat only", advance: 10 * time.Second,
			wantHeartbeat: t0.Add(10 * time.Second), wantTransition: t0, wantReady: v1.ConditionTrue},
		{name: "just before the report frequency", advance: 5*time.Minute - 20*time.Second,
			wantHeartbeat: t0.Add(10 * time.Second), wantTransition: t0, wantReady: v1.ConditionTrue},
		{name: "report frequency passed", advance: 10 * time.Second, wantPatch: true,
			wantHeartbeat: t0.Add(5*time.Minute + 10*time.Second), wantTransition: t0, wantReady: v1.ConditionTrue},
		{name: "runtime down is reported at once", advance: time.Second, readiness: []error{errors.New("container runtime is down")}, wantPatch: true,
			wantHeartbeat: t0.Add(5*time.Minute + 11*time.Second), wantTransition: t0.Add(5*time.Minute + 11*time.Second), wantReady: v1.ConditionFalse},
		{name: "still down", advance: 10 * time.Second, readiness: []error{errors.New("container runtime is down")},
			wantHeartbeat: t0.Add(5*time.Minute + 11*time.Second), wantTransition: t0.Add(5*time.Minute + 11*time.Second), wantReady: v1.ConditionFalse},
		{name: "back up", advance: 10 * time.Second, wantPatch: true,
			wantHeartbeat: t0.Add(5*time.Minute + 31*time.Second), wantTransition: t0.Add(5*time.Minute + 31*time.Second), wantReady: v1.ConditionTrue},
	}
	for _, step := range steps {
		clk.Step(step.advance)
		env.readiness.set(step.readiness...)
		env.client.ClearActions()
		env.m.syncNodeStatus(ctx)

		if got := countActions(env.client, "patch", "nodes", "status"); got != map[bool]int{true: 1}[step.wantPatch] {
			t.Errorf("%s: %d status patches, want patch=%v", step.name, got, step.wantPatch)
		}
		ready := condition(apiNode(t, env), v1.NodeReady)
		if ready.Status != step.wantReady || !ready.LastHeartbeatTime.Time.Equal(step.wantHeartbeat) || !ready.LastTransitionTime.Time.Equal(step.wantTransition) {
			t.Errorf("%s: Ready = %s heartbeat %v transition %v, want %s %v %v", step.name, ready.Status,
				ready.LastHeartbeatTime.Time, ready.LastTransitionTime.Time, step.wantReady, step.wantHeartbeat, step.wantTransition)
		}
		if step.wantReady == v1.ConditionFalse && (ready.Reason != "KubeletNotReady" || ready.Message != "container runtime is down") {
			t.Errorf("%s: Ready = %+v", step.name, ready)
		}
		if got := condition(env.m.Node(), v1.NodeReady); !got.LastHeartbeatTime.Equal(&ready.LastHeartbeatTime) {
			t.Errorf("%s: Node() is not the API server's latest node", step.name)
		}
	}
	want := []string{
		"Node/node-a Normal NodeNotReady: Node node-a status is now: NodeNotReady",
		"Node/node-a Normal NodeReady: Node node-a status is now: NodeReady",
	}
	check(t, "events after registration", want, env.recorder.list()[3:])
}

func TestReportDelayAfterChange(t *testing.T) {
	clk := testingclock.NewFakeClock(t0)
	env := newTestEnv(t, clk)
	env.m.randFloat = func() float64 { return 0.9 } // +40% of the report frequency
	registered(t, env)
	ctx := context.Background()

	env.m.syncNodeStatus(ctx) // first report: delay 2m
	for _, step := range []struct {
		advance   time.Duration
		wantPatch bool
	}{
		{advance: 5 * time.Minute},
		{advance: 2 * time.Minute, wantPatch: true}, // 7m: period + delay; the delay is then dropped
		{advance: 5 * time.Minute, wantPatch: true},
	} {
		clk.Step(step.advance)
		env.client.ClearActions()
		env.m.syncNodeStatus(ctx)
		if got := countActions(env.client, "patch", "nodes", "status") == 1; got != step.wantPatch {
			t.Errorf("after %v more: patched = %v, want %v", step.advance, got, step.wantPatch)
		}
	}
}

// TestStatusUpdateSurvivesOutage: a tick during an outage tries 5 times (the first reading the
// API server's cache, the others etcd), then gives up until the next tick, which catches up.
func TestStatusUpdateSurvivesOutage(t *testing.T) {
	clk := testingclock.NewFakeClock(t0)
	env := newTestEnv(t, clk)
	failures := 0
	env.m.deps.OnRepeatedHeartbeatFailure = func() { failures++ }
	registered(t, env)
	ctx := context.Background()
	env.m.syncNodeStatus(ctx)

	down := true
	env.client.PrependReactor("*", "nodes", func(clienttesting.Action) (bool, runtime.Object, error) {
		if down {
			return true, nil, apierrors.NewServiceUnavailable("etcd leader changed")
		}
		return false, nil, nil
	})
	clk.Step(10 * time.Second)
	env.readiness.set(errors.New("container runtime is down"))
	env.client.ClearActions()
	env.m.syncNodeStatus(ctx)
	if got := countActions(env.client, "patch", "nodes", "status"); got != 0 {
		t.Errorf("patches during outage = %d, want 0 (every GET failed)", got)
	}
	var fromCache int
	for _, a := range env.client.Actions() {
		if g, ok := a.(clienttesting.GetActionImpl); ok && g.GetResource().Resource == "nodes" {
			if g.GetOptions.ResourceVersion == "0" {
				fromCache++
			}
		}
	}
	if got := countActions(env.client, "get", "nodes", ""); got != 5 || fromCache != 1 {
		t.Errorf("gets during outage = %d (%d from the cache), want 5 with the first from the cache", got, fromCache)
	}
	if failures != 4 {
		t.Errorf("OnRepeatedHeartbeatFailure called %d times, want 4", failures)
	}

	down = false
	clk.Step(10 * time.Second)
	env.client.ClearActions()
	env.m.syncNodeStatus(ctx)
	ready := condition(apiNode(t, env), v1.NodeReady)
	if ready.Status != v1.ConditionFalse || !ready.LastTransitionTime.Time.Equal(t0.Add(20*time.Second)) {
		t.Errorf("after the outage Ready = %+v, want False since %v", ready, t0.Add(20*time.Second))
	}
	if got := countActions(env.client, "patch", "nodes", "status"); got != 1 {
		t.Errorf("patches after the outage = %d, want 1", got)
	}
}

func TestStatusUpdateRestoresOSArchLabels(t *testing.T) {
	env := newTestEnv(t, testingclock.NewFakeClock(t0))
	registered(t, env)
	ctx := context.Background()
	env.m.syncNodeStatus(ctx)

	node := apiNode(t, env)
	delete(node.Labels, v1.LabelArchStable)
	updated, err := env.client.CoreV1().Nodes().Update(ctx, node, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	env.m.setNode(updated, true) // as the watch would
	env.client.ClearActions()
	env.m.syncNodeStatus(ctx)
	if got := countActions(env.client, "patch", "nodes", "status"); got != 1 {
		t.Errorf("status patches = %d, want 1: a missing label is a change", got)
	}
	if got := apiNode(t, env).Labels[v1.LabelArchStable]; got == "" {
		t.Error("arch label not restored")
	}
}

func TestSchedulableEvents(t *testing.T) {
	env := newTestEnv(t, testingclock.NewFakeClock(t0))
	registered(t, env)
	ctx := context.Background()
	for _, unschedulable := range []bool{true, true, false} {
		node := apiNode(t, env)
		node.Spec.Unschedulable = unschedulable
		updated, err := env.client.CoreV1().Nodes().Update(ctx, node, metav1.UpdateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		env.m.setNode(updated, true)
		env.m.syncNodeStatus(ctx)
	}
	want := []string{
		"Node/node-a Normal NodeNotSchedulable: Node node-a status is now: NodeNotSchedulable",
		"Node/node-a Normal NodeSchedulable: Node node-a status is now: NodeSchedulable",
	}
	check(t, "events", want, env.recorder.list()[3:])
}

// TestStatusUpdateAfterControllerMarkedUnknown: the node lifecycle controller set Ready=Unknown
// while nodelet could not reach the API server; the next update sees it (it reads the API
// server, not its own last copy) and posts Ready=True at once, not at the next report period.
func TestStatusUpdateAfterControllerMarkedUnknown(t *testing.T) {
	clk := testingclock.NewFakeClock(t0)
	env := newTestEnv(t, clk)
	registered(t, env)
	ctx := context.Background()
	env.m.syncNodeStatus(ctx)

	node := apiNode(t, env).DeepCopy()
	for i := range node.Status.Conditions {
		if node.Status.Conditions[i].Type == v1.NodeReady {
			node.Status.Conditions[i].Status = v1.ConditionUnknown
			node.Status.Conditions[i].Reason = "NodeStatusUnknown"
		}
	}
	if _, err := env.client.CoreV1().Nodes().UpdateStatus(ctx, node, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	clk.Step(10 * time.Second)
	env.client.ClearActions()
	env.m.syncNodeStatus(ctx)
	if got := countActions(env.client, "patch", "nodes", "status"); got != 1 {
		t.Fatalf("patches = %d, want 1: Unknown must be corrected at once", got)
	}
	if ready := condition(apiNode(t, env), v1.NodeReady); ready.Status != v1.ConditionTrue || ready.Reason != "KubeletReady" {
		t.Errorf("Ready = %+v, want True/KubeletReady", ready)
	}
}
