package cgroups

import (
	"fmt"
	"path"
	"strings"
	"sync/atomic"

	"github.com/opencontainers/cgroups/systemd"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// SystemdName is upstream's CgroupName.ToSystemd: a cgroup name in nodelet's (cgroupfs) form,
// "/kubepods/burstable/pod<uid>", as the systemd driver names it, each part's "-" escaped as "_"
// and the slices nested: "/kubepods.slice/kubepods-burstable.slice/
// kubepods-burstable-pod<uid with _>.slice". "/" stays "/".
func SystemdName(name string) (string, error) {
	trimmed := strings.Trim(path.Clean("/"+name), "/")
	if trimmed == "" {
		return "/", nil
	}
	parts := strings.Split(trimmed, "/")
	for i, p := range parts {
		parts[i] = strings.ReplaceAll(p, "-", "_")
	}
	expanded, err := systemd.ExpandSlice(strings.Join(parts, "-") + ".slice")
	if err != nil {
		return "", fmt.Errorf("cgroup %s in systemd form: %w", name, err)
	}
	return expanded, nil
}

// PodUIDFromDir is the pod UID of a pod cgroup's directory name, in the cgroupfs form
// ("pod<uid>") or the systemd one ("kubepods-burstable-pod<uid with _>.slice"); ok is false for
// any other directory.
func PodUIDFromDir(dir string, systemdDriver bool) (types.UID, bool) {
	if !systemdDriver {
		uid, ok := strings.CutPrefix(dir, "pod")
		if !ok || uid == "" {
			return "", false
		}
		return types.UID(uid), true
	}
	base, ok := strings.CutSuffix(dir, ".slice")
	if !ok {
		return "", false
	}
	last := base[strings.LastIndex(base, "-")+1:]
	uid, ok := strings.CutPrefix(last, "pod")
	if !ok || uid == "" {
		return "", false
	}
	return types.UID(strings.ReplaceAll(uid, "_", "-")), true
}

// Layout names the pods' cgroups for the cgroup driver in use. Inside nodelet a cgroup has its
// cgroupfs-form name (PodCgroup, PodParents); Literal is what the runtime (the CRI
// cgroup_parent) and the host's cgroup file system call it. The driver is the runtime's,
// known once it answers: UseDriver is called once at start, before any pod runs.
type Layout struct {
	pods    string
	systemd atomic.Bool
}

// NewLayout is the layout of the pods under pods (<cgroupRoot>/kubepods, cgroupfs form) with the
// configured driver.
func NewLayout(pods, driver string) *Layout {
	l := &Layout{pods: pods}
	l.UseDriver(driver)
	return l
}

// UseDriver sets the driver (DriverCgroupfs or DriverSystemd).
func (l *Layout) UseDriver(driver string) { l.systemd.Store(driver == DriverSystemd) }

// Systemd reports whether the systemd driver is in use.
func (l *Layout) Systemd() bool { return l.systemd.Load() }

// Pods is the cgroup of all pods (cgroupfs form).
func (l *Layout) Pods() string { return l.pods }

// Pod is the pod's cgroup (cgroupfs form, PodCgroup).
func (l *Layout) Pod(pod *v1.Pod) string { return PodCgroup(l.pods, pod) }

// Literal is the cgroup name as the driver has it: itself with cgroupfs, SystemdName with
// systemd. Names nodelet makes always convert; an error is only for a name no driver takes.
func (l *Layout) Literal(name string) string {
	if !l.Systemd() {
		return name
	}
	s, err := SystemdName(name)
	if err != nil {
		return name
	}
	return s
}

// PodUID is PodUIDFromDir with the driver in use.
func (l *Layout) PodUID(dir string) (types.UID, bool) { return PodUIDFromDir(dir, l.Systemd()) }

// PodCgroupsOf are the cgroups (cgroupfs form) pod uid's cgroup may be, one per QoS class.
func (l *Layout) PodCgroupsOf(uid types.UID) []string { return PodCgroupsOf(l.pods, uid) }

// PodCgroupsOf are the cgroups (cgroupfs form) under podsCgroup pod uid's cgroup may be, one per
// QoS class.
func PodCgroupsOf(podsCgroup string, uid types.UID) []string {
	var out []string
	for _, parent := range PodParents(podsCgroup) {
		out = append(out, path.Join(parent, "pod"+string(uid)))
	}
	return out
}
