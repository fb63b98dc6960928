package e2e

import (
	"bufio"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// envOfPod runs a pod whose container prints its environment and exits, and returns the
// environment it printed. links is the pod's enableServiceLinks; own are variables the pod
// defines itself.
func envOfPod(t *testing.T, cn *clusterNode, prefix string, links bool, own map[string]string) map[string]string {
	t.Helper()
	var spec strings.Builder
	fmt.Fprintf(&spec, "  restartPolicy: Never\n  enableServiceLinks: %t\n  containers:\n  - name: env\n    image: docker.io/library/busybox:1.35\n    command: [env]\n", links)
	if len(own) > 0 {
		spec.WriteString("    env:\n")
		for k, v := range own {
			fmt.Fprintf(&spec, "    - {name: %s, value: %q}\n", k, v)
		}
	}
	name := cn.applyPod(t, prefix, spec.String())
	cn.waitAPIPod("default", name, 90*time.Second, "Succeeded", func(p *v1.Pod) bool { return p != nil && p.Status.Phase == v1.PodSucceeded })
	out := cn.cp.kubectl(t, "logs", name)
	cn.cp.kubectl(t, "delete", "pod", name, "--wait=false")
	env := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), "="); ok {
			env[k] = v
		}
	}
	return env
}

// Issue 13: the service environment variables, as upstream's getServiceEnvVarMap builds them:
// the master service always, the namespace's services with enableServiceLinks, the pod's own
// variables first; a deleted Service's variables are gone from the pods started after.
func TestClusterServiceEnvironmentVariables(t *testing.T) {
	cn := startClusterNode(t)
	cn.waitNodeReady(60 * time.Second)
	ctx := context.Background()
	master, err := cn.cp.client.CoreV1().Services("default").Get(ctx, "kubernetes", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the API server's own service: %v", err)
	}
	// A name with dashes, a named TCP port first and a UDP port.
	svcName := "env-svc-" + cn.name
	svc, err := cn.cp.client.CoreV1().Services("default").Create(ctx, &v1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: svcName},
		Spec: v1.ServiceSpec{Selector: map[string]string{"app": "none"}, Ports: []v1.ServicePort{
			{Name: "http", Port: 8080, TargetPort: intstr.FromInt32(80), Protocol: v1.ProtocolTCP},
			{Name: "dns", Port: 53, Protocol: v1.ProtocolUDP},
		}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cn.cp.client.CoreV1().Services("default").Delete(context.Background(), svcName, metav1.DeleteOptions{})
	})
	ip := svc.Spec.ClusterIP
	prefix := strings.ToUpper(strings.ReplaceAll(svcName, "-", "_"))

	env := envOfPod(t, cn, "links", true, map[string]string{prefix + "_SERVICE_PORT_DNS": "mine"})
	want := map[string]string{
		"KUBERNETES_SERVICE_HOST":           master.Spec.ClusterIP,
		"KUBERNETES_SERVICE_PORT":           "443",
		"KUBERNETES_SERVICE_PORT_HTTPS":     "443",
		"KUBERNETES_PORT":                   "tcp://" + master.Spec.ClusterIP + ":443",
		prefix + "_SERVICE_HOST":            ip,
		prefix + "_SERVICE_PORT":            "8080",
		prefix + "_SERVICE_PORT_HTTP":       "8080",
		prefix + "_SERVICE_PORT_DNS":        "mine", // the pod's own variable wins
		prefix + "_PORT":                    "tcp://" + ip + ":8080",
		prefix + "_PORT_8080_TCP":           "tcp://" + ip + ":8080",
		prefix + "_PORT_8080_TCP_PROTO":     "tcp",
		prefix + "_PORT_8080_TCP_PORT":      "8080",
		prefix + "_PORT_8080_TCP_ADDR":      ip,
		prefix + "_PORT_53_UDP":             "udp://" + ip + ":53",
		prefix + "_PORT_53_UDP_PROTO":       "udp",
		prefix + "_PORT_53_UDP_PORT":        "53",
		prefix + "_PORT_53_UDP_ADDR":        ip,
		"KUBERNETES_PORT_443_TCP_ADDR":      master.Spec.ClusterIP,
		"KUBERNETES_PORT_443_TCP_PROTO":     "tcp",
		"KUBERNETES_PORT_443_TCP_PORT":      "443",
		"KUBERNETES_PORT_443_TCP":           "tcp://" + master.Spec.ClusterIP + ":443",
		prefix + "_SERVICE_PORT_HTTP_EXTRA": "", // absent: no such port
	}
	for k, v := range want {
		if got, ok := env[k]; v == "" && ok || v != "" && got != v {
			t.Errorf("with enableServiceLinks: %s=%q (present %t), want %q", k, got, ok, v)
		}
	}

	env = envOfPod(t, cn, "nolinks", false, nil)
	if env["KUBERNETES_SERVICE_HOST"] != master.Spec.ClusterIP || env["KUBERNETES_SERVICE_PORT"] != "443" {
		t.Errorf("without enableServiceLinks: KUBERNETES_SERVICE_HOST=%q KUBERNETES_SERVICE_PORT=%q, want the master service always",
			env["KUBERNETES_SERVICE_HOST"], env["KUBERNETES_SERVICE_PORT"])
	}
	for k := range env {
		if strings.HasPrefix(k, prefix) {
			t.Errorf("without enableServiceLinks: %s is set", k)
		}
	}

	// The Service is deleted: pods started after it no longer get its variables. The watch
	// delivers the deletion within moments; a pod started meanwhile may still see it.
	if err := cn.cp.client.CoreV1().Services("default").Delete(ctx, svcName, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	for attempt := 1; ; attempt++ {
		env = envOfPod(t, cn, fmt.Sprintf("deleted%d", attempt), true, nil)
		if _, ok := env[prefix+"_SERVICE_HOST"]; !ok {
			break
		}
		if attempt == 5 {
			t.Fatalf("the deleted service's variables are still set in the 5th pod started after the deletion")
		}
		time.Sleep(time.Second)
	}
	if env["KUBERNETES_SERVICE_HOST"] != master.Spec.ClusterIP {
		t.Errorf("after the deletion: KUBERNETES_SERVICE_HOST=%q", env["KUBERNETES_SERVICE_HOST"])
	}
}
