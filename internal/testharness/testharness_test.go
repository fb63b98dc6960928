package testharness

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/nodelet/nodelet/internal/container"
	"github.com/nodelet/nodelet/internal/testharness/ci"
)

func TestOfNode(t *testing.T) {
	sb := func(id, pod string) *runtimeapi.PodSandbox {
		return &runtimeapi.PodSandbox{Id: id, Labels: map[string]string{container.PodNameLabel: pod}}
	}
	all := []*runtimeapi.PodSandbox{sb("1", "web-n1"), sb("2", "web-n12"), sb("3", "n1"), sb("4", "db-n1"), {Id: "5"}}
	var ids []string
	for _, s := range OfNode(all, "n1", (*runtimeapi.PodSandbox).GetLabels) {
		ids = append(ids, s.Id)
	}
	if !slices.Equal(ids, []string{"1", "4"}) {
		t.Errorf("sandboxes of n1: %v, want 1 and 4", ids)
	}
}

func TestTestenvEndpoint(t *testing.T) {
	for dir, want := range map[string]string{
		"":           "unix:///var/lib/nodelet-testenv/containerd.sock",
		"/srv/env/":  "unix:///srv/env/containerd.sock",
		"/srv/env//": "unix:///srv/env/containerd.sock",
	} {
		t.Setenv("TESTENV_DIR", dir)
		if got := TestenvEndpoint(); got != want {
			t.Errorf("TESTENV_DIR=%q: %s, want %s", dir, got, want)
		}
	}
}

func TestSmallPieces(t *testing.T) {
	if h := RandomHex(4); len(h) != 8 || strings.Trim(h, "0123456789abcdef") != "" || h == RandomHex(4) {
		t.Errorf("RandomHex(4) = %q", h)
	}
	if p, err := FreePort(); err != nil || p <= 0 {
		t.Errorf("FreePort() = %d, %v", p, err)
	}
	if got := PodCgroups("no-such-uid"); len(got) != 0 {
		t.Errorf("cgroups of a pod that never ran: %v", got)
	}
	if got := MountsUnder(t.TempDir()); len(got) != 0 {
		t.Errorf("mounts under a new directory: %v", got)
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	if root, err := RepoRoot(); err != nil || wd != filepath.Join(root, "internal", "testharness") {
		t.Errorf("RepoRoot() = %q, %v from %s", root, err, wd)
	}
}

// TestNotInTheBinary: nodelet's binary is built without this package.
func TestNotInTheBinary(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		ci.Skip(t, "no go command to list nodelet's dependencies")
	}
	out, err := exec.Command("go", "list", "-deps", ModulePath+"/cmd/nodelet").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if strings.HasPrefix(pkg, ModulePath+"/internal/testharness") {
			t.Errorf("cmd/nodelet depends on %s", pkg)
		}
	}
}
