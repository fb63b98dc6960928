package pleg

import (
	"cmp"
	"slices"

	"k8s.io/apimachinery/pkg/types"

	"github.com/nodelet/nodelet/internal/container"
)

// EventType is the kind of a pod lifecycle event; the values are upstream's.
type EventType string

const (
	// ContainerStarted: a container or sandbox is now running.
	ContainerStarted EventType = "ContainerStarted"
	// ContainerDied: a container or sandbox is now exited, or vanished without being seen exited.
	ContainerDied EventType = "ContainerDied"
	// ContainerRemoved: a container or sandbox is no longer listed by the runtime.
	ContainerRemoved EventType = "ContainerRemoved"
	// ContainerChanged: a container or sandbox is now in the created or an unknown state. Diff
	// reports it and it makes Generic inspect the pod, but, as upstream, it is never sent on the
	// Watch channel.
	ContainerChanged EventType = "ContainerChanged"
	// PodSync: the pod was re-inspected (after a failed inspection or RequestReinspect) and no
	// container changed state meanwhile. Only Generic sends it; Diff never returns it.
	PodSync EventType = "PodSync"
)

// Event is a pod lifecycle event: something happened to a container of pod ID.
type Event struct {
	// ID is the pod's UID.
	ID   types.UID
	Type EventType
	// Data is the CRI ID of the container or sandbox; empty for PodSync.
	Data string
}

// state is a container's state as PLEG compares it: container.State with created folded into
// unknown (as upstream's convertState) and a state for "not listed".
type state string

const (
	stateRunning     state = "running"
	stateExited      state = "exited"
	stateUnknown     state = "unknown"
	stateNonExistent state = "non-existent"
)

func convertState(s container.State) state {
	switch s {
	case container.StateRunning:
		return stateRunning
	case container.StateExited:
		return stateExited
	default:
		// Upstream maps created to unknown ("kubelet doesn't use the created state yet") and panics
		// on anything else; a state nodelet does not know is as good as unknown here.
		return stateUnknown
	}
}

// generateEvents is upstream's generateEvents: the events for one container whose state went
// from oldState to newState.
func generateEvents(podID types.UID, cid string, oldState, newState state) []Event {
	if oldState == newState {
		return nil
	}
	switch newState {
	case stateRunning:
		return []Event{{ID: podID, Type: ContainerStarted, Data: cid}}
	case stateExited:
		return []Event{{ID: podID, Type: ContainerDied, Data: cid}}
	case stateUnknown:
		return []Event{{ID: podID, Type: ContainerChanged, Data: cid}}
	default: // stateNonExistent
		if oldState == stateExited {
			// Its death was reported already.
			return []Event{{ID: podID, Type: ContainerRemoved, Data: cid}}
		}
		return []Event{{ID: podID, Type: ContainerDied, Data: cid}, {ID: podID, Type: ContainerRemoved, Data: cid}}
	}
}

// containerState is the state of the container or sandbox cid in pod, non-existent if pod is nil
// or does not list it.
func containerState(pod *container.Pod, cid string) state {
	if pod == nil {
		return stateNonExistent
	}
	if c := pod.FindContainerByID(cid); c != nil {
		return convertState(c.State)
	}
	return stateNonExistent
}

// containerIDs returns the sorted IDs of the containers and sandboxes of the pods.
func containerIDs(pods ...*container.Pod) []string {
	var ids []string
	for _, p := range pods {
		if p == nil {
			continue
		}
		for _, list := range [][]*container.Container{p.Containers, p.Sandboxes} {
			for _, c := range list {
				if c != nil {
					ids = append(ids, c.ID)
				}
			}
		}
	}
	slices.Sort(ids)
	return slices.Compact(ids)
}

// Diff compares two listings of the runtime, keyed by pod UID, and returns the lifecycle events
// upstream's generic PLEG derives from them, container by container (sandboxes included), and the
// UIDs of the pods that have at least one event. A nil *container.Pod is the same as an absent
// one.
//
// Events are ordered by pod UID, then container ID; a container that vanished while not exited
// gets ContainerDied then ContainerRemoved. Changed pods are sorted by UID. Diff does not modify
// its arguments.
func Diff(old, cur map[types.UID]*container.Pod) (events []Event, changed []types.UID) {
	uids := make([]types.UID, 0, len(cur))
	for uid, p := range cur {
		if p != nil {
			uids = append(uids, uid)
		}
	}
	for uid, p := range old {
		if p != nil && cur[uid] == nil {
			uids = append(uids, uid)
		}
	}
	slices.SortFunc(uids, func(a, b types.UID) int { return cmp.Compare(a, b) })

	for _, uid := range uids {
		oldPod, curPod := old[uid], cur[uid]
		n := len(events)
		for _, cid := range containerIDs(oldPod, curPod) {
			events = append(events, generateEvents(uid, cid, containerState(oldPod, cid), containerState(curPod, cid))...)
		}
		if len(events) > n {
			changed = append(changed, uid)
		}
	}
	return events, changed
}
