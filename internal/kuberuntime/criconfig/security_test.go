package criconfig

import (
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/ptr"
)

// TestSecurity: the pod's and the container's security contexts reach the CRI as upstream's
// determineEffectiveSecurityContext sends them.
func TestSecurity(t *testing.T) {
	selinux := func(level string) *v1.SELinuxOptions {
		return &v1.SELinuxOptions{User: "u", Role: "r", Type: "t", Level: level}
	}
	cases := []struct {
		name  string
		pod   *v1.PodSecurityContext
		ctr   *v1.SecurityContext
		check func(t *testing.T, sc *runtimeapi.LinuxContainerSecurityContext)
	}{
		{"pod users and groups", &v1.PodSecurityContext{RunAsUser: ptr.To[int64](1000), RunAsGroup: ptr.To[int64](3000),
			SupplementalGroups: []int64{4000, 4001}, FSGroup: ptr.To[int64](2000)}, nil,
			func(t *testing.T, sc *runtimeapi.LinuxContainerSecurityContext) {
				if sc.RunAsUser.GetValue() != 1000 || sc.RunAsGroup.GetValue() != 3000 || !slices.Equal(sc.SupplementalGroups, []int64{4000, 4001, 2000}) {
					t.Errorf("user %v group %v supplemental %v", sc.RunAsUser, sc.RunAsGroup, sc.SupplementalGroups)
				}
				if sc.SupplementalGroupsPolicy != runtimeapi.SupplementalGroupsPolicy_Merge {
					t.Errorf("supplementalGroupsPolicy %v, want Merge by default", sc.SupplementalGroupsPolicy)
				}
			}},
		{"the container's users win", &v1.PodSecurityContext{RunAsUser: ptr.To[int64](1000), RunAsGroup: ptr.To[int64](3000)},
			&v1.SecurityContext{RunAsUser: ptr.To[int64](1), RunAsGroup: ptr.To[int64](2)},
			func(t *testing.T, sc *runtimeapi.LinuxContainerSecurityContext) {
				if sc.RunAsUser.GetValue() != 1 || sc.RunAsGroup.GetValue() != 2 {
					t.Errorf("user %v group %v, want the container's 1 and 2", sc.RunAsUser, sc.RunAsGroup)
				}
			}},
		{"Strict supplemental groups", &v1.PodSecurityContext{SupplementalGroupsPolicy: ptr.To(v1.SupplementalGroupsPolicyStrict)}, nil,
			func(t *testing.T, sc *runtimeapi.LinuxContainerSecurityContext) {
				if sc.SupplementalGroupsPolicy != runtimeapi.SupplementalGroupsPolicy_Strict {
					t.Errorf("supplementalGroupsPolicy %v, want Strict", sc.SupplementalGroupsPolicy)
				}
			}},
		{"SELinux options: the pod's, then the container's", &v1.PodSecurityContext{SELinuxOptions: selinux("s0:c1")}, nil,
			func(t *testing.T, sc *runtimeapi.LinuxContainerSecurityContext) {
				if o := sc.SelinuxOptions; o.GetUser() != "u" || o.GetRole() != "r" || o.GetType() != "t" || o.GetLevel() != "s0:c1" {
					t.Errorf("selinux %v", o)
				}
			}},
		{"the container's SELinux options win", &v1.PodSecurityContext{SELinuxOptions: selinux("s0:c1")}, &v1.SecurityContext{SELinuxOptions: selinux("s0:c2")},
			func(t *testing.T, sc *runtimeapi.LinuxContainerSecurityContext) {
				if sc.SelinuxOptions.GetLevel() != "s0:c2" {
					t.Errorf("selinux %v", sc.SelinuxOptions)
				}
			}},
		{"privileged", nil, &v1.SecurityContext{Privileged: ptr.To(true), AllowPrivilegeEscalation: ptr.To(false)},
			func(t *testing.T, sc *runtimeapi.LinuxContainerSecurityContext) {
				if !sc.Privileged || sc.NoNewPrivs {
					t.Errorf("privileged %v noNewPrivs %v, want privileged without no_new_privs", sc.Privileged, sc.NoNewPrivs)
				}
			}},
		{"procMount Default masks /proc", nil, &v1.SecurityContext{ProcMount: ptr.To(v1.DefaultProcMount)},
			func(t *testing.T, sc *runtimeapi.LinuxContainerSecurityContext) {
				if !slices.Contains(sc.MaskedPaths, "/proc/kcore") || !slices.Contains(sc.MaskedPaths, "/sys/devices/system/cpu/cpu0/thermal_throttle") ||
					!slices.Contains(sc.ReadonlyPaths, "/proc/sys") {
					t.Errorf("masked %v read-only %v", sc.MaskedPaths, sc.ReadonlyPaths)
				}
			}},
		{"no security context masks /proc too", nil, nil,
			func(t *testing.T, sc *runtimeapi.LinuxContainerSecurityContext) {
				if len(sc.MaskedPaths) != len(DefaultMaskedPaths())+1 || len(sc.ReadonlyPaths) != len(DefaultReadonlyPaths()) {
					t.Errorf("masked %v read-only %v", sc.MaskedPaths, sc.ReadonlyPaths)
				}
			}},
		{"procMount Unmasked", nil, &v1.SecurityContext{ProcMount: ptr.To(v1.UnmaskedProcMount)},
			func(t *testing.T, sc *runtimeapi.LinuxContainerSecurityContext) {
				if sc.MaskedPaths == nil || len(sc.MaskedPaths) != 0 || sc.ReadonlyPaths == nil || len(sc.ReadonlyPaths) != 0 {
					t.Errorf("masked %#v read-only %#v, want empty and not nil", sc.MaskedPaths, sc.ReadonlyPaths)
				}
			}},
		{"windowsOptions mean nothing on Linux", &v1.PodSecurityContext{WindowsOptions: &v1.WindowsSecurityContextOptions{RunAsUserName: ptr.To("ContainerUser")}},
			&v1.SecurityContext{WindowsOptions: &v1.WindowsSecurityContextOptions{HostProcess: ptr.To(false)}},
			func(t *testing.T, sc *runtimeapi.LinuxContainerSecurityContext) {
				if sc.RunAsUser != nil || sc.RunAsUsername != "" || sc.Privileged {
					t.Errorf("windowsOptions changed the Linux context: %v", sc)
				}
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pod := testPod()
			pod.Spec.SecurityContext = tc.pod
			c := &pod.Spec.Containers[0]
			c.SecurityContext = tc.ctr
			cfg, err := Container(pod, c, ContainerOptions{HostMaskedPaths: []string{"/sys/devices/system/cpu/cpu0/thermal_throttle"}})
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, cfg.Linux.SecurityContext)
		})
	}
}

