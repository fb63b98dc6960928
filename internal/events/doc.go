// Package events records the events nodelet emits about pods (Pulling, Created, Started,
// BackOff, FailedMount...) in a bounded in-memory Store, which the read-only API serves at
// GET /events and `nodelet events` prints as `kubectl get events` does.
//
// The Store is the recorder the runtime and the prober use: Eventf(pod, type, reason, fmt,
// args...). Each call builds a core/v1 Event as client-go's tools/record does (makeEvent and
// generateEvent in event.go): involvedObject is the pod (kind Pod, apiVersion v1, name,
// namespace, uid, resourceVersion), metadata.namespace is the pod's ("default" when empty),
// metadata.name is "<pod>.<hex unix nanoseconds>", source is {component: kubelet, host: node}
// with reportingComponent and reportingInstance set alike, count is 1 and firstTimestamp =
// lastTimestamp = the injected clock's now. eventTime stays unset, as upstream's core/v1
// recorder leaves it. A type other than Normal or Warning, or a nil pod, is logged and dropped,
// as upstream drops it.
//
// Deduplication is upstream's eventLogger (events_cache.go): events with the same key
// (getEventKey: the involved object's kind, apiVersion, namespace, name, uid and fieldPath, the
// type, the reason and the message; the source is the same for all events of a Store) are one
// event whose count goes up and whose lastTimestamp moves to now, keeping its name and
// firstTimestamp. Upstream's two other correlation steps are not applied: the aggregation of
// more than 10 similar events (same object, type and reason, different messages) within 10
// minutes into one "(combined from similar events): ..." event, and the per-object token-bucket
// spam filter. Both protect the API server from writes; here the capacity bounds the memory,
// and the messages stay exact.
//
// Capacity: the Store holds at most capacity events (New's argument, DefaultCapacity when not
// positive). Recording a new event into a full Store evicts the event seen least recently
// (the oldest lastTimestamp in recording order), so an event that keeps repeating, such as
// BackOff, stays while stale ones go. A repeat of an evicted event starts again at count 1.
//
// List(namespace, pod) returns copies of the events of a namespace and/or a pod (empty strings
// match all), sorted by lastTimestamp and, for equal ones, by the order in which they were last
// recorded.
//
// Every Eventf call is also logged with klog: Warning events at level 0 and Normal events at
// V(2), as klog.InfoS("Event", "pod", ..., "type", ..., "reason", ..., "message", ...).
//
// In cluster mode the agent also hands every event to client-go's event recorder, which
// aggregates, rate-limits and posts it to the API server (upstream's recordToSink); this Store
// stays the node's local view.
//
// Reading order: store.go.
package events
