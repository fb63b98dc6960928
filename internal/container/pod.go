package container

import (
	"k8s.io/apimachinery/pkg/types"
)

// Pod is a pod as seen in a cheap listing of the runtime (ListPodSandbox + ListContainers): what
// PLEG diffs between relists. It is grouped by the io.kubernetes.pod.uid label.
type Pod struct {
	ID        types.UID
	Name      string
	Namespace string
	// Sandboxes and Containers are the pod's CRI objects, with their states at listing time.
	Sandboxes  []*Container
	Containers []*Container
}

// Container is one CRI object (a sandbox or a container) in a listing.
type Container struct {
	ID    string
	Name  string // the container name label; empty for sandboxes
	State State  // for sandboxes: running (ready) or exited (not ready)
	Hash  uint64
	// Image is the image the container was created from, as the runtime reports it; empty for
	// sandboxes.
	Image string
	// CreatedAt is the CRI creation time in nanoseconds since the epoch.
	CreatedAt int64
}

// FindContainerByID returns the container or sandbox with the ID, or nil.
func (p *Pod) FindContainerByID(id string) *Container {
	for _, list := range [][]*Container{p.Containers, p.Sandboxes} {
		for _, c := range list {
			if c.ID == id {
				return c
			}
		}
	}
	return nil
}
