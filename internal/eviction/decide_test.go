package eviction

import (
	"fmt"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
)

func TestStep(t *testing.T) {
	hard := mustParse(Settings{Hard: map[string]string{"memory.available": "100Mi"}})
	soft := mustParse(Settings{Soft: map[string]string{"memory.available": "1Gi"}, SoftGracePeriod: map[string]string{"memory.available": "30s"}})
	reclaim := mustParse(Settings{Hard: map[string]string{"nodefs.available": "10%"}, MinimumReclaim: map[string]string{"nodefs.available": "5%"}})
	const transition = 5 * time.Minute
	type step struct {
		at             time.Duration
		obs            Observations
		wantConditions string
		wantAct        string
	}
	tests := []struct {
		name       string
		thresholds []Threshold
		steps      []step
	}{{
		name: "hard memory threshold acts at once; the condition stays for the transition period", thresholds: hard,
		steps: []step{
			{at: 0, obs: obsOf(SignalMemoryAvailable, "1Gi", "4Gi", t0), wantConditions: "[]", wantAct: "[]"},
			{at: 10 * time.Second, obs: obsOf(SignalMemoryAvailable, "50Mi", "4Gi", t0.Add(10*time.Second)),
				wantConditions: "[MemoryPressure]", wantAct: "[memory.available<100Mi (hard)]"},
			{at: 20 * time.Second, obs: obsOf(SignalMemoryAvailable, "2Gi", "4Gi", t0.Add(20*time.Second)),
				wantConditions: "[MemoryPressure]", wantAct: "[]"},
			{at: 10*time.Second + transition - time.Second, obs: obsOf(SignalMemoryAvailable, "2Gi", "4Gi", t0.Add(transition)),
				wantConditions: "[MemoryPressure]", wantAct: "[]"},
			{at: 10*time.Second + transition, obs: obsOf(SignalMemoryAvailable, "2Gi", "4Gi", t0.Add(transition+time.Second)),
				wantConditions: "[]", wantAct: "[]"},
		},
	}, {
		name: "a soft threshold acts after its grace period; the condition at once", thresholds: soft,
		steps: []step{
			{at: 0, obs: obsOf(SignalMemoryAvailable, "512Mi", "4Gi", t0), wantConditions: "[MemoryPressure]", wantAct: "[]"},
			{at: 29 * time.Second, obs: obsOf(SignalMemoryAvailable, "512Mi", "4Gi", t0.Add(29*time.Second)), wantConditions: "[MemoryPressure]", wantAct: "[]"},
			{at: 30 * time.Second, obs: obsOf(SignalMemoryAvailable, "512Mi", "4Gi", t0.Add(30*time.Second)),
				wantConditions: "[MemoryPressure]", wantAct: "[memory.available<1Gi (soft, grace period 30s)]"},
		},
	}, {
		name: "a soft threshold that clears restarts its grace period", thresholds: soft,
		steps: []step{
			{at: 0, obs: obsOf(SignalMemoryAvailable, "512Mi", "4Gi", t0), wantConditions: "[MemoryPressure]", wantAct: "[]"},
			{at: 20 * time.Second, obs: obsOf(SignalMemoryAvailable, "2Gi", "4Gi", t0.Add(20*time.Second)), wantConditions: "[MemoryPressure]", wantAct: "[]"},
			{at: 40 * time.Second, obs: obsOf(SignalMemoryAvailable, "512Mi", "4Gi", t0.Add(40*time.Second)), wantConditions: "[MemoryPressure]", wantAct: "[]"},
		},
	}, {
		name: "minimum reclaim keeps a met threshold until threshold plus reclaim is available", thresholds: reclaim,
		steps: []step{
			{at: 0, obs: obsOf(SignalNodeFsAvailable, "5Gi", "100Gi", t0), wantConditions: "[DiskPressure]", wantAct: "[nodefs.available<10% (hard)]"},
			{at: 10 * time.Second, obs: obsOf(SignalNodeFsAvailable, "12Gi", "100Gi", t0.Add(10*time.Second)),
				wantConditions: "[DiskPressure]", wantAct: "[nodefs.available<10% (hard)]"},
			{at: 20 * time.Second, obs: obsOf(SignalNodeFsAvailable, "16Gi", "100Gi", t0.Add(20*time.Second)),
				wantConditions: "[DiskPressure]", wantAct: "[]"},
		},
	}, {
		name: "stats not newer than the last observation do not act again", thresholds: hard,
		steps: []step{
			{at: 0, obs: obsOf(SignalMemoryAvailable, "50Mi", "4Gi", t0), wantConditions: "[MemoryPressure]", wantAct: "[memory.available<100Mi (hard)]"},
			{at: 10 * time.Second, obs: obsOf(SignalMemoryAvailable, "50Mi", "4Gi", t0), wantConditions: "[MemoryPressure]", wantAct: "[]"},
		},
	}, {
		name: "a signal without observation is not met", thresholds: hard,
		steps: []step{{at: 0, obs: obsOf(SignalNodeFsAvailable, "1", "100Gi", t0), wantConditions: "[]", wantAct: "[]"}},
	}, {
		name: "memory acts first; pid pressure", thresholds: mustParse(Settings{Hard: map[string]string{"pid.available": "100", "memory.available": "100Mi", "nodefs.inodesFree": "5%"}}),
		steps: []step{{at: 0, obs: Observations{
			SignalPIDAvailable:     {Available: q("10"), Capacity: q("4k"), Time: t0},
			SignalMemoryAvailable:  {Available: q("10Mi"), Capacity: q("4Gi"), Time: t0},
			SignalNodeFsInodesFree: {Available: q("1"), Capacity: q("1M"), Time: t0},
		}, wantConditions: "[DiskPressure MemoryPressure PIDPressure]", wantAct: "[memory.available<100Mi (hard) nodefs.inodesFree<5% (hard) pid.available<100 (hard)]"}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var st State
			for i, s := range tt.steps {
				var d Decision
				st, d = Step(tt.thresholds, transition, st, s.obs, t0.Add(s.at))
				if got := fmt.Sprint(d.Conditions); got != s.wantConditions {
					t.Errorf("step %d: conditions %s, want %s", i, got, s.wantConditions)
				}
				var act []string
				for _, a := range d.Act {
					act = append(act, a.String())
				}
				if got := "[" + join(act) + "]"; got != s.wantAct {
					t.Errorf("step %d: act %s, want %s", i, got, s.wantAct)
				}
			}
		})
	}
}

