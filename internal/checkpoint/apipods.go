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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// APIPodsFileName is the checkpoint of the pods the API server bound to this node, in the
// same envelope as FileName's: {"version": 1, "checksum": ..., "data": {"pods": [<v1.Pod>...]}}.
const APIPodsFileName = "apipods.json"

type apiPodsData struct {
	Pods []*v1.Pod `json:"pods"`
	// Services are the cluster's services as last listed (what the pods' service environment
	// variables are made of), when they had been.
	Services []*v1.Service `json:"services,omitempty"`
}

// EncodeAPIPods renders the API pods' checkpoint: pods sorted by UID, without managedFields (the
// API server's bookkeeping, most of a pod's size and no use to a node), and services reduced
// to what service environment variables are made of, sorted.
func EncodeAPIPods(pods []*v1.Pod, services []*v1.Service) ([]byte, error) {
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
	svcs := make([]*v1.Service, 0, len(services))
	for _, s := range services {
		svcs = append(svcs, &v1.Service{
			ObjectMeta: metav1.ObjectMeta{Namespace: s.Namespace, Name: s.Name},
			Spec:       v1.ServiceSpec{Type: s.Spec.Type, ClusterIP: s.Spec.ClusterIP, ClusterIPs: s.Spec.ClusterIPs, Ports: s.Spec.Ports},
		})
	}
	slices.SortFunc(svcs, func(a, b *v1.Service) int {
		return strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name)
	})
	data, err := json.Marshal(apiPodsData{Pods: out, Services: svcs})
	if err != nil {
		return nil, fmt.Errorf("encode the API pods' checkpoint: %w", err)
	}
	return wrap(data)
}

// LoadAPIPods reads the API pods' checkpoint in dir, as Load does the pods' state: a missing
// file is none, a file that cannot be used is moved aside and its error returned.
func LoadAPIPods(dir string) (pods []*v1.Pod, services []*v1.Service, err error) {
	var d apiPodsData
	if err := loadFile(dir, APIPodsFileName, func(b []byte) error { return unwrap(b, &d) }); err != nil {
		return nil, nil, err
	}
	return d.Pods, d.Services, nil
}

// APIPods keeps the checkpoint of the API server's pods for this node: the API source's last
// listing, written at most once a period when it changed. After a restart while the API server
// cannot be reached, nodelet runs these pods as last known (upstream's kubelet gets its pods
// only from the API server, and manages none of them until it answers).
type APIPods struct {
	dir      string
	period   time.Duration
	clock    clock.WithTicker
	services func() ([]*v1.Service, bool)

	mu    sync.Mutex
	pods  []*v1.Pod
	dirty bool
	last  []byte
}

// NewAPIPods returns the keeper of dir/apipods.json; services, if not nil, gives the
// cluster's services and whether they were listed, written with each new listing of pods.
func NewAPIPods(dir string, period time.Duration, clk clock.WithTicker, services func() ([]*v1.Service, bool)) *APIPods {
	return &APIPods{dir: dir, period: period, clock: clk, services: services}
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
	var svcs []*v1.Service
	if a.services != nil {
		if list, listed := a.services(); listed {
			svcs = list
		}
	}
	b, err := EncodeAPIPods(pods, svcs)
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
