package criconfig

import (
	"reflect"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func svc(ns, name, ip string, ports ...v1.ServicePort) *v1.Service {
	return &v1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: v1.ServiceSpec{ClusterIP: ip, Ports: ports}}
}

func port(name string, p int32, proto v1.Protocol) v1.ServicePort {
	return v1.ServicePort{Name: name, Port: p, Protocol: proto}
}

// master is the API server's service, as every cluster has it.
var master = svc("default", "kubernetes", "10.0.0.1", port("https", 443, v1.ProtocolTCP))

// masterEnv is what upstream's FromServices gives for master.
var masterEnv = map[string]string{
	"KUBERNETES_SERVICE_HOST":       "10.0.0.1",
	"KUBERNETES_SERVICE_PORT":       "443",
	"KUBERNETES_SERVICE_PORT_HTTPS": "443",
	"KUBERNETES_PORT":               "tcp://10.0.0.1:443",
	"KUBERNETES_PORT_443_TCP":       "tcp://10.0.0.1:443",
	"KUBERNETES_PORT_443_TCP_PROTO": "tcp",
	"KUBERNETES_PORT_443_TCP_PORT":  "443",
	"KUBERNETES_PORT_443_TCP_ADDR":  "10.0.0.1",
}

func merged(ms ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range ms {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

func TestServiceEnv(t *testing.T) {
	// A service with a dash in its name, two ports (the first unnamed), UDP and a default protocol.
	dns := svc("app", "my-dns", "10.0.0.10", port("", 53, v1.ProtocolUDP), port("metrics-port", 9153, ""))
	dnsEnv := map[string]string{
		"MY_DNS_SERVICE_HOST":              "10.0.0.10",
		"MY_DNS_SERVICE_PORT":              "53",
		"MY_DNS_SERVICE_PORT_METRICS_PORT": "9153",
		"MY_DNS_PORT":                      "udp://10.0.0.10:53",
		"MY_DNS_PORT_53_UDP":               "udp://10.0.0.10:53",
		"MY_DNS_PORT_53_UDP_PROTO":         "udp",
		"MY_DNS_PORT_53_UDP_PORT":          "53",
		"MY_DNS_PORT_53_UDP_ADDR":          "10.0.0.10",
		"MY_DNS_PORT_9153_TCP":             "tcp://10.0.0.10:9153",
		"MY_DNS_PORT_9153_TCP_PROTO":       "tcp",
		"MY_DNS_PORT_9153_TCP_PORT":        "9153",
		"MY_DNS_PORT_9153_TCP_ADDR":        "10.0.0.10",
	}
	sctp := svc("app", "s", "fd00::5", port("", 80, v1.ProtocolSCTP))
	sctpEnv := map[string]string{
		"S_SERVICE_HOST": "fd00::5", "S_SERVICE_PORT": "80", "S_PORT": "sctp://[fd00::5]:80",
		"S_PORT_80_SCTP": "sctp://[fd00::5]:80", "S_PORT_80_SCTP_PROTO": "sctp",
		"S_PORT_80_SCTP_PORT": "80", "S_PORT_80_SCTP_ADDR": "fd00::5",
	}
	// The namespace's own "kubernetes" service wins over the master service.
	ownKubernetes := svc("app", "kubernetes", "10.0.0.99", port("", 8080, v1.ProtocolTCP))
	ownKubernetesEnv := map[string]string{
		"KUBERNETES_SERVICE_HOST": "10.0.0.99", "KUBERNETES_SERVICE_PORT": "8080",
		"KUBERNETES_PORT": "tcp://10.0.0.99:8080", "KUBERNETES_PORT_8080_TCP": "tcp://10.0.0.99:8080",
		"KUBERNETES_PORT_8080_TCP_PROTO": "tcp", "KUBERNETES_PORT_8080_TCP_PORT": "8080",
		"KUBERNETES_PORT_8080_TCP_ADDR": "10.0.0.99",
	}
	for _, tc := range []struct {
		name     string
		services []*v1.Service
		ns       string
		links    bool
		want     map[string]string
	}{
		{name: "no services", ns: "app", links: true, want: map[string]string{}},
		{name: "master only, links off", services: []*v1.Service{master, dns}, ns: "app", links: false, want: masterEnv},
		{name: "master and the namespace's services", services: []*v1.Service{master, dns, sctp}, ns: "app", links: true,
			want: merged(masterEnv, dnsEnv, sctpEnv)},
		{name: "other namespaces' services are not linked", services: []*v1.Service{master, dns}, ns: "web", links: true, want: masterEnv},
		{name: "default namespace pods link its services", services: []*v1.Service{master, svc("default", "web", "10.0.0.7", port("", 80, ""))},
			ns: "default", links: true, want: merged(masterEnv, map[string]string{
				"WEB_SERVICE_HOST": "10.0.0.7", "WEB_SERVICE_PORT": "80", "WEB_PORT": "tcp://10.0.0.7:80",
				"WEB_PORT_80_TCP": "tcp://10.0.0.7:80", "WEB_PORT_80_TCP_PROTO": "tcp", "WEB_PORT_80_TCP_PORT": "80",
				"WEB_PORT_80_TCP_ADDR": "10.0.0.7"})},
		{name: "headless and ExternalName services are left out", ns: "app", links: true, want: masterEnv,
			services: []*v1.Service{master, svc("app", "headless", v1.ClusterIPNone, port("", 80, "")), svc("app", "ext", "")}},
		{name: "the namespace's kubernetes service wins, in either order", services: []*v1.Service{ownKubernetes, master}, ns: "app", links: true,
			want: ownKubernetesEnv},
		{name: "the namespace's kubernetes service wins, master first", services: []*v1.Service{master, ownKubernetes}, ns: "app", links: true,
			want: ownKubernetesEnv},
		{name: "a service without ports gives its host only", services: []*v1.Service{svc("app", "bare", "10.0.0.3")}, ns: "app", links: true,
			want: map[string]string{"BARE_SERVICE_HOST": "10.0.0.3"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ServiceEnv(tc.services, tc.ns, tc.links)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("ServiceEnv:\n got %v\nwant %v", got, tc.want)
			}
		})
	}
}

func TestEnvWithServices(t *testing.T) {
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default"},
		Spec: v1.PodSpec{EnableServiceLinks: ptr.To(true)}}
	services := map[string]string{
		"KUBERNETES_SERVICE_HOST": "10.0.0.1",
		"KUBERNETES_SERVICE_PORT": "443",
		"WEB_SERVICE_HOST":        "10.0.0.7",
	}
	for _, tc := range []struct {
		name string
		env  []v1.EnvVar
		from []v1.EnvFromSource
		want []string // KEY=VALUE in order
	}{
		{name: "service variables after the container's own, sorted",
			env:  []v1.EnvVar{{Name: "A", Value: "1"}},
			want: []string{"A=1", "KUBERNETES_SERVICE_HOST=10.0.0.1", "KUBERNETES_SERVICE_PORT=443", "WEB_SERVICE_HOST=10.0.0.7"}},
		{name: "a variable the pod defines wins over a service's",
			env:  []v1.EnvVar{{Name: "WEB_SERVICE_HOST", Value: "mine"}},
			want: []string{"WEB_SERVICE_HOST=mine", "KUBERNETES_SERVICE_HOST=10.0.0.1", "KUBERNETES_SERVICE_PORT=443"}},
		{name: "a variable from envFrom wins over a service's",
			from: []v1.EnvFromSource{{ConfigMapRef: &v1.ConfigMapEnvSource{LocalObjectReference: v1.LocalObjectReference{Name: "cm"}}}},
			want: []string{"KUBERNETES_SERVICE_PORT=6443", "KUBERNETES_SERVICE_HOST=10.0.0.1", "WEB_SERVICE_HOST=10.0.0.7"}},
		{name: "$(VAR) expands a service variable",
			env:  []v1.EnvVar{{Name: "URL", Value: "https://$(KUBERNETES_SERVICE_HOST):$(KUBERNETES_SERVICE_PORT)/"}},
			want: []string{"URL=https://10.0.0.1:443/", "KUBERNETES_SERVICE_HOST=10.0.0.1", "KUBERNETES_SERVICE_PORT=443", "WEB_SERVICE_HOST=10.0.0.7"}},
		{name: "$(VAR) prefers the container's own definition",
			env:  []v1.EnvVar{{Name: "WEB_SERVICE_HOST", Value: "mine"}, {Name: "U", Value: "$(WEB_SERVICE_HOST)"}},
			want: []string{"WEB_SERVICE_HOST=mine", "U=mine", "KUBERNETES_SERVICE_HOST=10.0.0.1", "KUBERNETES_SERVICE_PORT=443"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &v1.Container{Name: "c", Env: tc.env, EnvFrom: tc.from}
			objs := &fakeObjects{configMaps: map[string]map[string]string{"cm": {"KUBERNETES_SERVICE_PORT": "6443"}}}
			kvs, err := Env(pod, c, PodIdentity{ServiceEnv: services, Objects: objs})
			if err != nil {
				t.Fatal(err)
			}
			if got := keyValues(kvs); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Env:\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}
