package checkpoint

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// APIPodsFileName is the checkpoint of the pods the API server bound to this node, in the
// same envelope as FileName's: {"version": 1, "checksum": ..., "data": {"pods": [<v1.Pod>...]}}.
const APIPodsFileName = "apipods.json"

type apiPodsData struct {
	Pods []*v1.Pod `json:"pods"`
}

// EncodeAPIPods renders the API pods' checkpoint: sorted by UID, without managedFields (the
// API server's bookkeeping, most of a pod's size and no use to a node).
func EncodeAPIPods(pods []*v1.Pod) ([]byte, error) {
	out := make([]*v1.Pod, 0, len(pods))
	for _, p := range pods {
		if len(p.ManagedFields) > 0 {
			c := *p // shallow: only ManagedFields differs, and it is not written through
			c.ManagedFields = nil
			p = &c
		}
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b *v1.Pod) int { return strings.Compare(string(a.UID), string(b.UID)) })
	data, err := json.Marshal(apiPodsData{Pods: out})
	if err != nil {
		return nil, fmt.Errorf("encode the API pods' checkpoint: %w", err)
	}
	return wrap(data)
}

// LoadAPIPods reads the API pods' checkpoint in dir, as Load does the pods' state: a missing
// file is none, a file that cannot be used is moved aside and its error returned.
func LoadAPIPods(dir string) ([]*v1.Pod, error) {
	var d apiPodsData
	if err := loadFile(dir, APIPodsFileName, func(b []byte) error { return unwrap(b, &d) }); err != nil {
		return nil, err
	}
	return d.Pods, nil
}

// APIPods keeps the checkpoint of the API server's pods for this node: the API source's last
// listing, written at most once a period when it changed. After a restart while the API server
// cannot be reached, nodelet runs these pods as last known (upstream's kubelet gets its pods
// only from the API server, and manages none of them until it answers).
type APIPods struct {
	dir    string
	period time.Duration
	clock  clock.WithTicker

	mu    sync.Mutex
	pods  []*v1.Pod
	dirty bool
	last  []byte
}

// NewAPIPods returns the keeper of dir/apipods.json.
func NewAPIPods(dir string, period time.Duration, clk clock.WithTicker) *APIPods {
	return &APIPods{dir: dir, period: period, clock: clk}
}

// Record takes the API source's listing (it is not modified afterwards: the sources send
// fresh slices of pods they do not touch again).
func (a *APIPods) Record(pods []*v1.Pod) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.pods, a.dirty = pods, true
}

// Run writes the checkpoint every period it changed, and once more when ctx ends.
func (a *APIPods) Run(ctx context.Context) {
	t := a.clock.NewTicker(a.period)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			a.Write()
			return
		case <-t.C():
			a.Write()
		}
	}
}

// Write writes the last listing if it changed since the last write.
func (a *APIPods) Write() {
	a.mu.Lock()
	pods, dirty := a.pods, a.dirty
	a.dirty = false
	a.mu.Unlock()
	if !dirty {
		return
	}
	b, err := EncodeAPIPods(pods)
	if err != nil {
		klog.ErrorS(err, "Cannot encode the API pods' checkpoint")
		return
	}
	if bytes.Equal(b, a.last) {
		return
	}
	if err := writeFileAtomic(a.dir, APIPodsFileName, b); err != nil {
		a.mu.Lock()
		a.dirty = true // again next period
		a.mu.Unlock()
		klog.ErrorS(err, "Cannot write the API pods' checkpoint; after a restart while the API server is unreachable its pods would wait for it (check the root directory's disk)", "dir", a.dir)
		return
	}
	a.last = b
}