func join(s []string) string {
	out := ""
	for i, x := range s {
		if i > 0 {
			out += " "
		}
		out += x
	}
	return out
}

func TestDecisionReclaim(t *testing.T) {
	d := Decision{Act: mustParse(Settings{Hard: map[string]string{"nodefs.inodesFree": "5%"}})}
	th, r, ok := d.Reclaim()
	if !ok || th.Signal != SignalNodeFsInodesFree || r != resourceInodes {
		t.Errorf("Reclaim = %v %v %v", th, r, ok)
	}
	if _, _, ok := (Decision{}).Reclaim(); ok {
		t.Error("nothing to reclaim without thresholds")
	}
	if c, _ := conditionOf(SignalContainerFsAvailable); c != v1.NodeDiskPressure {
		t.Errorf("containerfs reports %v", c)
	}
}

func TestResolved(t *testing.T) {
	th := mustParse(Settings{Hard: map[string]string{"imagefs.available": "15%"}, MinimumReclaim: map[string]string{"imagefs.available": "1Gi"}})
	if Resolved(th, obsOf(SignalImageFsAvailable, "15.5Gi", "100Gi", t0)) {
		t.Error("15.5Gi of 100Gi is not resolved with 15% + 1Gi")
	}
	if !Resolved(th, obsOf(SignalImageFsAvailable, "17Gi", "100Gi", t0)) {
		t.Error("17Gi of 100Gi is resolved")
	}
}
