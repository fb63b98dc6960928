package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// The images of the upstream conformance suite (k8s.io/kubernetes/test/utils/image, v1.37.1)
// that its sig-node specs run, under their real names: registry.k8s.io/<name> resolves to
// <registry>/<name> through hack/testenv.sh's mirror. They are stand-ins built here, not
// upstream's images: agnhost is upstream's Go program, the rest is busybox-static with what each
// spec needs. Pushed only with -k8s-module (hack/conformance.sh images).
const (
	agnhostTag     = "2.66.1" // imageutils.Agnhost
	agnhostPrevTag = "2.55"   // imageutils.AgnhostPrev: the same program, another tag
	busyboxTag     = "1.37.0-2"
	kittenTag      = "1.8"
	nginxTag       = "1.27.0-2"
	nginxNewTag    = "1.28.0-2"
	nonewprivsTag  = "1.4"
	pauseTag       = "3.10.2" // imageutils.Pause (the e2e framework's, not the sandbox image)
)

// Upstream's Go mains the images package, built in the -k8s-module wrapper.
const (
	agnhostPkg    = "k8s.io/kubernetes/test/images/agnhost"
	nonewprivsPkg = "k8s.io/kubernetes/test/images/nonewprivs"
)

// alpineOSRelease is /etc/os-release of upstream's agnhost image (alpine:3.21), the base of its
// kitten image. The ImageVolume conformance spec mounts kitten as a volume and expects "Alpine
// Linux" in this file; the stand-in carries the same text.
const alpineOSRelease = `NAME="Alpine Linux"
ID=alpine
VERSION_ID=3.21.3
PRETTY_NAME="Alpine Linux v3.21"
HOME_URL="https://alpinelinux.org/"
BUG_REPORT_URL="https://gitlab.alpinelinux.org/alpine/aports/-/issues"
`

// agnhostIDs are the user and group upstream's agnhost Dockerfile adds (adduser, addgroup).
const agnhostIDs = "user-defined-in-image:x:1000:1000::/home/user-defined-in-image:/bin/sh\n\n" +
	"user-defined-in-image:x:1000:\ngroup-defined-in-image:x:50000:user-defined-in-image\n"

// nginxIndex is the default page of the nginx stand-in (busybox httpd).
const nginxIndex = `<!DOCTYPE html>
<html>
<head><title>Welcome to nginx!</title></head>
<body>
<h1>Welcome to nginx!</h1>
<p>A busybox httpd standing in for nginx in nodelet's conformance runs.</p>
</body>
</html>
`

// conformanceCatalog lists the conformance images.
func conformanceCatalog() []recipe {
	k8sInputs := func(extra ...func(*builder) string) func(*builder) []string {
		return func(b *builder) []string {
			files := []string{filepath.Join(b.k8sModule, "go.mod"), filepath.Join(b.k8sModule, "go.sum"), b.busybox}
			for _, f := range extra {
				files = append(files, f(b))
			}
			return files
		}
	}
	bash := func(b *builder) string { return b.bash }
	curl := func(b *builder) string { return b.curl }
	k8sGoVersion := func(b *builder) (string, error) { return goVersionIn(b.k8sModule) }
	return []recipe{
		{name: "pause", tags: []string{pauseTag},
			inputs: func(b *builder) []string { return []string{filepath.Join(b.srcDir, "pause", "pause.c")} },
			build:  buildPause},
		{name: "e2e-test-images/agnhost", tags: []string{agnhostTag, agnhostPrevTag},
			inputs: k8sInputs(bash, curl), inputText: k8sGoVersion, build: buildAgnhost},
		{name: "e2e-test-images/kitten", tags: []string{kittenTag},
			inputs: k8sInputs(bash, curl), inputText: k8sGoVersion, build: buildKitten},
		{name: "e2e-test-images/nonewprivs", tags: []string{nonewprivsTag},
			inputs: k8sInputs(), inputText: k8sGoVersion, build: buildNonewprivs},
		{name: "e2e-test-images/busybox", tags: []string{busyboxTag},
			inputs: func(b *builder) []string { return []string{b.ashBusybox} }, build: buildE2EBusybox},
		{name: "e2e-test-images/nginx", tags: []string{nginxTag, nginxNewTag},
			inputs: func(b *builder) []string { return []string{b.busybox} }, build: buildNginx},
	}
}

// dynamicBinary adds the program at path to l at the same path, with the shared libraries ldd
// lists for it (its dynamic loader included), each as a regular file at the path ldd prints.
func dynamicBinary(ctx context.Context, l *tarLayer, path string) error {
	out, err := exec.CommandContext(ctx, "ldd", path).Output()
	if err != nil {
		return fmt.Errorf("ldd %s: %w", path, err)
	}
	files := []string{path}
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line) // "libz.so.1 => /lib/.../libz.so.1 (0x...)" or "/lib64/ld-linux-x86-64.so.2 (0x...)"
		switch {
		case len(f) == 4 && f[1] == "=>":
			files = append(files, f[2])
		case len(f) == 2 && strings.HasPrefix(f[0], "/"):
			files = append(files, f[0])
		}
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return fmt.Errorf("reading %s: %w", f, err)
		}
		l.file(f, 0o755, data)
	}
	return nil
}

