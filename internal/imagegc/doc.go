// Package imagegc removes unused images, as upstream's image garbage collector
// (pkg/kubelet/images/image_gc_manager.go, v1.37), with its configuration names:
//
//   - imageMaximumGCAge: an image no container has used for longer is removed (0: never by
//     age); only once nodelet itself has run that long, so that a restart does not count the
//     time it was down as unused time.
//   - imageGCHighThresholdPercent / imageGCLowThresholdPercent: when the image filesystem is at
//     least high% full, unused images are removed, least recently used first, until it would be
//     low% full; imageMinimumGCAge spares images detected more recently (a pull about to be
//     used). When that is not enough, a FreeDiskSpaceFailed node event says so.
//
// An image is in use while any container the runtime has (running or exited) was created from
// it or mounts it as an image volume; pinned images (the runtime's sandbox image) are never
// removed. The choice (Detect, EvictionOrder, OldImages, FreeSpace, Usage) is pure; Manager
// runs it every period against the CRI and the stats provider's image filesystem.
package imagegc
