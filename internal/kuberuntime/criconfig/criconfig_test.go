package criconfig

import (
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/ptr"

	"github.com/nodelet/nodelet/internal/container"
)

func testPod() *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web-node1", Namespace: "default", UID: "uid-1",
			Labels: map[string]string{"app": "web"}, Annotations: map[string]string{"note": "x"}},
		Spec: v1.PodSpec{
			TerminationGracePeriodSeconds: ptr.To[int64](30),
			Containers: []v1.Container{{
				Name: "app", Image: "busybox:1.35", TerminationMessagePath: "/dev/termination-log",
				TerminationMessagePolicy: v1.TerminationMessageReadFile,
				Ports:                    []v1.ContainerPort{{ContainerPort: 80, HostPort: 8080, Protocol: v1.ProtocolTCP}, {ContainerPort: 53, Protocol: v1.ProtocolUDP}},
			}},
		},
	}
}

func TestSandbox(t *testing.T) {
	pod := testPod()
	cfg, err := Sandbox(pod, SandboxOptions{Attempt: 2, PodLogsDir: "/var/log/pods", CgroupParent: "/kubepods/besteffort/poduid-1"})
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		what      string
		got, want any
	}{
		{"metadata", cfg.Metadata.Name + "/" + cfg.Metadata.Namespace + "/" + cfg.Metadata.Uid, "web-node1/default/uid-1"},
		{"attempt", cfg.Metadata.Attempt, uint32(2)},
		{"hostname", cfg.Hostname, "web-node1"},
		{"log dir", cfg.LogDirectory, "/var/log/pods/default_web-node1_uid-1"},
		{"pod label kept", cfg.Labels["app"], "web"},
		{"uid label", cfg.Labels[container.PodUIDLabel], "uid-1"},
		{"name label", cfg.Labels[container.PodNameLabel], "web-node1"},
		{"annotation", cfg.Annotations["note"], "x"},
		{"port mappings (hostPort only)", len(cfg.PortMappings), 1},
		{"host port", cfg.PortMappings[0].HostPort, int32(8080)},
		{"cgroup parent", cfg.Linux.CgroupParent, "/kubepods/besteffort/poduid-1"},
		{"network ns", cfg.Linux.SecurityContext.NamespaceOptions.Network, runtimeapi.NamespaceMode_POD},
		{"pid ns", cfg.Linux.SecurityContext.NamespaceOptions.Pid, runtimeapi.NamespaceMode_CONTAINER},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.what, c.got, c.want)
		}
	}
	pod.Spec.HostNetwork, pod.Spec.HostPID, pod.Spec.HostIPC = true, true, true
	cfg, _ = Sandbox(pod, SandboxOptions{})
	ns := cfg.Linux.SecurityContext.NamespaceOptions
	if cfg.Hostname != "" || ns.Network != runtimeapi.NamespaceMode_NODE || ns.Pid != runtimeapi.NamespaceMode_NODE || ns.Ipc != runtimeapi.NamespaceMode_NODE {
		t.Errorf("host namespaces: hostname %q, %v", cfg.Hostname, ns)
	}
	pod = testPod()
	pod.Spec.ShareProcessNamespace = ptr.To(true)
	pod.Spec.Hostname = strings.Repeat("a", 62) + "-b"
	cfg, _ = Sandbox(pod, SandboxOptions{})
	if cfg.Linux.SecurityContext.NamespaceOptions.Pid != runtimeapi.NamespaceMode_POD {
		t.Error("shareProcessNamespace must give a pod PID namespace")
	}
	if cfg.Hostname != strings.Repeat("a", 62) {
		t.Errorf("hostname truncation: %q", cfg.Hostname)
	}
}