// TestContainerAndSandboxPassThrough: fields the runtime takes as they are.
func TestContainerAndSandboxPassThrough(t *testing.T) {
	pod := testPod()
	c := &pod.Spec.Containers[0]
	c.WorkingDir, c.Stdin, c.StdinOnce, c.TTY = "/work", true, true, true
	c.Ports[0].HostIP = "127.0.0.1"
	c.Ports = append(c.Ports, v1.ContainerPort{ContainerPort: 53, HostPort: 5353, Protocol: v1.ProtocolUDP},
		v1.ContainerPort{ContainerPort: 9, HostPort: 9009, Protocol: v1.ProtocolSCTP})
	c.SecurityContext = &v1.SecurityContext{Privileged: ptr.To(true)}
	cfg, err := Container(pod, c, ContainerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.WorkingDir != "/work" || !cfg.Stdin || !cfg.StdinOnce || !cfg.Tty {
		t.Errorf("workingDir %q stdin %v stdinOnce %v tty %v", cfg.WorkingDir, cfg.Stdin, cfg.StdinOnce, cfg.Tty)
	}
	sb, err := Sandbox(pod, SandboxOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if pm := sb.PortMappings[0]; pm.HostIp != "127.0.0.1" || pm.HostPort != 8080 || pm.ContainerPort != 80 || pm.Protocol != runtimeapi.Protocol_TCP {
		t.Errorf("port mapping %v", pm)
	}
	if len(sb.PortMappings) != 3 || sb.PortMappings[1].Protocol != runtimeapi.Protocol_UDP || sb.PortMappings[1].HostPort != 5353 ||
		sb.PortMappings[2].Protocol != runtimeapi.Protocol_SCTP {
		t.Errorf("port mappings %v, want TCP 8080, UDP 5353 and SCTP 9009", sb.PortMappings)
	}
	if !sb.Linux.SecurityContext.Privileged {
		t.Error("a privileged container needs a privileged sandbox")
	}
}
