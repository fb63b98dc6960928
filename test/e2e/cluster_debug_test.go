package e2e

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/nodelet/nodelet/internal/container"
)

func ephemeralStatus(p *v1.Pod, name string) *v1.ContainerStatus {
	for i := range p.Status.EphemeralContainerStatuses {
		if p.Status.EphemeralContainerStatuses[i].Name == name {
			return &p.Status.EphemeralContainerStatuses[i]
		}
	}
	return nil
}

// Issue 13: ephemeral containers. `kubectl debug --target` starts one in the target's process
// namespace (it sees the target's processes), its logs and attach work, it reports
// ephemeralContainerStatuses and is never restarted; one with a missing image waits in
// ErrImagePull/ImagePullBackOff while the pod's own container runs on undisturbed.
func TestClusterKubectlDebugTarget(t *testing.T) {
	cn := startClusterNode(t, "--node-ip", hostIP(t)) // logs and attach go through the API server's proxy
	cn.waitNodeReady(60 * time.Second)
	name := cn.applyPod(t, "debug", `  containers:
  - name: app
    image: docker.io/library/busybox:1.35
    command: ["sleep", "31337"]
`)
	cn.waitAPIPod("default", name, 90*time.Second, "running", func(p *v1.Pod) bool { return p != nil && p.Status.Phase == v1.PodRunning })

	// Not interactive: the debugger lists the processes it sees and exits.
	cn.cp.kubectl(t, "debug", name, "--image=docker.io/library/busybox:1.35", "--target=app", "-c", "ps", "--", "ps", "-o", "pid,args")
	p := cn.waitAPIPod("default", name, 60*time.Second, "the ephemeral container terminated", func(p *v1.Pod) bool {
		cs := ephemeralStatus(p, "ps")
		return cs != nil && cs.State.Terminated != nil
	})
	if cs := ephemeralStatus(p, "ps"); cs.State.Terminated.ExitCode != 0 || cs.State.Terminated.Reason != "Completed" ||
		!strings.HasPrefix(cs.ContainerID, "containerd://") || cs.RestartCount != 0 {
		t.Errorf("ephemeral container status %+v", cs)
	}
	if logs := cn.cp.kubectl(t, "logs", name, "-c", "ps"); !strings.Contains(logs, "sleep 31337") {
		t.Errorf("the debugger with --target=app does not see app's process; ps printed:\n%s", logs)
	}

	// Interactive: kubectl attaches to the new container; what is typed runs there.
	typed := io.MultiReader(strings.NewReader("ps -o args; echo debugged-$((6*7))\n"), &lateEOF{after: 3 * time.Second})
	out, errOut, _ := cn.cp.kubectlRun(nil, typed, 90*time.Second, "debug", "-i", name,
		"--image=docker.io/library/busybox:1.35", "--target=app", "-c", "shell", "--", "sh")
	if !strings.Contains(out, "sleep 31337") || !strings.Contains(out, "debugged-42") {
		t.Errorf("kubectl debug -i: stdout %q, stderr %q; want app's process and debugged-42", out, errOut)
	}

	// A debugger whose image does not exist waits; the app runs on, never restarted.
	cn.cp.kubectl(t, "debug", name, "--image=docker.io/library/no-such-image:1", "-c", "missing", "--", "true")
	p = cn.waitAPIPod("default", name, 60*time.Second, "the bad ephemeral container waiting", func(p *v1.Pod) bool {
		cs := ephemeralStatus(p, "missing")
		return cs != nil && cs.State.Waiting != nil &&
			(cs.State.Waiting.Reason == "ErrImagePull" || cs.State.Waiting.Reason == "ImagePullBackOff")
	})
	if cs := ephemeralStatus(p, "missing"); !strings.Contains(cs.State.Waiting.Message, "no-such-image") {
		t.Errorf("waiting message %q does not name the image", cs.State.Waiting.Message)
	}
	app := containerStatus(p, "app")
	if app == nil || app.State.Running == nil || app.RestartCount != 0 || p.Status.Phase != v1.PodRunning {
		t.Errorf("app %+v in phase %s: want it running, never restarted", app, p.Status.Phase)
	}
	// The first debugger stays terminated: ephemeral containers never restart.
	if cs := ephemeralStatus(p, "ps"); cs == nil || cs.State.Terminated == nil || cs.RestartCount != 0 {
		t.Errorf("the finished debugger's status %+v: want terminated, never restarted", cs)
	}
	if n := cn.containerCount(name, "ps"); n != 1 {
		t.Errorf("%d instances of the finished debugger in the runtime, want 1", n)
	}
}

// containerCount counts the runtime's instances of a container of the pod named podName
// (the full name, as applyPod returns it).
func (cn *clusterNode) containerCount(podName, containerName string) int {
	cn.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	list, err := cn.criClient().ListContainers(ctx, &runtimeapi.ContainerFilter{LabelSelector: map[string]string{
		container.PodNameLabel: podName, container.ContainerNameLabel: containerName}})
	if err != nil {
		cn.t.Fatal(err)
	}
	return len(list)
}