func TestDNSConfig(t *testing.T) {
	host := ParseResolvConf([]byte("# comment\nnameserver 10.0.0.2\nnameserver 10.0.0.3 ; x\nsearch example.com corp\noptions ndots:2 edns0\n"))
	if strings.Join(host.Nameservers, ",") != "10.0.0.2,10.0.0.3" || strings.Join(host.Searches, ",") != "example.com,corp" || strings.Join(host.Options, ",") != "ndots:2,edns0" {
		t.Fatalf("parse: %+v", host)
	}
	cluster := ClusterDNS{Servers: []string{"10.96.0.10"}, Domain: "cluster.local"}
	cases := []struct {
		name        string
		policy      v1.DNSPolicy
		hostNet     bool
		cluster     ClusterDNS
		dnsConfig   *v1.PodDNSConfig
		servers     string
		searches    string
		options     string
		wantWarning bool
	}{
		{"Default uses the host", v1.DNSDefault, false, cluster, nil, "10.0.0.2,10.0.0.3", "example.com,corp", "ndots:2,edns0", false},
		{"ClusterFirst", v1.DNSClusterFirst, false, cluster, nil, "10.96.0.10", "default.svc.cluster.local,svc.cluster.local,cluster.local,example.com,corp", "ndots:5", false},
		{"ClusterFirst without cluster DNS falls back with a warning", v1.DNSClusterFirst, false, ClusterDNS{}, nil, "10.0.0.2,10.0.0.3", "example.com,corp", "ndots:2,edns0", true},
		{"ClusterFirst on the host network is Default", v1.DNSClusterFirst, true, cluster, nil, "10.0.0.2,10.0.0.3", "example.com,corp", "ndots:2,edns0", false},
		{"ClusterFirstWithHostNet", v1.DNSClusterFirstWithHostNet, true, cluster, nil, "10.96.0.10", "default.svc.cluster.local,svc.cluster.local,cluster.local,example.com,corp", "ndots:5", false},
		{"None takes dnsConfig only", v1.DNSNone, false, cluster, &v1.PodDNSConfig{Nameservers: []string{"1.1.1.1"}, Searches: []string{"s"}, Options: []v1.PodDNSConfigOption{{Name: "ndots", Value: ptr.To("1")}}}, "1.1.1.1", "s", "ndots:1", false},
		{"dnsConfig merges and overrides options", v1.DNSClusterFirst, false, cluster, &v1.PodDNSConfig{Nameservers: []string{"10.96.0.10", "9.9.9.9"}, Options: []v1.PodDNSConfigOption{{Name: "ndots", Value: ptr.To("2")}, {Name: "rotate"}}}, "10.96.0.10,9.9.9.9", "default.svc.cluster.local,svc.cluster.local,cluster.local,example.com,corp", "ndots:2,rotate", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pod := testPod()
			pod.Spec.DNSPolicy, pod.Spec.HostNetwork, pod.Spec.DNSConfig = tc.policy, tc.hostNet, tc.dnsConfig
			cfg, warning := DNSConfig(pod, host, tc.cluster)
			if got := strings.Join(cfg.Servers, ","); got != tc.servers {
				t.Errorf("servers %q, want %q", got, tc.servers)
			}
			if got := strings.Join(cfg.Searches, ","); got != tc.searches {
				t.Errorf("searches %q, want %q", got, tc.searches)
			}
			if got := strings.Join(cfg.Options, ","); got != tc.options {
				t.Errorf("options %q, want %q", got, tc.options)
			}
			if (warning != "") != tc.wantWarning {
				t.Errorf("warning %q", warning)
			}
		})
	}
}

