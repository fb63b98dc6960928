package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
	"k8s.io/klog/v2"
)

// inputsLabel is the image config label holding the hash of a recipe's inputs.
const inputsLabel = "org.nodelet.testimage.inputs"

type options struct {
	registry string
	// authRegistry, when set, receives the private images, pushed as
	// authUser with authPassword (HTTP basic auth).
	authRegistry string
	authUser     string
	authPassword string
	force        bool
	only         []string
	timeout      time.Duration
	builder      builder
}

// authPasswordEnv names the environment variable holding the password for
// -auth-registry (kept off the command line).
const authPasswordEnv = "TESTIMAGES_AUTH_PASSWORD"

// target is a registry to push a catalog to, and how to log in to it.
type target struct {
	registry string
	auth     authn.Authenticator
	force    bool
}

func main() {
	klog.InitFlags(nil)
	var o options
	flag.StringVar(&o.registry, "registry", "127.0.0.1:5000", "registry to push to (plain HTTP)")
	flag.StringVar(&o.builder.srcDir, "src", "hack/testimages", "source directory of this program (holds pause/pause.c)")
	flag.StringVar(&o.builder.serverDir, "testserver-src", "", "source directory of hack/testserver (default: SRC/../testserver)")
	flag.StringVar(&o.builder.busybox, "busybox", "/bin/busybox", "static busybox binary to package")
	flag.StringVar(&o.builder.workdir, "workdir", "", "scratch directory (default: a new temporary directory)")
	flag.StringVar(&o.authRegistry, "auth-registry", "",
		"registry that requires basic auth, to push the private images to (plain HTTP); password in $"+authPasswordEnv)
	flag.StringVar(&o.authUser, "auth-user", "", "user name for -auth-registry")
	flag.StringVar(&o.builder.k8sModule, "k8s-module", "",
		"module that builds k8s.io/kubernetes v1.37.1's test images (hack/controlplane/k8s); set, the conformance images are pushed too")
	flag.StringVar(&o.builder.ashBusybox, "ash-busybox", "",
		"static busybox whose ash keeps environment variables that are no shell identifiers (upstream 1.37; hack/conformance.sh builds it), for e2e-test-images/busybox")
	flag.StringVar(&o.builder.bash, "bash", "/bin/bash-static", "static bash binary for the conformance images (Debian's bash-static)")
	flag.StringVar(&o.builder.curl, "curl", "/usr/bin/curl", "curl for the conformance agnhost image (copied with its shared libraries)")
	flag.BoolVar(&o.force, "force", false, "build and push even when the registry has the same inputs")
	flag.DurationVar(&o.timeout, "timeout", 5*time.Minute, "overall time limit")
	flag.Parse()
	o.only = flag.Args()
	o.authPassword = os.Getenv(authPasswordEnv)
	if o.builder.serverDir == "" {
		o.builder.serverDir = filepath.Join(o.builder.srcDir, "..", "testserver")
	}
	o.builder.os, o.builder.arch = hostPlatform()
	if err := run(context.Background(), o); err != nil {
		klog.ErrorS(err, "Building test images failed")
		klog.Flush()
		os.Exit(1)
	}
	klog.Flush()
}

func run(ctx context.Context, o options) error {
	if o.authRegistry != "" && (o.authUser == "" || o.authPassword == "") {
		return fmt.Errorf("-auth-registry %s needs -auth-user and $%s", o.authRegistry, authPasswordEnv)
	}
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	if o.builder.workdir == "" {
		dir, err := os.MkdirTemp("", "testimages-")
		if err != nil {
			return fmt.Errorf("creating scratch directory: %w", err)
		}
		defer func() { _ = os.RemoveAll(dir) }()
		o.builder.workdir = dir
	} else if err := os.MkdirAll(o.builder.workdir, 0o755); err != nil {
		return fmt.Errorf("creating scratch directory: %w", err)
	}
	known := map[string]bool{}
	push := func(t target, recipes []recipe) error {
		for _, r := range recipes {
			known[r.name] = true
			if len(o.only) > 0 && !slices.Contains(o.only, r.name) {
				continue
			}
			if err := ensure(ctx, t, &o.builder, r); err != nil {
				return fmt.Errorf("image %s/%s: %w", t.registry, r.name, err)
			}
		}
		return nil
	}
	if err := push(target{registry: o.registry, auth: authn.Anonymous, force: o.force}, catalog()); err != nil {
		return err
	}
	if o.builder.k8sModule != "" {
		if err := push(target{registry: o.registry, auth: authn.Anonymous, force: o.force}, conformanceCatalog()); err != nil {
			return err
		}
	}
	if o.authRegistry != "" {
		auth := &authn.Basic{Username: o.authUser, Password: o.authPassword}
		if err := push(target{registry: o.authRegistry, auth: auth, force: o.force}, privateCatalog()); err != nil {
			return err
		}
	}
	for _, n := range o.only {
		if !known[n] {
			return fmt.Errorf("unknown image %q", n)
		}
	}
	return nil
}

