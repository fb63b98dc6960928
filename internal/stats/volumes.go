package stats

import (
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	"k8s.io/utils/clock"
)

const emptyDirPlugin = "kubernetes.io~empty-dir"

// volumePlugins are the pod volume directories (pods/<uid>/volumes/<plugin>/<name>) whose usage
// is measured, with whether they are local ephemeral storage (upstream's
// IsLocalEphemeralVolume: emptyDir not in memory, configMap, downwardAPI). Other plugins
// (network and persistent volumes) are not walked.
func volumePlugins() map[string]bool {
	return map[string]bool{
		emptyDirPlugin:               true,
		"kubernetes.io~configmap":    true,
		"kubernetes.io~downward-api": true,
		"kubernetes.io~secret":       false,
		"kubernetes.io~projected":    false,
	}
}

// volumeCache keeps each volume's measurement for a while: measuring is a walk of the tree,
// which upstream does in the background once per --volume-stats-agg-period.
type volumeCache struct {
	clock clock.PassiveClock
	age   time.Duration

	mu      sync.Mutex
	entries map[string]volumeEntry // by volume path
}

type volumeEntry struct {
	stats     statsapi.VolumeStats
	ephemeral bool
	at        time.Time
}

func (c *volumeCache) get(path string) (volumeEntry, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[path]
	if !ok || c.clock.Since(e.at) >= c.age {
		return volumeEntry{}, false
	}
	return e, true
}

func (c *volumeCache) put(path string, e volumeEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.entries[path] = e
}

// prune drops the expired measurements (of volumes gone, or to be measured again).
func (c *volumeCache) prune() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for p, e := range c.entries {
		if c.clock.Since(e.at) >= c.age {
			delete(c.entries, p)
		}
	}
}

// podVolumes measures the pod's volumes: all of them, by name, and the local ephemeral ones
// (counted in its ephemeral-storage). An emptyDir on a tmpfs (medium Memory) is not ephemeral
// storage: its pages are charged to the pod's memory.
func (p *Provider) podVolumes(ps *pass, uid string) (all, ephemeral []statsapi.VolumeStats) {
	dir := filepath.Join(p.cfg.RootDir, "pods", uid, "volumes")
	for plugin, local := range volumePlugins() {
		ents, err := os.ReadDir(p.host.Path(filepath.Join(dir, plugin)))
		if err != nil {
			continue
		}
		for _, e := range ents {
			if !e.IsDir() {
				continue
			}
			path := filepath.Join(dir, plugin, e.Name())
			v, ok := p.volumes.get(path)
			if !ok {
				if v, ok = p.measureVolume(ps.now, path, e.Name(), local, plugin); !ok {
					continue
				}
				p.volumes.put(path, v)
			}
			all = append(all, v.stats)
			if v.ephemeral {
				ephemeral = append(ephemeral, v.stats)
			}
		}
	}
	byName := func(a, b statsapi.VolumeStats) int {
		switch {
		case a.Name < b.Name:
			return -1
		case a.Name > b.Name:
			return 1
		}
		return 0
	}
	slices.SortFunc(all, byName)
	slices.SortFunc(ephemeral, byName)
	return all, ephemeral
}

func (p *Provider) measureVolume(now time.Time, path, name string, local bool, plugin string) (volumeEntry, bool) {
	fs, err := p.host.Statfs(path)
	if err != nil {
		klog.V(4).InfoS("Unable to measure a volume", "path", path, "err", err)
		return volumeEntry{}, false
	}
	u, err := p.host.TreeUsage(path)
	if err != nil {
		klog.V(4).InfoS("Unable to measure a volume", "path", path, "err", err)
		return volumeEntry{}, false
	}
	s := usageOn(now, fs, u)
	s.Time = metav1.NewTime(now)
	ephemeral := local && !(plugin == emptyDirPlugin && fs.Tmpfs)
	return volumeEntry{stats: statsapi.VolumeStats{Name: name, FsStats: *s}, ephemeral: ephemeral, at: now}, true
}
