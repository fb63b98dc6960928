package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"

	"github.com/nodelet/nodelet/internal/testharness"
)

// clusterScript is hack/cluster.sh relative to this package's directory.
const clusterScript = "../../hack/cluster.sh"

// controlPlane is the running etcd + kube-apiserver + controller-manager + scheduler that
// hack/cluster.sh starts (built from the Go module proxy, cached).
type controlPlane struct {
	kubeconfig string // admin
	server     string // the API server's URL
	caFile     string // the cluster CA: it signs the API server's client certificate for kubelets
	kubectlBin string
	client     kubernetes.Interface
}

var (
	cpOnce sync.Once
	cp     *controlPlane
	cpErr  error
)

func runCluster(args ...string) ([]byte, error) {
	var out, errb bytes.Buffer
	cmd := exec.Command("bash", append([]string{clusterScript}, args...)...)
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if err != nil {
		return append(out.Bytes(), errb.Bytes()...), err
	}
	return out.Bytes(), nil
}

// cluster brings the control plane up once per test run (hack/cluster.sh up is idempotent) and
// returns it. Like testenv, it needs root.
func cluster(t *testing.T) *controlPlane {
	t.Helper()
	testenv(t) // root check, and the container runtime the node will use
	cpOnce.Do(func() {
		start := time.Now()
		if out, err := runCluster("up"); err != nil {
			cpErr = fmt.Errorf("%s up: %v\n%s", clusterScript, err, out)
			return
		}
		out, err := runCluster("env")
		if err != nil {
			cpErr = fmt.Errorf("%s env: %v\n%s", clusterScript, err, out)
			return
		}
		vars := parseExports(out)
		c := &controlPlane{kubeconfig: vars["KUBECONFIG"], kubectlBin: vars["KUBECTL"], caFile: vars["CLUSTER_CA"], server: vars["APISERVER"]}
		cfg, err := clientcmd.BuildConfigFromFlags("", c.kubeconfig)
		if err != nil {
			cpErr = fmt.Errorf("admin kubeconfig %q: %w", c.kubeconfig, err)
			return
		}
		if c.client, err = kubernetes.NewForConfig(cfg); err != nil {
			cpErr = err
			return
		}
		cp = c
		fmt.Fprintf(os.Stderr, "e2e: control plane up in %v\n", time.Since(start).Round(time.Millisecond))
	})
	if cpErr != nil {
		t.Fatal(cpErr)
	}
	return cp
}

// parseExports reads `export K=V` lines.
func parseExports(out []byte) map[string]string {
	vars := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := strings.TrimPrefix(strings.TrimSpace(sc.Text()), "export ")
		if k, v, ok := strings.Cut(line, "="); ok {
			vars[k] = strings.Trim(v, `"'`)
		}
	}
	return vars
}

// kubectl runs our kubectl as the cluster admin and returns its stdout.
func (c *controlPlane) kubectl(t *testing.T, args ...string) string {
	t.Helper()
	out, err := c.kubectlErr(args...)
	if err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

func (c *controlPlane) kubectlErr(args ...string) (string, error) {
	var out, errb bytes.Buffer
	cmd := exec.Command(c.kubectlBin, append([]string{"--kubeconfig", c.kubeconfig}, args...)...)
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if err != nil {
		return out.String() + errb.String(), err
	}
	return out.String(), nil
}

// apply pipes a manifest to kubectl apply.
func (c *controlPlane) apply(t *testing.T, manifest string) {
	t.Helper()
	cmd := exec.Command(c.kubectlBin, "--kubeconfig", c.kubeconfig, "apply", "-f", "-")
	cmd.Stdin = strings.NewReader(manifest)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("kubectl apply: %v\n%s\nmanifest:\n%s", err, out, manifest)
	}
}

// clusterNode is a nodelet joined to the control plane as a node.
type clusterNode struct {
	*node
	cp          *controlPlane
	kubeletPort int // the kubelet API (HTTPS, authenticated)
}

