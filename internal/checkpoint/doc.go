// Package checkpoint keeps, in one small file under the root directory, the state of the pods
// that the runtime does not hold and a user sees: each pod's start time and each container's
// crash back-off. After a SIGKILL or an upgrade, nodelet reads it back, so that a pod's
// startTime (and AGE) does not restart with the agent and a crash-looping container is not
// restarted at once because the agent was.
//
// The file, <root-dir>/checkpoint/pods.json, is JSON:
//
//	{"version": 1, "checksum": <CRC-32 (IEEE) of data>, "data": {"pods": [
//	  {"uid": "...", "namespace": "...", "name": "...", "startTime": "RFC 3339",
//	   "backOffs": [{"key": "<pod>_<namespace>_<uid>_<container>_<spec hash>", "delay": "40s"}]}]}}
//
// It is written whole to a temporary file, synced and renamed over the old one (a crash leaves
// the old or the new file, never half of one), at most once a second and only when it changed.
// A file that does not decode, fails its checksum or has another version is moved aside (to
// pods.json.corrupt) and logged; nodelet then starts as without one: running containers are
// adopted from the runtime as always, start times are the time nodelet first syncs each pod
// again, and back-offs start from the initial delay. Losing the file loses nothing else.
//
// In cluster mode a second file, apipods.json, in the same envelope, holds the API server's
// pods for this node ({"pods": [<v1.Pod without managedFields>...]}), the API source's last
// listing, written at most once a second when it changed. A nodelet restarted while the API
// server cannot be reached runs them as last known; the API server's first listing replaces
// them. Lost or damaged (moved aside as above), the pods wait for the API server, as upstream's.
package checkpoint
