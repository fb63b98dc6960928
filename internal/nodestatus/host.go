package nodestatus

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strconv"
	"strings"
)

// HostMachine reads the machine's facts from the host, as cAdvisor does for upstream.
type HostMachine struct {
	// RootDir is the agent's root directory; its filesystem is ephemeral-storage.
	RootDir string
	// Root prefixes every host path (/proc, /sys, /etc); empty in production.
	Root string
	// Kernel and FSCapacity are uname's release and statfs; the host's in production.
	Kernel     func() (string, error)
	FSCapacity func(path string) (int64, error)
}

var _ MachineInfoGetter = (*HostMachine)(nil)

// NewHostMachine returns a HostMachine for the agent's root directory.
func NewHostMachine(rootDir string) *HostMachine {
	return &HostMachine{RootDir: rootDir, Kernel: kernelRelease, FSCapacity: fsCapacity}
}

// MachineInfo reads /proc/meminfo, the CPU count, statfs of the root directory, the huge page
// pools, /etc/machine-id, the DMI product UUID, the boot ID, uname and /etc/os-release. The
// memory size and the root directory's filesystem are required; the rest is best effort
// (empty when unreadable, e.g. the product UUID needs root).
func (h *HostMachine) MachineInfo() (MachineInfo, error) {
	info := MachineInfo{NumCPU: goruntime.NumCPU()}
	var errs []error
	mem, err := readMemInfo(h.path("/proc/meminfo"))
	if err != nil {
		errs = append(errs, err)
	}
	info.MemoryCapacity, info.SwapCapacity = mem["MemTotal"], mem["SwapTotal"]
	if info.EphemeralStorageCapacity, err = h.FSCapacity(h.RootDir); err != nil {
		errs = append(errs, fmt.Errorf("size of the filesystem of root dir %s: %w", h.RootDir, err))
	}
	info.HugePages = readHugePages(h.path("/sys/kernel/mm/hugepages"))
	info.MachineID = firstFile(h.path("/etc/machine-id"), h.path("/var/lib/dbus/machine-id"))
	info.SystemUUID = firstFile(h.path("/sys/class/dmi/id/product_uuid"))
	info.BootID = firstFile(h.path("/proc/sys/kernel/random/boot_id"))
	if h.Kernel != nil {
		info.KernelVersion, _ = h.Kernel()
	}
	info.OSImage = readOSImage(h.path("/etc/os-release"))
	return info, errors.Join(errs...)
}

func (h *HostMachine) path(p string) string { return filepath.Join(h.Root, p) }

// readMemInfo returns /proc/meminfo's kB fields in bytes.
func readMemInfo(path string) (map[string]int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read memory size: %w", err)
	}
	defer f.Close()
	out, err := parseMemInfo(f)
	if err != nil {
		return nil, fmt.Errorf("parse %s: %w", path, err)
	}
	return out, nil
}

func parseMemInfo(r io.Reader) (map[string]int64, error) {
	out := map[string]int64{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		name, rest, ok := strings.Cut(sc.Text(), ":")
		fields := strings.Fields(rest)
		if !ok || len(fields) == 0 {
			continue
		}
		v, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("field %s: %w", name, err)
		}
		if len(fields) > 1 && fields[1] == "kB" {
			v *= 1024
		}
		out[name] = v
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if _, ok := out["MemTotal"]; !ok {
		return nil, errors.New("no MemTotal")
	}
	return out, nil
}

// readHugePages reads the pools under /sys/kernel/mm/hugepages (hugepages-2048kB/nr_hugepages).
func readHugePages(dir string) []HugePages {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []HugePages
	for _, e := range entries {
		size, ok := strings.CutPrefix(e.Name(), "hugepages-")
		if !ok {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(size, "kB"), 10, 64)
		if err != nil {
			continue
		}
		n, err := strconv.ParseInt(firstFile(filepath.Join(dir, e.Name(), "nr_hugepages")), 10, 64)
		if err != nil {
			continue
		}
		out = append(out, HugePages{PageSize: kb * 1024, Pages: n})
	}
	return out
}

// firstFile returns the trimmed content of the first readable path, or "".
func firstFile(paths ...string) string {
	for _, p := range paths {
		if b, err := os.ReadFile(p); err == nil {
			return strings.TrimSpace(string(b))
		}
	}
	return ""
}

// readOSImage is /etc/os-release's PRETTY_NAME, "Linux" when there is none (cAdvisor's).
func readOSImage(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "Linux"
	}
	return parseOSRelease(string(b))
}

func parseOSRelease(content string) string {
	for _, line := range strings.Split(content, "\n") {
		v, ok := strings.CutPrefix(strings.TrimSpace(line), "PRETTY_NAME=")
		if !ok {
			continue
		}
		if unq, err := strconv.Unquote(v); err == nil {
			return unq
		}
		return strings.Trim(v, `"'`)
	}
	return "Linux"
}
