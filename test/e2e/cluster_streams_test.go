package e2e

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
)

// hostIP is an address of this machine that is not loopback: the API server refuses to proxy
// (nodes/proxy) to loopback node addresses, so the tests that go through it register the node
// with this address. The CNI bridge and veth interfaces are skipped.
func hostIP(t *testing.T) string {
	t.Helper()
	ifaces, err := net.Interfaces()
	if err != nil {
		t.Fatal(err)
	}
	for _, iface := range ifaces {
		if iface.Flags&net.FlagUp == 0 || iface.Flags&net.FlagLoopback != 0 ||
			strings.HasPrefix(iface.Name, "veth") || strings.HasPrefix(iface.Name, "cni") || strings.HasPrefix(iface.Name, "nodelet") {
			continue
		}
		addrs, _ := iface.Addrs()
		for _, a := range addrs {
			if ipn, ok := a.(*net.IPNet); ok && ipn.IP.To4() != nil && ipn.IP.IsGlobalUnicast() {
				return ipn.IP.String()
			}
		}
	}
	t.Fatal("this machine has no non-loopback IPv4 address for the node; the API server cannot proxy to loopback nodes")
	return ""
}

// kubectlRun runs kubectl as the cluster admin with extra environment and stdin, bounded by
// timeout, and returns stdout, stderr and the exit code (-1 if it did not exit by itself).
func (c *controlPlane) kubectlRun(env []string, stdin io.Reader, timeout time.Duration, args ...string) (stdout, stderr string, code int) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.kubectlBin, append([]string{"--kubeconfig", c.kubeconfig}, args...)...)
	cmd.Env = append(cmd.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.Stdin = stdin
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return out.String(), errb.String(), 0
	case ctx.Err() != nil:
		return out.String(), errb.String(), -1
	case errors.As(err, &exit):
		return out.String(), errb.String(), exit.ExitCode()
	}
	return out.String(), errb.String() + err.Error(), -1
}

// kubectl's two protocols: WebSocket is its default since 1.30 (the API server translates it
// to SPDY toward the node unless the node declares it takes WebSockets itself); the variables
// bring back SPDY end to end.
var kubectlProtocols = []struct {
	name string
	env  []string
}{
	{"websocket", nil},
	{"spdy", []string{"KUBECTL_REMOTE_COMMAND_WEBSOCKETS=false", "KUBECTL_PORT_FORWARD_WEBSOCKETS=false"}},
}

// Issue 6, acceptances 2 and 3: `kubectl exec` (with and without stdin, exit codes) and
// `kubectl attach` work, and `kubectl port-forward` carries an HTTP request, over both of
// kubectl's protocols, through the API server and nodelet's kubelet API to containerd's
// streaming server.
func TestClusterKubectlExecAttachPortForward(t *testing.T) {
	cn := startClusterNode(t, "--node-ip", hostIP(t))
	cn.waitNodeReady(60 * time.Second)
	name := cn.applyPod(t, "streams", `  containers:
  - name: web
    image: docker.io/library/busybox:1.35
    command: ["sh", "-c", "mkdir -p /www && echo hello-from-the-pod > /www/index.html && exec httpd -f -p 8080 -h /www"]
  - name: talk
    image: docker.io/library/busybox:1.35
    stdin: true
    command: ["sh", "-c", "while read l; do echo got:$l; done"]
`)
	cn.waitAPIPod("default", name, 90*time.Second, "running", func(p *v1.Pod) bool { return p != nil && p.Status.Phase == v1.PodRunning })

	for _, proto := range kubectlProtocols {
		t.Run(proto.name, func(t *testing.T) {
			out, errOut, code := cn.cp.kubectlRun(proto.env, nil, time.Minute, "exec", name, "-c", "web", "--", "sh", "-c", "echo out; echo err >&2; exit 7")
			if code != 7 || out != "out\n" || !strings.Contains(errOut, "err\n") {
				t.Errorf("exec without stdin: exit %d, stdout %q, stderr %q; want 7, out, err", code, out, errOut)
			}
			out, errOut, code = cn.cp.kubectlRun(proto.env, strings.NewReader("line one\nline two\n"), time.Minute, "exec", "-i", name, "-c", "web", "--", "sh", "-c", "wc -l; cat")
			if code != 0 || out != "2\n" {
				t.Errorf("exec with stdin: exit %d, stdout %q, stderr %q; want 0 and the line count (cat gets nothing after wc)", code, out, errOut)
			}
			out, errOut, code = cn.cp.kubectlRun(proto.env, nil, time.Minute, "exec", name, "-c", "web", "--", "cat", "/www/index.html")
			if code != 0 || out != "hello-from-the-pod\n" {
				t.Errorf("exec cat: exit %d, stdout %q, stderr %q", code, out, errOut)
			}
			// attach: what is typed reaches the container's stdin, its output comes back. Input
			// ends 3 s after the line, as a user would close it, which ends the session: were it
			// to end at once, kubectl would not wait for the answer.
			typed := io.MultiReader(strings.NewReader("hello-"+proto.name+"\n"), &lateEOF{after: 3 * time.Second})
			out, errOut, _ = cn.cp.kubectlRun(proto.env, typed, 20*time.Second, "attach", "-i", name, "-c", "talk")
			if !strings.Contains(out, "got:hello-"+proto.name+"\n") {
				t.Errorf("attach: stdout %q, stderr %q; want got:hello-%s", out, errOut, proto.name)
			}
			portForward(t, cn, proto.env, name)
		})
	}
}

// portForward runs `kubectl port-forward pod :8080` and fetches the pod's page through it.
func portForward(t *testing.T, cn *clusterNode, env []string, pod string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cmd := exec.CommandContext(ctx, cn.cp.kubectlBin, "--kubeconfig", cn.cp.kubeconfig, "port-forward", "pod/"+pod, ":8080")
	cmd.Env = append(cmd.Environ(), env...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); _ = cmd.Wait() }()
	ports := make(chan string, 1)
	go func() {
		re := regexp.MustCompile(`Forwarding from 127\.0\.0\.1:(\d+) -> 8080`)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				ports <- m[1]
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
	}()
	var port string
	select {
	case port = <-ports:
	case <-time.After(30 * time.Second):
		t.Fatalf("kubectl port-forward did not start within 30 s: %s", errb.String())
	}
	client := &http.Client{Timeout: 20 * time.Second}
	resp, err := client.Get("http://127.0.0.1:" + port + "/index.html")
	if err != nil {
		t.Fatalf("GET through port-forward: %v (kubectl: %s)", err, errb.String())
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || string(body) != "hello-from-the-pod\n" {
		t.Errorf("through port-forward: %s %q", resp.Status, body)
	}
}

// lateEOF is an input that ends after a while.
type lateEOF struct{ after time.Duration }

func (l *lateEOF) Read([]byte) (int, error) {
	time.Sleep(l.after)
	return 0, io.EOF
}
