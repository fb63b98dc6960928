package e2e

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Issue 14: a pod's RuntimeClass picks its sandbox's runtime handler, as upstream. The test
// containerd has a second runc handler, nodelet-alt (hack/testenv.sh). A class whose handler
// the runtime lacks leaves the pod without a sandbox and says why in FailedCreatePodSandBox;
// the class's overhead reaches the sandbox's CRI config.
func TestClusterRuntimeClass(t *testing.T) {
	cn := startClusterNode(t)
	node := cn.waitNodeReady(60 * time.Second)
	found := false
	for _, h := range node.Status.RuntimeHandlers {
		found = found || h.Name == "nodelet-alt"
	}
	if !found {
		t.Fatalf("status.runtimeHandlers %+v: the test containerd's nodelet-alt handler is missing", node.Status.RuntimeHandlers)
	}
	ctx := context.Background()
	classes := cn.cp.client.NodeV1().RuntimeClasses()
	alt, missing := "alt-"+cn.name, "missing-"+cn.name
	for name, handler := range map[string]string{alt: "nodelet-alt", missing: "no-such-handler"} {
		rc := &nodev1.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Handler: handler,
			Overhead: &nodev1.Overhead{PodFixed: v1.ResourceList{v1.ResourceCPU: resource.MustParse("10m"), v1.ResourceMemory: resource.MustParse("16Mi")}}}
		if _, err := classes.Create(ctx, rc, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = classes.Delete(context.Background(), name, metav1.DeleteOptions{}) })
	}
	spec := "  runtimeClassName: %s\n  containers:\n  - name: app\n    image: docker.io/library/busybox:1.35\n    command: [sleep, '3600']\n"

	// A class whose handler exists: the pod runs, its sandbox with that handler.
	name := cn.applyPod(t, "rc", strings.Replace(spec, "%s", alt, 1))
	pod := cn.waitAPIPod("default", name, 90*time.Second, "Running", func(p *v1.Pod) bool { return p != nil && isRunningReady(p) })
	if mem := pod.Spec.Overhead.Memory(); mem.Value() != 16<<20 {
		t.Errorf("spec.overhead %v: the API server's RuntimeClass admission did not set the class's overhead", pod.Spec.Overhead)
	}
	sandboxes := cn.sandboxesOf("rc")
	if len(sandboxes) != 1 || sandboxes[0].RuntimeHandler != "nodelet-alt" {
		t.Fatalf("sandboxes %v, want one with runtime handler nodelet-alt", sandboxes)
	}
	st, err := cn.criClient().PodSandboxStatus(ctx, sandboxes[0].Id, true)
	if err != nil {
		t.Fatal(err)
	}
	var info struct {
		Config struct {
			Linux struct {
				Overhead struct {
					MemoryLimitInBytes int64 `json:"memory_limit_in_bytes"`
				} `json:"overhead"`
			} `json:"linux"`
		} `json:"config"`
	}
	if err := json.Unmarshal([]byte(st.GetInfo()["info"]), &info); err != nil {
		t.Fatalf("sandbox status info: %v", err)
	}
	if got := info.Config.Linux.Overhead.MemoryLimitInBytes; got != 16<<20 {
		t.Errorf("the sandbox's CRI overhead has memory %d, want the class's 16Mi", got)
	}

	// A class whose handler the runtime does not have: no sandbox, upstream's event, and the
	// running pod is undisturbed.
	bad := cn.applyPod(t, "rc-bad", strings.Replace(spec, "%s", missing, 1))
	deadline := time.Now().Add(60 * time.Second)
	var msgs []string
	for time.Now().Before(deadline) {
		evs, err := cn.cp.client.CoreV1().Events("default").List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + bad})
		if err == nil {
			msgs = msgs[:0]
			for _, e := range evs.Items {
				if e.Reason == "FailedCreatePodSandBox" {
					msgs = append(msgs, e.Message)
				}
			}
			if len(msgs) > 0 {
				break
			}
		}
		time.Sleep(time.Second)
	}
	if len(msgs) == 0 || !strings.HasPrefix(msgs[0], "Failed to create pod sandbox: ") || !strings.Contains(msgs[0], `"no-such-handler"`) {
		t.Errorf("FailedCreatePodSandBox events %q, want one naming the missing handler", msgs)
	}
	p := cn.waitAPIPod("default", bad, 10*time.Second, "Pending", func(p *v1.Pod) bool { return p != nil })
	if p.Status.Phase != v1.PodPending || len(cn.sandboxesOf("rc-bad")) != 0 {
		t.Errorf("pod with a missing handler: phase %s, sandboxes %v; want Pending without a sandbox", p.Status.Phase, cn.sandboxesOf("rc-bad"))
	}
	if again := cn.waitAPIPod("default", name, 5*time.Second, "Running", func(p *v1.Pod) bool { return p != nil }); !isRunningReady(again) ||
		containerStatus(again, "app").RestartCount != 0 {
		t.Errorf("the other pod was disturbed: %+v", again.Status)
	}
}
