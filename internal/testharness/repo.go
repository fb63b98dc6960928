package testharness

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// ModulePath is the module of this repository's go.mod.
const ModulePath = "github.com/nodelet/nodelet"

// RepoRoot is the directory of this module's go.mod: the working directory or one above it.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("working directory: %w", err)
	}
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && bytes.Contains(b, []byte("module "+ModulePath+"\n")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("not in the nodelet repository: no go.mod of " + ModulePath + " here or above")
		}
		dir = parent
	}
}

// RunLogged runs a command in dir; its output is returned in the error only, when it fails.
func RunLogged(ctx context.Context, dir, name string, args ...string) error {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %w\n%s", name, strings.Join(args, " "), err, out)
	}
	return nil
}

// BuildNodelet builds root's ./cmd/nodelet into dir with the Makefile's build target (the
// binary as shipped) and returns the binary's path.
func BuildNodelet(ctx context.Context, root, dir string) (string, error) {
	bin := filepath.Join(dir, "nodelet")
	if err := RunLogged(ctx, root, "make", "-s", "build", "BIN="+bin); err != nil {
		return "", fmt.Errorf("build nodelet: %w", err)
	}
	return bin, nil
}
