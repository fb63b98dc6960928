package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
)

// TestVolumes: two containers share an emptyDir; a hostPath is mounted (read-only here); a
// Memory emptyDir is a tmpfs of its size limit.
func TestVolumes(t *testing.T) {
	n := startNode(t)
	host := t.TempDir()
	if err := os.WriteFile(filepath.Join(host, "from-host.txt"), []byte("host-data\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	n.write("vol.yaml", `apiVersion: v1
kind: Pod
metadata: {name: vol}
spec:
  terminationGracePeriodSeconds: 2
  volumes:
  - {name: shared, emptyDir: {}}
  - {name: mem, emptyDir: {medium: Memory, sizeLimit: 16Mi}}
  - {name: host, hostPath: {path: `+host+`, type: Directory}}
  containers:
  - name: writer
    image: busybox:1.35
    command: ["sh", "-c", "trap 'exit 0' TERM; echo from-writer > /shared/msg; while true; do sleep 1; done"]
    volumeMounts: [{name: shared, mountPath: /shared}]
  - name: reader
    image: busybox:1.35
    command: ["sh", "-c", "trap 'exit 0' TERM; until [ -f /shared/msg ]; do sleep 0.2; done; cat /shared/msg; cat /host/from-host.txt; grep ' /mem ' /proc/mounts; df -k /mem | tail -1; touch /host/x 2>&1 || echo host-is-read-only; while true; do sleep 1; done"]
    volumeMounts: [{name: shared, mountPath: /shared}, {name: mem, mountPath: /mem}, {name: host, mountPath: /host, readOnly: true}]
`)
	p := n.waitPod("vol", 60*time.Second, "Running", isRunningReady)
	var out string
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if out = readContainerLog(t, n, p, "reader"); strings.Contains(out, "host-is-read-only") {
			break
		}
		time.Sleep(300 * time.Millisecond)
	}
	for _, want := range []string{"from-writer", "host-data", "tmpfs /mem tmpfs", "16384", "host-is-read-only"} {
		if !strings.Contains(out, want) {
			t.Errorf("reader output lacks %q:\n%s", want, out)
		}
	}
}

// Issue 13: an image volume (KEP-4639) mounts an OCI image read-only through the CRI
// (Mount.image, containerd 2.1+), whole or a subPath of it; an image volume whose image does
// not exist leaves its container waiting in ErrImagePull/ImagePullBackOff with an event, while
// the pod's other container runs.
func TestImageVolume(t *testing.T) {
	n := startNode(t)
	n.write("imgvol.yaml", `apiVersion: v1
kind: Pod
metadata: {name: imgvol}
spec:
  terminationGracePeriodSeconds: 1
  volumes:
  - {name: tools, image: {reference: "docker.io/library/busybox:1.35", pullPolicy: IfNotPresent}}
  - {name: gone, image: {reference: "docker.io/library/no-such-image:1"}}
  containers:
  - name: reader
    image: busybox:1.35
    command: ["sh", "-c", "test -x /img/bin/busybox && echo busybox-found; test -x /only-bin/sh && echo subpath-found; touch /img/x 2>&1 || echo image-is-read-only; exec sleep 3600"]
    volumeMounts: [{name: tools, mountPath: /img}, {name: tools, mountPath: /only-bin, subPath: bin}]
  - name: broken
    image: busybox:1.35
    command: ["sleep", "3600"]
    volumeMounts: [{name: gone, mountPath: /gone}]
`)
	p := n.waitPod("imgvol", 90*time.Second, "reader running and broken waiting for its image", func(p *v1.Pod) bool {
		r, b := containerStatus(p, "reader"), containerStatus(p, "broken")
		return r != nil && r.State.Running != nil && b != nil && b.State.Waiting != nil &&
			(b.State.Waiting.Reason == "ErrImagePull" || b.State.Waiting.Reason == "ImagePullBackOff")
	})
	var out string
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if out = readContainerLog(t, n, p, "reader"); strings.Contains(out, "image-is-read-only") {
			break
		}
		time.Sleep(300 * time.Millisecond)
	}
	for _, want := range []string{"busybox-found", "subpath-found", "image-is-read-only"} {
		if !strings.Contains(out, want) {
			t.Errorf("reader output lacks %q:\n%s", want, out)
		}
	}
	if msg := containerStatus(p, "broken").State.Waiting.Message; !strings.Contains(msg, "no-such-image") {
		t.Errorf("broken's waiting message %q does not name the missing image", msg)
	}
	if !n.hasEvent("imgvol", "Failed", "no-such-image") {
		t.Errorf("no Failed event naming the missing image: %v", n.events("imgvol"))
	}
	if r := containerStatus(p, "reader"); r.RestartCount != 0 {
		t.Errorf("reader restarted %d times", r.RestartCount)
	}
}