func TestContainerConfig(t *testing.T) {
	pod := testPod()
	c := &pod.Spec.Containers[0]
	c.Command = []string{"sh", "-c", "echo $(GREETING) $(POD) $$(NOT) $(MISSING)"}
	c.Args = []string{"$(NODE)"}
	c.Env = []v1.EnvVar{
		{Name: "POD", ValueFrom: &v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
		{Name: "GREETING", Value: "hi-$(POD)"},
		{Name: "NODE", ValueFrom: &v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{FieldPath: "spec.nodeName"}}},
		{Name: "IP", ValueFrom: &v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{FieldPath: "status.podIP"}}},
		{Name: "APP", ValueFrom: &v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{FieldPath: "metadata.labels['app']"}}},
		{Name: "MEM_MI", ValueFrom: &v1.EnvVarSource{ResourceFieldRef: &v1.ResourceFieldSelector{Resource: "limits.memory", Divisor: resource.MustParse("1Mi")}}},
		{Name: "CPU_LIMIT", ValueFrom: &v1.EnvVarSource{ResourceFieldRef: &v1.ResourceFieldSelector{Resource: "limits.cpu"}}},
	}
	c.Resources = v1.ResourceRequirements{
		Limits:   v1.ResourceList{v1.ResourceCPU: resource.MustParse("250m"), v1.ResourceMemory: resource.MustParse("64Mi")},
		Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("100m"), v1.ResourceMemory: resource.MustParse("32Mi")},
	}
	c.SecurityContext = &v1.SecurityContext{AllowPrivilegeEscalation: ptr.To(false), ReadOnlyRootFilesystem: ptr.To(true),
		Capabilities: &v1.Capabilities{Add: []v1.Capability{"NET_ADMIN"}, Drop: []v1.Capability{"ALL"}}}
	pod.Spec.SecurityContext = &v1.PodSecurityContext{RunAsUser: ptr.To[int64](1000), FSGroup: ptr.To[int64](2000)}
	cfg, err := Container(pod, c, ContainerOptions{RestartCount: 3, QOS: v1.PodQOSBurstable, MemoryCapacity: 1 << 30, OOMGroup: true,
		Identity: PodIdentity{NodeName: "node1", PodIPs: []string{"10.88.0.5", "fd00::5"}, Allocatable: v1.ResourceList{v1.ResourceCPU: resource.MustParse("2")}}})
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{}
	for _, kv := range cfg.Envs {
		env[kv.Key] = string(kv.Value)
	}
	lr, sc := cfg.Linux.Resources, cfg.Linux.SecurityContext
	checks := []struct {
		what      string
		got, want any
	}{
		{"command expanded", strings.Join(cfg.Command, " "), "sh -c echo hi-web-node1 web-node1 $(NOT) $(MISSING)"},
		{"memory.oom.group with OOMGroup", lr.Unified["memory.oom.group"], "1"},
		{"args expanded", cfg.Args[0], "node1"},
		{"env order", cfg.Envs[0].Key + "," + cfg.Envs[1].Key, "POD,GREETING"},
		{"pod ip", env["IP"], "10.88.0.5"},
		{"label ref", env["APP"], "web"},
		{"memory in Mi", env["MEM_MI"], "64"},
		{"cpu limit rounded up to cores", env["CPU_LIMIT"], "1"},
		{"attempt", cfg.Metadata.Attempt, uint32(3)},
		{"log path", cfg.LogPath, "app/3.log"},
		{"restart count annotation", cfg.Annotations[container.ContainerRestartCountAnnotation], "3"},
		{"hash annotation (hex, as upstream)", cfg.Annotations[container.ContainerHashAnnotation], "13f6cc20"},
		{"grace annotation", cfg.Annotations[container.PodTerminationGracePeriodAnnotation], "30"},
		{"ports annotation", strings.Contains(cfg.Annotations[container.ContainerPortsAnnotation], `"hostPort":8080`), true},
		{"container label", cfg.Labels[container.ContainerNameLabel], "app"},
		{"cpu shares", lr.CpuShares, int64(102)},
		{"cpu quota", lr.CpuQuota, int64(25000)},
		{"cpu period", lr.CpuPeriod, int64(100000)},
		{"memory limit", lr.MemoryLimitInBytes, int64(64 << 20)},
		{"oom score burstable", lr.OomScoreAdj, int64(1000 - 1000*(32<<20)/(1<<30))},
		{"run as user from pod", sc.RunAsUser.GetValue(), int64(1000)},
		{"fsGroup supplemental", sc.SupplementalGroups[0], int64(2000)},
		{"no new privs", sc.NoNewPrivs, true},
		{"read-only rootfs", sc.ReadonlyRootfs, true},
		{"caps", strings.Join(sc.Capabilities.AddCapabilities, ",") + "/" + strings.Join(sc.Capabilities.DropCapabilities, ","), "NET_ADMIN/ALL"},
	}
	for _, ch := range checks {
		if ch.got != ch.want {
			t.Errorf("%s = %v, want %v", ch.what, ch.got, ch.want)
		}
	}
	c.Env = []v1.EnvVar{{Name: "S", ValueFrom: &v1.EnvVarSource{SecretKeyRef: &v1.SecretKeySelector{Key: "k"}}}}
	if _, err := Container(pod, c, ContainerOptions{}); err == nil || !strings.Contains(err.Error(), "cluster mode") {
		t.Errorf("secretKeyRef: %v", err)
	}
}

