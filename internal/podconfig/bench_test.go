package podconfig

import (
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// benchManifest is a typical static pod manifest: a control-plane-like pod with resources,
// probes, environment, volumes and a sidecar.
const benchManifest = `apiVersion: v1
kind: Pod
metadata:
  name: etcd
  namespace: kube-system
  labels:
    component: etcd
    tier: control-plane
  annotations:
    example.com/owner: platform
spec:
  hostNetwork: true
  priorityClassName: system-node-critical
  securityContext:
    seccompProfile:
      type: RuntimeDefault
  initContainers:
  - name: log-shipper
    image: registry.example.com/fluent-bit:3.0
    restartPolicy: Always
    volumeMounts:
    - name: logs
      mountPath: /var/log/etcd
      readOnly: true
  containers:
  - name: etcd
    image: registry.k8s.io/etcd:3.5.15-0
    command:
    - etcd
    - --advertise-client-urls=https://192.168.1.10:2379
    - --data-dir=/var/lib/etcd
    - --listen-client-urls=https://127.0.0.1:2379,https://192.168.1.10:2379
    - --name=node-1
    env:
    - name: GOMAXPROCS
      value: "2"
    - name: ETCD_LOG_LEVEL
      value: info
    ports:
    - name: client
      containerPort: 2379
      protocol: TCP
    resources:
      requests:
        cpu: 100m
        memory: 100Mi
      limits:
        memory: 1Gi
    livenessProbe:
      httpGet:
        host: 127.0.0.1
        path: /livez
        port: 2381
        scheme: HTTP
      initialDelaySeconds: 10
      periodSeconds: 10
      timeoutSeconds: 15
      failureThreshold: 8
    startupProbe:
      httpGet:
        host: 127.0.0.1
        path: /readyz
        port: 2381
      periodSeconds: 10
      failureThreshold: 24
    volumeMounts:
    - name: data
      mountPath: /var/lib/etcd
    - name: certs
      mountPath: /etc/kubernetes/pki/etcd
      readOnly: true
    - name: logs
      mountPath: /var/log/etcd
  volumes:
  - name: data
    hostPath:
      path: /var/lib/etcd
      type: DirectoryOrCreate
  - name: certs
    hostPath:
      path: /etc/kubernetes/pki/etcd
      type: DirectoryOrCreate
  - name: logs
    emptyDir: {}
`

// BenchmarkParseManifest measures the whole read path of one manifest file: strict YAML
// decoding, defaults, static identity and validation. The file source runs it whenever a file
// changes; the HTTP source on every poll of a changed body.
func BenchmarkParseManifest(b *testing.B) {
	data := []byte(benchManifest)
	if p := ParseManifest(data, "/etc/kubernetes/manifests/etcd.yaml", true, "node-1"); len(p.Errs) != 0 || len(p.Pods) != 1 {
		b.Fatalf("ParseManifest: %v", p.Errs)
	}
	b.Run("ParseManifest", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			ParseManifest(data, "/etc/kubernetes/manifests/etcd.yaml", true, "node-1")
		}
	})
	b.Run("Decode", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := Decode(data, false); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Validate", func(b *testing.B) {
		pod := ParseManifest(data, "/etc/kubernetes/manifests/etcd.yaml", true, "node-1").Pods[0]
		b.ReportAllocs()
		for b.Loop() {
			if errs := Validate(pod); len(errs) != 0 {
				b.Fatal(errs)
			}
		}
	})
}

// benchSnapshot is a source's snapshot of n pods, each with two containers, labels and
// annotations; img is the image of the first container.
func benchSnapshot(n int, img string, mods ...func(*v1.Pod)) []*v1.Pod {
	res := v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("100m")}}
	pods := make([]*v1.Pod, 0, n)
	for i := range n {
		p := tpod(fmt.Sprintf("web-%03d/uid-%03d", i, i), image(img), label("app", "web"), annotation("example.com/team", "a"))
		p.Spec.Containers[0].Resources = res
		p.Spec.Containers = append(p.Spec.Containers, v1.Container{Name: "log", Image: "fluent-bit:3.0",
			Env: []v1.EnvVar{{Name: "LEVEL", Value: "info"}}})
		for _, m := range mods {
			m(p)
		}
		pods = append(pods, p)
	}
	return pods
}

// BenchmarkMerge measures the mux merging a source's complete snapshot of 100 pods: the file and
// HTTP sources send one every period, and the API source one on every pod event.
func BenchmarkMerge(b *testing.B) {
	b.Run("unchanged/100pods", func(b *testing.B) {
		s := NewState()
		snap := benchSnapshot(100, "busybox:1.35")
		s.Merge(APISource, snap, t0)
		b.ReportAllocs()
		for b.Loop() {
			if u, _ := s.Merge(APISource, snap, t0); len(u) != 0 {
				b.Fatalf("updates for an unchanged snapshot: %v", describe(u))
			}
		}
	})
	b.Run("one status changed/100pods", func(b *testing.B) {
		s := NewState()
		snaps := [2][]*v1.Pod{benchSnapshot(100, "busybox:1.35"), benchSnapshot(100, "busybox:1.35")}
		snaps[1][42] = tpod("web-042/uid-042", image("busybox:1.35"), label("app", "web"),
			annotation("example.com/team", "a"), phase(v1.PodRunning))
		snaps[1][42].Spec = snaps[0][42].Spec
		s.Merge(APISource, snaps[0], t0)
		i := 0
		b.ReportAllocs()
		for b.Loop() {
			i++
			if u, _ := s.Merge(APISource, snaps[i%2], t0); len(u) != 1 || u[0].Op != RECONCILE {
				b.Fatalf("updates: %v", describe(u))
			}
		}
	})
	b.Run("all updated/100pods", func(b *testing.B) {
		s := NewState()
		snaps := [2][]*v1.Pod{benchSnapshot(100, "busybox:1.35"), benchSnapshot(100, "busybox:1.36")}
		s.Merge(APISource, snaps[0], t0)
		i := 0
		b.ReportAllocs()
		for b.Loop() {
			i++
			if u, _ := s.Merge(APISource, snaps[i%2], t0); len(u) != 1 || u[0].Op != UPDATE || len(u[0].Pods) != 100 {
				b.Fatalf("updates: %v", describe(u))
			}
		}
	})
}
