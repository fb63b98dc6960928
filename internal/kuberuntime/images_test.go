package kuberuntime

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

func pullPolicy(p v1.PullPolicy) podOpt {
	return withContainer("app", func(c *v1.Container) { c.ImagePullPolicy = p })
}

func TestEnsureImagePullPolicies(t *testing.T) {
	for _, tc := range []struct {
		name       string
		policy     v1.PullPolicy
		present    bool
		wantPull   bool
		wantReason string // "" when app starts
		wantEvent  string
	}{
		{"IfNotPresent, present", v1.PullIfNotPresent, true, false, "", "Pulled"},
		{"IfNotPresent, missing", v1.PullIfNotPresent, false, true, "", "Pulling"},
		{"Always, present", v1.PullAlways, true, true, "", "Pulling"},
		{"Always, missing", v1.PullAlways, false, true, "", "Pulling"},
		{"Never, present", v1.PullNever, true, false, "", "Pulled"},
		{"Never, missing", v1.PullNever, false, false, ReasonErrImageNeverPull, ReasonErrImageNeverPull},
		{"unset, missing: as IfNotPresent", "", false, true, "", "Pulling"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			if !tc.present {
				h.img.RemoveImage(testImage)
			}
			res := h.sync(newPod(pullPolicy(tc.policy)))
			if pulled := h.img.CallCount("PullImage") > 0; pulled != tc.wantPull {
				t.Errorf("PullImage called: %t, want %t", pulled, tc.wantPull)
			}
			if got := res.Waiting["app"].Reason; got != tc.wantReason {
				t.Errorf("waiting reason %q, want %q (err %v)", got, tc.wantReason, res.Err)
			}
			if (res.Err == nil) != (tc.wantReason == "") {
				t.Errorf("err %v", res.Err)
			}
			if started := h.rt.CallCount("StartContainer") == 1; started != (tc.wantReason == "") {
				t.Errorf("app started: %t", started)
			}
			if !h.rec.has(tc.wantEvent) {
				t.Errorf("no %s event: %v", tc.wantEvent, h.rec.all())
			}
		})
	}
}

func TestImagePullBackOff(t *testing.T) {
	h := newHarness(t)
	h.img.RemoveImage(testImage)
	pod := newPod()

	// The pull fails: ErrImagePull, retried on the worker's own back-off (no RetryAt).
	failedAt := h.clock.Now()
	h.img.InjectError("PullImage", errors.New("connection refused"))
	res := h.sync(pod)
	if got := res.Waiting["app"].Reason; got != ReasonErrImagePull {
		t.Fatalf("waiting %q, want ErrImagePull", got)
	}
	if ce := containerError(t, res); !ce.RetryAt().IsZero() {
		t.Errorf("ErrImagePull RetryAt %v, want none", ce.RetryAt())
	}
	if !h.rec.has("Failed") {
		t.Errorf("no Failed event: %v", h.rec.all())
	}

	// Before the back-off ends: ImagePullBackOff, no pull.
	res = h.sync(pod)
	if got := res.Waiting["app"].Reason; got != ReasonImagePullBackOff {
		t.Fatalf("waiting %q, want ImagePullBackOff", got)
	}
	if ce := containerError(t, res); !ce.RetryAt().Equal(failedAt.Add(10 * time.Second)) {
		t.Errorf("ImagePullBackOff RetryAt %v, want failure + 10s = %v", ce.RetryAt(), failedAt.Add(10*time.Second))
	}
	if n := h.img.CallCount("PullImage"); n != 1 {
		t.Errorf("%d pulls during the back-off", n)
	}
	h.clock.Step(9 * time.Second)
	if res := h.sync(pod); res.Waiting["app"].Reason != ReasonImagePullBackOff {
		t.Errorf("9 s later: waiting %v, want ImagePullBackOff", res.Waiting)
	}

	// The pull fails again once the back-off is over: the back-off doubles.
	h.clock.Step(time.Second)
	failedAt = h.clock.Now()
	h.img.InjectError("PullImage", errors.New("connection refused"))
	if res := h.sync(pod); res.Waiting["app"].Reason != ReasonErrImagePull {
		t.Fatalf("after 10 s: waiting %v, want a new pull and ErrImagePull", res.Waiting)
	}
	h.clock.Step(19 * time.Second)
	if res := h.sync(pod); res.Waiting["app"].Reason != ReasonImagePullBackOff {
		t.Errorf("19 s after the second failure: waiting %v, want ImagePullBackOff", res.Waiting)
	}

	// Past the back-off the pull succeeds and the container starts.
	h.clock.Step(time.Second)
	h.mustSync(pod)
	if n := h.img.CallCount("PullImage"); n != 3 {
		t.Errorf("%d pulls, want 3", n)
	}
	if got := h.started(pod); !slices.Equal(got, []string{"app"}) {
		t.Errorf("running %v", got)
	}

	// A success resets the back-off: the next failure is ErrImagePull, then 10 s of back-off.
	pod2 := newPod(pullPolicy(v1.PullAlways))
	pod2.UID = pod.UID
	h.img.InjectError("PullImage", errors.New("connection refused"))
	failedAt = h.clock.Now()
	if ce := ensureImageError(t, h, pod2); ce.Reason != ReasonErrImagePull {
		t.Fatalf("after a success: %v, want ErrImagePull", ce)
	}
	if ce := ensureImageError(t, h, pod2); ce.Reason != ReasonImagePullBackOff || !ce.RetryAt().Equal(failedAt.Add(10*time.Second)) {
		t.Errorf("after a success: %v until %v, want ImagePullBackOff until failure + 10s", ce, ce.RetryAt())
	}
}