// goVersionIn is the version of the Go toolchain that builds in dir.
func goVersionIn(dir string) (string, error) {
	cmd := exec.Command("go", "env", "GOVERSION")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go env GOVERSION in %s: %w", dir, err)
	}
	return "go " + strings.TrimSpace(string(out)), nil
}

// goBinary builds pkg in the -k8s-module wrapper as a static, stripped binary and returns it;
// a package is built once per run.
func (b *builder) goBinary(ctx context.Context, pkg string) ([]byte, error) {
	if bin, ok := b.built[pkg]; ok {
		return bin, nil
	}
	dir, err := os.MkdirTemp(b.workdir, "gobuild-")
	if err != nil {
		return nil, fmt.Errorf("creating build directory: %w", err)
	}
	defer func() { _ = os.RemoveAll(dir) }()
	out := filepath.Join(dir, filepath.Base(pkg))
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags", "-s -w", "-o", out, pkg)
	cmd.Dir = b.k8sModule
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+b.os, "GOARCH="+b.arch,
		"GOFLAGS="+strings.TrimSpace(os.Getenv("GOFLAGS")+" -buildvcs=false"))
	if msg, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("go build %s in %s: %w: %s", pkg, b.k8sModule, err, msg)
	}
	bin, err := os.ReadFile(out)
	if err != nil {
		return nil, fmt.Errorf("reading the built %s: %w", pkg, err)
	}
	if b.built == nil {
		b.built = map[string][]byte{}
	}
	b.built[pkg] = bin
	return bin, nil
}

// k8sSourceDir is the directory of the k8s.io/kubernetes module the wrapper requires.
func (b *builder) k8sSourceDir(ctx context.Context) (string, error) {
	cmd := exec.CommandContext(ctx, "go", "list", "-m", "-f", "{{.Dir}}", "k8s.io/kubernetes")
	cmd.Dir = b.k8sModule
	out, err := cmd.Output()
	if err != nil || strings.TrimSpace(string(out)) == "" {
		return "", fmt.Errorf("go list -m k8s.io/kubernetes in %s: %w", b.k8sModule, err)
	}
	return strings.TrimSpace(string(out)), nil
}

// busyboxFiles reads busybox and its applet list (busybox --list-full).
func (b *builder) busyboxFiles(ctx context.Context) ([]byte, string, error) {
	bin, err := os.ReadFile(b.busybox)
	if err != nil {
		return nil, "", fmt.Errorf("reading busybox: %w", err)
	}
	list, err := exec.CommandContext(ctx, b.busybox, "--list-full").Output()
	if err != nil {
		return nil, "", fmt.Errorf("listing applets of %s: %w", b.busybox, err)
	}
	return bin, string(list), nil
}

// agnhostLayer is upstream's agnhost image with few of Alpine's packages: /agnhost (and the
// agnhost-2 link), busybox with every applet, bash, curl (the lifecycle hook specs' exec
// handlers run it), upstream's extra user and group, the porter test certificate, /uploads and
// Alpine's os-release.
func agnhostLayer(ctx context.Context, b *builder) (v1.Layer, error) {
	agnhost, err := b.goBinary(ctx, agnhostPkg)
	if err != nil {
		return nil, err
	}
	src, err := b.k8sSourceDir(ctx)
	if err != nil {
		return nil, err
	}
	bb, list, err := b.busyboxFiles(ctx)
	if err != nil {
		return nil, err
	}
	bash, err := os.ReadFile(b.bash)
	if err != nil {
		return nil, fmt.Errorf("reading bash: %w", err)
	}
	l := newTarLayer()
	l.file("agnhost", 0o755, agnhost)
	l.symlink("agnhost-2", "agnhost")
	l.file("bin/bash", 0o755, bash)
	if err := dynamicBinary(ctx, l, b.curl); err != nil {
		return nil, err
	}
	if err := busyboxRoot(l, b.busybox, bb, list, agnhostIDs); err != nil {
		return nil, err
	}
	l.file("etc/os-release", 0o644, []byte(alpineOSRelease))
	l.dir("uploads", 0o755)
	l.dir("home/user-defined-in-image", 0o755)
	for _, f := range []string{"localhost.crt", "localhost.key"} {
		data, err := os.ReadFile(filepath.Join(src, "test", "images", "agnhost", "porter", f))
		if err != nil {
			return nil, fmt.Errorf("reading agnhost's porter certificate: %w", err)
		}
		l.file(f, 0o644, data)
	}
	return l.layer()
}

// agnhostConfig is upstream's agnhost image config with cmd as its Cmd.
func agnhostConfig(cmd ...string) v1.Config {
	return v1.Config{
		Entrypoint: []string{"/agnhost"},
		Cmd:        cmd,
		Env:        []string{defaultPath},
		WorkingDir: "/",
		ExposedPorts: map[string]struct{}{"80/tcp": {}, "8080/tcp": {}, "8081/tcp": {}, "9376/tcp": {},
			"5000/tcp": {}},
	}
}

