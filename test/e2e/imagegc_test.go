package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// imagePresent reports whether the runtime holds the image.
func (n *node) imagePresent(image string) bool {
	n.t.Helper()
	resp, err := n.criClient().ImageStatus(context.Background(), &runtimeapi.ImageSpec{Image: image}, false)
	if err != nil {
		n.t.Fatalf("ImageStatus(%s): %v", image, err)
	}
	return resp.GetImage() != nil
}

func (n *node) pullImage(image string) {
	n.t.Helper()
	if _, err := n.criClient().PullImage(context.Background(), &runtimeapi.ImageSpec{Image: image}, nil, nil); err != nil {
		n.t.Fatalf("PullImage(%s): %v", image, err)
	}
}

// waitImageGone polls until the image is removed.
func (n *node) waitImageGone(image string, timeout time.Duration) {
	n.t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if !n.imagePresent(image) {
			return
		}
		time.Sleep(500 * time.Millisecond)
	}
	n.t.Fatalf("image %s still present after %v", image, timeout)
}

// Issue 15, acceptance 4: image garbage collection, by the disk thresholds and by
// imageMaximumGCAge. An unused image goes; the image a running container uses and the pinned
// sandbox image stay.
func TestImageGarbageCollection(t *testing.T) {
	n := startNode(t)
	n.write("user.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: user}\nspec: {containers: [{name: c, image: busybox:1.35, command: [sleep, '3600']}]}\n")
	p := n.waitPod("user", 60*time.Second, "Running", func(p *v1.Pod) bool { return p != nil && isRunningReady(p) })
	id := containerStatus(p, "c").ContainerID
	n.pullImage(testServer)
	const pause = "registry.k8s.io/pause:3.10"

	// Over the high threshold (1%): every unused image older than imageMinimumGCAge (0s) goes,
	// on the collection nodelet runs when it starts. It cannot reach the low threshold (0%):
	// FreeDiskSpaceFailed says so.
	n.kill9()
	n.extra = append(n.extra, "--image-gc-high-threshold=1", "--image-gc-low-threshold=0", "--minimum-image-ttl-duration=0s")
	n.start()
	n.waitImageGone(testServer, 30*time.Second)
	if !n.imagePresent("docker.io/library/busybox:1.35") || !n.imagePresent(pause) {
		t.Errorf("image GC removed an image in use (busybox %v) or the pinned sandbox image (%v)",
			n.imagePresent("docker.io/library/busybox:1.35"), n.imagePresent(pause))
	}
	n.logs.waitCount(t, 10*time.Second, 1, `"Node event"`, `reason="FreeDiskSpaceFailed"`, "Insufficient free disk space on the node's image filesystem")

	// By age: an image unused for longer than imageMaximumGCAge goes once nodelet has run that
	// long, whatever the disk usage.
	n.pullImage(testServer)
	n.kill9()
	n.extra = append(n.extra[:len(n.extra)-3], "--minimum-image-ttl-duration=1s", "--image-gc-period=1s")
	n.config = "imageMaximumGCAge: 4s\n"
	n.start()
	start := time.Now()
	n.waitImageGone(testServer, 30*time.Second)
	if waited := time.Since(start); waited < 4*time.Second {
		t.Errorf("the image went %v after nodelet started, before imageMaximumGCAge (4s)", waited)
	}
	if !n.imagePresent("docker.io/library/busybox:1.35") || !n.imagePresent(pause) {
		t.Error("image GC by age removed an image in use or the pinned sandbox image")
	}
	if c := containerStatus(n.waitPod("user", 30*time.Second, "Running", func(p *v1.Pod) bool { return p != nil && isRunningReady(p) }), "c"); c.ContainerID != id {
		t.Errorf("the running pod was disturbed: %+v", c)
	}
	if got := n.logs.matching(`"Removing image to free bytes"`, `reason="unused for longer than imageMaximumGCAge"`); len(got) != 1 {
		t.Errorf("removals by age logged: %q, want one", strings.Join(got, "\n"))
	}
}
