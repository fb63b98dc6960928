// Package podworkers drives each pod through its life — syncing, terminating, terminated — with
// one goroutine per pod UID, as upstream's pkg/kubelet/pod_workers.go does.
//
// The sync loop hands every change to UpdatePod, which never blocks: the change is stored as the
// pod's pending update and the pod's goroutine takes it up when it is free. Updates coalesce (the
// latest pending one wins), except that once a pod is terminating every pending update is a kill
// carrying the effective grace period, so a kill is never lost. A kill, a deletionTimestamp or a
// terminal phase moves the pod to terminating and cancels the sync in flight; the grace period
// then only shrinks (a shorter one cancels the termination in flight so that it restarts with
// it). A SyncPod that reports the pod terminal moves it to terminating too. After
// SyncTerminatingPod succeeds the pod is terminated, SyncTerminatedPod runs, and the worker is
// finished: it ignores further updates until SyncKnownPods (housekeeping) forgets the UID,
// which it does when the pod is no longer desired or was re-created with the same UID.
// SyncKnownPods also drives pods that are no longer desired to termination. When a worker
// finishes, its pod's UID is sent on Deps.Finished, so that the sync loop can have what the pod
// left in the runtime removed at once instead of at the next housekeeping.
//
// Each sync waits (Cache.GetNewerThan) for a runtime view newer than the clock reading taken
// just before the previous call to the Syncer, so a worker never acts on a view older than its
// last sync. After a sync the pod is requeued with the Requeuer: after ResyncInterval on
// success, after BackOffPeriod on error; moving to the next phase needs no requeue.
//
// The decisions are pure functions of the pod's state (state.go: transition for UpdatePod,
// begin and complete for the worker, orphan for SyncKnownPods), table-tested in state_test.go;
// podworkers.go and worker.go only add the lock, the goroutines and the context cancellation.
//
// Reading order: types.go, state.go, podworkers.go, worker.go.
package podworkers
