package eviction

import (
	v1 "k8s.io/api/core/v1"
)

// Signal is an eviction signal, named as upstream's (pkg/kubelet/eviction/api).
type Signal string

// The signals upstream's kubelet knows on Linux.
const (
	SignalMemoryAvailable            Signal = "memory.available"
	SignalAllocatableMemoryAvailable Signal = "allocatableMemory.available"
	SignalNodeFsAvailable            Signal = "nodefs.available"
	SignalNodeFsInodesFree           Signal = "nodefs.inodesFree"
	SignalImageFsAvailable           Signal = "imagefs.available"
	SignalImageFsInodesFree          Signal = "imagefs.inodesFree"
	SignalContainerFsAvailable       Signal = "containerfs.available"
	SignalContainerFsInodesFree      Signal = "containerfs.inodesFree"
	SignalPIDAvailable               Signal = "pid.available"
)

// Resources internal to eviction, as upstream's: inode and process counts.
const (
	resourceInodes v1.ResourceName = "inodes"
	resourcePids   v1.ResourceName = "pids"
)

// Reason is the reason of an evicted pod's status and of the eviction event.
const Reason = "Evicted"

// resourceOf is the resource a signal measures; ok is false for an unknown signal.
func resourceOf(s Signal) (v1.ResourceName, bool) {
	switch s {
	case SignalMemoryAvailable, SignalAllocatableMemoryAvailable:
		return v1.ResourceMemory, true
	case SignalNodeFsAvailable, SignalImageFsAvailable, SignalContainerFsAvailable:
		return v1.ResourceEphemeralStorage, true
	case SignalNodeFsInodesFree, SignalImageFsInodesFree, SignalContainerFsInodesFree:
		return resourceInodes, true
	case SignalPIDAvailable:
		return resourcePids, true
	}
	return "", false
}

// conditionOf is the node condition a met threshold of the signal reports.
func conditionOf(s Signal) (v1.NodeConditionType, bool) {
	switch s {
	case SignalMemoryAvailable, SignalAllocatableMemoryAvailable:
		return v1.NodeMemoryPressure, true
	case SignalPIDAvailable:
		return v1.NodePIDPressure, true
	}
	if r, ok := resourceOf(s); ok && (r == v1.ResourceEphemeralStorage || r == resourceInodes) {
		return v1.NodeDiskPressure, true
	}
	return "", false
}

func isMemorySignal(s Signal) bool {
	return s == SignalMemoryAvailable || s == SignalAllocatableMemoryAvailable
}
