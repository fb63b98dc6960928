package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// recipeVersion is part of every image's input hash: bump it when a recipe
// changes in a way its input files do not show.
const recipeVersion = "1"

// defaultPath is the PATH of the images' environment.
const defaultPath = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// builder holds what recipes build from.
type builder struct {
	srcDir    string // this program's source directory (pause/pause.c)
	serverDir string // hack/testserver's source directory (a Go main package)
	busybox   string // a static busybox binary
	workdir   string // scratch directory for compiler outputs
	os        string // image platform
	arch      string
	// k8sModule is hack/controlplane/k8s, the module that builds upstream's Go mains for the
	// conformance images; bash a static bash and curl a curl (copied with its shared
	// libraries) for them. Unset: no conformance images.
	k8sModule string
	bash      string
	curl      string
	// ashBusybox is upstream's busybox 1.37 for e2e-test-images/busybox (see buildE2EBusybox).
	ashBusybox string
	built      map[string][]byte // Go binaries built in this run, by package
}

// recipe describes one test image.
type recipe struct {
	// name is the repository in the registry, e.g. "library/busybox"
	// (what docker.io/library/busybox resolves to through the mirror).
	name string
	tags []string
	// inputs are the files whose content decides whether to rebuild.
	inputs func(b *builder) []string
	// inputText, if set, returns inputs other than files (e.g. the Go
	// version that compiles the image's binary); it is hashed with them.
	inputText func(b *builder) (string, error)
	build     func(ctx context.Context, b *builder) (v1.Image, error)
}

// catalog lists the test images.
func catalog() []recipe {
	return []recipe{
		{
			name:   "pause",
			tags:   []string{"3.10"},
			inputs: func(b *builder) []string { return []string{filepath.Join(b.srcDir, "pause", "pause.c")} },
			build:  buildPause,
		},
		{
			name:   "library/busybox",
			tags:   []string{"1.35", "latest"},
			inputs: func(b *builder) []string { return []string{b.busybox} },
			build:  buildBusybox,
		},
		{
			// docker.io/nodelet/testserver:1.0 through the mirror.
			name:      "nodelet/testserver",
			tags:      []string{"1.0"},
			inputs:    testserverInputs,
			inputText: goVersion,
			build:     buildTestserver,
		},
	}
}

// privateCatalog lists the images pushed to the registry that requires
// credentials (-auth-registry), for image pull secret tests. Their content
// is the public busybox's; a pull without credentials must fail.
func privateCatalog() []recipe {
	return []recipe{
		{
			name:   "private/busybox",
			tags:   []string{"1.35"},
			inputs: func(b *builder) []string { return []string{b.busybox} },
			build:  buildBusybox,
		},
	}
}

func buildPause(ctx context.Context, b *builder) (v1.Image, error) {
	out := filepath.Join(b.workdir, "pause")
	src := filepath.Join(b.srcDir, "pause", "pause.c")
	cmd := exec.CommandContext(ctx, "gcc", "-static", "-Os", "-Wall", "-o", out, src)
	if msg, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("compiling %s: %w: %s", src, err, msg)
	}
	if msg, err := exec.CommandContext(ctx, "strip", out).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("stripping %s: %w: %s", out, err, msg)
	}
	bin, err := os.ReadFile(out)
	if err != nil {
		return nil, fmt.Errorf("reading compiled pause: %w", err)
	}
	l := newTarLayer()
	l.file("pause", 0o755, bin)
	layer, err := l.layer()
	if err != nil {
		return nil, err
	}
	return assemble(b.os, b.arch, v1.Config{
		Entrypoint: []string{"/pause"},
		User:       "65535:65535",
		Env:        []string{defaultPath},
		WorkingDir: "/",
	}, layer)
}

func buildBusybox(ctx context.Context, b *builder) (v1.Image, error) {
	bin, err := os.ReadFile(b.busybox)
	if err != nil {
		return nil, fmt.Errorf("reading busybox: %w", err)
	}
	list, err := exec.CommandContext(ctx, b.busybox, "--list-full").Output()
	if err != nil {
		return nil, fmt.Errorf("listing applets of %s: %w", b.busybox, err)
	}
	l := newTarLayer()
	if err := busyboxRoot(l, b.busybox, bin, string(list), ""); err != nil {
		return nil, err
	}
	layer, err := l.layer()
	if err != nil {
		return nil, err
	}
	return assemble(b.os, b.arch, v1.Config{
		Cmd:        []string{"sh"},
		Env:        []string{defaultPath},
		WorkingDir: "/",
	}, layer)
}