func buildAgnhost(ctx context.Context, b *builder) (v1.Image, error) {
	layer, err := agnhostLayer(ctx, b)
	if err != nil {
		return nil, err
	}
	return assemble(b.os, b.arch, agnhostConfig("pause"), layer)
}

// buildKitten is agnhost plus /kitten.jpg and /data.json from upstream's test/images/kitten,
// serving them with agnhost test-webserver, as upstream's kitten image.
func buildKitten(ctx context.Context, b *builder) (v1.Image, error) {
	base, err := agnhostLayer(ctx, b)
	if err != nil {
		return nil, err
	}
	src, err := b.k8sSourceDir(ctx)
	if err != nil {
		return nil, err
	}
	l := newTarLayer()
	for _, f := range []string{"kitten.jpg", "data.json"} {
		data, err := os.ReadFile(filepath.Join(src, "test", "images", "kitten", "html", f))
		if err != nil {
			return nil, fmt.Errorf("reading kitten's %s: %w", f, err)
		}
		l.file(f, 0o644, data)
	}
	top, err := l.layer()
	if err != nil {
		return nil, err
	}
	return assemble(b.os, b.arch, agnhostConfig("test-webserver"), base, top)
}

// buildNonewprivs is busybox plus upstream's nnp (it prints its effective uid) installed setuid
// root at /usr/local/bin/nnp, as upstream's nonewprivs image.
func buildNonewprivs(ctx context.Context, b *builder) (v1.Image, error) {
	nnp, err := b.goBinary(ctx, nonewprivsPkg)
	if err != nil {
		return nil, err
	}
	bb, list, err := b.busyboxFiles(ctx)
	if err != nil {
		return nil, err
	}
	l := newTarLayer()
	if err := busyboxRoot(l, b.busybox, bb, list, ""); err != nil {
		return nil, err
	}
	l.file("usr/local/bin/nnp", 0o4755, nnp)
	layer, err := l.layer()
	if err != nil {
		return nil, err
	}
	return assemble(b.os, b.arch, v1.Config{Cmd: []string{"nnp"}, Env: []string{defaultPath}, WorkingDir: "/"}, layer)
}

// buildE2EBusybox is upstream's busybox 1.37 with every applet in /bin, as Docker's busybox
// image: /bin/sh is its ash. Specs run `sh -c env` and expect every variable a pod sets, also
// those whose names are no shell identifiers (data-1, from envFrom): upstream's ash keeps them,
// but Debian's busybox-static (1.35 and 1.37) drops them, so hack/conformance.sh builds upstream's
// from source. Another spec expects ash's own error text ("/bin/sh: can't create /file: ...").
func buildE2EBusybox(ctx context.Context, b *builder) (v1.Image, error) {
	if b.ashBusybox == "" {
		return nil, errors.New("e2e-test-images/busybox needs -ash-busybox (upstream's busybox 1.37; hack/conformance.sh images builds it)")
	}
	bb, err := os.ReadFile(b.ashBusybox)
	if err != nil {
		return nil, fmt.Errorf("reading busybox: %w", err)
	}
	out, err := exec.CommandContext(ctx, b.ashBusybox, "--list-full").Output()
	if err != nil {
		return nil, fmt.Errorf("listing applets of %s: %w", b.ashBusybox, err)
	}
	l := newTarLayer()
	for _, p := range strings.Fields(string(out)) {
		if name := path.Base(p); name != "busybox" && name != "sh" {
			l.symlink("bin/"+name, "/bin/busybox")
		}
	}
	if err := busyboxRoot(l, b.ashBusybox, bb, string(out), ""); err != nil {
		return nil, err
	}
	layer, err := l.layer()
	if err != nil {
		return nil, err
	}
	return assemble(b.os, b.arch, v1.Config{Cmd: []string{"sh"}, Env: []string{defaultPath}, WorkingDir: "/"}, layer)
}

// buildNginx is busybox's httpd serving a default page on port 80 from /usr/share/nginx/html,
// nginx's document root; the specs that run nginx only need a web server on :80.
func buildNginx(ctx context.Context, b *builder) (v1.Image, error) {
	bb, list, err := b.busyboxFiles(ctx)
	if err != nil {
		return nil, err
	}
	if !slices.ContainsFunc(strings.Fields(list), func(p string) bool { return path.Base(p) == "httpd" }) {
		return nil, fmt.Errorf("%s has no httpd applet", b.busybox)
	}
	l := newTarLayer()
	if err := busyboxRoot(l, b.busybox, bb, list, ""); err != nil {
		return nil, err
	}
	l.file("usr/share/nginx/html/index.html", 0o644, []byte(nginxIndex))
	layer, err := l.layer()
	if err != nil {
		return nil, err
	}
	return assemble(b.os, b.arch, v1.Config{
		Cmd:          []string{"httpd", "-f", "-p", "80", "-h", "/usr/share/nginx/html"},
		Env:          []string{defaultPath},
		WorkingDir:   "/",
		ExposedPorts: map[string]struct{}{"80/tcp": {}},
	}, layer)
}
