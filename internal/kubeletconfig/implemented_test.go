package kubeletconfig

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/go-logr/logr/funcr"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
)

func TestIgnoredFields(t *testing.T) {
	tests := []struct {
		name string
		body string
		want []string
	}{
		{"nothing set", "", nil},
		{"implemented fields with non-default values", "staticPodPath: /p\nmaxPods: 7\nreadOnlyPort: 10255\naddress: 127.0.0.1\nlogging:\n  verbosity: 3\n", nil},
		{"accepted fields", "nodeStatusUpdateFrequency: 4s\nnodeLeaseDurationSeconds: 20\nruntimeRequestTimeout: 1m\n", nil},
		{"fields set to their defaults", "healthzPort: 10248\ncgroupDriver: cgroupfs\nenableServer: true\nregistryPullQPS: 5\n" +
			"evictionHard:\n  memory.available: 100Mi\n  nodefs.available: 10%\n  nodefs.inodesFree: 5%\n  imagefs.available: 15%\n  imagefs.inodesFree: 5%\n" +
			"authorization:\n  mode: Webhook\nlogging:\n  format: text\n  flushFrequency: 5s\ntracing: null\n", nil},
		{"zero values that default", "streamingConnectionIdleTimeout: 0s\nimageMinimumGCAge: 0s\ncrashLoopBackOff: {}\n", nil},
		{"non-default values, sorted", "memoryThrottlingFactor: 0.5\ncpuManagerPolicy: static\nclusterDNS: [10.96.0.10]\n", []string{"cpuManagerPolicy", "memoryThrottlingFactor"}},
		{"nested object reported at top level", "reservedMemory:\n- numaNode: 0\n  limits: {memory: 1Gi}\n", []string{"reservedMemory"}},
		{"implemented nested fields are not reported", "authentication:\n  x509:\n    clientCAFile: /ca.crt\n", nil},
		{"partially implemented object reported one level down", "logging:\n  verbosity: 2\n  format: json\n", []string{"logging.format"}},
		{"explicit false where default is true", "failSwapOn: false\n", []string{"failSwapOn"}},
		{"dependent default is not a set field", "maxParallelImagePulls: 3\n", []string{"maxParallelImagePulls"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := decodeConfig([]byte(header + tt.body))
			if err != nil {
				t.Fatal(err)
			}
			got, err := ignoredFields(f.raw, f.config)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ignored = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestIgnoredLoggedOnce(t *testing.T) {
	restoreKlog(t)
	var lines []string
	logger := funcr.New(func(prefix, args string) { lines = append(lines, args) }, funcr.Options{})

	l := NewFlagSet("test")
	l.logger = logger
	cfg, err := l.Load([]string{"--config", "testdata/kubeadm.yaml"}, fixedHostname("n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) != 1 {
		t.Fatalf("logged %d lines, want 1: %q", len(lines), lines)
	}
	for _, want := range []string{ignoredMessage, `"fields"=["featureGates.NodeSwap"`, `"config"="testdata/kubeadm.yaml"`} {
		if !strings.Contains(lines[0], want) {
			t.Errorf("log line %s does not contain %s", lines[0], want)
		}
	}
	if len(cfg.Ignored) == 0 {
		t.Error("Ignored is empty")
	}

	lines = nil
	l = NewFlagSet("test")
	l.logger = logger
	if _, err := l.Load([]string{"--config", "testdata/minimal.yaml"}, fixedHostname("n")); err != nil {
		t.Fatal(err)
	}
	if len(lines) != 0 {
		t.Errorf("logged %q for a file without ignored fields", lines)
	}
}

// TestFieldListsNameRealFields guards implemented.go against typos: every
// listed path must be a JSON field of KubeletConfiguration, and every config
// flag must set an implemented field.
func TestFieldListsNameRealFields(t *testing.T) {
	for _, path := range slices.Concat(implementedFields, acceptedFields) {
		typ := reflect.TypeFor[kubeletconfigv1beta1.KubeletConfiguration]()
		for _, part := range strings.Split(path, ".") {
			if typ.Kind() == reflect.Map { // a key of a map field (featureGates.EventedPLEG)
				break
			}
			f, ok := jsonField(typ, part)
			if !ok {
				t.Errorf("%q: no JSON field %q in %s", path, part, typ)
				break
			}
			typ = f.Type
			if typ.Kind() == reflect.Pointer {
				typ = typ.Elem()
			}
		}
	}
	for _, f := range configFlags {
		// featureGates is implemented gate by gate (featureGates.EventedPLEG...): its flag sets
		// the gates, which are checked and reported one by one.
		if !slices.Contains(implementedFields, f.path) && !hasKnownChild(f.path) {
			t.Errorf("--%s sets %q, which is not in implementedFields", f.name, f.path)
		}
	}
	if dup := len(slices.Compact(slices.Sorted(slices.Values(slices.Concat(implementedFields, acceptedFields))))); dup != len(implementedFields)+len(acceptedFields) {
		t.Error("implementedFields and acceptedFields overlap or repeat")
	}
}

func jsonField(typ reflect.Type, name string) (reflect.StructField, bool) {
	if typ.Kind() != reflect.Struct {
		return reflect.StructField{}, false
	}
	for i := range typ.NumField() {
		f := typ.Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if tag == name {
			return f, true
		}
	}
	return reflect.StructField{}, false
}
