package admission

import (
	"reflect"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"
)

const limitsWhy = "hugepages-<size> limits are not enforced by nodelet yet: " +
	"upstream sets hugetlb limits; nodelet sets none"

func TestUnsupported(t *testing.T) {
	container := func(mod func(c *v1.Container)) func(*v1.Pod) {
		return func(p *v1.Pod) { mod(&p.Spec.Containers[0]) }
	}
	volume := func(vs v1.VolumeSource) func(*v1.Pod) {
		return func(p *v1.Pod) { p.Spec.Volumes = append(p.Spec.Volumes, v1.Volume{Name: "v", VolumeSource: vs}) }
	}
	restartAll := v1.ContainerRestartRule{Action: v1.ContainerRestartRuleActionRestartAllContainers,
		ExitCodes: &v1.ContainerRestartRuleOnExitCodes{Operator: v1.ContainerRestartRuleOnExitCodesOpIn, Values: []int32{42}}}
	restart := v1.ContainerRestartRule{Action: v1.ContainerRestartRuleActionRestart,
		ExitCodes: &v1.ContainerRestartRuleOnExitCodes{Operator: v1.ContainerRestartRuleOnExitCodesOpIn, Values: []int32{42}}}
	cases := []struct {
		name string
		mod  func(*v1.Pod)
		want string // the message; "" when admitted
	}{
		{"a plain pod", func(*v1.Pod) {}, ""},

		{"hostUsers false", func(p *v1.Pod) { p.Spec.HostUsers = ptr.To(false) },
			"spec.hostUsers: false needs user namespaces, which nodelet does not support yet"},
		{"hostUsers true", func(p *v1.Pod) { p.Spec.HostUsers = ptr.To(true) }, ""},
		{"setHostnameAsFQDN with a subdomain", func(p *v1.Pod) { p.Spec.SetHostnameAsFQDN, p.Spec.Subdomain = ptr.To(true), "sub" },
			"spec.setHostnameAsFQDN: true with a subdomain: nodelet does not make the pod's FQDN its hostname yet"},
		{"setHostnameAsFQDN without a subdomain changes nothing upstream", func(p *v1.Pod) { p.Spec.SetHostnameAsFQDN = ptr.To(true) }, ""},
		{"setHostnameAsFQDN on the host network changes nothing upstream", func(p *v1.Pod) {
			p.Spec.SetHostnameAsFQDN, p.Spec.Subdomain, p.Spec.HostNetwork = ptr.To(true), "sub", true
		}, ""},
		{"runtimeClassName: honoured (the sandbox's handler)", func(p *v1.Pod) { p.Spec.RuntimeClassName = ptr.To("gvisor") }, ""},
		{"empty runtimeClassName", func(p *v1.Pod) { p.Spec.RuntimeClassName = ptr.To("") }, ""},
		{"resourceClaims", func(p *v1.Pod) { p.Spec.ResourceClaims = []v1.PodResourceClaim{{Name: "gpu"}} },
			"spec.resourceClaims: dynamic resource allocation (DRA) is not supported by nodelet yet"},
		{"pod-level limits", func(p *v1.Pod) {
			p.Spec.Resources = &v1.ResourceRequirements{Limits: rl("memory", "1Gi"), Requests: rl("memory", "1Gi")}
		},
			"spec.resources.limits: pod-level limits (and claims) are not supported by nodelet yet: it sets no limits on the pod's cgroup"},
		{"pod-level requests", func(p *v1.Pod) { p.Spec.Resources = &v1.ResourceRequirements{Requests: rl("cpu", "1")} }, ""},
		{"hostnameOverride", func(p *v1.Pod) { p.Spec.HostnameOverride = ptr.To("db-0") },
			"spec.hostnameOverride: nodelet does not set the pod's hostname from hostnameOverride yet"},

		{"env from a file", container(func(c *v1.Container) {
			c.Env = []v1.EnvVar{{Name: "A", Value: "a"}, {Name: "B", ValueFrom: &v1.EnvVarSource{FileKeyRef: &v1.FileKeySelector{VolumeName: "v", Path: "env", Key: "B"}}}}
		}), "spec.containers[0].env[1].valueFrom.fileKeyRef: environment variables from files (EnvFiles) are not supported by nodelet yet"},
		{"ephemeral-storage and hugepages limits", container(func(c *v1.Container) {
			c.Resources.Limits = rl("cpu", "1", "hugepages-2Mi", "4Mi", "ephemeral-storage", "1Gi", "example.com/gpu", "1")
		}), "spec.containers[0].resources.limits[hugepages-2Mi]: " + limitsWhy},
		{"ephemeral-storage request", container(func(c *v1.Container) { c.Resources.Requests = rl("ephemeral-storage", "1Gi") }), ""},
		{"container claims", container(func(c *v1.Container) { c.Resources.Claims = []v1.ResourceClaim{{Name: "gpu"}} }),
			"spec.containers[0].resources.claims: dynamic resource allocation (DRA) is not supported by nodelet yet"},
		{"resizePolicy", container(func(c *v1.Container) {
			c.ResizePolicy = []v1.ContainerResizePolicy{{ResourceName: v1.ResourceCPU, RestartPolicy: v1.NotRequired}}
		}), ""},
		{"RestartAllContainers", container(func(c *v1.Container) {
			c.RestartPolicy = ptr.To(v1.ContainerRestartPolicyNever)
			c.RestartPolicyRules = []v1.ContainerRestartRule{restart, restartAll}
		}), "spec.containers[0].restartPolicyRules[1].action: action RestartAllContainers is not supported by nodelet yet"},
		{"Restart rules", container(func(c *v1.Container) {
			c.RestartPolicy = ptr.To(v1.ContainerRestartPolicyNever)
			c.RestartPolicyRules = []v1.ContainerRestartRule{restart}
		}), ""},
		{"bindMountOptions", container(func(c *v1.Container) {
			c.VolumeMounts = []v1.VolumeMount{{Name: "v", MountPath: "/v", BindMountOptions: []string{"nosuid"}}}
		}), "spec.containers[0].volumeMounts[0].bindMountOptions: bind mount options (VolumeBindMountOptions, alpha) are not supported by nodelet yet"},
		{"volumeDevices", container(func(c *v1.Container) { c.VolumeDevices = []v1.VolumeDevice{{Name: "v", DevicePath: "/dev/xvda"}} }),
			"spec.containers[0].volumeDevices: raw block devices are not supported by nodelet (they come from persistentVolumeClaim volumes)"},
		{"h2c probe and hook", container(func(c *v1.Container) {
			c.ReadinessProbe = &v1.Probe{ProbeHandler: v1.ProbeHandler{HTTPGet: &v1.HTTPGetAction{Protocol: ptr.To(v1.HTTPProtocol("H2C"))}}}
			c.Lifecycle = &v1.Lifecycle{PreStop: &v1.LifecycleHandler{HTTPGet: &v1.HTTPGetAction{Protocol: ptr.To(v1.HTTPProtocol("H2C"))}}}
		}), "spec.containers[0].readinessProbe.httpGet.protocol: HTTP/2 (h2c) probes and hooks (H2CContainerProbe, alpha) are not supported by nodelet yet; " +
			"spec.containers[0].lifecycle.preStop.httpGet.protocol: HTTP/2 (h2c) probes and hooks (H2CContainerProbe, alpha) are not supported by nodelet yet"},
		{"grpc over TLS", container(func(c *v1.Container) {
			c.StartupProbe = &v1.Probe{ProbeHandler: v1.ProbeHandler{GRPC: &v1.GRPCAction{Port: 9090, Mode: ptr.To(v1.GRPCProbeMode("TLS"))}}}
		}), "spec.containers[0].startupProbe.grpc.mode: gRPC probes over TLS (GRPCContainerProbeTLS, alpha) are not supported by nodelet yet"},
		{"plain probes and hooks", container(func(c *v1.Container) {
			c.LivenessProbe = &v1.Probe{ProbeHandler: v1.ProbeHandler{GRPC: &v1.GRPCAction{Port: 9090}}}
			c.Lifecycle = &v1.Lifecycle{PostStart: &v1.LifecycleHandler{HTTPGet: &v1.HTTPGetAction{Path: "/"}}}
		}), ""},
		{"stopSignal", container(func(c *v1.Container) { c.Lifecycle = &v1.Lifecycle{StopSignal: ptr.To(v1.SIGUSR1)} }),
			"spec.containers[0].lifecycle.stopSignal: custom stop signals (ContainerStopSignals, alpha) are not supported by nodelet yet"},
		{"procMount Unmasked", container(func(c *v1.Container) {
			c.SecurityContext = &v1.SecurityContext{ProcMount: ptr.To(v1.UnmaskedProcMount)}
		}),
			"spec.containers[0].securityContext.procMount: Unmasked needs user namespaces, which nodelet does not support yet"},
		{"procMount Default", container(func(c *v1.Container) { c.SecurityContext = &v1.SecurityContext{ProcMount: ptr.To(v1.DefaultProcMount)} }), ""},
		{"init and ephemeral containers are checked too", func(p *v1.Pod) {
			p.Spec.InitContainers = []v1.Container{{Name: "i"}, {Name: "j", VolumeDevices: []v1.VolumeDevice{{Name: "v"}}}}
			p.Spec.EphemeralContainers = []v1.EphemeralContainer{{EphemeralContainerCommon: v1.EphemeralContainerCommon{Name: "e",
				SecurityContext: &v1.SecurityContext{ProcMount: ptr.To(v1.UnmaskedProcMount)}}}}
		}, "spec.initContainers[1].volumeDevices: raw block devices are not supported by nodelet (they come from persistentVolumeClaim volumes); " +
			"spec.ephemeralContainers[0].securityContext.procMount: Unmasked needs user namespaces, which nodelet does not support yet"},

		{"persistentVolumeClaim", volume(v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}),
			"spec.volumes[0].persistentVolumeClaim: this volume type is not supported by nodelet, which supports emptyDir, hostPath, configMap, secret, projected, downwardAPI and image volumes"},
		{"the supported volume types", func(p *v1.Pod) {
			for _, vs := range []v1.VolumeSource{{EmptyDir: &v1.EmptyDirVolumeSource{}}, {HostPath: &v1.HostPathVolumeSource{Path: "/x"}},
				{ConfigMap: &v1.ConfigMapVolumeSource{}}, {Secret: &v1.SecretVolumeSource{}}, {DownwardAPI: &v1.DownwardAPIVolumeSource{}},
				{Projected: &v1.ProjectedVolumeSource{Sources: []v1.VolumeProjection{{ServiceAccountToken: &v1.ServiceAccountTokenProjection{Path: "t"}}}}},
				{Image: &v1.ImageVolumeSource{Reference: "busybox"}}} {
				p.Spec.Volumes = append(p.Spec.Volumes, v1.Volume{Name: "v", VolumeSource: vs})
			}
		}, ""},
		{"emptyDir HugePages", volume(v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{Medium: "HugePages-2Mi"}}),
			"spec.volumes[0].emptyDir.medium: HugePages media are not supported by nodelet (it has no hugetlbfs support)"},
		{"disk emptyDir sizeLimit (the eviction manager enforces it)", volume(v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{SizeLimit: ptr.To(resource.MustParse("1Gi"))}}), ""},
		{"memory emptyDir sizeLimit is the tmpfs size", volume(v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{
			Medium: v1.StorageMediumMemory, SizeLimit: ptr.To(resource.MustParse("16Mi"))}}), ""},
		{"emptyDir mode", volume(v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{Mode: ptr.To[int32](0o700)}}),
			"spec.volumes[0].emptyDir.mode: an emptyDir's mode (EmptyDirVolumeMode, alpha) is not supported by nodelet yet"},
		{"volume file owners", func(p *v1.Pod) {
			p.Spec.Volumes = []v1.Volume{
				{Name: "s", VolumeSource: v1.VolumeSource{Secret: &v1.SecretVolumeSource{DefaultUser: ptr.To[int64](1), Items: []v1.KeyToPath{{Key: "k", Path: "k", User: ptr.To[int64](2)}}}}},
				{Name: "c", VolumeSource: v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{DefaultUser: ptr.To[int64](1)}}},
				{Name: "d", VolumeSource: v1.VolumeSource{DownwardAPI: &v1.DownwardAPIVolumeSource{DefaultUser: ptr.To[int64](1),
					Items: []v1.DownwardAPIVolumeFile{{Path: "n"}, {Path: "m", User: ptr.To[int64](1)}}}}},
				{Name: "p", VolumeSource: v1.VolumeSource{Projected: &v1.ProjectedVolumeSource{DefaultUser: ptr.To[int64](1), Sources: []v1.VolumeProjection{
					{ConfigMap: &v1.ConfigMapProjection{Items: []v1.KeyToPath{{Key: "k", Path: "k", User: ptr.To[int64](2)}}}},
					{ServiceAccountToken: &v1.ServiceAccountTokenProjection{Path: "t", User: ptr.To[int64](3)}},
					{DownwardAPI: &v1.DownwardAPIProjection{Items: []v1.DownwardAPIVolumeFile{{Path: "n", User: ptr.To[int64](1)}}}},
				}}}},
			}
		}, strings.Join([]string{
			"spec.volumes[0].secret.defaultUser", "spec.volumes[1].configMap.defaultUser",
			"spec.volumes[0].secret.items[0].user", "spec.volumes[3].projected.sources[0].configMap.items[0].user",
			"spec.volumes[2].downwardAPI.defaultUser",
			"spec.volumes[2].downwardAPI.items[1].user", "spec.volumes[3].projected.sources[2].downwardAPI.items[0].user",
			"spec.volumes[3].projected.defaultUser", "spec.volumes[3].projected.sources[1].serviceAccountToken.user",
		}, ": file owners in volumes (AtomicWriteVolumeUserFields, alpha) are not supported by nodelet yet; ") +
			": file owners in volumes (AtomicWriteVolumeUserFields, alpha) are not supported by nodelet yet"},
		{"clusterTrustBundle and podCertificate projections", volume(v1.VolumeSource{Projected: &v1.ProjectedVolumeSource{Sources: []v1.VolumeProjection{
			{ClusterTrustBundle: &v1.ClusterTrustBundleProjection{Path: "b"}}, {PodCertificate: &v1.PodCertificateProjection{}}}}}),
			"spec.volumes[0].projected.sources[0].clusterTrustBundle: clusterTrustBundle projections are not supported by nodelet yet; " +
				"spec.volumes[0].projected.sources[1].podCertificate: podCertificate projections are not supported by nodelet yet"},

		{"every refusal is named", func(p *v1.Pod) {
			p.Spec.HostUsers = ptr.To(false)
			p.Spec.Containers[0].Resources.Claims = []v1.ResourceClaim{{Name: "gpu"}}
		}, "spec.hostUsers: false needs user namespaces, which nodelet does not support yet; " +
			"spec.containers[0].resources.claims: dynamic resource allocation (DRA) is not supported by nodelet yet"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pod := testPod("p", nil, tc.mod)
			r := Unsupported(pod)
			want := Result{Admit: true}
			if tc.want != "" {
				want = Result{Reason: UnsupportedPodSpec, Message: tc.want}
			}
			if r != want {
				t.Errorf("Unsupported:\n got %+v\nwant %+v", r, want)
			}
		})
	}
}