// busyboxRoot adds a small root file system to l: the usual directories, bin/busybox (bin, read
// from path) with a symlink for each applet of list (busybox --list-full), and etc/passwd and
// etc/group with root and nobody plus the lines of extraIDs (passwd lines, an empty line, group
// lines). Entries added to l before keep their place: an applet path already there is skipped.
func busyboxRoot(l *tarLayer, path string, bin []byte, list, extraIDs string) error {
	for _, d := range []string{"bin", "sbin", "usr/bin", "usr/sbin", "etc", "home", "var", "dev", "proc", "sys"} {
		l.dir(d, 0o755)
	}
	l.dir("root", 0o700)
	l.dir("tmp", 0o1777)
	l.file("bin/busybox", 0o755, bin)
	users, groups, _ := strings.Cut(extraIDs, "\n\n")
	l.file("etc/passwd", 0o644, []byte("root:x:0:0:root:/root:/bin/sh\n"+
		"nobody:x:65534:65534:nobody:/home:/bin/false\n"+users))
	l.file("etc/group", 0o644, []byte("root:x:0:\nnobody:x:65534:\n"+groups))
	applets := 0
	for _, p := range strings.Fields(list) {
		if p == "bin/busybox" {
			continue
		}
		l.symlink(p, "/bin/busybox")
		applets++
	}
	if applets == 0 || !strings.Contains("\n"+list, "\nbin/sh\n") {
		return fmt.Errorf("%s --list-full has no bin/sh (%d applets)", path, applets)
	}
	return nil
}

// hostPlatform is the platform of the binaries the recipes package.
func hostPlatform() (string, string) { return runtime.GOOS, runtime.GOARCH }

// testserverApplets are the busybox applets of the testserver image, for exec
// probes and exec hooks.
var testserverApplets = []string{"sh", "cat", "touch", "sleep", "echo", "wget"}

// testserverInputs: the server's Go sources (tests excluded), go.mod (the
// versions of grpc and the rest) and busybox.
func testserverInputs(b *builder) []string {
	srcs, _ := filepath.Glob(filepath.Join(b.serverDir, "*.go")) // sorted; only ErrBadPattern
	files := make([]string, 0, len(srcs)+2)
	for _, f := range srcs {
		if !strings.HasSuffix(f, "_test.go") {
			files = append(files, f)
		}
	}
	return append(files, filepath.Join(moduleRoot(b.serverDir), "go.mod"), b.busybox)
}

// moduleRoot is the closest directory at or above dir that holds a go.mod
// (dir itself when there is none, so that reading dir/go.mod fails clearly).
func moduleRoot(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return dir
	}
	for d := abs; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			return dir
		}
	}
}

// goVersion is the version of the Go toolchain that builds b.serverDir.
func goVersion(b *builder) (string, error) {
	cmd := exec.Command("go", "env", "GOVERSION")
	cmd.Dir = b.serverDir
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go env GOVERSION in %s: %w", b.serverDir, err)
	}
	return "go " + strings.TrimSpace(string(out)), nil
}

// buildTestserver packages hack/testserver as a static binary at /testserver
// with busybox and a few of its applets.
func buildTestserver(ctx context.Context, b *builder) (v1.Image, error) {
	dir, err := os.MkdirTemp(b.workdir, "testserver-")
	if err != nil {
		return nil, fmt.Errorf("creating build directory: %w", err)
	}
	defer func() { _ = os.RemoveAll(dir) }()
	out := filepath.Join(dir, "testserver")
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags", "-s -w", "-o", out, ".")
	cmd.Dir = b.serverDir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+b.os, "GOARCH="+b.arch,
		"GOFLAGS="+strings.TrimSpace(os.Getenv("GOFLAGS")+" -buildvcs=false"))
	if msg, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("go build in %s: %w: %s", b.serverDir, err, msg)
	}
	server, err := os.ReadFile(out)
	if err != nil {
		return nil, fmt.Errorf("reading the built testserver: %w", err)
	}
	bb, err := os.ReadFile(b.busybox)
	if err != nil {
		return nil, fmt.Errorf("reading busybox: %w", err)
	}
	list, err := exec.CommandContext(ctx, b.busybox, "--list").Output()
	if err != nil {
		return nil, fmt.Errorf("listing applets of %s: %w", b.busybox, err)
	}
	have := strings.Fields(string(list))
	l := newTarLayer()
	l.dir("etc", 0o755)
	l.dir("tmp", 0o1777)
	l.file("testserver", 0o755, server)
	l.file("bin/busybox", 0o755, bb)
	for _, a := range testserverApplets {
		if !slices.Contains(have, a) {
			return nil, fmt.Errorf("%s has no %s applet", b.busybox, a)
		}
		l.symlink("bin/"+a, "/bin/busybox")
	}
	layer, err := l.layer()
	if err != nil {
		return nil, err
	}
	return assemble(b.os, b.arch, v1.Config{
		Entrypoint:   []string{"/testserver"},
		Env:          []string{defaultPath},
		WorkingDir:   "/",
		ExposedPorts: map[string]struct{}{"8080/tcp": {}, "9090/tcp": {}, "7070/tcp": {}},
	}, layer)
}
