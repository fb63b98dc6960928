package podconfig

import "testing"

func TestSkipManifest(t *testing.T) {
	tests := []struct {
		name string
		skip bool
	}{
		{"web.yaml", false},
		{"web.yml", false},
		{"web.json", false},
		{"web", false},
		{"sedation.yaml", false},
		{"sed.yaml", false},
		{"sedabc123.yaml", false},
		{"tmp-web.yaml", false},
		{"backup.yaml.d", false},
		{".web.yaml", true},
		{".web.yaml.swp", true},
		{"sedAb12Z9", true},
		{"sed4hG7kQ", true},
		{"web.yaml~", true},
		{"#web.yaml#", true},
		{"web.yaml.swp", true},
		{"web.yaml.swo", true},
		{"web.yaml.swx", true},
		{"web.yaml.tmp", true},
		{"web.yaml.bak", true},
		{"web.yaml.orig", true},
		{"web.yaml.rej", true},
		{"web.yaml.dpkg-dist", true},
		{"web.yaml.dpkg-old", true},
		{"web.yaml.rpmnew", true},
		{"web.yaml.rpmsave", true},
	}
	for _, tt := range tests {
		reason, skip := skipManifest(tt.name)
		if skip != tt.skip {
			t.Errorf("skipManifest(%q) = %v (%q), want %v", tt.name, skip, reason, tt.skip)
		}
		if skip && reason == "" {
			t.Errorf("skipManifest(%q) gives no reason", tt.name)
		}
	}
}
