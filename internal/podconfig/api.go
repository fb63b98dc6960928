package podconfig

import (
	"context"
	"errors"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/nodelet/nodelet/internal/kubeclient"
)

// MirrorSink receives the mirror pods the API server holds for this node: the pods the node
// created to show its static pods, which are not pods to run.
type MirrorSink interface {
	// SetMirrorPods replaces the whole set. It must not block for long: it runs on the watch.
	SetMirrorPods(pods []*v1.Pod)
}

// APIConfig configures the API server source.
type APIConfig struct {
	Client   kubeclient.PodsGetter
	NodeName string
	Sink     Sink
	Mirrors  MirrorSink
	// Clock drives the reflector's back-off and the wait for NodeSynced.
	Clock clock.Clock
	// NodeSynced, when set, is polled every second (upstream's WaitForAPIServerSyncPeriod) and
	// the watch starts only once it is true, as upstream waits for its node informer, so that
	// admission sees the Node before the first pod.
	NodeSynced func() bool
}

// NodeSyncPollPeriod is how often RunAPISource checks NodeSynced.
const NodeSyncPollPeriod = time.Second

// RunAPISource lists and watches the pods bound to cfg.NodeName (field selector spec.nodeName)
// until ctx ends, as upstream's NewSourceApiserver: a client-go reflector fills an undelta store,
// which hands the complete set over on every change. The pods to run go to cfg.Sink as source
// "api", so that the Mux's Merge turns each change into ADD, UPDATE, DELETE (a
// deletionTimestamp appeared), REMOVE or RECONCILE (status only); mirror pods (annotation
// kubernetes.io/config.mirror) go to cfg.Mirrors instead. API pods are not validated again nor
// renamed: the API server has admitted them. While the API server is unreachable the last set is
// kept and the reflector retries with back-off.
func RunAPISource(ctx context.Context, cfg APIConfig) error {
	if cfg.Client == nil || cfg.NodeName == "" || cfg.Sink == nil || cfg.Mirrors == nil || cfg.Clock == nil {
		return errors.New("api source: Client, NodeName, Sink, Mirrors and Clock are required")
	}
	if cfg.NodeSynced != nil {
		klog.InfoS("Waiting for node sync before watching the API server's pods", "node", cfg.NodeName)
		if !waitUntil(ctx, cfg.Clock, cfg.NodeSynced) {
			return nil
		}
	}
	klog.InfoS("Watching the API server's pods for this node", "node", cfg.NodeName)
	s := &apiSource{cfg: cfg, ctx: ctx}
	lw := cache.ToListWatcherWithWatchListSemantics(s.listWatch(), cfg.Client)
	store := cache.NewUndeltaStore(s.push, cache.MetaNamespaceKeyFunc)
	r := cache.NewReflectorWithOptions(lw, &v1.Pod{}, store, cache.ReflectorOptions{
		Name: "api pod source", Clock: cfg.Clock, TypeDescription: "*v1.Pod", Backoff: apiSourceBackoff()})
	r.RunWithContext(ctx)
	return nil
}

// apiSourceBackoff is the re-list back-off after the API server failed. client-go's default
// grows to 30 s with full jitter, so a node could miss for up to a minute after an outage that
// pods were deleted, or that the node lifecycle controller marked them not ready. A node lists
// only its own pods, so a retry every 10 s at most (with half jitter) is cheap.
func apiSourceBackoff() *wait.Backoff {
	return &wait.Backoff{Duration: 800 * time.Millisecond, Factor: 2, Jitter: 0.5, Steps: 1 << 20, Cap: 10 * time.Second}
}

// waitUntil polls cond every NodeSyncPollPeriod; false when ctx ended first.
func waitUntil(ctx context.Context, clk clock.Clock, cond func() bool) bool {
	for !cond() {
		select {
		case <-ctx.Done():
			return false
		case <-clk.After(NodeSyncPollPeriod):
		}
		klog.V(4).InfoS("Node sync has not completed yet")
	}
	return true
}

type apiSource struct {
	cfg APIConfig
	ctx context.Context

	mu      sync.Mutex
	failing string // the last list error reported, "" when listing works
}

// listWatch lists and watches this node's pods in all namespaces through the typed client.
func (s *apiSource) listWatch() *cache.ListWatch {
	selector := fields.OneTermEqualSelector("spec.nodeName", s.cfg.NodeName).String()
	pods := s.cfg.Client.Pods(metav1.NamespaceAll)
	return &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			opts.FieldSelector = selector
			list, err := pods.List(ctx, opts)
			s.noteList(err)
			return list, err
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			opts.FieldSelector = selector
			return pods.Watch(ctx, opts)
		},
	}
}

// noteList logs a failing list once per distinct error, and its recovery.
func (s *apiSource) noteList(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case err == nil && s.failing != "":
		klog.InfoS("Listing this node's pods from the API server works again", "node", s.cfg.NodeName)
		s.failing = ""
	case err != nil && err.Error() != s.failing && s.ctx.Err() == nil:
		s.failing = err.Error()
		klog.ErrorS(err, "Cannot list this node's pods from the API server; running pods keep running and the list is retried with back-off. Check that the API server is reachable and that the node's credentials are valid", "node", s.cfg.NodeName)
	}
}

// push splits the complete set into pods to run and mirror pods, and hands both over.
func (s *apiSource) push(objs []any) {
	pods := make([]*v1.Pod, 0, len(objs))
	var mirrors []*v1.Pod
	for _, o := range objs {
		p, ok := o.(*v1.Pod)
		if !ok {
			continue
		}
		if IsMirrorPod(p) {
			mirrors = append(mirrors, p)
			continue
		}
		pods = append(pods, p)
	}
	s.cfg.Mirrors.SetMirrorPods(mirrors)
	if err := s.cfg.Sink.Send(s.ctx, APISource, pods); err != nil {
		klog.V(4).InfoS("API source stopped while handing pods over", "err", err)
	}
}

// IsMirrorPod says the pod is a mirror pod: the API server's copy of a static pod, created by a
// node (upstream's kubetypes.IsMirrorPod).
func IsMirrorPod(pod *v1.Pod) bool {
	_, ok := pod.Annotations[ConfigMirrorAnnotationKey]
	return ok
}

// IsStaticPod says the pod comes from a source other than the API server (upstream's
// kubetypes.IsStaticPod): it has a config.source annotation that is not "api".
func IsStaticPod(pod *v1.Pod) bool {
	source, ok := pod.Annotations[ConfigSourceAnnotationKey]
	return ok && source != APISource
}

// IsAPIPod says the pod came from the API server source (config.source "api").
func IsAPIPod(pod *v1.Pod) bool {
	return pod.Annotations[ConfigSourceAnnotationKey] == APISource
}
