package main

import (
	"archive/tar"
	"context"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// layerEntries reads the headers (and the content of the files named in read) of img's only layer.
func layerEntries(t *testing.T, img v1.Image, read ...string) (map[string]*tar.Header, map[string][]byte) {
	t.Helper()
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	if len(layers) != 1 {
		t.Fatalf("%d layers, want 1", len(layers))
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = rc.Close() }()
	entries, files := map[string]*tar.Header{}, map[string][]byte{}
	tr := tar.NewReader(rc)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return entries, files
		}
		if err != nil {
			t.Fatal(err)
		}
		entries[hdr.Name] = hdr
		if slices.Contains(read, hdr.Name) {
			if files[hdr.Name], err = io.ReadAll(tr); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func busyboxBuilder(t *testing.T) *builder {
	t.Helper()
	for _, f := range []string{"/bin/busybox", "/bin/bash-static"} {
		if _, err := os.Stat(f); err != nil {
			t.Skipf("no %s (Debian's busybox-static and bash-static)", f)
		}
	}
	b := &builder{srcDir: ".", busybox: "/bin/busybox", bash: "/bin/bash-static", workdir: t.TempDir()}
	b.os, b.arch = hostPlatform()
	return b
}

// TestE2EBusyboxLayout: the e2e busybox is the busybox given with -ash-busybox, its ash as
// /bin/sh and every applet in /bin, as Docker's busybox image. (That the binary's ash keeps
// variables such as data-1 is checked where hack/conformance.sh builds it.)
func TestE2EBusyboxLayout(t *testing.T) {
	b := busyboxBuilder(t)
	if _, err := buildE2EBusybox(context.Background(), b); err == nil || !strings.Contains(err.Error(), "-ash-busybox") {
		t.Errorf("without -ash-busybox: %v, want an error naming the flag", err)
	}
	b.ashBusybox = b.busybox
	img, err := buildE2EBusybox(context.Background(), b)
	if err != nil {
		t.Fatal(err)
	}
	entries, _ := layerEntries(t, img)
	if hdr := entries["bin/busybox"]; hdr == nil || hdr.Typeflag != tar.TypeReg || hdr.Mode != 0o755 {
		t.Errorf("bin/busybox = %+v, want an executable file", hdr)
	}
	for _, a := range []string{"bin/sh", "bin/env", "usr/bin/env", "bin/cat", "bin/sleep", "bin/wget"} {
		if hdr := entries[a]; hdr == nil || hdr.Linkname != "/bin/busybox" {
			t.Errorf("%s = %+v, want a busybox applet", a, hdr)
		}
	}
	if entries["bin/bash"] != nil {
		t.Error("bin/bash is in the image: /bin/sh must be ash, whose error texts the specs expect")
	}
}

func TestNginxServesDefaultPage(t *testing.T) {
	b := busyboxBuilder(t)
	img, err := buildNginx(context.Background(), b)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(cf.Config.Cmd, " "); got != "httpd -f -p 80 -h /usr/share/nginx/html" {
		t.Errorf("Cmd = %q", got)
	}
	const index = "usr/share/nginx/html/index.html"
	entries, files := layerEntries(t, img, index)
	if !strings.Contains(string(files[index]), "Welcome to nginx!") {
		t.Errorf("%s = %q", index, files[index])
	}
	if hdr := entries["usr/sbin/httpd"]; hdr == nil || hdr.Linkname != "/bin/busybox" {
		t.Errorf("usr/sbin/httpd = %+v, want the busybox applet", hdr)
	}
}

func TestConformanceCatalogNames(t *testing.T) {
	want := map[string][]string{
		"pause":                      {pauseTag},
		"e2e-test-images/agnhost":    {"2.66.1", "2.55"},
		"e2e-test-images/busybox":    {"1.37.0-2"},
		"e2e-test-images/kitten":     {"1.8"},
		"e2e-test-images/nginx":      {"1.27.0-2", "1.28.0-2"},
		"e2e-test-images/nonewprivs": {"1.4"},
	}
	got := map[string][]string{}
	for _, r := range conformanceCatalog() {
		got[r.name] = r.tags
	}
	for name, tags := range want {
		if !slices.Equal(got[name], tags) {
			t.Errorf("%s: tags %q, want %q", name, got[name], tags)
		}
	}
	if len(got) != len(want) {
		t.Errorf("catalog %v, want %v", got, want)
	}
}

// TestDynamicBinary: a dynamically linked program comes with its loader and libraries.
func TestDynamicBinary(t *testing.T) {
	if _, err := exec.LookPath("ldd"); err != nil {
		t.Skip("no ldd")
	}
	l := newTarLayer()
	if err := dynamicBinary(context.Background(), l, "/bin/ls"); err != nil {
		t.Fatal(err)
	}
	var names []string
	for name := range l.seen {
		names = append(names, name)
	}
	for _, want := range []string{"bin/ls", "libc.so.6", "ld-linux"} {
		if !slices.ContainsFunc(names, func(n string) bool { return strings.Contains(n, want) }) {
			t.Errorf("layer %q lacks %s", names, want)
		}
	}
}
