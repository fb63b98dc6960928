package kubeletconfig

import (
	"reflect"
	"strings"
	"testing"

	"k8s.io/component-base/featuregate"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
)

func TestFeatureGates(t *testing.T) {
	tests := []struct {
		name    string
		file    string
		args    []string
		want    map[string]bool
		wantErr []string // substrings of the error; none: Load succeeds
	}{
		{name: "known gates in the file", file: "featureGates: {EventedPLEG: false, KubeletTracing: true}\n",
			want: map[string]bool{"EventedPLEG": false, "KubeletTracing": true}},
		{name: "a locked gate set against its lock", file: "featureGates: {KubeletTracing: false}\n",
			wantErr: []string{"featureGates[KubeletTracing]", "locked to true"}},
		{name: "an unknown gate in the file", file: "featureGates: {EventedPLEG: true, NoSuchGate: true}\n",
			wantErr: []string{"load ", "featureGates[NoSuchGate]", "unrecognized feature gate: NoSuchGate"}},
		{name: "--feature-gates merges over the file key by key", file: "featureGates: {EventedPLEG: false, GracefulNodeShutdown: true}\n",
			args: []string{"--feature-gates", "GracefulNodeShutdown=false,GracefulNodeShutdownBasedOnPodPriority=false"},
			want: map[string]bool{"EventedPLEG": false, "GracefulNodeShutdown": false, "GracefulNodeShutdownBasedOnPodPriority": false}},
		{name: "an unknown gate in the flag", args: []string{"--feature-gates", "EventedPLEG=true,Bogus=false"},
			wantErr: []string{"--feature-gates", "unrecognized feature gate: Bogus"}},
		{name: "a malformed flag", args: []string{"--feature-gates", "EventedPLEG"},
			wantErr: []string{"feature-gates", "expect string=bool"}},
		{name: "a flag value that is no bool", args: []string{"--feature-gates", "EventedPLEG=maybe"},
			wantErr: []string{"feature-gates", "invalid value of EventedPLEG"}},
		{name: "AllAlpha is known", args: []string{"--feature-gates", "AllAlpha=false"},
			want: map[string]bool{"AllAlpha": false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := tt.args
			if tt.file != "" {
				args = append([]string{"--config", writeConfig(t, header+tt.file)}, args...)
			}
			cfg, err := Load(args, fixedHostname("node"))
			if len(tt.wantErr) > 0 {
				if err == nil {
					t.Fatalf("Load succeeded with featureGates %v", cfg.KubeletConfiguration.FeatureGates)
				}
				for _, w := range tt.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not contain %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(cfg.KubeletConfiguration.FeatureGates, tt.want) {
				t.Errorf("featureGates = %v, want %v", cfg.KubeletConfiguration.FeatureGates, tt.want)
			}
		})
	}
}

func TestLockedFeatureGate(t *testing.T) {
	var locked string
	var value bool
	for name, spec := range upstreamFeatureGates {
		if spec.LockToDefault {
			locked, value = string(name), spec.Default
			break
		}
	}
	if locked == "" {
		t.Fatal("the table has no locked gate")
	}
	errs := validateFeatureGates(map[string]bool{locked: !value})
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "locked") || errs[0].Field != "featureGates["+locked+"]" {
		t.Errorf("setting the locked gate %s to %t: errors %v, want one naming it and its lock", locked, !value, errs)
	}
	if errs := validateFeatureGates(map[string]bool{locked: value}); len(errs) != 0 {
		t.Errorf("setting the locked gate %s to its default: errors %v", locked, errs)
	}
}

// TestFeatureGateTable checks the generated table against what nodelet reads: every gate
// FeatureEnabled consults is one of the kubelet's, and the table holds the kubelet's gates
// (250).
func TestFeatureGateTable(t *testing.T) {
	if n := len(upstreamFeatureGates); n < 200 {
		t.Errorf("the table has %d gates; the kubelet v1.37 knows 250", n)
	}
	for _, gate := range []string{"EventedPLEG", "GracefulNodeShutdown", "GracefulNodeShutdownBasedOnPodPriority",
		featureKubeletCrashLoopBackOffMax, featureKubeletEnsureSecretPulledImages} {
		if _, ok := upstreamFeatureGates[featuregate.Feature(gate)]; !ok {
			t.Errorf("nodelet reads the gate %s, which the table does not have", gate)
		}
	}
}

// A gate nodelet reads but does not default itself takes upstream's default.
func TestFeatureEnabledDefaults(t *testing.T) {
	var kc kubeletconfigv1beta1.KubeletConfiguration
	for gate, want := range map[string]bool{
		"RotateKubeletServerCertificate": true, // beta, on upstream
		"EventedPLEG":                    true, // nodelet's own default
		"NoSuchGate":                     false,
	} {
		if got := FeatureEnabled(kc, gate); got != want {
			t.Errorf("FeatureEnabled(%s) = %v, want %v", gate, got, want)
		}
	}
	kc.FeatureGates = map[string]bool{"RotateKubeletServerCertificate": false}
	if FeatureEnabled(kc, "RotateKubeletServerCertificate") {
		t.Error("a gate set off is on")
	}
}
