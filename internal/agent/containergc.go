package agent

import (
	"fmt"
	"strings"

	"github.com/nodelet/nodelet/internal/containergc"
	"github.com/nodelet/nodelet/internal/podconfig"
)

// newContainerGC builds the container garbage collector: dead containers and sandboxes from the
// runtime, removed through the runtime manager (which removes their logs), judged by the pod
// workers once every source has been read.
func newContainerGC(cfg Config, deps Deps, client containergc.Runtime, rt containergc.Containers, pods containergc.PodState,
	recorder containergc.Recorder, mux *podconfig.Mux) (*containergc.Manager, error) {
	policy := containergc.DefaultPolicy()
	if cfg.ContainerGC != nil {
		policy = *cfg.ContainerGC
	}
	sources := cfg.Sources()
	period := cfg.ContainerGCPeriod
	if period <= 0 {
		period = containergc.DefaultPeriod
	}
	// Shims report to containerd's socket, which serves CRI too: with another runtime none match.
	shims := containergc.ShimPolicy{Address: strings.TrimPrefix(cfg.RuntimeEndpoint, "unix://"), Namespace: "k8s.io", MinAge: 5 * period}
	m, err := containergc.New(containergc.Config{Policy: policy, PodLogsDir: cfg.PodLogsDir, Period: cfg.ContainerGCPeriod, Shims: shims},
		containergc.Deps{Runtime: client, Containers: rt, Pods: pods, Recorder: recorder, Clock: deps.Clock,
			SourcesReady: func() bool { return mux.SeenAllSources(sources...) }})
	if err != nil {
		return nil, fmt.Errorf("container garbage collection: %w", err)
	}
	return m, nil
}