// ensureImageError runs ensureImage for the pod's first container and returns its error.
func ensureImageError(t *testing.T, h *harness, pod *v1.Pod) *ContainerError {
	t.Helper()
	_, err := h.m.ensureImage(t.Context(), pod, &pod.Spec.Containers[0], nil)
	var ce *ContainerError
	if !errors.As(err, &ce) {
		t.Fatalf("ensureImage: %v, want a ContainerError", err)
	}
	return ce
}

func TestImagePullBackOffIsPerPod(t *testing.T) {
	h := newHarness(t)
	h.img.RemoveImage(testImage)
	a := newPod()
	b := newPod()
	b.Name, b.UID = "other", types.UID("uid-2")
	h.img.InjectError("PullImage", errors.New("connection refused"))
	if res := h.sync(a); res.Waiting["app"].Reason != ReasonErrImagePull {
		t.Fatalf("pod a: %v", res.Waiting)
	}
	h.mustSync(b) // b's pull is not held back by a's back-off
	if n := h.img.CallCount("PullImage"); n != 2 {
		t.Errorf("%d pulls, want 2", n)
	}
}

func TestEnsureImageErrors(t *testing.T) {
	t.Run("inspect error", func(t *testing.T) {
		h := newHarness(t)
		h.img.InjectError("ImageStatus", errors.New("image store unavailable"))
		res := h.sync(newPod())
		if got := res.Waiting["app"].Reason; got != "ImageInspectError" {
			t.Errorf("waiting %q, want ImageInspectError", got)
		}
		if !h.rec.has("InspectFailed") {
			t.Errorf("no InspectFailed event: %v", h.rec.all())
		}
	})
	t.Run("image missing after a successful pull", func(t *testing.T) {
		h := newHarness(t)
		h.img.RemoveImage(testImage)
		h.img.InjectError("ImageStatus", nil)                               // the first status: missing
		h.img.InjectError("ImageStatus", errors.New("gone after the pull")) // the second
		res := h.sync(newPod())
		if got := res.Waiting["app"].Reason; got != ReasonErrImagePull {
			t.Errorf("waiting %q, want ErrImagePull", got)
		}
		if n := h.rt.CallCount("CreateContainer"); n != 0 {
			t.Errorf("%d creates without an image", n)
		}
	})
}

