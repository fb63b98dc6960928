package credentialplugin

import (
	"bytes"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
	kubeletconfigv1 "k8s.io/kubelet/config/v1"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

const (
	configKind       = "CredentialProviderConfig"
	configAPIVersion = "kubelet.config.k8s.io/v1"
)

// apiVersions are the plugin API versions upstream's kubelet speaks; their JSON is the same.
var apiVersions = []string{
	"credentialprovider.kubelet.k8s.io/v1",
	"credentialprovider.kubelet.k8s.io/v1alpha1",
	"credentialprovider.kubelet.k8s.io/v1beta1",
}

// ReadConfig reads the CredentialProviderConfig at path: a file, or a directory whose .json,
// .yaml and .yml files are merged in name order (not recursing), as upstream. Each file is
// decoded strictly and the merged providers are validated as upstream's
// validateCredentialProviderConfig; errors name the file and the field.
func ReadConfig(path string) ([]kubeletconfigv1.CredentialProvider, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	files := []string{path}
	if st.IsDir() {
		ents, err := os.ReadDir(path)
		if err != nil {
			return nil, err
		}
		files = nil
		for _, e := range ents {
			if ext := filepath.Ext(e.Name()); !e.IsDir() && (ext == ".json" || ext == ".yaml" || ext == ".yml") {
				files = append(files, filepath.Join(path, e.Name()))
			}
		}
		slices.Sort(files)
		if len(files) == 0 {
			return nil, fmt.Errorf("no configuration files (.json, .yaml, .yml) in directory %s", path)
		}
	}
	var providers []kubeletconfigv1.CredentialProvider
	seen := map[string]string{}
	for _, f := range files {
		cfg, err := readConfigFile(f)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		if errs := validate(cfg.Providers); len(errs) > 0 {
			return nil, fmt.Errorf("%s: %w", f, errs.ToAggregate())
		}
		for _, p := range cfg.Providers {
			if first, dup := seen[p.Name]; dup {
				return nil, fmt.Errorf("%s: duplicate provider name %q (first in %s)", f, p.Name, first)
			}
			seen[p.Name] = f
		}
		providers = append(providers, cfg.Providers...)
	}
	return providers, nil
}

func readConfigFile(path string) (*kubeletconfigv1.CredentialProviderConfig, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, errors.New("file is empty")
	}
	js, err := yaml.YAMLToJSONStrict(data)
	if err != nil {
		return nil, fmt.Errorf("decode: %s", strings.Join(strings.Fields(err.Error()), " "))
	}
	var cfg kubeletconfigv1.CredentialProviderConfig
	strictErrs, err := kjson.UnmarshalStrict(js, &cfg, kjson.DisallowDuplicateFields, kjson.DisallowUnknownFields)
	if err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	if len(strictErrs) > 0 {
		return nil, fmt.Errorf("decode: %w", errors.Join(strictErrs...))
	}
	var errs field.ErrorList
	if cfg.Kind != configKind {
		errs = append(errs, field.NotSupported(field.NewPath("kind"), cfg.Kind, []string{configKind}))
	}
	if cfg.APIVersion != configAPIVersion {
		errs = append(errs, field.NotSupported(field.NewPath("apiVersion"), cfg.APIVersion, []string{configAPIVersion}))
	}
	return &cfg, errs.ToAggregate()
}

// validate is upstream's validateCredentialProviderConfig for the providers of one file, with
// tokenAttributes refused (nodelet does not give plugins service account tokens).
func validate(providers []kubeletconfigv1.CredentialProvider) field.ErrorList {
	var errs field.ErrorList
	base := field.NewPath("providers")
	if len(providers) == 0 {
		errs = append(errs, field.Required(base, "at least 1 item in plugins is required"))
	}
	seen := map[string]bool{}
	for i, p := range providers {
		fp := base.Index(i)
		switch {
		case p.Name == "":
			errs = append(errs, field.Required(fp.Child("name"), ""))
		case strings.Contains(p.Name, "/"):
			errs = append(errs, field.Invalid(fp.Child("name"), p.Name, "provider name cannot contain '/'"))
		case strings.Contains(p.Name, " "):
			errs = append(errs, field.Invalid(fp.Child("name"), p.Name, "provider name cannot contain spaces"))
		case p.Name == "." || p.Name == "..":
			errs = append(errs, field.Invalid(fp.Child("name"), p.Name, fmt.Sprintf("provider name cannot be '%s'", p.Name)))
		}
		if seen[p.Name] {
			errs = append(errs, field.Duplicate(fp.Child("name"), p.Name))
		}
		seen[p.Name] = true
		if p.APIVersion == "" {
			errs = append(errs, field.Required(fp.Child("apiVersion"), ""))
		} else if !slices.Contains(apiVersions, p.APIVersion) {
			errs = append(errs, field.NotSupported(fp.Child("apiVersion"), p.APIVersion, apiVersions))
		}
		if len(p.MatchImages) == 0 {
			errs = append(errs, field.Required(fp.Child("matchImages"), "at least 1 item in matchImages is required"))
		}
		for j, m := range p.MatchImages {
			if err := validMatchImage(m); err != nil {
				errs = append(errs, field.Invalid(fp.Child("matchImages").Index(j), m, "match image is invalid: "+err.Error()))
			}
		}
		if p.DefaultCacheDuration == nil {
			errs = append(errs, field.Required(fp.Child("defaultCacheDuration"), ""))
		} else if p.DefaultCacheDuration.Duration < 0 {
			errs = append(errs, field.Invalid(fp.Child("defaultCacheDuration"), p.DefaultCacheDuration.Duration.String(), "must be greater than or equal to 0"))
		}
		if p.TokenAttributes != nil {
			errs = append(errs, field.Forbidden(fp.Child("tokenAttributes"), "nodelet does not give credential provider plugins service account tokens (upstream's KubeletServiceAccountTokenForCredentialProviders)"))
		}
		for j, e := range p.Env {
			if e.Name == "" {
				errs = append(errs, field.Required(fp.Child("env").Index(j).Child("name"), ""))
			}
		}
	}
	return errs
}

// validMatchImage is upstream's ParseSchemelessURL check: the pattern parses as a URL once
// https:// is put in front, and has a host.
func validMatchImage(m string) error {
	u, err := url.Parse("https://" + m)
	if err != nil {
		return err
	}
	if u.Host == "" {
		return errors.New("no host")
	}
	return nil
}
