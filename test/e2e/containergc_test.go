package e2e

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/nodelet/nodelet/internal/container"
	"github.com/nodelet/nodelet/internal/cri"
	"github.com/nodelet/nodelet/internal/testharness"
)

// podContainers lists the runtime's containers of a pod, by instance (attempt).
func podContainers(t *testing.T, c *cri.Client, uid types.UID) map[uint32]*runtimeapi.Container {
	t.Helper()
	list, err := c.ListContainers(context.Background(), &runtimeapi.ContainerFilter{
		LabelSelector: map[string]string{container.PodUIDLabel: string(uid)}})
	if err != nil {
		t.Fatal(err)
	}
	out := map[uint32]*runtimeapi.Container{}
	for _, ctr := range list {
		out[ctr.GetMetadata().GetAttempt()] = ctr
	}
	return out
}

// podLeftovers says what of a pod is still on the node: sandboxes, containers, its log
// directory, its cgroups.
func podLeftovers(t *testing.T, c *cri.Client, uid types.UID, logDir string) []string {
	t.Helper()
	var left []string
	sandboxes, err := c.ListPodSandbox(context.Background(), &runtimeapi.PodSandboxFilter{
		LabelSelector: map[string]string{container.PodUIDLabel: string(uid)}})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range sandboxes {
		left = append(left, "sandbox "+s.Id)
	}
	for _, ctr := range podContainers(t, c, uid) {
		left = append(left, "container "+ctr.Id)
	}
	if _, err := os.Stat(logDir); err == nil {
		left = append(left, "log directory "+logDir)
	}
	for _, cg := range testharness.PodCgroups(string(uid)) {
		left = append(left, "cgroup "+cg)
	}
	return left
}

// Issue 15: container garbage collection, as upstream's. A crash-looping container keeps one
// dead instance (--maximum-dead-containers-per-container=1): while the newest instance waits
// out its back-off, the one before goes, with its log file. The log directory of a pod that is
// gone goes. A deleted pod leaves nothing behind: no sandbox, no container, no log directory,
// no cgroup.
func TestContainerGarbageCollection(t *testing.T) {
	n := startNode(t, "--maximum-dead-containers-per-container=1", "--minimum-container-ttl-duration=2s", "--container-gc-period=1s")
	stale := filepath.Join(n.logsDir, "default_stale-"+n.name+"_"+testharness.RandomHex(8))
	if err := os.MkdirAll(filepath.Join(stale, "c"), 0o755); err != nil {
		t.Fatal(err)
	}
	n.write("crash.yaml", `apiVersion: v1
kind: Pod
metadata: {name: crash}
spec:
  terminationGracePeriodSeconds: 2
  containers:
  - {name: c, image: "busybox:1.35", command: ["sh", "-c", "echo instance; exit 1"]}
`)
	p := n.waitPod("crash", 60*time.Second, "seen", func(p *v1.Pod) bool { return p != nil && p.UID != "" })
	uid := p.UID
	logDir := filepath.Join(n.logsDir, p.Namespace+"_"+p.Name+"_"+string(uid))
	c := n.criClient()

	// Follow the instances until the second one has exited (the first back-off is 10 s).
	var first *runtimeapi.Container
	var firstLog string
	start := time.Now()
	deadline := start.Add(60 * time.Second)
	for {
		ctrs := podContainers(t, c, uid)
		if ctr := ctrs[0]; ctr != nil && first == nil {
			first = ctr
			st, err := c.ContainerStatus(context.Background(), ctr.Id, false)
			if err != nil {
				t.Fatal(err)
			}
			firstLog = st.GetStatus().GetLogPath()
		}
		if second := ctrs[1]; second != nil && second.State == runtimeapi.ContainerState_CONTAINER_EXITED {
			t.Logf("the second instance exited %v after the pod appeared", time.Since(start).Round(100*time.Millisecond))
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the container did not restart and exit again within 60 s; instances: %v", ctrs)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if first == nil || firstLog == "" {
		t.Fatalf("the first instance was never seen (%v, log %q)", first, firstLog)
	}

	// The first instance goes once a newer one is dead: one dead instance is kept.
	var ctrs map[uint32]*runtimeapi.Container
	deadline = time.Now().Add(15 * time.Second)
	for ctrs = podContainers(t, c, uid); ctrs[0] != nil && time.Now().Before(deadline); ctrs = podContainers(t, c, uid) {
		time.Sleep(200 * time.Millisecond)
	}
	if ctrs[0] != nil {
		t.Fatalf("the first instance %s is still there 15 s after the second one exited", first.Id)
	}
	t.Logf("the first instance went %v after the pod appeared", time.Since(start).Round(100*time.Millisecond))
	if len(ctrs) > 2 {
		t.Errorf("%d instances left, want the current one and at most one dead: %v", len(ctrs), ctrs)
	}
	if _, err := os.Stat(firstLog); !os.IsNotExist(err) {
		t.Errorf("the removed instance's log file %s is still there: %v", firstLog, err)
	}
	if second := ctrs[1]; second != nil {
		st, err := c.ContainerStatus(context.Background(), second.Id, false)
		if err == nil {
			if _, err := os.Stat(st.GetStatus().GetLogPath()); err != nil {
				t.Errorf("the kept instance's log file is gone: %v", err)
			}
		}
	}
	n.logs.waitCount(t, 5*time.Second, 1, `"Removing dead container"`, `containerID="`+first.Id+`"`,
		`reason="over maximum-dead-containers-per-container"`)
	if cs := containerStatus(n.pod("crash"), "c"); cs == nil || cs.RestartCount < 1 || cs.LastTerminationState.Terminated == nil {
		t.Errorf("restart count and last state lost with the dead instance: %+v", cs)
	}

	// The log directory of a pod that is gone (and has no sandbox) goes.
	deadline = time.Now().Add(10 * time.Second)
	for _, err := os.Stat(stale); err == nil && time.Now().Before(deadline); _, err = os.Stat(stale) {
		time.Sleep(200 * time.Millisecond)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("the log directory of a pod that is gone is still there: %v", err)
	}

	// Deleted: nothing of the pod is left.
	n.remove("crash.yaml")
	n.waitPod("crash", 30*time.Second, "gone", func(p *v1.Pod) bool { return p == nil })
	var left []string
	deadline = time.Now().Add(30 * time.Second)
	for left = podLeftovers(t, c, uid, logDir); len(left) > 0 && time.Now().Before(deadline); left = podLeftovers(t, c, uid, logDir) {
		time.Sleep(300 * time.Millisecond)
	}
	if len(left) > 0 {
		t.Errorf("the deleted pod left %s", strings.Join(left, ", "))
	}
	if got := n.logs.matching(`"Container garbage collection failed"`); len(got) > 0 {
		t.Errorf("container GC failed: %s", strings.Join(slices.Compact(got), "\n"))
	}
}