func TestResourcesByQOS(t *testing.T) {
	be := Resources(v1.PodQOSBestEffort, &v1.Container{}, 1<<30, false)
	if be.CpuShares != 2 || be.CpuQuota != 0 || be.MemoryLimitInBytes != 0 || be.OomScoreAdj != 1000 || be.Unified != nil {
		t.Errorf("best effort: %+v", be)
	}
	if r := Resources(v1.PodQOSBestEffort, &v1.Container{}, 1<<30, true); r.Unified["memory.oom.group"] != "1" || len(r.Unified) != 1 {
		t.Errorf("with the OOM group kill (cgroup v2): unified %v, want memory.oom.group=1 only", r.Unified)
	}
	g := Resources(v1.PodQOSGuaranteed, &v1.Container{Resources: v1.ResourceRequirements{
		Limits: v1.ResourceList{v1.ResourceCPU: resource.MustParse("1m")}, Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("1m")}}}, 1<<30, false)
	if g.OomScoreAdj != -997 || g.CpuQuota != 1000 || g.CpuShares != 2 {
		t.Errorf("guaranteed tiny cpu: %+v", g)
	}
	if MilliCPUToShares(1000) != 1024 || MilliCPUToShares(1e9) != 262144 || MilliCPUToQuota(1500, 100000) != 150000 {
		t.Error("share/quota conversions")
	}
}

func TestVerifyRunAsNonRoot(t *testing.T) {
	pod := testPod()
	c := &pod.Spec.Containers[0]
	uid := func(n int64) *int64 { return &n }
	if err := VerifyRunAsNonRoot(pod, c, uid(0), ""); err != nil {
		t.Errorf("without runAsNonRoot nothing is checked: %v", err)
	}
	pod.Spec.SecurityContext = &v1.PodSecurityContext{RunAsNonRoot: ptr.To(true)}
	cases := []struct {
		runAs   *int64
		imgUID  *int64
		imgUser string
		wantErr string
	}{
		{nil, uid(0), "", "image will run as root"},
		{nil, uid(1000), "", ""},
		{nil, nil, "nobody", "non-numeric user"},
		{nil, nil, "1000", ""},
		{nil, nil, "", "image will run as root"},
		{uid(0), uid(1000), "", "runAsUser breaks non-root policy"},
		{uid(5), uid(0), "", ""},
	}
	for i, tc := range cases {
		c.SecurityContext = &v1.SecurityContext{RunAsUser: tc.runAs}
		err := VerifyRunAsNonRoot(pod, c, tc.imgUID, tc.imgUser)
		if (err == nil) != (tc.wantErr == "") || (err != nil && !strings.Contains(err.Error(), tc.wantErr)) {
			t.Errorf("case %d: err %v, want %q", i, err, tc.wantErr)
		}
	}
}
