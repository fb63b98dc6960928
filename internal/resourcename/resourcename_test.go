package resourcename

import (
	"testing"

	v1 "k8s.io/api/core/v1"
)

func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		name              v1.ResourceName
		extended, hugePgs bool
	}{
		{"cpu", false, false},
		{"example.com/gpu", true, false},
		{"kubernetes.io/foo", false, false},
		{"requests.example.com/gpu", false, false},
		{"hugepages-2Mi", false, true},
		{"bad name/x", false, false},
	} {
		if got := IsExtended(tc.name); got != tc.extended {
			t.Errorf("IsExtended(%q) = %v", tc.name, got)
		}
		if got := IsHugePages(tc.name); got != tc.hugePgs {
			t.Errorf("IsHugePages(%q) = %v", tc.name, got)
		}
	}
}
