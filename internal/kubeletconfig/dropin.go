package kubeletconfig

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
)

// dropInExtension is the suffix of the files --config-dir applies; others are skipped.
const dropInExtension = ".conf"

// dropIns is what merging a --config-dir did.
type dropIns struct {
	config  kubeletconfigv1beta1.KubeletConfiguration // base with every drop-in merged, defaulted
	raw     map[string]any                            // the fields set: the file's, then each drop-in's
	applied []string                                  // the .conf files merged, in order
	skipped []string                                  // other files in the directory
}

// mergeDropIns applies the drop-in files of dir over base (the defaulted --config file, or the
// flags-only defaults) as upstream's mergeKubeletConfigurations (KEP-3983): every file ending
// in .conf in dir and its subdirectories, in lexical order of their paths (filepath.WalkDir), is
// a KubeletConfiguration document (kind and apiVersion required) applied as a JSON merge patch
// (RFC 7386) to the JSON of the configuration so far; the result is defaulted again. Unlike
// upstream, which decodes a drop-in into an unstructured object and drops unknown fields
// without a word, a drop-in is decoded strictly: an unknown or mistyped field is an error
// naming the file and the field. Relative paths in drop-ins are left as they are, as upstream.
// raw is the file's own fields (nil without a file); the drop-ins' fields are merged into it.
func mergeDropIns(dir string, base kubeletconfigv1beta1.KubeletConfiguration, raw map[string]any) (*dropIns, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("%s is not a directory", dir)
	}
	merged, err := toJSONMap(base)
	if err != nil {
		return nil, fmt.Errorf("encode the configuration: %w", err)
	}
	out := &dropIns{raw: map[string]any{}}
	if raw != nil {
		out.raw = raw
	}
	walkErr := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		if filepath.Ext(d.Name()) != dropInExtension {
			out.skipped = append(out.skipped, path)
			return nil
		}
		patch, err := readDropIn(path)
		if err != nil {
			return fmt.Errorf("drop-in %s: %w", path, err)
		}
		delete(patch, "kind")
		delete(patch, "apiVersion")
		merged = mergePatch(merged, patch).(map[string]any)
		out.raw = mergePatch(out.raw, patch).(map[string]any)
		out.applied = append(out.applied, path)
		return nil
	})
	if walkErr != nil {
		return nil, walkErr
	}
	js, err := json.Marshal(merged)
	if err != nil {
		return nil, fmt.Errorf("encode the merged configuration: %w", err)
	}
	if err := json.Unmarshal(js, &out.config); err != nil {
		return nil, fmt.Errorf("decode the merged configuration: %w", err)
	}
	setDefaults(&out.config)
	return out, nil
}

// readDropIn reads a drop-in file: a KubeletConfiguration document, strictly decoded (the
// decode errors name the field), its feature gates known ones, returned as the JSON object of
// the fields it sets.
func readDropIn(path string) (map[string]any, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if len(strings.TrimSpace(string(data))) == 0 {
		return nil, errors.New("file is empty")
	}
	f, err := decodeConfig(data)
	if err != nil {
		return nil, err
	}
	// Its gates are checked here, so that the error names this file.
	if errs := validateFeatureGates(f.config.FeatureGates); len(errs) > 0 {
		return nil, errs.ToAggregate()
	}
	return f.raw, nil
}

// mergePatch applies an RFC 7386 JSON merge patch to target and returns the result: an object
// patch merges key by key (a null value removes the key), anything else replaces the target.
// (Hand-written: it is the whole algorithm, where upstream links github.com/evanphx/json-patch.)
func mergePatch(target, patch any) any {
	p, ok := patch.(map[string]any)
	if !ok {
		return patch
	}
	t, ok := target.(map[string]any)
	if !ok {
		t = map[string]any{}
	}
	for k, v := range p {
		if v == nil {
			delete(t, k)
			continue
		}
		t[k] = mergePatch(t[k], v)
	}
	return t
}
