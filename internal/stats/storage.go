package stats

import (
	"fmt"
	"path/filepath"
	"time"

	"k8s.io/klog/v2"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"

	"github.com/nodelet/nodelet/internal/stats/host"
)

// pass is one summary's view of the filesystems: the nodefs and the filesystems of the runtime's
// mountpoints, each statfs'd once.
type pass struct {
	now    time.Time
	rootFs host.FsInfo
	fs     map[string]*host.FsInfo // by mountpoint; nil when unknown
}

// statfs returns the filesystem of a runtime mountpoint, nil (logged) when it cannot be read,
// as upstream omits the sizes of a filesystem cadvisor does not know.
func (p *Provider) statfs(ps *pass, mountpoint string) *host.FsInfo {
	if fs, ok := ps.fs[mountpoint]; ok {
		return fs
	}
	var out *host.FsInfo
	if fs, err := p.host.Statfs(mountpoint); err != nil {
		klog.V(2).InfoS("Cannot read the filesystem of a runtime mountpoint; its capacity is left out", "mountpoint", mountpoint, "err", err)
	} else {
		out = &fs
	}
	ps.fs[mountpoint] = out
	return out
}

// withCapacity adds a filesystem's size to a usage reported by the runtime.
func withCapacity(s *statsapi.FsStats, fs *host.FsInfo) {
	if fs == nil {
		return
	}
	s.AvailableBytes, s.CapacityBytes = u64(fs.Available), u64(fs.Capacity)
	s.InodesFree, s.Inodes = u64(fs.InodesFree), u64(fs.Inodes)
}

// podLogDir is <PodLogsDir>/<namespace>_<name>_<uid>, the CRI log layout.
func (p *Provider) podLogDir(ref statsapi.PodReference) string {
	return filepath.Join(p.cfg.PodLogsDir, fmt.Sprintf("%s_%s_%s", ref.Namespace, ref.Name, ref.UID))
}

// filesOnRootFs is the usage of the files directly in dir, on the nodefs; nil when dir cannot
// be read.
func (p *Provider) filesOnRootFs(ps *pass, dir string) (*statsapi.FsStats, error) {
	u, err := p.host.FilesUsage(dir)
	if err != nil {
		return nil, err
	}
	return usageOn(ps.now, ps.rootFs, u), nil
}

// containerLogs is the usage of a container's log files (all rotations).
func (p *Provider) containerLogs(ps *pass, ref statsapi.PodReference, container string) *statsapi.FsStats {
	s, err := p.filesOnRootFs(ps, filepath.Join(p.podLogDir(ref), container))
	if err != nil {
		klog.V(2).InfoS("Unable to fetch container log stats", "pod", klog.KRef(ref.Namespace, ref.Name), "container", container, "err", err)
	}
	return s
}

// addStorage sets a pod's volumes and ephemeral-storage: its containers' rootfs and logs (set
// before), its local ephemeral volumes, the log files in its pod log directory and its
// etc-hosts file.
func (p *Provider) addStorage(ps *pass, s *statsapi.PodStats) {
	all, ephemeral := p.podVolumes(ps, s.PodRef.UID)
	if len(all) > 0 {
		s.VolumeStats = all
	}
	podLogs, err := p.filesOnRootFs(ps, p.podLogDir(s.PodRef))
	if err != nil {
		klog.V(6).InfoS("Unable to fetch pod log stats", "pod", klog.KRef(s.PodRef.Namespace, s.PodRef.Name), "err", err)
	}
	var etcHosts *statsapi.FsStats
	if u, err := p.host.TreeUsage(filepath.Join(p.cfg.RootDir, "pods", s.PodRef.UID, "etc-hosts")); err == nil {
		etcHosts = usageOn(ps.now, ps.rootFs, u)
	} else if !host.IsNotExist(err) {
		klog.V(6).InfoS("Unable to fetch pod etc hosts stats", "pod", klog.KRef(s.PodRef.Namespace, s.PodRef.Name), "err", err)
	}
	s.EphemeralStorage = ephemeralStorage(ps.now, ps.rootFs, s.Containers, ephemeral, podLogs, etcHosts)
}
