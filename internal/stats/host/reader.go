package host

import (
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// cgroupFS is where the cgroup hierarchies are mounted.
const cgroupFS = "/sys/fs/cgroup"

// Reader reads the node's kernel interfaces and filesystems below a root directory: <root>/proc,
// <root>/sys/fs/cgroup and every host path it is given. The root is "/" in production; tests
// build a fake tree in a temporary directory. A Reader holds no state and is safe for
// concurrent use.
type Reader struct {
	root string
}

// NewReader returns a Reader of the tree under root ("" means "/").
func NewReader(root string) *Reader {
	if root == "" {
		root = "/"
	}
	return &Reader{root: root}
}

// Path returns the host path p under the reader's root.
func (r *Reader) Path(p string) string { return filepath.Join(r.root, p) }

func (r *Reader) read(p string) ([]byte, error) {
	b, err := os.ReadFile(r.Path(p))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", p, err)
	}
	return b, nil
}

// CPU is a cumulative CPU reading.
type CPU struct {
	// UsageNanosecs is the CPU time consumed since the cgroup (or process) started, in
	// core-nanoseconds.
	UsageNanosecs uint64
}

// Memory is a memory reading of a cgroup or process, in bytes (faults are counts).
type Memory struct {
	Usage           uint64
	WorkingSet      uint64 // usage - inactive file cache
	RSS             uint64 // anonymous memory (and swap cache)
	PageFaults      uint64
	MajorPageFaults uint64
	// Limit is the memory limit, nil when there is none (the root cgroup's is the RAM).
	Limit *uint64
	// Swap is the swap in use, nil when swap is not accounted.
	Swap *uint64
	// SwapLimit bounds Swap, nil when there is no limit (the root's is the swap space).
	SwapLimit *uint64
}

// Cgroup is a reading of one cgroup's CPU and memory controllers.
type Cgroup struct {
	CPU    CPU
	Memory Memory
	// Pressure is the cgroup's pressure stall information, by resource; nil where the kernel
	// does not report it (cgroup v1 below the root, kernels without PSI).
	CPUPressure, MemoryPressure, IOPressure *PSI
	// Created is the earliest modification time of the cgroup's directories (cadvisor's
	// creation time of a raw cgroup); zero when unknown.
	Created time.Time
}

// PSI is pressure stall information for one resource.
type PSI struct {
	Some, Full PSIData
}

// PSIData is one line of a pressure file: averages in percent, total stall time in µs.
type PSIData struct {
	Avg10, Avg60, Avg300 float64
	Total                uint64
}

// Process is a reading of one process from /proc/<pid>/stat and status.
type Process struct {
	CPUUsageNanosecs uint64
	RSS              uint64
	PageFaults       uint64
	MajorPageFaults  uint64
}

// MemInfo holds the /proc/meminfo fields the stats use, in bytes.
type MemInfo struct {
	MemTotal, MemFree, MemAvailable uint64
	SwapTotal, SwapFree             uint64
	InactiveFile                    uint64 // Inactive(file)
	AnonPages                       uint64
}

// Interface is one network interface's counters from /proc/net/dev.
type Interface struct {
	Name              string
	RxBytes, RxErrors uint64
	TxBytes, TxErrors uint64
}

// Rlimit is the node's task limit and task count; nil fields were not readable.
type Rlimit struct {
	MaxPID *int64
	Tasks  *int64
}

// FsInfo is a filesystem's size from statfs, in bytes and inodes.
type FsInfo struct {
	Capacity, Available, Usage uint64
	Inodes, InodesFree         uint64
	// Tmpfs is true for a memory-backed filesystem (tmpfs, ramfs).
	Tmpfs bool
}

// DiskUsage is what a set of files occupies: allocated bytes (as du) and inodes.
type DiskUsage struct {
	Bytes, Inodes uint64
}
