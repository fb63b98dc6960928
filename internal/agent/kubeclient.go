package agent

import (
	"fmt"
	"net"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/connrotation"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/nodelet/nodelet/internal/certificates"
	"github.com/nodelet/nodelet/internal/events"
	"github.com/nodelet/nodelet/internal/kubeclient"
)

// Version is what nodelet reports as the node's kubeletVersion: the upstream release whose
// behaviour it follows, so that version-skew checks in the control plane see a kubelet they
// know, marked as nodelet.
const Version = "v1.37.1-nodelet"

// newKubeClients builds the API clients from --kubeconfig with the kubelet's defaults
// (kubeAPIQPS 50, kubeAPIBurst 100, protobuf for built-in types), and the heartbeat client
// upstream uses for node status and the lease: no rate limit, and requests that time out
// after heartbeatTimeout.
//
// closeAll closes every connection both clients opened, for when heartbeats fail repeatedly: as
// upstream, a half-open connection (a load balancer that failed over) is then not reused until
// HTTP/2's health check notices it, which could outlast the lease.
//
// With rotateCertificates, the client certificate comes from the returned manager (which the
// caller runs) and every connection is closed when it rotates.
func newKubeClients(c Config, clk clock.Clock, certMetrics *certificates.Metrics, heartbeatTimeout time.Duration) (client, heartbeat *kubeclient.Clients, closeAll func(), certs *certificates.Manager, err error) {
	kubeconfig := c.Cluster.Kubeconfig
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, nil, nil, nil, fmt.Errorf("load --kubeconfig %s: %w", kubeconfig, err)
	}
	dialer := connrotation.NewDialer((&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext)
	cfg.Dial = dialer.DialContext
	if c.Cluster.Certs.RotateClient {
		if certs, cfg, err = clientCertManager(c, clk, certMetrics, cfg, dialer.DialContext, func() {
			klog.InfoS("The client certificate rotated; closing the connections to the API server so that new ones use it")
			dialer.CloseAll()
		}); err != nil {
			return nil, nil, nil, nil, err
		}
	}
	cfg.UserAgent = "nodelet/" + Version
	cfg.QPS, cfg.Burst = 50, 100
	cfg.ContentType = "application/vnd.kubernetes.protobuf"
	cfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	if client, err = kubeclient.New(cfg); err != nil {
		return nil, nil, nil, nil, fmt.Errorf("API client from %s: %w", kubeconfig, err)
	}
	hb := rest.CopyConfig(cfg)
	hb.Timeout, hb.QPS = heartbeatTimeout, -1
	if heartbeat, err = kubeclient.New(hb); err != nil {
		return nil, nil, nil, nil, fmt.Errorf("API heartbeat client from %s: %w", kubeconfig, err)
	}
	closeAll = func() {
		klog.V(2).InfoS("Heartbeats to the API server keep failing; closing every connection to it so the next request dials afresh")
		dialer.CloseAll()
	}
	return client, heartbeat, closeAll, certs, nil
}

// podRecorder records a pod event (runtime.Recorder, prober.Recorder).
type podRecorder interface {
	Eventf(pod *v1.Pod, eventType, reason, messageFmt string, args ...any)
}

// teeRecorder records each event in the local store (GET /events, `nodelet get events`) and,
// in cluster mode, through client-go's event recorder, which aggregates, rate-limits and posts
// events to the API server with retries as the kubelet's does.
type teeRecorder struct {
	local    *events.Store
	api      record.EventRecorder
	nodeName string
}

var _ podRecorder = (*teeRecorder)(nil)

func (r *teeRecorder) Eventf(pod *v1.Pod, eventType, reason, messageFmt string, args ...any) {
	r.local.Eventf(pod, eventType, reason, messageFmt, args...)
	if r.api != nil {
		r.api.Eventf(pod, eventType, reason, messageFmt, args...)
	}
}

// NodeEventf records an event about the node, locally and through the API server.
func (r *teeRecorder) NodeEventf(eventType, reason, messageFmt string, args ...any) {
	r.local.NodeEventf(eventType, reason, messageFmt, args...)
	if r.api != nil {
		ref := events.NodeReference(r.nodeName)
		r.api.Eventf(&ref, eventType, reason, messageFmt, args...)
	}
}

// startAPIEvents starts the broadcaster that posts events to the API server; stop ends it.
func startAPIEvents(c *kubeclient.Clients, nodeName string) (rec record.EventRecorder, stop func()) {
	b := record.NewBroadcaster()
	b.StartStructuredLogging(klog.Level(4))
	b.StartRecordingToSink(c.Events)
	return b.NewRecorder(c.Scheme, v1.EventSource{Component: events.Component, Host: nodeName}), b.Shutdown
}
