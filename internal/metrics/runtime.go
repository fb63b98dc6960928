package metrics

import (
	"context"
	"strings"
	"unicode"

	"google.golang.org/grpc"
	"k8s.io/klog/v2"
)

// operationNames are the CRI methods whose upstream operation_type is not the snake_case of
// the method's name (kuberuntime/instrumented_services.go).
var operationNames = map[string]string{
	"UpdateContainerResources":  "update_container",
	"UpdatePodSandboxResources": "update_podsandbox_resources",
	"RuntimeConfig":             "runtime_config",
}

// OperationType is upstream's operation_type label for a CRI gRPC method,
// "/runtime.v1.RuntimeService/RunPodSandbox" → "run_podsandbox".
func OperationType(fullMethod string) string {
	name := fullMethod[strings.LastIndex(fullMethod, "/")+1:]
	if op, ok := operationNames[name]; ok {
		return op
	}
	name = strings.ReplaceAll(name, "PodSandbox", "Podsandbox")
	var b strings.Builder
	for i, r := range name {
		if unicode.IsUpper(r) {
			if i > 0 {
				b.WriteByte('_')
			}
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

// UnaryClientInterceptor records kubelet_runtime_operations_total, _duration_seconds and
// _errors_total for every unary CRI call made on the connection it is installed on.
func (k *Kubelet) UnaryClientInterceptor() grpc.UnaryClientInterceptor {
	return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		op := OperationType(method)
		start := k.clock.Now()
		err := invoker(ctx, method, req, reply, cc, opts...)
		took := k.clock.Since(start)
		k.runtimeOps.WithLabelValues(op).Inc()
		k.runtimeOpsDur.WithLabelValues(op).Observe(took.Seconds())
		if err != nil {
			k.runtimeOpsErrs.WithLabelValues(op).Inc()
		}
		// As upstream's remote runtime service logs each call at -v=10: a timeline of where
		// a pod's start or stop spends its time.
		if v := klog.V(10); v.Enabled() {
			v.InfoS("CRI call", "operation", op, "took", took, "err", err)
		}
		return err
	}
}

// StreamClientInterceptor counts the opening of streaming CRI calls (GetContainerEvents) as
// upstream records get_container_events: once per call, when it is made.
func (k *Kubelet) StreamClientInterceptor() grpc.StreamClientInterceptor {
	return func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
		op := OperationType(method)
		start := k.clock.Now()
		s, err := streamer(ctx, desc, cc, method, opts...)
		k.runtimeOps.WithLabelValues(op).Inc()
		k.runtimeOpsDur.WithLabelValues(op).Observe(k.clock.Since(start).Seconds())
		if err != nil {
			k.runtimeOpsErrs.WithLabelValues(op).Inc()
		}
		return s, err
	}
}

// DialOptions install both interceptors on a CRI connection.
func (k *Kubelet) DialOptions() []grpc.DialOption {
	return []grpc.DialOption{grpc.WithChainUnaryInterceptor(k.UnaryClientInterceptor()),
		grpc.WithChainStreamInterceptor(k.StreamClientInterceptor())}
}
