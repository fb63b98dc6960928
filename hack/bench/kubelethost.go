package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// cgroupFS is where the cgroup hierarchies are mounted.
const cgroupFS = "/sys/fs/cgroup"

// kubeletSysctls are the kernel settings the kubelet sets at start-up (vm.overcommit_memory=1,
// vm.panic_on_oom=0, kernel.panic=10, kernel.panic_on_oops=1, kernel.keys.root_maxkeys and
// root_maxbytes). protectKernelDefaults: true would make it refuse to start instead, as this
// machine's differ, so the bench puts the values back after every kubelet run.
var kubeletSysctls = []string{
	"vm/overcommit_memory", "vm/panic_on_oom", "kernel/panic", "kernel/panic_on_oops",
	"kernel/keys/root_maxkeys", "kernel/keys/root_maxbytes",
}

// kubeletHostPaths are what the kubelet creates outside its root and pod logs directories
// whatever its configuration, parents first: the device plugin socket (a fixed path) and the
// directory of its container log links.
var kubeletHostPaths = []string{
	"/var/lib/kubelet", "/var/lib/kubelet/device-plugins",
	"/var/lib/kubelet/device-plugins/kubelet.sock", "/var/lib/kubelet/device-plugins/kubelet_internal_checkpoint",
	"/var/log/containers",
}

// kubeletLinkDir holds the kubelet's links to its containers' logs, one per container.
const kubeletLinkDir = "/var/log/containers"

// hostChanges is what a kubelet run changes on the host outside its directories, recorded
// before it starts so that undo can put it back.
type hostChanges struct {
	cgroupRoot string            // "/nodelet-bench-<id>": the bench creates it, undo removes it and all below
	logsDir    string            // the kubelet's pod logs directory, which its log links point into
	sysctls    map[string]string // kubeletSysctls (below /proc/sys) → value before
	absent     []string          // kubeletHostPaths that did not exist before
}

func recordHost(cgroupRoot, logsDir string) (*hostChanges, error) {
	h := &hostChanges{cgroupRoot: cgroupRoot, logsDir: logsDir, sysctls: map[string]string{}}
	for _, s := range kubeletSysctls {
		b, err := os.ReadFile(filepath.Join("/proc/sys", s))
		if err != nil {
			return nil, fmt.Errorf("read sysctl %s: %w", s, err)
		}
		h.sysctls[s] = strings.TrimSpace(string(b))
	}
	for _, p := range kubeletHostPaths {
		if _, err := os.Lstat(p); errors.Is(err, fs.ErrNotExist) {
			h.absent = append(h.absent, p)
		}
	}
	return h, nil
}

// cgroupHierarchies are the mounted hierarchies: each controller's (and named ones) on cgroup
// v1, the one unified hierarchy on v2.
func cgroupHierarchies() ([]string, error) {
	if _, err := os.Stat(filepath.Join(cgroupFS, "cgroup.controllers")); err == nil {
		return []string{cgroupFS}, nil
	}
	ents, err := os.ReadDir(cgroupFS)
	if err != nil {
		return nil, fmt.Errorf("list cgroup hierarchies: %w", err)
	}
	var out []string
	for _, e := range ents {
		if e.IsDir() { // cpu -> cpu,cpuacct style links are left out: the same hierarchy
			out = append(out, filepath.Join(cgroupFS, e.Name()))
		}
	}
	return out, nil
}

// createCgroupRoot makes the kubelet's cgroup root in every hierarchy.
func (h *hostChanges) createCgroupRoot() error {
	hs, err := cgroupHierarchies()
	if err != nil {
		return err
	}
	for _, d := range hs {
		if err := os.MkdirAll(filepath.Join(d, h.cgroupRoot), 0o755); err != nil {
			return fmt.Errorf("create the kubelet's cgroup root: %w", err)
		}
	}
	return nil
}

// undo puts back what the kubelet changed, once it has stopped and its pods are gone: its
// cgroup tree, its container log links, the paths it created, the sysctls.
func (h *hostChanges) undo() error {
	var errs []error
	if hs, err := cgroupHierarchies(); err != nil {
		errs = append(errs, err)
	} else {
		for _, d := range hs {
			errs = append(errs, removeCgroupTree(filepath.Join(d, h.cgroupRoot)))
		}
	}
	errs = append(errs, removeLinksInto(kubeletLinkDir, h.logsDir))
	for _, p := range slices.Backward(h.absent) {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, fmt.Errorf("remove %s, which the kubelet created: %w", p, err))
		}
	}
	for s, v := range h.sysctls {
		p := filepath.Join("/proc/sys", s)
		if b, err := os.ReadFile(p); err == nil && strings.TrimSpace(string(b)) == v {
			continue
		}
		if err := os.WriteFile(p, []byte(v+"\n"), 0o644); err != nil {
			errs = append(errs, fmt.Errorf("restore sysctl %s to %s: %w", s, v, err))
		}
	}
	return errors.Join(errs...)
}

// removeCgroupTree removes the cgroup dir and every cgroup below it, innermost first. A cgroup
// with processes cannot be removed, so nothing live is touched: that is an error.
func removeCgroupTree(dir string) error {
	var dirs []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			dirs = append(dirs, p)
		}
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	var errs []error
	if err != nil {
		errs = append(errs, fmt.Errorf("walk cgroup %s: %w", dir, err))
	}
	for _, d := range slices.Backward(dirs) {
		if err := os.Remove(d); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, fmt.Errorf("remove cgroup %s: %w", d, err))
		}
	}
	return errors.Join(errs...)
}

// removeLinksInto removes the symbolic links in dir that point below target.
func removeLinksInto(dir, target string) error {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("list %s: %w", dir, err)
	}
	var errs []error
	for _, e := range ents {
		p := filepath.Join(dir, e.Name())
		if e.Type()&fs.ModeSymlink == 0 {
			continue
		}
		if to, err := os.Readlink(p); err == nil && strings.HasPrefix(to, target+"/") {
			if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, fmt.Errorf("remove the kubelet's log link %s: %w", p, err))
			}
		}
	}
	return errors.Join(errs...)
}

// removeStaleCgroupRoots removes the empty cgroup trees of kubelet runs of an earlier bench
// that was killed before it could clean up; busy ones are kept, without error.
func removeStaleCgroupRoots() {
	hs, err := cgroupHierarchies()
	if err != nil {
		return
	}
	for _, d := range hs {
		stale, _ := filepath.Glob(filepath.Join(d, "nodelet-bench-*")) // the pattern is valid
		for _, s := range stale {
			if removeCgroupTree(s) == nil {
				logf("removed the cgroup %s an earlier bench left", s)
			}
		}
	}
}