// startClusterNode starts nodelet with node credentials (system:node:<name>) for the control
// plane. Its cleanup, which runs before the node's own, deletes the pods bound to it, waits
// for nodelet to stop them, and deletes the Node and its Lease.
func startClusterNode(t *testing.T, extraArgs ...string) *clusterNode {
	t.Helper()
	name := "e2e-" + strings.ToLower(testharness.RandomHex(4))
	out, err := runCluster("kubeconfig", name)
	if err != nil {
		t.Fatalf("%s kubeconfig %s: %v\n%s", clusterScript, name, err, out)
	}
	kubeconfig := strings.TrimSpace(string(out))
	return startClusterNodeAs(t, name, append([]string{"--kubeconfig", kubeconfig}, extraArgs...)...)
}

// startClusterNodeAs is startClusterNode for node name with the credentials in args
// (--kubeconfig, or --bootstrap-kubeconfig and the --kubeconfig to write).
func startClusterNodeAs(t *testing.T, name string, extraArgs ...string) *clusterNode {
	t.Helper()
	c := cluster(t)
	kubeletPort := freePort(t)
	args := append([]string{"--node-ip", "127.0.0.1",
		"--node-status-update-frequency", "2s", "--port", fmt.Sprint(kubeletPort), "--client-ca-file", c.caFile}, extraArgs...)
	// Cleanups run last-registered first: API pods go, then nodelet stops (the node's own
	// cleanup), then the Node and its Lease are deleted so nodelet cannot renew them meanwhile.
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = c.client.CoordinationV1().Leases("kube-node-lease").Delete(ctx, name, metav1.DeleteOptions{})
		if err := c.client.CoreV1().Nodes().Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("cleanup: delete node %s: %v", name, err)
		}
	})
	n := startNamedNode(t, name, args...)
	cn := &clusterNode{node: n, cp: c, kubeletPort: kubeletPort}
	t.Cleanup(cn.cleanupAPI)
	return cn
}

func (cn *clusterNode) cleanupAPI() {
	t := cn.t
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	if cn.cmd.ProcessState == nil {
		pods, err := cn.cp.client.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + cn.name})
		if err == nil {
			for _, p := range pods.Items {
				_ = cn.cp.client.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](1)})
			}
		}
		for {
			pods, err := cn.cp.client.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + cn.name})
			if err == nil && len(nonMirror(pods.Items)) == 0 {
				break
			}
			if ctx.Err() != nil {
				t.Errorf("cleanup: pods deleted through the API were not removed by nodelet within 90 s: %v", err)
				break
			}
			time.Sleep(500 * time.Millisecond)
		}
	}
}

func nonMirror(pods []v1.Pod) []v1.Pod {
	var out []v1.Pod
	for _, p := range pods {
		if _, ok := p.Annotations["kubernetes.io/config.mirror"]; !ok {
			out = append(out, p)
		}
	}
	return out
}

// waitAPIPod polls the API server until cond holds for the pod (nil when absent).
func (cn *clusterNode) waitAPIPod(ns, name string, timeout time.Duration, what string, cond func(*v1.Pod) bool) *v1.Pod {
	cn.t.Helper()
	deadline := time.Now().Add(timeout)
	var last *v1.Pod
	for time.Now().Before(deadline) {
		p, err := cn.cp.client.CoreV1().Pods(ns).Get(context.Background(), name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			last = nil
		case err != nil:
			time.Sleep(300 * time.Millisecond)
			continue
		default:
			last = p
		}
		if cond(last) {
			return last
		}
		time.Sleep(300 * time.Millisecond)
	}
	js, _ := json.MarshalIndent(last, "", "  ")
	cn.t.Fatalf("pod %s/%s: waited %v for %s; last seen in the API:\n%s", ns, name, timeout, what, js)
	return nil
}

// applyPod creates pod <prefix>-<node> in default, bound to this node with a 1 s grace period;
// spec holds the rest of the pod's spec (containers, volumes...), indented as under spec:.
func (cn *clusterNode) applyPod(t *testing.T, prefix, spec string) string {
	t.Helper()
	name := prefix + "-" + cn.name
	cn.cp.apply(t, fmt.Sprintf("apiVersion: v1\nkind: Pod\nmetadata: {name: %s, namespace: default}\nspec:\n  nodeName: %s\n  terminationGracePeriodSeconds: 1\n", name, cn.name)+spec)
	return name
}
