package criconfig

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/ptr"
)

func TestSeccompProfile(t *testing.T) {
	runtimeDefault := &v1.SeccompProfile{Type: v1.SeccompProfileTypeRuntimeDefault}
	unconfined := &v1.SeccompProfile{Type: v1.SeccompProfileTypeUnconfined}
	localhost := func(name string) *v1.SeccompProfile {
		return &v1.SeccompProfile{Type: v1.SeccompProfileTypeLocalhost, LocalhostProfile: ptr.To(name)}
	}
	const root = "/var/lib/nodelet/seccomp"
	for _, tc := range []struct {
		name         string
		pod, ctr     *v1.SeccompProfile
		privileged   bool
		defaultOn    bool
		wantType     runtimeapi.SecurityProfile_ProfileType
		wantLocalRef string
		wantErr      string
	}{
		{name: "nothing set: Unconfined", wantType: runtimeapi.SecurityProfile_Unconfined},
		{name: "nothing set, seccompDefault: RuntimeDefault", defaultOn: true, wantType: runtimeapi.SecurityProfile_RuntimeDefault},
		{name: "pod RuntimeDefault", pod: runtimeDefault, wantType: runtimeapi.SecurityProfile_RuntimeDefault},
		{name: "pod Unconfined wins over seccompDefault", pod: unconfined, defaultOn: true, wantType: runtimeapi.SecurityProfile_Unconfined},
		{name: "the container's wins over the pod's", pod: runtimeDefault, ctr: unconfined, wantType: runtimeapi.SecurityProfile_Unconfined},
		{name: "the container's RuntimeDefault", pod: unconfined, ctr: runtimeDefault, wantType: runtimeapi.SecurityProfile_RuntimeDefault},
		{name: "Localhost is under the root", ctr: localhost("profiles/audit.json"), wantType: runtimeapi.SecurityProfile_Localhost,
			wantLocalRef: root + "/profiles/audit.json"},
		{name: "pod Localhost", pod: localhost("deny.json"), wantType: runtimeapi.SecurityProfile_Localhost, wantLocalRef: root + "/deny.json"},
		{name: "Localhost without a profile: upstream's error", ctr: &v1.SeccompProfile{Type: v1.SeccompProfileTypeLocalhost},
			wantErr: "localhostProfile must be set if seccompProfile type is Localhost."},
		{name: "Localhost with an empty profile: upstream's error", ctr: localhost(""),
			wantErr: "localhostProfile must be set if seccompProfile type is Localhost."},
		{name: "an unknown type is Unconfined, as upstream", ctr: &v1.SeccompProfile{Type: "Bogus"}, wantType: runtimeapi.SecurityProfile_Unconfined},
		{name: "privileged: the profile is still sent (the runtime skips it)", privileged: true, defaultOn: true,
			wantType: runtimeapi.SecurityProfile_RuntimeDefault},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := &v1.Pod{}
			if tc.pod != nil {
				pod.Spec.SecurityContext = &v1.PodSecurityContext{SeccompProfile: tc.pod}
			}
			c := &v1.Container{Name: "app", SecurityContext: &v1.SecurityContext{SeccompProfile: tc.ctr, Privileged: ptr.To(tc.privileged)}}
			got, err := SeccompProfile(pod, c, Seccomp{Default: tc.defaultOn, Root: root})
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("err %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.ProfileType != tc.wantType || got.LocalhostRef != tc.wantLocalRef {
				t.Errorf("got %v %q, want %v %q", got.ProfileType, got.LocalhostRef, tc.wantType, tc.wantLocalRef)
			}
		})
	}
}

func TestContainerAndSandboxCarrySeccomp(t *testing.T) {
	pod := &v1.Pod{Spec: v1.PodSpec{SecurityContext: &v1.PodSecurityContext{
		SeccompProfile: &v1.SeccompProfile{Type: v1.SeccompProfileTypeRuntimeDefault}}}}
	pod.Name, pod.Namespace, pod.UID = "p", "default", "uid"
	c := &v1.Container{Name: "app", Image: "busybox"}
	cfg, err := Container(pod, c, ContainerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.GetLinux().GetSecurityContext().GetSeccomp().GetProfileType(); got != runtimeapi.SecurityProfile_RuntimeDefault {
		t.Errorf("container seccomp %v, want RuntimeDefault", got)
	}
	c.SecurityContext = &v1.SecurityContext{SeccompProfile: &v1.SeccompProfile{Type: v1.SeccompProfileTypeLocalhost}}
	if _, err := Container(pod, c, ContainerOptions{}); err == nil {
		t.Error("a Localhost profile without its name built a config")
	}
	sb, err := Sandbox(pod, SandboxOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := sb.GetLinux().GetSecurityContext().GetSeccomp().GetProfileType(); got != runtimeapi.SecurityProfile_RuntimeDefault {
		t.Errorf("sandbox seccomp %v, want RuntimeDefault", got)
	}
}

func TestAppArmorProfile(t *testing.T) {
	for _, tc := range []struct {
		in          *v1.AppArmorProfile
		wantType    runtimeapi.SecurityProfile_ProfileType
		wantRef     string
		wantOldForm string
		wantErr     bool
	}{
		{in: &v1.AppArmorProfile{Type: v1.AppArmorProfileTypeRuntimeDefault}, wantType: runtimeapi.SecurityProfile_RuntimeDefault, wantOldForm: "runtime/default"},
		{in: &v1.AppArmorProfile{Type: v1.AppArmorProfileTypeUnconfined}, wantType: runtimeapi.SecurityProfile_Unconfined, wantOldForm: "unconfined"},
		{in: &v1.AppArmorProfile{Type: v1.AppArmorProfileTypeLocalhost, LocalhostProfile: ptr.To("k8s-nginx")},
			wantType: runtimeapi.SecurityProfile_Localhost, wantRef: "k8s-nginx", wantOldForm: "localhost/k8s-nginx"},
		{in: &v1.AppArmorProfile{Type: v1.AppArmorProfileTypeLocalhost}, wantErr: true},
		{in: &v1.AppArmorProfile{Type: "Bogus"}, wantErr: true},
	} {
		p, old, err := AppArmorProfile(tc.in)
		if tc.wantErr {
			if err == nil {
				t.Errorf("%v: no error", tc.in)
			}
			continue
		}
		if err != nil || p.ProfileType != tc.wantType || p.LocalhostRef != tc.wantRef || old != tc.wantOldForm {
			t.Errorf("%v: %v %q %v, want %v %q %q", tc.in, p, old, err, tc.wantType, tc.wantRef, tc.wantOldForm)
		}
	}
	if p, old, err := AppArmorProfile(nil); p != nil || old != "" || err != nil {
		t.Errorf("no profile: %v %q %v", p, old, err)
	}
}
