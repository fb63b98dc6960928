// Package statusmanager keeps the latest API status nodelet generated for each pod, so the
// local API (/pods), the CLI and (in cluster mode) the API server see one consistent view. A
// status never moves a pod out of a terminal phase.
//
// Each status has a version that grows when the status changes in what the kubelet owns. In
// cluster mode the APISync writes them to the API server as upstream's status manager does: on
// every change and every 10 s, once per version, a pod from the API server directly and a static
// pod through its mirror pod; as a strategic merge patch that carries the pod's UID as a
// precondition and keeps the conditions others own; and it deletes a pod the API server is
// deleting once its containers are stopped and its final status is written.
//
// Reading order: manager.go, merge.go (pure), apisync.go.
package statusmanager