// ensure builds and pushes r to t unless every tag already holds an image
// built from the same inputs.
func ensure(ctx context.Context, t target, b *builder, r recipe) error {
	hash, err := inputsHash(b, r)
	if err != nil {
		return err
	}
	opts := []remote.Option{remote.WithContext(ctx), remote.WithAuth(t.auth)}
	refs := make([]name.Tag, 0, len(r.tags))
	stale := t.force
	for _, tag := range r.tags {
		ref, err := name.NewTag(t.registry+"/"+r.name+":"+tag, name.Insecure)
		if err != nil {
			return fmt.Errorf("parsing reference: %w", err)
		}
		refs = append(refs, ref)
		if !stale {
			got, err := remoteInputs(ref, opts)
			if err != nil {
				return err
			}
			stale = got != hash
		}
	}
	if !stale {
		klog.InfoS("Image up to date", "registry", t.registry, "image", r.name, "tags", r.tags)
		return nil
	}
	start := time.Now()
	img, err := r.build(ctx, b)
	if err != nil {
		return fmt.Errorf("building: %w", err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return fmt.Errorf("reading config: %w", err)
	}
	cfg := cf.Config
	cfg.Labels = map[string]string{inputsLabel: hash}
	for k, v := range cf.Config.Labels {
		cfg.Labels[k] = v
	}
	if img, err = mutate.Config(img, cfg); err != nil {
		return fmt.Errorf("adding the inputs label: %w", err)
	}
	for _, ref := range refs {
		if err := remote.Write(ref, img, opts...); err != nil {
			return fmt.Errorf("pushing %s: %w", ref, err)
		}
	}
	digest, err := img.Digest()
	if err != nil {
		return fmt.Errorf("computing digest: %w", err)
	}
	klog.InfoS("Pushed image", "registry", t.registry, "image", r.name, "tags", r.tags, "digest", digest.String(),
		"duration", time.Since(start).Round(time.Millisecond))
	return nil
}

// remoteInputs returns the inputs label of the image at ref, or "" when the
// registry does not have it.
func remoteInputs(ref name.Tag, opts []remote.Option) (string, error) {
	img, err := remote.Image(ref, opts...)
	if err != nil {
		var terr *transport.Error
		if errors.As(err, &terr) && terr.StatusCode == http.StatusNotFound {
			return "", nil
		}
		return "", fmt.Errorf("looking up %s: %w", ref, err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return "", fmt.Errorf("reading config of %s: %w", ref, err)
	}
	return cf.Config.Labels[inputsLabel], nil
}

// inputsHash hashes the recipe version, the image name and platform, and the
// content of the recipe's input files.
func inputsHash(b *builder, r recipe) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "recipe %s\nimage %s\nplatform %s/%s\n", recipeVersion, r.name, b.os, b.arch)
	for _, f := range r.inputs(b) {
		data, err := os.ReadFile(f)
		if err != nil {
			return "", fmt.Errorf("reading input: %w", err)
		}
		fmt.Fprintf(h, "file %s %d\n", filepath.Base(f), len(data))
		h.Write(data)
	}
	if r.inputText != nil {
		text, err := r.inputText(b)
		if err != nil {
			return "", fmt.Errorf("reading inputs: %w", err)
		}
		fmt.Fprintf(h, "text %d\n%s", len(text), text)
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}
