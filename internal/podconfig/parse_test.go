package podconfig

import (
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

const goodPod = `apiVersion: v1
kind: Pod
metadata:
  name: web
spec:
  containers:
  - name: app
    image: busybox:1.35
    command: ["sh", "-c", "sleep 3600"]
`

func TestDecodeErrorsNameTheField(t *testing.T) {
	cases := []struct {
		name, manifest string
		list           bool
		want           string
	}{
		{"empty", "", false, "empty manifest"},
		{"only whitespace", "\n \n", false, "empty manifest"},
		{"yaml null", "---\n", false, "empty manifest"},
		{"malformed yaml", "apiVersion: v1\nkind: Pod\nmetadata: [\n", false, "not valid YAML or JSON"},
		{"no kind", "apiVersion: v1\nmetadata: {name: a}\n", false, "kind: Required value"},
		{"no apiVersion", "kind: Pod\nmetadata: {name: a}\n", false, "apiVersion: Required value"},
		{"wrong apiVersion", "apiVersion: apps/v1\nkind: Pod\n", false, `apiVersion: Unsupported value: "apps/v1"`},
		{"wrong kind", "apiVersion: v1\nkind: Service\n", false, `kind: Unsupported value: "Service"`},
		{"list in a file", "apiVersion: v1\nkind: PodList\nitems: []\n", false, `kind: Unsupported value: "PodList"`},
		{"unknown top-level field", goodPod + "bogus: 1\n", false, `unknown field "bogus"`},
		{"unknown nested field", strings.Replace(goodPod, "    image:", "    imagee: x\n    image:", 1), false, `unknown field "spec.containers[0].imagee"`},
		{"duplicate field", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"a","name":"b"}}`, false, `duplicate field "metadata.name"`},
		{"wrong type", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"a"},"spec":{"containers":"x"}}`, false, "spec.containers"},
		{"bad quantity", strings.Replace(goodPod, "    command:", "    resources: {limits: {cpu: lots}}\n    command:", 1), false, "quantities must match"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Decode([]byte(tc.manifest), tc.list)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Decode error = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestDecodeTooLarge(t *testing.T) {
	_, err := Decode(make([]byte, MaxManifestBytes+1), false)
	if err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Fatalf("error = %v", err)
	}
}

func TestDecodePodListKeepsGoodItems(t *testing.T) {
	list := `{"apiVersion":"v1","kind":"PodList","items":[
	 {"metadata":{"name":"a"},"spec":{"containers":[{"name":"c","image":"busybox"}]}},
	 {"metadata":{"name":"b"},"spec":{"containers":[{"name":"c","image":"busybox","bogus":1}]}},
	 {"metadata":{"name":"c"},"spec":{"containers":[{"name":"c","image":""}]}}]}`
	p := ParseManifest([]byte(list), "http://x/pods", false, "node1")
	if len(p.Pods) != 1 || p.Pods[0].Name != "a-node1" {
		t.Fatalf("pods = %v", p.Pods)
	}
	if len(p.Errs) != 2 || !strings.Contains(p.Errs[0].Error(), `items[1]: unknown field "spec.containers[0].bogus"`) ||
		!strings.Contains(p.Errs[1].Error(), "spec.containers[0].image: Required value") {
		t.Fatalf("errs = %v", p.Errs)
	}
}

func TestParseManifestStaticIdentity(t *testing.T) {
	p := ParseManifest([]byte(goodPod), "/etc/manifests/web.yaml", true, "Node-1")
	if len(p.Errs) != 0 {
		t.Fatal(p.Errs)
	}
	pod := p.Pods[0]
	if pod.Name != "web-node-1" || pod.Namespace != "default" || pod.Spec.NodeName != "Node-1" {
		t.Errorf("identity = %s/%s node %s", pod.Namespace, pod.Name, pod.Spec.NodeName)
	}
	if len(pod.UID) != 32 || pod.Annotations[ConfigHashAnnotationKey] != string(pod.UID) {
		t.Errorf("uid %q, config.hash %q", pod.UID, pod.Annotations[ConfigHashAnnotationKey])
	}
	if pod.Status.Phase != v1.PodPending {
		t.Errorf("phase %q", pod.Status.Phase)
	}
	if len(pod.Spec.Tolerations) != 1 || pod.Spec.Tolerations[0].Operator != v1.TolerationOpExists || pod.Spec.Tolerations[0].Effect != v1.TaintEffectNoExecute {
		t.Errorf("tolerations %v", pod.Spec.Tolerations)
	}
	again := ParseManifest([]byte(goodPod), "/etc/manifests/web.yaml", true, "Node-1").Pods[0]
	if again.UID != pod.UID {
		t.Error("the same manifest got a different UID")
	}
	for _, other := range []Parsed{
		ParseManifest([]byte(goodPod), "/etc/manifests/other.yaml", true, "Node-1"),
		ParseManifest([]byte(goodPod), "/etc/manifests/web.yaml", true, "node-2"),
		ParseManifest([]byte(strings.Replace(goodPod, "3600", "3601", 1)), "/etc/manifests/web.yaml", true, "Node-1"),
	} {
		if other.Pods[0].UID == pod.UID {
			t.Error("a different file, node or content got the same UID")
		}
	}
	fromURL := ParseManifest([]byte(goodPod), "http://h/p", false, "Node-1").Pods[0]
	if len(fromURL.Spec.Tolerations) != 0 {
		t.Error("pods from a URL do not get the NoExecute toleration (upstream adds it to files only)")
	}
	explicit := ParseManifest([]byte(strings.Replace(goodPod, "name: web", "name: web\n  uid: my-uid\n  namespace: kube-system", 1)), "/f", true, "n").Pods[0]
	if explicit.UID != "my-uid" || explicit.Namespace != "kube-system" {
		t.Errorf("explicit uid/namespace not kept: %s %s", explicit.UID, explicit.Namespace)
	}
}

func TestDefaults(t *testing.T) {
	pod := ParseManifest([]byte(`apiVersion: v1
kind: Pod
metadata: {name: d}
spec:
  hostNetwork: true
  volumes: [{name: scratch}, {name: host, hostPath: {path: /tmp}}]
  initContainers: [{name: init, image: "busybox@sha256:0123456789012345678901234567890123456789012345678901234567890123"}]
  containers:
  - name: latest
    image: busybox
    ports: [{containerPort: 8080}]
    env: [{name: NODE, valueFrom: {fieldRef: {fieldPath: spec.nodeName}}}]
    resources: {limits: {cpu: 100m, memory: 64Mi}, requests: {cpu: 50m}}
    livenessProbe: {httpGet: {port: 8080}}
    readinessProbe: {grpc: {port: 9090}}
    lifecycle: {preStop: {httpGet: {port: 8080}}}
  - {name: tagged, image: "reg:5000/busybox:1.35", resources: {limits: {cpu: "0.0001"}}}
`), "/f", true, "n")
	if len(pod.Errs) > 0 {
		t.Fatal(pod.Errs)
	}
	p := pod.Pods[0]
	s := p.Spec
	c0, c1, init := s.Containers[0], s.Containers[1], s.InitContainers[0]
	checks := []struct {
		what      string
		got, want any
	}{
		{"restartPolicy", s.RestartPolicy, v1.RestartPolicyAlways},
		{"dnsPolicy", s.DNSPolicy, v1.DNSClusterFirst},
		{"terminationGracePeriodSeconds", *s.TerminationGracePeriodSeconds, int64(30)},
		{"schedulerName", s.SchedulerName, "default-scheduler"},
		{"enableServiceLinks", *s.EnableServiceLinks, true},
		{"securityContext set", s.SecurityContext != nil, true},
		{"imagePullPolicy untagged", c0.ImagePullPolicy, v1.PullAlways},
		{"imagePullPolicy tagged (registry with port)", c1.ImagePullPolicy, v1.PullIfNotPresent},
		{"imagePullPolicy digest", init.ImagePullPolicy, v1.PullIfNotPresent},
		{"terminationMessagePath", c0.TerminationMessagePath, "/dev/termination-log"},
		{"terminationMessagePolicy", c0.TerminationMessagePolicy, v1.TerminationMessageReadFile},
		{"port protocol", c0.Ports[0].Protocol, v1.ProtocolTCP},
		{"hostNetwork hostPort", c0.Ports[0].HostPort, int32(8080)},
		{"fieldRef apiVersion", c0.Env[0].ValueFrom.FieldRef.APIVersion, "v1"},
		{"memory request from limit", c0.Resources.Requests.Memory().String(), "64Mi"},
		{"explicit cpu request kept", c0.Resources.Requests.Cpu().String(), "50m"},
		{"quantity rounded to milli", c1.Resources.Limits.Cpu().String(), "1m"},
		{"probe timeout", c0.LivenessProbe.TimeoutSeconds, int32(1)},
		{"probe period", c0.LivenessProbe.PeriodSeconds, int32(10)},
		{"probe success", c0.LivenessProbe.SuccessThreshold, int32(1)},
		{"probe failure", c0.LivenessProbe.FailureThreshold, int32(3)},
		{"httpGet path", c0.LivenessProbe.HTTPGet.Path, "/"},
		{"httpGet scheme", c0.LivenessProbe.HTTPGet.Scheme, v1.URISchemeHTTP},
		{"grpc service", *c0.ReadinessProbe.GRPC.Service, ""},
		{"preStop httpGet path", c0.Lifecycle.PreStop.HTTPGet.Path, "/"},
		{"volume without source is emptyDir", s.Volumes[0].EmptyDir != nil, true},
		{"hostPath type", *s.Volumes[1].HostPath.Type, v1.HostPathUnset},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.what, c.got, c.want)
		}
	}
	neg := &v1.Pod{Spec: v1.PodSpec{TerminationGracePeriodSeconds: new(int64)}}
	*neg.Spec.TerminationGracePeriodSeconds = -5
	SetDefaults(neg)
	if *neg.Spec.TerminationGracePeriodSeconds != 1 {
		t.Errorf("negative grace period defaulted to %d, want 1", *neg.Spec.TerminationGracePeriodSeconds)
	}
	vol := &v1.Pod{Spec: v1.PodSpec{Volumes: []v1.Volume{
		{Name: "s", VolumeSource: v1.VolumeSource{Secret: &v1.SecretVolumeSource{}}},
		{Name: "c", VolumeSource: v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{}}},
		{Name: "d", VolumeSource: v1.VolumeSource{DownwardAPI: &v1.DownwardAPIVolumeSource{}}},
		{Name: "p", VolumeSource: v1.VolumeSource{Projected: &v1.ProjectedVolumeSource{Sources: []v1.VolumeProjection{{ServiceAccountToken: &v1.ServiceAccountTokenProjection{}}}}}},
		{Name: "e", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{SizeLimit: ptrQ("0.0001")}}},
	}}}
	SetDefaults(vol)
	v := vol.Spec.Volumes
	if *v[0].Secret.DefaultMode != 0o644 || *v[1].ConfigMap.DefaultMode != 0o644 || *v[2].DownwardAPI.DefaultMode != 0o644 ||
		*v[3].Projected.DefaultMode != 0o644 || *v[3].Projected.Sources[0].ServiceAccountToken.ExpirationSeconds != 3600 ||
		v[4].EmptyDir.SizeLimit.String() != "1m" {
		t.Errorf("volume defaults wrong: %+v", v)
	}
}

