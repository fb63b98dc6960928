package nodestatus

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/utils/clock"
)

// startRun runs the manager in a synctest bubble until the test ends.
func startRun(t *testing.T, env *testEnv) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		env.m.Run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	synctest.Wait()
}

func getLease(t *testing.T, env *testEnv) *coordinationv1.Lease {
	t.Helper()
	l, err := env.client.CoordinationV1().Leases(v1.NamespaceNodeLease).Get(context.Background(), testNode, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get lease: %v", err)
	}
	return l
}

func TestRunLeaseCreatedAndRenewed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		env := newTestEnv(t, clock.RealClock{})
		start := time.Now()
		startRun(t, env)

		l := getLease(t, env)
		if l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity != testNode {
			t.Errorf("holderIdentity = %v, want %s", l.Spec.HolderIdentity, testNode)
		}
		if l.Spec.LeaseDurationSeconds == nil || *l.Spec.LeaseDurationSeconds != 40 {
			t.Errorf("leaseDurationSeconds = %v, want 40", l.Spec.LeaseDurationSeconds)
		}
		want := []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: testNode, UID: testUID}}
		check(t, "ownerReferences", want, l.OwnerReferences)
		if l.Spec.RenewTime == nil || !l.Spec.RenewTime.Time.Equal(start) {
			t.Errorf("renewTime = %v, want %v", l.Spec.RenewTime, start)
		}

		// Renewed every 10s (a quarter of 40s, with up to 4% jitter).
		time.Sleep(10*time.Second + 500*time.Millisecond)
		synctest.Wait()
		renewed := getLease(t, env).Spec.RenewTime.Time
		if d := renewed.Sub(start); d < 10*time.Second || d > 10400*time.Millisecond {
			t.Errorf("lease renewed %v after creation, want 10s-10.4s", d)
		}
	})
}

func TestRunLeaseWaitsForTheAPIServer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		env := newTestEnv(t, clock.RealClock{})
		var down atomic.Bool
		down.Store(true)
		env.client.PrependReactor("*", "leases", func(clienttesting.Action) (bool, runtime.Object, error) {
			if down.Load() {
				return true, nil, apierrors.NewServiceUnavailable("down")
			}
			return false, nil, nil
		})
		startRun(t, env)
		time.Sleep(30 * time.Second)
		synctest.Wait()
		if _, err := env.client.Tracker().Get(coordinationv1.SchemeGroupVersion.WithResource("leases"), v1.NamespaceNodeLease, testNode); !apierrors.IsNotFound(err) {
			t.Fatalf("lease during the outage: err = %v, want NotFound", err)
		}
		down.Store(false)
		time.Sleep(8 * time.Second) // the lease controller's back-off is at most 7s
		synctest.Wait()
		if l := getLease(t, env); l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity != testNode {
			t.Errorf("lease after the outage = %+v", l.Spec)
		}
	})
}

func TestRunReportsReadinessChangeWhenTriggered(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		env := newTestEnv(t, clock.RealClock{})
		startRun(t, env)
		if got := condition(apiNode(t, env), v1.NodeReady).Status; got != v1.ConditionTrue {
			t.Fatalf("Ready = %s after start", got)
		}

		time.Sleep(3 * time.Second) // between ticks
		env.readiness.set(errors.New("container runtime is down"))
		env.m.TriggerUpdate()
		synctest.Wait()
		ready := condition(apiNode(t, env), v1.NodeReady)
		if ready.Status != v1.ConditionFalse || ready.Message != "container runtime is down" || !ready.LastTransitionTime.Time.Equal(time.Now()) {
			t.Errorf("Ready after trigger = %+v, want False now", ready)
		}
	})
}

func TestRunTicksEveryUpdateFrequency(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		env := newTestEnv(t, clock.RealClock{})
		startRun(t, env)
		time.Sleep(5 * time.Second)
		env.readiness.set(errors.New("PLEG is not healthy"))
		synctest.Wait()
		if got := condition(apiNode(t, env), v1.NodeReady).Status; got != v1.ConditionTrue {
			t.Errorf("Ready = %s before the next tick", got)
		}
		time.Sleep(5 * time.Second)
		synctest.Wait()
		if got := condition(apiNode(t, env), v1.NodeReady); got.Status != v1.ConditionFalse || got.Message != "PLEG is not healthy" {
			t.Errorf("Ready = %+v at the next tick", got)
		}
	})
}

func TestRunNodeSeesChangesByOthers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		env := newTestEnv(t, clock.RealClock{})
		startRun(t, env)

		node := apiNode(t, env)
		node.Spec.Taints = append(node.Spec.Taints, v1.Taint{Key: "node.kubernetes.io/out-of-service", Effect: v1.TaintEffectNoExecute})
		node.Labels["zone"] = "b"
		if _, err := env.client.CoreV1().Nodes().Update(context.Background(), node, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		got := env.m.Node()
		if len(got.Spec.Taints) != 1 || got.Labels["zone"] != "b" {
			t.Errorf("Node() = taints %v labels %v, want the update seen by the watch", got.Spec.Taints, got.Labels)
		}
	})
}
