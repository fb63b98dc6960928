package events

import (
	"container/list"
	"fmt"
	"slices"
	"strings"
	"sync"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// DefaultCapacity is the number of events a Store holds when New is given no capacity.
const DefaultCapacity = 1000

// Component is the source component of the events, the kubelet's (server.ComponentKubelet).
const Component = "kubelet"

// maxNameLength is the length limit of an event's name, a DNS subdomain.
const maxNameLength = 253

// key identifies an event for deduplication: upstream's getEventKey without the source, which
// is the same for every event of a Store.
type key struct {
	kind, apiVersion, namespace, name string
	uid                               types.UID
	fieldPath                         string
	eventType, reason, message        string
}

// Store is a bounded in-memory store of pod events that deduplicates repeats. It is safe for
// concurrent use.
type Store struct {
	clock    clock.PassiveClock
	source   v1.EventSource
	capacity int

	mu    sync.Mutex
	byKey map[key]*list.Element
	// seen orders the events (*entry values) by when they were last recorded, least recent
	// first: the front is evicted when the Store is full.
	seen *list.List
}

// entry is a stored event and its key.
type entry struct {
	key   key
	event v1.Event
}

// New returns an empty Store of events reported by the kubelet on nodeName, timed by clk,
// holding at most capacity events (DefaultCapacity when capacity is not positive).
func New(clk clock.PassiveClock, nodeName string, capacity int) *Store {
	if capacity <= 0 {
		capacity = DefaultCapacity
	}
	return &Store{
		clock:    clk,
		source:   v1.EventSource{Component: Component, Host: nodeName},
		capacity: capacity,
		byKey:    map[key]*list.Element{},
		seen:     list.New(),
	}
}

// Eventf records an event about pod, as the kubelet's recorder does: the message is
// fmt.Sprintf(messageFmt, args...). eventType is v1.EventTypeNormal or v1.EventTypeWarning.
func (s *Store) Eventf(pod *v1.Pod, eventType, reason, messageFmt string, args ...any) {
	message := fmt.Sprintf(messageFmt, args...)
	if pod == nil {
		klog.ErrorS(nil, "Could not construct reference, will not report event", "eventType", eventType, "reason", reason, "message", message)
		return
	}
	switch eventType {
	case v1.EventTypeWarning:
		klog.InfoS("Event", "pod", klog.KObj(pod), "type", eventType, "reason", reason, "message", message)
	case v1.EventTypeNormal:
		klog.V(2).InfoS("Event", "pod", klog.KObj(pod), "type", eventType, "reason", reason, "message", message)
	default:
		klog.ErrorS(nil, "Unsupported event type", "pod", klog.KObj(pod), "eventType", eventType, "reason", reason, "message", message)
		return
	}
	s.record(podReference(pod), eventType, reason, message)
}

// NodeEventf records an event about the node itself (image GC, OOM...), as the kubelet's
// recorder does with its node reference.
func (s *Store) NodeEventf(eventType, reason, messageFmt string, args ...any) {
	message := fmt.Sprintf(messageFmt, args...)
	klog.InfoS("Node event", "node", s.source.Host, "type", eventType, "reason", reason, "message", message)
	s.record(NodeReference(s.source.Host), eventType, reason, message)
}

// NodeReference is the kubelet's nodeRef: kind Node, the node's name as its name and UID.
func NodeReference(nodeName string) v1.ObjectReference {
	return v1.ObjectReference{Kind: "Node", Name: nodeName, UID: types.UID(nodeName)}
}

// podReference is the reference upstream's ref.GetReference builds for a pod.
func podReference(pod *v1.Pod) v1.ObjectReference {
	return v1.ObjectReference{
		Kind:            "Pod",
		APIVersion:      "v1",
		Namespace:       pod.Namespace,
		Name:            pod.Name,
		UID:             pod.UID,
		ResourceVersion: pod.ResourceVersion,
	}
}

// record adds the event, or counts a repeat of a stored one.
func (s *Store) record(ref v1.ObjectReference, eventType, reason, message string) {
	now := metav1.NewTime(s.clock.Now())
	k := key{
		kind: ref.Kind, apiVersion: ref.APIVersion, namespace: ref.Namespace, name: ref.Name,
		uid: ref.UID, fieldPath: ref.FieldPath, eventType: eventType, reason: reason, message: message,
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	if el, ok := s.byKey[k]; ok {
		// Upstream patches count and lastTimestamp only: name, firstTimestamp and the
		// involved object (its resourceVersion too) stay those of the first occurrence.
		event := &el.Value.(*entry).event
		event.Count++
		event.LastTimestamp = now
		s.seen.MoveToBack(el)
		return
	}
	for s.seen.Len() >= s.capacity {
		delete(s.byKey, s.seen.Remove(s.seen.Front()).(*entry).key)
	}
	namespace := ref.Namespace
	if namespace == "" {
		namespace = metav1.NamespaceDefault
	}
	e := &entry{key: k, event: v1.Event{
		ObjectMeta: metav1.ObjectMeta{
			Name:      eventName(ref.Name, now.UnixNano()),
			Namespace: namespace,
		},
		InvolvedObject:      ref,
		Reason:              reason,
		Message:             message,
		Source:              s.source,
		FirstTimestamp:      now,
		LastTimestamp:       now,
		Count:               1,
		Type:                eventType,
		ReportingController: s.source.Component,
		ReportingInstance:   s.source.Host,
	}}
	s.byKey[k] = s.seen.PushBack(e)
}

// eventName is upstream's util.GenerateEventName, "<object>.<hex unix nanoseconds>", except that
// a name too long for a DNS subdomain is shortened by cutting the object's name, where upstream
// uses a random UUID.
func eventName(objectName string, unixNano int64) string {
	suffix := fmt.Sprintf(".%x", unixNano)
	if len(objectName)+len(suffix) > maxNameLength {
		objectName = strings.TrimRight(objectName[:maxNameLength-len(suffix)], ".-")
	}
	return objectName + suffix
}

// List returns copies of the events in namespace about the pod named podName; an empty
// namespace or podName matches all. They are sorted by lastTimestamp, then by the order in which
// they were last recorded.
func (s *Store) List(namespace, podName string) []v1.Event {
	s.mu.Lock()
	out := make([]v1.Event, 0, s.seen.Len())
	for el := s.seen.Front(); el != nil; el = el.Next() {
		event := &el.Value.(*entry).event
		if (namespace == "" || event.Namespace == namespace) && (podName == "" || event.InvolvedObject.Name == podName) {
			out = append(out, *event.DeepCopy())
		}
	}
	s.mu.Unlock()
	// The recording order is the order of lastTimestamp unless the wall clock stepped back.
	slices.SortStableFunc(out, func(a, b v1.Event) int {
		return a.LastTimestamp.Time.Compare(b.LastTimestamp.Time)
	})
	return out
}

// Len is the number of events held.
func (s *Store) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.seen.Len()
}
