package credentialplugin

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"k8s.io/klog/v2"
	kubeletconfigv1 "k8s.io/kubelet/config/v1"
	credentialproviderv1 "k8s.io/kubelet/pkg/apis/credentialprovider/v1"
	"k8s.io/utils/clock"

	"github.com/nodelet/nodelet/internal/credentials"
)

// ExecTimeout bounds one execution of a plugin, as upstream's catch-all minute.
const ExecTimeout = time.Minute

// globalCacheKey is the cache key of a Global answer.
const globalCacheKey = "<global>"

// Config configures the plugins.
type Config struct {
	// Providers are the plugins, in order (ReadConfig).
	Providers []kubeletconfigv1.CredentialProvider
	// BinDir holds the plugins' binaries, each named as its provider.
	BinDir string
	// Timeout bounds one execution; 0 is ExecTimeout.
	Timeout time.Duration
}

// Plugins gives the credentials of the configured plugins for an image.
type Plugins struct {
	providers []*provider
}

// New returns the plugins of cfg; a provider whose binary is missing is an error naming it.
func New(cfg Config, clk clock.PassiveClock) (*Plugins, error) {
	if clk == nil {
		return nil, errors.New("credentialplugin: a clock is required")
	}
	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = ExecTimeout
	}
	p := &Plugins{}
	for _, c := range cfg.Providers {
		bin := filepath.Join(cfg.BinDir, c.Name)
		if st, err := os.Stat(bin); err != nil {
			return nil, fmt.Errorf("credential provider %q: its binary: %w", c.Name, err)
		} else if st.IsDir() || st.Mode()&0o111 == 0 {
			return nil, fmt.Errorf("credential provider %q: %s is not an executable file", c.Name, bin)
		}
		var env []string
		for _, e := range c.Env {
			env = append(env, e.Name+"="+e.Value)
		}
		p.providers = append(p.providers, &provider{name: c.Name, bin: bin, args: c.Args, env: env,
			apiVersion: c.APIVersion, matchImages: c.MatchImages, defaultCache: c.DefaultCacheDuration.Duration,
			timeout: timeout, clock: clk, cache: map[string]cacheEntry{}})
	}
	return p, nil
}

// Lookup returns the credentials the plugins give for image, each matching plugin's in order,
// and the errors of the plugins that failed (each names the plugin and the cause).
func (p *Plugins) Lookup(ctx context.Context, image string) ([]credentials.AuthConfig, []error) {
	if p == nil {
		return nil, nil
	}
	var out []credentials.AuthConfig
	var errs []error
	for _, pr := range p.providers {
		if !pr.matches(image) {
			continue
		}
		auths, err := pr.provide(ctx, image)
		if err != nil {
			klog.ErrorS(err, "Image credential provider plugin failed; the pull goes on without its credentials", "provider", pr.name, "image", image)
			errs = append(errs, err)
			continue
		}
		found, err := credentials.KeyringFromAuths(auths).Lookup(image)
		if err != nil {
			errs = append(errs, fmt.Errorf("credential provider %q: %w", pr.name, err))
			continue
		}
		out = append(out, found...)
	}
	return out, errs
}

type provider struct {
	name, bin, apiVersion  string
	args, env, matchImages []string
	defaultCache, timeout  time.Duration
	clock                  clock.PassiveClock

	execMu sync.Mutex // one execution at a time: concurrent pulls of an image share its answer
	mu     sync.Mutex
	cache  map[string]cacheEntry
}

type cacheEntry struct {
	auths     map[string]credentials.AuthConfig
	expiresAt time.Time
}

func (p *provider) matches(image string) bool {
	for _, m := range p.matchImages {
		if credentials.URLsMatch(m, image) {
			return true
		}
	}
	return false
}

func registryOf(image string) string {
	registry, _, _ := strings.Cut(image, "/")
	return registry
}

// cached returns the credentials cached for the image, its registry or globally.
func (p *provider) cached(image string) (map[string]credentials.AuthConfig, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.clock.Now()
	for key, e := range p.cache {
		if !now.Before(e.expiresAt) {
			delete(p.cache, key)
		}
	}
	for _, key := range []string{image, registryOf(image), globalCacheKey} {
		if e, ok := p.cache[key]; ok {
			return e.auths, true
		}
	}
	return nil, false
}

func (p *provider) provide(ctx context.Context, image string) (map[string]credentials.AuthConfig, error) {
	if auths, ok := p.cached(image); ok {
		return auths, nil
	}
	p.execMu.Lock()
	defer p.execMu.Unlock()
	if auths, ok := p.cached(image); ok { // another pull's execution answered meanwhile
		return auths, nil
	}
	resp, err := p.exec(ctx, image)
	if err != nil {
		return nil, err
	}
	var key string
	switch resp.CacheKeyType {
	case credentialproviderv1.ImagePluginCacheKeyType:
		key = image
	case credentialproviderv1.RegistryPluginCacheKeyType:
		key = registryOf(image)
	case credentialproviderv1.GlobalPluginCacheKeyType:
		key = globalCacheKey
	default:
		return nil, fmt.Errorf("credential provider %q: the plugin did not return a valid cacheKeyType: %q (want Image, Registry or Global)", p.name, resp.CacheKeyType)
	}
	auths := make(map[string]credentials.AuthConfig, len(resp.Auth))
	for registry, a := range resp.Auth {
		auths[registry] = credentials.AuthConfig{Username: a.Username, Password: a.Password}
	}
	ttl := p.defaultCache
	if resp.CacheDuration != nil {
		ttl = resp.CacheDuration.Duration
	}
	if ttl > 0 {
		p.mu.Lock()
		p.cache[key] = cacheEntry{auths: auths, expiresAt: p.clock.Now().Add(ttl)}
		p.mu.Unlock()
	}
	return auths, nil
}

// exec runs the plugin for image and decodes its answer.
func (p *provider) exec(ctx context.Context, image string) (*credentialproviderv1.CredentialProviderResponse, error) {
	req, err := json.Marshal(map[string]string{"kind": "CredentialProviderRequest", "apiVersion": p.apiVersion, "image": image})
	if err != nil {
		return nil, fmt.Errorf("credential provider %q: encode the request: %w", p.name, err)
	}
	ctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, p.bin, p.args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = bytes.NewReader(req), &stdout, &stderr
	cmd.Env = append(os.Environ(), p.env...)
	cmd.WaitDelay = time.Second // a plugin's children holding its pipes do not hold the pull
	err = cmd.Run()
	if ctx.Err() != nil {
		return nil, fmt.Errorf("credential provider %q for image %s: no answer within %v (killed): %w", p.name, image, p.timeout, ctx.Err())
	}
	if err != nil {
		return nil, fmt.Errorf("credential provider %q for image %s: %w: %s", p.name, image, err, strings.TrimSpace(stderr.String()))
	}
	var resp credentialproviderv1.CredentialProviderResponse
	dec := json.NewDecoder(&stdout)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&resp); err != nil {
		return nil, fmt.Errorf("credential provider %q for image %s: its output is not a CredentialProviderResponse: %w", p.name, image, err)
	}
	if resp.Kind != "CredentialProviderResponse" {
		return nil, fmt.Errorf("credential provider %q for image %s: the response's kind is %q, want CredentialProviderResponse", p.name, image, resp.Kind)
	}
	if resp.APIVersion != p.apiVersion {
		return nil, fmt.Errorf("credential provider %q for image %s: apiVersion from credential plugin response did not match expected apiVersion:%s, actual apiVersion:%s", p.name, image, p.apiVersion, resp.APIVersion)
	}
	return &resp, nil
}
