package agent

import (
	"path/filepath"
	"time"

	"k8s.io/klog/v2"

	"github.com/nodelet/nodelet/internal/checkpoint"
	"github.com/nodelet/nodelet/internal/kuberuntime"
	"github.com/nodelet/nodelet/internal/podsync"
)

// checkpointPeriod is how often the checkpoint is written when it changed.
const checkpointPeriod = time.Second

// restoreCheckpoint reads the checkpoint under the root directory into the syncer (start
// times) and the runtime manager (back-offs), and returns the keeper that writes it from then
// on. A checkpoint that cannot be used is logged and moved aside: nodelet starts without it.
func restoreCheckpoint(cfg Config, deps Deps, syncer *podsync.Syncer, rt *kuberuntime.Manager) (*checkpoint.Keeper, error) {
	dir := filepath.Join(cfg.RootDir, "checkpoint")
	data, err := checkpoint.Load(dir)
	if err != nil {
		klog.ErrorS(err, "Starting without the checkpoint: running containers are adopted as always, but pod start times and crash back-offs start afresh")
	} else if len(data.Pods) > 0 {
		klog.InfoS("Restored the checkpoint", "pods", len(data.Pods), "dir", dir)
	}
	syncer.Restore(data.Pods)
	rt.RestoreBackOffs(data.Pods)
	return checkpoint.NewKeeper(checkpoint.Config{Dir: dir, Period: checkpointPeriod},
		checkpoint.Deps{Pods: syncer, BackOffs: rt, Clock: deps.Clock})
}
