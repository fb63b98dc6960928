package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
)

func imagePod(name, image, policy string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata: {name: %s}
spec:
  terminationGracePeriodSeconds: 2
  containers: [{name: main, image: %q, imagePullPolicy: %s, command: ["sh", "-c", "trap 'exit 0' TERM; while true; do sleep 1; done"]}]
`, name, image, policy)
}

// TestImagePullPolicies: IfNotPresent and Always pull from the local registry; a missing
// image gives ErrImagePull then ImagePullBackOff; Never with a missing image gives
// ErrImageNeverPull.
func TestImagePullPolicies(t *testing.T) {
	n := startNode(t)
	n.write("always.yaml", imagePod("always", "busybox:1.35", "Always"))
	n.write("ifnotpresent.yaml", imagePod("ifnotpresent", "docker.io/library/busybox:latest", "IfNotPresent"))
	n.write("missing.yaml", imagePod("missing", "busybox:does-not-exist", "IfNotPresent"))
	n.write("never.yaml", imagePod("never", "busybox:not-here-either", "Never"))
	for _, name := range []string{"always", "ifnotpresent"} {
		p := n.waitPod(name, 60*time.Second, "Running", isRunningReady)
		if cs := containerStatus(p, "main"); !strings.HasPrefix(cs.ImageID, "docker.io/library/busybox@sha256:") && !strings.HasPrefix(cs.ImageID, "sha256:") {
			t.Errorf("%s: imageID %q", name, cs.ImageID)
		}
	}
	n.logs.waitCount(t, 10*time.Second, 1, "Pulling image", `busybox:1.35`)
	waiting := func(reason string) func(*v1.Pod) bool {
		return func(p *v1.Pod) bool {
			cs := containerStatus(p, "main")
			return cs != nil && cs.State.Waiting != nil && cs.State.Waiting.Reason == reason
		}
	}
	p := n.waitPod("missing", 30*time.Second, "ErrImagePull", waiting("ErrImagePull"))
	if msg := containerStatus(p, "main").State.Waiting.Message; !strings.Contains(msg, "busybox:does-not-exist") {
		t.Errorf("ErrImagePull message %q does not name the image", msg)
	}
	n.waitPod("missing", 30*time.Second, "ImagePullBackOff", waiting("ImagePullBackOff"))
	p = n.waitPod("never", 30*time.Second, "ErrImageNeverPull", waiting("ErrImageNeverPull"))
	if msg := containerStatus(p, "main").State.Waiting.Message; !strings.Contains(msg, "pull policy of Never") {
		t.Errorf("ErrImageNeverPull message %q", msg)
	}
	if ph := p.Status.Phase; ph != v1.PodPending {
		t.Errorf("phase %s, want Pending", ph)
	}
}
