package kuberuntime

import (
	"testing"
	"time"

	"github.com/nodelet/nodelet/internal/checkpoint"
	"github.com/nodelet/nodelet/internal/prober/probeview"
)

// A crash back-off survives a restart of nodelet through the checkpoint: BackOffs reports the
// delay a container reached, and a new manager that restores it does not restart the container
// before that delay from its last exit; a manager without it restarts it at once.
func TestCrashBackOffRestored(t *testing.T) {
	h := newHarness(t)
	pod := newPod()
	h.mustSync(pod)
	id := func(attempt uint32) string { return containerID(pod, pod.Spec.Containers[0].Name, attempt) }
	h.exit(id(0), 1)
	h.mustSync(pod) // first restart: at once (back-off 10 s from now on)
	h.exit(id(1), 1)
	if ce := h.sync(pod).Waiting[pod.Spec.Containers[0].Name]; ce.Reason != ReasonCrashLoopBackOff {
		t.Fatalf("after the second exit: waiting %+v, want CrashLoopBackOff", ce)
	}
	h.clock.Step(11 * time.Second)
	h.mustSync(pod) // second restart (back-off 20 s)
	h.exit(id(2), 1)

	got := h.m.BackOffs()
	key := backOffKey(pod, &pod.Spec.Containers[0])
	if len(got) != 1 || len(got[pod.UID]) != 1 || got[pod.UID][0].Key != key || got[pod.UID][0].Delay.Duration != 20*time.Second {
		t.Fatalf("BackOffs = %+v, want the container's key with 20s", got)
	}
	kept := []checkpoint.Pod{{UID: pod.UID, BackOffs: got[pod.UID]}}

	// nodelet restarts 5 s after the exit: the same runtime, a new manager.
	h.clock.Step(5 * time.Second)
	restarted := func() *Manager {
		m, err := New(h.cfg, Deps{Sandboxes: h.rt, Containers: h.rt, Reader: h.rt, Images: h.img,
			Volumes: h.vol, Recorder: h.rec, Clock: h.clock})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	m := restarted()
	m.RestoreBackOffs(kept)
	res := m.SyncPod(h.ctx, pod, h.status(pod), probeview.View{})
	if w := res.Waiting[pod.Spec.Containers[0].Name]; w.Reason != ReasonCrashLoopBackOff {
		t.Errorf("restored: 5 s into a 20 s back-off the container is %+v, want CrashLoopBackOff", w)
	}
	if b := m.BackOffs()[pod.UID]; len(b) != 1 || b[0].Delay.Duration != 20*time.Second {
		t.Errorf("restored BackOffs = %+v, want the 20s kept", b)
	}
	h.clock.Step(16 * time.Second)
	if res := m.SyncPod(h.ctx, pod, h.status(pod), probeview.View{}); res.Err != nil {
		t.Errorf("restored: after the 20 s the container restarts: %v", res.Err)
	}
	if st := h.state(id(3)); st.String() != "CONTAINER_RUNNING" {
		t.Errorf("attempt 3 is %v, want running", st)
	}

	// Without the checkpoint, the next exit is restarted at once.
	h.exit(id(3), 1)
	fresh := restarted()
	if res := fresh.SyncPod(h.ctx, pod, h.status(pod), probeview.View{}); res.Err != nil {
		t.Errorf("without the checkpoint: %v, want an immediate restart", res.Err)
	}
	if st := h.state(id(4)); st.String() != "CONTAINER_RUNNING" {
		t.Errorf("without the checkpoint attempt 4 is %v, want running at once", st)
	}
}
