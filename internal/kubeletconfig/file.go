package kubeletconfig

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

const (
	configKind       = "KubeletConfiguration"
	configAPIVersion = "kubelet.config.k8s.io/v1beta1" // kubeletconfigv1beta1.SchemeGroupVersion
)

// configFile is a decoded and defaulted KubeletConfiguration file.
type configFile struct {
	// config is the file after upstream defaulting, the file-load defaults
	// (evictionHard) and relative path resolution.
	config kubeletconfigv1beta1.KubeletConfiguration
	// raw is the file as a generic JSON object, for telling which fields the
	// file actually sets.
	raw map[string]any
}

// readConfigFile reads, strictly decodes and defaults the file at path. Errors
// do not repeat the path; the caller adds it.
func readConfigFile(path string) (*configFile, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	f, err := decodeConfig(data)
	if err != nil {
		return nil, err
	}
	// Upstream resolves relative paths against the directory of the
	// absolute config file path.
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	resolveRelativePaths(&f.config, filepath.Dir(abs))
	return f, nil
}

// decodeConfig strictly decodes a YAML or JSON KubeletConfiguration and applies
// defaults. It follows apimachinery's strict serializer: YAMLToJSONStrict
// rejects duplicate keys, sigs.k8s.io/json rejects unknown and duplicate
// fields and matches field names case-sensitively.
func decodeConfig(data []byte) (*configFile, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, errors.New("file is empty")
	}
	js, err := yaml.YAMLToJSONStrict(data)
	if err != nil {
		// yaml's multi-line "unmarshal errors:" list, on one line.
		return nil, fmt.Errorf("decode: %s", strings.Join(strings.Fields(err.Error()), " "))
	}
	var raw map[string]any
	if err := kjson.UnmarshalCaseSensitivePreserveInts(js, &raw); err != nil || raw == nil {
		return nil, errors.New("decode: not a YAML or JSON object")
	}
	if err := checkTypeMeta(raw); err != nil {
		return nil, err
	}

	var kc kubeletconfigv1beta1.KubeletConfiguration
	strictErrs, err := kjson.UnmarshalStrict(js, &kc, kjson.DisallowDuplicateFields, kjson.DisallowUnknownFields)
	if err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	if len(strictErrs) > 0 {
		msgs := make([]string, len(strictErrs))
		for i, e := range strictErrs {
			msgs[i] = e.Error()
		}
		return nil, errors.New(strings.Join(msgs, ", "))
	}
	setDefaults(&kc)
	setFileDefaults(&kc)
	return &configFile{config: kc, raw: raw}, nil
}

// checkTypeMeta requires kind KubeletConfiguration and apiVersion
// kubelet.config.k8s.io/v1beta1.
func checkTypeMeta(raw map[string]any) error {
	var errs field.ErrorList
	for _, want := range []struct{ key, value string }{
		{"kind", configKind},
		{"apiVersion", configAPIVersion},
	} {
		p := field.NewPath(want.key)
		v, ok := raw[want.key]
		s, isString := v.(string)
		switch {
		case !ok || v == nil || s == "" && isString:
			errs = append(errs, field.Required(p, fmt.Sprintf("must be %q", want.value)))
		case !isString || s != want.value:
			errs = append(errs, field.NotSupported(p, v, []string{want.value}))
		}
	}
	return errs.ToAggregate()
}

// resolveRelativePaths mirrors pkg/kubelet/kubeletconfig/configfiles: the
// path fields listed in KubeletConfigurationPathRefs are made absolute
// against root when relative. Empty paths stay empty.
func resolveRelativePaths(kc *kubeletconfigv1beta1.KubeletConfiguration, root string) {
	paths := []*string{
		&kc.StaticPodPath,
		&kc.Authentication.X509.ClientCAFile,
		&kc.TLSCertFile,
		&kc.TLSPrivateKeyFile,
		kc.ResolverConfig, // never nil after defaulting
		&kc.VolumePluginDir,
		&kc.PodLogsDir,
	}
	for _, p := range paths {
		if p != nil && *p != "" && !filepath.IsAbs(*p) {
			*p = filepath.Join(root, *p)
		}
	}
}
