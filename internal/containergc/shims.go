package containergc

import (
	"time"
)

// Shim is a containerd shim process (containerd-shim-runc-v2 -namespace N -id ID -address A),
// as /proc shows it.
type Shim struct {
	PID                    int
	ID, Namespace, Address string
	Started                time.Time
}

// ShimPolicy says which shims are this node's and when one is orphaned.
type ShimPolicy struct {
	// Address is the containerd socket the shims report to (the CRI endpoint's path); empty
	// disables the search.
	Address string
	// Namespace is the CRI plugin's containerd namespace (k8s.io).
	Namespace string
	// MinAge is how long a shim must have run before it can be an orphan (a sandbox being
	// created has its shim before the runtime lists it).
	MinAge time.Duration
}

// OrphanShims is pure: the shims of this runtime (address and namespace) whose id is no sandbox
// or container the runtime lists (known), that have run for at least MinAge and that were
// already unknown at the previous search (suspects: pid → id). A start cancelled half-way can
// leave such a shim behind, holding memory and the container processes it started. It returns
// the orphans and the suspects for the next search.
func OrphanShims(shims []Shim, p ShimPolicy, known func(id string) bool, suspects map[int]string, now time.Time) (orphans []Shim, next map[int]string) {
	next = map[int]string{}
	if p.Address == "" {
		return nil, next
	}
	for _, s := range shims {
		if s.Address != p.Address || s.Namespace != p.Namespace || s.ID == "" || known(s.ID) {
			continue
		}
		if id, seen := suspects[s.PID]; seen && id == s.ID && now.Sub(s.Started) >= p.MinAge {
			orphans = append(orphans, s)
			continue
		}
		next[s.PID] = s.ID
	}
	return orphans, next
}
