// Package mirrorpods keeps, for each static pod, a mirror pod in the API server: a copy the
// node creates so that the scheduler accounts for the static pod's resources and users see it
// (upstream's pkg/kubelet/pod mirror client and the mirror handling of Kubelet.SyncPod).
//
// The Manager learns the mirror pods the API server holds from the API source (SetMirrorPods,
// the podconfig.MirrorSink) and answers MirrorFor for the status syncer. Sync, called when a
// static pod syncs, creates the mirror pod when there is none and replaces one that is outdated
// (its kubernetes.io/config.mirror annotation differs from the static pod's config.hash) or
// being deleted. DeleteOrphans (and Housekeep) delete mirror pods whose static pod is gone.
// OnChange reports static pods whose mirror pod disappeared or changed, so they are synced again
// at once and their mirror recreated.
//
// The node's credentials are a node client's (system:node:<name>): NodeRestriction lets it
// create only pods with the mirror annotation, bound to itself, with a single controller owner
// reference to its own Node (by UID, without blockOwnerDeletion), and referencing no API
// objects; so a mirror pod is created only once the Node's UID is known.
//
// Reading order: decide.go (the pure decisions), manager.go.
package mirrorpods
