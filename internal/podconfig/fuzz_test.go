package podconfig

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzManifest drives the whole read path (decode, defaults, static identity, validation) with
// arbitrary bytes: it must never panic, and every pod it yields must validate. The seed corpus is
// testdata/fuzz/FuzzManifest plus the manifests under examples/.
func FuzzManifest(f *testing.F) {
	f.Add([]byte(goodPod), true)
	f.Add([]byte(podListJSON), false)
	f.Add([]byte("apiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec: {containers: [{name: c, image: i, resources: {limits: {cpu: 1e3}}}]}"), true)
	if paths, _ := filepath.Glob("../../examples/*.yaml"); len(paths) > 0 {
		for _, p := range paths {
			if b, err := os.ReadFile(p); err == nil {
				f.Add(b, true)
			}
		}
	}
	f.Fuzz(func(t *testing.T, data []byte, isFile bool) {
		p := ParseManifest(data, "/fuzz", isFile, "node")
		for _, pod := range p.Pods {
			if errs := Validate(pod); len(errs) > 0 {
				t.Fatalf("a pod that passed the read path fails validation: %v", errs)
			}
			if pod.UID == "" || pod.Spec.NodeName != "node" {
				t.Fatalf("static identity missing: uid %q node %q", pod.UID, pod.Spec.NodeName)
			}
		}
	})
}
