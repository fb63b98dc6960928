package kubeletconfig

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// writeDropIns writes files (name → content, names may hold a subdirectory) under a new
// directory and returns it.
func writeDropIns(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestMergePatch(t *testing.T) {
	// RFC 7386's examples (appendix A).
	tests := []struct{ target, patch, want string }{
		{`{"a":"b"}`, `{"a":"c"}`, `{"a":"c"}`},
		{`{"a":"b"}`, `{"b":"c"}`, `{"a":"b","b":"c"}`},
		{`{"a":"b"}`, `{"a":null}`, `{}`},
		{`{"a":"b","b":"c"}`, `{"a":null}`, `{"b":"c"}`},
		{`{"a":["b"]}`, `{"a":"c"}`, `{"a":"c"}`},
		{`{"a":"c"}`, `{"a":["b"]}`, `{"a":["b"]}`},
		{`{"a":{"b":"c"}}`, `{"a":{"b":"d","c":null}}`, `{"a":{"b":"d"}}`},
		{`{"a":[{"b":"c"}]}`, `{"a":[1]}`, `{"a":[1]}`},
		{`["a","b"]`, `["c","d"]`, `["c","d"]`},
		{`{"a":"b"}`, `["c"]`, `["c"]`},
		{`{"a":"foo"}`, `null`, `null`},
		{`{"a":"foo"}`, `"bar"`, `"bar"`},
		{`{"e":null}`, `{"a":1}`, `{"a":1,"e":null}`},
		{`[1,2]`, `{"a":"b","c":null}`, `{"a":"b"}`},
		{`{}`, `{"a":{"bb":{"ccc":null}}}`, `{"a":{"bb":{}}}`},
	}
	for _, tt := range tests {
		var target, patch, want any
		for _, p := range []struct {
			s  string
			to *any
		}{{tt.target, &target}, {tt.patch, &patch}, {tt.want, &want}} {
			if err := json.Unmarshal([]byte(p.s), p.to); err != nil {
				t.Fatal(err)
			}
		}
		if got := mergePatch(target, patch); !reflect.DeepEqual(got, want) {
			t.Errorf("mergePatch(%s, %s) = %v, want %s", tt.target, tt.patch, got, tt.want)
		}
	}
}

func TestConfigDirMergesInOrder(t *testing.T) {
	file := writeConfig(t, header+"maxPods: 14\nsyncFrequency: 13s\nevictionHard: {memory.available: 100Mi}\nfeatureGates: {EventedPLEG: false}\n")
	dir := writeDropIns(t, map[string]string{
		"10-pods.conf":     header + "maxPods: 50\nserializeImagePulls: false\nevictionHard: {nodefs.available: 5%}\n",
		"20-pods.conf":     header + "maxPods: 60\n",
		"a/30-sync.conf":   header + "syncFrequency: 30s\n",
		"40-unset.conf":    header + "evictionHard: {memory.available: null}\n",
		"README.md":        "not a drop-in",
		"99-later.yaml":    header + "maxPods: 7\n",
		"50-gates.conf":    header + "featureGates: {GracefulNodeShutdown: false}\n",
		"60-port.conf.bak": header + "port: 1\n",
	})
	cfg := mustLoad(t, "--config", file, "--config-dir", dir)
	kc := cfg.KubeletConfiguration
	if kc.MaxPods != 60 {
		t.Errorf("maxPods = %d, want 60: 20-pods.conf applies after 10-pods.conf", kc.MaxPods)
	}
	if kc.SerializeImagePulls == nil || *kc.SerializeImagePulls {
		t.Errorf("serializeImagePulls = %v, want false from 10-pods.conf", kc.SerializeImagePulls)
	}
	if kc.SyncFrequency.Duration.String() != "30s" {
		t.Errorf("syncFrequency = %v, want 30s from a/30-sync.conf (subdirectories are read)", kc.SyncFrequency.Duration)
	}
	// Objects merge key by key; null removes a key.
	if want := map[string]string{"nodefs.available": "5%"}; !reflect.DeepEqual(kc.EvictionHard, want) {
		t.Errorf("evictionHard = %v, want %v", kc.EvictionHard, want)
	}
	if want := map[string]bool{"EventedPLEG": false, "GracefulNodeShutdown": false}; !reflect.DeepEqual(kc.FeatureGates, want) {
		t.Errorf("featureGates = %v, want %v", kc.FeatureGates, want)
	}
	wantApplied := []string{"10-pods.conf", "20-pods.conf", "40-unset.conf", "50-gates.conf", "a/30-sync.conf"}
	for i := range wantApplied {
		wantApplied[i] = filepath.Join(dir, wantApplied[i])
	}
	if !reflect.DeepEqual(cfg.DropIns, wantApplied) {
		t.Errorf("DropIns = %v, want %v (lexical order of the paths)", cfg.DropIns, wantApplied)
	}
	wantSkipped := []string{filepath.Join(dir, "60-port.conf.bak"), filepath.Join(dir, "99-later.yaml"), filepath.Join(dir, "README.md")}
	if !reflect.DeepEqual(cfg.SkippedDropIns, wantSkipped) {
		t.Errorf("SkippedDropIns = %v, want %v", cfg.SkippedDropIns, wantSkipped)
	}

	// Flags win over the drop-ins.
	if kc := mustLoad(t, "--config", file, "--config-dir", dir, "--max-pods", "3").KubeletConfiguration; kc.MaxPods != 3 {
		t.Errorf("with --max-pods 3: maxPods = %d, want 3", kc.MaxPods)
	}
	// Without --config, over the flags-only defaults; defaults still apply to the rest.
	kc = mustLoad(t, "--config-dir", dir).KubeletConfiguration
	if kc.MaxPods != 60 || kc.SyncFrequency.Duration.String() != "30s" || kc.FileCheckFrequency.Duration.String() != "20s" {
		t.Errorf("without --config: maxPods %d syncFrequency %v fileCheckFrequency %v, want 60, 30s and the default 20s",
			kc.MaxPods, kc.SyncFrequency.Duration, kc.FileCheckFrequency.Duration)
	}
}

func TestConfigDirIgnoredFields(t *testing.T) {
	// A drop-in that sets a field nodelet does not implement is reported like the file's.
	dir := writeDropIns(t, map[string]string{"10.conf": header + "cpuManagerPolicy: static\n"})
	cfg := mustLoad(t, "--config", writeConfig(t, header), "--config-dir", dir)
	if !reflect.DeepEqual(cfg.Ignored, []string{"cpuManagerPolicy"}) {
		t.Errorf("Ignored = %v, want [cpuManagerPolicy]", cfg.Ignored)
	}
}

func TestConfigDirErrors(t *testing.T) {
	file := writeConfig(t, header)
	tests := []struct {
		name  string
		files map[string]string
		want  []string // substrings of the error
	}{
		{"unknown field", map[string]string{"10.conf": header + "maxPodz: 3\n"},
			[]string{"10.conf", `unknown field "maxPodz"`}},
		{"wrong type", map[string]string{"10.conf": header + "maxPods: many\n"},
			[]string{"10.conf", "maxPods"}},
		{"no kind", map[string]string{"10.conf": "maxPods: 3\n"},
			[]string{"10.conf", "kind: Required value"}},
		{"other kind", map[string]string{"10.conf": "apiVersion: v1\nkind: Pod\n"},
			[]string{"10.conf", `kind: Unsupported value: "Pod"`}},
		{"empty", map[string]string{"10.conf": "\n"},
			[]string{"10.conf", "file is empty"}},
		{"not YAML", map[string]string{"10.conf": header + "maxPods: [\n"},
			[]string{"10.conf", "decode"}},
		{"unknown feature gate", map[string]string{"10.conf": header + "featureGates: {Bogus: true}\n"},
			[]string{"10.conf", "featureGates[Bogus]", "unrecognized feature gate: Bogus"}},
		{"invalid value", map[string]string{"10.conf": header + "maxPods: -1\n"},
			[]string{"maxPods", "must not be negative"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeDropIns(t, tt.files)
			_, err := Load([]string{"--config", file, "--config-dir", dir}, fixedHostname("node"))
			if err == nil {
				t.Fatal("Load succeeded")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
	if _, err := Load([]string{"--config-dir", filepath.Join(t.TempDir(), "none")}, fixedHostname("node")); err == nil ||
		!strings.Contains(err.Error(), "--config-dir") {
		t.Errorf("a missing --config-dir: error %v, want one naming --config-dir", err)
	}
	if _, err := Load([]string{"--config-dir", file}, fixedHostname("node")); err == nil ||
		!strings.Contains(err.Error(), "not a directory") {
		t.Errorf("--config-dir naming a file: error %v, want \"not a directory\"", err)
	}
}
