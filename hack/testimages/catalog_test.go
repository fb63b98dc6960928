package main

import (
	"archive/tar"
	"bytes"
	"context"
	"debug/elf"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func testserverRecipe(t *testing.T) recipe {
	t.Helper()
	for _, r := range catalog() {
		if r.name == "nodelet/testserver" {
			return r
		}
	}
	t.Fatal("no nodelet/testserver in the catalog")
	return recipe{}
}

func TestTestserverInputs(t *testing.T) {
	b := &builder{srcDir: ".", serverDir: filepath.Join("..", "testserver"), busybox: "/bin/busybox"}
	files := testserverRecipe(t).inputs(b)
	var names []string
	for _, f := range files {
		names = append(names, filepath.Base(f))
		if strings.HasSuffix(f, "_test.go") {
			t.Errorf("input %s is a test file", f)
		}
	}
	for _, want := range []string{"main.go", "server.go", "go.mod", "busybox"} {
		if !slices.Contains(names, want) {
			t.Errorf("inputs %q lack %s", files, want)
		}
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(files, filepath.Join(root, "go.mod")) {
		t.Errorf("inputs %q lack the module's go.mod %s", files, filepath.Join(root, "go.mod"))
	}
}

func TestInputsHashCoversFilesAndText(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "main.go")
	text := "go go1.0"
	r := recipe{
		name:      "x",
		inputs:    func(*builder) []string { return []string{src} },
		inputText: func(*builder) (string, error) { return text, nil },
	}
	b := &builder{os: "linux", arch: "amd64"}
	hash := func() string {
		t.Helper()
		h, err := inputsHash(b, r)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	if err := os.WriteFile(src, []byte("package main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h1 := hash()
	if h1 != hash() {
		t.Fatal("the hash is not stable")
	}
	if err := os.WriteFile(src, []byte("package main // changed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h2 := hash()
	if h2 == h1 {
		t.Error("the hash ignores a source change")
	}
	text = "go go1.1"
	if hash() == h2 {
		t.Error("the hash ignores the input text")
	}
	r.inputText = func(*builder) (string, error) { return "", errors.New("no go") }
	if _, err := inputsHash(b, r); err == nil {
		t.Error("an input text error is ignored")
	}
}

// TestBuildTestserver builds the image (go build included) without pushing it
// and checks its config and layer.
func TestBuildTestserver(t *testing.T) {
	if testing.Short() {
		t.Skip("builds hack/testserver")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	if _, err := os.Stat("/bin/busybox"); err != nil {
		t.Skip("no /bin/busybox (busybox-static)")
	}
	b := &builder{srcDir: ".", serverDir: filepath.Join("..", "testserver"), busybox: "/bin/busybox", workdir: t.TempDir()}
	b.os, b.arch = hostPlatform()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	img, err := testserverRecipe(t).build(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	if left, _ := os.ReadDir(b.workdir); len(left) != 0 {
		t.Errorf("the build left %v in the work directory", left)
	}

	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if got := cf.Config.Entrypoint; !slices.Equal(got, []string{"/testserver"}) {
		t.Errorf("Entrypoint = %q", got)
	}
	if len(cf.Config.Cmd) != 0 {
		t.Errorf("Cmd = %q, want none", cf.Config.Cmd)
	}
	for _, p := range []string{"8080/tcp", "9090/tcp", "7070/tcp"} {
		if _, ok := cf.Config.ExposedPorts[p]; !ok {
			t.Errorf("ExposedPorts %v lack %s", cf.Config.ExposedPorts, p)
		}
	}
	if cf.OS != b.os || cf.Architecture != b.arch {
		t.Errorf("platform %s/%s, want %s/%s", cf.OS, cf.Architecture, b.os, b.arch)
	}

	entries, files := layerEntries(t, img, "testserver")
	server := files["testserver"]
	for name, mode := range map[string]int64{"testserver": 0o755, "bin/busybox": 0o755, "tmp/": 0o1777} {
		if hdr := entries[name]; hdr == nil || hdr.Mode != mode {
			t.Errorf("layer entry %s = %+v, want mode %o", name, hdr, mode)
		}
	}
	for _, a := range []string{"sh", "cat", "touch", "sleep", "echo", "wget"} {
		hdr := entries["bin/"+a]
		if hdr == nil || hdr.Typeflag != tar.TypeSymlink || hdr.Linkname != "/bin/busybox" {
			t.Errorf("bin/%s = %+v, want a symlink to /bin/busybox", a, hdr)
		}
	}
	f, err := elf.NewFile(bytes.NewReader(server))
	if err != nil {
		t.Fatalf("/testserver is not ELF: %v", err)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Error("/testserver is dynamically linked (has PT_INTERP)")
		}
	}
	if syms, _ := f.Symbols(); len(syms) != 0 {
		t.Errorf("/testserver has %d symbols, want a stripped binary (-s -w)", len(syms))
	}
}
