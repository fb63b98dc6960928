// Package podconfig turns the places pods come from into one stream of PodUpdates.
//
// A source (a manifest directory or file, an HTTP URL, the API server) produces full
// snapshots: "these are all my pods now". Each snapshot is decoded strictly, given the API
// server's defaults and the static-pod identity (name suffixed with the node name, a
// deterministic UID, config.* annotations), and validated; a bad manifest is reported with its
// source, file and field once per change and never stops the good ones. Pods from the API server
// are taken as they are (the API server validated them); its mirror pods go to a MirrorSink.
//
// The Mux keeps every source's last snapshot and turns a new snapshot into the upstream
// kubelet's operations, in upstream's order: REMOVE for pods that left the source, ADD for new
// pods, UPDATE when the spec (or labels, annotations) changed, DELETE when a pod gained a
// deletionTimestamp, RECONCILE when only the status changed. Merge is a pure function of
// (state, source, snapshot); the channel plumbing around it is thin.
//
// Reading order: types.go, decode.go, defaults.go, static.go, validate.go, merge.go, mux.go,
// file.go, http.go, api.go.
package podconfig
