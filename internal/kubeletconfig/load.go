package kubeletconfig

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"

	"k8s.io/apimachinery/pkg/util/validation/field"
	logsapi "k8s.io/component-base/logs/api/v1"
	"k8s.io/klog/v2"
)

// ignoredMessage is logged once by Load when the file sets fields nodelet
// does not implement yet.
const ignoredMessage = "Config file fields not implemented by nodelet yet; ignored"

// Load resolves a command line (without the program name) into a Config with
// a fresh flag set: see Loader.Load.
func Load(args []string, hostname HostnameFunc) (*Config, error) {
	return NewFlagSet("nodelet").Load(args, hostname)
}

// Load parses args, loads and validates the --config file, applies the flags
// that were set over it, applies the logging verbosity to klog and resolves
// NodeName (hostname defaults to os.Hostname when nil). Errors name the flag
// or the file and field. If the file sets fields nodelet does not implement,
// they are logged once, here. A Loader loads once.
func (l *Loader) Load(args []string, hostname HostnameFunc) (*Config, error) {
	if l.loaded {
		return nil, errors.New("kubeletconfig: Loader.Load called twice")
	}
	l.loaded = true
	if l.registerErr != nil {
		return nil, l.registerErr
	}

	if err := l.fs.Parse(args); err != nil {
		return nil, err
	}
	if rest := l.fs.Args(); len(rest) > 0 {
		return nil, fmt.Errorf("unexpected argument %q: nodelet takes only flags", rest[0])
	}

	cfg := &Config{
		ConfigFile:          l.configFile,
		Kubeconfig:          l.kubeconfig,
		BootstrapKubeconfig: l.bootstrapKubecfg,
		CertDir:             l.certDir,
		RootDir:             l.rootDir,
		HostnameOverride:    l.hostnameOverride,
		NodeIP:              l.nodeIP,
		NodeLabels:          l.nodeLabels,
		ImageGCPeriod:       l.imageGCPeriod,
		EvictionPeriod:      l.evictionPeriod,
	}
	cfg.ImageCredentialProviderConfig, cfg.ImageCredentialProviderBinDir = l.credProviderCfg, l.credProviderBin
	if (cfg.ImageCredentialProviderConfig == "") != (cfg.ImageCredentialProviderBinDir == "") {
		return nil, errors.New("--image-credential-provider-config and --image-credential-provider-bin-dir: set both or neither")
	}
	if cfg.RootDir == "" {
		return nil, errors.New("--root-dir: must not be empty")
	}
	cfg.RootDir = filepath.Clean(cfg.RootDir)
	if cfg.CertDir == "" {
		cfg.CertDir = filepath.Join(cfg.RootDir, "pki")
	}
	if cfg.BootstrapKubeconfig != "" && cfg.Kubeconfig == "" {
		return nil, errors.New("--bootstrap-kubeconfig needs --kubeconfig: the path the kubeconfig it obtains is written to")
	}
	if cfg.ImageGCPeriod <= 0 {
		return nil, errors.New("--image-gc-period: must be greater than 0")
	}
	if cfg.EvictionPeriod <= 0 {
		return nil, errors.New("--eviction-monitoring-period: must be greater than 0")
	}
	if err := validateNodeIP(cfg.NodeIP); err != nil {
		return nil, fmt.Errorf("--node-ip: %w", err)
	}
	cfg.ContainerGC = l.containerGC
	if err := cfg.ContainerGC.validate(); err != nil {
		return nil, err
	}

	// Baseline: the file, or upstream's flags-only defaults.
	var raw map[string]any
	if cfg.ConfigFile != "" {
		f, err := readConfigFile(cfg.ConfigFile)
		if err != nil {
			return nil, fmt.Errorf("load %s: %w", cfg.ConfigFile, err)
		}
		cfg.KubeletConfiguration = f.config
		raw = f.raw
	} else {
		cfg.KubeletConfiguration = flagsOnlyDefaults()
		if cfg.Kubeconfig != "" && !l.fs.Changed("read-only-port") {
			// Unlike upstream's flags-only baseline (10255), the unauthenticated read-only
			// port stays off on a cluster node unless asked for, as with a config file.
			cfg.KubeletConfiguration.ReadOnlyPort = 0
		}
	}

	// Then the drop-ins of --config-dir, in order (upstream mergeKubeletConfigurations).
	if l.configDir != "" {
		d, err := mergeDropIns(l.configDir, cfg.KubeletConfiguration, raw)
		if err != nil {
			return nil, fmt.Errorf("--config-dir %s: %w", l.configDir, err)
		}
		cfg.ConfigDir, cfg.DropIns, cfg.SkippedDropIns = l.configDir, d.applied, d.skipped
		cfg.KubeletConfiguration, raw = d.config, d.raw
	}
	if raw != nil {
		var err error
		if cfg.Ignored, err = ignoredFields(raw, cfg.KubeletConfiguration); err != nil {
			return nil, fmt.Errorf("load %s: %w", cfg.ConfigFile, err)
		}
	}

	// Flags that were set win over the file and the drop-ins (upstream
	// kubeletConfigFlagPrecedence); --feature-gates key by key, over the others' gates.
	fileGates := cfg.KubeletConfiguration.FeatureGates
	for _, f := range configFlags {
		if l.fs.Changed(f.name) {
			f.apply(&cfg.KubeletConfiguration, &l.flagConfig)
		}
	}
	if l.fs.Changed("feature-gates") {
		for k, v := range fileGates {
			if _, set := cfg.KubeletConfiguration.FeatureGates[k]; !set {
				cfg.KubeletConfiguration.FeatureGates[k] = v
			}
		}
	}

	if err := l.resolveLogging(cfg, raw); err != nil {
		return nil, err
	}
	if errs := validate(&cfg.KubeletConfiguration); len(errs) > 0 {
		return nil, l.validationError(errs, cfg.ConfigFile)
	}

	name, err := resolveNodeName(cfg.HostnameOverride, hostname)
	if err != nil {
		if cfg.HostnameOverride != "" {
			return nil, fmt.Errorf("--hostname-override: %w", err)
		}
		return nil, fmt.Errorf("node name: %w", err)
	}
	cfg.NodeName = name

	if len(cfg.Ignored) > 0 {
		logger := l.logger
		if logger.GetSink() == nil {
			logger = klog.Background() // as klog.InfoS
		}
		logger.Info(ignoredMessage, "fields", cfg.Ignored, "config", cfg.ConfigFile, "dropIns", cfg.DropIns)
	}
	if len(cfg.DropIns) > 0 || len(cfg.SkippedDropIns) > 0 {
		logger := l.logger
		if logger.GetSink() == nil {
			logger = klog.Background()
		}
		logger.Info("Merged the drop-in configuration files", "configDir", cfg.ConfigDir, "applied", cfg.DropIns)
		for _, f := range cfg.SkippedDropIns {
			logger.Info("Skipped a file in the drop-in directory: only files ending in .conf are read", "file", f)
		}
	}
	return cfg, nil
}