// Every volume type but the seven nodelet sets up is refused, including any the API adds.
func TestUnsupportedVolumeTypes(t *testing.T) {
	supported := map[string]bool{}
	for _, s := range supportedVolumes() {
		supported[s] = true
	}
	vt := reflect.TypeFor[v1.VolumeSource]()
	for i := 0; i < vt.NumField(); i++ {
		name, _, _ := strings.Cut(vt.Field(i).Tag.Get("json"), ",")
		pod := testPod("p", nil)
		v := v1.Volume{Name: "v"}
		reflect.ValueOf(&v.VolumeSource).Elem().Field(i).Set(reflect.New(vt.Field(i).Type.Elem()))
		pod.Spec.Volumes = []v1.Volume{v}
		r := Unsupported(pod)
		if supported[name] {
			if !r.Admit {
				t.Errorf("%s: refused: %+v", name, r)
			}
			continue
		}
		if r.Admit || !strings.HasPrefix(r.Message, "spec.volumes[0]."+name+": this volume type is not supported by nodelet") {
			t.Errorf("%s: %+v, want a refusal naming spec.volumes[0].%s", name, r, name)
		}
	}
}

func TestUnsupportedFields(t *testing.T) {
	seen := map[string]bool{}
	for _, f := range UnsupportedFields() {
		if !strings.HasPrefix(f.Field, "spec.") || f.Why == "" || seen[f.Field] {
			t.Errorf("field %q (why %q): want a unique spec. path and a reason", f.Field, f.Why)
		}
		seen[f.Field] = true
	}
	for _, want := range []string{"spec.hostUsers", "spec.volumes[].persistentVolumeClaim", "spec.containers[].resources.claims"} {
		if !seen[want] {
			t.Errorf("%s is not listed", want)
		}
	}
}

