package agent

import (
	"context"

	"k8s.io/klog/v2"

	"github.com/nodelet/nodelet/internal/podconfig"
)

// LogConsumer logs each PodUpdate and the pods nodelet would run. It stands where the sync loop
// will stand.
type LogConsumer struct{}

var _ Consumer = LogConsumer{}

// Run logs updates until ctx ends.
func (LogConsumer) Run(ctx context.Context, updates <-chan podconfig.PodUpdate) {
	for {
		select {
		case <-ctx.Done():
			return
		case u := <-updates:
			if len(u.Pods) == 0 {
				klog.InfoS("Pod source ready", "source", u.Source)
			}
			for _, p := range u.Pods {
				var images []string
				for _, c := range p.Spec.InitContainers {
					images = append(images, c.Image)
				}
				for _, c := range p.Spec.Containers {
					images = append(images, c.Image)
				}
				klog.InfoS("Pod update", "op", u.Op.String(), "source", u.Source,
					"pod", klog.KObj(p), "podUID", p.UID, "images", images)
			}
		}
	}
}