func ptrQ(s string) *resource.Quantity { q := resource.MustParse(s); return &q }

func TestValidate(t *testing.T) {
	cases := []struct {
		name, spec, want string
	}{
		{"no containers", "containers: []", "spec.containers: Required value"},
		{"no image", "containers: [{name: a}]", "spec.containers[0].image: Required value"},
		{"bad container name", "containers: [{name: A_b, image: x}]", "spec.containers[0].name: Invalid value: \"A_b\""},
		{"duplicate container names", "containers: [{name: a, image: x}, {name: a, image: z}]", "spec.containers[1].name: Duplicate value: \"a\""},
		{"init and main share a name", "initContainers: [{name: a, image: x}]\n  containers: [{name: a, image: z}]", "spec.containers[0].name: Duplicate value"},
		{"port out of range", "containers: [{name: a, image: x, ports: [{containerPort: 70000}]}]", "spec.containers[0].ports[0].containerPort: Invalid value: 70000"},
		{"bad protocol", "containers: [{name: a, image: x, ports: [{containerPort: 80, protocol: HTTP}]}]", "spec.containers[0].ports[0].protocol: Unsupported value: \"HTTP\""},
		{"mount of a missing volume", "containers: [{name: a, image: x, volumeMounts: [{name: data, mountPath: /d}]}]", "spec.containers[0].volumeMounts[0].name: Not found: \"data\""},
		{"duplicate volume", "volumes: [{name: v, emptyDir: {}}, {name: v, emptyDir: {}}]\n  containers: [{name: a, image: x}]", "spec.volumes[1].name: Duplicate value: \"v\""},
		{"two volume sources", "volumes: [{name: v, emptyDir: {}, hostPath: {path: /x}}]\n  containers: [{name: a, image: x}]", "spec.volumes[0]: Forbidden: may not specify more than 1 volume type"},
		{"relative hostPath", "volumes: [{name: v, hostPath: {path: x}}]\n  containers: [{name: a, image: x}]", "spec.volumes[0].hostPath.path: Invalid value"},
		{"request above limit", "containers: [{name: a, image: x, resources: {limits: {cpu: 1}, requests: {cpu: 2}}}]", "spec.containers[0].resources.requests[cpu]: Invalid value"},
		{"restart policy", "restartPolicy: Sometimes\n  containers: [{name: a, image: x}]", "spec.restartPolicy: Unsupported value: \"Sometimes\""},
		{"env name", "containers: [{name: a, image: x, env: [{name: \"1=x\", value: z}]}]", "spec.containers[0].env[0].name: Invalid value"},
		{"probe with two handlers", "containers: [{name: a, image: x, livenessProbe: {exec: {command: [\"true\"]}, tcpSocket: {port: 1}}}]", "spec.containers[0].livenessProbe: Required value: must specify exactly one handler"},
		{"liveness success threshold", "containers: [{name: a, image: x, livenessProbe: {successThreshold: 2, tcpSocket: {port: 1}}}]", "spec.containers[0].livenessProbe.successThreshold: Invalid value: 2: must be 1"},
		{"secret reference", "containers: [{name: a, image: x, env: [{name: P, valueFrom: {secretKeyRef: {name: s, key: k}}}]}]", "spec: Forbidden: static pods may not reference secrets"},
		{"service account", "serviceAccountName: robot\n  containers: [{name: a, image: x}]", "static pods may not reference serviceaccounts"},
		{"deprecated service account", "serviceAccount: robot\n  containers: [{name: a, image: x}]", "static pods may not reference serviceaccounts"},
		{"dns none without nameservers", "dnsPolicy: None\n  containers: [{name: a, image: x}]", "spec.dnsConfig.nameservers: Required value"},
		{"main container restartPolicy", "containers: [{name: a, image: x, restartPolicy: Always}]", "spec.containers[0].restartPolicy: Forbidden"},
		{"sysctl with bad characters", "securityContext: {sysctls: [{name: \"kernel.shm$max\", value: \"1\"}]}\n  containers: [{name: a, image: x}]",
			`spec.securityContext.sysctls[0].name: Invalid value: "kernel.shm$max": must have at most 253 characters`},
		{"duplicate sysctl", "securityContext: {sysctls: [{name: kernel.msgmax, value: \"1\"}, {name: kernel.msgmax, value: \"2\"}]}\n  containers: [{name: a, image: x}]",
			`spec.securityContext.sysctls[1].name: Duplicate value: "kernel.msgmax"`},
		{"unknown seccomp type", "containers: [{name: a, image: x, securityContext: {seccompProfile: {type: Strict}}}]",
			`spec.containers[0].securityContext.seccompProfile.type: Unsupported value: "Strict"`},
		{"seccomp Localhost without a profile", "securityContext: {seccompProfile: {type: Localhost}}\n  containers: [{name: a, image: x}]",
			"spec.securityContext.seccompProfile.localhostProfile: Required value"},
		{"seccomp profile on RuntimeDefault", "containers: [{name: a, image: x, securityContext: {seccompProfile: {type: RuntimeDefault, localhostProfile: p.json}}}]",
			"spec.containers[0].securityContext.seccompProfile.localhostProfile: Invalid value"},
		{"unknown AppArmor type", "securityContext: {appArmorProfile: {type: Enforce}}\n  containers: [{name: a, image: x}]",
			`spec.securityContext.appArmorProfile.type: Unsupported value: "Enforce"`},
		{"ephemeral containers", "containers: [{name: a, image: x}]\n  ephemeralContainers: [{name: d, image: x}]",
			"spec.ephemeralContainers: Forbidden: cannot be set on create"},
		{"unknown supplementalGroupsPolicy", "securityContext: {supplementalGroupsPolicy: Loose}\n  containers: [{name: a, image: x}]",
			`spec.securityContext.supplementalGroupsPolicy: Unsupported value: "Loose"`},
		{"AppArmor Localhost without a profile", "initContainers: [{name: i, image: x, securityContext: {appArmorProfile: {type: Localhost}}}]\n  containers: [{name: a, image: x}]",
			"spec.initContainers[0].securityContext.appArmorProfile.localhostProfile: Required value"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := "apiVersion: v1\nkind: Pod\nmetadata: {name: v}\nspec:\n  " + tc.spec + "\n"
			p := ParseManifest([]byte(m), "/m/v.yaml", true, "n")
			if len(p.Errs) == 0 || !strings.Contains(p.Errs[0].Error(), tc.want) {
				t.Fatalf("errs = %v, want %q", p.Errs, tc.want)
			}
		})
	}
	bad := ParseManifest([]byte("apiVersion: v1\nkind: Pod\nmetadata: {name: Bad_Name}\nspec: {containers: [{name: a, image: x}]}\n"), "/f", true, "n")
	if len(bad.Errs) == 0 || !strings.Contains(bad.Errs[0].Error(), "metadata.name: Invalid value") {
		t.Fatalf("bad name: %v", bad.Errs)
	}
	ok := ParseManifest([]byte("apiVersion: v1\nkind: Pod\nmetadata: {name: ok}\nspec:\n  initContainers: [{name: side, image: x, restartPolicy: Always, readinessProbe: {exec: {command: [\"true\"]}}}]\n  containers: [{name: a, image: x}]\n"), "/f", true, "n")
	if len(ok.Errs) != 0 {
		t.Fatalf("a sidecar with a probe is valid: %v", ok.Errs)
	}
}