// Fields only the scheduler, the API server or controllers use are admitted: nodelet rightly
// has nothing to do with them.
func TestChecksAdmitControlPlaneFields(t *testing.T) {
	w, err := NewSysctlAllowlist(SafeSysctls(nil))
	if err != nil {
		t.Fatal(err)
	}
	term := v1.PodAffinityTerm{TopologyKey: v1.LabelHostname}
	pod := pendingPod(func(p *v1.Pod) {
		p.Spec.NodeName = nodeName
		p.Spec.SchedulerName = "other-scheduler"
		p.Spec.PriorityClassName, p.Spec.Priority = "high", ptr.To[int32](1000)
		p.Spec.PreemptionPolicy = ptr.To(v1.PreemptNever)
		p.Spec.TopologySpreadConstraints = []v1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: v1.LabelHostname, WhenUnsatisfiable: v1.DoNotSchedule}}
		p.Spec.SchedulingGates = []v1.PodSchedulingGate{{Name: "example.com/wait"}}
		p.Spec.SchedulingGroup = &v1.PodSchedulingGroup{}
		p.Spec.EvictionResponders = []v1.EvictionResponder{{Name: "example.com/drain"}}
		p.Spec.Tolerations = []v1.Toleration{{Key: "gpu", Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoSchedule}}
		p.Spec.Affinity = &v1.Affinity{
			NodeAffinity: &v1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []v1.PreferredSchedulingTerm{{Weight: 1,
				Preference: v1.NodeSelectorTerm{MatchExpressions: []v1.NodeSelectorRequirement{{Key: "zone", Operator: v1.NodeSelectorOpIn, Values: []string{"elsewhere"}}}}}}},
			PodAffinity:     &v1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{term}},
			PodAntiAffinity: &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{term}},
		}
		p.Spec.AutomountServiceAccountToken = ptr.To(false)
		p.Spec.ReadinessGates = []v1.PodReadinessGate{{ConditionType: "example.com/ready"}}
		p.Spec.OS = &v1.PodOS{Name: v1.Linux}
		p.Spec.SecurityContext = &v1.PodSecurityContext{WindowsOptions: &v1.WindowsSecurityContextOptions{RunAsUserName: ptr.To("ContainerUser")},
			SELinuxChangePolicy: ptr.To(v1.SELinuxChangePolicyMountOption), FSGroupChangePolicy: ptr.To(v1.FSGroupChangeOnRootMismatch)}
	})
	node := testNode(func(n *v1.Node) {
		n.Spec.Taints = []v1.Taint{{Key: "gpu", Effect: v1.TaintEffectNoSchedule}, {Key: "dedicated", Effect: v1.TaintEffectPreferNoSchedule}}
	})
	if r := (Checks{Sysctls: w}).Admit(node, pod, nil); !r.Admit {
		t.Errorf("a pod with fields only the control plane uses was refused: %+v", r)
	}
}