// TestSerializedImagePulls pulls an image for 4 pods at once. With SerializeImagePulls one pull
// at a time reaches the runtime; without it the pulls overlap, which the test shows by holding
// the pulls until two are in flight together (a serialized manager would never get there).
func TestSerializedImagePulls(t *testing.T) {
	for _, serialize := range []bool{true, false} {
		t.Run(fmt.Sprintf("serialize=%t", serialize), func(t *testing.T) {
			h := newHarness(t)
			h.m.cfg.SerializeImagePulls = serialize
			got := concurrentPulls(t, h, serialize)
			if serialize && got != 1 {
				t.Errorf("%d pulls at once, want 1", got)
			}
			if !serialize && got < 2 {
				t.Errorf("%d pulls at once, want the pulls to overlap", got)
			}
		})
	}
}

// concurrentPulls pulls an image for 4 pods at once and returns how many pulls were in flight
// together at most. The pulls are held on channels, never on time: when serialized, the first
// pull is held until every pod has announced its pull (event Pulling: the others are on their
// way to the pull lock); otherwise each of the first two pulls is held until both are in flight
// (should the manager serialize them by mistake, the test hangs until go test's -timeout,
// whose goroutine dump shows the pull held and the others on the lock).
func concurrentPulls(t *testing.T, h *harness, serialize bool) int {
	const pods = 4
	var (
		mu             sync.Mutex
		inFlight, most int
		pulls          int
		bothIn         = make(chan struct{})
		allAnnounced   = make(chan struct{})
		announced      int
	)
	h.rec.mu.Lock()
	h.rec.onEvent = func(reason string) {
		if reason != "Pulling" {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if announced++; announced == pods {
			close(allAnnounced)
		}
	}
	h.rec.mu.Unlock()
	h.img.OnPull = func(string) {
		mu.Lock()
		inFlight++
		most = max(most, inFlight)
		pulls++
		n := pulls
		if !serialize && n == 2 {
			close(bothIn)
		}
		mu.Unlock()
		switch {
		case serialize && n == 1:
			<-allAnnounced
		case !serialize && n <= 2:
			<-bothIn
		}
		mu.Lock()
		inFlight--
		mu.Unlock()
	}
	var (
		wg   sync.WaitGroup
		errs = make(chan error, pods)
	)
	for i := range pods {
		pod := newPod(pullPolicy(v1.PullAlways))
		pod.Name, pod.UID = pod.Name+string(rune('a'+i)), types.UID("uid-p"+string(rune('a'+i)))
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := h.m.ensureImage(t.Context(), pod, &pod.Spec.Containers[0], nil)
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if n := h.img.CallCount("PullImage"); n != pods {
		t.Errorf("%d pulls, want %d (Always)", n, pods)
	}
	return most
}

// Regression: the end of ImagePullBackOff is computed from the time of the check instead of the time
// of the failed pull, so RetryAt drifts later by however long after the failure the pod is
// synced again.
func TestImagePullBackOffRetryAtIsFailurePlusBackOff(t *testing.T) {
	h := newHarness(t)
	h.img.RemoveImage(testImage)
	pod := newPod()
	failedAt := h.clock.Now()
	h.img.InjectError("PullImage", errors.New("connection refused"))
	h.sync(pod)
	h.clock.Step(4 * time.Second)
	res := h.sync(pod)
	if ce := containerError(t, res); !ce.RetryAt().Equal(failedAt.Add(10 * time.Second)) {
		t.Errorf("RetryAt %v, want the failure + 10s = %v (the back-off's real end)", ce.RetryAt(), failedAt.Add(10*time.Second))
	}
}

// Regression: ensureImage passes messages that contain the runtime's error text as the format of
// Recorder.Eventf, so a '%' in that text (URL-escaped paths such as %2F are common in registry
// errors) is taken for a verb and garbled ("%!F(MISSING)") in the event. go vet reports these
// calls (non-constant format string) as soon as the package has a printf-like Recorder.
func TestImageEventsKeepPercentSigns(t *testing.T) {
	h := newHarness(t)
	h.img.RemoveImage(testImage)
	h.img.InjectError("PullImage", errors.New("GET https://registry.local/v2/team%2Fapp/manifests/1.0: 401 Unauthorized"))
	h.sync(newPod())
	msgs := h.rec.messages("Failed")
	if len(msgs) != 1 || !strings.Contains(msgs[0], "team%2Fapp") {
		t.Errorf("Failed events %q, want the pull error verbatim (team%%2Fapp)", msgs)
	}
}