// resolveLogging makes logging.verbosity and logging.vmodule effective: a -v
// or --vmodule flag was already applied to klog by parsing and is recorded in
// the config; otherwise a value the file sets is applied to klog.
func (l *Loader) resolveLogging(cfg *Config, raw map[string]any) error {
	lc := &cfg.KubeletConfiguration.Logging
	fileLogging := asMap(raw["logging"])

	if l.fs.Changed("v") {
		v, err := strconv.ParseUint(l.fs.Lookup("v").Value.String(), 10, 31)
		if err != nil {
			return fmt.Errorf("-v: %w", err)
		}
		lc.Verbosity = logsapi.VerbosityLevel(v)
	} else if _, ok := fileLogging["verbosity"]; ok {
		if err := l.klogFlags.Set("v", strconv.FormatUint(uint64(lc.Verbosity), 10)); err != nil {
			return l.fileError(cfg.ConfigFile, field.Invalid(field.NewPath("logging", "verbosity"), lc.Verbosity, err.Error()))
		}
	}

	if l.fs.Changed("vmodule") {
		var vm logsapi.VModuleConfiguration
		if err := logsapi.VModuleConfigurationPflag(&vm).Set(l.fs.Lookup("vmodule").Value.String()); err != nil {
			return fmt.Errorf("--vmodule: %w", err)
		}
		lc.VModule = vm
	} else if _, ok := fileLogging["vmodule"]; ok && len(lc.VModule) > 0 {
		s := logsapi.VModuleConfigurationPflag(&lc.VModule).String()
		if err := l.klogFlags.Set("vmodule", s); err != nil {
			return l.fileError(cfg.ConfigFile, field.Invalid(field.NewPath("logging", "vmodule"), s, err.Error()))
		}
	}
	return nil
}

// validationError attributes each error to the flag that set the field, when
// one did, and otherwise to the config file.
func (l *Loader) validationError(errs field.ErrorList, configFile string) error {
	var fromFile field.ErrorList
	var fromFlags []error
	for _, e := range errs {
		if name := l.changedFlagFor(e.Field); name != "" {
			fromFlags = append(fromFlags, fmt.Errorf("--%s: %w", name, e))
		} else {
			fromFile = append(fromFile, e)
		}
	}
	var out []error
	if len(fromFile) > 0 {
		out = append(out, l.fileError(configFile, fromFile...))
	}
	return errors.Join(append(out, fromFlags...)...)
}

func (l *Loader) changedFlagFor(path string) string {
	for _, f := range configFlags {
		if f.covers(path) && l.fs.Changed(f.name) {
			return f.name
		}
	}
	return ""
}

func (l *Loader) fileError(configFile string, errs ...*field.Error) error {
	agg := field.ErrorList(errs).ToAggregate()
	if configFile == "" {
		return fmt.Errorf("invalid configuration: %w", agg)
	}
	return fmt.Errorf("load %s: %w", configFile, agg)
}
