// Package pleg is nodelet's pod lifecycle event generator (PLEG) and pod status cache, modelled on
// upstream's generic (relisting) PLEG in pkg/kubelet/pleg and the cache in pkg/kubelet/container.
//
// Every relist period Generic lists the runtime's pods and containers (Runtime.GetPods), compares
// the listing with the previous one (Diff), inspects each pod in which a container or sandbox
// changed state (Runtime.GetPodStatus), stores the result in the Cache stamped with the time taken
// before the listing, advances the Cache's global timestamp, and sends the pod's lifecycle events
// on the channel returned by Watch.
//
// Pod workers read the Cache with GetNewerThan: a status at least as fresh as their last sync,
// which is what makes the events only hints ("look at this pod again") and the cache the source
// of truth. Healthy reports whether relisting still succeeds, as the kubelet's PLEG health check.
package pleg
